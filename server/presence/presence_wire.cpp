#include "server/presence/presence_wire.h"

#include "shared/core/big_endian.h"

#include <QJsonDocument>

namespace rt::presence::wire {

namespace {

constexpr quint8 FlagPrivate = 0x01;

void putTopic(QByteArray &out, const pubsub::TopicKey &topic)
{
    appendLengthPrefixed(out, topic.tenant());
    appendBigEndian<quint8>(out, topic.isPrivate() ? FlagPrivate : 0);
    appendLengthPrefixed(out, topic.subTopic());
}

void putRecordBody(QByteArray &out, const PresenceRecord &record)
{
    appendLengthPrefixed(out, record.key);
    appendLengthPrefixed(out, QJsonDocument(record.meta).toJson(QJsonDocument::Compact));
    appendLengthPrefixed(out, record.ref);
}

void putRecord(QByteArray &out, const PresenceRecord &record)
{
    putTopic(out, record.topic);
    appendBigEndian<quint64>(out, record.memberId);
    putRecordBody(out, record);
}

// The fixed part of a SyncChunk before its records, and the smallest encoded record: bounds
// for the record count a peer announces.
constexpr qsizetype SyncHeaderBytes = 1 + 8 + 8 + 4 + 1 + 4;
constexpr qsizetype MinRecordBytes = 4 + 1 + 4 + 8 + 4 + 4 + 4;

Result<pubsub::TopicKey> readTopic(BigEndianReader &in)
{
    const QByteArray tenant = in.lengthPrefixed();
    const quint8 flags = in.u8();
    const QByteArray subTopic = in.lengthPrefixed();
    if (in.failed()) {
        return Error{ QStringLiteral("truncated topic") };
    }
    if ((flags & ~FlagPrivate) != 0) {
        return Error{ QStringLiteral("unknown topic flags") };
    }
    return pubsub::TopicKey(tenant, (flags & FlagPrivate) != 0, subTopic);
}

Result<QJsonObject> readMeta(BigEndianReader &in)
{
    const QByteArray json = in.lengthPrefixed();
    if (in.failed()) {
        return Error{ QStringLiteral("truncated meta") };
    }
    QJsonParseError error{};
    const QJsonDocument document = QJsonDocument::fromJson(json, &error);
    if (error.error != QJsonParseError::NoError || !document.isObject()) {
        return Error{ QStringLiteral("meta is not a JSON object") };
    }
    return document.object();
}

// key, meta, ref (after topic and member id).
Result<PresenceRecord> readRecordBody(BigEndianReader &in, PresenceRecord record)
{
    record.key = in.lengthPrefixed();
    auto meta = readMeta(in);
    if (!meta) {
        return meta.error();
    }
    record.meta = std::move(meta).value();
    record.ref = in.lengthPrefixed();
    if (in.failed()) {
        return Error{ QStringLiteral("truncated record") };
    }
    return record;
}

Result<PresenceRecord> readRecord(BigEndianReader &in)
{
    auto topic = readTopic(in);
    if (!topic) {
        return topic.error();
    }
    PresenceRecord record;
    record.topic = std::move(topic).value();
    record.memberId = in.u64();
    return readRecordBody(in, std::move(record));
}

Result<Message> finish(BigEndianReader &in, Message message)
{
    if (in.failed()) {
        return Error{ QStringLiteral("truncated payload") };
    }
    if (!in.atEnd()) {
        return Error{ QStringLiteral("trailing bytes") };
    }
    return message;
}

Result<Message> decodeDelta(BigEndianReader &in)
{
    Delta delta;
    delta.incarnation = in.u64();
    delta.sequence = in.u64();
    const quint8 op = in.u8();
    auto topic = readTopic(in);
    if (!topic) {
        return topic.error();
    }
    PresenceRecord record;
    record.topic = std::move(topic).value();
    record.memberId = in.u64();
    if (op == static_cast<quint8>(PresenceChange::Op::Track)) {
        auto full = readRecordBody(in, std::move(record));
        if (!full) {
            return full.error();
        }
        delta.change = PresenceChange{ PresenceChange::Op::Track, std::move(full).value() };
    } else if (op == static_cast<quint8>(PresenceChange::Op::Untrack)) {
        delta.change = PresenceChange{ PresenceChange::Op::Untrack, std::move(record) };
    } else {
        return Error{ QStringLiteral("unknown delta op %1").arg(op) };
    }
    return finish(in, std::move(delta));
}

Result<Message> decodeSyncChunk(BigEndianReader &in)
{
    SyncChunk chunk;
    chunk.incarnation = in.u64();
    chunk.sequence = in.u64();
    chunk.index = in.u32();
    const quint8 last = in.u8();
    const quint32 count = in.u32();
    if (in.failed()) {
        return Error{ QStringLiteral("truncated sync header") };
    }
    if (last > 1) {
        return Error{ QStringLiteral("bad last flag") };
    }
    chunk.last = last == 1;
    // A count the remaining bytes cannot hold is refused before reserving anything.
    if (count > static_cast<quint64>(in.remaining() / MinRecordBytes)) {
        return Error{ QStringLiteral("record count exceeds payload") };
    }
    chunk.records.reserve(count);
    for (quint32 i = 0; i < count; ++i) {
        auto record = readRecord(in);
        if (!record) {
            return record.error();
        }
        chunk.records.append(std::move(record).value());
    }
    return finish(in, std::move(chunk));
}

} // namespace

QByteArray encode(const Delta &delta)
{
    QByteArray out;
    appendBigEndian<quint8>(out, Version);
    appendBigEndian<quint64>(out, delta.incarnation);
    appendBigEndian<quint64>(out, delta.sequence);
    const PresenceRecord &record = delta.change.record;
    appendBigEndian<quint8>(out, static_cast<quint8>(delta.change.op));
    putTopic(out, record.topic);
    appendBigEndian<quint64>(out, record.memberId);
    if (delta.change.op == PresenceChange::Op::Track) {
        putRecordBody(out, record);
    }
    return out;
}

QByteArray encode(const SyncChunk &chunk)
{
    QByteArray out;
    appendBigEndian<quint8>(out, Version);
    appendBigEndian<quint64>(out, chunk.incarnation);
    appendBigEndian<quint64>(out, chunk.sequence);
    appendBigEndian<quint32>(out, chunk.index);
    appendBigEndian<quint8>(out, chunk.last ? 1 : 0);
    appendBigEndian<quint32>(out, static_cast<quint32>(chunk.records.size()));
    for (const PresenceRecord &record : chunk.records) {
        putRecord(out, record);
    }
    return out;
}

QByteArray encode(const Marker &marker)
{
    QByteArray out;
    appendBigEndian<quint8>(out, Version);
    appendBigEndian<quint64>(out, marker.incarnation);
    appendBigEndian<quint64>(out, marker.sequence);
    return out;
}

QByteArray encode(const ResyncRequest &)
{
    QByteArray out;
    appendBigEndian<quint8>(out, Version);
    return out;
}

quint8 kindOf(const Message &message)
{
    struct Visitor
    {
        quint8 operator()(const Delta &) const { return KindDelta; }
        quint8 operator()(const SyncChunk &) const { return KindSyncChunk; }
        quint8 operator()(const Marker &) const { return KindMarker; }
        quint8 operator()(const ResyncRequest &) const { return KindResyncRequest; }
    };
    return std::visit(Visitor{}, message);
}

QList<QByteArray> encodeSync(quint64 incarnation, quint64 sequence,
                             const QList<PresenceRecord> &records, qsizetype maxChunkBytes)
{
    // Records are encoded once and packed; the chunk header is written in front at the end.
    QList<QByteArray> chunks;
    QByteArray body;
    quint32 count = 0;
    const auto flush = [&](bool last) {
        QByteArray out;
        out.reserve(SyncHeaderBytes + body.size());
        appendBigEndian<quint8>(out, Version);
        appendBigEndian<quint64>(out, incarnation);
        appendBigEndian<quint64>(out, sequence);
        appendBigEndian<quint32>(out, static_cast<quint32>(chunks.size()));
        appendBigEndian<quint8>(out, last ? 1 : 0);
        appendBigEndian<quint32>(out, count);
        out.append(body);
        chunks.append(out);
        body.clear();
        count = 0;
    };
    for (const PresenceRecord &record : records) {
        QByteArray encoded;
        putRecord(encoded, record);
        if (count > 0 && SyncHeaderBytes + body.size() + encoded.size() > maxChunkBytes) {
            flush(false);
        }
        body.append(encoded);
        ++count;
    }
    flush(true);
    return chunks;
}

Result<Message> decode(quint8 kind, QByteArrayView payload)
{
    BigEndianReader in(payload);
    const quint8 version = in.u8();
    if (in.failed()) {
        return Error{ QStringLiteral("empty payload") };
    }
    if (version != Version) {
        return Error{ QStringLiteral("unknown presence wire version %1").arg(version) };
    }
    switch (kind) {
    case KindDelta:
        return decodeDelta(in);
    case KindSyncChunk:
        return decodeSyncChunk(in);
    case KindMarker: {
        Marker marker;
        marker.incarnation = in.u64();
        marker.sequence = in.u64();
        return finish(in, marker);
    }
    case KindResyncRequest:
        return finish(in, ResyncRequest{});
    default:
        return Error{ QStringLiteral("unknown presence frame kind %1").arg(kind) };
    }
}

} // namespace rt::presence::wire
