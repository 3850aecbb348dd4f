#pragma once

#include "server/auth/jwt.h"
#include "server/limits/rate_counter.h"
#include "server/tenants/tenant.h"
#include "server/tenants/tenant_directory.h"
#include "shared/protocol/phoenix_message.h"

#include <QByteArray>
#include <QJsonObject>

#include <memory>

namespace rt::channels {

// What the channels of one client socket share: who connected and under which token. Owned by
// the gateway session; worker thread only.
struct SocketState
{
    QByteArray tenantId;
    tenants::TenantPtr tenant; // as of connect; joins re-read the directory
    std::shared_ptr<tenants::TenantUsage> usage;
    QByteArray token; // the connect-time token (apikey / x-api-key), cleaned
    auth::VerifiedToken claims; // of `token`
    QJsonObject xHeaders; // the x-* headers of the upgrade request (for RLS, spec §7.1)
    protocol::Vsn vsn = protocol::Vsn::V1;
    int channelCount = 0;
    bool countedAsUser = false; // counted in usage->connectedUsers (after a first join)
    std::shared_ptr<limits::RateCounter> joins; // the tenant's joins counter, from the first join
};

} // namespace rt::channels
