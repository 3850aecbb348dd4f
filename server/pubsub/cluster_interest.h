#pragma once

#include "server/cluster/links/frame_kinds.h"
#include "server/pubsub/cluster_envelope.h"
#include "shared/core/result.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QHash>
#include <QList>
#include <QSet>
#include <QString>
#include <QStringList>

#include <optional>

namespace rt::pubsub {

// Node-link frame kinds of the cluster fan-out (numbered in cluster/links/frame_kinds.h).
namespace cluster_frame {
using cluster::links::FrameKind;
using cluster::links::kindValue;
constexpr quint8 Envelope = kindValue(FrameKind::PubSubEnvelope); // one broadcast
constexpr quint8 InterestUpdate = kindValue(FrameKind::InterestUpdate);
constexpr quint8 InterestSyncRequest = kindValue(FrameKind::InterestSyncRequest);
constexpr quint8 InterestSync = kindValue(FrameKind::InterestSync);
// "I hold your interest up to this number": the answer to an update with changes and to a
// sync. Lets a node hold a join's reply until its peers will route the tenant to it.
constexpr quint8 InterestAck = kindValue(FrameKind::InterestAck);
// A broadcast for the tenant's home to number and publish (an envelope naming its sender).
constexpr quint8 SequenceRequest = kindValue(FrameKind::SequenceRequest);
constexpr quint8 HistoryRequest = kindValue(FrameKind::HistoryRequest);
constexpr quint8 HistoryReply = kindValue(FrameKind::HistoryReply);
} // namespace cluster_frame

// "Which nodes hold clients of which tenant" (seed 000's Muster, seed 004's registry), told by
// every node to its peers over node links.
//
// Every node numbers what it announces: an epoch (random, new at each start, so a restarted
// node is never mistaken for its previous run) and a sequence number that grows by one per
// update. An update applies only right after the previous one; anything else (a gap: a frame
// lost on a link that broke; a new epoch; a peer we know nothing of yet) makes the receiver
// forget that peer's interest and ask for a full sync. A check is an update without changes
// carrying the current number: it lets a receiver notice a lost last update.
//
// Wire format (big-endian, bytes = u32 length + bytes):
//   update:  u8 version (1) | u64 epoch | u64 seq | u32 n | n x (u8 present 0/1 | bytes tenant)
//   request: u8 version (1)
//   sync:    u8 version (1) | u64 epoch | u64 seq | u32 n | n x (bytes tenant)
//   ack:     u8 version (1) | u64 epoch | u64 seq
//
// Acknowledgements: a node that applied an update with changes, or a sync, answers with the
// number it now holds. The announcing node uses them to learn when every connected peer routes
// a newly present tenant to it (ClusterPubSub::awaitTenantReachable).
struct InterestChange
{
    QByteArray tenant;
    bool present = false;
    friend bool operator==(const InterestChange &, const InterestChange &) = default;
};

struct InterestUpdate
{
    quint64 epoch = 0;
    quint64 seq = 0;
    QList<InterestChange> changes; // empty: a check of `seq`
    friend bool operator==(const InterestUpdate &, const InterestUpdate &) = default;
};

struct InterestSync
{
    quint64 epoch = 0;
    quint64 seq = 0;
    QList<QByteArray> tenants;
    friend bool operator==(const InterestSync &, const InterestSync &) = default;
};

// The number of the sender's announcements that the acknowledging peer holds.
struct InterestAck
{
    quint64 epoch = 0;
    quint64 seq = 0;
    friend bool operator==(const InterestAck &, const InterestAck &) = default;
};

QByteArray encodeInterestUpdate(const InterestUpdate &update);
QByteArray encodeInterestSyncRequest();
QByteArray encodeInterestSync(const InterestSync &sync);
QByteArray encodeInterestAck(const InterestAck &ack);
// Untrusted bytes (another node's frame payload): malformations are error values.
Result<InterestUpdate> decodeInterestUpdate(QByteArrayView bytes);
Result<bool> decodeInterestSyncRequest(QByteArrayView bytes); // true when well-formed
Result<InterestSync> decodeInterestSync(QByteArrayView bytes);
Result<InterestAck> decodeInterestAck(QByteArrayView bytes);

// This node's own tenants and what it has announced of them. Pure; used on the cluster thread.
// note() changes the current set; takeUpdate() turns the changes since the last announcement
// into one numbered update (changes that cancel out announce nothing); sync() describes what
// has been announced (so a sync followed by later updates stays consistent).
class LocalInterest
{
public:
    explicit LocalInterest(quint64 epoch) : m_epoch(epoch) { }

