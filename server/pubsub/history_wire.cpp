#include "server/pubsub/history_wire.h"

#include "server/pubsub/cluster_bytes.h"
#include "server/pubsub/cluster_envelope.h"

namespace rt::pubsub::history_wire {

namespace {

constexpr quint8 Version = 1;
constexpr quint8 FlagLast = 0x01;
// What one reply chunk may claim to carry: far above what fits a link frame, so a hostile count
// is refused before anything is reserved for it.
constexpr quint32 MaxEnvelopesPerChunk = 1'000'000;

QString truncated(const char *field)
{
    return QStringLiteral("history frame truncated in %1").arg(QLatin1String(field));
}

std::optional<QString> readVersion(detail::ByteReader &in)
{
    const auto version = in.u8();
    if (!version) {
        return truncated("version");
    }
    if (*version != Version) {
        return QStringLiteral("unsupported history frame version %1").arg(*version);
    }
    return std::nullopt;
}

std::optional<QString> checkEnd(const detail::ByteReader &in)
{
    if (!in.atEnd()) {
        return QStringLiteral("%1 bytes after the history frame").arg(in.remaining());
    }
    return std::nullopt;
}

Result<TopicHistory::RecoveryFailure, QString> failureFromWire(quint8 value)
{
    using Failure = TopicHistory::RecoveryFailure;
    switch (value) {
    case 0:
        return Failure::None;
    case 1:
        return Failure::EpochChanged;
    case 2:
        return Failure::HistoryTooShort;
    case 3:
        return Failure::Unavailable;
    case 4:
        return Failure::Disabled;
    default:
        return QStringLiteral("unknown history failure %1").arg(value);
    }
}

quint8 failureToWire(TopicHistory::RecoveryFailure failure)
{
    using Failure = TopicHistory::RecoveryFailure;
    switch (failure) {
    case Failure::None:
        return 0;
    case Failure::EpochChanged:
        return 1;
    case Failure::HistoryTooShort:
        return 2;
    case Failure::Unavailable:
        return 3;
    case Failure::Disabled:
        return 4;
    }
    return 3;
}

// No offset without an epoch (an epoch without offset is a sequence with nothing numbered).
std::optional<StreamPosition> position(std::optional<quint64> epoch, std::optional<quint64> offset)
{
    if (!epoch || !offset || (*epoch == 0 && *offset != 0)) {
        return std::nullopt;
    }
    return StreamPosition{ *epoch, *offset };
}

} // namespace

QByteArray encodeRequest(const Request &request)
{
    detail::ByteWriter out(64 + request.topic.tenant().size() + request.topic.subTopic().size());
    out.u8(Version);
    out.u64(request.requestId);
    out.u8(static_cast<quint8>(request.mode));
    out.bytes(request.topic.tenant());
    out.u8(request.topic.isPrivate() ? 1 : 0);
    out.bytes(request.topic.subTopic());
    out.u64(request.from.epoch);
    out.u64(request.from.offset);
    out.u64(static_cast<quint64>(request.sinceMs));
    return out.take();
}

Result<Request, QString> decodeRequest(QByteArrayView bytes)
{
    detail::ByteReader in(bytes);
    if (std::optional<QString> bad = readVersion(in)) {
        return *bad;
    }
    const auto id = in.u64();
    const auto mode = in.u8();
    auto tenant = in.bytes();
    const auto isPrivate = in.u8();
    auto subTopic = in.bytes();
    const auto epoch = in.u64();
    const auto offset = in.u64();
    const auto since = in.u64();
    if (!id || !mode || !tenant || !isPrivate || !subTopic || !epoch || !offset || !since) {
        return truncated("request");
    }
    if (*mode > 1 || *isPrivate > 1 || tenant->isEmpty()) {
        return QStringLiteral("bad history request (mode %1, private %2, tenant of %3 bytes)")
                .arg(*mode)
                .arg(*isPrivate)
                .arg(tenant->size());
    }
    const std::optional<StreamPosition> from = position(epoch, offset);
    if (!from) {
        return QStringLiteral("history request position with an offset but no epoch");
    }
    if (std::optional<QString> bad = checkEnd(in)) {
        return *bad;
    }
    Request request;
    request.requestId = *id;
    request.mode = static_cast<Request::Mode>(*mode);
    request.topic = TopicKey(*tenant, *isPrivate == 1, *subTopic);
    request.from = *from;
    request.sinceMs = static_cast<qint64>(*since);
    return request;
}

QByteArray encodeReplyChunk(const ReplyChunk &chunk)
{
    qsizetype size = 32;
    for (const QByteArray &envelope : chunk.envelopes) {
        size += 4 + envelope.size();
    }
    detail::ByteWriter out(size);
    out.u8(Version);
    out.u64(chunk.requestId);
    out.u8(chunk.last ? FlagLast : 0);
    out.u8(failureToWire(chunk.failure));
    out.u64(chunk.top.epoch);
    out.u64(chunk.top.offset);
    out.u32(static_cast<quint32>(chunk.envelopes.size()));
    for (const QByteArray &envelope : chunk.envelopes) {
        out.bytes(envelope);
    }
    return out.take();
}

Result<ReplyChunk, QString> decodeReplyChunk(QByteArrayView bytes)
{
    detail::ByteReader in(bytes);
    if (std::optional<QString> bad = readVersion(in)) {
        return *bad;
    }
    const auto id = in.u64();
    const auto flags = in.u8();
    const auto failure = in.u8();
    const auto epoch = in.u64();
    const auto offset = in.u64();
    const auto count = in.u32();
    if (!id || !flags || !failure || !epoch || !offset || !count) {
        return truncated("reply header");
    }
    if ((*flags & ~FlagLast) != 0 || *count > MaxEnvelopesPerChunk) {
        return QStringLiteral("bad history reply (flags 0x%1, %2 envelopes)")
                .arg(*flags, 2, 16, QLatin1Char('0'))
                .arg(*count);
    }
    auto decodedFailure = failureFromWire(*failure);
    if (!decodedFailure) {
        return std::move(decodedFailure).error();
    }
    const std::optional<StreamPosition> top = position(epoch, offset);
    if (!top) {
        return QStringLiteral("history reply top with an offset but no epoch");
    }
    ReplyChunk chunk;
    chunk.requestId = *id;
    chunk.last = (*flags & FlagLast) != 0;
    chunk.failure = *decodedFailure;
    chunk.top = *top;
    for (quint32 i = 0; i < *count; ++i) {
        auto envelope = in.bytes();
        if (!envelope) {
            return truncated("envelope");
        }
        chunk.envelopes.append(std::move(*envelope));
    }
    if (std::optional<QString> bad = checkEnd(in)) {
        return *bad;
    }
    return chunk;
}

QList<ReplyChunk> replyChunks(quint64 requestId, const TopicHistory::Recovery &recovery,
                              qsizetype maxChunkBytes)
{
    QList<ReplyChunk> chunks;
    ReplyChunk current{ requestId, false, TopicHistory::RecoveryFailure::None, {}, {} };
    qsizetype bytes = 0;
    for (const OutboundMessagePtr &message : recovery.messages) {
        auto envelope = encodeEnvelope(*message);
        if (!envelope.ok()) {
            continue; // kept messages are broadcasts: always forwardable
        }
        if (!current.envelopes.isEmpty() && bytes + envelope->size() > maxChunkBytes) {
            chunks.append(std::move(current));
            current = ReplyChunk{ requestId, false, TopicHistory::RecoveryFailure::None, {}, {} };
            bytes = 0;
        }
        bytes += envelope->size();
        current.envelopes.append(std::move(envelope).value());
    }
    current.last = true;
    current.failure = recovery.failure;
    current.top = recovery.top;
    chunks.append(std::move(current));
    return chunks;
}

} // namespace rt::pubsub::history_wire
