#pragma once

#include "server/pubsub/pubsub.h"
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
// Thread-safe like the PubSub it wraps; `settingsFor` is called on the publishing thread and
// must be thread-safe too. `inner` and `history` must outlive it.
class SequencingPubSub final : public PubSub
{
public:
    using SettingsFor = std::function<HistorySettings(const QByteArray &tenantId)>;

    SequencingPubSub(const PubSub &inner, TopicHistory &history, SettingsFor settingsFor);

    void publish(const OutboundMessagePtr &message) const override;
    // One position for all of them (they must share one topic): the member groups of one change.
    void publishGroup(const std::vector<OutboundMessagePtr> &messages) const override;
    void publishLocal(const OutboundMessagePtr &message) const override;
    bool awaitTenantReachable(const QByteArray &tenantId, QObject *receiver,
                              std::function<void()> reachable) const override;

    TopicHistory &history() const { return m_history; }
    // The tenant's settings as this node applies them (history off while it is not the home).
    HistorySettings settingsFor(const QByteArray &tenantId) const
    {
        return m_settingsFor(tenantId);
    }

private:
    const PubSub &m_inner;
    TopicHistory &m_history;
    SettingsFor m_settingsFor;
};

} // namespace rt::pubsub
