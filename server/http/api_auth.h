#pragma once

#include "server/auth/jwt.h"
#include "server/tenants/tenant.h"
#include "server/wire/http_message.h"

#include <QJsonObject>

#include <optional>

namespace rt {
class Clock;
}
namespace rt::tenants {
class TenantDirectory;
class TenantRates;
} // namespace rt::tenants

namespace rt::metrics {
class ServerMetrics;
}

namespace rt::http {

// The tenant-scoped REST pipeline shared by /api/ping and the broadcast endpoints (spec §4.4,
// docs/upstream/tenants-limits-metrics.md §5.5), in upstream's order: tenant from Host (unknown:
// 401 without rate headers), the x-rate-* headers computed from the tenant's requests counter
// (rolling average at or over max_events_per_second: 429), then a JWT from "Authorization:
// Bearer" (or the apikey header) verified with the tenant's keys, `role` and `exp` required
// (401), then suspension (403). Unlike upstream, only an authorised request is charged to the
// counter: refused and unauthenticated ones (and pings) cost the tenant nothing. Every answer
// after the tenant was found carries the rate headers. Immutable; shared by every worker.
class TenantApiAuth
{
public:
    TenantApiAuth(const tenants::TenantDirectory &tenants, const tenants::TenantRates &rates,
                  metrics::ServerMetrics &metrics, QByteArray selfHostTenant,
                  QJsonObject claimValidators, const Clock &clock);

    metrics::ServerMetrics &metrics() const { return m_metrics; }
    // A request refused by one of the tenant's limits (kind: metrics::label_values).
    void countRejection(const QByteArray &tenantId, const char *kind) const;

    struct Outcome
    {
        tenants::TenantPtr tenant; // set when admitted (and, for authorise(), authorised)
        QJsonObject claims;
        wire::HttpResponse refusal; // otherwise
        QList<QPair<QByteArray, QByteArray>> rateHeaders; // set once the tenant was found

        // Adds the rate headers to `response`.
        wire::HttpResponse withRateHeaders(wire::HttpResponse response) const;
    };
    // Tenant, request counting and the requests rate only (GET /api/ping).
    Outcome admit(const wire::HttpRequest &request) const;
    // admit(), then token and suspension (the broadcast API); an authorised request is charged.
    Outcome authorise(const wire::HttpRequest &request) const;
    tenants::TenantPtr tenantFor(const wire::HttpRequest &request) const;
    // Whether the request's head carries a token the tenant's keys verify (nothing charged):
    // decides whether its body may be large (before the body is read).
    bool carriesValidToken(const wire::HttpRequest &head) const;

private:
    std::optional<auth::VerifiedToken> verifiedToken(const wire::HttpRequest &request,
                                                     const tenants::Tenant &tenant) const;
    void charge(const tenants::Tenant &tenant) const;

    const tenants::TenantDirectory &m_tenants;
    const tenants::TenantRates &m_rates;
    metrics::ServerMetrics &m_metrics;
    QByteArray m_selfHostTenant;
    QJsonObject m_claimValidators;
    const Clock &m_clock;
};

// {"message": text} with CORS headers.
wire::HttpResponse messageResponse(int status, const QString &text);

} // namespace rt::http
