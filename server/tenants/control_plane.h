#pragma once

#include "server/tenants/secret_cipher.h"
#include "server/tenants/tenant.h"
#include "server/tenants/tenant_input.h"
#include "shared/core/result.h"

#include <QJsonObject>
#include <QObject>
#include <QSqlDatabase>

#include <optional>

class QSqlQuery;
class QSqlRecord;

namespace rt::tenants {

class TenantDirectory;

// Where tenants are stored: an SQLite file (the embedded default) or PostgreSQL (tables in
// schema _realtime), the same columns and rules either way, and how their secrets are encrypted.
struct ControlPlaneSettings
{
    enum class Backend { Sqlite, Postgres };
    Backend backend = Backend::Sqlite;
    QString sqlitePath; // Sqlite
    QString host; // Postgres
    int port = 5432;
    QString database;
    QString user;
    QString password;
    // DB_ENC_KEY (16 bytes), DB_ENC_KEY_GCM (32 bytes), DB_ENC_WRITE_GCM. For SQLite without a
    // key, one is generated in keyFile (0600) on first start.
    QByteArray encryptionKey;
    QByteArray encryptionKeyGcm;
    bool writeGcm = false;
    QString keyFile; // Sqlite only
};

// The control-plane database: migrations, encryption at rest, tenant reads and writes, and the
// TenantDirectory it keeps current. Lives on its own "db" thread because QtSql calls block;
// every method runs there. Other threads reach it by posting; it answers through signals or
// thread-safe handles (runtime::Mailbox).
class ControlPlane : public QObject
{
    Q_OBJECT
public:
    ControlPlane(ControlPlaneSettings settings, TenantDefaults defaults, TenantDirectory &directory,
                 QObject *parent = nullptr);
    ~ControlPlane() override;

    // Opens the database, checks the encryption key, applies pending migrations, replaces the
    // seed tenants, loads every tenant into the directory, then emits ready() (or failed()
    // with one clear message).
    void start(const QList<TenantInput> &seeds);

    enum class WriteMode {
        Upsert, // tenant API: create when missing (name = external id), else update given fields
        Replace, // seeds: the tenant becomes exactly the input
    };
    struct Written
    {
        bool created = false;
        TenantPtr tenant;
        // Upstream's side effects (docs/upstream/tenants-limits-metrics.md §8): sockets are
        // disconnected when jwt_secret, jwt_jwks, suspend or private_only changed.
        bool disconnectSockets = false;
        bool databaseSettingsChanged = false;
        bool eventLimitChanged = false;
        bool joinLimitChanged = false;
        bool presenceLimitChanged = false;
    };
    struct WriteFailure
    {
        int status = 422; // 422 with per-field errors, 500 with a message
        QJsonObject errors;
        QString message;
    };
    Result<Written, WriteFailure> writeTenant(const QByteArray &externalId,
                                              const TenantPatch &patch, WriteMode mode);
    // Deletes a tenant and its extensions; false when there was none.
    Result<bool> deleteTenant(const QByteArray &externalId);
    // Reads tenants from the database (not the directory).
    Result<TenantPtr> fetchTenant(const QByteArray &externalId);
    Result<QList<TenantPtr>> fetchAll();

    // Reloads every tenant (the cache's TTL): changes made by other nodes become visible, and
    // tenantChanged() is emitted for each tenant whose row changed or disappeared.
    void refresh();

Q_SIGNALS:
    void ready(int tenantCount);
    void failed(const QString &message);
    // A tenant was written, deleted or found changed on refresh. `disconnectSockets`: its
    // sockets must get "Server requested disconnect" and close (credentials or access changed,
    // or the tenant is gone).
    void tenantChanged(const QByteArray &externalId, bool disconnectSockets);

private:
    Result<bool> open();
    Result<bool> prepareCipher();
    Result<bool> migrate();
    Result<bool> verifyEncryptionKey();
    Result<bool> encryptPlaintextSecrets();
    Result<QList<Extension>> readExtensions(const QString &externalId);
    TenantPtr tenantFromRow(const QSqlRecord &row, const QList<Extension> &extensions) const;
    QJsonObject encryptSettings(const QString &type, const QJsonObject &settings) const;
    QString table(const char *name) const;
    QSqlDatabase database() const;

    ControlPlaneSettings m_settings;
    TenantDefaults m_defaults;
    TenantDirectory &m_directory;
    QString m_connectionName;
    std::optional<SecretCipher> m_cipher;
};

// Whether two tenants differ in what authorises sockets (so they must reconnect).
bool credentialsDiffer(const Tenant &before, const Tenant &after);

} // namespace rt::tenants
