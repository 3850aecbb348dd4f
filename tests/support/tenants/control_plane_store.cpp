#include "tests/support/tenants/control_plane_store.h"

#include "tests/support/postgres/pg_env.h"

#include <QDir>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>

namespace rt::testsupport {

namespace {

using tenants::ControlPlaneSettings;

// The embedded default: a database file in a temporary directory that does not exist yet (the
// control plane creates its data directory on demand). Each statement opens its own connection,
// so that the file is never held open between the control plane's starts.
class SqliteStore final : public ControlPlaneStore
{
public:
    bool isValid() const { return m_dir.isValid(); }
    Kind kind() const override { return Kind::Sqlite; }
    ControlPlaneSettings settings(const QByteArray &key) const override
    {
        ControlPlaneSettings settings;
        settings.backend = ControlPlaneSettings::Backend::Sqlite;
        settings.sqlitePath = m_dir.filePath(QStringLiteral("data/control-plane.sqlite3"));
        settings.encryptionKey = key;
        return settings;
    }
    bool exec(const QString &sql) override { return run(sql, nullptr); }
    QStringList column(const QString &sql) override
    {
        QStringList values;
        if (!run(sql, &values)) {
            return { QStringLiteral("<error: %1>").arg(m_lastError) };
        }
        return values;
    }
    QString lastError() const override { return m_lastError; }

private:
    bool run(const QString &sql, QStringList *values)
    {
        const QString name = QStringLiteral("control-plane-store-%1").arg(++s_connections);
        bool ok = false;
        {
            QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
            db.setDatabaseName(settings({}).sqlitePath);
            QSqlQuery query(db);
            ok = db.open() && query.exec(withTables(sql));
            m_lastError = ok ? QString() : query.lastError().text() + db.lastError().text();
            while (ok && values && query.next()) {
                values->append(query.value(0).toString());
            }
        }
        QSqlDatabase::removeDatabase(name);
        return ok;
    }

    static inline int s_connections = 0;
    QTemporaryDir m_dir;
    QString m_lastError;
};

// A scratch database on the integration tests' PostgreSQL 15 cluster, dropped with the store.
class PostgresStore final : public ControlPlaneStore
{
public:
    explicit PostgresStore(const PgEnv &env) : m_env(env), m_database(env, QStringLiteral("rt_cp"))
    { }
    bool isValid() const { return m_database.isValid(); }
    QString error() const { return m_database.error(); }
    Kind kind() const override { return Kind::Postgres; }
    ControlPlaneSettings settings(const QByteArray &key) const override
    {
        ControlPlaneSettings settings;
        settings.backend = ControlPlaneSettings::Backend::Postgres;
        settings.encryptionKey = key;
        settings.host = m_env.host;
        settings.port = m_env.port;
        settings.database = m_database.name();
        settings.user = m_env.user;
        settings.password = m_env.password;
        return settings;
    }
    bool exec(const QString &sql) override
    {
        PgSession session(m_env, m_database.name());
        const bool ok = session.isOpen() && session.exec(withTables(sql));
        m_lastError = session.lastError();
        return ok;
    }
    QStringList column(const QString &sql) override
    {
        PgSession session(m_env, m_database.name());
        const QStringList values = session.column(withTables(sql));
        m_lastError = session.lastError();
        return values;
    }
    QString lastError() const override { return m_lastError; }

private:
    PgEnv m_env;
    ScratchDatabase m_database;
    QString m_lastError;
};

} // namespace

std::optional<ControlPlaneStore::Kind> ControlPlaneStore::kindNamed(const QString &name)
{
    if (name == QLatin1String("sqlite")) {
        return Kind::Sqlite;
    }
    if (name == QLatin1String("postgres")) {
        return Kind::Postgres;
    }
    return std::nullopt;
}

std::unique_ptr<ControlPlaneStore> ControlPlaneStore::create(Kind kind, QString *error)
{
    if (kind == Kind::Sqlite) {
        auto store = std::make_unique<SqliteStore>();
        if (!store->isValid()) {
            *error = QStringLiteral("cannot create a temporary directory");
            return nullptr;
        }
        return store;
    }
    const std::optional<PgEnv> env = PgEnv::fromEnvironment(error);
    if (!env) {
        return nullptr;
    }
    auto store = std::make_unique<PostgresStore>(*env);
    if (!store->isValid()) {
        *error = store->error();
        return nullptr;
    }
    return store;
}

QString ControlPlaneStore::withTables(QString sql) const
{
    const bool postgres = kind() == Kind::Postgres;
    const QString schema = postgres ? QStringLiteral("_realtime.") : QString();
    for (const char *table : { "tenants", "extensions" }) {
        sql.replace(QStringLiteral("{%1}").arg(QLatin1String(table)),
                    schema + QLatin1String(table));
    }
    sql.replace(QStringLiteral("{migrations}"), schema + QStringLiteral("qtrealtime_migrations"));
    sql.replace(QStringLiteral("{settings}"), schema + QStringLiteral("qtrealtime_settings"));
    return sql;
}

} // namespace rt::testsupport
