#pragma once

#include "server/tenants/tenant.h"
#include "shared/core/result.h"

#include <QJsonObject>
#include <QObject>
#include <QSqlDatabase>

#include <optional>

namespace rt::tenants {

class TenantDirectory;

// Where tenants are stored: an SQLite file (the embedded default) or PostgreSQL (tables in
// schema _realtime), the same columns and rules either way.
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
};

// The self-hosted tenant created at start when SEED_SELF_HOST is set (replaced if it exists,
// like upstream's seed).
struct SelfHostSeed
{
    QByteArray externalId;
    QByteArray jwtSecret;
    QByteArray jwtJwks; // API_JWT_JWKS, optional
    // postgres_cdc_rls settings when the tenant has a database (DB_* given), else empty.
    QJsonObject databaseSettings;
};

// The control-plane database: migrations, the self-host seed, and loading tenants into the
// TenantDirectory. Lives on its own "db" thread because QtSql calls block; it is created there
// and every method runs there. Results reach other threads through queued signals.
class ControlPlane : public QObject
{
    Q_OBJECT
public:
    ControlPlane(ControlPlaneSettings settings, TenantDefaults defaults, TenantDirectory &directory,
                 QObject *parent = nullptr);
    ~ControlPlane() override;

    // Opens the database, applies pending migrations, seeds, loads every tenant into the
    // directory, then emits ready() (or failed() with one clear message).
    void start(const std::optional<SelfHostSeed> &seed);

    // Builds a Tenant from a validated row (used by loading and by tests).
    static TenantPtr tenantFromRow(const QSqlRecord &tenantRow, const QList<Extension> &extensions);

Q_SIGNALS:
    void ready(int tenantCount);
    void failed(const QString &message);

private:
    Result<bool> open();
    Result<bool> migrate();
    Result<bool> seed(const SelfHostSeed &seed);
    Result<QList<TenantPtr>> loadAll();
    QString table(const char *name) const;

    ControlPlaneSettings m_settings;
    TenantDefaults m_defaults;
    TenantDirectory &m_directory;
    QString m_connectionName;
};

} // namespace rt::tenants
