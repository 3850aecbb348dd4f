#include "server/pgoutput/decoder.h"

#include <limits>

namespace rt::pgoutput {

namespace {

// Smallest encodings, used to reject counts the remaining bytes cannot hold before anything is
// allocated for them: a column of a Relation is flags + empty name's NUL + type oid + typmod, a
// tuple value is its kind byte, a truncated relation is its oid.
constexpr qsizetype MinColumnBytes = 1 + 1 + 4 + 4;
constexpr qsizetype MinTupleValueBytes = 1;
constexpr qsizetype RelOidBytes = 4;

// Sequential big-endian reader over one message. Every read checks the remaining length first;
// the first failure is kept (with the offset it happened at) and ends decoding.
class Reader
{
public:
    // start: offset of the first byte after the tag, so error offsets count from the tag.
    Reader(QByteArrayView bytes, qsizetype start) : m_bytes(bytes), m_pos(start) { }

    qsizetype pos() const { return m_pos; }
    qsizetype remaining() const { return m_bytes.size() - m_pos; }
    const DecodeError &error() const { return m_error; }

    bool fail(const QString &message)
    {
        m_error = DecodeError{ message, m_pos };
        return false;
    }

    bool u8(quint8 &out, const char *what)
    {
        if (!need(1, what)) {
            return false;
        }
        out = static_cast<quint8>(m_bytes[m_pos]);
        m_pos += 1;
        return true;
    }

    bool i16(qint16 &out, const char *what)
    {
        quint64 raw = 0;
        if (!bigEndian(2, raw, what)) {
            return false;
        }
        out = static_cast<qint16>(static_cast<quint16>(raw));
        return true;
    }

    bool u32(quint32 &out, const char *what)
    {
        quint64 raw = 0;
        if (!bigEndian(4, raw, what)) {
            return false;
        }
        out = static_cast<quint32>(raw);
        return true;
    }

    bool i32(qint32 &out, const char *what)
    {
        quint32 raw = 0;
        if (!u32(raw, what)) {
            return false;
        }
        out = static_cast<qint32>(raw);
        return true;
    }

    bool u64(quint64 &out, const char *what) { return bigEndian(8, out, what); }

    bool i64(qint64 &out, const char *what)
    {
        quint64 raw = 0;
        if (!u64(raw, what)) {
            return false;
        }
        out = static_cast<qint64>(raw);
        return true;
    }

    // A NUL-terminated string (the NUL is consumed, not returned).
    bool string(QByteArray &out, const char *what)
    {
        const qsizetype nul = m_bytes.indexOf('\0', m_pos);
        if (nul < 0) {
            return fail(QStringLiteral("unterminated %1").arg(QLatin1String(what)));
        }
        out = m_bytes.sliced(m_pos, nul - m_pos).toByteArray();
        m_pos = nul + 1;
        return true;
    }

    // A length-prefixed (Int32) byte string; negative lengths are invalid.
    bool lengthPrefixed(QByteArray &out, const char *what)
    {
        qint32 length = 0;
        if (!i32(length, what)) {
            return false;
        }
        if (length < 0) {
            return fail(QStringLiteral("negative length %1 of %2")
                                .arg(length)
                                .arg(QLatin1String(what)));
        }
        if (!need(length, what)) {
            return false;
        }
        out = m_bytes.sliced(m_pos, length).toByteArray();
        m_pos += length;
        return true;
    }

    // Rejects a count whose items, at minItemBytes each, cannot fit in what is left.
    bool plausibleCount(qint64 count, qsizetype minItemBytes, const char *what)
    {
        if (count < 0) {
            return fail(QStringLiteral("negative %1 %2").arg(QLatin1String(what)).arg(count));
        }
        if (count > remaining() / minItemBytes) {
            return fail(QStringLiteral("%1 %2 exceeds the %3 remaining bytes")
                                .arg(QLatin1String(what))
                                .arg(count)
                                .arg(remaining()));
        }
        return true;
    }

private:
    bool need(qsizetype n, const char *what)
    {
        if (remaining() < n) {
            return fail(QStringLiteral("truncated %1: need %2 bytes, %3 left")
                                .arg(QLatin1String(what))
                                .arg(n)
                                .arg(remaining()));
        }
        return true;
    }

