#include "dashboard/api/tenant_changes.h"

namespace rt::dashboard {

QJsonObject TenantChanges::toRequestJson() const
{
    QJsonObject tenant = other;
    const auto set = [&tenant](const char *key, const auto &value) {
        if (value) {
            tenant.insert(QLatin1String(key), QJsonValue(*value));
        }
    };
    set("external_id", externalId);
    set("name", name);
    set("jwt_secret", jwtSecret);
    set("jwt_jwks", jwtJwks);
    set("max_concurrent_users", maxConcurrentUsers);
    set("max_channels_per_client", maxChannelsPerClient);
    set("max_events_per_second", maxEventsPerSecond);
    set("max_joins_per_second", maxJoinsPerSecond);
    set("private_only", privateOnly);
    set("presence_enabled", presenceEnabled);
    set("suspend", suspend);
    set("extensions", extensions);
    return QJsonObject{ { QStringLiteral("tenant"), tenant } };
}

} // namespace rt::dashboard
