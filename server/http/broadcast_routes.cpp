#include "server/http/broadcast_routes.h"

#include "server/cdc/cdc_service.h"
#include "server/http/api_auth.h"
#include "server/http/logging.h"
#include "server/metrics/catalog.h"
#include "server/pubsub/local_pubsub.h"
#include "server/pubsub/outbound_message.h"
#include "server/tenants/tenant_rates.h"
#include "shared/protocol/json_scan.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QMap>

#include <atomic>

namespace rt::http {

namespace {

const QString CantBeBlank = QStringLiteral("can't be blank");
const QString IsInvalid = QStringLiteral("is invalid");
const QString PayloadTooLarge = QStringLiteral("Payload size exceeds tenant limit");
const QString ExceededRateLimit = QStringLiteral("You have exceeded your rate limit");
// A kind-4 frame carries the topic ("realtime:" + sub-topic) and event in 255 bytes each.
constexpr qsizetype MaxSubTopicBytes = 255 - 9;
constexpr qsizetype MaxEventBytes = 255;

wire::HttpResponse accepted()
{
    wire::HttpResponse response = wire::HttpResponse::empty(202);
    Router::addCorsHeaders(response);
    return response;
}

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

QByteArray mediaType(const QByteArray &contentType)
{
    const qsizetype semicolon = contentType.indexOf(';');
    return (semicolon < 0 ? contentType : contentType.left(semicolon)).trimmed().toLower();
}

} // namespace

namespace {

// The request's headers as a JSON object, for request.headers in RLS policies (spec §7.1).
QJsonObject requestHeadersJson(const wire::HttpRequest &request)
{
    QJsonObject headers;
    for (const auto &[name, value] : request.headers) {
        headers.insert(QString::fromLatin1(name), QString::fromUtf8(value));
    }
    return headers;
}

} // namespace

BroadcastRoutes::BroadcastRoutes(const TenantApiAuth &auth, const tenants::TenantRates &rates,
                                 const pubsub::PubSub &pubsub, cdc::CdcService *cdc)
    : m_auth(auth),
      m_rates(rates),
      m_pubsub(pubsub),
      m_cdc(cdc)
{ }

void BroadcastRoutes::registerOn(Router &router)
{
    router.add(
            "POST", "/api/broadcast",
            [this](const wire::HttpRequest &request, const RouteParams &,
                   const transport::HttpResponder &responder) { handleBatch(request, responder); });
    router.add("POST", "/api/broadcast/:topic/events/:event",
               [this](const wire::HttpRequest &request, const RouteParams &params,
                      const transport::HttpResponder &responder) {
                   handleSingle(request, params, responder);
               });
}

namespace {

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
QJsonObject messageErrors(const QJsonObject &message, const tenants::Tenant &tenant)
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
               > tenant.maxPayloadBytes()) {
        errors.insert(QLatin1String("payload"), QJsonArray{ PayloadTooLarge });
    }
    const QJsonValue isPrivate = message.value(QLatin1String("private"));
    if (!isPrivate.isUndefined() && !isPrivate.isNull() && !isPrivate.isBool()) {
        errors.insert(QLatin1String("private"), QJsonArray{ IsInvalid });
    }
    return errors;
}

// Every message's errors, or nothing when the whole batch is valid (nothing is sent unless it is).
std::optional<wire::HttpResponse> batchErrors(const QJsonArray &messages,
                                              const tenants::Tenant &tenant)
{
    QJsonArray perMessage;
    bool anyError = false;
    for (const QJsonValue value : messages) {
        const QJsonObject errors = messageErrors(value.toObject(), tenant);
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

// The Phoenix payload a batch message is broadcast as: {type, event, payload[, meta: {id}]}.
QByteArray broadcastPayload(const QJsonObject &message)
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

wire::HttpResponse acceptedWith(const QList<QPair<QByteArray, QByteArray>> &rateHeaders)
{
    wire::HttpResponse response = accepted();
    for (const auto &[name, value] : rateHeaders) {
        response.setHeader(name, value);
    }
    return response;
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
                         const QByteArray &payload, const tenants::Tenant &tenant)
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
    } else if (payload.size() > tenant.maxPayloadBytes()) {
        errors.insert(QLatin1String("payload"), QJsonArray{ PayloadTooLarge });
    }
    return errors;
}

