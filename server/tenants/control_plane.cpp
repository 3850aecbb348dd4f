#include "server/tenants/control_plane.h"

#include "server/auth/jwt.h"
#include "server/tenants/logging.h"
#include "server/tenants/sql_values.h"
#include "server/tenants/tenant_directory.h"
#include "server/tenants/tenant_record.h"

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

#include <atomic>
#include <utility>

namespace rt::tenants {

using sql::describe;
using sql::newUuid;
using sql::nowText;
using sql::optionalInt;
using sql::parseObject;
using sql::parseTimestamp;

namespace {

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

QSqlDatabase ControlPlane::database() const
{
    return QSqlDatabase::database(m_connectionName, false);
}

Result<QJsonObject> ControlPlane::encryptSettings(const QByteArray &tenant, const QString &type,
                                                  const QJsonObject &settings) const
{
    QJsonObject stored = settings;
    if (type != QLatin1String("postgres_cdc_rls")) {
        return stored;
    }
    for (const QString &key : encryptedSettingKeys()) {
        const QJsonValue value = stored.value(key);
        if (value.isString()) {
            const QByteArray field = key.toUtf8();
            Result<QByteArray> sealed =
                    m_cipher->encrypt(value.toString().toUtf8(), SecretPlace{ tenant, field });
            if (!sealed) {
                return Error{ sealed.error().message };
            }
            stored.insert(key, QString::fromLatin1(*sealed));
        }
    }
    return stored;
}

Result<QList<Extension>> ControlPlane::readExtensions(const QSqlDatabase &db,
                                                      const QString &externalId)
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
                const QByteArray owner = query.value(2).toString().toUtf8();
                const QByteArray field = key.toUtf8();
                const Result<QByteArray> plain =
                        m_cipher->decrypt(value.toString().toUtf8(), SecretPlace{ owner, field });
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
    return routedRead<QList<TenantPtr>>(
            m_router.forApiRead(session), QStringLiteral("tenant API: list tenants"),
            [this](const QSqlDatabase &db) { return fetchAllFrom(db); });
}

Result<TenantPtr> ControlPlane::fetchTenant(const QByteArray &externalId, const ApiSession &session)
{
    return routedRead<TenantPtr>(
            m_router.forApiRead(session),
            QStringLiteral("tenant API: read tenant %1").arg(QString::fromUtf8(externalId)),
            [this, &externalId](const QSqlDatabase &db) {
                return fetchTenantFrom(db, externalId);
            });
}

Result<QList<TenantPtr>> ControlPlane::fetchAllFrom(const QSqlDatabase &db)
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

Result<TenantPtr> ControlPlane::fetchTenantFrom(const QSqlDatabase &db,
                                                const QByteArray &externalId)
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
        const Result<QByteArray> plain = m_cipher->decrypt(
                secret.toString().toUtf8(), SecretPlace{ tenant->externalId, "jwt_secret" });
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
    tenant->historySize = value("history_size").toInt();
    tenant->historyTtlSeconds = value("history_ttl_seconds").toInt();
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
                QStringLiteral("connect_timeout=2;application_name=qtrealtime-replica;")
                + m_settings.sslConnectOptions());
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

namespace {

ControlPlane::WriteFailure writeFailure(int status, const QString &message)
{
    ControlPlane::WriteFailure failed;
    failed.status = status;
    failed.message = message;
    return failed;
}

} // namespace

Result<TenantPtr, ControlPlane::WriteFailure> ControlPlane::lockedTenant(const QSqlDatabase &db,
                                                                         const QString &key)
{
    // Locked for the transaction on PostgreSQL (SQLite's write transaction serialises writers
    // already).
    const bool postgres = m_settings.backend == ControlPlaneSettings::Backend::Postgres;
    QSqlQuery query(db);
    query.prepare(
            QStringLiteral("SELECT * FROM %1 WHERE external_id = ?%2")
                    .arg(table("tenants"), postgres ? QStringLiteral(" FOR UPDATE") : QString()));
    query.addBindValue(key);
    if (!query.exec()) {
        return writeFailure(500, describe(query.lastError()));
    }
    if (!query.next()) {
        return TenantPtr();
    }
    const QSqlRecord row = query.record();
    Result<QList<Extension>> extensions = readExtensions(db, key);
    if (!extensions) {
        return writeFailure(500, extensions.error().message);
    }
    for (Extension &extension : *extensions) {
        extension.settings.remove(QStringLiteral("\x01owner"));
    }
    return tenantFromRow(row, *extensions);
}

