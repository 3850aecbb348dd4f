#pragma once

#include "server/cdc/stream_cluster.h"
#include "server/cdc/stream_deliveries.h"
#include "server/cluster/placement/placement.h"
#include "server/cluster/types.h"
#include "server/runtime/mailbox.h"

#include <QElapsedTimer>
#include <QHash>
#include <QObject>
#include <QSet>
#include <QTimer>

#include <functional>
#include <optional>

namespace rt::cluster {
class ClusterBackend;
namespace links {
class NodeLinks;
}
} // namespace rt::cluster
namespace rt::cdc {
class CdcService;
}
namespace rt::pubsub {
class ClusterPubSub;
}
namespace rt::tenants {
class TenantDirectory;
}
namespace rt::metrics {
class ServerMetrics;
}

namespace rt::cdc {

// Where each tenant's change stream runs in the cluster (the per-tenant singleton: one
// replication connection per tenant database, its postgres_changes and database broadcasts).
//
// Ownership is the claim "stream/<tenant>" (etcd: create-if-absent bound to the owner's lease,
// metadata {"state": "starting" | "ready"}). A node whose clients need a stream that has no
// owner asks the placement (seed 000's picker: region, two candidates, lower load) which node
// should run it: itself, then it claims; another node, then it asks that node over the links
// (queued while a link is still coming up), and claims itself only if that node refuses, cannot
// be reached or has not claimed within StartTimeoutMs. A node asked for a tenant it does not know
// re-reads it from the control plane first (it may have been created through another node since
// this one last read it). Every decision and every fallback is logged and counted. Every node
// watches the claims: a node that needs the stream learns the owner, waits for "ready", and
// starts over when the claim vanishes (owner stopped, idle, moved out of the tenant's region,
// or died: its lease ends within the TTL). The owner also runs matching and RLS for the other
// nodes' subscribers and sends each node its members' changes (CdcService does the work; this
// object carries the messages, the changes through StreamDeliveries: once each, in order, also
// to a node that was away from the membership for up to AbsentNodeHoldMs).
//
// Lives on the cluster thread with the backend and the links; the StreamCluster methods may be
// called from any thread (CdcService calls them on the cdc thread) and post here.
class StreamCoordinator final : public QObject, public cdc::StreamCluster
{
    Q_OBJECT
public:
    struct Parts
    {
        cluster::ClusterBackend &backend;
        cluster::links::NodeLinks &links;
        pubsub::ClusterPubSub &pubsub; // who holds clients of which tenant
        cdc::CdcService &cdc;
        const tenants::TenantDirectory &tenants;
        // Re-reads one tenant from the control plane into the directory, then calls `done` on
        // any thread. May be empty (then an unknown tenant is refused at once).
        std::function<void(const QByteArray &tenantId, std::function<void()> done)> refreshTenant;
        metrics::ServerMetrics *metrics = nullptr; // decisions, fallbacks, claims; may be null
    };
    static constexpr int StartTimeoutMs = 3000;
    // How long a node that left the membership keeps its subscribers registered with the streams
    // owned here, their changes kept for it (bounded: StreamDeliveries), in case it was only cut
    // off: back within this time, it receives everything it missed, in order.
    static constexpr qint64 AbsentNodeHoldMs = 120'000;
    // How long a home claim stays after it was granted even though no node seems to hold
    // clients of its tenant yet (the asking node's announcement may still be on its way).
    static constexpr qint64 HomeGraceMs = 10'000;

    StreamCoordinator(cluster::NodeInfo self, Parts parts, QObject *parent = nullptr);
    ~StreamCoordinator() override;

    // The claim on the tenant's stream as the backend knows it, without one of this node's
    // that this node no longer holds (lost with its lease).
    std::optional<cluster::Claim> heldClaim(const QByteArray &tenantId) const;
    static QString resourceOf(const QByteArray &tenantId);

    // Cluster thread.
    void setMembers(const QList<cluster::NodeInfo> &members);
    // Cluster thread: the tenants with clients on this node. Those without a database get a
    // claim too, with no stream: it names their home, where their topics are numbered
    // (docs/design-notes.md, "Positions, history and recovery"); the home keeps it while any
    // node holds clients of the tenant.
    void setLocalTenants(const QSet<QByteArray> &local);
    void setRegionMapping(const QHash<QString, QString> &mapping);

