#pragma once

#include "server/cluster/links/frame_kinds.h"
#include "server/limits/rate_counter_key.h"
#include "shared/core/result.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QList>

#include <optional>

// The node-link messages of cluster-wide counters (frame kinds 28 and 29), as pure functions.
//
// Payload (version 1; integers big-endian):
//     u8 version | u32 tenant count | tenant*
//     tenant = u32 length | tenant id bytes | i32 users (-1: not reported) | u8 rate count | rate*
//     rate   = u8 kind code | i64 count (>= 0)
// Decoding bytes from a peer never crashes and never over-allocates: truncation, trailing bytes,
// counts past the end, negative figures or an unknown version are error values. A rate of an
// unknown kind code is skipped (a newer peer may report more kinds).
namespace rt::cluster::counters {

// Figures that changed since the sender's last update (users absolute, rates as counts since
// the last report).
inline constexpr quint8 KindUpdate = links::kindValue(links::FrameKind::CountersUpdate);
// All of the sender's users figures: the receiver replaces what it held of the sender.
inline constexpr quint8 KindSync = links::kindValue(links::FrameKind::CountersSync);
inline constexpr bool isCountersKind(quint8 kind)
{
    return kind == KindUpdate || kind == KindSync;
}

inline constexpr quint8 Version = 1;
// Longer tenant ids are refused (tenant external ids are short names).
inline constexpr qsizetype MaxTenantIdBytes = 1024;

// The rate counters whose counts cross the cluster: the limited ones. The others stay per node
// (database connects, pool errors and HTTP requests describe this node's own resources).
inline constexpr limits::RateCounterKind ClusterWideKinds[] = {
    limits::RateCounterKind::Events,
    limits::RateCounterKind::PresenceEvents,
    limits::RateCounterKind::Joins,
};
bool isClusterWide(limits::RateCounterKind kind);

// Stable wire codes of the kinds (the enum's order is not a wire format).
quint8 kindCode(limits::RateCounterKind kind);
std::optional<limits::RateCounterKind> kindFromCode(quint8 code);

struct RateFigure
{
    limits::RateCounterKind kind = limits::RateCounterKind::Events;
    qint64 count = 0; // events counted by the sender since its previous report, >= 0

    friend bool operator==(const RateFigure &, const RateFigure &) = default;
};

// One tenant's figures from one node.
struct TenantFigures
{
    QByteArray tenantId;
    std::optional<int> users; // sockets with a joined channel on the sender; absent: unchanged
    QList<RateFigure> rates;

    friend bool operator==(const TenantFigures &, const TenantFigures &) = default;
};

struct Message
{
    QList<TenantFigures> tenants;

    friend bool operator==(const Message &, const Message &) = default;
};

QByteArray encode(const Message &message);
Result<Message> decode(QByteArrayView payload);

} // namespace rt::cluster::counters
