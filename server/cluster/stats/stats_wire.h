#pragma once

#include "server/cluster/links/frame_kinds.h"
#include "shared/core/result.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QString>

// The node-link message of the admin view (frame kind 26): what one node tells its peers about
// itself every report interval, so that any node can answer GET /api/admin/snapshot for the
// whole cluster. Pure functions.
//
// Payload (version 1; integers big-endian; rates in thousandths per second):
//     u8 version | u8 flags (bit 0: the sender reaches the cluster backend)
//     | i64 connections | i64 channels | u64 messages in | u64 messages out
//     | u32 link count | link* | u32 tenant count | tenant*
//     link   = u16 length | peer node id (UTF-8) | u64 messages | u64 bytes
//     tenant = u16 length | tenant id | u64 messages in | u64 messages out
// Decoding bytes from a peer never crashes and never over-allocates: truncation, trailing
// bytes, counts past the end, negative or out-of-range figures, unknown flags, overlong ids,
// peer ids that are not UTF-8 and an unknown version are error values. The format is canonical:
// a payload that decodes is exactly the encoding of what it decodes to.
namespace rt::cluster::stats {

inline constexpr quint8 KindNodeStats = links::kindValue(links::FrameKind::NodeStats);
inline constexpr quint8 Version = 1;
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

struct NodeStats
{
    bool available = false; // the sender reaches the cluster backend
    qint64 connections = 0; // client sockets
    qint64 channels = 0; // joined channels (one per socket and topic)
    double messagesInPerSecond = 0;
    double messagesOutPerSecond = 0;
    QList<LinkRate> links;
    QList<TenantRate> tenants; // tenants with traffic only

    friend bool operator==(const NodeStats &, const NodeStats &) = default;
};

// Rates are rounded to thousandths and clamped to [0, MaxMilliRate / 1000]; counts to
// [0, MaxCount]; ids longer than MaxIdBytes are cut (peer ids at a character boundary), so the
// encoder never writes what decode refuses.
QByteArray encode(const NodeStats &stats);
Result<NodeStats> decode(QByteArrayView payload);

} // namespace rt::cluster::stats
