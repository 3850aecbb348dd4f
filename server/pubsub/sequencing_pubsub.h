#pragma once

#include "server/pubsub/history_wire.h"
#include "server/pubsub/pubsub.h"
#include "server/pubsub/tenant_homes.h"
#include "server/pubsub/topic_history.h"

#include <functional>

namespace rt::pubsub {

// The sequencer of the topics homed on this node (docs/design-notes.md, "Positions, history and
// recovery"): every broadcast and postgres_changes message published through it is numbered in
// its topic's sequence, kept in the topic's history and then handed to the wrapped pubsub, under
// the topic's lock, so that every hub sees a topic's messages in offset order. Messages of a
// tenant whose settings keep no history, presence diffs and system pushes pass through as they
// are. Messages from other nodes (publishLocal) are never renumbered.
//
// In a cluster (`routing.homes` set) only the tenant's home numbers: a broadcast published on
// another node is sent to the home (routing.forward) and reaches this node's members when the
// home publishes it, numbered; while no home is known or its link is down it is delivered
// unnumbered, as without history.
//
// Thread-safe like the PubSub it wraps; `settingsFor` and the routing functions are called on
// the publishing thread and must be thread-safe too. `inner`, `history` and `routing.homes`
// must outlive it.
class SequencingPubSub final : public PubSub
{
public:
    using SettingsFor = std::function<HistorySettings(const QByteArray &tenantId)>;
    struct Routing
    {
        const TenantHomes *homes = nullptr; // nullptr: one node, always the home
        // Hands a message to `home` to be numbered there; false: it was not sent.
        std::function<bool(const QString &home, const OutboundMessagePtr &message)> forward;
        // Asks `home` a history question; the answer runs on `receiver`'s thread.
        std::function<void(const QString &home, history_wire::Request question, QObject *receiver,
                           std::function<void(TopicHistory::Recovery)>)>
                ask;
    };

    SequencingPubSub(const PubSub &inner, TopicHistory &history, SettingsFor settingsFor);
    SequencingPubSub(const PubSub &inner, TopicHistory &history, SettingsFor settingsFor,
                     Routing routing);

    void publish(const OutboundMessagePtr &message) const override;
    // One position for all of them (they must share one topic): the member groups of one change.
    void publishGroup(const std::vector<OutboundMessagePtr> &messages) const override;
    // Like publishGroup, but each numbered message goes to `deliver` instead of the wrapped
    // pubsub (still under the topic's lock): postgres_changes whose member groups include other
    // nodes' members, which the change stream's owner sends to those nodes itself.
    void publishGroupThrough(
            const std::vector<OutboundMessagePtr> &messages,
            const std::function<void(const OutboundMessagePtr &)> &deliver) const override;
    // A broadcast another node sent here to be numbered: numbered if this node is its tenant's
    // home, else published unnumbered (never sent on: one hop at most).
    void publishAsHome(const OutboundMessagePtr &message) const;
    void publishLocal(const OutboundMessagePtr &message) const override;
    bool awaitTenantReachable(const QByteArray &tenantId, QObject *receiver,
                              std::function<void()> reachable) const override;

    TopicHistory &history() const { return m_history; }
    // The tenant's history settings (off: no positions, no history).
    HistorySettings settingsFor(const QByteArray &tenantId) const
    {
        return m_settingsFor(tenantId);
    }
    // Where the tenant's topics are numbered (always here on one node).
    TenantHomes::Home homeOf(const QByteArray &tenantId) const;
    // Any thread: whether the tenant's topics can be numbered now (one node; a tenant without
    // history; its home is known). If not, `known` runs on `receiver`'s thread once the home is
    // known or after `timeoutMs`. A join waits for it, so the first messages its client gets
    // are numbered.
    bool awaitHome(const QByteArray &tenantId, QObject *receiver, std::function<void()> known,
                   int timeoutMs) const;
    // Any thread: asks the home (not this node) a history question; `answered` runs on
    // `receiver`'s thread (Unavailable without a way to ask). `receiver` must outlive it.
    void askHome(const QString &home, history_wire::Request question, QObject *receiver,
                 std::function<void(TopicHistory::Recovery)> answered) const;

private:
    // The settings under which this node numbers the group here, or off.
    HistorySettings numberingHere(const OutboundMessagePtr &first) const;
    void number(const std::vector<OutboundMessagePtr> &messages, const HistorySettings &settings,
                const std::function<void(const OutboundMessagePtr &)> &deliver) const;
    void publishUnnumbered(const std::vector<OutboundMessagePtr> &messages) const;

    const PubSub &m_inner;
    TopicHistory &m_history;
    SettingsFor m_settingsFor;
    Routing m_routing;
};

} // namespace rt::pubsub
