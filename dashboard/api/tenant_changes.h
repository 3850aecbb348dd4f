#pragma once

#include <QJsonArray>
#include <QJsonObject>
#include <QString>

#include <optional>

namespace rt::dashboard {

// The fields a POST /api/tenants (create) or PATCH /api/tenants/<id> (update) sends; absent
// fields are left as they are (update) or take the server's defaults (create). What the API
// answers is an rt::api::TenantSummary (shared/api/tenant_summary.h).
struct TenantChanges
{
    std::optional<QString> externalId; // create: required
    std::optional<QString> name;
    std::optional<QString> jwtSecret; // create: this or jwtJwks is required
    std::optional<QJsonObject> jwtJwks;
    std::optional<qint64> maxConcurrentUsers;
    std::optional<qint64> maxChannelsPerClient;
    std::optional<qint64> maxEventsPerSecond;
    std::optional<qint64> maxJoinsPerSecond;
    std::optional<bool> privateOnly;
    std::optional<bool> presenceEnabled;
    // The tenant row's flag: its clients are disconnected and refused. The API never shows it
    // back (upstream's view leaves it out).
    std::optional<bool> suspend;
    std::optional<QJsonArray> extensions; // replaces every extension
    QJsonObject other; // any further field of the tenant API, sent as it is

    // The request body: {"tenant": {...}}.
    QJsonObject toRequestJson() const;
};

} // namespace rt::dashboard
