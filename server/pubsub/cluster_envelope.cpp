#include "server/pubsub/cluster_envelope.h"

#include "server/pubsub/cluster_bytes.h"

namespace rt::pubsub {

namespace {

constexpr quint8 Version = 1;
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
};

// The length-prefixed fields after the header.
struct EnvelopeBody
{
    QByteArray tenant;
    QByteArray subTopic;
    QByteArray event;
    QByteArray metadata;
    QByteArray payload;
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
    if (*version != Version) {
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

// The byte strings up to the end of the frame: nothing may follow the payload.
Result<EnvelopeBody, EnvelopeError> readBody(detail::ByteReader &in)
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
    if (!in.atEnd()) {
        return error(EnvelopeError::Code::TrailingBytes,
                     QStringLiteral("%1 bytes after the envelope payload").arg(in.remaining()));
    }
    return EnvelopeBody{ std::move(*tenant), std::move(*subTopic), std::move(*event),
                         std::move(*metadata), std::move(*payload) };
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

OutboundMessagePtr ClusterEnvelope::toMessage(DeliveryCounting counting) const
{
    // excludedMember 0: no member of this node sent it.
    if (kind == Kind::UserBroadcast) {
        return OutboundMessage::userBroadcast(topic, event, payload, payloadIsJson, metadata, 0,
                                              std::move(counting));
    }
    return OutboundMessage::push(topic, event, payload, audience, 0, std::move(counting));
}

Result<ClusterEnvelope, EnvelopeError> envelopeOf(const OutboundMessage &message)
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
    return envelope;
}

QByteArray encodeEnvelope(const ClusterEnvelope &envelope)
{
    const TopicKey &topic = envelope.topic;
    detail::ByteWriter out(4 + 5 * 4 + topic.tenant().size() + topic.subTopic().size()
                           + envelope.event.size() + envelope.metadata.size()
                           + envelope.payload.size());
    out.u8(Version);
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
    return out.take();
}

Result<QByteArray, EnvelopeError> encodeEnvelope(const OutboundMessage &message)
{
    auto envelope = envelopeOf(message);
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
    auto body = readBody(in);
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
    return envelope;
}

} // namespace rt::pubsub
