#pragma once

#include "server/pubsub/outbound_message.h"

#include <functional>
#include <vector>

class QObject;

namespace rt::pubsub {

// Fan-out of messages to the members of a topic (the port the channel handlers, the HTTP
// broadcast routes, the database broadcasts and presence publish through).
//
// Implementations: LocalPubSub (one node: every worker hub of this process) and ClusterPubSub
// (the same, plus the other nodes that hold clients of the message's tenant, over node links).
//
// Both methods are thread-safe and never block: delivery happens later on each hub's own thread
// (the calling thread's hub may be served synchronously). They are const because publishing
// does not change what the pubsub is (callers hold it by const reference); implementations keep
// their hand-off queues and counters internally synchronised.
class PubSub
{
public:
    virtual ~PubSub() = default;

    // Every node that holds members of the message's tenant, this one included.
    // Audience::Members messages (postgres_changes pushTo) address member ids, which mean
    // something on this node only: they are delivered here and never leave the node.
    virtual void publish(const OutboundMessagePtr &message) const = 0;
    // Several messages of one topic that are one event (a change's messages to the member
    // groups of a channel topic): as publish() of each, in order; a sequencer gives them one
    // position.
    virtual void publishGroup(const std::vector<OutboundMessagePtr> &messages) const
    {
        for (const OutboundMessagePtr &message : messages) {
            publish(message);
        }
    }
    // As publishGroup, but each message (numbered, by a sequencer) goes to `deliver` rather
    // than to this pubsub's fan-out: postgres_changes whose members include other nodes'
    // members, which the stream's owner sends to those nodes itself. By default: unnumbered.
    virtual void
    publishGroupThrough(const std::vector<OutboundMessagePtr> &messages,
                        const std::function<void(const OutboundMessagePtr &)> &deliver) const
    {
        for (const OutboundMessagePtr &message : messages) {
            deliver(message);
        }
    }
    // This node only: a message that arrived from another node, or one every node produces
    // by itself.
    virtual void publishLocal(const OutboundMessagePtr &message) const = 0;

    // Whether every node that publishes the tenant's broadcasts already sends them here (this
    // node holds clients of it and its peers know). True: nothing else happens. False: the
    // tenant is being announced, and `reachable` runs later on `receiver`'s thread once every
    // connected peer confirmed it, or after a bounded wait (a peer that does not answer holds
    // nobody up for long). A join's reply waits for it, so a broadcast sent from any node after
    // the client saw SUBSCRIBED reaches it. Call it after counting the joining user (the
    // tenant then stays announced). Thread-safe, never blocks; `receiver` must outlive the
    // wait (use a long-lived object of the caller's thread and guard the caller's own objects
    // inside `reachable`).
    virtual bool awaitTenantReachable(const QByteArray &tenantId, QObject *receiver,
                                      std::function<void()> reachable) const = 0;

    PubSub(const PubSub &) = delete;
    PubSub &operator=(const PubSub &) = delete;

protected:
    PubSub() = default;
};

} // namespace rt::pubsub