    bool bigEndian(qsizetype n, quint64 &out, const char *what)
    {
        if (!need(n, what)) {
            return false;
        }
        quint64 value = 0;
        for (qsizetype i = 0; i < n; ++i) {
            value = (value << 8) | static_cast<quint8>(m_bytes[m_pos + i]);
        }
        m_pos += n;
        out = value;
        return true;
    }

    QByteArrayView m_bytes;
    qsizetype m_pos = 0;
    DecodeError m_error;
};

bool readTuple(Reader &r, TupleData &tuple)
{
    qint16 count = 0;
    if (!r.i16(count, "tuple column count")
        || !r.plausibleCount(count, MinTupleValueBytes, "tuple column count")) {
        return false;
    }
    tuple.values.reserve(count);
    for (qint16 i = 0; i < count; ++i) {
        quint8 kind = 0;
        if (!r.u8(kind, "tuple value kind")) {
            return false;
        }
        Value value;
        switch (kind) {
        case 'n':
            value.kind = Value::Kind::Null;
            break;
        case 'u':
            value.kind = Value::Kind::UnchangedToast;
            break;
        case 't':
        case 'b':
            value.kind = kind == 't' ? Value::Kind::Text : Value::Kind::Binary;
            if (!r.lengthPrefixed(value.bytes, "tuple value")) {
                return false;
            }
            break;
        default:
            return r.fail(QStringLiteral("unknown tuple value kind 0x%1")
                                  .arg(kind, 2, 16, QLatin1Char('0')));
        }
        tuple.values.append(std::move(value));
    }
    return true;
}

// The 'K' (identity key) or 'O' (old row) tuple of an Update or Delete.
bool readIdentityTuple(Reader &r, quint8 marker, std::optional<TupleData> &key,
                       std::optional<TupleData> &old)
{
    TupleData tuple;
    if (!readTuple(r, tuple)) {
        return false;
    }
    (marker == 'K' ? key : old) = std::move(tuple);
    return true;
}

bool readBegin(Reader &r, Begin &m)
{
    return r.u64(m.finalLsn, "final LSN") && r.i64(m.commitTime, "commit timestamp")
            && r.u32(m.xid, "xid");
}

bool readCommit(Reader &r, Commit &m)
{
    return r.u8(m.flags, "commit flags") && r.u64(m.commitLsn, "commit LSN")
            && r.u64(m.endLsn, "end LSN") && r.i64(m.commitTime, "commit timestamp");
}

bool readOrigin(Reader &r, Origin &m)
{
    return r.u64(m.commitLsn, "origin commit LSN") && r.string(m.name, "origin name");
}

bool readRelation(Reader &r, Relation &m)
{
    quint8 identity = 0;
    qint16 count = 0;
    if (!r.u32(m.oid, "relation oid") || !r.string(m.nspname, "namespace")
        || !r.string(m.relname, "relation name") || !r.u8(identity, "replica identity")) {
        return false;
    }
    if (identity != 'd' && identity != 'n' && identity != 'f' && identity != 'i') {
        return r.fail(QStringLiteral("unknown replica identity 0x%1")
                              .arg(identity, 2, 16, QLatin1Char('0')));
    }
    m.replicaIdentity = static_cast<char>(identity);
    if (!r.i16(count, "relation column count")
        || !r.plausibleCount(count, MinColumnBytes, "relation column count")) {
        return false;
    }
    m.columns.reserve(count);
    for (qint16 i = 0; i < count; ++i) {
        quint8 flags = 0;
        Column column;
        if (!r.u8(flags, "column flags") || !r.string(column.name, "column name")
            || !r.u32(column.typeOid, "column type oid")
            || !r.i32(column.typmod, "column typmod")) {
            return false;
        }
        column.isKey = (flags & 1) != 0;
        m.columns.append(std::move(column));
    }
    return true;
}

bool readType(Reader &r, Type &m)
{
    return r.u32(m.oid, "type oid") && r.string(m.nspname, "type namespace")
            && r.string(m.name, "type name");
}

bool readInsert(Reader &r, Insert &m)
{
    quint8 marker = 0;
    if (!r.u32(m.relOid, "relation oid") || !r.u8(marker, "tuple marker")) {
        return false;
    }
    if (marker != 'N') {
        return r.fail(QStringLiteral("insert: expected new tuple marker 'N'"));
    }
    return readTuple(r, m.newTuple);
}

bool readUpdate(Reader &r, Update &m)
{
    quint8 marker = 0;
    if (!r.u32(m.relOid, "relation oid") || !r.u8(marker, "tuple marker")) {
        return false;
    }
    if (marker == 'K' || marker == 'O') {
        if (!readIdentityTuple(r, marker, m.key, m.old) || !r.u8(marker, "tuple marker")) {
            return false;
        }
    }
    if (marker != 'N') {
        return r.fail(QStringLiteral("update: expected tuple marker 'K', 'O' or 'N'"));
    }
    return readTuple(r, m.newTuple);
}

bool readDelete(Reader &r, Delete &m)
{
    quint8 marker = 0;
    if (!r.u32(m.relOid, "relation oid") || !r.u8(marker, "tuple marker")) {
        return false;
    }
    if (marker != 'K' && marker != 'O') {
        return r.fail(QStringLiteral("delete: expected tuple marker 'K' or 'O'"));
    }
    return readIdentityTuple(r, marker, m.key, m.old);
}

bool readTruncate(Reader &r, Truncate &m)
{
    qint32 count = 0;
    if (!r.i32(count, "truncated relation count") || !r.u8(m.options, "truncate options")
        || !r.plausibleCount(count, RelOidBytes, "truncated relation count")) {
        return false;
    }
    m.relOids.reserve(count);
    for (qint32 i = 0; i < count; ++i) {
        quint32 oid = 0;
        if (!r.u32(oid, "relation oid")) {
            return false;
        }
        m.relOids.append(oid);
    }
    return true;
}

bool readLogicalMessage(Reader &r, LogicalMessage &m)
{
    quint8 flags = 0;
    if (!r.u8(flags, "message flags")) {
        return false;
    }
    if (flags > 1) {
        return r.fail(QStringLiteral("unknown logical message flags 0x%1")
                              .arg(flags, 2, 16, QLatin1Char('0')));
    }
    m.transactional = flags == 1;
    return r.u64(m.lsn, "message LSN") && r.string(m.prefix, "message prefix")
            && r.lengthPrefixed(m.content, "message content");
}

// Runs one reader function over the body and insists that it consumed every byte.
template <typename M, typename ReadFn>
rt::Result<Message, DecodeError> finish(Reader &r, ReadFn read, const char *kind)
{
    M message;
    if (!read(r, message)) {
        return r.error();
    }
    if (r.remaining() != 0) {
        return DecodeError{ QStringLiteral("%1 trailing bytes after %2 message")
                                    .arg(r.remaining())
                                    .arg(QLatin1String(kind)),
                            r.pos() };
    }
    return Message(std::move(message));
}

qint64 floorDiv(qint64 a, qint64 b)
{
    qint64 q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0))) {
        --q;
    }
    return q;
}

