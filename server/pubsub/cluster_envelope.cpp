#include "server/pubsub/cluster_envelope.h"

#include "server/pubsub/cluster_bytes.h"

namespace rt::pubsub {

namespace {

constexpr quint8 PlainVersion = 1; // no position, no sender
constexpr quint8 NumberedVersion = 2;
constexpr quint8 FlagPrivate = 0x01;
constexpr quint8 FlagPayloadIsJson = 0x02;
constexpr quint8 FlagCountsAsBroadcast = 0x04;
constexpr quint8 KnownFlags = FlagPrivate | FlagPayloadIsJson | FlagCountsAsBroadcast;

// Wire values are spelled out rather than cast from the enum, so reordering Audience can
// never change what goes over the wire between nodes of different builds.
constexpr quint8 AudienceBroadcastReaders = 0;
constexpr quint8 AudiencePresenceReaders = 1;
constexpr quint8 AudienceEveryone = 2;

EnvelopeError error(EnvelopeError::Code code, const QString &message)
{
    return EnvelopeError{ code, message };
}

EnvelopeError truncated(const char *field)
{
    return error(EnvelopeError::Code::Truncated,
                 QStringLiteral("envelope truncated in %1").arg(QLatin1String(field)));
}

// The fixed-size fields before the byte strings.
struct EnvelopeHeader
{
    ClusterEnvelope::Kind kind = ClusterEnvelope::Kind::Push;
    Audience audience = Audience::BroadcastReaders;
    quint8 flags = 0;
    quint8 version = PlainVersion;
};

// The length-prefixed fields after the header.
struct EnvelopeBody
{
    QByteArray tenant;
    QByteArray subTopic;
    QByteArray event;
    QByteArray metadata;
    QByteArray payload;
    StreamPosition position;
    QString senderNode;
    quint64 senderMember = 0;
    quint64 forwardId = 0;
};

Result<ClusterEnvelope::Kind, EnvelopeError> kindFromWire(quint8 kind)
{
    switch (kind) {
    case 0:
        return ClusterEnvelope::Kind::Push;
    case 1:
        return ClusterEnvelope::Kind::UserBroadcast;
    default:
        return error(EnvelopeError::Code::BadKind,
                     QStringLiteral("unknown envelope kind %1").arg(kind));
    }
}

Result<Audience, EnvelopeError> audienceFromWire(quint8 audience)
{
    switch (audience) {
    case AudienceBroadcastReaders:
        return Audience::BroadcastReaders;
    case AudiencePresenceReaders:
        return Audience::PresenceReaders;
    case AudienceEveryone:
        return Audience::Everyone;
    default:
        return error(EnvelopeError::Code::BadAudience,
                     QStringLiteral("unknown envelope audience %1").arg(audience));
    }
}

Result<EnvelopeHeader, EnvelopeError> readHeader(detail::ByteReader &in)
{
    const auto version = in.u8();
    if (!version) {
        return truncated("version");
    }
    if (*version != PlainVersion && *version != NumberedVersion) {
        return error(EnvelopeError::Code::UnsupportedVersion,
                     QStringLiteral("unsupported envelope version %1").arg(*version));
    }
    const auto kind = in.u8();
    const auto flags = in.u8();
    const auto audience = in.u8();
    if (!kind || !flags || !audience) {
        return truncated("header");
    }
    EnvelopeHeader header;
    header.version = *version;
    auto decodedKind = kindFromWire(*kind);
    if (!decodedKind) {
        return std::move(decodedKind).error();
    }
    header.kind = *decodedKind;
    if ((*flags & ~KnownFlags) != 0) {
        return error(
                EnvelopeError::Code::BadFlags,
                QStringLiteral("unknown envelope flags 0x%1").arg(*flags, 2, 16, QLatin1Char('0')));
    }
    header.flags = *flags;
    auto decodedAudience = audienceFromWire(*audience);
    if (!decodedAudience) {
        return std::move(decodedAudience).error();
    }
    header.audience = *decodedAudience;
    return header;
}

// Version 2's fields after the payload.
std::optional<EnvelopeError> readTrailer(detail::ByteReader &in, EnvelopeBody &body)
{
    const auto epoch = in.u64();
    const auto offset = in.u64();
    const auto previous = in.u64();
    if (!epoch || !offset || !previous) {
        return truncated("position");
    }
    if ((*epoch == 0) != (*offset == 0)) {
        return error(EnvelopeError::Code::Inconsistent,
                     QStringLiteral("envelope position with only one of epoch and offset"));
    }
    if (*previous >= *offset && *previous != 0) {
        return error(EnvelopeError::Code::Inconsistent,
                     QStringLiteral("envelope position's previous offset is not before it"));
    }
    auto sender = in.bytes();
    const auto member = sender ? in.u64() : std::nullopt;
    const auto forwardId = member ? in.u64() : std::nullopt;
    if (!sender || !member || !forwardId) {
        return truncated("sender");
    }
    // Canonical: version 2 only when version 1 cannot say it, a member only with its node.
    if (*epoch == 0 && sender->isEmpty()) {
        return error(EnvelopeError::Code::Inconsistent,
                     QStringLiteral("version 2 envelope without position or sender"));
    }
    if (sender->isEmpty() && (*member != 0 || *forwardId != 0)) {
        return error(EnvelopeError::Code::Inconsistent,
                     QStringLiteral("envelope sender member or forward without its node"));
    }
    body.senderNode = QString::fromUtf8(*sender);
    if (body.senderNode.toUtf8() != *sender) {
        return error(EnvelopeError::Code::Inconsistent,
                     QStringLiteral("envelope sender node is not UTF-8"));
    }
    body.position = StreamPosition{ *epoch, *offset, *previous };
    body.senderMember = *member;
    body.forwardId = *forwardId;
    return std::nullopt;
}

// The fields up to the end of the frame: nothing may follow the last one.
Result<EnvelopeBody, EnvelopeError> readBody(detail::ByteReader &in, quint8 version)
{
    auto tenant = in.bytes();
    if (!tenant) {
        return truncated("tenant");
    }
    auto subTopic = in.bytes();
    if (!subTopic) {
        return truncated("sub-topic");
    }
    auto event = in.bytes();
    if (!event) {
        return truncated("event");
    }
    auto metadata = in.bytes();
    if (!metadata) {
        return truncated("metadata");
    }
    auto payload = in.bytes();
    if (!payload) {
        return truncated("payload");
    }
    EnvelopeBody body;
    body.tenant = std::move(*tenant);
    body.subTopic = std::move(*subTopic);
    body.event = std::move(*event);
    body.metadata = std::move(*metadata);
    body.payload = std::move(*payload);
    if (version == NumberedVersion) {
        if (std::optional<EnvelopeError> bad = readTrailer(in, body)) {
            return *std::move(bad);
        }
    }
    if (!in.atEnd()) {
        return error(
                EnvelopeError::Code::TrailingBytes,
                QStringLiteral("%1 bytes after the envelope's last field").arg(in.remaining()));
    }
    return body;
}

// Why `body` cannot go with the header fields already in `envelope`; nullopt if it can.
std::optional<EnvelopeError> checkConsistency(const ClusterEnvelope &envelope,
                                              const EnvelopeBody &body)
{
    if (body.tenant.isEmpty()) {
        return error(EnvelopeError::Code::EmptyTenant, QStringLiteral("envelope without tenant"));
    }
    // The factories cannot make these combinations: a peer that sends them is confused, and
    // what it meant cannot be guessed.
    if (envelope.kind == ClusterEnvelope::Kind::UserBroadcast
        && envelope.audience != Audience::BroadcastReaders) {
        return error(EnvelopeError::Code::Inconsistent,
                     QStringLiteral("user broadcast for an audience other than broadcast readers"));
    }
    if (envelope.kind == ClusterEnvelope::Kind::Push
        && (!envelope.payloadIsJson || !body.metadata.isEmpty())) {
        return error(EnvelopeError::Code::Inconsistent,
                     QStringLiteral("push with a raw payload or metadata"));
    }
    return std::nullopt;
}

} // namespace

OutboundMessagePtr ClusterEnvelope::toMessage(DeliveryCounting counting,
                                              const QString &selfNodeId) const
{
    // excludedMember 0: no member of this node sent it (arrived() says otherwise if one did).
    OutboundMessagePtr message = kind == Kind::UserBroadcast
            ? OutboundMessage::userBroadcast(topic, event, payload, payloadIsJson, metadata, 0,
                                             std::move(counting))
            : OutboundMessage::push(topic, event, payload, audience, 0, std::move(counting));
    if (!position.isSet() && senderNode.isEmpty()) {
        return message;
    }
    return OutboundMessage::arrived(*message, position, selfNodeId, senderNode, senderMember,
                                    forwardId);
}

Result<ClusterEnvelope, EnvelopeError> envelopeOf(const OutboundMessage &message,
                                                  const QString &selfNodeId)
{
    if (message.audience() == Audience::Members) {
        return error(EnvelopeError::Code::NotForwardable,
                     QStringLiteral("messages for listed members stay on their node"));
    }
    ClusterEnvelope envelope;
    envelope.kind = message.isUserBroadcast() ? ClusterEnvelope::Kind::UserBroadcast
                                              : ClusterEnvelope::Kind::Push;
    envelope.topic = message.topic();
    envelope.event = message.event();
    envelope.payload = message.payload();
    envelope.metadata = message.metadata();
    envelope.audience = message.audience();
    envelope.payloadIsJson = message.payloadIsJson();
    envelope.countsAsBroadcast = message.counting().shutsDownReceivers;
    envelope.position = message.position();
    if (!message.remoteSenderNode().isEmpty()) {
        envelope.senderNode = message.remoteSenderNode();
        envelope.senderMember = message.remoteSenderMember();
    } else if (message.excludedMember() != 0 && !selfNodeId.isEmpty()) {
        envelope.senderNode = selfNodeId;
        envelope.senderMember = message.excludedMember();
    }
    if (!envelope.senderNode.isEmpty()) {
        envelope.forwardId = message.forwardId();
    }
    return envelope;
}

QByteArray encodeEnvelope(const ClusterEnvelope &envelope)
{
    const TopicKey &topic = envelope.topic;
    const QByteArray sender = envelope.senderNode.toUtf8();
    const bool numbered = envelope.position.isSet() || !sender.isEmpty();
    detail::ByteWriter out(4 + 5 * 4 + topic.tenant().size() + topic.subTopic().size()
                           + envelope.event.size() + envelope.metadata.size()
                           + envelope.payload.size() + (numbered ? 44 + sender.size() : 0));
    out.u8(numbered ? NumberedVersion : PlainVersion);
    out.u8(static_cast<quint8>(envelope.kind));
    quint8 flags = 0;
    if (topic.isPrivate()) {
        flags |= FlagPrivate;
    }
    if (envelope.payloadIsJson) {
        flags |= FlagPayloadIsJson;
    }
    if (envelope.countsAsBroadcast) {
        flags |= FlagCountsAsBroadcast;
    }
    out.u8(flags);
    quint8 audience = AudienceBroadcastReaders;
    switch (envelope.audience) {
    case Audience::BroadcastReaders:
    case Audience::Members: // never encoded: envelopeOf refuses it
        audience = AudienceBroadcastReaders;
        break;
    case Audience::PresenceReaders:
        audience = AudiencePresenceReaders;
        break;
    case Audience::Everyone:
        audience = AudienceEveryone;
        break;
    }
    out.u8(audience);
    out.bytes(topic.tenant());
    out.bytes(topic.subTopic());
    out.bytes(envelope.event);
    out.bytes(envelope.metadata);
    out.bytes(envelope.payload);
    if (numbered) {
        out.u64(envelope.position.epoch);
        out.u64(envelope.position.offset);
        out.u64(envelope.position.previous);
        out.bytes(sender);
        out.u64(envelope.senderMember);
        out.u64(envelope.forwardId);
    }
    return out.take();
}

Result<QByteArray, EnvelopeError> encodeEnvelope(const OutboundMessage &message,
                                                 const QString &selfNodeId)
{
    auto envelope = envelopeOf(message, selfNodeId);
    if (!envelope.ok()) {
        return std::move(envelope).error();
    }
    return encodeEnvelope(*envelope);
}

Result<ClusterEnvelope, EnvelopeError> decodeEnvelope(QByteArrayView bytes)
{
    detail::ByteReader in(bytes);
    auto header = readHeader(in);
    if (!header) {
        return std::move(header).error();
    }
    auto body = readBody(in, header->version);
    if (!body) {
        return std::move(body).error();
    }
    ClusterEnvelope envelope;
    envelope.kind = header->kind;
    envelope.audience = header->audience;
    envelope.payloadIsJson = (header->flags & FlagPayloadIsJson) != 0;
    envelope.countsAsBroadcast = (header->flags & FlagCountsAsBroadcast) != 0;
    if (std::optional<EnvelopeError> bad = checkConsistency(envelope, *body)) {
        return *std::move(bad);
    }
    envelope.topic = TopicKey(body->tenant, (header->flags & FlagPrivate) != 0, body->subTopic);
    envelope.event = std::move(body->event);
    envelope.metadata = std::move(body->metadata);
    envelope.payload = std::move(body->payload);
    envelope.position = body->position;
    envelope.senderNode = std::move(body->senderNode);
    envelope.senderMember = body->senderMember;
    envelope.forwardId = body->forwardId;
    return envelope;
}

} // namespace rt::pubsub