    // Returns whether the current set changed.
    bool note(const QByteArray &tenant, bool present);
    bool hasUnannouncedChanges() const { return m_current != m_announced; }
    // The next update, or nullopt when nothing changed since the last one.
    std::optional<InterestUpdate> takeUpdate();
    // An update without changes at the current number.
    InterestUpdate check() const { return InterestUpdate{ m_epoch, m_seq, {} }; }
    // Everything announced so far (sorted, so the bytes are deterministic).
    InterestSync sync() const;

    const QSet<QByteArray> &tenants() const { return m_current; }
    quint64 epoch() const { return m_epoch; }
    quint64 seq() const { return m_seq; }

private:
    quint64 m_epoch;
    quint64 m_seq = 0;
    QSet<QByteArray> m_current;
    QSet<QByteArray> m_announced;
};

// A member of the cluster as the fan-out sees it.
struct ClusterPeer
{
    QString nodeId;
    QString region;
    friend bool operator==(const ClusterPeer &, const ClusterPeer &) = default;
};

// Which peers a broadcast goes to while their interest is unknown.
enum class FloodScope : quint8 {
    // Peers of this node's region (the "region flood"); an unknown peer of another
    // region gets nothing until its interest is known.
    Region,
    // Every peer whose interest is unknown.
    Cluster,
};

// What this node knows of its peers' tenants, and the "which peers get this broadcast"
// decision. Pure (no I/O, no clock of its own: times are passed in); used on the cluster thread.
//
// A peer is Unknown when it joined, when its link came up again (it may have restarted), or
// after a gap in its updates; it becomes Known with a full sync. Known peers get a tenant's
// broadcasts only if they hold that tenant's clients; Unknown peers get everything within the
// flood scope (nothing is lost while the map is in flux). A peer that left is forgotten.
class InterestMap
{
public:
    enum class PeerState : quint8 { Unknown, Known };
    enum class UpdateOutcome : quint8 {
        Applied, // the changes are in the map
        InSync, // a check that matched
        Duplicate, // an update already applied (ignored)
        NeedSync, // the peer's interest is now Unknown: ask it for a sync
        NotAPeer, // ignored: the sender is not (yet) a member
    };
    struct Targets
    {
        QStringList nodes; // in no particular order
        int flooded = 0; // how many of them are there only because their interest is unknown
    };

    explicit InterestMap(QString selfNodeId) : m_self(std::move(selfNodeId)) { }

    // Replaces the member list (this node's own entry is ignored). New peers start Unknown,
    // departed ones are forgotten, the others keep their interest (their region may change).
    // Returns the node ids that were added.
    QStringList setPeers(const QList<ClusterPeer> &peers);
    bool contains(const QString &nodeId) const { return m_peers.contains(nodeId); }
    QStringList peerIds() const; // sorted

    // The peer's interest can no longer be trusted (its link came up again).
    void markUnknown(const QString &nodeId);
    UpdateOutcome applyUpdate(const QString &nodeId, const InterestUpdate &update);
    // Returns whether the sync was applied (false: not a peer, or older than what we hold).
    bool applySync(const QString &nodeId, const InterestSync &sync);

    // Whether to ask `nodeId` for a sync now: it is Unknown and was not asked during the last
    // `minIntervalMs` (so a burst of out-of-order updates asks once). Records the request.
    bool takeSyncRequest(const QString &nodeId, qint64 nowMs, qint64 minIntervalMs);
    // Forget when we last asked (the next takeSyncRequest answers true if Unknown).
    void resetSyncRequest(const QString &nodeId);

    Targets targets(const QByteArray &tenant, const QString &selfRegion, FloodScope scope) const;

    std::optional<PeerState> state(const QString &nodeId) const;
    // The number of the peer's announcements we hold; nullopt unless the peer is Known.
    std::optional<InterestAck> heldNumbering(const QString &nodeId) const;
    QSet<QByteArray> tenantsOf(const QString &nodeId) const;
    qsizetype tenantCount(const QString &nodeId) const;

private:
    struct Peer
    {
        QString region;
        PeerState state = PeerState::Unknown;
        quint64 epoch = 0;
        quint64 seq = 0;
        QSet<QByteArray> tenants;
        qint64 lastSyncRequestMs = -1; // -1: not asked since it became Unknown
    };
    static void forget(Peer &peer);

    QString m_self;
    QHash<QString, Peer> m_peers;
};

} // namespace rt::pubsub
