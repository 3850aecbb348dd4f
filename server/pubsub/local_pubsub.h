#pragma once

#include "server/pubsub/outbound_message.h"
#include "server/pubsub/pubsub.h"

#include <atomic>
#include <vector>

namespace rt::pubsub {

class Hub;

// Fan-out inside one node: a published message reaches the Hub of every worker. The hub of the
// calling thread (if any) is served synchronously unless the message is numbered (a position:
// it must not overtake the topic's earlier messages already posted to that thread); the others
// get one posted delivery each, never one per subscriber. Hubs are registered at start-up,
// before any traffic, and outlive every publisher (they are destroyed only after the workers
// stopped); after that publish() is safe from any thread. As a PubSub it is a single-node
// cluster: publish() == publishLocal().
class LocalPubSub final : public PubSub
{
public:
    void addHub(Hub *hub);
    void publish(const OutboundMessagePtr &message) const override;
    void publishLocal(const OutboundMessagePtr &message) const override { publish(message); }
    // No other node to tell.
    bool awaitTenantReachable(const QByteArray &, QObject *, std::function<void()>) const override
    {
        return true;
    }
    // After stop() returns, no publish() is posting to any hub and none will: the hubs may be
    // destroyed. It waits for publishers already past the check (a few microseconds at most).
    void stop();
    // Hubs, in registration order (one per worker).
    const std::vector<Hub *> &hubs() const { return m_hubs; }

private:
    std::vector<Hub *> m_hubs;
    std::atomic<bool> m_stopped{ false };
    mutable std::atomic<int> m_publishing{ 0 }; // publish() calls in progress
};

} // namespace rt::pubsub
