#pragma once

#include "server/cluster/links/frame_codec.h"

#include <QtGlobal>

#include <array>
#include <cstddef>

namespace rt::cluster::links {

// Every application frame kind of the node links, in one place (the link's own kinds, 1-15, are
// ControlKind in frame_codec.h). The modules that speak a kind name it from here, so no two can
// take the same number: the checks below refuse a value listed twice, a value below
// FirstApplicationKind and an enumerator missing from AllFrameKinds. Kinds are wire values that
// nodes of different versions must agree on: never renumber one; a new kind takes a free value.
//
// Adding a kind: an enumerator here with a free value, the same name in AllFrameKinds, then a
// codec with its fuzz target in the module that owns it (CONTRIBUTING.md, "A node-link frame").
enum class FrameKind : quint8 {
    // pubsub: broadcasts across nodes and who holds clients of which tenant.
    PubSubEnvelope = 16, // one broadcast (ClusterEnvelope)
    InterestUpdate = 17, // tenants that appeared on / left the sender, or a check
    InterestSyncRequest = 18, // "send me all your tenants"
    InterestSync = 19, // all the sender's tenants
    // presence: replication of each node's own presences.
    PresenceDelta = 20,
    PresenceSyncChunk = 21,
    PresenceMarker = 22,
    PresenceResyncRequest = 23,
    // cdc: tenant change streams (control messages, deliveries to the nodes' own subscribers).
    StreamControl = 24,
    StreamDelivery = 25,
    // cluster/stats: each node's figures for the admin view.
    NodeStats = 26,
    // tenants: "this tenant was written here, re-read it".
    TenantWritten = 27,
    // cluster/counters: cluster-wide limits.
    CountersUpdate = 28,
    CountersSync = 29,
    // pubsub: "I hold your interest up to this number".
    InterestAck = 30,
    // pubsub: positions and history (the tenant's home numbers its topics).
    SequenceRequest = 31, // a broadcast sent to the home to be numbered (ClusterEnvelope)
    HistoryRequest = 32, // "what came after this position" (history_wire.h)
    HistoryReply = 33, // a chunk of the answer
    // admin view: a node's own last hour of figures, sent to a peer when a link to it comes up.
    NodeHistory = 34,
};

inline constexpr std::array AllFrameKinds{
    FrameKind::PubSubEnvelope,      FrameKind::InterestUpdate,
    FrameKind::InterestSyncRequest, FrameKind::InterestSync,
    FrameKind::PresenceDelta,       FrameKind::PresenceSyncChunk,
    FrameKind::PresenceMarker,      FrameKind::PresenceResyncRequest,
    FrameKind::StreamControl,       FrameKind::StreamDelivery,
    FrameKind::NodeStats,           FrameKind::TenantWritten,
    FrameKind::CountersUpdate,      FrameKind::CountersSync,
    FrameKind::InterestAck,         FrameKind::SequenceRequest,
    FrameKind::HistoryRequest,      FrameKind::HistoryReply,
    FrameKind::NodeHistory,
};

// The wire value of a kind.
constexpr quint8 kindValue(FrameKind kind)
{
    return static_cast<quint8>(kind);
}

namespace detail {

constexpr bool kindsAreDistinctApplicationKinds()
{
    for (std::size_t i = 0; i < AllFrameKinds.size(); ++i) {
        if (kindValue(AllFrameKinds[i]) < FirstApplicationKind) {
            return false;
        }
        for (std::size_t j = i + 1; j < AllFrameKinds.size(); ++j) {
            if (AllFrameKinds[i] == AllFrameKinds[j]) {
                return false;
            }
        }
    }
    return true;
}

// An enumerator left out of AllFrameKinds would escape the checks: the switch makes the
// compiler (-Wswitch, an error with -Werror) name every enumerator, and each case must be
// listed.
constexpr bool listed(FrameKind kind)
{
    for (const FrameKind each : AllFrameKinds) {
        if (each == kind) {
            return true;
        }
    }
    return false;
}

constexpr bool everyKindListed()
{
    for (int value = 0; value < 256; ++value) {
        const auto kind = static_cast<FrameKind>(value);
        switch (kind) {
        case FrameKind::PubSubEnvelope:
        case FrameKind::InterestUpdate:
        case FrameKind::InterestSyncRequest:
        case FrameKind::InterestSync:
        case FrameKind::PresenceDelta:
        case FrameKind::PresenceSyncChunk:
        case FrameKind::PresenceMarker:
        case FrameKind::PresenceResyncRequest:
        case FrameKind::StreamControl:
        case FrameKind::StreamDelivery:
        case FrameKind::NodeStats:
        case FrameKind::TenantWritten:
        case FrameKind::CountersUpdate:
        case FrameKind::CountersSync:
        case FrameKind::InterestAck:
        case FrameKind::SequenceRequest:
        case FrameKind::HistoryRequest:
        case FrameKind::HistoryReply:
        case FrameKind::NodeHistory:
            if (!listed(kind)) {
                return false;
            }
            break;
        }
    }
    return true;
}

} // namespace detail

static_assert(detail::kindsAreDistinctApplicationKinds(),
              "two node-link frame kinds share a value, or one is below FirstApplicationKind");
static_assert(detail::everyKindListed(), "a FrameKind enumerator is missing from AllFrameKinds");

} // namespace rt::cluster::links
