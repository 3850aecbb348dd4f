#include "server/replication/copy_data.h"

#include <QtEndian>

#include <array>
#include <chrono>

namespace rt::replication {

namespace {

// 2000-01-01 00:00 UTC in Unix epoch microseconds (PostgreSQL's POSTGRES_EPOCH_JDATE).
constexpr qint64 PostgresEpochUnixMicros = 946'684'800'000'000;

// Callers check the size first; qFromBigEndian reads unaligned bytes.
quint64 readUInt64(QByteArrayView bytes, qsizetype offset)
{
    return qFromBigEndian<quint64>(bytes.data() + offset);
}

qint64 readInt64(QByteArrayView bytes, qsizetype offset)
{
    return qFromBigEndian<qint64>(bytes.data() + offset);
}

void appendUInt64(QByteArray &out, quint64 value)
{
    std::array<char, 8> buffer{};
    qToBigEndian<quint64>(value, buffer.data());
    out.append(buffer.data(), static_cast<qsizetype>(buffer.size()));
}

CopyDataError truncated(char type, qsizetype size, qsizetype needed)
{
    return CopyDataError{ CopyDataError::Code::Truncated,
                          QStringLiteral("truncated '%1' CopyData message: %2 bytes, need %3")
                                  .arg(QLatin1Char(type))
                                  .arg(size)
                                  .arg(needed) };
}

// Hex digits only; at most 8 of them (one 32-bit half).
std::optional<quint32> parseHalf(QByteArrayView text)
{
    if (text.isEmpty() || text.size() > 8) {
        return std::nullopt;
    }
    quint32 value = 0;
    for (const char c : text) {
        quint32 digit = 0;
        if (c >= '0' && c <= '9') {
            digit = static_cast<quint32>(c - '0');
        } else if (c >= 'a' && c <= 'f') {
            digit = static_cast<quint32>(c - 'a' + 10);
        } else if (c >= 'A' && c <= 'F') {
            digit = static_cast<quint32>(c - 'A' + 10);
        } else {
            return std::nullopt;
        }
        value = (value << 4) | digit;
    }
    return value;
}

} // namespace

Result<CopyDataMessage, CopyDataError> parseCopyData(QByteArrayView bytes)
{
    if (bytes.isEmpty()) {
        return CopyDataError{ CopyDataError::Code::Empty,
                              QStringLiteral("empty CopyData message") };
    }
    const char type = bytes.front();
    switch (type) {
    case 'w': {
        if (bytes.size() < XLogDataHeaderSize) {
            return truncated(type, bytes.size(), XLogDataHeaderSize);
        }
        XLogData data;
        data.walStart = readUInt64(bytes, 1);
        data.walEnd = readUInt64(bytes, 9);
        data.serverTimeMicros = readInt64(bytes, 17);
        data.payload = bytes.sliced(XLogDataHeaderSize);
        return CopyDataMessage{ data };
    }
    case 'k': {
        if (bytes.size() < KeepaliveSize) {
            return truncated(type, bytes.size(), KeepaliveSize);
        }
        PrimaryKeepalive keepalive;
        keepalive.walEnd = readUInt64(bytes, 1);
        keepalive.serverTimeMicros = readInt64(bytes, 9);
        keepalive.replyRequested = bytes.at(17) != 0;
        return CopyDataMessage{ keepalive };
    }
    default:
        return CopyDataError{ CopyDataError::Code::UnknownType,
                              QStringLiteral("unknown CopyData message type 0x%1")
                                      .arg(static_cast<uint>(static_cast<unsigned char>(type)), 2,
                                           16, QLatin1Char('0')) };
    }
}

QByteArray buildStandbyStatusUpdate(const StandbyStatusUpdate &update)
{
    QByteArray out;
    out.reserve(StandbyStatusUpdateSize);
    out.append('r');
    appendUInt64(out, update.writeLsn);
    appendUInt64(out, update.flushLsn);
    appendUInt64(out, update.applyLsn);
    appendUInt64(out, static_cast<quint64>(update.clockMicros));
    out.append(update.replyRequested ? '\1' : '\0');
    return out;
}

qint64 postgresEpochMicros()
{
    const auto sinceUnix = std::chrono::duration_cast<std::chrono::microseconds>(
            std::chrono::system_clock::now().time_since_epoch());
    return static_cast<qint64>(sinceUnix.count()) - PostgresEpochUnixMicros;
}

qint64 postgresEpochMicrosFromUnixMs(qint64 unixMs)
{
    return unixMs * 1000 - PostgresEpochUnixMicros;
}

QByteArray formatLsn(Lsn lsn)
{
    return QByteArray::number(static_cast<quint32>(lsn >> 32), 16).toUpper() + '/'
            + QByteArray::number(static_cast<quint32>(lsn & 0xFFFFFFFFu), 16).toUpper();
}

std::optional<Lsn> parseLsn(QByteArrayView text)
{
    const qsizetype slash = text.indexOf('/');
    if (slash < 0) {
        return std::nullopt;
    }
    const auto high = parseHalf(text.first(slash));
    const auto low = parseHalf(text.sliced(slash + 1));
    if (!high || !low) {
        return std::nullopt;
    }
    return (static_cast<Lsn>(*high) << 32) | *low;
}

} // namespace rt::replication
