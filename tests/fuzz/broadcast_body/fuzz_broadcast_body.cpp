// libFuzzer target for the broadcast API's request bodies: POST /api/broadcast (a batch,
// readBroadcastBatch and the payload each message is broadcast as) and POST
// /api/broadcast/:topic/events/:event (readSingleBroadcast, as JSON and as raw bytes), the
// pure functions BroadcastRoutes reads the client's bytes with.
//
// The input's first byte chooses the tenant's max_payload_size_in_kb (0 to 3, so the limit is
// reachable in small inputs); the rest is the body. Besides crashes, the target aborts when a
// promise breaks: a refused batch is a 400 or a 422 with a JSON body (per-message errors: one
// object per message) and no messages; an accepted one has non-blank topics and events,
// object payloads within the limit, booleans for private, and each message's broadcast
// payload is {type, event, payload[, meta: {id}]}; a single JSON body is refused only when it
// is not JSON (400) and otherwise becomes a JSON object within the limit; raw bytes are kept
// as they are.
#include "server/http/broadcast_request.h"
#include "shared/protocol/json_scan.h"

#include <QJsonDocument>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

namespace {

using namespace rt::http;

void require(bool condition)
{
    if (!condition) {
        std::abort();
    }
}

QJsonObject bodyObject(const rt::wire::HttpResponse &response)
{
    QJsonParseError error{};
    const QJsonDocument document = QJsonDocument::fromJson(response.body, &error);
    require(error.error == QJsonParseError::NoError && document.isObject());
    return document.object();
}

void checkBroadcastPayload(const QJsonObject &message)
{
    const QJsonObject broadcast = QJsonDocument::fromJson(batchBroadcastPayload(message)).object();
    require(broadcast.value(QLatin1String("type")) == QLatin1String("broadcast"));
    require(broadcast.value(QLatin1String("event")) == message.value(QLatin1String("event")));
    require(broadcast.value(QLatin1String("payload")) == message.value(QLatin1String("payload")));
    const QJsonValue id = message.value(QLatin1String("id"));
    const QJsonValue meta = broadcast.value(QLatin1String("meta"));
    if (id.isUndefined() || id.isNull()) {
        require(meta.isUndefined());
    } else {
        require(meta.toObject().value(QLatin1String("id")) == id);
    }
}

void checkBatch(const QByteArray &body, qsizetype limit)
{
    const BroadcastBatch batch = readBroadcastBatch(body, limit);
    if (batch.refusal) {
        require(batch.messages.isEmpty());
        require(batch.refusal->status == 400 || batch.refusal->status == 422);
        const QJsonObject answer = bodyObject(*batch.refusal);
        if (batch.refusal->status == 400) {
            require(answer.value(QLatin1String("message")).isString());
            return;
        }
        const QJsonArray errors = answer.value(QLatin1String("errors"))
                                          .toObject()
                                          .value(QLatin1String("messages"))
                                          .toArray();
        require(!errors.isEmpty());
        if (errors.first().isObject()) {
            const QJsonArray sent = QJsonDocument::fromJson(body)
                                            .object()
                                            .value(QLatin1String("messages"))
                                            .toArray();
            require(errors.size() == sent.size());
        }
        return;
    }
    require(!batch.messages.isEmpty());
    for (const QJsonValue value : batch.messages) {
        require(value.isObject());
        const QJsonObject message = value.toObject();
        for (const char *field : { "topic", "event" }) {
            const QJsonValue text = message.value(QLatin1String(field));
            require(text.isString() && !text.toString().trimmed().isEmpty());
        }
        const QJsonValue payload = message.value(QLatin1String("payload"));
        require(payload.isObject());
        require(QJsonDocument(payload.toObject()).toJson(QJsonDocument::Compact).size() <= limit);
        const QJsonValue isPrivate = message.value(QLatin1String("private"));
        require(isPrivate.isUndefined() || isPrivate.isNull() || isPrivate.isBool());
        checkBroadcastPayload(message);
    }
}

void checkSingle(const QByteArray &body, qsizetype limit)
{
    const QByteArray topic = QByteArrayLiteral("room1");
    const QByteArray event = QByteArrayLiteral("new-msg");
    const SingleBroadcast json = readSingleBroadcast(body, true, topic, event, limit);
    const QByteArray trimmed = body.trimmed();
    const bool valid = rt::protocol::json::isValid(trimmed);
    if (json.refusal) {
        require(json.refusal->status == 400 ? !trimmed.isEmpty() && !valid
                                            : json.refusal->status == 422);
        (void)bodyObject(*json.refusal);
    } else {
        require(valid && !json.payload.isEmpty() && json.payload.size() <= limit);
        require(json.payload.startsWith('{'));
        require(json.payload == trimmed || json.payload == "{\"_json\":" + trimmed + '}');
    }
    const SingleBroadcast raw = readSingleBroadcast(body, false, topic, event, limit);
    require(raw.payload == body);
    require(raw.refusal.has_value() == (body.isEmpty() || body.size() > limit));
    require(!raw.refusal || raw.refusal->status == 422);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) {
        return 0;
    }
    const qsizetype limit = static_cast<qsizetype>(data[0] % 4) * 1000 + 500;
    const QByteArray body(reinterpret_cast<const char *>(data + 1),
                          static_cast<qsizetype>(size - 1));
    checkBatch(body, limit);
    checkSingle(body, limit);
    return 0;
}
