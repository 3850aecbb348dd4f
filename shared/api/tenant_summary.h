#pragma once

#include "shared/core/result.h"

#include <QByteArrayView>
#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QString>

#include <optional>

// One tenant as the tenant management API lists it (GET /api/tenants -> {"data": [...]}, GET,
// POST and PUT /api/tenants/:id -> {"data": {...}}; docs/upstream/tenants-limits-metrics.md §2.2):
// only what that API renders — secrets and most limits are never returned, and neither is
// `suspend`. Reading is strict about types (a field of the wrong type is an error naming its path)
// and lenient about absence (missing fields keep their defaults), like cluster_snapshot.h.
namespace rt::api {

struct TenantExtensionSummary
{
    QString type; // e.g. "postgres_cdc_rls"
    QDateTime insertedAt; // UTC
    QDateTime updatedAt; // UTC
    QJsonObject settings; // as stored: secrets encrypted, never db_password

    friend bool operator==(const TenantExtensionSummary &,
                           const TenantExtensionSummary &) = default;
};

struct TenantSummary
{
    QString id; // uuid
    QString externalId;
    std::optional<QString> name; // null in JSON: nullopt
    qint64 maxConcurrentUsers = 0;
    qint64 maxChannelsPerClient = 0;
    qint64 maxEventsPerSecond = 0;
    qint64 maxJoinsPerSecond = 0;
    QDateTime insertedAt; // UTC, second precision; invalid when absent
    bool privateOnly = false;
    bool presenceEnabled = false;
    std::optional<qint64> maxClientPresenceEventsPerWindow; // nullopt: the server's default
    std::optional<qint64> clientPresenceWindowMs; // nullopt: the server's default
    QList<TenantExtensionSummary> extensions;

    // The tenant object as the API renders it (timestamps "YYYY-MM-DDTHH:MM:SS", UTC).
    QJsonObject toJson() const;
    static Result<TenantSummary> fromJson(const QJsonObject &object);
    // {"data": [<tenant>, ...]}, the list's answer.
    static Result<QList<TenantSummary>> listFromJson(QByteArrayView json);
    // {"data": <tenant>}, the answer of show, create and update.
    static Result<TenantSummary> dataFromJson(QByteArrayView json);

    friend bool operator==(const TenantSummary &, const TenantSummary &) = default;
};

} // namespace rt::api
