#pragma once

#include "server/pubsub/cluster_interest.h"
#include "server/pubsub/pubsub.h"
#include "server/pubsub/remote_sequences.h"

#include <QElapsedTimer>
#include <QHash>
#include <QObject>
#include <QSet>
#include <QString>

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <mutex>
#include <vector>

class QTimer;

namespace rt::cluster::links {
class NodeLinks;
}

namespace rt::pubsub {

class HistoryExchange;
class LocalPubSub;
class TenantHomes;

struct ClusterPubSubSettings
{
    QString nodeId; // this node (NODE_NAME)
    QString region = QStringLiteral("local"); // this node's REGION
    // Who gets a broadcast while a peer's interest is unknown (see FloodScope).
    FloodScope floodScope = FloodScope::Region;
    // Bound on envelopes handed from publishers to the cluster thread and not yet sent
    // (the cluster thread stalled); beyond it remote copies are dropped and counted. The
    // local fan-out is never affected.
    qsizetype maxPendingEnvelopes = 100'000;
    qint64 maxPendingBytes = 64LL * 1024 * 1024;
    // How often every connected peer gets a check of our interest numbering (lets it notice
    // a lost update), and Unknown peers are asked for a sync again.
    std::chrono::milliseconds interestCheckInterval{ 5000 };
    // A peer is asked for a sync at most this often (a burst of unexpected updates asks once).
    std::chrono::milliseconds syncRequestMinInterval{ 1000 };
    // How long a join waits for the peers to confirm that they route its tenant here
    // (awaitTenantReachable); a peer that stays silent this long no longer holds joins up.
    std::chrono::milliseconds reachableWait{ 1000 };
};

// Figures for the admin view (dashboard: messages/s per node-to-node link and per tenant per
// node are the deltas of these counters between two reads). Bytes are envelope payload bytes;
// NodeLinks::counters() has the wire bytes of all frame kinds.
struct ClusterPeerFigures
{
    quint64 envelopesOut = 0; // broadcasts handed to the links for this peer
    quint64 bytesOut = 0;
    quint64 floodedOut = 0; // of envelopesOut: sent only because its interest was unknown
    quint64 envelopesDropped = 0; // refused by the links (queue full, oversized)
    quint64 envelopesIn = 0; // broadcasts received from this peer and fanned out here
    quint64 bytesIn = 0;
    quint64 interestFramesOut = 0; // updates, checks, sync requests and syncs
    quint64 interestFramesIn = 0;
    bool interestKnown = false;
    qsizetype tenants = 0; // tenants the peer holds clients of, as far as we know
};

struct ClusterTenantFigures
{
    quint64 envelopesOut = 0; // one per peer a broadcast of this tenant was sent to
    quint64 bytesOut = 0;
    quint64 envelopesIn = 0;
    quint64 bytesIn = 0;
};

struct ClusterPubSubStats
{
    QHash<QString, ClusterPeerFigures> peers; // current members only
    QHash<QByteArray, ClusterTenantFigures> tenants;
    quint64 published = 0; // publish() calls
    quint64 keptLocal = 0; // publish() of Audience::Members messages: never forwarded
    quint64 handoffDropped = 0; // remote copies dropped before the cluster thread saw them
    quint64 badFrames = 0; // envelope or interest frames that did not decode (dropped)
    qsizetype localTenants = 0;
    quint64 reachableWaits = 0; // joins that waited for the peers to route their tenant here
    quint64 reachableTimeouts = 0; // of those: ended by reachableWait, not by every confirmation
    quint64 forwardedToHome = 0; // broadcasts sent to their tenant's home to be numbered
    quint64 numberedForPeers = 0; // broadcasts peers sent here to be numbered
    quint64 forwardFallbacks = 0; // forwards the links refused: published here unnumbered
    quint64 forwardTimeouts = 0; // forwards whose numbered copy did not come back in time
    RemoteSequences::Figures sequences; // numbered messages from homes: gaps and duplicates
};

// Cluster-wide fan-out: publish() delivers on this node at once (through the wrapped
// LocalPubSub, on the calling thread) and hands one encoded envelope to the cluster thread,
// which sends it over the node links to the peers that hold clients of the message's tenant
// (the interest map), or, while a peer's interest is unknown, to the peers of the flood scope.
// Envelopes received from peers are fanned out locally and never forwarded again, so a
// message crosses at most one link and cannot loop.
//
// The interest protocol (see cluster_interest.h) keeps the map: every node announces its own
// tenants (noteLocalTenant) with numbered incremental updates, answers sync requests with its
// full set, sends a full sync (and asks for one) whenever its link to a peer comes up, and
// checks its numbering with every peer periodically so lost frames are noticed. A peer whose
// links are down keeps its last known interest meanwhile (its frames wait in the links'
// bounded queue); when its link comes up again it is Unknown (flooded) until it has synced.
//
// Not forwarded: Audience::Members messages (postgres_changes pushTo: member ids mean nothing
// on another node) are delivered here only. Delivery across nodes is at most once, in order
// per topic (the envelope's ordering key is the topic), as the links guarantee. A client that
// joins on node B is reached from node A once B's update reached A (one link hop): B's first
// join of a tenant is answered only after its connected peers acknowledged the update
// (awaitTenantReachable), so what is sent after SUBSCRIBED reaches the client.
//
// Threads: the object (its network side: frames, timers, interest map) lives on the cluster
// thread, with the NodeLinks: create it there, call setPeers() and interest() only there.
// publish(), publishLocal(), awaitTenantReachable(), noteLocalTenant(), stats() and stop() may
// be called from any thread and never block (a short mutex hand-off). Destroy it on the cluster thread, after
// every publisher stopped (as for LocalPubSub's hubs).
class ClusterPubSub final : public QObject, public PubSub
{
    Q_OBJECT

public:
    // The receiving node's counting for a remote message of `topic`: isBroadcast = the sender
    // counted it as a broadcast event (client/HTTP broadcasts); false for presence diffs and
    // database-originated messages. Called on the cluster thread; may be empty (no counting).
    using CountingResolver =
            std::function<DeliveryCounting(const TopicKey &topic, bool isBroadcast)>;

