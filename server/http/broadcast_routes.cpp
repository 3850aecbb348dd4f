#include "server/http/broadcast_routes.h"

#include "server/cdc/cdc_service.h"
#include "server/http/api_auth.h"
#include "server/http/broadcast_request.h"
#include "server/http/logging.h"
#include "server/metrics/catalog.h"
#include "server/pubsub/local_pubsub.h"
#include "server/pubsub/outbound_message.h"
#include "server/tenants/tenant_rates.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QMap>

#include <atomic>

namespace rt::http {

namespace {

// Upstream's changeset error for persist on a public topic, and ours for a bad ttl.
wire::HttpResponse persistParamsRefusal(bool isPrivate)
{
    const QString message = isPrivate ? QStringLiteral("ttl is invalid")
                                      : QStringLiteral("can only be used on private channels");
    QJsonObject errors{ { QStringLiteral("persist"), QJsonArray{ message } } };
    wire::HttpResponse response = wire::HttpResponse::json(
            422,
            QJsonDocument(QJsonObject{ { QStringLiteral("errors"), errors } })
                    .toJson(QJsonDocument::Compact));
    Router::addCorsHeaders(response);
    return response;
}

const QString ExceededRateLimit = QStringLiteral("You have exceeded your rate limit");

wire::HttpResponse accepted()
{
    wire::HttpResponse response = wire::HttpResponse::empty(202);
    Router::addCorsHeaders(response);
    return response;
}

QByteArray mediaType(const QByteArray &contentType)
{
    const qsizetype semicolon = contentType.indexOf(';');
    return (semicolon < 0 ? contentType : contentType.left(semicolon)).trimmed().toLower();
}

} // namespace

namespace {

// The answer to a private single-message write after the tenant database decided: its failure,
// 403 when RLS refused, else `publish` runs and 202; with the rate headers.
wire::HttpResponse privateWriteResponse(const cdc::AuthorizationError *error, bool allowed,
                                        const std::function<void()> &publish,
                                        const QList<QPair<QByteArray, QByteArray>> &rateHeaders)
{
    wire::HttpResponse response;
    if (error != nullptr) {
        const cdc::HttpFailure failure = cdc::httpFailure(*error);
        response = wire::HttpResponse::json(failure.status, failure.body);
        Router::addCorsHeaders(response);
    } else if (!allowed) {
        response = messageResponse(403, QStringLiteral("Unauthorized"));
    } else {
        publish();
        response = accepted();
    }
    for (const auto &[name, value] : rateHeaders) {
        response.setHeader(name, value);
    }
    return response;
}

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

wire::HttpResponse acceptedWith(const QList<QPair<QByteArray, QByteArray>> &rateHeaders)
{
    wire::HttpResponse response = accepted();
    for (const auto &[name, value] : rateHeaders) {
        response.setHeader(name, value);
    }
    return response;
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
    BroadcastBatch batch = readBroadcastBatch(request.body, tenant.maxPayloadBytes());
    std::optional<wire::HttpResponse> refusal = std::move(batch.refusal);
    const QJsonArray messages = std::move(batch.messages);
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
                QByteArrayLiteral("broadcast"), batchBroadcastPayload(message),
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
    SingleBroadcast single =
            readSingleBroadcast(request.body, isJson, topic, event, tenant.maxPayloadBytes());
    std::optional<wire::HttpResponse> refusal = std::move(single.refusal);
    const QByteArray payload = std::move(single.payload);
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
    // A persisted message carries its row's id, as the database's own broadcasts do.
    const std::function<void(const QByteArray &)> publishWithId =
            [pubsub = &m_pubsub, counting, tenantId = tenant.externalId, topic, event, payload,
             isJson, isPrivate](const QByteArray &id) {
                counting.counter->add(1);
                pubsub->publish(pubsub::OutboundMessage::userBroadcast(
                        pubsub::TopicKey(tenantId, isPrivate, topic), event, payload, isJson,
                        id.isEmpty() ? QByteArray() : R"({"id":")" + id + "\"}", 0, counting));
            };
    const std::function<void()> publish = [publishWithId] { publishWithId(QByteArray()); };
    const auto query = wire::parseQuery(request.query);
    const QByteArray persistValue = wire::queryValue(query, "persist");
    const QByteArray ttlValue = wire::queryValue(query, "persist[ttl]");
    const cdc::PersistOption persist = cdc::persistFromQuery(
            persistValue, ttlValue, !persistValue.isNull(), !ttlValue.isNull());
    if (persist.asked) {
        if (!isPrivate || !persist.valid) {
            responder.respond(authorised.withRateHeaders(persistParamsRefusal(isPrivate)));
            return;
        }
        cdc::PersistRequest stored;
        stored.authorization =
                cdc::authorizationRequestFor(authorised.claims, topic, requestHeadersJson(request));
        stored.event = event;
        stored.payload = payload;
        stored.isBinary = !isJson;
        stored.ttlSeconds = persist.ttlSeconds;
        persistSingle(request, authorised, std::move(stored), publishWithId, responder);
        return;
    }
    if (!isPrivate) {
        publish();
        responder.respond(acceptedWith(authorised.rateHeaders));
        return;
    }
    publishPrivateSingle(request, authorised, topic, publish, responder);
}

bool BroadcastRoutes::refusedWithoutDatabase(const TenantApiAuth::Outcome &authorised,
                                             const transport::HttpResponder &responder) const
{
    if (m_cdc != nullptr && cdc::CdcService::usesDatabase(*authorised.tenant)) {
        return false;
    }
    responder.respond(authorised.withRateHeaders(
            messageResponse(422, QStringLiteral("Tenant database unavailable"))));
    return true;
}

void BroadcastRoutes::publishPrivateSingle(const wire::HttpRequest &request,
                                           const TenantApiAuth::Outcome &authorised,
                                           const QByteArray &topic,
                                           const std::function<void()> &publish,
                                           const transport::HttpResponder &responder) const
{
    // Needs broadcast-write under the tenant's RLS policies (spec §4.5).
    if (refusedWithoutDatabase(authorised, responder)) {
        return;
    }
    const transport::DeferredResponder deferred = responder.deferred();
    const auto rateHeaders = authorised.rateHeaders;
    m_cdc->checkBroadcastWrite(
            authorised.tenant,
            cdc::authorizationRequestFor(authorised.claims, topic, requestHeadersJson(request)),
            [publish, deferred,
             rateHeaders](const rt::Result<bool, cdc::AuthorizationError> &allowed) {
                deferred.respond(privateWriteResponse(allowed ? nullptr : &allowed.error(),
                                                      allowed && allowed.value(), publish,
                                                      rateHeaders));
            });
}

void BroadcastRoutes::persistSingle(const wire::HttpRequest &,
                                    const TenantApiAuth::Outcome &authorised,
                                    cdc::PersistRequest persist,
                                    const std::function<void(const QByteArray &id)> &publish,
                                    const transport::HttpResponder &responder) const
{
    if (refusedWithoutDatabase(authorised, responder)) {
        return;
    }
    const transport::DeferredResponder deferred = responder.deferred();
    const auto rateHeaders = authorised.rateHeaders;
    m_cdc->persistBroadcast(
            authorised.tenant, std::move(persist),
            [publish, deferred,
             rateHeaders](const rt::Result<cdc::PersistOutcome, cdc::AuthorizationError> &outcome) {
                deferred.respond(privateWriteResponse(
                        outcome ? nullptr : &outcome.error(), outcome && outcome->stored,
                        [&] { publish(outcome->id); }, rateHeaders));
            });
}

} // namespace rt::http
