#include "server/pubsub/node_pubsub.h"

#include "server/pubsub/cluster_pubsub.h"
#include "server/pubsub/history_exchange.h"
#include "server/pubsub/local_pubsub.h"

#include <QThread>

namespace rt::pubsub {

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

bool NodePubSub::awaitTenantReachable(const QByteArray &tenantId, QObject *receiver,
                                      std::function<void()> reachable) const
{
    m_publishing.fetch_add(1);
    bool now = true;
    if (const pubsub::ClusterPubSub *cluster = m_cluster.load()) {
        now = cluster->awaitTenantReachable(tenantId, receiver, std::move(reachable));
    }
    m_publishing.fetch_sub(1);
    return now;
}

bool NodePubSub::forwardToHome(const QString &home, const OutboundMessagePtr &message) const
{
    m_publishing.fetch_add(1);
    const pubsub::ClusterPubSub *cluster = m_cluster.load();
    if (cluster != nullptr) {
        cluster->forwardToHome(home, message);
    }
    m_publishing.fetch_sub(1);
    return cluster != nullptr;
}

void NodePubSub::askHome(const QString &home, history_wire::Request question, QObject *receiver,
                         std::function<void(TopicHistory::Recovery)> answered) const
{
    m_publishing.fetch_add(1);
    const pubsub::ClusterPubSub *cluster = m_cluster.load();
    HistoryExchange *exchange = cluster != nullptr ? cluster->historyExchange() : nullptr;
    if (exchange != nullptr) {
        exchange->ask(home, std::move(question), receiver, std::move(answered));
    } else {
        QMetaObject::invokeMethod(
                receiver,
                [answered = std::move(answered)] {
                    TopicHistory::Recovery recovery;
                    recovery.failure = TopicHistory::RecoveryFailure::Unavailable;
                    answered(std::move(recovery));
                },
                Qt::QueuedConnection);
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

} // namespace rt::pubsub