    // `local` and `links` must outlive this object.
    ClusterPubSub(ClusterPubSubSettings settings, LocalPubSub &local,
                  cluster::links::NodeLinks &links, CountingResolver resolver,
                  QObject *parent = nullptr);
    ~ClusterPubSub() override;

    // Any thread. Local fan-out now, then (unless Audience::Members) a remote copy queued for
    // the cluster thread.
    void publish(const OutboundMessagePtr &message) const override;
    // Any thread. This node only.
    void publishLocal(const OutboundMessagePtr &message) const override;
    // Any thread. Sends a broadcast to its tenant's home `home` to be numbered there (frame
    // SequenceRequest, ordered per topic); it reaches this node's members when the home
    // publishes it. If the links refuse it, or the numbered copy has not come back within
    // ForwardEchoTimeout (a link that died silently: heartbeats notice after 6 s), it is
    // published here unnumbered instead, and a late copy is not delivered here again.
    void forwardToHome(const QString &home, const OutboundMessagePtr &message) const;
    // Cluster thread, before frames arrive: what a SequenceRequest from a peer is handed to
    // (the sequencer's publishAsHome); empty: publish() as it is.
    void setHomePublisher(std::function<void(const OutboundMessagePtr &)> publisher);
    static constexpr std::chrono::milliseconds ForwardEchoTimeout{ 1000 };
    // Cluster thread, before the node publishes: the history questions to other nodes go
    // there (NodePubSub finds it through this object). May stay unset (no history).
    void setHistoryExchange(HistoryExchange *exchange) { m_historyExchange = exchange; }
    // Cluster thread, with the exchange: where each tenant's home is (a link to a home coming
    // back makes this node ask it what its topics missed).
    void setHomes(const TenantHomes *homes) { m_homes = homes; }
    HistoryExchange *historyExchange() const { return m_historyExchange; }
    // Any thread. Announces the tenant if needed and calls back once every peer whose link is
    // up acknowledged it (or after settings().reachableWait).
    bool awaitTenantReachable(const QByteArray &tenantId, QObject *receiver,
                              std::function<void()> reachable) const override;

    // Any thread. A tenant got clients on this node (true) or lost its last one (false);
    // peers learn it within one link hop.
    void noteLocalTenant(const QByteArray &tenantId, bool present);
    // Cluster thread. Makes the announced tenants those `presentNow` returns, read after every
    // announcement posted so far was applied: a join that counted its user before the read is
    // in the set, and one that counts after it announces itself later. So a departure noticed
    // here never overtakes the announcement of a join that happened meanwhile.
    void reconcileLocalTenants(const std::function<QSet<QByteArray>()> &presentNow);

    // Cluster thread. The members of the cluster (this node's entry is ignored); call it with
    // the same membership as NodeLinks::setPeers.
    void setPeers(const QList<rt::pubsub::ClusterPeer> &peers);

    // Any thread: after it returns no remote copy is queued any more (the local fan-out goes
    // on until LocalPubSub::stop()).
    void stop();

