#pragma once

#include "server/metrics/family.h"
#include "server/tenants/replica_router.h"
#include "server/tenants/secret_cipher.h"
#include "server/tenants/tenant.h"
#include "server/tenants/tenant_input.h"
#include "server/tenants/tenant_record.h"
#include "shared/core/result.h"

#include <QJsonObject>
#include <QObject>
#include <QSqlDatabase>

#include <optional>

class QSqlQuery;
class QSqlRecord;

namespace rt::tenants {

class TenantDirectory;

// Where tenants are stored: an SQLite file (the embedded default) or PostgreSQL (tables in
// schema _realtime), the same columns and rules either way, and how their secrets are encrypted.
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
    // DB_SSLMODE (libpq's sslmode) and DB_SSLROOTCERT (the CA file verify-ca and verify-full
    // check the server against), for the primary and the replica alike.
    QString sslMode = QStringLiteral("prefer");
    QString sslRootCert;
    // "sslmode=...;sslrootcert=..." for QPSQL's connect options (the values are checked by the
    // configuration to hold no ';' or blanks).
    QString sslConnectOptions() const
    {
        return QStringLiteral("sslmode=") + sslMode
                + (sslRootCert.isEmpty() ? QString()
                                         : QStringLiteral(";sslrootcert=") + sslRootCert);
    }
    // DB_ENC_KEY (16 bytes), DB_ENC_KEY_GCM (32 bytes), DB_ENC_WRITE_GCM. For SQLite without a
    // key, one is generated in keyFile (0600) on first start.
    QByteArray encryptionKey;
    QByteArray encryptionKeyGcm;
    bool writeGcm = false;
    QString keyFile; // Sqlite only
    // A streaming replica of the PostgreSQL control plane (DB_REPLICA_HOST, DB_REPLICA_PORT):
    // same database, user and password as the primary. Empty host: everything uses the primary.
    QString replicaHost;
    int replicaPort = 5432;
    // DB_REPLICA_DELAY_MS: an API session that wrote less than this ago reads from the primary.
    int replicaDelayMs = 2000;
    // DB_REPLICA_RETRY_MS: after the replica failed, reads use the primary this long.
    int replicaRetryMs = 5000;

    bool hasReplica() const { return backend == Backend::Postgres && !replicaHost.isEmpty(); }
};

// The control-plane database: migrations, encryption at rest, tenant reads and writes, and the
// TenantDirectory it keeps current. Lives on its own "db" thread because QtSql calls block;
// every method runs there. Other threads reach it by posting; it answers through signals or
// thread-safe handles (runtime::Mailbox).
class ControlPlane : public QObject
{
    Q_OBJECT
public:
    ControlPlane(ControlPlaneSettings settings, TenantDefaults defaults, TenantDirectory &directory,
                 QObject *parent = nullptr);
    ~ControlPlane() override;

    // Opens the database, checks the encryption key, applies pending migrations, replaces the
    // seed tenants, loads every tenant into the directory, then emits ready() (or failed()
    // with one clear message).
    void start(const QList<TenantInput> &seeds);

    enum class WriteMode {
        Upsert, // tenant API: create when missing (name = external id), else update given fields
        Replace, // seeds: the tenant becomes exactly the input
    };
    struct Written
    {
        bool created = false;
        TenantPtr tenant;
        // Upstream's side effects (docs/upstream/tenants-limits-metrics.md §8): sockets are
        // disconnected when jwt_secret, jwt_jwks, suspend or private_only changed.
        bool disconnectSockets = false;
        bool databaseSettingsChanged = false;
        bool eventLimitChanged = false;
        bool joinLimitChanged = false;
        bool presenceLimitChanged = false;
    };
    struct WriteFailure
    {
        int status = 422; // 422 with per-field errors, 500 with a message
        QJsonObject errors;
        QString message;
    };
    Result<Written, WriteFailure> writeTenant(const QByteArray &externalId,
                                              const TenantPatch &patch, WriteMode mode);
    // Deletes a tenant and its extensions; false when there was none.
    Result<bool> deleteTenant(const QByteArray &externalId);
    // Reads tenants from the primary database (not the directory): start-up, tests and the
    // re-read after a write.
    Result<TenantPtr> fetchTenant(const QByteArray &externalId);
    Result<QList<TenantPtr>> fetchAll();
    // The same for a request of the tenant API, routed by ReplicaRouter::forApiRead(): from the
    // replica unless the request writes or its session wrote within the delay; from the
    // primary when the replica fails (the decision is logged and counted).
    Result<TenantPtr> fetchTenant(const QByteArray &externalId, const ApiSession &session);
    Result<QList<TenantPtr>> fetchAll(const ApiSession &session);

    // Where each routing decision is counted ({target, reason}); may stay unset. Set before the
    // control plane's thread starts; the family must outlive the control plane.
    void setRoutingCounters(metrics::CounterFamily *routing) { m_routing = routing; }
    // Whether reads may go to a replica, and the read-your-writes delay. Immutable: any thread.
    bool hasReplica() const { return m_settings.hasReplica(); }
    int replicaDelayMs() const { return m_settings.replicaDelayMs; }