    // StreamCluster: any thread.
    void need(const QByteArray &tenantId) override;
    void release(const QByteArray &tenantId) override;
    void streaming(const QByteArray &tenantId) override;
    void sendSubscribe(const QString &owner, quint64 token,
                       const cdc::SubscribeRequest &request) override;
    void sendUnsubscribe(const QString &owner, const QByteArray &tenantId,
                         quint64 memberId) override;
    void sendSubscribeAnswer(const QString &node, const QByteArray &tenantId, quint64 token,
                             const cdc::SubscribeOutcome &outcome, bool retry) override;
    void sendDelivery(const QString &node, quint64 incarnation, const pubsub::TopicKey &topic,
                      const QByteArray &event, const QByteArray &payload,
                      std::vector<quint64> members) override;

private:
    // Why this node claims a stream (the label of qtrealtime_stream_claims_total).
    enum class ClaimCause { PlacedHere, AskedByPeer, Fallback };
    // Why it runs a stream that the picker gave another node.
    enum class FallbackReason { Refused, Timeout, Unreachable };
    struct Absent
    {
        quint64 incarnation = 0; // the process that left
        qint64 sinceMs = 0;
    };
    struct Ask
    {
        QString node; // the node the picker chose
        quint64 serial = 0; // tells this ask's timeout from a later one's
    };

    void connectBackend();
    // CdcService learns the owners of the streams it needs (not of home-only claims).
    void tellOwner(const QByteArray &tenantId, const std::optional<QString> &owner, bool ready);
    bool wantsHome(const QByteArray &tenantId, const QSet<QByteArray> &local,
                   const QSet<QByteArray> &heldByPeers) const;
    void resolve(const QByteArray &tenantId);
    void resolveSoon(const QByteArray &tenantId);
    void askToStart(const QByteArray &tenantId, const QString &picked);
    void fallBack(const QByteArray &tenantId, FallbackReason reason, const QString &why);
    void startRequested(const QString &fromNodeId, const QByteArray &tenantId, bool reread);
    void claim(const QByteArray &tenantId, ClaimCause cause);
    void onClaimGranted(const QByteArray &tenantId);
    static const char *label(ClaimCause cause);
    static const char *label(FallbackReason reason);
    cluster::placement::PlacementDecision place(const QByteArray &tenantId);
    void onClaimChanged(const QString &resource, const std::optional<cluster::Claim> &claim);
    void onFrame(const QString &fromNodeId, quint8 kind, const QByteArray &payload);
    void onControl(const QString &fromNodeId, const QByteArray &payload);
    void send(const QString &node, quint8 kind, const QByteArray &tenantId, QByteArray bytes);
    void refreshPeerTenants();
    // A node's process: its member record's start time (new with every start).
    static quint64 incarnationOf(const cluster::NodeInfo &node);
    void forgetNode(const QString &nodeId, quint64 incarnation);
    void forgetAbsentNodes();
    void leaveWrongRegions();

    cluster::NodeInfo m_self;
    Parts m_parts;
    QList<cluster::NodeInfo> m_members;
    cluster::placement::PlacementSettings m_placement;
    cluster::placement::LoadCache m_loads;
    QSet<QByteArray> m_needed; // tenants with clients here that need their stream
    QHash<QByteArray, ClaimCause> m_claiming; // claim requests in flight, and why
    QHash<QByteArray, Ask> m_asked; // asked another node to start it; waiting for its claim
    quint64 m_askSerial = 0;
    QSet<QByteArray> m_mustClaim; // the placement picked this node (a peer asked us)
    QSet<QByteArray> m_homeOnly; // tenants without a database whose home claim this node needs
    QHash<QByteArray, qint64> m_homeSinceMs; // home claims held here: when granted (m_clock)
    QElapsedTimer m_clock;
    QTimer m_peerTenantsTimer;
    QHash<QString, Absent> m_absent; // left the membership, their subscribers still held
    StreamDeliveries m_deliveries;
    runtime::MailboxPtr m_mailbox; // answers from the control plane's thread
};

} // namespace rt::cdc
