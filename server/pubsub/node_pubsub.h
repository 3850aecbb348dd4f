#pragma once

#include "server/pubsub/history_wire.h"
#include "server/pubsub/pubsub.h"

#include <atomic>

namespace rt::pubsub {
class ClusterPubSub;
class LocalPubSub;
} // namespace rt::pubsub

namespace rt::pubsub {

// What the node's publishers (channels, HTTP broadcasts) publish through: this node's fan-out
// until the cluster's fan-out is attached (a node with peers: ClusterPubSub), then that. The
// cluster side appears only once the node has joined, after the workers already hold this.
// Thread-safe; publish() never blocks. detach() waits for publishers that are inside
// publish() (microseconds), so the attached pubsub may be destroyed once it returns.
class NodePubSub final : public pubsub::PubSub
{
public:
    explicit NodePubSub(const pubsub::LocalPubSub &local);

    void publish(const pubsub::OutboundMessagePtr &message) const override;
    void publishLocal(const pubsub::OutboundMessagePtr &message) const override;
    // Until the cluster's fan-out is attached there is nobody to tell.
    bool awaitTenantReachable(const QByteArray &tenantId, QObject *receiver,
                              std::function<void()> reachable) const override;

    // The cluster's ways to a tenant's home (false / Unavailable until it is attached).
    bool forwardToHome(const QString &home, const OutboundMessagePtr &message) const;
    void askHome(const QString &home, history_wire::Request question, QObject *receiver,
                 std::function<void(TopicHistory::Recovery)> answered) const;

    void attach(pubsub::ClusterPubSub *cluster);
    void detach();

private:
    const pubsub::LocalPubSub &m_local;
    std::atomic<pubsub::ClusterPubSub *> m_cluster{ nullptr };
    mutable std::atomic<int> m_publishing{ 0 };
};

} // namespace rt::pubsub
