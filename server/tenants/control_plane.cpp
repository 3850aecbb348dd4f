#include "server/tenants/control_plane.h"

#include "server/auth/jwt.h"
#include "server/tenants/logging.h"
#include "server/tenants/tenant_directory.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QSqlError>
#include <QSqlQuery>
#include <QSqlRecord>
#include <QUuid>

#include <atomic>

namespace rt::tenants {

namespace {

QString newUuid()
{
    return QUuid::createUuid().toString(QUuid::WithoutBraces);
}

QString nowText()
{
    return QDateTime::currentDateTimeUtc().toString(Qt::ISODate);
}

QDateTime parseTimestamp(const QVariant &value)
{
    if (value.metaType().id() == QMetaType::QDateTime) {
        QDateTime stamp = value.toDateTime();
        stamp.setTimeSpec(Qt::UTC);
        return stamp;
    }
    QDateTime stamp = QDateTime::fromString(value.toString(), Qt::ISODate);
    stamp.setTimeSpec(Qt::UTC);
    return stamp;
}

QJsonObject parseObject(const QVariant &value)
{
    return QJsonDocument::fromJson(value.toString().toUtf8()).object();
}

std::optional<int> optionalInt(const QVariant &value)
{
    if (value.isNull()) {
        return std::nullopt;
    }
    return value.toInt();
}

QString describe(const QSqlError &error)
{
    const QString text = error.text().trimmed();
    return text.isEmpty() ? QStringLiteral("unknown database error") : text;
}

// Splits a migration file into statements: at ';' outside quotes, comments and $$ blocks
// (QtSql executes one statement per query).
QStringList splitStatements(const QString &sql)
{
    QStringList statements;
    QString current;
    bool inSingle = false;
    bool inDollar = false;
    for (qsizetype i = 0; i < sql.size(); ++i) {
        const QChar c = sql.at(i);
        if (!inSingle && !inDollar && c == u'-' && i + 1 < sql.size() && sql.at(i + 1) == u'-') {
            while (i < sql.size() && sql.at(i) != u'\n') {
                ++i;
            }
            current.append(u'\n');
            continue;
        }
        if (!inDollar && c == u'\'') {
            inSingle = !inSingle;
        } else if (!inSingle && c == u'$' && i + 1 < sql.size() && sql.at(i + 1) == u'$') {
            inDollar = !inDollar;
            current.append(c);
            ++i;
            current.append(sql.at(i));
            continue;
        } else if (!inSingle && !inDollar && c == u';') {
            if (!current.trimmed().isEmpty()) {
                statements.append(current.trimmed());
            }
            current.clear();
            continue;
        }
        current.append(c);
    }
    if (!current.trimmed().isEmpty()) {
        statements.append(current.trimmed());
    }
    return statements;
}

std::atomic<int> connectionCounter{ 0 };

} // namespace

ControlPlane::ControlPlane(ControlPlaneSettings settings, TenantDefaults defaults,
                           TenantDirectory &directory, QObject *parent)
    : QObject(parent),
      m_settings(std::move(settings)),
      m_defaults(defaults),
      m_directory(directory),
      m_connectionName(QStringLiteral("control-plane-%1").arg(++connectionCounter))
{ }

ControlPlane::~ControlPlane()
{
    if (QSqlDatabase::contains(m_connectionName)) {
        QSqlDatabase::database(m_connectionName, false).close();
        QSqlDatabase::removeDatabase(m_connectionName);
    }
}

QString ControlPlane::table(const char *name) const
{
    const QString bare = QString::fromLatin1(name);
    return m_settings.backend == ControlPlaneSettings::Backend::Postgres
            ? QStringLiteral("_realtime.") + bare
            : bare;
}

void ControlPlane::start(const QList<TenantInput> &seeds)
{
    Result<bool> step = open();
    if (step) {
        step = migrate();
    }
    for (const TenantInput &seed : seeds) {
        if (!step) {
            break;
        }
        step = upsert(seed);
    }
    if (!step) {
        Q_EMIT failed(step.error().message);
        return;
    }
    Result<QList<TenantPtr>> tenants = loadAll();
    if (!tenants) {
        Q_EMIT failed(tenants.error().message);
        return;
    }
    m_directory.replaceAll(*tenants);
    qCInfo(lcTenants) << "loaded" << tenants->size() << "tenant(s)";
    Q_EMIT ready(static_cast<int>(tenants->size()));
}

Result<bool> ControlPlane::open()
{
    const bool postgres = m_settings.backend == ControlPlaneSettings::Backend::Postgres;
    const QString driver = postgres ? QStringLiteral("QPSQL") : QStringLiteral("QSQLITE");
    if (!QSqlDatabase::isDriverAvailable(driver)) {
        return Error{ QStringLiteral("the Qt SQL driver %1 is not installed (Debian package %2)")
                              .arg(driver,
                                   postgres ? QStringLiteral("libqt6sql6-psql")
                                            : QStringLiteral("libqt6sql6-sqlite")) };
    }
    QSqlDatabase db = QSqlDatabase::addDatabase(driver, m_connectionName);
    if (postgres) {
        db.setHostName(m_settings.host);
        db.setPort(m_settings.port);
        db.setDatabaseName(m_settings.database);
        db.setUserName(m_settings.user);
        db.setPassword(m_settings.password);
        db.setConnectOptions(QStringLiteral("connect_timeout=10;application_name=qtrealtime"));
    } else {
        const QFileInfo file(m_settings.sqlitePath);
        if (!QDir().mkpath(file.absolutePath())) {
            return Error{
                QStringLiteral("cannot create the data directory %1").arg(file.absolutePath())
            };
        }
        db.setDatabaseName(file.absoluteFilePath());
        db.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=5000"));
    }
    if (!db.open()) {
        return Error{ postgres ? QStringLiteral("cannot connect to the control-plane database "
                                                "%1@%2:%3/%4: %5")
                                         .arg(m_settings.user, m_settings.host)
                                         .arg(m_settings.port)
                                         .arg(m_settings.database, describe(db.lastError()))
                               : QStringLiteral("cannot open the control-plane database %1: %2")
                                         .arg(m_settings.sqlitePath, describe(db.lastError())) };
    }
    if (!postgres) {
        QSqlQuery pragma(db);
        // Cascading deletes of extensions need foreign keys; WAL lets readers run beside a writer.
        if (!pragma.exec(QStringLiteral("PRAGMA foreign_keys = ON"))
            || !pragma.exec(QStringLiteral("PRAGMA journal_mode = WAL"))) {
            return Error{ QStringLiteral("cannot use %1 as the SQLite control plane: %2")
                                  .arg(m_settings.sqlitePath, describe(pragma.lastError())) };
        }
    }
    return true;
}

Result<bool> ControlPlane::migrate()
{
    const bool postgres = m_settings.backend == ControlPlaneSettings::Backend::Postgres;
    QSqlDatabase db = QSqlDatabase::database(m_connectionName, false);
    QSqlQuery query(db);
    // Our own bookkeeping table, named so it cannot collide with the Elixir server's
    // schema_migrations if both ever share a database.
    const QString migrations = table("qtrealtime_migrations");
    if (postgres && !query.exec(QStringLiteral("CREATE SCHEMA IF NOT EXISTS _realtime"))) {
        return Error{
            QStringLiteral("cannot create schema _realtime: %1").arg(describe(query.lastError()))
        };
    }
    if (!query.exec(QStringLiteral("CREATE TABLE IF NOT EXISTS %1 (version bigint PRIMARY KEY, "
                                   "name text NOT NULL, inserted_at text NOT NULL)")
                            .arg(migrations))) {
        return Error{ QStringLiteral("cannot create the migrations table: %1")
                              .arg(describe(query.lastError())) };
    }

    const QString folder = postgres ? QStringLiteral(":/sql/control_plane/postgres")
                                    : QStringLiteral(":/sql/control_plane/sqlite");
    const QStringList files =
            QDir(folder).entryList({ QStringLiteral("*.sql") }, QDir::Files, QDir::Name);
    if (files.isEmpty()) {
        return Error{ QStringLiteral("no control-plane migrations embedded under %1").arg(folder) };
    }
    for (const QString &fileName : files) {
        const qint64 version = fileName.section(u'_', 0, 0).toLongLong();
        if (!db.transaction()) {
            return Error{
                QStringLiteral("cannot start a transaction: %1").arg(describe(db.lastError()))
            };
        }
        // Nodes starting together must not run the same migration twice.
        if (postgres && !query.exec(QStringLiteral("SELECT pg_advisory_xact_lock(7305190412)"))) {
            db.rollback();
            return Error{ describe(query.lastError()) };
        }
        query.prepare(QStringLiteral("SELECT 1 FROM %1 WHERE version = ?").arg(migrations));
        query.addBindValue(version);
        if (!query.exec()) {
            db.rollback();
            return Error{ describe(query.lastError()) };
        }
        if (query.next()) {
            db.rollback();
            continue;
        }
        QFile file(folder + u'/' + fileName);
        if (!file.open(QIODevice::ReadOnly)) {
            db.rollback();
            return Error{ QStringLiteral("cannot read migration %1").arg(fileName) };
        }
        const QStringList statements = splitStatements(QString::fromUtf8(file.readAll()));
        for (const QString &statement : statements) {
            if (!query.exec(statement)) {
                const QString message = QStringLiteral("control-plane migration %1 failed: %2")
                                                .arg(fileName, describe(query.lastError()));
                db.rollback();
                return Error{ message };
            }
        }
        query.prepare(QStringLiteral("INSERT INTO %1 (version, name, inserted_at) VALUES (?, ?, ?)")
                              .arg(migrations));
        query.addBindValue(version);
        query.addBindValue(fileName);
        query.addBindValue(nowText());
        if (!query.exec() || !db.commit()) {
            const QString message = describe(query.lastError());
            db.rollback();
            return Error{ QStringLiteral("cannot record migration %1: %2").arg(fileName, message) };
        }
        qCInfo(lcTenants) << "applied control-plane migration" << fileName;
    }
    return true;
}

Result<bool> ControlPlane::upsert(const TenantInput &input)
{
    QSqlDatabase db = QSqlDatabase::database(m_connectionName, false);
    if (!db.transaction()) {
        return Error{ describe(db.lastError()) };
    }
    QSqlQuery query(db);
    const QString externalId = QString::fromUtf8(input.externalId);
    const auto fail = [&db, &query, &externalId](const QString &what) -> Result<bool> {
        const QString message = QStringLiteral("cannot write tenant %1 (%2): %3")
                                        .arg(externalId, what, describe(query.lastError()));
        db.rollback();
        return Error{ message };
    };
    // Replace, in one transaction: nothing is half-written.
    query.prepare(
            QStringLiteral("DELETE FROM %1 WHERE tenant_external_id = ?").arg(table("extensions")));
    query.addBindValue(externalId);
    if (!query.exec()) {
        return fail(QStringLiteral("delete extensions"));
    }
    query.prepare(QStringLiteral("DELETE FROM %1 WHERE external_id = ?").arg(table("tenants")));
    query.addBindValue(externalId);
    if (!query.exec()) {
        return fail(QStringLiteral("delete tenant"));
    }
    const QString now = nowText();
    const auto orNull = [](const std::optional<int> &value) {
        return value ? QVariant(*value) : QVariant();
    };
    query.prepare(
            QStringLiteral("INSERT INTO %1 (id, name, external_id, jwt_secret, jwt_jwks, "
                           "max_concurrent_users, max_events_per_second, max_bytes_per_second, "
                           "max_channels_per_client, max_joins_per_second, "
                           "max_presence_events_per_second, max_payload_size_in_kb, "
                           "max_client_presence_events_per_window, client_presence_window_ms, "
                           "suspend, private_only, presence_enabled, inserted_at, updated_at) "
                           "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
                    .arg(table("tenants")));
    query.addBindValue(newUuid());
    query.addBindValue(input.name.isEmpty() ? externalId : input.name);
    query.addBindValue(externalId);
    query.addBindValue(input.jwtSecret.isEmpty() ? QVariant() : QString::fromUtf8(input.jwtSecret));
    query.addBindValue(input.jwtJwks.isEmpty() ? QVariant() : QString::fromUtf8(input.jwtJwks));
    query.addBindValue(input.maxConcurrentUsers.value_or(m_defaults.maxConcurrentUsers));
    query.addBindValue(input.maxEventsPerSecond.value_or(m_defaults.maxEventsPerSecond));
    query.addBindValue(input.maxBytesPerSecond.value_or(m_defaults.maxBytesPerSecond));
    query.addBindValue(input.maxChannelsPerClient.value_or(m_defaults.maxChannelsPerClient));
    query.addBindValue(input.maxJoinsPerSecond.value_or(m_defaults.maxJoinsPerSecond));
    query.addBindValue(
            input.maxPresenceEventsPerSecond.value_or(m_defaults.maxPresenceEventsPerSecond));
    query.addBindValue(input.maxPayloadSizeInKb.value_or(m_defaults.maxPayloadSizeInKb));
    query.addBindValue(orNull(input.maxClientPresenceEventsPerWindow));
    query.addBindValue(orNull(input.clientPresenceWindowMs));
    query.addBindValue(input.suspend);
    query.addBindValue(input.privateOnly);
    query.addBindValue(input.presenceEnabled);
    query.addBindValue(now);
    query.addBindValue(now);
    if (!query.exec()) {
        return fail(QStringLiteral("insert tenant"));
    }
    for (const Extension &extension : input.extensions) {
        query.prepare(QStringLiteral("INSERT INTO %1 (id, type, settings, tenant_external_id, "
                                     "inserted_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)")
                              .arg(table("extensions")));
        query.addBindValue(newUuid());
        query.addBindValue(extension.type);
        query.addBindValue(QString::fromUtf8(
                QJsonDocument(extension.settings).toJson(QJsonDocument::Compact)));
        query.addBindValue(externalId);
        query.addBindValue(now);
        query.addBindValue(now);
        if (!query.exec()) {
            return fail(QStringLiteral("insert extension"));
        }
    }
    if (!db.commit()) {
        return fail(QStringLiteral("commit"));
    }
    qCInfo(lcTenants) << "seeded tenant" << input.externalId;
    return true;
}

Result<QList<TenantPtr>> ControlPlane::loadAll()
{
    QSqlDatabase db = QSqlDatabase::database(m_connectionName, false);
    QSqlQuery query(db);
    query.setForwardOnly(true);
    QHash<QString, QList<Extension>> extensionsByTenant;
    if (!query.exec(QStringLiteral("SELECT type, settings, tenant_external_id, inserted_at, "
                                   "updated_at FROM %1")
                            .arg(table("extensions")))) {
        return Error{
            QStringLiteral("cannot read extensions: %1").arg(describe(query.lastError()))
        };
    }
    while (query.next()) {
        Extension extension;
        extension.type = query.value(0).toString();
        extension.settings = parseObject(query.value(1));
        extension.insertedAt = parseTimestamp(query.value(3));
        extension.updatedAt = parseTimestamp(query.value(4));
        extensionsByTenant[query.value(2).toString()].append(extension);
    }
    if (!query.exec(
                QStringLiteral("SELECT * FROM %1 ORDER BY external_id").arg(table("tenants")))) {
        return Error{ QStringLiteral("cannot read tenants: %1").arg(describe(query.lastError())) };
    }
    QList<TenantPtr> tenants;
    while (query.next()) {
        const QSqlRecord row = query.record();
        tenants.append(tenantFromRow(
                row,
                extensionsByTenant.value(row.value(QStringLiteral("external_id")).toString())));
    }
    return tenants;
}

TenantPtr ControlPlane::tenantFromRow(const QSqlRecord &row, const QList<Extension> &extensions)
{
    auto tenant = std::make_shared<Tenant>();
    const auto value = [&row](const char *name) { return row.value(QString::fromLatin1(name)); };
    tenant->id = value("id").toString();
    tenant->externalId = value("external_id").toString().toUtf8();
    tenant->name = value("name").toString();
    tenant->jwtSecret = value("jwt_secret").toString().toUtf8();
    tenant->jwtJwks = value("jwt_jwks").toString().toUtf8();
    tenant->maxConcurrentUsers = value("max_concurrent_users").toInt();
    tenant->maxEventsPerSecond = value("max_events_per_second").toInt();
    tenant->maxBytesPerSecond = value("max_bytes_per_second").toInt();
    tenant->maxChannelsPerClient = value("max_channels_per_client").toInt();
    tenant->maxJoinsPerSecond = value("max_joins_per_second").toInt();
    tenant->maxPresenceEventsPerSecond = value("max_presence_events_per_second").toInt();
    tenant->maxPayloadSizeInKb = value("max_payload_size_in_kb").toInt();
    tenant->maxClientPresenceEventsPerWindow =
            optionalInt(value("max_client_presence_events_per_window"));
    tenant->clientPresenceWindowMs = optionalInt(value("client_presence_window_ms"));
    tenant->suspend = value("suspend").toBool();
    tenant->privateOnly = value("private_only").toBool();
    tenant->presenceEnabled = value("presence_enabled").toBool();
    tenant->postgresCdcDefault = value("postgres_cdc_default").toString();
    tenant->featureFlags = parseObject(value("feature_flags"));
    tenant->insertedAt = parseTimestamp(value("inserted_at"));
    tenant->updatedAt = parseTimestamp(value("updated_at"));
    tenant->extensions = extensions;
    Result<std::shared_ptr<const auth::KeySet>> keys =
            auth::KeySet::build(tenant->jwtSecret, tenant->jwtJwks);
    if (keys) {
        tenant->keys = *keys;
    } else {
        // A broken JWKS must not take the tenant down: HS tokens keep working with the secret.
        qCWarning(lcTenants) << "tenant" << tenant->externalId
                             << "has an unusable jwt_jwks:" << keys.error().message;
        tenant->keys = *auth::KeySet::build(tenant->jwtSecret, {});
    }
    return tenant;
}

} // namespace rt::tenants