struct CivilDate
{
    qint64 year;
    int month;
    int day;
};

// Proleptic Gregorian date of a day count since 1970-01-01 (days-from-civil inverted through
// 400-year eras, which keeps the arithmetic exact for any count a timestamp can produce).
CivilDate civilFromDays(qint64 days)
{
    days += 719468; // shift the epoch to 0000-03-01
    const qint64 era = floorDiv(days, 146097);
    const qint64 dayOfEra = days - era * 146097;
    const qint64 yearOfEra =
            (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146096) / 365;
    const qint64 dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100);
    const qint64 monthFromMarch = (5 * dayOfYear + 2) / 153;
    const int day = static_cast<int>(dayOfYear - (153 * monthFromMarch + 2) / 5 + 1);
    const int month =
            static_cast<int>(monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9);
    const qint64 year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
    return CivilDate{ year, month, day };
}

QByteArray padded(qint64 value, int width)
{
    return QByteArray::number(value).rightJustified(width, '0');
}

bool parseHex32(QByteArrayView text, quint32 &out)
{
    if (text.isEmpty() || text.size() > 8) {
        return false;
    }
    quint32 value = 0;
    for (const char c : text) {
        int digit = 0;
        if (c >= '0' && c <= '9') {
            digit = c - '0';
        } else if (c >= 'a' && c <= 'f') {
            digit = c - 'a' + 10;
        } else if (c >= 'A' && c <= 'F') {
            digit = c - 'A' + 10;
        } else {
            return false;
        }
        value = (value << 4) | static_cast<quint32>(digit);
    }
    out = value;
    return true;
}

} // namespace

