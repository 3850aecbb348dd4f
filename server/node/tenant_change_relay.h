#pragma once

#include <QByteArray>
#include <QObject>
#include <QString>

#include <functional>

namespace rt::cluster {
struct NodeInfo;
namespace links {
class NodeLinks;
}
} // namespace rt::cluster

namespace rt::node {

class ClusterNode;

// Makes a tenant written through one node's tenant API apply on every node at once: it tells
// the peers which tenant this node created, changed or deleted (node-link frame kind 27), and
// has the tenants its peers name re-read from the control plane, which updates the directory
// and disconnects sockets as a local write would. Without it, the other nodes learn of a write
// at their next refresh (TENANT_CACHE_EXPIRATION_IN_MS): a new tenant's clients are refused
// there with "Tenant not found", a suspended tenant's clients stay. That refresh remains the
// safety net for a notice lost with a link (links deliver at most once).
//
// A child of the ClusterNode, created on the main thread before the node moves to the cluster
// thread; it lives there and follows the node's started/stopped signals. Call it only there.
class TenantChangeRelay : public QObject
{
    Q_OBJECT
public:
    // Re-reads one tenant from the control plane, then calls `done` on any thread.
    using RefreshTenant =
            std::function<void(const QByteArray &tenantId, std::function<void()> done)>;

    TenantChangeRelay(ClusterNode &node, RefreshTenant refreshTenant);

    // This node's tenant API wrote `externalId`: tell every peer.
    void announce(const QByteArray &externalId);

private:
    void onStarted();
    void onStopped();
    void onFrame(const QString &fromNodeId, quint8 kind, const QByteArray &payload);

    ClusterNode &m_node;
    RefreshTenant m_refreshTenant;
    cluster::links::NodeLinks *m_links = nullptr; // the node's; null without etcd
};

} // namespace rt::node
