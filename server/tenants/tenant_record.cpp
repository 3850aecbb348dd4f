#include "server/tenants/tenant_record.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace rt::tenants {

namespace {

// A new record: the defaults, or (replace) the defaults under the old id and inserted_at.
Tenant freshRecord(const Tenant *before, const TenantDefaults &defaults,
                   const PatchContext &context)
{
    Tenant record;
    record.id = before ? before->id : context.newId;
    record.externalId = context.externalId;
    record.name = QString::fromUtf8(context.externalId);
    record.maxConcurrentUsers = defaults.maxConcurrentUsers;
    record.maxEventsPerSecond = defaults.maxEventsPerSecond;
    record.maxBytesPerSecond = defaults.maxBytesPerSecond;
    record.maxChannelsPerClient = defaults.maxChannelsPerClient;
    record.maxJoinsPerSecond = defaults.maxJoinsPerSecond;
    record.maxPresenceEventsPerSecond = defaults.maxPresenceEventsPerSecond;
    record.maxPayloadSizeInKb = defaults.maxPayloadSizeInKb;
    record.historySize = defaults.historySize;
    record.historyTtlSeconds = defaults.historyTtlSeconds;
    record.insertedAt = before ? before->insertedAt : context.now;
    return record;
}

template <typename T, typename U>
void set(T &field, const std::optional<U> &value)
{
    if (value) {
        field = *value;
    }
}

void applyFields(Tenant &record, const TenantPatch &patch)
{
    set(record.jwtSecret, patch.jwtSecret);
    set(record.jwtJwks, patch.jwtJwks);
    set(record.maxConcurrentUsers, patch.maxConcurrentUsers);
    set(record.maxEventsPerSecond, patch.maxEventsPerSecond);
    set(record.maxBytesPerSecond, patch.maxBytesPerSecond);
    set(record.maxChannelsPerClient, patch.maxChannelsPerClient);
    set(record.maxJoinsPerSecond, patch.maxJoinsPerSecond);
    set(record.maxPresenceEventsPerSecond, patch.maxPresenceEventsPerSecond);
    set(record.maxPayloadSizeInKb, patch.maxPayloadSizeInKb);
    set(record.migrationsRan, patch.migrationsRan);
    set(record.maxClientPresenceEventsPerWindow, patch.maxClientPresenceEventsPerWindow);
    set(record.clientPresenceWindowMs, patch.clientPresenceWindowMs);
    set(record.historySize, patch.historySize);
    set(record.historyTtlSeconds, patch.historyTtlSeconds);
    set(record.suspend, patch.suspend);
    set(record.privateOnly, patch.privateOnly);
    set(record.presenceEnabled, patch.presenceEnabled);
    set(record.postgresCdcDefault, patch.postgresCdcDefault);
    set(record.broadcastAdapter, patch.broadcastAdapter);
    set(record.featureFlags, patch.featureFlags);
    if (patch.extensions) {
        record.extensions = *patch.extensions;
        for (Extension &extension : record.extensions) {
            // Upstream's alias, stored under the real type so its secrets get encrypted.
            if (extension.type == QLatin1String("postgres")) {
                extension.type = QStringLiteral("postgres_cdc_rls");
            }
        }
    }
}

QVariant nullableInt(const std::optional<int> &value)
{
    return value ? QVariant(*value) : QVariant();
}

template <typename Read>
TenantColumn column(const char *name, Read read)
{
    return { QLatin1StringView(name), [read](const Tenant &tenant, const EncryptSecret &) {
                return QVariant(read(tenant));
            } };
}

} // namespace

Result<Tenant, QJsonObject> applyPatch(const Tenant *before, const TenantPatch &patch,
                                       const TenantDefaults &defaults, const PatchContext &context)
{
    const bool create = before == nullptr || context.replace;
    Tenant record = create ? freshRecord(before, defaults, context) : *before;
    // Upstream forces the name of a tenant created through the API to its external id.
    if (patch.name && !(create && !context.replace)) {
        record.name = *patch.name;
    }
    applyFields(record, patch);
    if (record.jwtSecret.isEmpty() && record.jwtJwks.isEmpty()) {
        QJsonObject errors;
        errors.insert(
                QStringLiteral("jwt_secret"),
                QJsonArray{ QStringLiteral("either jwt_secret or jwt_jwks must be provided") });
        return errors;
    }
    record.updatedAt = context.now;
    return record;
}