rt::Result<Message, DecodeError> decode(QByteArrayView bytes)
{
    if (bytes.isEmpty()) {
        return DecodeError{ QStringLiteral("empty message"), 0 };
    }
    Reader r(bytes, 1);
    switch (bytes[0]) {
    case 'B':
        return finish<Begin>(r, readBegin, "begin");
    case 'C':
        return finish<Commit>(r, readCommit, "commit");
    case 'O':
        return finish<Origin>(r, readOrigin, "origin");
    case 'R':
        return finish<Relation>(r, readRelation, "relation");
    case 'Y':
        return finish<Type>(r, readType, "type");
    case 'I':
        return finish<Insert>(r, readInsert, "insert");
    case 'U':
        return finish<Update>(r, readUpdate, "update");
    case 'D':
        return finish<Delete>(r, readDelete, "delete");
    case 'T':
        return finish<Truncate>(r, readTruncate, "truncate");
    case 'M':
        return finish<LogicalMessage>(r, readLogicalMessage, "logical");
    default:
        return DecodeError{ QStringLiteral("unknown message tag 0x%1")
                                    .arg(static_cast<quint8>(bytes[0]), 2, 16, QLatin1Char('0')),
                            0 };
    }
}

QString formatLsn(quint64 lsn)
{
    return QString::number(lsn >> 32, 16).toUpper() + QLatin1Char('/')
            + QString::number(lsn & 0xFFFF'FFFFu, 16).toUpper();
}

std::optional<quint64> parseLsn(QByteArrayView text)
{
    const qsizetype slash = text.indexOf('/');
    if (slash < 0) {
        return std::nullopt;
    }
    quint32 high = 0;
    quint32 low = 0;
    if (!parseHex32(text.first(slash), high) || !parseHex32(text.sliced(slash + 1), low)) {
        return std::nullopt;
    }
    return (quint64(high) << 32) | low;
}

QDateTime commitDateTime(qint64 pgMicros)
{
    const qint64 msecs = floorDiv(pgMicros, 1000) + PgEpochUnixMicros / 1000;
    return QDateTime::fromMSecsSinceEpoch(msecs, Qt::UTC);
}

QByteArray commitTimestampText(qint64 pgMicros)
{
    if (pgMicros == std::numeric_limits<qint64>::min()) {
        return QByteArrayLiteral("-infinity");
    }
    if (pgMicros == std::numeric_limits<qint64>::max()) {
        return QByteArrayLiteral("infinity");
    }
    constexpr qint64 MicrosPerDay = 86'400'000'000;
    constexpr qint64 DaysFrom1970To2000 = 10'957;
    // The remainder, not days * MicrosPerDay, gives the time of day: that product leaves
    // qint64 for instants within a day of the range's ends (the fuzzer found it).
    const qint64 days = floorDiv(pgMicros, MicrosPerDay);
    qint64 microsOfDay = pgMicros % MicrosPerDay;
    if (microsOfDay < 0) {
        microsOfDay += MicrosPerDay;
    }
    const CivilDate date = civilFromDays(days + DaysFrom1970To2000);
    const qint64 millisOfDay = microsOfDay / 1000;
    const qint64 seconds = millisOfDay / 1000;

    QByteArray out;
    out.reserve(24);
    if (date.year < 0) {
        out += '-';
    }
    out += padded(date.year < 0 ? -date.year : date.year, 4);
    out += '-' + padded(date.month, 2) + '-' + padded(date.day, 2);
    out += 'T' + padded(seconds / 3600, 2) + ':' + padded(seconds / 60 % 60, 2) + ':'
            + padded(seconds % 60, 2);
    out += '.' + padded(millisOfDay % 1000, 3) + 'Z';
    return out;
}

} // namespace rt::pgoutput