wire::HttpResponse unsupportedMediaType()
{
    QJsonObject body;
    body.insert(QLatin1String("error"),
                QStringLiteral("Unsupported Media Type. Use "
                               "application/json or "
                               "application/octet-stream"));
    wire::HttpResponse response =
            wire::HttpResponse::json(415, QJsonDocument(body).toJson(QJsonDocument::Compact));
    Router::addCorsHeaders(response);
    return response;
}

} // namespace

std::optional<wire::HttpResponse> BroadcastRoutes::overRate(const tenants::Tenant &tenant,
                                                            double rate, qsizetype batch) const
{
    // The tenant's events rate (docs/upstream/tenants-limits-metrics.md §5.2): refused when the
    // rate is over the limit, and a batch also when it would take the rate over it.
    if (rate > tenant.maxEventsPerSecond || (batch == 0 && rate >= tenant.maxEventsPerSecond)) {
        m_auth.countRejection(tenant.externalId, metrics::label_values::Events);
        return messageResponse(429, ExceededRateLimit);
    }
    if (batch > 0 && static_cast<double>(batch) + rate > tenant.maxEventsPerSecond) {
        m_auth.countRejection(tenant.externalId, metrics::label_values::Events);
        return messageResponse(
                429,
                QStringLiteral("Too many messages to broadcast, please reduce the batch size"));
    }
    return std::nullopt;
}

void BroadcastRoutes::handleBatch(const wire::HttpRequest &request,
                                  const transport::HttpResponder &responder) const
{
    TenantApiAuth::Outcome authorised = m_auth.authorise(request);
    if (!authorised.tenant) {
        responder.respond(authorised.refusal);
        return;
    }
    const tenants::Tenant &tenant = *authorised.tenant;
    QJsonArray messages;
    std::optional<wire::HttpResponse> refusal = readMessages(request.body, messages);
    if (!refusal) {
        refusal = batchErrors(messages, tenant);
    }
    const std::shared_ptr<limits::RateCounter> events = m_rates.events(tenant);
    if (!refusal) {
        refusal = overRate(tenant, events->average(), messages.size());
    }
    if (refusal) {
        responder.respond(authorised.withRateHeaders(*std::move(refusal)));
        return;
    }
    const pubsub::DeliveryCounting counting{
        events, true, m_auth.metrics().messagesOut.labels({ tenant.externalId })
    };
    const BatchPublisher publish = [pubsub = &m_pubsub, counting, tenantId = tenant.externalId](
                                           const QJsonObject &message, bool isPrivate) {
        counting.counter->add(1);
        pubsub->publish(pubsub::OutboundMessage::push(
                pubsub::TopicKey(tenantId, isPrivate,
                                 message.value(QLatin1String("topic")).toString().toUtf8()),
                QByteArrayLiteral("broadcast"), broadcastPayload(message),
                pubsub::Audience::BroadcastReaders, 0, counting));
    };
    // Private messages need broadcast-write under the tenant's RLS policies, checked once per
    // topic; refused ones are dropped and the batch is still accepted (spec §4.4).
    QMap<QByteArray, QList<QJsonObject>> privateByTopic;
    for (const QJsonValue value : std::as_const(messages)) {
        const QJsonObject message = value.toObject();
        if (message.value(QLatin1String("private")).toBool(false)) {
            privateByTopic[message.value(QLatin1String("topic")).toString().toUtf8()].append(
                    message);
        } else {
            publish(message, false);
        }
    }
    if (privateByTopic.isEmpty() || m_cdc == nullptr || !cdc::CdcService::usesDatabase(tenant)) {
        responder.respond(acceptedWith(authorised.rateHeaders));
        return;
    }
    publishPrivate(request, authorised, privateByTopic, publish, responder);
}

void BroadcastRoutes::publishPrivate(const wire::HttpRequest &request,
                                     const TenantApiAuth::Outcome &authorised,
                                     const QMap<QByteArray, QList<QJsonObject>> &byTopic,
                                     const BatchPublisher &publish,
                                     const transport::HttpResponder &responder) const
{
    auto remaining = std::make_shared<std::atomic<int>>(static_cast<int>(byTopic.size()));
    const QJsonObject headers = requestHeadersJson(request);
    const transport::DeferredResponder deferred = responder.deferred();
    const auto rateHeaders = authorised.rateHeaders;
    for (auto group = byTopic.cbegin(); group != byTopic.cend(); ++group) {
        m_cdc->checkBroadcastWrite(
                authorised.tenant,
                cdc::authorizationRequestFor(authorised.claims, group.key(), headers),
                [publish, batch = group.value(), remaining, deferred,
                 rateHeaders](const rt::Result<bool, cdc::AuthorizationError> &allowed) {
                    if (allowed && allowed.value()) {
                        for (const QJsonObject &message : batch) {
                            publish(message, true);
                        }
                    }
                    if (remaining->fetch_sub(1) == 1) {
                        deferred.respond(acceptedWith(rateHeaders));
                    }
                });
    }
}

