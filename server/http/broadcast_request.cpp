#include "server/http/broadcast_request.h"

#include "server/http/api_auth.h"
#include "server/http/router.h"
#include "shared/protocol/json_scan.h"

#include <QJsonDocument>

namespace rt::http {

namespace {

const QString CantBeBlank = QStringLiteral("can't be blank");
const QString IsInvalid = QStringLiteral("is invalid");
const QString PayloadTooLarge = QStringLiteral("Payload size exceeds tenant limit");

wire::HttpResponse errorsResponse(const QJsonObject &errors)
{
    QJsonObject body;
    body.insert(QLatin1String("errors"), errors);
    wire::HttpResponse response =
            wire::HttpResponse::json(422, QJsonDocument(body).toJson(QJsonDocument::Compact));
    Router::addCorsHeaders(response);
    return response;
}

bool isBlank(const QJsonValue &value)
{
    return !value.isString() || value.toString().trimmed().isEmpty();
}

// The batch's "messages" array, or the refusal (400 when the body is not an object, 422 with
// upstream's field errors when the list is missing, not a list or empty).
std::optional<wire::HttpResponse> readMessages(const QByteArray &body, QJsonArray &messages)
{
    QJsonParseError parseError{};
    const QJsonDocument document = QJsonDocument::fromJson(body, &parseError);
    if (parseError.error != QJsonParseError::NoError || !document.isObject()) {
        return messageResponse(
                400, QStringLiteral("The request body must be a JSON object with a messages list"));
    }
    const QJsonValue value = document.object().value(QLatin1String("messages"));
    if (!value.isArray() || value.toArray().isEmpty()) {
        const bool blank = value.isUndefined() || value.isNull() || value.isArray();
        QJsonObject errors;
        errors.insert(QLatin1String("messages"), QJsonArray{ blank ? CantBeBlank : IsInvalid });
        return errorsResponse(errors);
    }
    messages = value.toArray();
    return std::nullopt;
}

// Upstream's errors of one message of a batch ({} when it is valid).
QJsonObject messageErrors(const QJsonObject &message, qsizetype maxPayloadBytes)
{
    QJsonObject errors;
    if (isBlank(message.value(QLatin1String("topic")))) {
        errors.insert(QLatin1String("topic"), QJsonArray{ CantBeBlank });
    }
    if (isBlank(message.value(QLatin1String("event")))) {
        errors.insert(QLatin1String("event"), QJsonArray{ CantBeBlank });
    }
    const QJsonValue payload = message.value(QLatin1String("payload"));
    if (payload.isUndefined() || payload.isNull()) {
        errors.insert(QLatin1String("payload"), QJsonArray{ CantBeBlank });
    } else if (!payload.isObject()) {
        errors.insert(QLatin1String("payload"), QJsonArray{ IsInvalid });
    } else if (QJsonDocument(payload.toObject()).toJson(QJsonDocument::Compact).size()
               > maxPayloadBytes) {
        errors.insert(QLatin1String("payload"), QJsonArray{ PayloadTooLarge });
    }
    const QJsonValue isPrivate = message.value(QLatin1String("private"));
    if (!isPrivate.isUndefined() && !isPrivate.isNull() && !isPrivate.isBool()) {
        errors.insert(QLatin1String("private"), QJsonArray{ IsInvalid });
    }
    return errors;
}

// Every message's errors, or nothing when the whole batch is valid (nothing is sent unless it is).
std::optional<wire::HttpResponse> batchErrors(const QJsonArray &messages, qsizetype maxPayloadBytes)
{
    QJsonArray perMessage;
    bool anyError = false;
    for (const QJsonValue value : messages) {
        const QJsonObject errors = messageErrors(value.toObject(), maxPayloadBytes);
        anyError = anyError || !errors.isEmpty();
        perMessage.append(errors);
    }
    if (!anyError) {
        return std::nullopt;
    }
    QJsonObject errors;
    errors.insert(QLatin1String("messages"), perMessage);
    return errorsResponse(errors);
}

// The single-message API's payload (a non-object JSON body arrives wrapped, as upstream's parser
// does), or the 400 for a JSON body that is not JSON.
std::optional<wire::HttpResponse> singlePayload(QByteArray &payload, bool isJson)
{
    if (!isJson) {
        return std::nullopt;
    }
    payload = payload.trimmed();
    if (!payload.isEmpty() && !protocol::json::isValid(payload)) {
        return messageResponse(400, QStringLiteral("The request body is not valid JSON"));
    }
    if (!payload.isEmpty() && !payload.startsWith('{')) {
        payload = QByteArrayLiteral("{\"_json\":") + payload + '}';
    }
    return std::nullopt;
}

QJsonObject singleErrors(const QByteArray &topic, const QByteArray &event,
                         const QByteArray &payload, qsizetype maxPayloadBytes)
{
    QJsonObject errors;
    if (topic.trimmed().isEmpty()) {
        errors.insert(QLatin1String("topic"), QJsonArray{ CantBeBlank });
    } else if (topic.size() > MaxSubTopicBytes) {
        errors.insert(QLatin1String("topic"), QJsonArray{ QStringLiteral("is too long") });
    }
    if (event.trimmed().isEmpty()) {
        errors.insert(QLatin1String("event"), QJsonArray{ CantBeBlank });
    } else if (event.size() > MaxEventBytes) {
        errors.insert(QLatin1String("event"), QJsonArray{ QStringLiteral("is too long") });
    }
    if (payload.isEmpty()) {
        errors.insert(QLatin1String("payload"), QJsonArray{ CantBeBlank });
    } else if (payload.size() > maxPayloadBytes) {
        errors.insert(QLatin1String("payload"), QJsonArray{ PayloadTooLarge });
    }
    return errors;
}

} // namespace

BroadcastBatch readBroadcastBatch(const QByteArray &body, qsizetype maxPayloadBytes)
{
    BroadcastBatch batch;
    batch.refusal = readMessages(body, batch.messages);
    if (!batch.refusal) {
        batch.refusal = batchErrors(batch.messages, maxPayloadBytes);
    }
    if (batch.refusal) {
        batch.messages = QJsonArray();
    }
    return batch;
}

QByteArray batchBroadcastPayload(const QJsonObject &message)
{
    QJsonObject broadcast;
    broadcast.insert(QLatin1String("type"), QStringLiteral("broadcast"));
    broadcast.insert(QLatin1String("event"), message.value(QLatin1String("event")));
    broadcast.insert(QLatin1String("payload"), message.value(QLatin1String("payload")));
    const QJsonValue id = message.value(QLatin1String("id"));
    if (!id.isUndefined() && !id.isNull()) {
        QJsonObject meta;
        meta.insert(QLatin1String("id"), id);
        broadcast.insert(QLatin1String("meta"), meta);
    }
    return QJsonDocument(broadcast).toJson(QJsonDocument::Compact);
}

SingleBroadcast readSingleBroadcast(QByteArray body, bool isJson, const QByteArray &topic,
                                    const QByteArray &event, qsizetype maxPayloadBytes)
{
    SingleBroadcast single;
    single.payload = std::move(body);
    single.refusal = singlePayload(single.payload, isJson);
    if (!single.refusal) {
        if (const QJsonObject errors = singleErrors(topic, event, single.payload, maxPayloadBytes);
            !errors.isEmpty()) {
            single.refusal = errorsResponse(errors);
        }
    }
    return single;
}

} // namespace rt::http
