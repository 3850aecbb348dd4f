#include "server/pubsub/sequencing_pubsub.h"

#include <QObject>

namespace rt::pubsub {

SequencingPubSub::SequencingPubSub(const PubSub &inner, TopicHistory &history,
                                   SettingsFor settingsFor)
    : SequencingPubSub(inner, history, std::move(settingsFor), Routing{})
{ }

SequencingPubSub::SequencingPubSub(const PubSub &inner, TopicHistory &history,
                                   SettingsFor settingsFor, Routing routing)
    : m_inner(inner),
      m_history(history),
      m_settingsFor(std::move(settingsFor)),
      m_routing(std::move(routing))
{ }

TenantHomes::Home SequencingPubSub::homeOf(const QByteArray &tenantId) const
{
    if (m_routing.homes == nullptr) {
        return TenantHomes::Home{ TenantHomes::Where::Here, {} };
    }
    return m_routing.homes->homeOf(tenantId);
}

bool SequencingPubSub::awaitHome(const QByteArray &tenantId, QObject *receiver,
                                 std::function<void()> known, int timeoutMs) const
{
    if (m_routing.homes == nullptr || !m_settingsFor(tenantId).enabled()) {
        return true;
    }
    return m_routing.homes->awaitKnown(tenantId, receiver, std::move(known), timeoutMs);
}

void SequencingPubSub::askHome(const QString &home, history_wire::Request question,
                               QObject *receiver,
                               std::function<void(TopicHistory::Recovery)> answered) const
{
    if (m_routing.ask) {
        m_routing.ask(home, std::move(question), receiver, std::move(answered));
        return;
    }
    QMetaObject::invokeMethod(
            receiver,
            [answered = std::move(answered)] {
                TopicHistory::Recovery recovery;
                recovery.failure = TopicHistory::RecoveryFailure::Unavailable;
                answered(std::move(recovery));
            },
            Qt::QueuedConnection);
}

void SequencingPubSub::publish(const OutboundMessagePtr &message) const
{
    publishGroup({ message });
}

HistorySettings SequencingPubSub::numberingHere(const OutboundMessagePtr &first) const
{
    if (!first->isSequenced() || first->position().isSet()) {
        return HistorySettings{ 0, 0 };
    }
    return m_settingsFor(first->topic().tenant());
}

void SequencingPubSub::publishGroup(const std::vector<OutboundMessagePtr> &messages) const
{
    if (messages.empty()) {
        return;
    }
    const OutboundMessagePtr &first = messages.front();
    const HistorySettings settings = numberingHere(first);
    if (!settings.enabled()) {
        publishUnnumbered(messages);
        return;
    }
    const TenantHomes::Home home = homeOf(first->topic().tenant());
    if (home.where == TenantHomes::Where::Here) {
        number(messages, settings, [this](const OutboundMessagePtr &m) { m_inner.publish(m); });
        return;
    }
    // A client's or the HTTP API's broadcast (one message; change groups start at the home).
    if (home.where == TenantHomes::Where::Remote && messages.size() == 1
        && first->audience() != Audience::Members && m_routing.forward
        && m_routing.forward(home.node, first)) {
        return;
    }
    // No home, or none reachable: this node's members still get it (issue 18), unnumbered.
    publishUnnumbered(messages);
}

void SequencingPubSub::publishGroupThrough(
        const std::vector<OutboundMessagePtr> &messages,
        const std::function<void(const OutboundMessagePtr &)> &deliver) const
{
    if (messages.empty()) {
        return;
    }
    const HistorySettings settings = numberingHere(messages.front());
    if (settings.enabled()
        && homeOf(messages.front()->topic().tenant()).where == TenantHomes::Where::Here) {
        number(messages, settings, deliver);
        return;
    }
    for (const OutboundMessagePtr &message : messages) {
        deliver(message);
    }
}

void SequencingPubSub::publishAsHome(const OutboundMessagePtr &message) const
{
    const HistorySettings settings = numberingHere(message);
    if (settings.enabled() && homeOf(message->topic().tenant()).where == TenantHomes::Where::Here) {
        number({ message }, settings, [this](const OutboundMessagePtr &m) { m_inner.publish(m); });
        return;
    }
    m_inner.publish(message);
}

void SequencingPubSub::number(const std::vector<OutboundMessagePtr> &messages,
                              const HistorySettings &settings,
                              const std::function<void(const OutboundMessagePtr &)> &deliver) const
{
    m_history.appendGroup(
            messages.front()->topic(), settings,
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
            deliver);
}

void SequencingPubSub::publishUnnumbered(const std::vector<OutboundMessagePtr> &messages) const
{
    for (const OutboundMessagePtr &message : messages) {
        m_inner.publish(message);
    }
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
