#include "server/postgres/migrations.h"

#include "server/postgres/connection.h"
#include "server/postgres/logging.h"
#include "server/postgres/sql_text.h"

#include <QDir>
#include <QFile>
#include <QRegularExpression>

#include <algorithm>

namespace rt::postgres {

namespace {

// The SQLSTATE the per-migration check raises when another server applied the version first.
constexpr char AlreadyAppliedState[] = "RTM01";

QByteArray lockStatement()
{
    return QByteArrayLiteral("SELECT pg_advisory_xact_lock(")
            + QByteArray::number(MigrationRunner::LockKey) + QByteArrayLiteral(");\n");
}

} // namespace

QList<Migration> migrationsFromDirectory(const QString &directory)
{
    static const QRegularExpression VersionedFile(QStringLiteral("^([0-9]{1,18})_.*\\.sql$"));
    QList<Migration> migrations;
    const QDir dir(directory);
    const QStringList files = dir.entryList(QDir::Files, QDir::Name);
    for (const QString &file : files) {
        const QRegularExpressionMatch match = VersionedFile.match(file);
        if (!match.hasMatch()) {
            qCWarning(lcPostgres, "ignoring %s: not a migration file name (NNNN_name.sql)",
                      qPrintable(dir.filePath(file)));
            continue;
        }
        QFile input(dir.filePath(file));
        if (!input.open(QIODevice::ReadOnly)) {
            qCWarning(lcPostgres, "cannot read migration %s: %s", qPrintable(input.fileName()),
                      qPrintable(input.errorString()));
            continue;
        }
        Migration migration;
        migration.version = match.captured(1).toLongLong();
        migration.name = file;
        migration.sql = input.readAll();
        migrations.append(std::move(migration));
    }
    std::stable_sort(migrations.begin(), migrations.end(),
                     [](const Migration &a, const Migration &b) { return a.version < b.version; });
    return migrations;
}

QList<Migration> tenantMigrations()
{
    return migrationsFromDirectory(QStringLiteral(":/sql/tenant"));
}

MigrationRunner::MigrationRunner(QObject *parent) : QObject(parent) { }

void MigrationRunner::start(Connection *connection, QList<Migration> migrations)
{
    if (m_started) {
        qCWarning(lcPostgres, "MigrationRunner::start() called twice, ignored");
        return;
    }
    m_started = true;
    m_connection = connection;
    m_migrations = std::move(migrations);
    std::stable_sort(m_migrations.begin(), m_migrations.end(),
                     [](const Migration &a, const Migration &b) { return a.version < b.version; });
    for (qsizetype index = 1; index < m_migrations.size(); ++index) {
        if (m_migrations.at(index).version == m_migrations.at(index - 1).version) {
            PgError error;
            error.message =
                    QStringLiteral("migrations %1 and %2 have the same version %3")
                            .arg(m_migrations.at(index - 1).name, m_migrations.at(index).name)
                            .arg(m_migrations.at(index).version);
            QMetaObject::invokeMethod(
                    this, [this, error] { finishWithError(error); }, Qt::QueuedConnection);
            return;
        }
    }
    if (!m_connection) {
        PgError error;
        error.message = QStringLiteral("no connection to migrate");
        QMetaObject::invokeMethod(
                this, [this, error] { finishWithError(error); }, Qt::QueuedConnection);
        return;
    }
    // The bookkeeping table, created under the lock too: concurrent CREATE ... IF NOT EXISTS
    // can otherwise fail with a unique violation in the catalogs.
    const QByteArray setup = lockStatement()
            + QByteArrayLiteral("CREATE SCHEMA IF NOT EXISTS realtime;\n"
                                "CREATE TABLE IF NOT EXISTS realtime.qtrealtime_migrations (\n"
                                "    version bigint PRIMARY KEY,\n"
                                "    name text NOT NULL,\n"
                                "    applied_at timestamptz NOT NULL DEFAULT now()\n"
                                ");\n");
    QPointer<MigrationRunner> self(this);
    m_connection->runScript(setup, [self](const StatementResult &result) {
        if (!self) {
            return;
        }
        if (!result.ok()) {
            PgError error = result.error();
            error.message = QStringLiteral("creating realtime.qtrealtime_migrations failed: ")
                    + error.message;
            self->finishWithError(error);
            return;
        }
        self->loadApplied();
    });
}

void MigrationRunner::loadApplied()
{
    if (!m_connection) {
        PgError error;
        error.message = QStringLiteral("the connection was destroyed while migrating");
        error.connectionLost = true;
        finishWithError(error);
        return;
    }
    QPointer<MigrationRunner> self(this);
    m_connection->run(
            Statement{ QByteArrayLiteral("SELECT version FROM realtime.qtrealtime_migrations"),
                       {} },
            [self](StatementResult result) {
                if (!self) {
                    return;
                }
                if (!result.ok()) {
                    self->finishWithError(result.error());
                    return;
                }
                for (int row = 0; row < result->rowCount(); ++row) {
                    self->m_applied.insert(result->value(row, 0).toLongLong());
                }
                self->applyNext();
            });
}

void MigrationRunner::applyNext()
{
    while (m_next < m_migrations.size() && m_applied.contains(m_migrations.at(m_next).version)) {
        ++m_next;
    }
    if (m_next >= m_migrations.size()) {
        qCDebug(lcPostgres, "migrations done, %d applied", m_appliedCount);
        Q_EMIT done(m_appliedCount);
        return;
    }
    if (!m_connection) {
        PgError error;
        error.message = QStringLiteral("the connection was destroyed while migrating");
        error.connectionLost = true;
        finishWithError(error);
        return;
    }
    const Migration &migration = m_migrations.at(m_next);
    const QByteArray version = QByteArray::number(migration.version);
    // One simple-query script = one implicit transaction: the lock, the re-check (another server
    // may have applied this version while we waited for the lock), the migration, its row.
    // The "\n;\n" ends the migration's last statement even after a trailing "--" comment.
    const QByteArray script = lockStatement()
            + QByteArrayLiteral("DO $rt_migration_check$ BEGIN\n"
                                "  IF EXISTS (SELECT 1 FROM realtime.qtrealtime_migrations"
                                " WHERE version = ")
            + version
            + QByteArrayLiteral(") THEN\n"
                                "    RAISE EXCEPTION 'migration already applied' USING ERRCODE = '")
            + AlreadyAppliedState
            + QByteArrayLiteral("';\n"
                                "  END IF;\n"
                                "END $rt_migration_check$;\n")
            + migration.sql
            + QByteArrayLiteral("\n;\nINSERT INTO realtime.qtrealtime_migrations (version, name)"
                                " VALUES (")
            + version + QByteArrayLiteral(", ") + quoteLiteral(migration.name.toUtf8())
            + QByteArrayLiteral(");\n");
    QPointer<MigrationRunner> self(this);
    const QString name = migration.name;
    const qint64 number = migration.version;
    m_connection->runScript(script, [self, name, number](const StatementResult &result) {
        if (!self) {
            return;
        }
        if (!result.ok() && result.error().sqlState != AlreadyAppliedState) {
            PgError error = result.error();
            error.message = QStringLiteral("migration %1 failed: %2").arg(name, error.message);
            self->finishWithError(error);
            return;
        }
        if (result.ok()) {
            qCInfo(lcPostgres, "applied migration %s", qPrintable(name));
            ++self->m_appliedCount;
        }
        self->m_applied.insert(number);
        ++self->m_next;
        self->applyNext();
    });
}

void MigrationRunner::finishWithError(const PgError &error)
{
    qCWarning(lcPostgres, "migrations failed: %s", qPrintable(error.text()));
    Q_EMIT failed(error);
}

} // namespace rt::postgres
