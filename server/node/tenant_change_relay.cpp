#include "server/node/tenant_change_relay.h"

#include "server/cluster/links/node_links.h"
#include "server/node/cluster_node.h"
#include "server/node/logging.h"
#include "server/tenants/tenant_change_wire.h"

namespace rt::node {

namespace wire = tenants::change_wire;

namespace {

// One ordering key: notices about one tenant arrive in the order they were sent.
const QString OrderingKey = QStringLiteral("tenant-changes");

} // namespace

TenantChangeRelay::TenantChangeRelay(ClusterNode &node, RefreshTenant refreshTenant)
    : QObject(&node),
      m_node(node),
      m_refreshTenant(std::move(refreshTenant))
{
    // Same thread as the node once both have moved: these calls are direct.
    connect(&node, &ClusterNode::started, this, &TenantChangeRelay::onStarted);
    connect(&node, &ClusterNode::stopped, this, &TenantChangeRelay::onStopped);
}

void TenantChangeRelay::onStarted()
{
    m_links = m_node.links();
    if (m_links != nullptr) {
        connect(m_links, &cluster::links::NodeLinks::frameReceived, this,
                &TenantChangeRelay::onFrame);
    }
}

void TenantChangeRelay::onStopped()
{
    if (m_links != nullptr) {
        disconnect(m_links, nullptr, this, nullptr);
        m_links = nullptr;
    }
}

void TenantChangeRelay::announce(const QByteArray &externalId)
{
    if (m_links == nullptr) {
        return; // a single node: nobody to tell
    }
    if (externalId.isEmpty() || externalId.size() > wire::MaxIdBytes) {
        qCWarning(lcNode) << "not announcing a write of a tenant whose id has" << externalId.size()
                          << "bytes; other nodes see it at their next refresh";
        return;
    }
    const QByteArray payload = wire::encode(externalId);
    for (const QString &peer : m_links->peers()) {
        m_links->send(peer, wire::KindTenantWritten, payload, OrderingKey);
    }
}

void TenantChangeRelay::onFrame(const QString &fromNodeId, quint8 kind, const QByteArray &payload)
{
    if (kind != wire::KindTenantWritten) {
        return;
    }
    Result<QByteArray> externalId = wire::decode(payload);
    if (!externalId) {
        qCWarning(lcNode).noquote() << "bad tenant change notice from" << fromNodeId << ":"
                                    << externalId.error().message;
        return;
    }
    qCDebug(lcNode).noquote() << "node" << fromNodeId << "wrote tenant"
                              << QString::fromUtf8(*externalId) << "- re-reading it";
    if (m_refreshTenant) {
        m_refreshTenant(*externalId, [] {});
    }
}

} // namespace rt::node