bool storedDiffer(const Tenant &a, const Tenant &b)
{
    if (a.extensions.size() != b.extensions.size()) {
        return true;
    }
    for (qsizetype i = 0; i < a.extensions.size(); ++i) {
        const Extension &x = a.extensions.at(i);
        const Extension &y = b.extensions.at(i);
        if (x.type != y.type || x.settings != y.settings || x.storedSettings != y.storedSettings
            || x.insertedAt != y.insertedAt || x.updatedAt != y.updatedAt) {
            return true;
        }
    }
    return a.id != b.id || a.name != b.name || a.jwtSecret != b.jwtSecret || a.jwtJwks != b.jwtJwks
            || a.maxConcurrentUsers != b.maxConcurrentUsers
            || a.maxEventsPerSecond != b.maxEventsPerSecond
            || a.maxBytesPerSecond != b.maxBytesPerSecond
            || a.maxChannelsPerClient != b.maxChannelsPerClient
            || a.maxJoinsPerSecond != b.maxJoinsPerSecond
            || a.maxPresenceEventsPerSecond != b.maxPresenceEventsPerSecond
            || a.maxPayloadSizeInKb != b.maxPayloadSizeInKb
            || a.maxClientPresenceEventsPerWindow != b.maxClientPresenceEventsPerWindow
            || a.clientPresenceWindowMs != b.clientPresenceWindowMs
            || a.historySize != b.historySize || a.historyTtlSeconds != b.historyTtlSeconds
            || a.suspend != b.suspend || a.privateOnly != b.privateOnly
            || a.presenceEnabled != b.presenceEnabled
            || a.postgresCdcDefault != b.postgresCdcDefault
            || a.broadcastAdapter != b.broadcastAdapter || a.migrationsRan != b.migrationsRan
            || a.featureFlags != b.featureFlags || a.insertedAt != b.insertedAt
            || a.updatedAt != b.updatedAt;
}

bool credentialsDiffer(const Tenant &before, const Tenant &after)
{
    return before.jwtSecret != after.jwtSecret || before.jwtJwks != after.jwtJwks
            || before.suspend != after.suspend || before.privateOnly != after.privateOnly;
}

const std::vector<TenantColumn> &writtenTenantColumns()
{
    static const std::vector<TenantColumn> Columns{
        column("name", [](const Tenant &t) { return t.name.isNull() ? QVariant() : t.name; }),
        { QLatin1StringView("jwt_secret"),
          [](const Tenant &t, const EncryptSecret &encrypt) {
              return t.jwtSecret.isEmpty() ? QVariant()
                                           : QVariant(QString::fromLatin1(encrypt(
                                                   QLatin1StringView("jwt_secret"), t.jwtSecret)));
          } },
        column("jwt_jwks",
               [](const Tenant &t) {
                   return t.jwtJwks.isEmpty() ? QVariant() : QString::fromUtf8(t.jwtJwks);
               }),
        column("max_concurrent_users", [](const Tenant &t) { return t.maxConcurrentUsers; }),
        column("max_events_per_second", [](const Tenant &t) { return t.maxEventsPerSecond; }),
        column("max_bytes_per_second", [](const Tenant &t) { return t.maxBytesPerSecond; }),
        column("max_channels_per_client", [](const Tenant &t) { return t.maxChannelsPerClient; }),
        column("max_joins_per_second", [](const Tenant &t) { return t.maxJoinsPerSecond; }),
        column("max_presence_events_per_second",
               [](const Tenant &t) { return t.maxPresenceEventsPerSecond; }),
        column("max_payload_size_in_kb", [](const Tenant &t) { return t.maxPayloadSizeInKb; }),
        column("max_client_presence_events_per_window",
               [](const Tenant &t) { return nullableInt(t.maxClientPresenceEventsPerWindow); }),
        column("client_presence_window_ms",
               [](const Tenant &t) { return nullableInt(t.clientPresenceWindowMs); }),
        column("history_size", [](const Tenant &t) { return t.historySize; }),
        column("history_ttl_seconds", [](const Tenant &t) { return t.historyTtlSeconds; }),
        column("suspend", [](const Tenant &t) { return t.suspend; }),
        column("private_only", [](const Tenant &t) { return t.privateOnly; }),
        column("presence_enabled", [](const Tenant &t) { return t.presenceEnabled; }),
        column("postgres_cdc_default", [](const Tenant &t) { return t.postgresCdcDefault; }),
        column("migrations_ran", [](const Tenant &t) { return t.migrationsRan; }),
        column("broadcast_adapter", [](const Tenant &t) { return t.broadcastAdapter; }),
        column("feature_flags",
               [](const Tenant &t) {
                   return QString::fromUtf8(
                           QJsonDocument(t.featureFlags).toJson(QJsonDocument::Compact));
               }),
        column("updated_at", [](const Tenant &t) { return t.updatedAt.toString(Qt::ISODate); }),
    };
    return Columns;
}

} // namespace rt::tenants
