#pragma once

#include "server/tenants/tenant.h"

#include <QJsonObject>
#include <QList>
#include <QString>

#include <optional>

namespace rt::tenants {

// A tenant as written by an operator (seed file, self-host seed, tenant API): the fields of
// upstream's tenant input (spec §9.1). Unset optional fields take TenantDefaults.
struct TenantInput
{
    QByteArray externalId;
    QString name; // defaults to the external id
    QByteArray jwtSecret;
    QByteArray jwtJwks; // JSON text
    std::optional<int> maxConcurrentUsers;
    std::optional<int> maxEventsPerSecond;
    std::optional<int> maxBytesPerSecond;
    std::optional<int> maxChannelsPerClient;
    std::optional<int> maxJoinsPerSecond;
    std::optional<int> maxPresenceEventsPerSecond;
    std::optional<int> maxPayloadSizeInKb;
    std::optional<int> maxClientPresenceEventsPerWindow;
    std::optional<int> clientPresenceWindowMs;
    bool suspend = false;
    bool privateOnly = false;
    bool presenceEnabled = false;
    QList<Extension> extensions;
};

// Parses one tenant object ({"external_id":..., "jwt_secret":..., ...}). On failure returns the
// per-field errors ({"external_id":["can't be blank"], ...}) in upstream's shape.
struct TenantInputResult
{
    std::optional<TenantInput> input;
    QJsonObject errors;
};
TenantInputResult tenantInputFromJson(const QJsonObject &object);

} // namespace rt::tenants
