#include "server/pubsub/sequencing_pubsub.h"

namespace rt::pubsub {

SequencingPubSub::SequencingPubSub(const PubSub &inner, TopicHistory &history,
                                   SettingsFor settingsFor)
    : m_inner(inner),
      m_history(history),
      m_settingsFor(std::move(settingsFor))
{ }

void SequencingPubSub::publish(const OutboundMessagePtr &message) const
{
    publishGroup({ message });
}

void SequencingPubSub::publishGroup(const std::vector<OutboundMessagePtr> &messages) const
{
    if (messages.empty()) {
        return;
    }
    const OutboundMessagePtr &first = messages.front();
    const HistorySettings settings = first->isSequenced() && !first->position().isSet()
            ? m_settingsFor(first->topic().tenant())
            : HistorySettings{ 0, 0 };
    if (!settings.enabled()) {
        for (const OutboundMessagePtr &message : messages) {
            m_inner.publish(message);
        }
        return;
    }
    m_history.appendGroup(
            first->topic(), settings,
            [&messages](StreamPosition position) {
                std::vector<TopicHistory::Numbered> numbered;
                numbered.reserve(messages.size());
                for (const OutboundMessagePtr &message : messages) {
                    OutboundMessagePtr published =
                            OutboundMessage::withPosition(*message, position);
                    // postgres_changes address the members of their time: a channel that joins
                    // later is never one of them, so only their offset is kept.
                    OutboundMessagePtr kept = published->audience() == Audience::Members
                            ? nullptr
                            : OutboundMessage::unregulated(published);
                    numbered.push_back({ std::move(published), std::move(kept) });
                }
                return numbered;
            },
            [this](const OutboundMessagePtr &message) { m_inner.publish(message); });
}

void SequencingPubSub::publishLocal(const OutboundMessagePtr &message) const
{
    m_inner.publishLocal(message);
}

bool SequencingPubSub::awaitTenantReachable(const QByteArray &tenantId, QObject *receiver,
                                            std::function<void()> reachable) const
{
    return m_inner.awaitTenantReachable(tenantId, receiver, std::move(reachable));
}

} // namespace rt::pubsub
