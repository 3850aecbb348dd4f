#include "server/gateway/connect_gate.h"

#include "server/gateway/logging.h"
#include "server/metrics/catalog.h"
#include "server/tenants/host.h"
#include "server/tenants/tenant_directory.h"
#include "server/tenants/tenant_rates.h"
#include "shared/core/clock.h"
#include "shared/protocol/phoenix_codec.h"

#include <QJsonDocument>
#include <QLoggingCategory>

namespace rt::gateway {

namespace {

// x-api-key takes precedence over the apikey query parameter. Null when neither is present.
QByteArray apiKeyOf(const wire::HttpRequest &request,
                    const QList<QPair<QByteArray, QByteArray>> &query)
{
    QByteArray rawToken = request.header("x-api-key");
    if (rawToken.isNull()) {
        rawToken = wire::queryValue(query, "apikey");
    }
    return rawToken;
}

QJsonObject xHeadersOf(const wire::HttpRequest &request)
{
    QJsonObject xHeaders;
    for (const auto &header : request.headers) {
        if (header.first.startsWith("x-")) {
            xHeaders.insert(QString::fromLatin1(header.first), QString::fromUtf8(header.second));
        }
    }
    return xHeaders;
}

} // namespace

ConnectGate::ConnectGate(ConnectSettings settings, const tenants::TenantDirectory &tenants,
                         tenants::TenantUsageRegistry &usage, const tenants::TenantRates &rates,
                         metrics::ServerMetrics &metrics, const Clock &clock)
    : m_settings(std::move(settings)),
      m_tenants(tenants),
      m_usage(usage),
      m_rates(rates),
      m_metrics(metrics),
      m_clock(clock)
{ }

ConnectGate::Decision ConnectGate::refuse(int status, const QString &error) const
{
    Decision decision;
    QJsonObject body;
    body.insert(QLatin1String("error"), error);
    decision.refusal =
            wire::HttpResponse::json(status, QJsonDocument(body).toJson(QJsonDocument::Compact));
    decision.delayed = true;
    return decision;
}

ConnectGate::Decision ConnectGate::check(const wire::HttpRequest &request) const
{
    const auto query = wire::parseQuery(request.query);
    const QByteArray vsnText = wire::queryValue(query, "vsn");
    const std::optional<protocol::Vsn> vsn = protocol::parseVsn(vsnText, !vsnText.isNull());
    if (!vsn) {
        // Phoenix refuses an unknown serializer before the socket's own checks: 403, no body,
        // no backoff.
        Decision decision;
        decision.refusal = wire::HttpResponse::empty(403);
        return decision;
    }

    const QByteArray tenantId =
            tenants::tenantIdFromHost(request.header("host"), m_settings.selfHostTenant);
    const tenants::TenantPtr tenant = m_tenants.find(tenantId);
    if (!tenant) {
        qCInfo(lcGateway) << "connect refused: unknown tenant" << tenantId;
        return refuse(404, QStringLiteral("Tenant not found"));
    }
    if (tenant->suspend) {
        return refuse(403, QStringLiteral("Realtime was disabled for this tenant"));
    }
    const QByteArray rawToken = apiKeyOf(request, query);
    if (rawToken.isNull()) {
        return refuse(401, QStringLiteral("API key is missing"));
    }
    const QByteArray token = auth::cleanToken(rawToken);
    Result<auth::VerifiedToken, auth::JwtError> verified = verifyConnectToken(token, *tenant);
    if (!verified) {
        qCInfo(lcGateway) << "connect refused for tenant" << tenantId << ":"
                          << verified.error().connectMessage();
        return refuse(verified.error().httpStatus(), verified.error().connectMessage());
    }
    std::shared_ptr<tenants::TenantUsage> usage = m_usage.usage(tenantId);
    if (std::optional<Decision> refusal = refuseOverLimits(tenantId, *tenant, *usage)) {
        return std::move(*refusal);
    }

    channels::SocketState state;
    state.tenantId = tenantId;
    state.tenant = tenant;
    state.usage = std::move(usage);
    state.token = token;
    state.claims = std::move(verified).value();
    state.vsn = *vsn;
    state.xHeaders = xHeadersOf(request);
    Decision decision;
    decision.accepted = std::move(state);
    return decision;
}

Result<auth::VerifiedToken, auth::JwtError>
ConnectGate::verifyConnectToken(const QByteArray &token, const tenants::Tenant &tenant) const
{
    auth::VerifyOptions options;
    options.nowSeconds = m_clock.epochMs() / 1000;
    options.claimValidators = m_settings.claimValidators;
    return auth::verifyToken(token, *tenant.keys, options);
}

// The tenant's connected users, then its joins rate: the refusal for the first limit reached.
std::optional<ConnectGate::Decision>
ConnectGate::refuseOverLimits(const QByteArray &tenantId, const tenants::Tenant &tenant,
                              const tenants::TenantUsage &usage) const
{
    if (usage.clusterUsers() >= tenant.maxConcurrentUsers) {
        m_metrics.rateLimitRejections
                .labels({ tenantId, QByteArrayView(metrics::label_values::ConcurrentUsers) })
                ->inc();
        return refuse(429, QStringLiteral("Too many connected users"));
    }
    const std::shared_ptr<limits::RateCounter> joins = m_rates.existingJoins(tenantId);
    if (joins && joins->isTriggered()) {
        m_metrics.rateLimitRejections
                .labels({ tenantId, QByteArrayView(metrics::label_values::Joins) })
                ->inc();
        return refuse(429, QStringLiteral("Too many joins per second"));
    }
    return std::nullopt;
}

} // namespace rt::gateway
