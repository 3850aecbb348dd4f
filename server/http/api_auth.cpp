#include "server/http/api_auth.h"

#include "server/auth/jwt.h"
#include "server/http/router.h"
#include "server/limits/rate_limit_headers.h"
#include "server/metrics/catalog.h"
#include "server/tenants/host.h"
#include "server/tenants/tenant_directory.h"
#include "server/tenants/tenant_rates.h"
#include "shared/core/clock.h"

#include <QJsonDocument>

namespace rt::http {

wire::HttpResponse messageResponse(int status, const QString &text)
{
    QJsonObject body;
    body.insert(QLatin1String("message"), text);
    wire::HttpResponse response =
            wire::HttpResponse::json(status, QJsonDocument(body).toJson(QJsonDocument::Compact));
    Router::addCorsHeaders(response);
    return response;
}

TenantApiAuth::TenantApiAuth(const tenants::TenantDirectory &tenants,
                             const tenants::TenantRates &rates, metrics::ServerMetrics &metrics,
                             QByteArray selfHostTenant, QJsonObject claimValidators,
                             const Clock &clock)
    : m_tenants(tenants),
      m_rates(rates),
      m_metrics(metrics),
      m_selfHostTenant(std::move(selfHostTenant)),
      m_claimValidators(std::move(claimValidators)),
      m_clock(clock)
{ }

tenants::TenantPtr TenantApiAuth::tenantFor(const wire::HttpRequest &request) const
{
    return m_tenants.find(tenants::tenantIdFromHost(request.header("host"), m_selfHostTenant));
}

void TenantApiAuth::countRejection(const QByteArray &tenantId, const char *kind) const
{
    m_metrics.rateLimitRejections.labels({ tenantId, QByteArrayView(kind) })->inc();
}

wire::HttpResponse TenantApiAuth::Outcome::withRateHeaders(wire::HttpResponse response) const
{
    for (const auto &[name, value] : rateHeaders) {
        response.setHeader(name, value);
    }
    return response;
}

TenantApiAuth::Outcome TenantApiAuth::admit(const wire::HttpRequest &request) const
{
    Outcome outcome;
    const tenants::TenantPtr tenant = tenantFor(request);
    if (!tenant) {
        outcome.refusal = messageResponse(401, QStringLiteral("Tenant not found in database"));
        return outcome;
    }
    // Read, not charged: only a request that is answered for the tenant counts (charge()), so
    // that anyone who knows a tenant's host name cannot exhaust its budget with refused ones.
    const std::shared_ptr<limits::RateCounter> requests = m_rates.requests(*tenant);
    const limits::RateLimitHeaders headers =
            limits::computeRateLimitHeaders(requests->average(), tenant->maxEventsPerSecond);
    for (const auto &header : headers.toHttpHeaders()) {
        outcome.rateHeaders.append({ header.first, header.second });
    }
    if (headers.isLimited) {
        countRejection(tenant->externalId, metrics::label_values::HttpRequests);
        outcome.refusal =
                outcome.withRateHeaders(messageResponse(429, QStringLiteral("Too many requests")));
        return outcome;
    }
    outcome.tenant = tenant;
    return outcome;
}

TenantApiAuth::Outcome TenantApiAuth::authorise(const wire::HttpRequest &request) const
{
    Outcome outcome = admit(request);
    if (!outcome.tenant) {
        return outcome;
    }
    const tenants::TenantPtr tenant = std::exchange(outcome.tenant, nullptr);
    const std::optional<auth::VerifiedToken> verified = verifiedToken(request, *tenant);
    if (!verified) {
        outcome.refusal =
                outcome.withRateHeaders(messageResponse(401, QStringLiteral("Unauthorized")));
        return outcome;
    }
    // Upstream checks suspension in the controller, after the token.
    if (tenant->suspend) {
        outcome.refusal = outcome.withRateHeaders(
                messageResponse(403, QStringLiteral("Tenant is suspended")));
        return outcome;
    }
    outcome.tenant = tenant;
    outcome.claims = verified->claims;
    charge(*tenant);
    return outcome;
}

std::optional<auth::VerifiedToken> TenantApiAuth::verifiedToken(const wire::HttpRequest &request,
                                                                const tenants::Tenant &tenant) const
{
    // "Bearer <jwt>" with any letter case of the scheme; otherwise the apikey header.
    QByteArray token;
    const QByteArray authorization = request.header("authorization").trimmed();
    const qsizetype space = authorization.indexOf(' ');
    if (space > 0 && authorization.left(space).toLower() == "bearer") {
        token = authorization.mid(space + 1).trimmed();
    }
    if (token.isEmpty()) {
        token = request.header("apikey");
    }
    if (token.isEmpty()) {
        return std::nullopt;
    }
    auth::VerifyOptions options;
    options.nowSeconds = m_clock.epochMs() / 1000;
    options.claimValidators = m_claimValidators;
    Result<auth::VerifiedToken, auth::JwtError> verified =
            auth::verifyToken(auth::cleanToken(token), *tenant.keys, options);
    if (!verified) {
        return std::nullopt;
    }
    return std::move(verified).value();
}

bool TenantApiAuth::carriesValidToken(const wire::HttpRequest &head) const
{
    const tenants::TenantPtr tenant = tenantFor(head);
    return tenant && verifiedToken(head, *tenant).has_value();
}

void TenantApiAuth::charge(const tenants::Tenant &tenant) const
{
    m_rates.requests(tenant)->add(1);
}

} // namespace rt::http
