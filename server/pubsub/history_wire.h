#pragma once

#include "server/pubsub/outbound_message.h"
#include "server/pubsub/topic_history.h"
#include "server/pubsub/topic_key.h"
#include "shared/core/result.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QString>

// The frames a node exchanges with a tenant's home to read a topic's history (frame kinds
// HistoryRequest and HistoryReply): a recovering join on a node that is not the home asks, the
// home answers from its TopicHistory in one or more chunks (each below the links' frame bound),
// the last one carrying the verdict. Pure codecs of untrusted bytes (a fuzz target reads them).
//
// Request, version 1, big-endian:
//   u8 version | u64 requestId | u8 mode (0 position, 1 time) | bytes tenant | u8 private
//   | bytes subTopic | u64 epoch | u64 offset | u64 sinceMs
// Reply chunk, version 1:
//   u8 version | u64 requestId | u8 flags (0x01 last) | u8 failure | u64 topEpoch
//   | u64 topOffset | u32 count | count x bytes envelope (ClusterEnvelope)
// where bytes = u32 length + that many bytes; failure: 0 none, 1 epoch changed, 2 history too
// short, 3 unavailable, 4 disabled. Nothing may follow the last field.
namespace rt::pubsub::history_wire {

struct Request
{
    enum class Mode : quint8 { Position = 0, Time = 1 };
    quint64 requestId = 0;
    Mode mode = Mode::Position;
    TopicKey topic;
    StreamPosition from; // Position
    qint64 sinceMs = 0; // Time (wall clock, as replay.since)

    friend bool operator==(const Request &, const Request &) = default;
};

struct ReplyChunk
{
    quint64 requestId = 0;
    bool last = true;
    TopicHistory::RecoveryFailure failure = TopicHistory::RecoveryFailure::None;
    StreamPosition top;
    QList<QByteArray> envelopes; // encoded ClusterEnvelopes, oldest first

    friend bool operator==(const ReplyChunk &, const ReplyChunk &) = default;
};

QByteArray encodeRequest(const Request &request);
Result<Request, QString> decodeRequest(QByteArrayView bytes);

QByteArray encodeReplyChunk(const ReplyChunk &chunk);
Result<ReplyChunk, QString> decodeReplyChunk(QByteArrayView bytes);

// The reply to a request as chunks of at most about `maxChunkBytes` of envelopes each (one
// envelope per chunk at least); the last chunk has the verdict and the top.
QList<ReplyChunk> replyChunks(quint64 requestId, const TopicHistory::Recovery &recovery,
                              qsizetype maxChunkBytes);

} // namespace rt::pubsub::history_wire