    // Any thread.
    ClusterPubSubStats stats() const;
    // Cluster thread.
    const InterestMap &interest() const { return m_interest; }
    const LocalInterest &localInterest() const { return m_localInterest; }
    const ClusterPubSubSettings &settings() const { return m_settings; }

private:
    struct Forward
    {
        quint64 id = 0;
        OutboundMessagePtr message;
        qint64 deadlineMs = 0; // on m_clock
    };
    struct Pending
    {
        QByteArray tenant;
        QString orderingKey;
        QByteArray envelope;
        // A forward: the home it goes to, and the message (published here if it cannot go).
        QString home;
        OutboundMessagePtr message;
    };
    struct ReachableRequest
    {
        QByteArray tenant;
        QObject *receiver = nullptr;
        std::function<void()> reachable;
    };
    struct ReachableWaiter
    {
        ReachableRequest request;
        quint64 seq = 0; // our announcement number every peer must hold
        QSet<QString> peers; // connected peers that have not acknowledged it yet
        qint64 deadlineMs = 0; // on m_clock
    };
    class Outbox;

    // Cluster thread.
    void drain();
    void sendEnvelope(const Pending &pending);
    void sendToHome(const Pending &pending);
    void onSequenceRequest(const QString &fromNodeId, const QByteArray &payload);
    // A numbered message from its home: in order, once (RemoteSequences), asking the home for
    // what a gap lost.
    void receiveNumbered(const QString &fromNodeId, const OutboundMessagePtr &message);
    void askHome(const QString &home, const TopicKey &topic, StreamPosition after);
    void deliverInOrder(const RemoteSequences::Outcome &outcome);
    // The home's numbered copy of a forward of ours: false if it came too late (delivered
    // here unnumbered already).
    bool takeEcho(quint64 forwardId);
    void expireForwards();
    void catchUpWith(const QString &home);
    void flushLocalInterest();
    void applyLocalChange(const QByteArray &tenant, bool present);
    void startWaiting(ReachableRequest request);
    void onInterestAck(const QString &fromNodeId, const QByteArray &payload);
    void sendAck(const QString &toNodeId);
    // The peer will not acknowledge (gone, link down): stop waiting for it.
    void stopWaitingFor(const QString &nodeId);
    void forgetDepartedPeers();
    void finishReachedWaiters();
    void onWaitDeadline();
    void armWaitTimer();
    void completeWaiter(ReachableWaiter &waiter, bool timedOut);
    void onFrame(const QString &fromNodeId, quint8 kind, const QByteArray &payload);
    void onEnvelope(const QString &fromNodeId, const QByteArray &payload);
    void onInterestUpdate(const QString &fromNodeId, const QByteArray &payload);
    void onInterestSync(const QString &fromNodeId, const QByteArray &payload);
    void onPeerConnected(const QString &nodeId);
    void onInterestCheck();
    void sendInterest(const QString &nodeId, quint8 kind, const QByteArray &payload);
    void sendSync(const QString &nodeId);
    void requestSync(const QString &nodeId, bool force);
    void refreshPeerFigures(const QString &nodeId); // call with m_statsMutex held
    void countBadFrame(const QString &fromNodeId, quint8 kind, const QString &reason);

    ClusterPubSubSettings m_settings;
    LocalPubSub &m_local;
    cluster::links::NodeLinks &m_links;
    CountingResolver m_resolver;
    std::function<void(const OutboundMessagePtr &)> m_homePublisher; // cluster thread
    HistoryExchange *m_historyExchange = nullptr; // set before publishing starts
    const TenantHomes *m_homes = nullptr;
    RemoteSequences m_sequences; // cluster thread
    // Forwards sent to homes whose numbered copy has not come back, oldest first (cluster
    // thread; bounded by maxPendingEnvelopes, beyond which a forward is published here at once).
    std::deque<Forward> m_forwards;
    QSet<quint64> m_awaitedEchoes;
    mutable std::atomic<quint64> m_nextForwardId{ 1 };
    Outbox *m_outbox; // child; the thread-safe hand-off from publishers
    QTimer *m_checkTimer; // child
    QTimer *m_waitTimer; // child; the earliest ReachableWaiter deadline
    QTimer *m_forwardTimer; // child; expires m_forwards
    QElapsedTimer m_clock;

    // Cluster thread only.
    InterestMap m_interest;
    LocalInterest m_localInterest;
    QHash<QString, quint64> m_ackedSeq; // peer -> highest number of ours it acknowledged
    std::vector<ReachableWaiter> m_waiters;

    // Any thread.
    mutable std::atomic<quint64> m_published{ 0 };
    mutable std::atomic<quint64> m_keptLocal{ 0 };
    mutable std::atomic<quint64> m_forwarded{ 0 };
    std::atomic<int> m_peerCount{ 0 }; // members other than this node (set on the cluster thread)
    // Tenants announced and confirmed by the peers: joins of them need not wait.
    mutable std::mutex m_reachableMutex;
    QSet<QByteArray> m_reachable; // guarded by m_reachableMutex (written on the cluster thread)
    mutable std::mutex m_statsMutex;
    ClusterPubSubStats m_stats; // guarded by m_statsMutex (written on the cluster thread)
};

} // namespace rt::pubsub