void BroadcastRoutes::handleSingle(const wire::HttpRequest &request, const RouteParams &params,
                                   const transport::HttpResponder &responder) const
{
    // The media type is checked before anything else (spec §4.5).
    const QByteArray type = mediaType(request.header("content-type"));
    const bool isJson = type.isEmpty() || type == "application/json";
    if (!isJson && type != "application/octet-stream") {
        responder.respond(unsupportedMediaType());
        return;
    }
    TenantApiAuth::Outcome authorised = m_auth.authorise(request);
    if (!authorised.tenant) {
        responder.respond(authorised.refusal);
        return;
    }
    const tenants::Tenant &tenant = *authorised.tenant;
    const QByteArray topic = params.value("topic");
    const QByteArray event = params.value("event");
    const bool isPrivate = wire::queryValue(wire::parseQuery(request.query), "private") == "true";
    QByteArray payload = request.body;
    std::optional<wire::HttpResponse> refusal = singlePayload(payload, isJson);
    if (!refusal) {
        if (const QJsonObject errors = singleErrors(topic, event, payload, tenant);
            !errors.isEmpty()) {
            refusal = errorsResponse(errors);
        }
    }
    const std::shared_ptr<limits::RateCounter> events = m_rates.events(tenant);
    if (!refusal) {
        refusal = overRate(tenant, events->average(), 0);
    }
    if (refusal) {
        responder.respond(authorised.withRateHeaders(*std::move(refusal)));
        return;
    }
    const pubsub::DeliveryCounting counting{
        events, true, m_auth.metrics().messagesOut.labels({ tenant.externalId })
    };
    const std::function<void()> publish = [pubsub = &m_pubsub, counting,
                                           tenantId = tenant.externalId, topic, event, payload,
                                           isJson, isPrivate] {
        counting.counter->add(1);
        pubsub->publish(pubsub::OutboundMessage::userBroadcast(
                pubsub::TopicKey(tenantId, isPrivate, topic), event, payload, isJson, QByteArray(),
                0, counting));
    };
    if (!isPrivate) {
        publish();
        responder.respond(acceptedWith(authorised.rateHeaders));
        return;
    }
    publishPrivateSingle(request, authorised, topic, publish, responder);
}

void BroadcastRoutes::publishPrivateSingle(const wire::HttpRequest &request,
                                           const TenantApiAuth::Outcome &authorised,
                                           const QByteArray &topic,
                                           const std::function<void()> &publish,
                                           const transport::HttpResponder &responder) const
{
    // Needs broadcast-write under the tenant's RLS policies (spec §4.5).
    if (m_cdc == nullptr || !cdc::CdcService::usesDatabase(*authorised.tenant)) {
        responder.respond(authorised.withRateHeaders(
                messageResponse(422, QStringLiteral("Tenant database unavailable"))));
        return;
    }
    const transport::DeferredResponder deferred = responder.deferred();
    const auto rateHeaders = authorised.rateHeaders;
    m_cdc->checkBroadcastWrite(
            authorised.tenant,
            cdc::authorizationRequestFor(authorised.claims, topic, requestHeadersJson(request)),
            [publish, deferred,
             rateHeaders](const rt::Result<bool, cdc::AuthorizationError> &allowed) {
                wire::HttpResponse response;
                if (!allowed) {
                    const cdc::HttpFailure failure = cdc::httpFailure(allowed.error());
                    response = wire::HttpResponse::json(failure.status, failure.body);
                    Router::addCorsHeaders(response);
                } else if (!allowed.value()) {
                    response = messageResponse(403, QStringLiteral("Unauthorized"));
                } else {
                    publish();
                    response = accepted();
                }
                for (const auto &[name, value] : rateHeaders) {
                    response.setHeader(name, value);
                }
                deferred.respond(std::move(response));
            });
}

} // namespace rt::http
