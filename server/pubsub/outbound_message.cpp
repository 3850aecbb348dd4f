#include "server/pubsub/outbound_message.h"

#include "server/wire/websocket_frame.h"
#include "shared/protocol/phoenix_codec.h"

#include <QJsonDocument>
#include <QJsonObject>

namespace rt::pubsub {

namespace {
const QByteArray NullRef = QByteArrayLiteral("null");
const QByteArray BroadcastEvent = QByteArrayLiteral("broadcast");
} // namespace

std::shared_ptr<const OutboundMessage>
OutboundMessage::push(TopicKey topic, QByteArray event, QByteArray payloadJson, Audience audience,
                      quint64 excludedMember, DeliveryCounting counting)
{
    std::shared_ptr<OutboundMessage> message(new OutboundMessage);
    message->m_topic = std::move(topic);
    message->m_event = std::move(event);
    message->m_payload = std::move(payloadJson);
    message->m_audience = audience;
    message->m_excludedMember = excludedMember;
    message->m_counting = std::move(counting);
    return charged(std::move(message));
}

std::shared_ptr<const OutboundMessage> OutboundMessage::pushTo(TopicKey topic, QByteArray event,
                                                               QByteArray payloadJson,
                                                               std::vector<quint64> members,
                                                               DeliveryCounting counting)
{
    std::shared_ptr<OutboundMessage> message(new OutboundMessage);
    message->m_topic = std::move(topic);
    message->m_event = std::move(event);
    message->m_payload = std::move(payloadJson);
    message->m_audience = Audience::Members;
    message->m_members = std::move(members);
    message->m_counting = std::move(counting);
    return charged(std::move(message));
}

std::shared_ptr<const OutboundMessage>
OutboundMessage::userBroadcast(TopicKey topic, QByteArray userEvent, QByteArray payload,
                               bool payloadIsJson, QByteArray metadataJson, quint64 excludedMember,
                               DeliveryCounting counting)
{
    std::shared_ptr<OutboundMessage> message(new OutboundMessage);
    message->m_topic = std::move(topic);
    message->m_event = std::move(userEvent);
    message->m_payload = std::move(payload);
    message->m_payloadIsJson = payloadIsJson;
    message->m_metadata = std::move(metadataJson);
    message->m_isUserBroadcast = true;
    message->m_audience = Audience::BroadcastReaders;
    message->m_excludedMember = excludedMember;
    message->m_counting = std::move(counting);
    return charged(std::move(message));
}

OutboundMessage::~OutboundMessage()
{
    if (m_counting.ledger) {
        qint64 bytes = sourceBytes();
        for (const Frame &frame : m_frames) {
            bytes += frame.bytes.size() + frame.wire.size();
        }
        m_counting.ledger->settleMessage(bytes);
    }
}

qint64 OutboundMessage::sourceBytes() const
{
    return m_event.size() + m_payload.size() + m_metadata.size()
            + static_cast<qint64>(m_members.size() * sizeof(quint64));
}

std::shared_ptr<const OutboundMessage>
OutboundMessage::charged(std::shared_ptr<OutboundMessage> message)
{
    if (message->m_counting.ledger) {
        message->m_counting.ledger->chargeMessage(message->sourceBytes());
    }
    return message;
}

QByteArray OutboundMessage::metadataId() const
{
    if (m_metadata.isEmpty()) {
        return {};
    }
    return QJsonDocument::fromJson(m_metadata)
            .object()
            .value(QLatin1String("id"))
            .toString()
            .toUtf8();
}

const OutboundMessage::Frame &OutboundMessage::frameFor(protocol::Vsn vsn) const
{
    const auto index = static_cast<std::size_t>(vsn);
    std::call_once(m_encoded[index], [this, vsn] { encode(vsn); });
    return m_frames[index];
}

void OutboundMessage::encode(protocol::Vsn vsn) const
{
    Frame &frame = m_frames[static_cast<std::size_t>(vsn)];
    encodePhoenix(vsn, frame);
    if (!frame.bytes.isEmpty()) {
        frame.wire = wire::encodeFrame(
                frame.isBinary ? wire::WsOpcode::Binary : wire::WsOpcode::Text, frame.bytes);
    }
    if (m_counting.ledger) {
        m_counting.ledger->chargeMessage(frame.bytes.size() + frame.wire.size());
    }
}

void OutboundMessage::encodePhoenix(protocol::Vsn vsn, Frame &frame) const
{
    const QByteArray channelTopic = m_topic.channelTopic();
    if (!m_isUserBroadcast) {
        frame.bytes = protocol::encodePush(vsn, NullRef, NullRef, channelTopic, m_event, m_payload);
        return;
    }
    if (vsn == protocol::Vsn::V2) {
        // Topic, event and metadata are bounded to 255 bytes when the message is accepted, so
        // encoding cannot fail here; an empty frame (never sent) guards the impossible case.
        frame.bytes = protocol::encodeUserBroadcast(channelTopic, m_event, m_metadata,
                                                    m_payloadIsJson, m_payload)
                              .value_or(QByteArray());
        frame.isBinary = true;
        return;
    }
    if (m_payloadIsJson) {
        // V1 sockets cannot take binary frames: they get the JSON form (spec §2.4).
        frame.bytes = protocol::encodePush(
                vsn, NullRef, NullRef, channelTopic, BroadcastEvent,
                protocol::userBroadcastAsJsonPayload(m_event, m_payload, m_metadata));
    }
    // Raw binary payloads are not delivered to V1 sockets: frame.bytes stays empty.
}

} // namespace rt::pubsub