Result<bool, ControlPlane::WriteFailure> ControlPlane::exec(QSqlQuery &query, const QString &what)
{
    if (query.exec()) {
        return true;
    }
    const QString message = describe(query.lastError());
    return writeFailure(500,
                        what.isEmpty() ? message : QStringLiteral("%1: %2").arg(what, message));
}

Result<bool, ControlPlane::WriteFailure>
ControlPlane::deleteRows(const QSqlDatabase &db, const QString &key, bool tenantToo)
{
    QSqlQuery query(db);
    query.prepare(
            QStringLiteral("DELETE FROM %1 WHERE tenant_external_id = ?").arg(table("extensions")));
    query.addBindValue(key);
    if (Result<bool, WriteFailure> done = exec(query, {}); !done || !tenantToo) {
        return done;
    }
    query.prepare(QStringLiteral("DELETE FROM %1 WHERE external_id = ?").arg(table("tenants")));
    query.addBindValue(key);
    return exec(query, {});
}

Result<bool, ControlPlane::WriteFailure> ControlPlane::storeRow(const QSqlDatabase &db,
                                                                const Tenant &record, bool insert)
{
    // Every column a write sets comes from one table (tenant_record.h): the SQL's column list
    // and the bound values cannot disagree.
    QStringList names;
    for (const TenantColumn &column : writtenTenantColumns()) {
        names.append(QString(column.name));
    }
    QSqlQuery query(db);
    const QString key = QString::fromUtf8(record.externalId);
    if (insert) {
        const QStringList placeholders(names.size() + 3, QStringLiteral("?"));
        query.prepare(
                QStringLiteral("INSERT INTO %1 (id, external_id, inserted_at, %2) VALUES (%3)")
                        .arg(table("tenants"), names.join(QStringLiteral(", ")),
                             placeholders.join(QStringLiteral(", "))));
        query.addBindValue(record.id);
        query.addBindValue(key);
        query.addBindValue(record.insertedAt.toString(Qt::ISODate));
    } else {
        query.prepare(QStringLiteral("UPDATE %1 SET %2 = ? WHERE external_id = ?")
                              .arg(table("tenants"), names.join(QStringLiteral(" = ?, "))));
    }
    std::optional<Error> sealFailure;
    const auto encrypt = [this, &record, &sealFailure](QLatin1StringView field,
                                                       const QByteArray &plain) {
        const QByteArray name(field.data(), field.size());
        Result<QByteArray> sealed =
                m_cipher->encrypt(plain, SecretPlace{ record.externalId, name });
        if (!sealed) {
            sealFailure = sealed.error();
            return QByteArray();
        }
        return *sealed;
    };
    for (const TenantColumn &column : writtenTenantColumns()) {
        query.addBindValue(column.value(record, encrypt));
    }
    if (sealFailure) {
        return writeFailure(
                500, QStringLiteral("cannot write tenant %1: %2").arg(key, sealFailure->message));
    }
    if (!insert) {
        query.addBindValue(key);
    }
    return exec(query, QStringLiteral("cannot write tenant %1").arg(key));
}

Result<bool, ControlPlane::WriteFailure> ControlPlane::storeExtensions(const QSqlDatabase &db,
                                                                       Tenant &record)
{
    const QString now = record.updatedAt.toString(Qt::ISODate);
    QSqlQuery query(db);
    for (Extension &extension : record.extensions) {
        Result<QJsonObject> sealed =
                encryptSettings(record.externalId, extension.type, extension.settings);
        if (!sealed) {
            return writeFailure(500,
                                QStringLiteral("cannot write extension %1: %2")
                                        .arg(extension.type, sealed.error().message));
        }
        extension.storedSettings = *sealed;
        extension.insertedAt = record.updatedAt;
        extension.updatedAt = record.updatedAt;
        query.prepare(QStringLiteral("INSERT INTO %1 (id, type, settings, tenant_external_id, "
                                     "inserted_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)")
                              .arg(table("extensions")));
        query.addBindValue(newUuid());
        query.addBindValue(extension.type);
        query.addBindValue(QString::fromUtf8(
                QJsonDocument(extension.storedSettings).toJson(QJsonDocument::Compact)));
        query.addBindValue(QString::fromUtf8(record.externalId));
        query.addBindValue(now);
        query.addBindValue(now);
        Result<bool, WriteFailure> done =
                exec(query, QStringLiteral("cannot write extension %1").arg(extension.type));
        if (!done) {
            return done;
        }
    }
    return true;
}

