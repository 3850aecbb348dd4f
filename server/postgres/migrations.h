#pragma once

#include "server/postgres/query_result.h"

#include <QObject>
#include <QPointer>
#include <QSet>
#include <QString>

namespace rt::postgres {

class Connection;

// One schema migration: SQL run as one script (several statements, $$ bodies allowed; no
// transaction control of its own: the runner wraps it in a transaction with its version row).
struct Migration
{
    qint64 version = 0;
    QString name; // the file name, e.g. "0001_roles_and_schema.sql"
    QByteArray sql;
};

// The migrations in a directory (a Qt resource path or a real one): files named
// "<digits>_<anything>.sql", version = the digits, sorted by version. Other files are ignored
// (with a warning).
QList<Migration> migrationsFromDirectory(const QString &directory);
// The tenant-database migrations built into the binary: ":/sql/tenant/NNNN_name.sql".
QList<Migration> tenantMigrations();

// Applies migrations in version order, skipping versions recorded in
// realtime.qtrealtime_migrations (schema and table created when absent). Each migration runs in
// its own transaction together with its version row, under pg_advisory_xact_lock(LockKey), and
// re-checks its version once it holds the lock: servers migrating the same database at the
// same time apply each migration exactly once. Stops at the first failure; the migrations
// before it stay applied, the failing one is rolled back and not recorded.
// Asynchronous: done(applied) or failed(error naming the migration file). One start() per
// runner. Lives on the thread of the Connection it is given (the creating thread).
class MigrationRunner : public QObject
{
    Q_OBJECT
public:
    // The advisory lock key ("RTMIGRAT" as a big-endian integer).
    static constexpr qint64 LockKey = 0x52544D4947524154;

    explicit MigrationRunner(QObject *parent = nullptr);

    void start(Connection *connection, QList<Migration> migrations);

Q_SIGNALS:
    void done(int applied);
    void failed(rt::postgres::PgError error);

private:
    void loadApplied();
    void applyNext();
    void finishWithError(const PgError &error);

    QPointer<Connection> m_connection;
    QList<Migration> m_migrations;
    QSet<qint64> m_applied;
    int m_next = 0;
    int m_appliedCount = 0;
    bool m_started = false;
};

} // namespace rt::postgres
