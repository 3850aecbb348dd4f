#include "server/tenants/control_plane.h"
#include "server/tenants/logging.h"
#include "server/tenants/private_files.h"
#include "server/tenants/sql_values.h"
#include "server/tenants/tenant_directory.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QSqlError>
#include <QSqlQuery>

#include <openssl/rand.h>

// The control plane's start: open the database, prepare the secrets' cipher, apply the embedded
// migrations, check the key, replace the seed tenants, load every tenant. The rest of the class
// (reads, writes, refreshes) is in control_plane.cpp.
namespace rt::tenants {

using sql::describe;

namespace {

// Nodes starting together must not run the same migration twice, nor race on creating the
// schema and the bookkeeping table (concurrent CREATE ... IF NOT EXISTS can fail on PostgreSQL's
// catalog unique indexes): all of it runs under one transaction-level lock.
const QString MigrationLock = QStringLiteral("SELECT pg_advisory_xact_lock(7305190412)");

// 16 characters of [A-Za-z0-9] from OpenSSL's generator, without modulo bias (bytes that
// would favour the first letters are drawn again): the embedded default's AES-128 key, kept as
// printable text so that an operator can copy it into DB_ENC_KEY.
Result<QByteArray> randomKeyText()
{
    static constexpr char Alphabet[] =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    constexpr int Letters = sizeof(Alphabet) - 1;
    constexpr int Unbiased = 256 - 256 % Letters;
    QByteArray key;
    while (key.size() < 16) {
        unsigned char draw[32];
        if (RAND_bytes(draw, sizeof(draw)) != 1) {
            return Error{ QStringLiteral("cannot generate an encryption key: OpenSSL's random "
                                         "generator failed") };
        }
        for (const unsigned char byte : draw) {
            if (byte < Unbiased && key.size() < 16) {
                key.append(Alphabet[byte % Letters]);
            }
        }
    }
    return key;
}

} // namespace

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
        db.setConnectOptions(QStringLiteral("connect_timeout=10;application_name=qtrealtime;")
                             + m_settings.sslConnectOptions());
    } else {
        // The database holds the tenants' (encrypted) secrets and their key may sit beside it:
        // both are this user's only, from the moment they exist.
        const QFileInfo file(m_settings.sqlitePath);
        Result<bool> madePrivate = ensurePrivateDirectory(file.absolutePath());
        if (madePrivate) {
            madePrivate = ensurePrivateFile(file.absoluteFilePath());
        }
        if (!madePrivate) {
            return madePrivate;
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

Result<bool> ControlPlane::createMigrationsTable(QSqlDatabase db, const QString &migrations) const
{
    const bool postgres = m_settings.backend == ControlPlaneSettings::Backend::Postgres;
    QSqlQuery query(db);
    if (!db.transaction()) {
        return Error{
            QStringLiteral("cannot start a transaction: %1").arg(describe(db.lastError()))
        };
    }
    if (postgres
        && (!query.exec(MigrationLock)
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
    return true;
}

Result<bool> ControlPlane::migrate()
{
    const bool postgres = m_settings.backend == ControlPlaneSettings::Backend::Postgres;
    QSqlDatabase db = QSqlDatabase::database(m_connectionName, false);
    // Our own bookkeeping table, named so it cannot collide with the Elixir server's
    // schema_migrations if both ever share a database.
    const QString migrations = table("qtrealtime_migrations");
    if (Result<bool> created = createMigrationsTable(db, migrations); !created) {
        return created;
    }
    const QString folder = postgres ? QStringLiteral(":/sql/control_plane/postgres")
                                    : QStringLiteral(":/sql/control_plane/sqlite");
    const QStringList files =
            QDir(folder).entryList({ QStringLiteral("*.sql") }, QDir::Files, QDir::Name);
    if (files.isEmpty()) {
        return Error{ QStringLiteral("no control-plane migrations embedded under %1").arg(folder) };
    }
    QList<qint64> appliedHere;
    for (const QString &fileName : files) {
        Result<bool> applied =
                applyMigration(db, folder + u'/' + fileName, migrations, appliedHere);
        if (!applied) {
            return applied;
        }
        if (*applied) {
            appliedHere.append(fileName.section(u'_', 0, 0).toLongLong());
            qCInfo(lcTenants) << "applied control-plane migration" << fileName;
        }
    }
    return true;
}

namespace {

// Whether migration 2 must encrypt the secrets already stored.
bool encryptsExistingSecrets(QSqlQuery &query, const QString &migrations, qint64 version,
                             const QList<qint64> &appliedHere)
{
    // A database our first version created (migration 1 applied by an earlier start, 2 not yet)
    // holds its secrets in plain text: they are encrypted in migration 2's transaction, so
    // exactly once, by whichever node applies it. Migration 1 applied during this start means a
    // new database, or tables another server created (e.g. Supabase Realtime's own, whose
    // secrets are encrypted already): nothing to do.
    if (version != 2 || appliedHere.contains(1)) {
        return false;
    }
    query.prepare(QStringLiteral("SELECT 1 FROM %1 WHERE version = 1").arg(migrations));
    return query.exec() && query.next();
}

// Runs the statements of the migration file at `path`; the error message if one fails.
std::optional<QString> runMigrationFile(QSqlQuery &query, const QString &path,
                                        const QString &fileName)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        return QStringLiteral("cannot read migration %1").arg(fileName);
    }
    for (const QString &statement : sql::splitStatements(QString::fromUtf8(file.readAll()))) {
        if (!query.exec(statement)) {
            return QStringLiteral("control-plane migration %1 failed: %2")
                    .arg(fileName, describe(query.lastError()));
        }
    }
    return std::nullopt;
}

bool recordMigration(QSqlQuery &query, const QString &migrations, qint64 version,
                     const QString &fileName)
{
    query.prepare(QStringLiteral("INSERT INTO %1 (version, name, inserted_at) VALUES (?, ?, ?)")
                          .arg(migrations));
    query.addBindValue(version);
    query.addBindValue(fileName);
    query.addBindValue(sql::nowText());
    return query.exec();
}

} // namespace

// One migration in its own transaction, under the lock; false when it was applied before.
Result<bool> ControlPlane::applyMigration(QSqlDatabase db, const QString &path,
                                          const QString &migrations,
                                          const QList<qint64> &appliedHere)
{
    const QString fileName = QFileInfo(path).fileName();
    const qint64 version = fileName.section(u'_', 0, 0).toLongLong();
    const bool postgres = m_settings.backend == ControlPlaneSettings::Backend::Postgres;
    QSqlQuery query(db);
    const auto abandon = [&db](const QString &message) {
        db.rollback();
        return Error{ message };
    };
    if (!db.transaction()) {
        return Error{
            QStringLiteral("cannot start a transaction: %1").arg(describe(db.lastError()))
        };
    }
    if (postgres && !query.exec(MigrationLock)) {
        return abandon(describe(query.lastError()));
    }
    query.prepare(QStringLiteral("SELECT 1 FROM %1 WHERE version = ?").arg(migrations));
    query.addBindValue(version);
    if (!query.exec()) {
        return abandon(describe(query.lastError()));
    }
    if (query.next()) {
        db.rollback();
        return false;
    }
    const bool encryptExisting = encryptsExistingSecrets(query, migrations, version, appliedHere);
    if (const std::optional<QString> failed = runMigrationFile(query, path, fileName)) {
        return abandon(*failed);
    }
    if (encryptExisting) {
        if (const Result<bool> encrypted = encryptPlaintextSecrets(); !encrypted) {
            return abandon(QStringLiteral("control-plane migration %1 failed: %2")
                                   .arg(fileName, encrypted.error().message));
        }
    }
    if (!recordMigration(query, migrations, version, fileName) || !db.commit()) {
        return abandon(QStringLiteral("cannot record migration %1: %2")
                               .arg(fileName, describe(query.lastError())));
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
    if (step) {
        step = seed(seeds);
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

Result<bool> ControlPlane::seed(const QList<TenantInput> &seeds)
{
    for (const TenantInput &seed : seeds) {
        Result<Written, WriteFailure> written =
                writeTenant(seed.externalId, seed.toPatch(), WriteMode::Replace);
        if (!written) {
            const WriteFailure &failure = written.error();
            return Error{
                QStringLiteral("cannot seed tenant %1: %2")
                        .arg(QString::fromUtf8(seed.externalId),
                             failure.message.isEmpty() ? QString::fromUtf8(
                                     QJsonDocument(failure.errors).toJson(QJsonDocument::Compact))
                                                       : failure.message)
            };
        }
        qCInfo(lcTenants) << "seeded tenant" << seed.externalId;
    }
    return true;
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
            if (Result<bool> tightened = ensurePrivateFile(m_settings.keyFile); !tightened) {
                return tightened;
            }
            if (!file.open(QIODevice::ReadOnly)) {
                return Error{ QStringLiteral("cannot read the encryption key file %1: %2")
                                      .arg(m_settings.keyFile, file.errorString()) };
            }
            key = file.readAll().trimmed();
        } else {
            Result<QByteArray> random = randomKeyText();
            if (!random) {
                return Error{ random.error().message };
            }
            key = *random;
            if (Result<bool> written = createPrivateFile(m_settings.keyFile, key); !written) {
                return Error{ QStringLiteral("cannot write the encryption key file: %1")
                                      .arg(written.error().message) };
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
    const SecretPlace checkPlace{ QByteArrayView(), "encryption_check" };
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
        if (query.next()
            && !m_cipher->decrypt(
                    query.value(1).toString().toUtf8(),
                    SecretPlace{ query.value(0).toString().toUtf8(), "jwt_secret" })) {
            return Error{ wrongKey
                          + QStringLiteral(" (the jwt_secret of tenant %1 does not decrypt)")
                                    .arg(query.value(0).toString()) };
        }
        // Nodes starting together on a new database: the first one's check counts.
        query.prepare(QStringLiteral("INSERT INTO %1 (name, value) VALUES ('encryption_check', ?) "
                                     "ON CONFLICT (name) DO NOTHING")
                              .arg(table("qtrealtime_settings")));
        const Result<QByteArray> check = m_cipher->encrypt(Check, checkPlace);
        if (!check) {
            return Error{ check.error().message };
        }
        query.addBindValue(QString::fromLatin1(*check));
        if (!query.exec()) {
            return Error{ QStringLiteral("cannot store the encryption check: %1")
                                  .arg(describe(query.lastError())) };
        }
        if (!query.exec(read) || !query.next()) {
            return Error{ QStringLiteral("cannot read control-plane settings: %1")
                                  .arg(describe(query.lastError())) };
        }
    }
    const Result<QByteArray> plain =
            m_cipher->decrypt(query.value(0).toString().toUtf8(), checkPlace);
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
        const QByteArray tenant = read.value(0).toString().toUtf8();
        const Result<QByteArray> sealed = m_cipher->encrypt(read.value(1).toString().toUtf8(),
                                                            SecretPlace{ tenant, "jwt_secret" });
        if (!sealed) {
            return Error{ sealed.error().message };
        }
        write.addBindValue(QString::fromLatin1(*sealed));
        write.addBindValue(read.value(0).toString());
        if (!write.exec()) {
            return Error{ describe(write.lastError()) };
        }
    }
    if (!read.exec(QStringLiteral("SELECT id, type, settings, tenant_external_id FROM %1")
                           .arg(table("extensions")))) {
        return Error{ describe(read.lastError()) };
    }
    while (read.next()) {
        write.prepare(
                QStringLiteral("UPDATE %1 SET settings = ? WHERE id = ?").arg(table("extensions")));
        const Result<QJsonObject> settings =
                encryptSettings(read.value(3).toString().toUtf8(), read.value(1).toString(),
                                sql::parseObject(read.value(2)));
        if (!settings) {
            return Error{ settings.error().message };
        }
        write.addBindValue(
                QString::fromUtf8(QJsonDocument(*settings).toJson(QJsonDocument::Compact)));
        write.addBindValue(read.value(0).toString());
        if (!write.exec()) {
            return Error{ describe(write.lastError()) };
        }
    }
    qCInfo(lcTenants) << "encrypted the secrets stored by an earlier version";
    return true;
}

} // namespace rt::tenants