Result<TenantPtr, ControlPlane::WriteFailure>
ControlPlane::writeInTransaction(const QSqlDatabase &db, const QByteArray &externalId,
                                 const TenantPatch &patch, WriteMode mode)
{
    const QString key = QString::fromUtf8(externalId);
    Result<TenantPtr, WriteFailure> before = lockedTenant(db, key);
    if (!before) {
        return before;
    }
    const bool create = !*before || mode == WriteMode::Replace;
    PatchContext context;
    context.replace = mode == WriteMode::Replace;
    context.externalId = externalId;
    context.newId = newUuid();
    // Seconds, as stored: the record compares equal to what a later read gives.
    context.now = QDateTime::fromString(nowText(), Qt::ISODate);
    Result<Tenant, QJsonObject> after = applyPatch(before->get(), patch, m_defaults, context);
    if (!after) {
        WriteFailure failed;
        failed.errors = after.error();
        return failed;
    }
    if (create && *before) {
        if (Result<bool, WriteFailure> done = deleteRows(db, key, true); !done) {
            return std::move(done).error();
        }
    }
    if (Result<bool, WriteFailure> done = storeRow(db, *after, create); !done) {
        return std::move(done).error();
    }
    if (patch.extensions && !create) {
        if (Result<bool, WriteFailure> done = deleteRows(db, key, false); !done) {
            return std::move(done).error();
        }
    }
    if (patch.extensions || create) {
        if (Result<bool, WriteFailure> done = storeExtensions(db, *after); !done) {
            return std::move(done).error();
        }
    }
    return *before;
}

Result<ControlPlane::Written, ControlPlane::WriteFailure>
ControlPlane::writeTenant(const QByteArray &externalId, const TenantPatch &patch, WriteMode mode)
{
    record(m_router.forWrite(),
           QStringLiteral("write tenant %1").arg(QString::fromUtf8(externalId)));
    QSqlDatabase db = database();
    if (!db.transaction()) {
        return writeFailure(500, describe(db.lastError()));
    }
    Result<TenantPtr, WriteFailure> before = writeInTransaction(db, externalId, patch, mode);
    if (!before || !db.commit()) {
        const WriteFailure failed =
                before ? writeFailure(500, describe(db.lastError())) : before.error();
        db.rollback();
        return failed;
    }
    // Publish the tenant as stored (re-read, so the directory holds exactly the database's view),
    // and remember where the primary's WAL was: the cache refresh must not read a replica that
    // has not replayed this write yet.
    Result<TenantPtr> stored = fetchTenantFrom(db, externalId);
    rememberPrimaryPosition();
    if (!stored || !*stored) {
        return writeFailure(500,
                            stored ? QStringLiteral("tenant vanished after writing it")
                                   : stored.error().message);
    }
    const Written written = sideEffects(*before, *stored, patch);
    m_directory.upsert(*stored);
    Q_EMIT tenantChanged(externalId, written.disconnectSockets);
    Q_EMIT tenantWritten(externalId);
    return written;
}

ControlPlane::Written ControlPlane::sideEffects(const TenantPtr &before, const TenantPtr &stored,
                                                const TenantPatch &patch)
{
    Written written;
    written.created = !before;
    written.tenant = stored;
    if (before) {
        // Upstream treats any request carrying a non-empty jwt_secret as a change (the stored
        // ciphertext always differs), so clients reconnect even when the secret is the same.
        written.disconnectSockets = credentialsDiffer(*before, *stored)
                || (patch.jwtSecret && !patch.jwtSecret->isEmpty());
        written.databaseSettingsChanged = patch.extensions.has_value();
        written.eventLimitChanged = before->maxEventsPerSecond != stored->maxEventsPerSecond;
        written.joinLimitChanged = before->maxJoinsPerSecond != stored->maxJoinsPerSecond;
        written.presenceLimitChanged =
                before->maxPresenceEventsPerSecond != stored->maxPresenceEventsPerSecond;
    }
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
            [this](const QSqlDatabase &db) { return fetchAllFrom(db); }, &servedBy);
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
