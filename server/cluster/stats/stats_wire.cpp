#include "server/cluster/stats/stats_wire.h"

#include "shared/core/big_endian.h"

#include <cmath>
#include <limits>
#include <optional>

namespace rt::cluster::stats {

namespace {

constexpr quint8 FlagAvailable = 0x01;
constexpr quint8 KnownFlags = FlagAvailable;
// The smallest encoded link or tenant (empty id, two rates): bounds for the counts a peer
// announces, so a forged count cannot make us reserve memory the payload cannot fill.
constexpr qsizetype MinEntryBytes = 2 + 8 + 8;

quint64 milli(double perSecond)
{
    if (!(perSecond > 0)) { // also NaN
        return 0;
    }
    const double scaled = std::round(perSecond * 1000.0);
    if (scaled >= static_cast<double>(MaxMilliRate)) {
        return MaxMilliRate;
    }
    return static_cast<quint64>(scaled);
}

qint64 count(qint64 value)
{
    return qBound<qint64>(0, value, MaxCount);
}

void putId(QByteArray &out, QByteArrayView id, bool isUtf8)
{
    qsizetype size = qMin(id.size(), MaxIdBytes);
    // Cut a UTF-8 id before a continuation byte, so it stays UTF-8.
    while (isUtf8 && size < id.size() && size > 0 && (quint8(id[size]) & 0xC0) == 0x80) {
        --size;
    }
    appendBigEndian<quint16>(out, static_cast<quint16>(size));
    out.append(id.first(size));
}

Error malformed(const char *what)
{
    return Error{ QStringLiteral("malformed node stats frame: %1").arg(QLatin1String(what)) };
}

// A rate in thousandths per second; nullopt when out of range.
std::optional<double> readRate(BigEndianReader &in)
{
    const auto value = in.read<quint64>();
    if (value > MaxMilliRate) {
        return std::nullopt;
    }
    return static_cast<double>(value) / 1000.0;
}

// An id (u16 length + bytes); nullopt when too long or truncated.
std::optional<QByteArray> readId(BigEndianReader &in)
{
    const auto size = in.read<quint16>();
    if (in.failed() || size > MaxIdBytes) {
        return std::nullopt;
    }
    const QByteArrayView bytes = in.bytes(size);
    if (in.failed()) {
        return std::nullopt;
    }
    return bytes.toByteArray();
}

// Each reader below fills its part of the stats, or returns what is wrong with the bytes.
std::optional<Error> readHeader(BigEndianReader &in, NodeStats &stats)
{
    const quint8 version = in.u8();
    if (in.failed()) {
        return malformed("empty payload");
    }
    if (version != Version) {
        return Error{ QStringLiteral("node stats frame of unknown version %1").arg(version) };
    }
    const quint8 flags = in.u8();
    if (in.failed() || (flags & ~KnownFlags) != 0) {
        return malformed("unknown flags");
    }
    stats.available = (flags & FlagAvailable) != 0;
    stats.connections = in.read<qint64>();
    stats.channels = in.read<qint64>();
    if (stats.connections < 0 || stats.connections > MaxCount || stats.channels < 0
        || stats.channels > MaxCount) {
        return malformed("count out of range");
    }
    const std::optional<double> in0 = readRate(in);
    const std::optional<double> out0 = readRate(in);
    if (in.failed()) {
        return malformed("truncated header");
    }
    if (!in0 || !out0) {
        return malformed("rate out of range");
    }
    stats.messagesInPerSecond = *in0;
    stats.messagesOutPerSecond = *out0;
    return std::nullopt;
}

std::optional<Error> readLinks(BigEndianReader &in, QList<LinkRate> &links)
{
    const auto linkCount = in.read<quint32>();
    if (in.failed() || linkCount > static_cast<quint64>(in.remaining() / MinEntryBytes)) {
        return malformed("link count past the end");
    }
    links.reserve(static_cast<qsizetype>(linkCount));
    for (quint32 i = 0; i < linkCount; ++i) {
        const std::optional<QByteArray> peer = readId(in);
        if (!peer) {
            return malformed("bad peer id");
        }
        const QString peerId = QString::fromUtf8(*peer);
        if (peerId.toUtf8() != *peer) {
            return malformed("peer id is not UTF-8");
        }
        const std::optional<double> messages = readRate(in);
        const std::optional<double> bytes = readRate(in);
        if (in.failed()) {
            return malformed("truncated link");
        }
        if (!messages || !bytes) {
            return malformed("rate out of range");
        }
        links.append(LinkRate{ peerId, *messages, *bytes });
    }
    return std::nullopt;
}

std::optional<Error> readTenants(BigEndianReader &in, QList<TenantRate> &tenants)
{
    const auto tenantCount = in.read<quint32>();
    if (in.failed() || tenantCount > static_cast<quint64>(in.remaining() / MinEntryBytes)) {
        return malformed("tenant count past the end");
    }
    tenants.reserve(static_cast<qsizetype>(tenantCount));
    for (quint32 i = 0; i < tenantCount; ++i) {
        const std::optional<QByteArray> tenant = readId(in);
        if (!tenant) {
            return malformed("bad tenant id");
        }
        const std::optional<double> messagesIn = readRate(in);
        const std::optional<double> messagesOut = readRate(in);
        if (in.failed()) {
            return malformed("truncated tenant");
        }
        if (!messagesIn || !messagesOut) {
            return malformed("rate out of range");
        }
        tenants.append(TenantRate{ *tenant, *messagesIn, *messagesOut });
    }
    return std::nullopt;
}

} // namespace

QByteArray encode(const NodeStats &stats)
{
    QByteArray out;
    out.reserve(38 + 8 + (stats.links.size() + stats.tenants.size()) * (MinEntryBytes + 16));
    out.append(static_cast<char>(Version));
    out.append(static_cast<char>(stats.available ? FlagAvailable : 0));
    appendBigEndian<qint64>(out, count(stats.connections));
    appendBigEndian<qint64>(out, count(stats.channels));
    appendBigEndian<quint64>(out, milli(stats.messagesInPerSecond));
    appendBigEndian<quint64>(out, milli(stats.messagesOutPerSecond));
    appendBigEndian<quint32>(out, static_cast<quint32>(stats.links.size()));
    for (const LinkRate &link : stats.links) {
        putId(out, link.peer.toUtf8(), true);
        appendBigEndian<quint64>(out, milli(link.messagesPerSecond));
        appendBigEndian<quint64>(out, milli(link.bytesPerSecond));
    }
    appendBigEndian<quint32>(out, static_cast<quint32>(stats.tenants.size()));
    for (const TenantRate &tenant : stats.tenants) {
        putId(out, tenant.tenant, false);
        appendBigEndian<quint64>(out, milli(tenant.messagesInPerSecond));
        appendBigEndian<quint64>(out, milli(tenant.messagesOutPerSecond));
    }
    return out;
}

Result<NodeStats> decode(QByteArrayView payload)
{
    BigEndianReader in(payload);
    NodeStats stats;
    if (std::optional<Error> bad = readHeader(in, stats)) {
        return *std::move(bad);
    }
    if (std::optional<Error> bad = readLinks(in, stats.links)) {
        return *std::move(bad);
    }
    if (std::optional<Error> bad = readTenants(in, stats.tenants)) {
        return *std::move(bad);
    }
    if (!in.atEnd()) {
        return malformed("trailing bytes");
    }
    return stats;
}

} // namespace rt::cluster::stats
