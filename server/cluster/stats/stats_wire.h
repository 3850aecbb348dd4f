#pragma once

#include "server/cluster/links/frame_kinds.h"
#include "shared/api/node_history.h"
#include "shared/core/result.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QString>

// The node-link message of the admin view (frame kind 26): what one node tells its peers about
// itself every report interval, so that any node can answer GET /api/admin/snapshot for the
// whole cluster. Pure functions.
//
// Payload (version 2; integers big-endian; rates in thousandths per second):
//     u8 version | u8 flags (bit 0: the sender reaches the cluster backend)
//     | i64 connections | i64 channels | u64 messages in | u64 messages out
//     | u64 process CPU (thousandths of a core) | u16 cores available | i64 resident bytes
//     | u16 worker count | worker*
//     | u32 link count | link* | u32 tenant count | tenant*
//     worker = u64 CPU (thousandths of a core) | u64 event-loop lag (microseconds)
//     link   = u16 length | peer node id (UTF-8) | u64 messages | u64 bytes
//     tenant = u16 length | tenant id | u64 messages in | u64 messages out
// Decoding bytes from a peer never crashes and never over-allocates: truncation, trailing
// bytes, counts past the end, negative or out-of-range figures, unknown flags, overlong ids,
// peer ids that are not UTF-8 and an unknown version are error values. The format is canonical:
// a payload that decodes is exactly the encoding of what it decodes to.
namespace rt::cluster::stats {

inline constexpr quint8 KindNodeStats = links::kindValue(links::FrameKind::NodeStats);
inline constexpr quint8 KindNodeHistory = links::kindValue(links::FrameKind::NodeHistory);
inline constexpr quint8 Version = 2;
// A node runs one worker per core; more than this is a forged count.
inline constexpr qsizetype MaxWorkers = 4096;
// Node and tenant ids are short names; longer ones are refused.
inline constexpr qsizetype MaxIdBytes = 1024;
// Rates travel as integer thousandths per second, at most this many (2^50: small enough that
// thousandths -> double -> thousandths is exact, so the format stays canonical).
inline constexpr quint64 MaxMilliRate = quint64(1) << 50;
// Counts (connections, channels) at most this.
inline constexpr qint64 MaxCount = qint64(1) << 53;

// Messages and payload bytes per second this node sent to one peer over the node links.
struct LinkRate
{
    QString peer;
    double messagesPerSecond = 0;
    double bytesPerSecond = 0;

    friend bool operator==(const LinkRate &, const LinkRate &) = default;
};

// One tenant's messages per second on this node: received from its clients, written to them.
struct TenantRate
{
    QByteArray tenant;
    double messagesInPerSecond = 0;
    double messagesOutPerSecond = 0;

    friend bool operator==(const TenantRate &, const TenantRate &) = default;
};

// One worker thread's share of the node: CPU in cores, and how long the last task posted to its
// event loop waited before it ran.
struct WorkerLoad
{
    double cpuCores = 0;
    double loopLagMs = 0;

    friend bool operator==(const WorkerLoad &, const WorkerLoad &) = default;
};

struct NodeStats
{
    bool available = false; // the sender reaches the cluster backend
    qint64 connections = 0; // client sockets
    qint64 channels = 0; // joined channels (one per socket and topic)
    double messagesInPerSecond = 0;
    double messagesOutPerSecond = 0;
    double cpuCores = 0; // the process's CPU (utime + stime over wall time), in cores
    int cpuCount = 0; // cores the process may run on
    qint64 residentBytes = 0;
    QList<WorkerLoad> workers;
    QList<LinkRate> links;
    QList<TenantRate> tenants; // tenants with traffic only

    friend bool operator==(const NodeStats &, const NodeStats &) = default;
};

// Rates are rounded to thousandths and clamped to [0, MaxMilliRate / 1000]; counts to
// [0, MaxCount]; ids longer than MaxIdBytes are cut (peer ids at a character boundary), so the
// encoder never writes what decode refuses.
QByteArray encode(const NodeStats &stats);
Result<NodeStats> decode(QByteArrayView payload);

// A node's own history (frame kind 34), oldest first, at most MaxHistorySamples:
//     u8 version (1) | u32 count | sample*
//     sample = i64 at (ms since the epoch) | u64 CPU (thousandths of a core) | i64 resident
//              bytes | i64 connections | i64 channels | u64 messages in | u64 messages out
//              | u64 event-loop lag (microseconds) | u8 has load | u64 load (thousandths)
// The same promises as the node stats: never crashes or over-allocates, canonical, and the
// samples must be in strictly increasing time.
inline constexpr quint8 HistoryVersion = 1;
inline constexpr qsizetype MaxHistorySamples = 4096;
QByteArray encodeHistory(const QList<api::NodeSample> &samples);
Result<QList<api::NodeSample>> decodeHistory(QByteArrayView payload);

} // namespace rt::cluster::stats
