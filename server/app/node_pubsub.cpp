#include "server/app/node_pubsub.h"

#include "server/pubsub/cluster_pubsub.h"
#include "server/pubsub/local_pubsub.h"

#include <QThread>

namespace rt::app {

NodePubSub::NodePubSub(const pubsub::LocalPubSub &local) : m_local(local) { }

void NodePubSub::publish(const pubsub::OutboundMessagePtr &message) const
{
    m_publishing.fetch_add(1);
    if (const pubsub::ClusterPubSub *cluster = m_cluster.load()) {
        cluster->publish(message);
    } else {
        m_local.publish(message);
    }
    m_publishing.fetch_sub(1);
}

void NodePubSub::publishLocal(const pubsub::OutboundMessagePtr &message) const
{
    m_local.publish(message);
}

void NodePubSub::noteTenantPresent(const QByteArray &tenantId) const
{
    m_publishing.fetch_add(1);
    if (pubsub::ClusterPubSub *cluster = m_cluster.load()) {
        cluster->noteLocalTenant(tenantId, true);
    }
    m_publishing.fetch_sub(1);
}

void NodePubSub::attach(pubsub::ClusterPubSub *cluster)
{
    m_cluster.store(cluster);
}

void NodePubSub::detach()
{
    // Sequentially consistent on both sides (store, then read the count; count, then load):
    // a publisher either sees nullptr or is counted here.
    m_cluster.store(nullptr);
    while (m_publishing.load() != 0) {
        QThread::yieldCurrentThread();
    }
}

} // namespace rt::app
