#include "server/pubsub/outbound_message.h"

#include "server/wire/websocket_frame.h"
#include "shared/protocol/json_scan.h"
#include "shared/protocol/phoenix_codec.h"

#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>

namespace rt::pubsub {

namespace {
const QByteArray NullRef = QByteArrayLiteral("null");
const QByteArray BroadcastEvent = QByteArrayLiteral("broadcast");
const QByteArray PostgresChangesEvent = QByteArrayLiteral("postgres_changes");

// "epoch":"<hex>","offset":<n>
QByteArray positionMembers(StreamPosition position)
{
    return R"("epoch":")" + position.epochText() + R"(","offset":)"
            + QByteArray::number(position.offset);
}

// The JSON object text `object` (ending in '}', or empty: a new object) with `members` added
// last.
QByteArray withMembers(const QByteArray &object, const QByteArray &members)
{
    const qsizetype end = object.lastIndexOf('}');
    if (end < 0) {
        return '{' + members + '}';
    }
    const QByteArray head = object.left(end).trimmed();
    return head + (head.endsWith('{') ? "" : ",") + members + object.mid(end);
}

// A JSON object's text without its "epoch" and "offset" members (a sender's own, which the
// position replaces), the other members' bytes as they were.
QByteArray withoutPositionMembers(const QByteArray &object)
{
    QList<protocol::json::Member> members;
    if (!protocol::json::splitObject(object, members)) {
        return object;
    }
    QByteArray kept = "{";
    for (const protocol::json::Member &member : std::as_const(members)) {
        QByteArray key;
        protocol::json::decodeString(QByteArrayView(object.constData() + member.key.begin,
                                                    member.key.end - member.key.begin),
                                     key);
        if (key == "epoch" || key == "offset") {
            continue;
        }
        kept += (kept.size() > 1 ? "," : "")
                + object.mid(member.key.begin, member.value.end - member.key.begin);
    }
    return kept + '}';
}

// A push payload (a JSON object) whose "meta" object carries the position. Byte-preserving: a
// payload without a top-level "meta" gets one appended; an existing object gains the members;
// a "meta" that is not an object is replaced.
QByteArray payloadWithMeta(const QByteArray &payload, StreamPosition position)
{
    const QByteArray members = positionMembers(position);
    const QByteArray meta = "{" + members + '}';
    // Only a payload that mentions the key (literally or escaped) can have one.
    if (!payload.contains("\"meta\"") && !payload.contains("\\u")) {
        return withMembers(payload, "\"meta\":" + meta);
    }
    QList<protocol::json::Member> top;
    if (!protocol::json::splitObject(payload, top)) {
        return payload; // not an object (never accepted): left as it is
    }
    // The last "meta" is the one JSON decoders keep.
    for (auto it = top.crbegin(); it != top.crend(); ++it) { // NOLINT(modernize-loop-convert)
        QByteArray key;
        const QByteArrayView literal(payload.constData() + it->key.begin,
                                     it->key.end - it->key.begin);
        if (!protocol::json::decodeString(literal, key) || key != "meta") {
            continue;
        }
        const protocol::json::Span &value = it->value;
        const QByteArray replaced = value.kind == protocol::json::Kind::Object
                ? withMembers(
                        withoutPositionMembers(payload.mid(value.begin, value.end - value.begin)),
                        members)
                : meta;
        return payload.left(value.begin) + replaced + payload.mid(value.end);
    }
    return withMembers(payload, "\"meta\":" + meta);
}

} // namespace

QByteArray StreamPosition::epochText() const
{
    return QByteArray::number(epoch, 16).rightJustified(16, '0');
}

std::optional<quint64> StreamPosition::parseEpoch(const QString &text)
{
    const auto isHexDigit = [](QChar c) {
        return (c >= u'0' && c <= u'9') || (c >= u'a' && c <= u'f') || (c >= u'A' && c <= u'F');
    };
    if (text.size() != 16 || !std::all_of(text.begin(), text.end(), isHexDigit)) {
        return std::nullopt;
    }
    bool ok = false;
    const quint64 value = text.toULongLong(&ok, 16);
    if (!ok || value == 0) {
        return std::nullopt;
    }
    return value;
}

std::shared_ptr<const OutboundMessage> OutboundMessage::withPosition(const OutboundMessage &source,
                                                                     StreamPosition position)
{
    std::shared_ptr<OutboundMessage> message = copyOf(source);
    message->m_position = position;
    if (message->m_isUserBroadcast) {
        message->m_metadata = withMembers(message->m_metadata, positionMembers(position));
    } else {
        message->m_payload = payloadWithMeta(message->m_payload, position);
    }
    return charged(std::move(message));
}

std::shared_ptr<const OutboundMessage>
OutboundMessage::arrived(const OutboundMessage &source, StreamPosition position,
                         const QString &selfNodeId, const QString &senderNode, quint64 senderMember,
                         quint64 forwardId)
{
    std::shared_ptr<OutboundMessage> message = copyOf(source);
    message->m_position = position;
    const bool sentHere = !senderNode.isEmpty() && senderNode == selfNodeId;
    message->m_excludedMember = sentHere ? senderMember : 0;
    message->m_remoteSenderNode = sentHere ? QString() : senderNode;
    message->m_remoteSenderMember = sentHere ? 0 : senderMember;
    message->m_forwardId = forwardId;
    return charged(std::move(message));
}

std::shared_ptr<const OutboundMessage>
OutboundMessage::unregulated(const std::shared_ptr<const OutboundMessage> &message)
{
    if (!message->m_counting.ledger) {
        return message;
    }
    std::shared_ptr<OutboundMessage> copy = copyOf(*message);
    copy->m_counting.ledger = nullptr;
    return copy;
}

std::shared_ptr<OutboundMessage> OutboundMessage::copyOf(const OutboundMessage &source)
{
    std::shared_ptr<OutboundMessage> message(new OutboundMessage);
    message->m_topic = source.m_topic;
    message->m_position = source.m_position;
    message->m_event = source.m_event;
    message->m_payload = source.m_payload;
    message->m_metadata = source.m_metadata;
    message->m_excludedMember = source.m_excludedMember;
    message->m_remoteSenderNode = source.m_remoteSenderNode;
    message->m_remoteSenderMember = source.m_remoteSenderMember;
    message->m_forwardId = source.m_forwardId;
    message->m_members = source.m_members;
    message->m_counting = source.m_counting;
    message->m_createdAt = source.m_createdAt;
    message->m_audience = source.m_audience;
    message->m_isUserBroadcast = source.m_isUserBroadcast;
    message->m_payloadIsJson = source.m_payloadIsJson;
    return message;
}

bool OutboundMessage::isSequenced() const
{
    return m_isUserBroadcast || m_event == BroadcastEvent || m_event == PostgresChangesEvent;
}

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
