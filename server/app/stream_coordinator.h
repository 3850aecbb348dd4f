#pragma once

#include "server/cdc/stream_cluster.h"
#include "server/cluster/placement/placement.h"
#include "server/cluster/types.h"

#include <QHash>
#include <QObject>
#include <QSet>
#include <QTimer>

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

namespace rt::app {

// Where each tenant's change stream runs in the cluster (the per-tenant singleton: one
// replication connection per tenant database, its postgres_changes and database broadcasts).
//
// Ownership is the claim "stream/<tenant>" (etcd: create-if-absent bound to the owner's lease,
// metadata {"state": "starting" | "ready"}). A node whose clients need a stream that has no
// owner asks the placement (seed 000's picker: region, two candidates, lower load) which node
// should run it: itself, then it claims; another node, then it asks that node over the links,
// and claims itself if that node refuses or has not claimed within StartTimeoutMs. Every node
// watches the claims: a node that needs the stream learns the owner, waits for "ready", and
// starts over when the claim vanishes (owner stopped, idle, moved out of the tenant's region,
// or died: its lease ends within the TTL). The owner also runs matching and RLS for the other
// nodes' subscribers and sends each node its members' changes (CdcService does the work; this
// object carries the messages).
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
    };
    static constexpr int StartTimeoutMs = 3000;

    StreamCoordinator(cluster::NodeInfo self, Parts parts, QObject *parent = nullptr);

    static QString resourceOf(const QByteArray &tenantId);

    // Cluster thread.
    void setMembers(const QList<cluster::NodeInfo> &members);
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
    void sendDelivery(const QString &node, const pubsub::TopicKey &topic, const QByteArray &event,
                      const QByteArray &payload, std::vector<quint64> members) override;

private:
    void resolve(const QByteArray &tenantId);
    void resolveSoon(const QByteArray &tenantId);
    void claim(const QByteArray &tenantId);
    cluster::placement::PlacementDecision place(const QByteArray &tenantId);
    void onClaimChanged(const QString &resource, const std::optional<cluster::Claim> &claim);
    void onFrame(const QString &fromNodeId, quint8 kind, const QByteArray &payload);
    void onControl(const QString &fromNodeId, const QByteArray &payload);
    void send(const QString &node, quint8 kind, const QByteArray &tenantId, QByteArray bytes);
    void refreshPeerTenants();
    void leaveWrongRegions();

    cluster::NodeInfo m_self;
    Parts m_parts;
    QList<cluster::NodeInfo> m_members;
    cluster::placement::PlacementSettings m_placement;
    cluster::placement::LoadCache m_loads;
    QSet<QByteArray> m_needed; // tenants with clients here that need their stream
    QSet<QByteArray> m_claiming; // claim requests in flight
    QSet<QByteArray> m_asked; // asked another node to start it; waiting for its claim
    QSet<QByteArray> m_mustClaim; // the placement picked this node (a peer asked us)
    QTimer m_peerTenantsTimer;
};

} // namespace rt::app
