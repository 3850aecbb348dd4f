#include "server/tenants/control_plane.h"

#include "server/auth/jwt.h"
#include "server/tenants/logging.h"
#include "server/tenants/tenant_directory.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QRegularExpression>
#include <QSqlError>
#include <QSqlQuery>
#include <QSqlRecord>
#include <QUuid>

#include <atomic>
#include <utility>

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

// One line: PostgreSQL's messages carry newlines and tab-indented hints.
QString describe(const QSqlError &error)
{
    const QString text = error.text().simplified();
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
      m_connectionName(QStringLiteral("control-plane-%1").arg(++connectionCounter)),
      m_replicaConnectionName(m_connectionName + QStringLiteral("-replica")),
      m_router(ReplicaRouter::Settings{ m_settings.hasReplica(), m_settings.replicaDelayMs,
                                        m_settings.replicaRetryMs },
               SystemClock::instance())
{ }

ControlPlane::~ControlPlane()
{
    for (const QString &name : { m_connectionName, m_replicaConnectionName }) {
        if (QSqlDatabase::contains(name)) {
            QSqlDatabase::database(name, false).close();
            QSqlDatabase::removeDatabase(name);
        }
    }
}

QString ControlPlane::table(const char *name) const
{
    const QString bare = QString::fromLatin1(name);
    return m_settings.backend == ControlPlaneSettings::Backend::Postgres
            ? QStringLiteral("_realtime.") + bare
            : bare;
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
    if (postgres) {
        // "schema ... already exists, skipping" and friends are not worth a log line each.
        QSqlQuery quiet(db);
        if (!quiet.exec(QStringLiteral("SET client_min_messages = warning"))) {
            return Error{ QStringLiteral("cannot use the control-plane database %1: %2")
                                  .arg(m_settings.database, describe(quiet.lastError())) };
        }
    } else {
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
    // Nodes starting together must not run the same migration twice, nor race on creating the
    // schema and the bookkeeping table (concurrent CREATE ... IF NOT EXISTS can fail on
    // PostgreSQL's catalog unique indexes): all of it runs under one transaction-level lock.
    const QString lock = QStringLiteral("SELECT pg_advisory_xact_lock(7305190412)");
    if (!db.transaction()) {
        return Error{
            QStringLiteral("cannot start a transaction: %1").arg(describe(db.lastError()))
        };
    }
    if (postgres
        && (!query.exec(lock)
            || !query.exec(QStringLiteral("CREATE SCHEMA IF NOT EXISTS _realtime")))) {
        const QString message = describe(query.lastError());
        db.rollback();
        return Error{ QStringLiteral("cannot create schema _realtime: %1").arg(message) };
    }
    if (!query.exec(QStringLiteral("CREATE TABLE IF NOT EXISTS %1 (version bigint PRIMARY KEY, "
                                   "name text NOT NULL, inserted_at text NOT NULL)")
                            .arg(migrations))
        || !db.commit()) {
        const QString message = describe(query.lastError());
        db.rollback();
        return Error{ QStringLiteral("cannot create the migrations table: %1").arg(message) };
    }
    QList<qint64> appliedHere;

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
        if (postgres && !query.exec(lock)) {
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
        // A database our first version created (migration 1 applied by an earlier start, 2
        // not yet) holds its secrets in plain text: they are encrypted in migration 2's
        // transaction, so exactly once, by whichever node applies it. Migration 1 applied
        // during this start means a new database, or tables another server created (e.g.
        // Supabase Realtime's own, whose secrets are encrypted already): nothing to do.
        bool encryptExisting = false;
        if (version == 2 && !appliedHere.contains(1)) {
            query.prepare(QStringLiteral("SELECT 1 FROM %1 WHERE version = 1").arg(migrations));
            encryptExisting = query.exec() && query.next();
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
        if (encryptExisting) {
            const Result<bool> encrypted = encryptPlaintextSecrets();
            if (!encrypted) {
                db.rollback();
                return Error{ QStringLiteral("control-plane migration %1 failed: %2")
                                      .arg(fileName, encrypted.error().message) };
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
        appliedHere.append(version);
        qCInfo(lcTenants) << "applied control-plane migration" << fileName;
    }
    return true;
}

void ControlPlane::start(const QList<TenantInput> &seeds)
{
    Result<bool> step = open();
    if (step) {
        step = prepareCipher();
    }
    if (step) {
        step = migrate();
    }
    if (step) {
        step = verifyEncryptionKey();
    }
    for (const TenantInput &seed : seeds) {
        if (!step) {
            break;
        }
        Result<Written, WriteFailure> written =
                writeTenant(seed.externalId, seed.toPatch(), WriteMode::Replace);
        if (!written) {
            const WriteFailure &failure = written.error();
            step = Error{
                QStringLiteral("cannot seed tenant %1: %2")
                        .arg(QString::fromUtf8(seed.externalId),
                             failure.message.isEmpty() ? QString::fromUtf8(
                                     QJsonDocument(failure.errors).toJson(QJsonDocument::Compact))
                                                       : failure.message)
            };
        } else {
            qCInfo(lcTenants) << "seeded tenant" << seed.externalId;
        }
    }
    if (!step) {
        Q_EMIT failed(step.error().message);
        return;
    }
    Result<QList<TenantPtr>> tenants = fetchAll();
    if (!tenants) {
        Q_EMIT failed(tenants.error().message);
        return;
    }
    m_directory.replaceAll(*tenants);
    rememberPrimaryPosition();
    qCInfo(lcTenants) << "loaded" << tenants->size() << "tenant(s)";
    if (m_settings.hasReplica()) {
        qCInfo(lcTenants).noquote()
                << QStringLiteral("tenant API reads use the replica %1:%2 unless the session "
                                  "wrote within %3 ms")
                           .arg(m_settings.replicaHost)
                           .arg(m_settings.replicaPort)
                           .arg(m_settings.replicaDelayMs);
    }
    Q_EMIT ready(static_cast<int>(tenants->size()));
}

QSqlDatabase ControlPlane::database() const
{
    return QSqlDatabase::database(m_connectionName, false);
}

Result<bool> ControlPlane::prepareCipher()
{
    QByteArray key = m_settings.encryptionKey;
    if (key.isEmpty() && m_settings.encryptionKeyGcm.isEmpty()) {
        if (m_settings.backend == ControlPlaneSettings::Backend::Postgres
            || m_settings.keyFile.isEmpty()) {
            return Error{ QStringLiteral("DB_ENC_KEY is required: tenant secrets are encrypted at "
                                         "rest with it (16 bytes, AES-128)") };
        }
        // The embedded default keeps a generated key beside its database, readable only by
        // this user; operators who want the key elsewhere set DB_ENC_KEY.
        QFile file(m_settings.keyFile);
        if (file.exists()) {
            if (!file.open(QIODevice::ReadOnly)) {
                return Error{ QStringLiteral("cannot read the encryption key file %1: %2")
                                      .arg(m_settings.keyFile, file.errorString()) };
            }
            key = file.readAll().trimmed();
        } else {
            static constexpr char Alphabet[] =
                    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
            QByteArray random(16, '\0');
            QFile source(QStringLiteral("/dev/urandom"));
            if (!source.open(QIODevice::ReadOnly) || source.read(random.data(), 16) != 16) {
                return Error{ QStringLiteral("cannot read /dev/urandom for an encryption key") };
            }
            for (char &c : random) {
                c = Alphabet[static_cast<quint8>(c) % (sizeof(Alphabet) - 1)];
            }
            key = random;
            if (!file.open(QIODevice::WriteOnly | QIODevice::NewOnly)
                || !file.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner)
                || file.write(key) != key.size()) {
                return Error{ QStringLiteral("cannot write the encryption key file %1: %2")
                                      .arg(m_settings.keyFile, file.errorString()) };
            }
            qCInfo(lcTenants) << "generated the secrets encryption key" << m_settings.keyFile;
        }
    }
    Result<SecretCipher> cipher =
            SecretCipher::create(key, m_settings.encryptionKeyGcm, m_settings.writeGcm);
    if (!cipher) {
        return Error{ cipher.error().message };
    }
    m_cipher = *cipher;
    return true;
}

Result<bool> ControlPlane::verifyEncryptionKey()
{
    // A known value encrypted with the key of the first start proves, on every later start,
    // that the configured key is the same: a wrong key fails here with one clear message
    // instead of producing tenants whose tokens never verify.
    static const QByteArray Check = QByteArrayLiteral("qtrealtime encryption check");
    const QString wrongKey = QStringLiteral("DB_ENC_KEY (or DB_ENC_KEY_GCM) is not the key this "
                                            "control plane's secrets were encrypted with");
    QSqlQuery query(database());
    const QString read = QStringLiteral("SELECT value FROM %1 WHERE name = 'encryption_check'")
                                 .arg(table("qtrealtime_settings"));
    if (!query.exec(read)) {
        return Error{ QStringLiteral("cannot read control-plane settings: %1")
                              .arg(describe(query.lastError())) };
    }
    if (!query.next()) {
        // First start with this database. Secrets may be there already (written by Supabase
        // Realtime itself, which shares the schema): one of them must decrypt.
        if (!query.exec(QStringLiteral("SELECT external_id, jwt_secret FROM %1 "
                                       "WHERE jwt_secret IS NOT NULL LIMIT 1")
                                .arg(table("tenants")))) {
            return Error{
                QStringLiteral("cannot read tenants: %1").arg(describe(query.lastError()))
            };
        }
        if (query.next() && !m_cipher->decrypt(query.value(1).toString().toUtf8())) {
            return Error{ wrongKey
                          + QStringLiteral(" (the jwt_secret of tenant %1 does not decrypt)")
                                    .arg(query.value(0).toString()) };
        }
        // Nodes starting together on a new database: the first one's check counts.
        query.prepare(QStringLiteral("INSERT INTO %1 (name, value) VALUES ('encryption_check', ?) "
                                     "ON CONFLICT (name) DO NOTHING")
                              .arg(table("qtrealtime_settings")));
        query.addBindValue(QString::fromLatin1(m_cipher->encrypt(Check)));
        if (!query.exec()) {
            return Error{ QStringLiteral("cannot store the encryption check: %1")
                                  .arg(describe(query.lastError())) };
        }
        if (!query.exec(read) || !query.next()) {
            return Error{ QStringLiteral("cannot read control-plane settings: %1")
                                  .arg(describe(query.lastError())) };
        }
    }
    const Result<QByteArray> plain = m_cipher->decrypt(query.value(0).toString().toUtf8());
    if (!plain || *plain != Check) {
        return Error{ wrongKey };
    }
    return true;
}

// Runs inside the caller's (migration 2's) transaction; the caller rolls back on failure.
Result<bool> ControlPlane::encryptPlaintextSecrets()
{
    QSqlDatabase db = database();
    QSqlQuery read(db);
    QSqlQuery write(db);
    if (!read.exec(QStringLiteral(
                           "SELECT external_id, jwt_secret FROM %1 WHERE jwt_secret IS NOT NULL")
                           .arg(table("tenants")))) {
        return Error{ describe(read.lastError()) };
    }
    while (read.next()) {
        write.prepare(QStringLiteral("UPDATE %1 SET jwt_secret = ? WHERE external_id = ?")
                              .arg(table("tenants")));
        write.addBindValue(
                QString::fromLatin1(m_cipher->encrypt(read.value(1).toString().toUtf8())));
        write.addBindValue(read.value(0).toString());
        if (!write.exec()) {
            return Error{ describe(write.lastError()) };
        }
    }
    if (!read.exec(QStringLiteral("SELECT id, type, settings FROM %1").arg(table("extensions")))) {
        return Error{ describe(read.lastError()) };
    }
    while (read.next()) {
        write.prepare(
                QStringLiteral("UPDATE %1 SET settings = ? WHERE id = ?").arg(table("extensions")));
        const QJsonObject settings =
                encryptSettings(read.value(1).toString(), parseObject(read.value(2)));
        write.addBindValue(
                QString::fromUtf8(QJsonDocument(settings).toJson(QJsonDocument::Compact)));
        write.addBindValue(read.value(0).toString());
        if (!write.exec()) {
            return Error{ describe(write.lastError()) };
        }
    }
    qCInfo(lcTenants) << "encrypted the secrets stored by an earlier version";
    return true;
}

QJsonObject ControlPlane::encryptSettings(const QString &type, const QJsonObject &settings) const
{
    QJsonObject stored = settings;
    if (type != QLatin1String("postgres_cdc_rls")) {
        return stored;
    }
    for (const QString &key : encryptedSettingKeys()) {
        const QJsonValue value = stored.value(key);
        if (value.isString()) {
            stored.insert(key, QString::fromLatin1(m_cipher->encrypt(value.toString().toUtf8())));
        }
    }
    return stored;
}

Result<QList<Extension>> ControlPlane::readExtensions(QSqlDatabase db, const QString &externalId)
{
    QSqlQuery query(db);
    query.setForwardOnly(true);
    if (externalId.isNull()) {
        query.prepare(QStringLiteral("SELECT type, settings, tenant_external_id, inserted_at, "
                                     "updated_at FROM %1 ORDER BY inserted_at, type")
                              .arg(table("extensions")));
    } else {
        query.prepare(QStringLiteral("SELECT type, settings, tenant_external_id, inserted_at, "
                                     "updated_at FROM %1 WHERE tenant_external_id = ? "
                                     "ORDER BY inserted_at, type")
                              .arg(table("extensions")));
        query.addBindValue(externalId);
    }
    if (!query.exec()) {
        return Error{
            QStringLiteral("cannot read extensions: %1").arg(describe(query.lastError()))
        };
    }
    QList<Extension> extensions;
    while (query.next()) {
        Extension extension;
        extension.type = query.value(0).toString();
        extension.storedSettings = parseObject(query.value(1));
        extension.settings = extension.storedSettings;
        if (extension.type == QLatin1String("postgres_cdc_rls")) {
            for (const QString &key : encryptedSettingKeys()) {
                const QJsonValue value = extension.settings.value(key);
                if (!value.isString()) {
                    continue;
                }
                const Result<QByteArray> plain = m_cipher->decrypt(value.toString().toUtf8());
                if (plain) {
                    extension.settings.insert(key, QString::fromUtf8(*plain));
                } else {
                    qCWarning(lcTenants) << "extension setting" << key << "of tenant"
                                         << query.value(2).toString()
                                         << "does not decrypt:" << plain.error().message;
                    extension.settings.remove(key);
                }
            }
        }
        extension.insertedAt = parseTimestamp(query.value(3));
        extension.updatedAt = parseTimestamp(query.value(4));
        // The owner travels in the settings only for grouping by fetchAll(); not stored there.
        extension.settings.insert(QStringLiteral("\x01owner"), query.value(2).toString());
        extensions.append(extension);
    }
    return extensions;
}

Result<QList<TenantPtr>> ControlPlane::fetchAll()
{
    return fetchAllFrom(database());
}

Result<TenantPtr> ControlPlane::fetchTenant(const QByteArray &externalId)
{
    return fetchTenantFrom(database(), externalId);
}

Result<QList<TenantPtr>> ControlPlane::fetchAll(const ApiSession &session)
{
    return routedRead<QList<TenantPtr>>(m_router.forApiRead(session),
                                        QStringLiteral("tenant API: list tenants"),
                                        [this](QSqlDatabase db) { return fetchAllFrom(db); });
}

Result<TenantPtr> ControlPlane::fetchTenant(const QByteArray &externalId, const ApiSession &session)
{
    return routedRead<TenantPtr>(
            m_router.forApiRead(session),
            QStringLiteral("tenant API: read tenant %1").arg(QString::fromUtf8(externalId)),
            [this, &externalId](QSqlDatabase db) { return fetchTenantFrom(db, externalId); });
}

Result<QList<TenantPtr>> ControlPlane::fetchAllFrom(QSqlDatabase db)
{
    Result<QList<Extension>> extensions = readExtensions(db, QString());
    if (!extensions) {
        return Error{ extensions.error().message };
    }
    QHash<QString, QList<Extension>> byTenant;
    for (Extension &extension : *extensions) {
        const QString owner = extension.settings.take(QStringLiteral("\x01owner")).toString();
        byTenant[owner].append(extension);
    }
    QSqlQuery query(db);
    query.setForwardOnly(true);
    if (!query.exec(
                QStringLiteral("SELECT * FROM %1 ORDER BY external_id").arg(table("tenants")))) {
        return Error{ QStringLiteral("cannot read tenants: %1").arg(describe(query.lastError())) };
    }
    QList<TenantPtr> tenants;
    while (query.next()) {
        const QSqlRecord row = query.record();
        tenants.append(tenantFromRow(
                row, byTenant.value(row.value(QStringLiteral("external_id")).toString())));
    }
    return tenants;
}

Result<TenantPtr> ControlPlane::fetchTenantFrom(QSqlDatabase db, const QByteArray &externalId)
{
    QSqlQuery query(db);
    query.prepare(QStringLiteral("SELECT * FROM %1 WHERE external_id = ?").arg(table("tenants")));
    query.addBindValue(QString::fromUtf8(externalId));
    if (!query.exec()) {
        return Error{ QStringLiteral("cannot read tenant: %1").arg(describe(query.lastError())) };
    }
    if (!query.next()) {
        return TenantPtr();
    }
    const QSqlRecord row = query.record();
    Result<QList<Extension>> extensions = readExtensions(db, QString::fromUtf8(externalId));
    if (!extensions) {
        return Error{ extensions.error().message };
    }
    for (Extension &extension : *extensions) {
        extension.settings.remove(QStringLiteral("\x01owner"));
    }
    return tenantFromRow(row, *extensions);
}

TenantPtr ControlPlane::tenantFromRow(const QSqlRecord &row,
                                      const QList<Extension> &extensions) const
{
    auto tenant = std::make_shared<Tenant>();
    const auto value = [&row](const char *name) { return row.value(QString::fromLatin1(name)); };
    tenant->id = value("id").toString();
    tenant->externalId = value("external_id").toString().toUtf8();
    tenant->name = value("name").toString();
    const QVariant secret = value("jwt_secret");
    if (!secret.isNull()) {
        const Result<QByteArray> plain = m_cipher->decrypt(secret.toString().toUtf8());
        if (plain) {
            tenant->jwtSecret = *plain;
        } else {
            // One unreadable row must not stop the node; its HS tokens fail to verify.
            qCWarning(lcTenants) << "the jwt_secret of tenant" << tenant->externalId
                                 << "does not decrypt:" << plain.error().message;
        }
    }
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
    tenant->broadcastAdapter = value("broadcast_adapter").toString();
    tenant->migrationsRan = value("migrations_ran").toInt();
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

namespace {

// Whether two loads of a tenant differ in anything stored (updated_at has only second
// precision, so it cannot tell on its own; other writers may not even touch it).
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
            || a.clientPresenceWindowMs != b.clientPresenceWindowMs || a.suspend != b.suspend
            || a.privateOnly != b.privateOnly || a.presenceEnabled != b.presenceEnabled
            || a.postgresCdcDefault != b.postgresCdcDefault
            || a.broadcastAdapter != b.broadcastAdapter || a.migrationsRan != b.migrationsRan
            || a.featureFlags != b.featureFlags || a.insertedAt != b.insertedAt
            || a.updatedAt != b.updatedAt;
}

} // namespace

template <typename T, typename Read>
Result<T> ControlPlane::routedRead(RouteDecision decision, const QString &what, Read read,
                                   RouteTarget *servedBy)
{
    if (decision.target == RouteTarget::Replica) {
        Result<QSqlDatabase> replica = replicaDatabase();
        if (replica) {
            Result<T> result = read(*replica);
            if (result) {
                record(decision, what);
                if (servedBy) {
                    *servedBy = RouteTarget::Replica;
                }
                return result;
            }
            replicaFailed(what, result.error().message);
        } else {
            replicaFailed(what, replica.error().message);
        }
        // The read must not fail because the replica did: the primary answers it.
        decision = { RouteTarget::Primary, RouteReason::ReplicaError };
    }
    record(decision, what);
    if (servedBy) {
        *servedBy = RouteTarget::Primary;
    }
    return read(database());
}

Result<QSqlDatabase> ControlPlane::replicaDatabase()
{
    if (!QSqlDatabase::contains(m_replicaConnectionName)) {
        QSqlDatabase db =
                QSqlDatabase::addDatabase(QStringLiteral("QPSQL"), m_replicaConnectionName);
        db.setHostName(m_settings.replicaHost);
        db.setPort(m_settings.replicaPort);
        db.setDatabaseName(m_settings.database);
        db.setUserName(m_settings.user);
        db.setPassword(m_settings.password);
        // Short: connecting blocks this thread, and a replica that does not answer quickly is
        // better skipped (reads fall back to the primary and the next try is retryMs later).
        db.setConnectOptions(
                QStringLiteral("connect_timeout=2;application_name=qtrealtime-replica"));
    }
    QSqlDatabase db = QSqlDatabase::database(m_replicaConnectionName, false);
    if (!db.isOpen()) {
        if (!db.open()) {
            return Error{ QStringLiteral("cannot connect: %1").arg(describe(db.lastError())) };
        }
        qCInfo(lcTenants).noquote()
                << QStringLiteral("connected to the control-plane replica %1:%2")
                           .arg(m_settings.replicaHost)
                           .arg(m_settings.replicaPort);
    }
    return db;
}

void ControlPlane::replicaFailed(const QString &what, const QString &message)
{
    m_router.replicaFailed();
    // Closed, so that the next use connects afresh (a broken connection stays "open" in QtSql).
    if (QSqlDatabase::contains(m_replicaConnectionName)) {
        QSqlDatabase::database(m_replicaConnectionName, false).close();
    }
    qCWarning(lcTenants).noquote()
            << QStringLiteral("control-plane replica %1:%2 failed (%3): %4; reads use the "
                              "primary for the next %5 ms")
                       .arg(m_settings.replicaHost)
                       .arg(m_settings.replicaPort)
                       .arg(what, message)
                       .arg(m_settings.replicaRetryMs);
}

void ControlPlane::record(const RouteDecision &decision, const QString &what)
{
    const QByteArrayView target = targetLabel(decision.target);
    const QByteArrayView reason = reasonLabel(decision.reason);
    qCDebug(lcTenants).noquote() << QStringLiteral("%1: %2 (%3)")
                                            .arg(what,
                                                 QString::fromLatin1(target.data(), target.size()),
                                                 QString::fromLatin1(reason.data(), reason.size()));
    if (m_routing) {
        m_routing->labels({ target, reason })->inc();
    }
}

void ControlPlane::rememberPrimaryPosition()
{
    if (!m_settings.hasReplica()) {
        return;
    }
    // The insert position, not the write position: with synchronous_commit = off a commit
    // record may not be written out yet, but it has been inserted.
    QSqlQuery query(database());
    if (query.exec(QStringLiteral("SELECT pg_current_wal_insert_lsn()::text")) && query.next()) {
        m_seenPrimaryLsn = query.value(0).toString();
        m_seenPrimaryLsnUnknown = false;
        return;
    }
    m_seenPrimaryLsnUnknown = true;
    qCWarning(lcTenants) << "cannot read the primary's WAL position; the tenant refresh reads the "
                            "primary until it can:"
                         << describe(query.lastError());
}

Result<bool> ControlPlane::replicaCaughtUp()
{
    Result<QSqlDatabase> replica = replicaDatabase();
    if (!replica) {
        return Error{ replica.error().message };
    }
    if (m_seenPrimaryLsnUnknown) {
        return false;
    }
    static const QRegularExpression Lsn(QStringLiteral("^[0-9A-Fa-f]{1,8}/[0-9A-Fa-f]{1,8}$"));
    const QString position =
            Lsn.match(m_seenPrimaryLsn).hasMatch() ? m_seenPrimaryLsn : QStringLiteral("0/0");
    // NULL when the server is not in recovery (not a standby, e.g. promoted): not caught up,
    // since it may have diverged from the primary this node writes to.
    QSqlQuery query(*replica);
    if (!query.exec(QStringLiteral("SELECT COALESCE(pg_last_wal_replay_lsn() >= '%1'::pg_lsn, "
                                   "false)")
                            .arg(position))
        || !query.next()) {
        return Error{ describe(query.lastError()) };
    }
    const bool caughtUp = query.value(0).toBool();
    if (!caughtUp) {
        qCDebug(lcTenants).noquote()
                << QStringLiteral("the control-plane replica has not replayed %1 yet")
                           .arg(position);
    }
    return caughtUp;
}

bool credentialsDiffer(const Tenant &before, const Tenant &after)
{
    return before.jwtSecret != after.jwtSecret || before.jwtJwks != after.jwtJwks
            || before.suspend != after.suspend || before.privateOnly != after.privateOnly;
}

Result<ControlPlane::Written, ControlPlane::WriteFailure>
ControlPlane::writeTenant(const QByteArray &externalId, const TenantPatch &patch, WriteMode mode)
{
    const auto failure = [](int status, const QString &message) {
        WriteFailure failed;
        failed.status = status;
        failed.message = message;
        return failed;
    };
    record(m_router.forWrite(),
           QStringLiteral("write tenant %1").arg(QString::fromUtf8(externalId)));
    QSqlDatabase db = database();
    if (!db.transaction()) {
        return failure(500, describe(db.lastError()));
    }
    const auto rollbackWith = [&db](WriteFailure failed) {
        db.rollback();
        return failed;
    };
    QSqlQuery query(db);
    const bool postgres = m_settings.backend == ControlPlaneSettings::Backend::Postgres;
    const QString key = QString::fromUtf8(externalId);

    // The current row, locked for the transaction on PostgreSQL (SQLite's write transaction
    // serialises writers already).
    query.prepare(
            QStringLiteral("SELECT * FROM %1 WHERE external_id = ?%2")
                    .arg(table("tenants"), postgres ? QStringLiteral(" FOR UPDATE") : QString()));
    query.addBindValue(key);
    if (!query.exec()) {
        return rollbackWith(failure(500, describe(query.lastError())));
    }
    TenantPtr before;
    if (query.next()) {
        const QSqlRecord row = query.record();
        Result<QList<Extension>> extensions = readExtensions(db, key);
        if (!extensions) {
            return rollbackWith(failure(500, extensions.error().message));
        }
        for (Extension &extension : *extensions) {
            extension.settings.remove(QStringLiteral("\x01owner"));
        }
        before = tenantFromRow(row, *extensions);
    }
    const bool create = !before || mode == WriteMode::Replace;

    // The row after the write: defaults on create, the stored values on update, then the patch.
    Tenant after;
    if (!create) {
        after = *before;
    } else {
        after.id = before ? before->id : newUuid();
        after.externalId = externalId;
        after.name = key;
        after.maxConcurrentUsers = m_defaults.maxConcurrentUsers;
        after.maxEventsPerSecond = m_defaults.maxEventsPerSecond;
        after.maxBytesPerSecond = m_defaults.maxBytesPerSecond;
        after.maxChannelsPerClient = m_defaults.maxChannelsPerClient;
        after.maxJoinsPerSecond = m_defaults.maxJoinsPerSecond;
        after.maxPresenceEventsPerSecond = m_defaults.maxPresenceEventsPerSecond;
        after.maxPayloadSizeInKb = m_defaults.maxPayloadSizeInKb;
        after.insertedAt = before ? before->insertedAt : QDateTime::currentDateTimeUtc();
    }
    // Upstream forces the name of a tenant created through the API to its external id.
    if (patch.name && !(create && mode == WriteMode::Upsert)) {
        after.name = *patch.name;
    }
    if (patch.jwtSecret) {
        after.jwtSecret = *patch.jwtSecret;
    }
    if (patch.jwtJwks) {
        after.jwtJwks = *patch.jwtJwks;
    }
    const auto apply = [](int &field, const std::optional<int> &value) {
        if (value) {
            field = *value;
        }
    };
    apply(after.maxConcurrentUsers, patch.maxConcurrentUsers);
    apply(after.maxEventsPerSecond, patch.maxEventsPerSecond);
    apply(after.maxBytesPerSecond, patch.maxBytesPerSecond);
    apply(after.maxChannelsPerClient, patch.maxChannelsPerClient);
    apply(after.maxJoinsPerSecond, patch.maxJoinsPerSecond);
    apply(after.maxPresenceEventsPerSecond, patch.maxPresenceEventsPerSecond);
    apply(after.maxPayloadSizeInKb, patch.maxPayloadSizeInKb);
    apply(after.migrationsRan, patch.migrationsRan);
    if (patch.maxClientPresenceEventsPerWindow) {
        after.maxClientPresenceEventsPerWindow = *patch.maxClientPresenceEventsPerWindow;
    }
    if (patch.clientPresenceWindowMs) {
        after.clientPresenceWindowMs = *patch.clientPresenceWindowMs;
    }
    if (patch.suspend) {
        after.suspend = *patch.suspend;
    }
    if (patch.privateOnly) {
        after.privateOnly = *patch.privateOnly;
    }
    if (patch.presenceEnabled) {
        after.presenceEnabled = *patch.presenceEnabled;
    }
    if (patch.postgresCdcDefault) {
        after.postgresCdcDefault = *patch.postgresCdcDefault;
    }
    if (patch.broadcastAdapter) {
        after.broadcastAdapter = *patch.broadcastAdapter;
    }
    if (patch.featureFlags) {
        after.featureFlags = *patch.featureFlags;
    }
    if (patch.extensions) {
        after.extensions = *patch.extensions;
        for (Extension &extension : after.extensions) {
            // Upstream's alias, stored under the real type so its secrets get encrypted.
            if (extension.type == QLatin1String("postgres")) {
                extension.type = QStringLiteral("postgres_cdc_rls");
            }
        }
    }
    if (after.jwtSecret.isEmpty() && after.jwtJwks.isEmpty()) {
        WriteFailure failed;
        failed.errors.insert(QStringLiteral("jwt_secret"),
                             QJsonArray{ QStringLiteral("either jwt_secret or jwt_jwks must be "
                                                        "provided") });
        return rollbackWith(failed);
    }
    const QString now = QDateTime::currentDateTimeUtc().toString(Qt::ISODate);
    after.updatedAt = QDateTime::fromString(now, Qt::ISODate);

    if (create && before) {
        query.prepare(QStringLiteral("DELETE FROM %1 WHERE tenant_external_id = ?")
                              .arg(table("extensions")));
        query.addBindValue(key);
        if (!query.exec()) {
            return rollbackWith(failure(500, describe(query.lastError())));
        }
        query.prepare(QStringLiteral("DELETE FROM %1 WHERE external_id = ?").arg(table("tenants")));
        query.addBindValue(key);
        if (!query.exec()) {
            return rollbackWith(failure(500, describe(query.lastError())));
        }
    }
    const QString columns = QStringLiteral(
            "name, jwt_secret, jwt_jwks, max_concurrent_users, max_events_per_second, "
            "max_bytes_per_second, max_channels_per_client, max_joins_per_second, "
            "max_presence_events_per_second, max_payload_size_in_kb, "
            "max_client_presence_events_per_window, client_presence_window_ms, suspend, "
            "private_only, presence_enabled, postgres_cdc_default, migrations_ran, "
            "broadcast_adapter, feature_flags, updated_at");
    if (create) {
        // One placeholder per column: id, external_id, inserted_at and `columns`.
        const qsizetype placeholderCount = columns.count(u',') + 1 + 3;
        QStringList placeholders(placeholderCount, QStringLiteral("?"));
        query.prepare(
                QStringLiteral("INSERT INTO %1 (id, external_id, inserted_at, %2) VALUES (%3)")
                        .arg(table("tenants"), columns, placeholders.join(QStringLiteral(", "))));
        query.addBindValue(after.id);
        query.addBindValue(key);
        query.addBindValue(after.insertedAt.toString(Qt::ISODate));
    } else {
        QString assignments = columns;
        assignments.replace(QStringLiteral(","), QStringLiteral(" = ?,"));
        query.prepare(QStringLiteral("UPDATE %1 SET %2 = ? WHERE external_id = ?")
                              .arg(table("tenants"), assignments));
    }
    const auto nullable = [](const std::optional<int> &value) {
        return value ? QVariant(*value) : QVariant();
    };
    query.addBindValue(after.name.isNull() ? QVariant() : QVariant(after.name));
    query.addBindValue(after.jwtSecret.isEmpty()
                               ? QVariant()
                               : QVariant(QString::fromLatin1(m_cipher->encrypt(after.jwtSecret))));
    query.addBindValue(after.jwtJwks.isEmpty() ? QVariant()
                                               : QVariant(QString::fromUtf8(after.jwtJwks)));
    query.addBindValue(after.maxConcurrentUsers);
    query.addBindValue(after.maxEventsPerSecond);
    query.addBindValue(after.maxBytesPerSecond);
    query.addBindValue(after.maxChannelsPerClient);
    query.addBindValue(after.maxJoinsPerSecond);
    query.addBindValue(after.maxPresenceEventsPerSecond);
    query.addBindValue(after.maxPayloadSizeInKb);
    query.addBindValue(nullable(after.maxClientPresenceEventsPerWindow));
    query.addBindValue(nullable(after.clientPresenceWindowMs));
    query.addBindValue(after.suspend);
    query.addBindValue(after.privateOnly);
    query.addBindValue(after.presenceEnabled);
    query.addBindValue(after.postgresCdcDefault);
    query.addBindValue(after.migrationsRan);
    query.addBindValue(after.broadcastAdapter);
    query.addBindValue(
            QString::fromUtf8(QJsonDocument(after.featureFlags).toJson(QJsonDocument::Compact)));
    query.addBindValue(now);
    if (!create) {
        query.addBindValue(key);
    }
    if (!query.exec()) {
        return rollbackWith(failure(500,
                                    QStringLiteral("cannot write tenant %1: %2")
                                            .arg(key, describe(query.lastError()))));
    }
    if (patch.extensions && !create) {
        query.prepare(QStringLiteral("DELETE FROM %1 WHERE tenant_external_id = ?")
                              .arg(table("extensions")));
        query.addBindValue(key);
        if (!query.exec()) {
            return rollbackWith(failure(500, describe(query.lastError())));
        }
    }
    if (patch.extensions || create) {
        for (Extension &extension : after.extensions) {
            extension.storedSettings = encryptSettings(extension.type, extension.settings);
            extension.insertedAt = after.updatedAt;
            extension.updatedAt = after.updatedAt;
            query.prepare(QStringLiteral("INSERT INTO %1 (id, type, settings, tenant_external_id, "
                                         "inserted_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)")
                                  .arg(table("extensions")));
            query.addBindValue(newUuid());
            query.addBindValue(extension.type);
            query.addBindValue(QString::fromUtf8(
                    QJsonDocument(extension.storedSettings).toJson(QJsonDocument::Compact)));
            query.addBindValue(key);
            query.addBindValue(now);
            query.addBindValue(now);
            if (!query.exec()) {
                return rollbackWith(
                        failure(500,
                                QStringLiteral("cannot write extension %1: %2")
                                        .arg(extension.type, describe(query.lastError()))));
            }
        }
    }
    if (!db.commit()) {
        return rollbackWith(failure(500, describe(db.lastError())));
    }

    // Publish the tenant as stored (re-read, so the directory holds exactly the database's view),
    // and remember where the primary's WAL was: the cache refresh must not read a replica that
    // has not replayed this write yet.
    Result<TenantPtr> stored = fetchTenantFrom(db, externalId);
    rememberPrimaryPosition();
    if (!stored || !*stored) {
        return failure(500,
                       stored ? QStringLiteral("tenant vanished after writing it")
                              : stored.error().message);
    }
    Written written;
    written.created = !before;
    written.tenant = *stored;
    if (before) {
        // Upstream treats any request carrying a non-empty jwt_secret as a change (the stored
        // ciphertext always differs), so clients reconnect even when the secret is the same.
        written.disconnectSockets = credentialsDiffer(*before, **stored)
                || (patch.jwtSecret && !patch.jwtSecret->isEmpty());
        written.databaseSettingsChanged = patch.extensions.has_value();
        written.eventLimitChanged = before->maxEventsPerSecond != (*stored)->maxEventsPerSecond;
        written.joinLimitChanged = before->maxJoinsPerSecond != (*stored)->maxJoinsPerSecond;
        written.presenceLimitChanged =
                before->maxPresenceEventsPerSecond != (*stored)->maxPresenceEventsPerSecond;
    }
    m_directory.upsert(*stored);
    Q_EMIT tenantChanged(externalId, written.disconnectSockets);
    Q_EMIT tenantWritten(externalId);
    return written;
}

Result<bool> ControlPlane::deleteTenant(const QByteArray &externalId)
{
    record(m_router.forWrite(),
           QStringLiteral("delete tenant %1").arg(QString::fromUtf8(externalId)));
    QSqlDatabase db = database();
    if (!db.transaction()) {
        return Error{ describe(db.lastError()) };
    }
    QSqlQuery query(db);
    const QString key = QString::fromUtf8(externalId);
    query.prepare(
            QStringLiteral("DELETE FROM %1 WHERE tenant_external_id = ?").arg(table("extensions")));
    query.addBindValue(key);
    bool ok = query.exec();
    int deleted = 0;
    if (ok) {
        query.prepare(QStringLiteral("DELETE FROM %1 WHERE external_id = ?").arg(table("tenants")));
        query.addBindValue(key);
        ok = query.exec();
        deleted = query.numRowsAffected();
    }
    if (!ok || !db.commit()) {
        const QString message = describe(ok ? db.lastError() : query.lastError());
        db.rollback();
        return Error{ QStringLiteral("cannot delete tenant %1: %2").arg(key, message) };
    }
    rememberPrimaryPosition();
    if (deleted > 0 || m_directory.find(externalId)) {
        m_directory.remove(externalId);
        Q_EMIT tenantChanged(externalId, true);
    }
    if (deleted > 0) {
        Q_EMIT tenantWritten(externalId);
    }
    return deleted > 0;
}

void ControlPlane::refresh()
{
    RouteDecision decision = m_router.forInternalRead(false);
    if (m_router.replicaUsable()) {
        const Result<bool> caughtUp = replicaCaughtUp();
        if (caughtUp) {
            decision = m_router.forInternalRead(*caughtUp);
        } else {
            replicaFailed(QStringLiteral("tenant refresh"), caughtUp.error().message);
            decision = { RouteTarget::Primary, RouteReason::ReplicaError };
        }
    }
    RouteTarget servedBy = RouteTarget::Primary;
    Result<QList<TenantPtr>> tenants = routedRead<QList<TenantPtr>>(
            decision, QStringLiteral("tenant refresh"),
            [this](QSqlDatabase db) { return fetchAllFrom(db); }, &servedBy);
    if (tenants && servedBy == RouteTarget::Primary) {
        rememberPrimaryPosition();
    }
    if (!tenants) {
        // Keep serving the last known tenants; the next refresh tries again.
        qCWarning(lcTenants) << "tenant refresh failed:" << tenants.error().message;
        return;
    }
    QHash<QByteArray, TenantPtr> previous;
    // Stored rows, not the effective tenants: cluster-wide overrides are not database changes.
    for (const TenantPtr &tenant : m_directory.allStored()) {
        previous.insert(tenant->externalId, tenant);
    }
    // Unchanged tenants keep their published snapshot; changed ones are announced after the
    // directory holds the new values.
    QList<std::pair<QByteArray, bool>> changed;
    for (TenantPtr &tenant : *tenants) {
        const TenantPtr old = previous.take(tenant->externalId);
        if (old && !storedDiffer(*old, *tenant)) {
            tenant = old;
        } else {
            changed.append({ tenant->externalId, old && credentialsDiffer(*old, *tenant) });
        }
    }
    m_directory.replaceAll(*tenants);
    for (const auto &[externalId, disconnect] : std::as_const(changed)) {
        Q_EMIT tenantChanged(externalId, disconnect);
    }
    // Tenants deleted elsewhere: their sockets go.
    for (auto it = previous.cbegin(); it != previous.cend(); ++it) {
        Q_EMIT tenantChanged(it.key(), true);
    }
}

Result<TenantPtr> ControlPlane::refreshTenant(const QByteArray &externalId)
{
    Result<TenantPtr> read = fetchTenant(externalId);
    if (!read) {
        qCWarning(lcTenants).noquote() << "re-reading tenant" << QString::fromUtf8(externalId)
                                       << "failed:" << read.error().message;
        return read;
    }
    rememberPrimaryPosition();
    const TenantPtr old = m_directory.findStored(externalId);
    const TenantPtr &now = *read;
    if (!now) {
        if (old) {
            m_directory.remove(externalId);
            Q_EMIT tenantChanged(externalId, true); // deleted elsewhere: its sockets go
        }
        return read;
    }
    if (old && !storedDiffer(*old, *now)) {
        return old; // unchanged: the published snapshot stays
    }
    m_directory.upsert(now);
    Q_EMIT tenantChanged(externalId, old && credentialsDiffer(*old, *now));
    return read;
}

} // namespace rt::tenants
