#pragma once

#include "server/presence/presence_change.h"
#include "server/presence/presence_wire.h"
#include "server/runtime/mailbox.h"

#include <QElapsedTimer>
#include <QHash>
#include <QObject>
#include <QSet>
#include <QStringList>

#include <chrono>
#include <cstddef>

QT_BEGIN_NAMESPACE
class QTimer;
QT_END_NAMESPACE

namespace rt::cluster::links {
class NodeLinks;
}

namespace rt::presence {

class PresenceStore;

struct ReplicatorSettings
{
    // How long a peer may stay unreachable over our links before its presences leave. Node
    // death is normally reported first by the membership (lease TTL, 10 s by default), so this
    // only matters when etcd still sees a peer we cannot reach; a link flap shorter than it keeps
    // the peer's presences (they are resynced on reconnect). Longer than the link heartbeat
    // timeout (3 x 2 s) plus the reconnect backoff ceiling (5 s).
    std::chrono::milliseconds disconnectGrace{ 15'000 };
    // How often each connected peer gets a Marker with our last change number.
    std::chrono::milliseconds markerInterval{ 5'000 };
    // A resync request not answered within this is repeated (on the next gap or marker).
    std::chrono::milliseconds resyncRetry{ 3'000 };
    // Full syncs are cut into frames of about this size.
    qsizetype maxSyncChunkBytes = qsizetype{ 1024 } * 1024;
};

// Presence across nodes: the glue between this node's PresenceStore (main thread) and its node
// links. Lives on the cluster thread, next to NodeLinks; it talks to the store only through
// values posted to the other thread (connectReplication() wires both directions).
//
// Each node is the authority for its own members' presences. The replicator keeps a mirror of
// them (fed by the store's localChanged), numbers every change and sends it as a Delta to every
// connected peer. When our link to a peer comes up it sends that peer a full sync of the mirror
// (each side does so for its own presences), and the peer replaces everything it held from us.
//
// Consistency. All presence frames to a peer share one ordering key, so a peer sees our syncs,
// deltas and markers in the order we sent them (a per-topic key would let a delta overtake the
// sync it follows, or a sync omit a topic whose stale deltas arrive later). Links deliver at
// most once, so the receiver checks that change numbers follow on from the last sync; a gap (a
// frame lost in a broken link, a new incarnation of the origin) or a Marker announcing a
// number it has not reached makes it ask the origin for a full sync (ResyncRequest) and ignore
// that origin's deltas until the sync arrives. Joins are never repeated: a sync is applied as a
// replacement (PresenceStore::replaceRemoteOrigin publishes only the differences).
//
// Departure. A peer's presences leave when the membership says it left (setMembers /
// memberLeft: lease expired), or when our links to it stay down for disconnectGrace.
class PresenceReplicator : public QObject
{
    Q_OBJECT

public:
    // `links` must outlive this object and live on its thread.
    explicit PresenceReplicator(cluster::links::NodeLinks &links,
                                const ReplicatorSettings &settings = {}, QObject *parent = nullptr);
    ~PresenceReplicator() override;

    // Any thread: posts run on the replicator's thread, and are dropped once it is being
    // destroyed (connectReplication() sends the store's changes through it).
    const runtime::MailboxPtr &inbox() const { return m_inbox; }

    // Random per replicator (per process): tells a peer that we restarted.
    quint64 incarnation() const { return m_incarnation; }
    // Number of the last local change sent.
    quint64 sequence() const { return m_sequence; }
    // Peers whose presences we currently hold in sync (for diagnostics and tests).
    QStringList syncedOrigins() const;
    // Markers received from `nodeId` since this replicator started. A marker follows every
    // change its origin sent before it, so a count that moved is a sentinel for "caught up".
    quint64 markersReceivedFrom(const QString &nodeId) const;

    // One of this node's presences changed (from PresenceStore::localChanged, in order).
    void publishLocalChange(const rt::presence::PresenceChange &change);
    // All of this node's presences now (the store's localPresences()): replaces the mirror and
    // sends a full sync to every connected peer. connectReplication() posts it once, so a
    // replicator (re)started next to a store that already holds presences starts complete.
    void resetLocal(const QList<rt::presence::PresenceRecord> &records);
    // The live members' node ids (from ClusterBackend::membersChanged). Nodes that were
    // members and are no longer: their presences leave.
    void setMembers(const QStringList &liveNodeIds);
    // Node `nodeId` left the cluster: its presences leave.
    void memberLeft(const QString &nodeId);
    // A frame from a peer (NodeLinks::frameReceived; other kinds are ignored).
    void handleFrame(const QString &fromNodeId, quint8 kind, const QByteArray &payload);

Q_SIGNALS:
    // Towards the store (queued to its thread): a change of `origin`'s presences, all of its
    // presences now, or none any more.
    void remoteChanged(const QString &origin, const rt::presence::PresenceChange &change);
    void remoteReplaced(const QString &origin, const QList<rt::presence::PresenceRecord> &records);
    void remoteDropped(const QString &origin);

private:
    runtime::MailboxPtr m_inbox = std::make_shared<runtime::Mailbox>(this);

    // What we know of one peer's presences.
    struct Origin
    {
        bool inSync = false; // holding its state up to `sequence`; its deltas apply in order
        bool held = false; // the store may hold presences of it (something was emitted)
        quint64 incarnation = 0;
        quint64 sequence = 0;
        // A sync being received (chunks 0..nextChunk-1 are in).
        bool assembling = false;
        quint64 syncIncarnation = 0;
        quint64 syncSequence = 0;
        quint32 nextChunk = 0;
        QList<PresenceRecord> pending;
        bool resyncRequested = false;
        quint64 markersReceived = 0;
        QElapsedTimer resyncRequestedAt;
        QTimer *graceTimer = nullptr; // child of the replicator; running while links are down
    };

    void onPeerConnected(const QString &nodeId);
    void onPeerDisconnected(const QString &nodeId);
    void sendMarkers();
    void sendSync(const QStringList &nodeIds);
    void onDelta(const QString &from, Origin &origin, const wire::Delta &delta);
    void onSyncChunk(const QString &from, Origin &origin, wire::SyncChunk chunk);
    void onMarker(const QString &from, Origin &origin, const wire::Marker &marker);
    // Marks `origin` out of sync and asks for a full sync (at most once per resyncRetry).
    void lostSync(const QString &from, Origin &origin, const char *reason);
    void drop(const QString &nodeId, const char *reason);
    Origin &origin(const QString &nodeId);

    cluster::links::NodeLinks &m_links;
    ReplicatorSettings m_settings;
    QString m_self;
    quint64 m_incarnation;
    quint64 m_sequence = 0;
    // Our own presences: topic id -> member id -> record.
    QHash<QByteArray, QHash<quint64, PresenceRecord>> m_local;
    QHash<QString, Origin> m_origins;
    QSet<QString> m_members; // last membership view (node ids)
    QTimer *m_markerTimer = nullptr; // child
};

// Connects a store (main thread) and a replicator (cluster thread) both ways, each signal's
// values posted to the other thread in order, then hands the replicator the store's current presences (resetLocal), so it
// misses nothing whenever it starts. Call it on the store's thread: no change can slip in
// between the snapshot and the connection.
void connectReplication(PresenceStore &store, PresenceReplicator &replicator);

} // namespace rt::presence
