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

std::optional<Error> readProcess(BigEndianReader &in, NodeStats &stats)
{
    const std::optional<double> cpu = readRate(in);
    const auto cores = in.read<quint16>();
    stats.residentBytes = in.read<qint64>();
    const auto workerCount = in.read<quint16>();
    if (in.failed()) {
        return malformed("truncated process figures");
    }
    if (!cpu || stats.residentBytes < 0 || stats.residentBytes > MaxCount) {
        return malformed("process figure out of range");
    }
    if (workerCount > MaxWorkers || workerCount > in.remaining() / 16) {
        return malformed("worker count past the end");
    }
    stats.cpuCores = *cpu;
    stats.cpuCount = cores;
    stats.workers.reserve(workerCount);
    for (quint16 i = 0; i < workerCount; ++i) {
        const std::optional<double> workerCpu = readRate(in);
        const std::optional<double> lag = readRate(in);
        if (!workerCpu || !lag) {
            return malformed("worker figure out of range");
        }
        stats.workers.append(WorkerLoad{ *workerCpu, *lag });
    }
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
    out.reserve(38 + 8 + 28 + stats.workers.size() * 16
                + (stats.links.size() + stats.tenants.size()) * (MinEntryBytes + 16));
    out.append(static_cast<char>(Version));
    out.append(static_cast<char>(stats.available ? FlagAvailable : 0));
    appendBigEndian<qint64>(out, count(stats.connections));
    appendBigEndian<qint64>(out, count(stats.channels));
    appendBigEndian<quint64>(out, milli(stats.messagesInPerSecond));
    appendBigEndian<quint64>(out, milli(stats.messagesOutPerSecond));
    appendBigEndian<quint64>(out, milli(stats.cpuCores));
    appendBigEndian<quint16>(out, static_cast<quint16>(qBound(0, stats.cpuCount, 0xFFFF)));
    appendBigEndian<qint64>(out, count(stats.residentBytes));
    const qsizetype workers = qMin(stats.workers.size(), MaxWorkers);
    appendBigEndian<quint16>(out, static_cast<quint16>(workers));
    for (const WorkerLoad &worker : stats.workers.first(workers)) {
        appendBigEndian<quint64>(out, milli(worker.cpuCores));
        appendBigEndian<quint64>(out, milli(worker.loopLagMs));
    }
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
    if (std::optional<Error> bad = readProcess(in, stats)) {
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

namespace {

constexpr qsizetype SampleBytes = 8 * 9 + 1;

void putSample(QByteArray &out, const api::NodeSample &sample)
{
    appendBigEndian<qint64>(out, sample.atMs);
    appendBigEndian<quint64>(out, milli(sample.cpuCores));
    appendBigEndian<qint64>(out, count(sample.residentBytes));
    appendBigEndian<qint64>(out, count(sample.connections));
    appendBigEndian<qint64>(out, count(sample.channels));
    appendBigEndian<quint64>(out, milli(sample.messagesInPerSecond));
    appendBigEndian<quint64>(out, milli(sample.messagesOutPerSecond));
    appendBigEndian<quint64>(out, milli(sample.loopLagMs));
    out.append(static_cast<char>(sample.load ? 1 : 0));
    appendBigEndian<quint64>(out, sample.load ? milli(*sample.load) : 0);
}

// One sample, or nullopt when a figure is out of range.
std::optional<api::NodeSample> readSample(BigEndianReader &in)
{
    api::NodeSample sample;
    sample.atMs = in.read<qint64>();
    const std::optional<double> cpu = readRate(in);
    sample.residentBytes = in.read<qint64>();
    sample.connections = in.read<qint64>();
    sample.channels = in.read<qint64>();
    const std::optional<double> messagesIn = readRate(in);
    const std::optional<double> messagesOut = readRate(in);
    const std::optional<double> lag = readRate(in);
    const quint8 hasLoad = in.u8();
    const std::optional<double> load = readRate(in);
    const auto counted = [](qint64 value) { return value >= 0 && value <= MaxCount; };
    if (!cpu || !messagesIn || !messagesOut || !lag || !load || hasLoad > 1
        || !counted(sample.residentBytes) || !counted(sample.connections)
        || !counted(sample.channels) || (hasLoad == 0 && *load != 0)) {
        return std::nullopt;
    }
    sample.cpuCores = *cpu;
    sample.messagesInPerSecond = *messagesIn;
    sample.messagesOutPerSecond = *messagesOut;
    sample.loopLagMs = *lag;
    if (hasLoad == 1) {
        sample.load = *load;
    }
    return sample;
}

} // namespace

QByteArray encodeHistory(const QList<api::NodeSample> &samples)
{
    const QList<api::NodeSample> kept =
            samples.size() > MaxHistorySamples ? samples.last(MaxHistorySamples) : samples;
    QByteArray out;
    out.reserve(5 + kept.size() * SampleBytes);
    out.append(static_cast<char>(HistoryVersion));
    appendBigEndian<quint32>(out, static_cast<quint32>(kept.size()));
    for (const api::NodeSample &sample : kept) {
        putSample(out, sample);
    }
    return out;
}

Result<QList<api::NodeSample>> decodeHistory(QByteArrayView payload)
{
    const auto bad = [](const char *what) {
        return Error{ QStringLiteral("malformed node history frame: %1").arg(QLatin1String(what)) };
    };
    BigEndianReader in(payload);
    const quint8 version = in.u8();
    const auto sampleCount = in.read<quint32>();
    if (in.failed()) {
        return bad("truncated header");
    }
    if (version != HistoryVersion) {
        return Error{ QStringLiteral("node history frame of unknown version %1").arg(version) };
    }
    if (sampleCount > MaxHistorySamples || sampleCount != in.remaining() / SampleBytes
        || in.remaining() % SampleBytes != 0) {
        return bad("sample count does not match the payload");
    }
    QList<api::NodeSample> samples;
    samples.reserve(static_cast<qsizetype>(sampleCount));
    for (quint32 i = 0; i < sampleCount; ++i) {
        std::optional<api::NodeSample> sample = readSample(in);
        if (!sample) {
            return bad("figure out of range");
        }
        if (!samples.isEmpty() && sample->atMs <= samples.last().atMs) {
            return bad("samples out of time order");
        }
        samples.append(*sample);
    }
    return samples;
}

} // namespace rt::cluster::stats
