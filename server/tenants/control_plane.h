#pragma once

#include "server/tenants/tenant.h"
#include "server/tenants/tenant_input.h"
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

// The control-plane database: migrations, seed tenants, and loading tenants into the
// TenantDirectory. Lives on its own "db" thread because QtSql calls block; it is created there
// and every method runs there. Results reach other threads through queued signals.
class ControlPlane : public QObject
{
    Q_OBJECT
public:
    ControlPlane(ControlPlaneSettings settings, TenantDefaults defaults, TenantDirectory &directory,
                 QObject *parent = nullptr);
    ~ControlPlane() override;

    // Opens the database, applies pending migrations, upserts the seed tenants (replacing
    // tenants of the same external id, like upstream's self-host seed), loads every tenant into
    // the directory, then emits ready() (or failed() with one clear message).
    void start(const QList<TenantInput> &seeds);

    // Builds a Tenant from a validated row (used by loading and by tests).
    static TenantPtr tenantFromRow(const QSqlRecord &tenantRow, const QList<Extension> &extensions);

Q_SIGNALS:
    void ready(int tenantCount);
    void failed(const QString &message);

private:
    Result<bool> open();
    Result<bool> migrate();
    Result<bool> upsert(const TenantInput &input);
    Result<QList<TenantPtr>> loadAll();
    QString table(const char *name) const;

    ControlPlaneSettings m_settings;
    TenantDefaults m_defaults;
    TenantDirectory &m_directory;
    QString m_connectionName;
};

} // namespace rt::tenants