    // Reloads every tenant (the cache's TTL): changes made by other nodes become visible, and
    // tenantChanged() is emitted for each tenant whose row changed or disappeared.
    // With a replica, the reload reads it only when it has replayed the primary's WAL up to
    // where this node last read or wrote the primary (else the primary): the directory never
    // goes back to a state older than one it already published, however far the replica lags.
    void refresh();
    // Re-reads one tenant from the primary at once (a peer asks this node to run the stream of a
    // tenant it may not have seen yet): the directory gets the stored row, or loses the tenant
    // when it is gone, and tenantChanged() is emitted as refresh() would. The stored tenant, or
    // null when there is none.
    Result<TenantPtr> refreshTenant(const QByteArray &externalId);

Q_SIGNALS:
    void ready(int tenantCount);
    void failed(const QString &message);
    // A tenant was written, deleted or found changed on refresh. `disconnectSockets`: its
    // sockets must get "Server requested disconnect" and close (credentials or access changed,
    // or the tenant is gone).
    void tenantChanged(const QByteArray &externalId, bool disconnectSockets);
    // A tenant was created, changed or deleted through this node (writeTenant, deleteTenant;
    // not a change found by a refresh): other nodes should re-read it now.
    void tenantWritten(const QByteArray &externalId);

private:
    Result<bool> open();
    Result<bool> prepareCipher();
    Result<bool> migrate();
    Result<bool> createMigrationsTable(QSqlDatabase db, const QString &migrations) const;
    Result<bool> applyMigration(QSqlDatabase db, const QString &path, const QString &migrations,
                                const QList<qint64> &appliedHere);
    Result<bool> seed(const QList<TenantInput> &seeds);
    Result<bool> verifyEncryptionKey();
    Result<bool> encryptPlaintextSecrets();
    Result<QList<Extension>> readExtensions(const QSqlDatabase &db, const QString &externalId);
    Result<TenantPtr> fetchTenantFrom(const QSqlDatabase &db, const QByteArray &externalId);
    Result<QList<TenantPtr>> fetchAllFrom(const QSqlDatabase &db);
    // Runs `read` on the database `decision` names; a replica failure marks it down and repeats
    // the read on the primary. Logs and counts the outcome under `what`.
    template <typename T, typename Read>
    Result<T> routedRead(RouteDecision decision, const QString &what, Read read,
                         RouteTarget *servedBy = nullptr);
    // The replica connection, opened on first use (and after a failure).
    Result<QSqlDatabase> replicaDatabase();
    void replicaFailed(const QString &what, const QString &message);
    void record(const RouteDecision &decision, const QString &what);
    // Remembers the primary's WAL insert position (after a write or a primary read the
    // directory publishes): a replica that has replayed it holds all the directory has seen.
    void rememberPrimaryPosition();
    // Whether the replica has replayed up to rememberPrimaryPosition(); an error when it fails.
    Result<bool> replicaCaughtUp();
    TenantPtr tenantFromRow(const QSqlRecord &row, const QList<Extension> &extensions) const;
    // writeTenant's steps, inside its transaction: the current record (locked), the new one
    // applied and stored with its extensions; the record before the write (null if none).
    Result<TenantPtr, WriteFailure> writeInTransaction(const QSqlDatabase &db,
                                                       const QByteArray &externalId,
                                                       const TenantPatch &patch, WriteMode mode);
    Result<TenantPtr, WriteFailure> lockedTenant(const QSqlDatabase &db, const QString &key);
    Result<bool, WriteFailure> deleteRows(const QSqlDatabase &db, const QString &key,
                                          bool tenantToo);
    Result<bool, WriteFailure> storeRow(const QSqlDatabase &db, const Tenant &record, bool insert);
    Result<bool, WriteFailure> storeExtensions(const QSqlDatabase &db, Tenant &record);
    static Result<bool, WriteFailure> exec(QSqlQuery &query, const QString &what);
    static Written sideEffects(const TenantPtr &before, const TenantPtr &stored,
                               const TenantPatch &patch);
    Result<QJsonObject> encryptSettings(const QByteArray &tenant, const QString &type,
                                        const QJsonObject &settings) const;
    QString table(const char *name) const;
    QSqlDatabase database() const;

    ControlPlaneSettings m_settings;
    TenantDefaults m_defaults;
    TenantDirectory &m_directory;
    QString m_connectionName;
    QString m_replicaConnectionName;
    std::optional<SecretCipher> m_cipher;
    ReplicaRouter m_router;
    metrics::CounterFamily *m_routing = nullptr;
    // The primary's WAL position when this node last wrote it or published a read of it
    // (pg_lsn text; empty: nothing yet), and whether the last attempt to learn it failed (then
    // no replica counts as caught up until it is known again).
    QString m_seenPrimaryLsn;
    bool m_seenPrimaryLsnUnknown = false;
};

} // namespace rt::tenants
