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

void BroadcastRoutes::handleBatch(const wire::HttpRequest &request,
                                  const transport::HttpResponder &responder) const
{
    TenantApiAuth::Outcome authorised = m_auth.authorise(request);
    if (!authorised.tenant) {
        responder.respond(std::move(authorised.refusal));
        return;
    }
    const tenants::Tenant &tenant = *authorised.tenant;
    const auto reply = [&responder, &authorised](wire::HttpResponse response) {
        responder.respond(authorised.withRateHeaders(std::move(response)));
    };
    QJsonParseError parseError{};
    const QJsonDocument document = QJsonDocument::fromJson(request.body, &parseError);
    if (parseError.error != QJsonParseError::NoError || !document.isObject()) {
        reply(messageResponse(400,
                              QStringLiteral("The request body must be a JSON "
                                             "object with a messages list")));
        return;
    }
    const QJsonValue messagesValue = document.object().value(QLatin1String("messages"));
    if (!messagesValue.isArray()) {
        QJsonObject errors;
        errors.insert(QLatin1String("messages"),
                      QJsonArray{ messagesValue.isUndefined() || messagesValue.isNull()
                                          ? CantBeBlank
                                          : IsInvalid });
        reply(errorsResponse(errors));
        return;
    }
    const QJsonArray messages = messagesValue.toArray();
    if (messages.isEmpty()) {
        QJsonObject errors;
        errors.insert(QLatin1String("messages"), QJsonArray{ CantBeBlank });
        reply(errorsResponse(errors));
        return;
    }

    // Validate every message first: nothing is sent unless the whole batch is valid.
    QJsonArray perMessageErrors;
    bool anyError = false;
    for (const QJsonValue &value : messages) {
        QJsonObject errors;
        const QJsonObject message = value.toObject();
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
        anyError = anyError || !errors.isEmpty();
        perMessageErrors.append(errors);
    }
    if (anyError) {
        QJsonObject errors;
        errors.insert(QLatin1String("messages"), perMessageErrors);
        reply(errorsResponse(errors));
        return;
    }

    // The tenant's events rate (docs/upstream/tenants-limits-metrics.md §5.2): the batch is
    // refused whole when the rate is over the limit or would go over it.
    const std::shared_ptr<limits::RateCounter> events = m_rates.events(tenant);
    const double rate = events->average();
    if (rate > tenant.maxEventsPerSecond) {
        m_auth.countRejection(tenant.externalId, metrics::label_values::Events);
        reply(messageResponse(429, ExceededRateLimit));
        return;
    }
    if (static_cast<double>(messages.size()) + rate > tenant.maxEventsPerSecond) {
        m_auth.countRejection(tenant.externalId, metrics::label_values::Events);
        reply(messageResponse(
                429,
                QStringLiteral("Too many messages to broadcast, please reduce the batch size")));
        return;
    }
    const pubsub::DeliveryCounting counting{
        events, true, m_auth.metrics().messagesOut.labels({ tenant.externalId })
    };
    const pubsub::PubSub *pubsub = &m_pubsub;
    const auto publish = [pubsub, counting, tenantId = tenant.externalId](
                                 const QJsonObject &message, bool isPrivate) {
        const QByteArray topic = message.value(QLatin1String("topic")).toString().toUtf8();
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
        counting.counter->add(1);
        pubsub->publish(pubsub::OutboundMessage::push(
                pubsub::TopicKey(tenantId, isPrivate, topic), QByteArrayLiteral("broadcast"),
                QJsonDocument(broadcast).toJson(QJsonDocument::Compact),
                pubsub::Audience::BroadcastReaders, 0, counting));
    };
    // Private messages need broadcast-write under the tenant's RLS policies, checked once per
    // topic; refused ones are dropped and the batch is still accepted (spec §4.4).
    QMap<QByteArray, QList<QJsonObject>> privateByTopic;
    for (const QJsonValue &value : messages) {
        const QJsonObject message = value.toObject();
        if (message.value(QLatin1String("private")).toBool(false)) {
            privateByTopic[message.value(QLatin1String("topic")).toString().toUtf8()].append(
                    message);
        } else {
            publish(message, false);
        }
    }
    if (privateByTopic.isEmpty() || m_cdc == nullptr
        || !cdc::CdcService::usesDatabase(*authorised.tenant)) {
        reply(accepted());
        return;
    }
    auto remaining = std::make_shared<std::atomic<int>>(static_cast<int>(privateByTopic.size()));
    auto headers = requestHeadersJson(request);
    const transport::DeferredResponder deferred = responder.deferred();
    const auto rateHeaders = authorised.rateHeaders;
    for (auto group = privateByTopic.cbegin(); group != privateByTopic.cend(); ++group) {
        cdc::AuthorizationRequest check =
                cdc::authorizationRequestFor(authorised.claims, group.key(), headers);
        m_cdc->checkBroadcastWrite(
                authorised.tenant, std::move(check),
                [publish, batch = group.value(), remaining, deferred,
                 rateHeaders](const rt::Result<bool, cdc::AuthorizationError> &allowed) {
                    if (allowed && allowed.value()) {
                        for (const QJsonObject &message : batch) {
                            publish(message, true);
                        }
                    }
                    if (remaining->fetch_sub(1) == 1) {
                        wire::HttpResponse response = accepted();
                        for (const auto &[name, value] : rateHeaders) {
                            response.setHeader(name, value);
                        }
                        deferred.respond(std::move(response));
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
        QJsonObject body;
        body.insert(QLatin1String("error"),
                    QStringLiteral("Unsupported Media Type. Use application/json or "
                                   "application/octet-stream"));
        wire::HttpResponse response =
                wire::HttpResponse::json(415, QJsonDocument(body).toJson(QJsonDocument::Compact));
        Router::addCorsHeaders(response);
        responder.respond(std::move(response));
        return;
    }
    TenantApiAuth::Outcome authorised = m_auth.authorise(request);
    if (!authorised.tenant) {
        responder.respond(std::move(authorised.refusal));
        return;
    }
    const tenants::Tenant &tenant = *authorised.tenant;
    const auto reply = [&responder, &authorised](wire::HttpResponse response) {
        responder.respond(authorised.withRateHeaders(std::move(response)));
    };
    const QByteArray topic = params.value("topic");
    const QByteArray event = params.value("event");
    const auto query = wire::parseQuery(request.query);
    const QByteArray privateFlag = wire::queryValue(query, "private");
    const bool isPrivate = privateFlag == "true";

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

    QByteArray payload = request.body;
    if (isJson) {
        payload = payload.trimmed();
        if (!payload.isEmpty() && !protocol::json::isValid(payload)) {
            reply(messageResponse(400,
                                  QStringLiteral("The request body is not valid "
                                                 "JSON")));
            return;
        }
        if (!payload.isEmpty() && !payload.startsWith('{')) {
            // A non-object JSON body arrives wrapped, as upstream's parser does.
            payload = QByteArrayLiteral("{\"_json\":") + payload + '}';
        }
    }
    if (payload.isEmpty()) {
        errors.insert(QLatin1String("payload"), QJsonArray{ CantBeBlank });
    } else if (payload.size() > tenant.maxPayloadBytes()) {
        errors.insert(QLatin1String("payload"), QJsonArray{ PayloadTooLarge });
    }
    if (!errors.isEmpty()) {
        reply(errorsResponse(errors));
        return;
    }
    const std::shared_ptr<limits::RateCounter> events = m_rates.events(tenant);
    if (events->average() >= tenant.maxEventsPerSecond) {
        m_auth.countRejection(tenant.externalId, metrics::label_values::Events);
        reply(messageResponse(429, ExceededRateLimit));
        return;
    }
    const pubsub::PubSub *pubsub = &m_pubsub;
    const pubsub::DeliveryCounting counting{
        events, true, m_auth.metrics().messagesOut.labels({ tenant.externalId })
    };
    const auto publish = [pubsub, counting, tenantId = tenant.externalId, topic, event, payload,
                          isJson, isPrivate] {
        counting.counter->add(1);
        pubsub->publish(pubsub::OutboundMessage::userBroadcast(
                pubsub::TopicKey(tenantId, isPrivate, topic), event, payload, isJson, QByteArray(),
                0, counting));
    };
    if (!isPrivate) {
        publish();
        reply(accepted());
        return;
    }
    // Needs broadcast-write under the tenant's RLS policies (spec §4.5).
    if (m_cdc == nullptr || !cdc::CdcService::usesDatabase(tenant)) {
        reply(messageResponse(422, QStringLiteral("Tenant database unavailable")));
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
