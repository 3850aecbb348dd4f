#pragma once

#include <QHash>
#include <QList>
#include <QString>
#include <QStringList>
#include <QVariant>

#include <optional>

// Access to the throwaway PostgreSQL 15 cluster of the integration tests (pg-cluster.sh, started
// by the CTest fixture "postgres"): its connection settings, read from the env file that
// RT_PG_ENV names, and QPSQL connections for setting up and asserting on databases. Test code
// only. Everything here runs on the thread that creates it (QtSql connections are per thread).
namespace rt::testsupport {

// The environment variable naming pg-cluster.sh's env file (<fixture dir>/pg.env).
inline constexpr char kPgEnvVariable[] = "RT_PG_ENV";

struct PgEnv
{
    QString host;
    int port = 0;
    QString superUser; // trusted superuser (postgres)
    QString superPassword;
    QString user; // the realtime role: LOGIN REPLICATION, scram password
    QString password;
    QString controlDatabase; // realtime_control, owned by user
    QString tenantDatabase; // tenant_db, owned by user
    QString envFile; // where these came from

    // Reads the file that $RT_PG_ENV names. std::nullopt when unset or unreadable; *error (if
    // given) then says why, in one line naming the variable and the file.
    static std::optional<PgEnv> fromEnvironment(QString *error = nullptr);
    // Reads a KEY=value file as pg-cluster.sh writes it (shell quoting of values is undone).
    static std::optional<PgEnv> fromFile(const QString &path, QString *error = nullptr);
    // The raw KEY=value pairs of such a file (empty when unreadable).
    static QHash<QString, QString> parseEnvFile(const QString &path, bool *ok = nullptr);
};

// One QPSQL connection, as the superuser or as the realtime role, for test set-up and
// assertions. Not copyable; closed and removed in the destructor.
class PgSession
{
public:
    enum class Role { Super, Realtime };

    PgSession(const PgEnv &env, const QString &database, Role role = Role::Super);
    ~PgSession();
    PgSession(const PgSession &) = delete;
    PgSession &operator=(const PgSession &) = delete;

    bool isOpen() const { return m_open; }
    // The last error (connection or statement), one line; empty after success.
    QString lastError() const { return m_lastError; }

    // Runs one statement; false (and lastError()) on failure.
    bool exec(const QString &sql, const QVariantList &binds = {});
    // Every row of a query, each as its columns' values; std::nullopt on failure.
    std::optional<QList<QVariantList>> rows(const QString &sql, const QVariantList &binds = {});
    // The first column of every row as text (NULL as "<null>"); {"<error: ...>"} on failure, so
    // that a QCOMPARE shows the error.
    QStringList column(const QString &sql, const QVariantList &binds = {});
    // The first column of the first row; an invalid QVariant when there is none or on failure.
    QVariant scalar(const QString &sql, const QVariantList &binds = {});

private:
    QString m_name;
    bool m_open = false;
    QString m_lastError;
};

// A fresh, empty database owned by the realtime role, dropped (WITH (FORCE): lingering
// connections are ended) by the destructor. Names are unique in the cluster across processes.
class ScratchDatabase
{
public:
    explicit ScratchDatabase(const PgEnv &env, const QString &prefix = QStringLiteral("rt_test"));
    ~ScratchDatabase();
    ScratchDatabase(const ScratchDatabase &) = delete;
    ScratchDatabase &operator=(const ScratchDatabase &) = delete;

    bool isValid() const { return m_valid; }
    QString error() const { return m_error; }
    QString name() const { return m_name; }

private:
    PgEnv m_env;
    QString m_name;
    bool m_valid = false;
    QString m_error;
};

} // namespace rt::testsupport
