#pragma once

#include "server/channels/socket_state.h"
#include "server/wire/http_message.h"

#include <QJsonObject>

#include <optional>

namespace rt {
class Clock;
}
namespace rt::tenants {
class TenantDirectory;
class TenantUsageRegistry;
class TenantRates;
} // namespace rt::tenants

namespace rt::metrics {
class ServerMetrics;
}

namespace rt::gateway {

struct ConnectSettings
{
    QByteArray selfHostTenant = QByteArrayLiteral("realtime-dev"); // IP/localhost hosts map here
    int connectErrorBackoffMs = 2000; // CONNECT_ERROR_BACKOFF_MS
    QJsonObject claimValidators; // JWT_CLAIM_VALIDATORS
};

// The connect-time checks of a socket upgrade, in upstream's order (spec §1.2-§1.4): serializer
// version, tenant from Host, suspension, token presence, JWT, connected users, joins rate
// (docs/upstream/tenants-limits-metrics.md §5.6). Pure decision
// over the request and the node's tenant state; callable from any worker thread.
class ConnectGate
{
public:
    ConnectGate(ConnectSettings settings, const tenants::TenantDirectory &tenants,
                tenants::TenantUsageRegistry &usage, const tenants::TenantRates &rates,
                metrics::ServerMetrics &metrics, const Clock &clock);

    struct Decision
    {
        std::optional<channels::SocketState> accepted; // set when the socket may open
        wire::HttpResponse refusal; // otherwise: the response to send
        bool delayed = false; // the refusal waits for the connect-error backoff first
    };
    Decision check(const wire::HttpRequest &request) const;

    const ConnectSettings &settings() const { return m_settings; }

private:
    Decision refuse(int status, const QString &error) const;
    // Steps of check().
    Result<auth::VerifiedToken, auth::JwtError>
    verifyConnectToken(const QByteArray &token, const tenants::Tenant &tenant) const;
    std::optional<Decision> refuseOverLimits(const QByteArray &tenantId,
                                             const tenants::Tenant &tenant,
                                             const tenants::TenantUsage &usage) const;

    ConnectSettings m_settings;
    const tenants::TenantDirectory &m_tenants;
    tenants::TenantUsageRegistry &m_usage;
    const tenants::TenantRates &m_rates;
    metrics::ServerMetrics &m_metrics;
    const Clock &m_clock;
};

} // namespace rt::gateway
