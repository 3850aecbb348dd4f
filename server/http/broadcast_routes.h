#pragma once

#include "server/http/api_auth.h"
#include "server/http/router.h"

#include <QJsonObject>
#include <QMap>

#include <functional>
#include <optional>

namespace rt::pubsub {
class PubSub;
}
namespace rt::tenants {
class TenantRates;
}
namespace rt::cdc {
class CdcService;
struct PersistRequest;
} // namespace rt::cdc

namespace rt::http {

// The broadcast REST API (spec §4.4, §4.5): POST /api/broadcast (a batch of text broadcasts)
// and POST /api/broadcast/:topic/events/:event (one user broadcast, JSON or binary), both
// answered 202 on success. Stateless apart from the references; callable on any worker.
class BroadcastRoutes
{
public:
    // `cdc` (may be null: no tenant databases) checks private messages against the tenant's
    // RLS policies.
    BroadcastRoutes(const TenantApiAuth &auth, const tenants::TenantRates &rates,
                    const pubsub::PubSub &pubsub, cdc::CdcService *cdc = nullptr);

    void registerOn(Router &router);

    void handleBatch(const wire::HttpRequest &request,
                     const transport::HttpResponder &responder) const;
    void handleSingle(const wire::HttpRequest &request, const RouteParams &params,
                      const transport::HttpResponder &responder) const;

private:
    // Publishes one message of a batch (private: on the private topic).
    using BatchPublisher = std::function<void(const QJsonObject &message, bool isPrivate)>;

    // The 429 when the tenant's events rate is over its limit (`batch` messages: also when they
    // would take it over).
    std::optional<wire::HttpResponse> overRate(const tenants::Tenant &tenant, double rate,
                                               qsizetype batch) const;
    void publishPrivate(const wire::HttpRequest &request, const TenantApiAuth::Outcome &authorised,
                        const QMap<QByteArray, QList<QJsonObject>> &byTopic,
                        const BatchPublisher &publish,
                        const transport::HttpResponder &responder) const;
    void publishPrivateSingle(const wire::HttpRequest &request,
                              const TenantApiAuth::Outcome &authorised, const QByteArray &topic,
                              const std::function<void()> &publish,
                              const transport::HttpResponder &responder) const;
    // No tenant database to ask (the tenant has none): answered 422, true.
    bool refusedWithoutDatabase(const TenantApiAuth::Outcome &authorised,
                                const transport::HttpResponder &responder) const;
    // persist=true / persist[ttl]=n on a private topic: stored (the persistence check and the
    // row), then broadcast with the row's id; 403 when RLS refuses.
    void persistSingle(const wire::HttpRequest &request, const TenantApiAuth::Outcome &authorised,
                       cdc::PersistRequest persist,
                       const std::function<void(const QByteArray &id)> &publish,
                       const transport::HttpResponder &responder) const;

    const TenantApiAuth &m_auth;
    const tenants::TenantRates &m_rates;
    const pubsub::PubSub &m_pubsub;
    cdc::CdcService *m_cdc;
};

} // namespace rt::http
