#pragma once

#include "server/tenants/tenant.h"
#include "server/wire/http_message.h"

#include <QJsonObject>

#include <optional>

namespace rt {
class Clock;
}
namespace rt::tenants {
class TenantDirectory;
}

namespace rt::http {

// The tenant-scoped REST pipeline shared by the broadcast endpoints (spec §4.4): tenant from
// Host, suspension, and a JWT from "Authorization: Bearer" (or the apikey header) verified with
// the tenant's keys, `role` and `exp` required.
class TenantApiAuth
{
public:
    TenantApiAuth(const tenants::TenantDirectory &tenants, QByteArray selfHostTenant,
                  QJsonObject claimValidators, const Clock &clock);

    struct Outcome
    {
        tenants::TenantPtr tenant; // set when authorised
        QJsonObject claims;
        wire::HttpResponse refusal; // otherwise
    };
    Outcome authorise(const wire::HttpRequest &request) const;
    // Tenant lookup only (GET /api/ping).
    tenants::TenantPtr tenantFor(const wire::HttpRequest &request) const;

private:
    const tenants::TenantDirectory &m_tenants;
    QByteArray m_selfHostTenant;
    QJsonObject m_claimValidators;
    const Clock &m_clock;
};

// {"message": text} with CORS headers.
wire::HttpResponse messageResponse(int status, const QString &text);

} // namespace rt::http
