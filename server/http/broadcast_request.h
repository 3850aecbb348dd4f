#pragma once

#include "server/wire/http_message.h"

#include <QByteArray>
#include <QJsonArray>
#include <QJsonObject>

#include <optional>

// What the bodies of the broadcast REST API (spec §4.4, §4.5) say, as pure functions of the
// bytes and the tenant's payload limit: what to publish, or the refusal to answer with (upstream's
// 400 or 422, CORS headers set). BroadcastRoutes authenticates, rate-limits and publishes; these
// only read untrusted bytes. Any thread.
namespace rt::http {

// A kind-4 frame carries the topic ("realtime:" + sub-topic) and event in 255 bytes each.
inline constexpr qsizetype MaxSubTopicBytes = 255 - 9;
inline constexpr qsizetype MaxEventBytes = 255;

// POST /api/broadcast: {"messages": [{"topic", "event", "payload", "private"?, "id"?}, ...]}.
struct BroadcastBatch
{
    // Every message valid: topic and event non-blank strings, payload an object whose compact
    // JSON fits the limit, private absent, null or a boolean. Empty when refused.
    QJsonArray messages;
    // 400 when the body is not a JSON object; 422 {"errors": {"messages": ...}} when the list is
    // missing, not a list, empty, or has an invalid message (one error object per message, {}
    // for the valid ones: nothing is sent unless every message is valid).
    std::optional<wire::HttpResponse> refusal;
};
BroadcastBatch readBroadcastBatch(const QByteArray &body, qsizetype maxPayloadBytes);

// The Phoenix payload a batch message is broadcast as: {type, event, payload[, meta: {id}]}.
QByteArray batchBroadcastPayload(const QJsonObject &message);

// POST /api/broadcast/:topic/events/:event: one user broadcast, the body as JSON (`isJson`) or
// raw bytes.
struct SingleBroadcast
{
    // JSON: the body trimmed, a non-object value wrapped as {"_json": <value>} (as upstream's
    // parser does); otherwise the body as it came.
    QByteArray payload;
    // 400 when a JSON body is not JSON; 422 {"errors": {...}} for a blank or too long topic or
    // event, an empty payload or one over the limit.
    std::optional<wire::HttpResponse> refusal;
};
SingleBroadcast readSingleBroadcast(QByteArray body, bool isJson, const QByteArray &topic,
                                    const QByteArray &event, qsizetype maxPayloadBytes);

} // namespace rt::http
