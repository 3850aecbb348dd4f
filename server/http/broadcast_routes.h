#pragma once

#include "server/http/router.h"

namespace rt::pubsub {
class PubSub;
}
namespace rt::tenants {
class TenantRates;
}
namespace rt::cdc {
class CdcService;
}

namespace rt::http {

class TenantApiAuth;

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
    const TenantApiAuth &m_auth;
    const tenants::TenantRates &m_rates;
    const pubsub::PubSub &m_pubsub;
    cdc::CdcService *m_cdc;
};

} // namespace rt::http
