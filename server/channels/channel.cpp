#include "server/channels/channel.h"

#include "server/channels/client_link.h"
#include "server/metrics/catalog.h"
#include "shared/protocol/phoenix_codec.h"

#include <QJsonDocument>

namespace rt::channels {

namespace {
const QByteArray NullRef = QByteArrayLiteral("null");
} // namespace

Channel::Channel(ClientLink &link, pubsub::TopicKey key, QByteArray topic, QByteArray joinRef,
                 quint64 memberId)
    : m_link(link),
      m_key(std::move(key)),
      m_topic(std::move(topic)),
      m_joinRef(std::move(joinRef)),
      m_memberId(memberId)
{ }

void Channel::push(const QByteArray &event, const QByteArray &payloadJson) const
{
    m_link.sendFrame(
            protocol::encodePush(m_link.vsn(), m_joinRef, NullRef, m_topic, event, payloadJson),
            false);
}

void Channel::reply(const QByteArray &refJson, const QByteArray &status,
                    const QByteArray &responseJson) const
{
    m_link.sendFrame(
            protocol::encodeReply(m_link.vsn(), m_joinRef, refJson, m_topic, status, responseJson),
            false);
}

void Channel::pushSystem(const QString &extension, const QString &status,
                         const QString &message) const
{
    QJsonObject payload;
    payload.insert(QLatin1String("extension"), extension);
    payload.insert(QLatin1String("status"), status);
    payload.insert(QLatin1String("message"), message);
    payload.insert(QLatin1String("channel"), QString::fromUtf8(subTopic()));
    push(QByteArrayLiteral("system"), QJsonDocument(payload).toJson(QJsonDocument::Compact));
}

void Channel::pushClose() const
{
    m_link.sendFrame(protocol::encodePush(m_link.vsn(), m_joinRef, m_joinRef, m_topic,
                                          QByteArrayLiteral("phx_close"), QByteArrayLiteral("{}")),
                     false);
}

bool Channel::isCoveredByJoin(const pubsub::OutboundMessage &message) const
{
    return deliveredUpTo.isSet() && message.position().epoch == deliveredUpTo.epoch
            && message.position().offset <= deliveredUpTo.offset;
}

void Channel::hold(const pubsub::OutboundMessage &message,
                   const pubsub::OutboundMessage::Frame &frame)
{
    if (m_heldOverflowed) {
        return;
    }
    if (std::ssize(m_held) >= MaxHeldMessages || m_heldBytes + frame.wire.size() > MaxHeldBytes) {
        m_held.clear();
        m_heldBytes = 0;
        m_heldOverflowed = true;
        return;
    }
    m_heldBytes += frame.wire.size();
    m_held.push_back(Held{ message.position(), frame.wire, message.counting().ledger });
}

void Channel::releaseHeld()
{
    m_holding = false;
    std::vector<Held> held = std::move(m_held);
    m_held.clear();
    m_heldBytes = 0;
    for (const Held &message : held) {
        if (deliveredUpTo.isSet() && message.position.epoch == deliveredUpTo.epoch
            && message.position.offset <= deliveredUpTo.offset) {
            continue; // the answer had it, or it is older than what the join asked for
        }
        m_link.sendEncodedFrame(message.wire, message.ledger);
    }
}

void Channel::deliver(const pubsub::OutboundMessage &message,
                      const pubsub::OutboundMessage::Frame &frame)
{
    if (awaitingPresenceState && message.audience() == pubsub::Audience::PresenceReaders) {
        return; // contained in the presence_state this channel is about to receive
    }
    if (m_holding) {
        hold(message, frame);
        return;
    }
    if (isCoveredByJoin(message)) {
        return; // sent by the join's recovery, or from before the position it asked for
    }
    if (!replayedIds.isEmpty() && message.isUserBroadcast()
        && replayedIds.contains(message.metadataId())) {
        return; // already delivered by the join's replay (spec §4.7)
    }
    const pubsub::DeliveryCounting &counting = message.counting();
    m_link.sendEncodedFrame(frame.wire, counting.ledger);
    // Upstream delivers the message, then closes a receiving channel while the tenant's events
    // counter is triggered (docs/upstream/tenants-limits-metrics.md §5.4).
    if (counting.shutsDownReceivers && !shutdownRequested && counting.counter
        && counting.counter->isTriggered()) {
        shutdownRequested = true;
        m_link.shutDownChannelLater(m_memberId, QStringLiteral("Too many messages per second"),
                                    metrics::label_values::Events);
    }
}

} // namespace rt::channels

namespace rt::channels {

QObject *Channel::guard()
{
    if (!m_guard) {
        m_guard = std::make_unique<QObject>();
    }
    return m_guard.get();
}

} // namespace rt::channels
