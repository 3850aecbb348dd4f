#pragma once

#include <QByteArray>
#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QString>

#include <memory>
#include <optional>

namespace rt::auth {
class KeySet;
}

namespace rt::tenants {

// Limits applied when a tenant row leaves a field unset (TENANT_MAX_* and friends).
struct TenantDefaults
{
    int maxConcurrentUsers = 200;
    int maxEventsPerSecond = 100;
    int maxBytesPerSecond = 100'000;
    int maxChannelsPerClient = 100;
    int maxJoinsPerSecond = 100;
    int maxPresenceEventsPerSecond = 1000;
    int maxPayloadSizeInKb = 3000;
    int clientPresenceMaxCalls = 5;
    int clientPresenceWindowMs = 30'000;
    int historySize = 100;
    int historyTtlSeconds = 120;
};

// Bounds of history_size and history_ttl_seconds (each topic's retained broadcasts; 0 turns
// history and positions off).
inline constexpr int MaxHistorySize = 100'000;
inline constexpr int MaxHistoryTtlSeconds = 86'400;

// A tenant extension, e.g. {"type":"postgres_cdc_rls","settings":{db_host,...}}.
struct Extension
{
    QString type;
    QJsonObject settings; // decrypted: what the server uses
    QDateTime insertedAt;
    QDateTime updatedAt;
    QJsonObject storedSettings; // as stored (secrets encrypted): what the tenant API shows
};

// One tenant as configured in the control plane. Immutable once published: workers share it
// through std::shared_ptr<const Tenant>, so a change is a new Tenant, never an edit.
struct Tenant
{
    QString id; // uuid
    QByteArray externalId; // the first DNS label of the Host header
    QString name;
    QByteArray jwtSecret;
    QByteArray jwtJwks; // JSON text {"keys":[...]} or empty
    std::shared_ptr<const auth::KeySet> keys; // built from jwtSecret + jwtJwks

    int maxConcurrentUsers = 0;
    int maxEventsPerSecond = 0;
    int maxBytesPerSecond = 0;
    int maxChannelsPerClient = 0;
    int maxJoinsPerSecond = 0;
    int maxPresenceEventsPerSecond = 0;
    int maxPayloadSizeInKb = 0;
    std::optional<int> maxClientPresenceEventsPerWindow;
    std::optional<int> clientPresenceWindowMs;
    // Per topic: the last historySize broadcasts no older than historyTtlSeconds are kept for
    // recovery (docs/design-notes.md, "Positions, history and recovery"); 0 turns it off.
    int historySize = 100;
    int historyTtlSeconds = 120;
    bool suspend = false;
    bool privateOnly = false;
    bool presenceEnabled = false;
    QString postgresCdcDefault = QStringLiteral("postgres_cdc_rls");
    QString broadcastAdapter = QStringLiteral("gen_rpc");
    int migrationsRan = 0;
    QJsonObject featureFlags;
    QList<Extension> extensions;
    QDateTime insertedAt;
    QDateTime updatedAt;

    // The postgres_cdc_rls extension, if the tenant has a database.
    const Extension *databaseExtension() const;
    bool hasDatabase() const { return databaseExtension() != nullptr; }
    // Payload limit in bytes: max_payload_size_in_kb * 1000 + 500 (spec §4.3).
    qsizetype maxPayloadBytes() const
    {
        return static_cast<qsizetype>(maxPayloadSizeInKb) * 1000 + 500;
    }
};

using TenantPtr = std::shared_ptr<const Tenant>;

} // namespace rt::tenants
