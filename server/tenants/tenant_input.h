#pragma once

#include "server/tenants/tenant.h"

#include <QJsonObject>
#include <QList>
#include <QString>

#include <optional>

namespace rt::tenants {

// The fields of a tenant that a request sets (spec §9.1, docs/upstream/tenants-limits-metrics.md
// §3). An absent field leaves the stored value (update) or takes its default (create).
struct TenantPatch
{
    std::optional<QString> name;
    std::optional<QByteArray> jwtSecret; // empty: clear
    std::optional<QByteArray> jwtJwks; // JSON text of {"keys":[...]}; empty: clear
    std::optional<int> maxConcurrentUsers;
    std::optional<int> maxEventsPerSecond;
    std::optional<int> maxBytesPerSecond;
    std::optional<int> maxChannelsPerClient;
    std::optional<int> maxJoinsPerSecond;
    std::optional<int> maxPresenceEventsPerSecond;
    std::optional<int> maxPayloadSizeInKb;
    // Nullable columns: outer = present in the request, inner = the value or null.
    std::optional<std::optional<int>> maxClientPresenceEventsPerWindow;
    std::optional<std::optional<int>> clientPresenceWindowMs;
    std::optional<int> historySize;
    std::optional<int> historyTtlSeconds;
    std::optional<bool> suspend;
    std::optional<bool> privateOnly;
    std::optional<bool> presenceEnabled;
    std::optional<QString> postgresCdcDefault;
    std::optional<int> migrationsRan;
    std::optional<QString> broadcastAdapter;
    std::optional<QJsonObject> featureFlags;
    std::optional<QList<Extension>> extensions; // present: replaces every extension
};

// Reads a tenant object of the tenant API (or a seed file) with upstream's casting rules:
// integers as numbers or numeric strings, booleans as true/false or "true"/"false"/"1"/"0",
// empty strings as null, unknown keys ignored; postgres_cdc_rls settings get their defaults
// and must carry region, db_host, db_port, db_name, db_user and db_password as strings.
// Errors use upstream's 422 shape: {"field":["message"],"extensions":[{},{"settings":[...]}]}.
struct TenantPatchResult
{
    std::optional<QByteArray> externalId; // the body's external_id, if any
    TenantPatch patch;
    QJsonObject errors; // empty when valid
};
TenantPatchResult parseTenantPatch(const QJsonObject &object);

// The members of the top-level "tenant" object of a request body whose values are JSON numbers
// written with a fraction or an exponent (1.0, 1e2). Parsed JSON cannot tell 1.0 from 1, but
// upstream's integer casting refuses the former, so the API reads the raw text. Pure; stops
// quietly on malformed input (the JSON parser reports that).
QStringList floatLiteralTenantFields(QByteArrayView body);

// Adds "is invalid" for every integer field of the tenant API among `fields`.
void refuseFloatIntegers(const QStringList &fields, QJsonObject &errors);

// The body of a tenant write (POST /api/tenants, PUT and PATCH /api/tenants/<id>), read as
// upstream's controller reads it: JSON whose "tenant" member is an object, that object through
// parseTenantPatch(), and integer fields written as 1.0 or 1e2 refused
// (floatLiteralTenantFields()). Pure; the bytes are the client's.
struct TenantWriteBody
{
    enum class Status {
        Read, // `parsed` holds the patch and its field errors
        NotJson, // not JSON at all: the parser's plain-text 400
        NoTenantObject, // JSON without a "tenant" object: upstream's 400
    };
    Status status = Status::Read;
    TenantPatchResult parsed; // Read only
};
TenantWriteBody readTenantWriteBody(const QByteArray &body);

// A complete tenant as seeded at start (SEED_SELF_HOST, SEED_TENANTS_FILE): the same fields,
// external_id required, and a JWT secret or JWKS required.
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
    std::optional<int> historySize;
    std::optional<int> historyTtlSeconds;
    bool suspend = false;
    bool privateOnly = false;
    bool presenceEnabled = false;
    QList<Extension> extensions;

    TenantPatch toPatch() const;
};

struct TenantInputResult
{
    std::optional<TenantInput> input;
    QJsonObject errors;
};
TenantInputResult tenantInputFromJson(const QJsonObject &object);

// The settings keys of a database extension that are stored encrypted.
const QStringList &encryptedSettingKeys();

} // namespace rt::tenants
