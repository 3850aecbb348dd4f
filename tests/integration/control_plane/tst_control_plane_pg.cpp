// The control plane on a real PostgreSQL 15 (the CTest fixture "postgres", pg-cluster.sh):
// migrations into schema _realtime, idempotent and serialised between nodes by the advisory
// lock, seed upserts, tenant CRUD through writeTenant/deleteTenant, jsonb extensions, secrets
// encrypted at rest (and a wrong key refused at start), the TTL refresh seeing other writers,
// and one clear failure message when the database cannot be reached.
// Every test case gets a fresh database (ScratchDatabase), dropped when it ends.
#include "server/auth/jwt.h"
#include "server/tenants/control_plane.h"
#include "server/tenants/secret_cipher.h"
#include "server/tenants/tenant_directory.h"
#include "server/tenants/tenant_input.h"
#include "tests/support/postgres/pg_env.h"
#include "tests/support/tenants/control_plane_start.h"

#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMutex>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTest>
#include <QThread>
#include <QUuid>

#include <memory>

using rt::tenants::ControlPlane;
using rt::tenants::ControlPlaneSettings;
using rt::tenants::Extension;
using rt::tenants::parseTenantPatch;
using rt::tenants::SecretCipher;
using rt::tenants::TenantDefaults;
using rt::tenants::TenantDirectory;
using rt::tenants::TenantInput;
using rt::tenants::TenantPatch;
using rt::tenants::TenantPtr;
using rt::testsupport::PgEnv;
using rt::testsupport::PgSession;
using rt::testsupport::ScratchDatabase;

namespace {

constexpr qint64 kMigrationLock = 7305190412; // ControlPlane's pg_advisory_xact_lock key

QJsonObject object(QByteArrayView json)
{
    return QJsonDocument::fromJson(json.toByteArray()).object();
}

TenantInput seed(const QByteArray &externalId, const QByteArray &secret)
{
    TenantInput input;
    input.externalId = externalId;
    input.jwtSecret = secret;
    return input;
}

// Defaults that differ from the built-in ones, to see that the control plane applies ours.
TenantDefaults customDefaults()
{
    TenantDefaults defaults;
    defaults.maxConcurrentUsers = 11;
    defaults.maxEventsPerSecond = 12;
    defaults.maxBytesPerSecond = 13;
    defaults.maxChannelsPerClient = 14;
    defaults.maxJoinsPerSecond = 15;
    defaults.maxPresenceEventsPerSecond = 16;
    defaults.maxPayloadSizeInKb = 17;
    return defaults;
}

// DB_ENC_KEY: tenant secrets in PostgreSQL are encrypted at rest, so the backend requires one.
const QByteArray TestKey = QByteArrayLiteral("0123456789abcdef");

// JSON written with ` for " (no raw string literals for moc to trip on).
QJsonObject json(const char *text)
{
    QByteArray bytes(text);
    bytes.replace('`', '"');
    return QJsonDocument::fromJson(bytes).object();
}

QByteArray compact(const QJsonObject &value)
{
    return QJsonDocument(value).toJson(QJsonDocument::Compact);
}

// A tenant API body, parsed as the HTTP layer does.
TenantPatch patchOf(const char *text)
{
    const rt::tenants::TenantPatchResult parsed = parseTenantPatch(json(text));
    if (!parsed.errors.isEmpty()) {
        qWarning("patch has errors: %s", compact(parsed.errors).constData());
    }
    return parsed.patch;
}

QStringList embeddedMigrations()
{
    return QDir(QStringLiteral(":/sql/control_plane/postgres"))
            .entryList({ QStringLiteral("*.sql") }, QDir::Files, QDir::Name);
}

// Counts the control plane's "applied control-plane migration" lines (from any thread) and
// keeps its other info lines out of the test log; everything else goes to QTest's handler.
class MigrationLog
{
public:
    static void install() { s_previous = qInstallMessageHandler(&MigrationLog::handle); }
    static void uninstall() { qInstallMessageHandler(s_previous); }
    static int applied()
    {
        const QMutexLocker lock(&s_mutex);
        return s_applied;
    }
    static void reset()
    {
        const QMutexLocker lock(&s_mutex);
        s_applied = 0;
    }

private:
    static void handle(QtMsgType type, const QMessageLogContext &context, const QString &text)
    {
        if (type == QtInfoMsg && context.category && qstrcmp(context.category, "rt.tenants") == 0) {
            if (text.contains(QLatin1String("applied control-plane migration"))) {
                const QMutexLocker lock(&s_mutex);
                ++s_applied;
            }
            return;
        }
        if (s_previous) {
            s_previous(type, context, text);
        }
    }

    static inline QtMessageHandler s_previous = nullptr;
    static inline QMutex s_mutex;
    static inline int s_applied = 0;
};

// One control-plane start, as the server does it: ready(count) or failed(message).
using rt::testsupport::StartOutcome;

StartOutcome startOnce(const ControlPlaneSettings &settings, const QList<TenantInput> &seeds,
                       TenantDirectory &directory, TenantDefaults defaults = customDefaults())
{
    return rt::testsupport::startControlPlane(settings, seeds, directory, defaults);
}

// A started control plane kept open, for writes through its API, with the signals it emits.
struct LivePlane
{
    explicit LivePlane(const ControlPlaneSettings &settings)
        : plane(settings, customDefaults(), directory),
          tenantChanged(&plane, &ControlPlane::tenantChanged)
    {
        QSignalSpy ready(&plane, &ControlPlane::ready);
        QSignalSpy failed(&plane, &ControlPlane::failed);
        plane.start({});
        started = ready.size() == 1;
        failure = failed.isEmpty() ? QString() : failed.constFirst().constFirst().toString();
        tenantChanged.clear();
    }

    ControlPlane::Written write(const QByteArray &externalId, const TenantPatch &patch)
    {
        auto written = plane.writeTenant(externalId, patch, ControlPlane::WriteMode::Upsert);
        if (!written) {
            qWarning("write of %s failed: %d %s %s", externalId.constData(), written.error().status,
                     qPrintable(written.error().message),
                     compact(written.error().errors).constData());
            return {};
        }
        return *written;
    }

    TenantDirectory directory;
    ControlPlane plane;
    QSignalSpy tenantChanged;
    bool started = false;
    QString failure;
};

// A ControlPlane on its own thread, as the server runs it ("db" thread).
class ThreadedPlane : public QObject
{
public:
    explicit ThreadedPlane(const ControlPlaneSettings &settings)
        : m_plane(new ControlPlane(settings, customDefaults(), m_directory)) // NOLINT
    {
        m_plane->moveToThread(&m_thread);
        connect(&m_thread, &QThread::finished, m_plane, &QObject::deleteLater);
        connect(m_plane, &ControlPlane::ready, this, [this](int count) { m_readyCount = count; });
        connect(m_plane, &ControlPlane::failed, this,
                [this](const QString &message) { m_failure = message; });
        m_thread.start();
    }
    ~ThreadedPlane() override
    {
        m_thread.quit();
        m_thread.wait();
    }

    void start()
    {
        ControlPlane *plane = m_plane;
        QMetaObject::invokeMethod(
                plane, [plane] { plane->start({}); }, Qt::QueuedConnection);
    }
    bool done() const { return m_readyCount >= 0 || !m_failure.isEmpty(); }
    int readyCount() const { return m_readyCount; }
    QString failure() const { return m_failure; }

private:
    TenantDirectory m_directory;
    QThread m_thread;
    ControlPlane *m_plane; // lives on m_thread, deleted when it finishes
    int m_readyCount = -1;
    QString m_failure;
};

QByteArray hsToken(const QByteArray &secret)
{
    QJsonObject claims;
    claims.insert(QStringLiteral("role"), QStringLiteral("anon"));
    claims.insert(QStringLiteral("exp"), QDateTime::currentSecsSinceEpoch() + 3600);
    return rt::auth::signHmac(claims, secret);
}

} // namespace

class ControlPlanePgTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();
    void cleanupTestCase();

    void emptyStartCreatesTheSchema();
    void migrationsAreAppliedOnceAndIdempotent();
    void concurrentStartsApplyEachMigrationOnce_data();
    void concurrentStartsApplyEachMigrationOnce();
    void seedsAreUpsertedAndReplacedNotDuplicated();
    void replacingASeedReplacesItsExtensions();
    void extensionsAreStoredAsJsonbAndLoaded();
    void tenantsLoadWithTheirLimits();
    void unsetLimitsTakeTheDefaults();
    void unusableJwksStillLoads_data();
    void unusableJwksStillLoads();
    void jwksThatIsNotJsonIsRefusedByJsonb();
    void unusableDatabaseFailsWithOneMessage_data();
    void unusableDatabaseFailsWithOneMessage();
    void tenantCrudThroughTheApi();
    void failedWriteRollsBackEverything();
    void secretsAreEncryptedAtRest();
    void wrongKeyFailsAtStart();
    void refreshSeesAnotherWriter();

private:
    ControlPlaneSettings settings() const;
    std::unique_ptr<PgSession> inspect() const;

    PgEnv m_env;
    std::unique_ptr<ScratchDatabase> m_db;
};

void ControlPlanePgTest::initTestCase()
{
    QString error;
    const std::optional<PgEnv> env = PgEnv::fromEnvironment(&error);
    QVERIFY2(env, qPrintable(error));
    m_env = *env;
    PgSession probe(m_env, QStringLiteral("postgres"));
    QVERIFY2(probe.isOpen(), qPrintable(probe.lastError()));
    QCOMPARE(probe.scalar(QStringLiteral("SHOW server_version_num")).toInt() / 10000, 15);
    QVERIFY(!embeddedMigrations().isEmpty());
    MigrationLog::install();
}

void ControlPlanePgTest::init()
{
    m_db = std::make_unique<ScratchDatabase>(m_env, QStringLiteral("rt_cp"));
    QVERIFY2(m_db->isValid(), qPrintable(m_db->error()));
    MigrationLog::reset();
}

void ControlPlanePgTest::cleanup()
{
    m_db.reset();
}

void ControlPlanePgTest::cleanupTestCase()
{
    MigrationLog::uninstall();
    // Nothing is left behind for the next suite: no scratch databases, and the shared
    // control-plane database was not touched.
    PgSession super(m_env, QStringLiteral("postgres"));
    QCOMPARE(super.column(QStringLiteral(
                     "SELECT datname FROM pg_database WHERE datname LIKE 'rt\\_cp\\_%'")),
             QStringList());
    PgSession control(m_env, m_env.controlDatabase);
    QCOMPARE(control.column(QStringLiteral(
                     "SELECT nspname FROM pg_namespace WHERE nspname = '_realtime'")),
             QStringList());
}

ControlPlaneSettings ControlPlanePgTest::settings() const
{
    ControlPlaneSettings settings;
    settings.encryptionKey = TestKey;
    settings.backend = ControlPlaneSettings::Backend::Postgres;
    settings.host = m_env.host;
    settings.port = m_env.port;
    settings.database = m_db->name();
    settings.user = m_env.user;
    settings.password = m_env.password;
    return settings;
}

// A superuser connection to this test case's database.
std::unique_ptr<PgSession> ControlPlanePgTest::inspect() const
{
    return std::make_unique<PgSession>(m_env, m_db->name());
}

void ControlPlanePgTest::emptyStartCreatesTheSchema()
{
    TenantDirectory directory;
    const StartOutcome outcome = startOnce(settings(), {}, directory);
    QCOMPARE(outcome.failure, QString());
    QCOMPARE(outcome.readySignals, 1);
    QCOMPARE(outcome.failedSignals, 0);
    QCOMPARE(outcome.readyCount, 0);
    QCOMPARE(directory.size(), 0);

    const auto db = inspect();
    QVERIFY2(db->isOpen(), qPrintable(db->lastError()));
    const QStringList tables = db->column(QStringLiteral(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = '_realtime' "
            "ORDER BY 1"));
    for (const char *required : { "extensions", "qtrealtime_migrations", "tenants" }) {
        QVERIFY2(tables.contains(QLatin1String(required)),
                 qPrintable(tables.join(QStringLiteral(", "))));
    }
    // Created by (and so owned by) the unprivileged realtime role.
    QCOMPARE(db->column(QStringLiteral("SELECT nspowner::regrole::text FROM pg_namespace "
                                       "WHERE nspname = '_realtime'")),
             QStringList{ m_env.user });
    QCOMPARE(db->column(QStringLiteral(
                     "SELECT table_name || '.' || column_name || ':' || data_type "
                     "FROM information_schema.columns WHERE table_schema = '_realtime' "
                     "AND column_name IN ('jwt_jwks', 'settings', 'feature_flags', 'id') "
                     "ORDER BY 1")),
             (QStringList{ QStringLiteral("extensions.id:uuid"),
                           QStringLiteral("extensions.settings:jsonb"),
                           QStringLiteral("tenants.feature_flags:jsonb"),
                           QStringLiteral("tenants.id:uuid"),
                           QStringLiteral("tenants.jwt_jwks:jsonb") }));
    QCOMPARE(MigrationLog::applied(), embeddedMigrations().size());
}

void ControlPlanePgTest::migrationsAreAppliedOnceAndIdempotent()
{
    const QStringList embedded = embeddedMigrations();
    TenantDirectory directory;
    QCOMPARE(startOnce(settings(), { seed("t1", "s") }, directory).readyCount, 1);
    QCOMPARE(MigrationLog::applied(), embedded.size());
    const auto db = inspect();
    const QString names =
            QStringLiteral("SELECT name FROM _realtime.qtrealtime_migrations ORDER BY version");
    const QString stamps = QStringLiteral(
            "SELECT inserted_at FROM _realtime.qtrealtime_migrations ORDER BY version");
    QCOMPARE(db->column(names), embedded);
    const QStringList firstRun = db->column(stamps);

    // A second start applies nothing and keeps the data.
    MigrationLog::reset();
    TenantDirectory again;
    const StartOutcome second = startOnce(settings(), {}, again);
    QCOMPARE(second.failure, QString());
    QCOMPARE(second.readyCount, 1);
    QVERIFY(again.find("t1"));
    QCOMPARE(MigrationLog::applied(), 0);
    QCOMPARE(db->column(names), embedded);
    QCOMPARE(db->column(stamps), firstRun);
}

void ControlPlanePgTest::concurrentStartsApplyEachMigrationOnce_data()
{
    QTest::addColumn<bool>("holdLock");
    // The test holds the migration lock until both nodes wait for it: they meet at the lock.
    QTest::newRow("meeting at the lock") << true;
    // Both start at once, nothing held: they meet wherever they happen to.
    QTest::newRow("free start 1") << false;
    QTest::newRow("free start 2") << false;
    QTest::newRow("free start 3") << false;
}

void ControlPlanePgTest::concurrentStartsApplyEachMigrationOnce()
{
    QFETCH(bool, holdLock);
    const QStringList embedded = embeddedMigrations();
    const auto db = inspect();
    const QString lockWaiters =
            QStringLiteral(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
                    "AND classid = %1 AND objid = %2 AND objsubid = 1")
                    .arg(kMigrationLock >> 32)
                    .arg(kMigrationLock & 0xffffffff);
    if (holdLock) {
        QVERIFY2(db->exec(QStringLiteral("SELECT pg_advisory_lock(%1)").arg(kMigrationLock)),
                 qPrintable(db->lastError()));
    }

    ThreadedPlane first(settings());
    ThreadedPlane second(settings());
    first.start();
    second.start();
    if (holdLock) {
        QTRY_COMPARE_WITH_TIMEOUT(db->scalar(lockWaiters).toInt(), 2, 10'000);
        QVERIFY(!first.done() && !second.done());
        QVERIFY2(db->exec(QStringLiteral("SELECT pg_advisory_unlock(%1)").arg(kMigrationLock)),
                 qPrintable(db->lastError()));
    }
    QTRY_VERIFY_WITH_TIMEOUT(first.done() && second.done(), 20'000);

    QCOMPARE(first.failure(), QString());
    QCOMPARE(second.failure(), QString());
    QCOMPARE(first.readyCount(), 0);
    QCOMPARE(second.readyCount(), 0);
    // Each migration was run by exactly one of them.
    QCOMPARE(MigrationLog::applied(), embedded.size());
    QCOMPARE(db->column(QStringLiteral(
                     "SELECT name FROM _realtime.qtrealtime_migrations ORDER BY version")),
             embedded);
}

void ControlPlanePgTest::seedsAreUpsertedAndReplacedNotDuplicated()
{
    TenantDirectory directory;
    TenantInput first = seed("t1", "old-secret");
    first.maxConcurrentUsers = 5;
    first.suspend = true;
    QCOMPARE(startOnce(settings(), { first }, directory).readyCount, 1);
    QCOMPARE(directory.find("t1")->maxConcurrentUsers, 5);
    const auto db = inspect();
    const QString firstId =
            db->scalar(QStringLiteral("SELECT id FROM _realtime.tenants")).toString();
    QVERIFY(!firstId.isEmpty());

    // Restart with the same external id (and a new one): replaced, not duplicated.
    TenantDirectory after;
    const StartOutcome outcome =
            startOnce(settings(), { seed("t1", "new-secret"), seed("t2", "x") }, after);
    QCOMPARE(outcome.failure, QString());
    QCOMPARE(outcome.readyCount, 2);
    QCOMPARE(after.size(), 2);
    const TenantPtr t1 = after.find("t1");
    QVERIFY(t1);
    QCOMPARE(t1->jwtSecret, QByteArray("new-secret"));
    // Replaced as a whole: fields the new seed leaves unset are back to their defaults.
    QCOMPARE(t1->maxConcurrentUsers, customDefaults().maxConcurrentUsers);
    QCOMPARE(t1->suspend, false);
    // Same tenant, same id (the tenant API's location header names it).
    QCOMPARE(t1->id, firstId);
    QCOMPARE(db->column(QStringLiteral(
                     "SELECT external_id || ':' || (jwt_secret IS NOT NULL) || ':' || "
                     "max_concurrent_users || ':' || suspend FROM _realtime.tenants "
                     "ORDER BY external_id")),
             (QStringList{ QStringLiteral("t1:true:11:false"),
                           QStringLiteral("t2:true:11:false") }));

    // The same seed twice in one start is one tenant as well.
    TenantDirectory twice;
    QCOMPARE(startOnce(settings(), { seed("t3", "a"), seed("t3", "b") }, twice).readyCount, 3);
    QCOMPARE(twice.find("t3")->jwtSecret, QByteArray("b"));
    QCOMPARE(db->column(QStringLiteral("SELECT count(*) FROM _realtime.tenants")),
             QStringList{ QStringLiteral("3") });
}

void ControlPlanePgTest::replacingASeedReplacesItsExtensions()
{
    TenantInput withDatabase = seed("t1", "s");
    withDatabase.extensions.append(Extension{
            QStringLiteral("postgres_cdc_rls"), object(R"({"db_host":"a"})"), {}, {}, {} });
    TenantDirectory directory;
    QCOMPARE(startOnce(settings(), { withDatabase }, directory).readyCount, 1);
    QVERIFY(directory.find("t1")->hasDatabase());

    TenantDirectory after;
    QCOMPARE(startOnce(settings(), { seed("t1", "s") }, after).readyCount, 1);
    QVERIFY(after.find("t1")->extensions.isEmpty());
    QVERIFY(!after.find("t1")->hasDatabase());
    const auto db = inspect();
    QCOMPARE(db->column(QStringLiteral("SELECT count(*) FROM _realtime.extensions")),
             QStringList{ QStringLiteral("0") });
}

void ControlPlanePgTest::extensionsAreStoredAsJsonbAndLoaded()
{
    const QJsonObject settingsObject = object(
            R"({"db_host":"db.internal","db_port":"5432","db_name":"postgres","db_user":"u",)"
            R"("db_password":"p","region":"eu-west-1","poll_interval_ms":100,"ssl_enforced":false,)"
            R"("nested":{"list":[1,"two",null]},"unicode":"caf\u00e9 \u2603"})");
    TenantInput input = seed("t1", "s");
    input.extensions.append(
            Extension{ QStringLiteral("postgres_cdc_rls"), settingsObject, {}, {}, {} });
    TenantInput alias = seed("t2", "s");
    alias.extensions.append(
            Extension{ QStringLiteral("postgres"), object(R"({"a":1})"), {}, {}, {} });

    TenantDirectory directory;
    QCOMPARE(startOnce(settings(), { input, alias }, directory).readyCount, 2);

    // Stored as jsonb objects with typed members, not as JSON text in a string. (The values of
    // the db_* members may be encrypted at rest; the other members are stored as given.)
    const auto db = inspect();
    QCOMPARE(db->column(QStringLiteral(
                     "SELECT tenant_external_id || ' ' || type || ' ' || jsonb_typeof(settings) "
                     "|| ' ' || (settings ? 'db_host') || ' ' "
                     "|| coalesce(settings->>'region', '-') || ' ' "
                     "|| coalesce(jsonb_typeof(settings->'poll_interval_ms'), '-') || ' ' "
                     "|| coalesce(jsonb_typeof(settings->'ssl_enforced'), '-') || ' ' "
                     "|| coalesce(settings->>'unicode', '-') "
                     "FROM _realtime.extensions ORDER BY tenant_external_id")),
             (QStringList{ QStringLiteral("t1 postgres_cdc_rls object true eu-west-1 number "
                                          "boolean caf\u00e9 \u2603"),
                           // The alias is stored under the real type (so are its secrets).
                           QStringLiteral("t2 postgres_cdc_rls object false - - - -") }));
    QCOMPARE(db->column(QStringLiteral("SELECT settings->'nested' FROM _realtime.extensions "
                                       "ORDER BY tenant_external_id DESC")),
             (QStringList{ QStringLiteral("<null>"),
                           QStringLiteral(R"({"list": [1, "two", null]})") }));

    // Loaded back equal.
    const TenantPtr tenant = directory.find("t1");
    QVERIFY(tenant);
    QCOMPARE(tenant->extensions.size(), 1);
    const Extension &extension = tenant->extensions.constFirst();
    QCOMPARE(extension.type, QStringLiteral("postgres_cdc_rls"));
    QCOMPARE(extension.settings, settingsObject);
    QVERIFY(extension.insertedAt.isValid());
    QVERIFY(extension.updatedAt.isValid());
    QVERIFY(tenant->hasDatabase());
    QCOMPARE(tenant->databaseExtension()->settings, settingsObject);
    // "postgres" is upstream's alias of postgres_cdc_rls (spec §9.1).
    QVERIFY(directory.find("t2")->hasDatabase());
    QCOMPARE(directory.find("t2")->extensions.constFirst().settings, object(R"({"a":1})"));

    // Two extensions of one type for one tenant violate the table's unique key: the seed fails
    // as a whole and leaves the stored tenant as it was.
    TenantInput duplicate = seed("t1", "changed");
    duplicate.extensions.append(Extension{ QStringLiteral("x"), {}, {}, {}, {} });
    duplicate.extensions.append(Extension{ QStringLiteral("x"), {}, {}, {}, {} });
    TenantDirectory untouched;
    const StartOutcome outcome = startOnce(settings(), { duplicate }, untouched);
    QCOMPARE(outcome.failedSignals, 1);
    QVERIFY2(outcome.failure.contains(QLatin1String("tenant t1")), qPrintable(outcome.failure));
    TenantDirectory reloaded;
    QCOMPARE(startOnce(settings(), {}, reloaded).readyCount, 2);
    QCOMPARE(reloaded.find("t1")->jwtSecret, QByteArray("s"));
    QCOMPARE(reloaded.find("t1")->extensions.size(), 1);
}

void ControlPlanePgTest::tenantsLoadWithTheirLimits()
{
    TenantInput input = seed("acme", "secret");
    input.name = QStringLiteral("Acme");
    input.maxConcurrentUsers = 1;
    input.maxEventsPerSecond = 2;
    input.maxBytesPerSecond = 3;
    input.maxChannelsPerClient = 4;
    input.maxJoinsPerSecond = 5;
    input.maxPresenceEventsPerSecond = 6;
    input.maxPayloadSizeInKb = 7;
    input.maxClientPresenceEventsPerWindow = 8;
    input.clientPresenceWindowMs = 9;
    input.suspend = true;
    input.privateOnly = true;
    input.presenceEnabled = true;
    const QDateTime before = QDateTime::currentDateTimeUtc().addSecs(-2);

    TenantDirectory directory;
    QCOMPARE(startOnce(settings(), { input, seed("plain", "s") }, directory).readyCount, 2);
    const QDateTime after = QDateTime::currentDateTimeUtc().addSecs(2);
    const TenantPtr tenant = directory.find("acme");
    QVERIFY(tenant);
    QCOMPARE(tenant->externalId, QByteArray("acme"));
    QCOMPARE(tenant->name, QStringLiteral("Acme"));
    QCOMPARE(tenant->jwtSecret, QByteArray("secret"));
    QVERIFY(tenant->jwtJwks.isEmpty());
    QVERIFY(!QUuid::fromString(tenant->id).isNull());
    QCOMPARE(tenant->maxConcurrentUsers, 1);
    QCOMPARE(tenant->maxEventsPerSecond, 2);
    QCOMPARE(tenant->maxBytesPerSecond, 3);
    QCOMPARE(tenant->maxChannelsPerClient, 4);
    QCOMPARE(tenant->maxJoinsPerSecond, 5);
    QCOMPARE(tenant->maxPresenceEventsPerSecond, 6);
    QCOMPARE(tenant->maxPayloadSizeInKb, 7);
    QCOMPARE(tenant->maxClientPresenceEventsPerWindow, std::optional<int>(8));
    QCOMPARE(tenant->clientPresenceWindowMs, std::optional<int>(9));
    QVERIFY(tenant->suspend);
    QVERIFY(tenant->privateOnly);
    QVERIFY(tenant->presenceEnabled);
    // Column defaults of the PostgreSQL schema.
    QCOMPARE(tenant->postgresCdcDefault, QStringLiteral("postgres_cdc_rls"));
    QCOMPARE(tenant->featureFlags, QJsonObject());
    QVERIFY(tenant->keys);
    QCOMPARE(tenant->maxPayloadBytes(), qsizetype(7 * 1000 + 500));
    // timestamp(0) without time zone, written and read as UTC whatever the process's zone.
    QCOMPARE(tenant->insertedAt.timeSpec(), Qt::UTC);
    QVERIFY2(tenant->insertedAt >= before && tenant->insertedAt <= after,
             qPrintable(tenant->insertedAt.toString(Qt::ISODate) + u' '
                        + before.toString(Qt::ISODate)));
    QVERIFY2(tenant->updatedAt >= before && tenant->updatedAt <= after,
             qPrintable(tenant->updatedAt.toString(Qt::ISODate)));
    // A tenant without a name is named after its external id.
    QCOMPARE(directory.find("plain")->name, QStringLiteral("plain"));
}

void ControlPlanePgTest::unsetLimitsTakeTheDefaults()
{
    TenantDirectory directory;
    QCOMPARE(startOnce(settings(), { seed("t1", "s") }, directory).readyCount, 1);
    const TenantPtr tenant = directory.find("t1");
    QVERIFY(tenant);
    const TenantDefaults defaults = customDefaults();
    QCOMPARE(tenant->maxConcurrentUsers, defaults.maxConcurrentUsers);
    QCOMPARE(tenant->maxEventsPerSecond, defaults.maxEventsPerSecond);
    QCOMPARE(tenant->maxBytesPerSecond, defaults.maxBytesPerSecond);
    QCOMPARE(tenant->maxChannelsPerClient, defaults.maxChannelsPerClient);
    QCOMPARE(tenant->maxJoinsPerSecond, defaults.maxJoinsPerSecond);
    QCOMPARE(tenant->maxPresenceEventsPerSecond, defaults.maxPresenceEventsPerSecond);
    QCOMPARE(tenant->maxPayloadSizeInKb, defaults.maxPayloadSizeInKb);
    QVERIFY(!tenant->maxClientPresenceEventsPerWindow);
    QVERIFY(!tenant->clientPresenceWindowMs);
    const auto db = inspect();
    QCOMPARE(db->column(QStringLiteral(
                     "SELECT coalesce(max_client_presence_events_per_window::text, 'null') || "
                     "' ' || coalesce(client_presence_window_ms::text, 'null') "
                     "FROM _realtime.tenants")),
             QStringList{ QStringLiteral("null null") });
}

void ControlPlanePgTest::unusableJwksStillLoads_data()
{
    QTest::addColumn<QString>("storedJwks"); // jsonb literal written behind the plane's back
    QTest::addColumn<bool>("warns");

    QTest::newRow("JSON string") << QStringLiteral(R"("a string")") << true;
    QTest::newRow("no keys array") << QStringLiteral(R"({"keys":"nope"})") << true;
    QTest::newRow("JSON array") << QStringLiteral("[1,2]") << true;
    // A well-formed JWKS whose keys cannot be used: the keys are skipped, silently.
    QTest::newRow("unusable keys")
            << QStringLiteral(R"({"keys":[{"kty":"RSA","kid":"r1","n":"!"}]})") << false;
}

void ControlPlanePgTest::unusableJwksStillLoads()
{
    QFETCH(QString, storedJwks);
    QFETCH(bool, warns);

    TenantDirectory directory;
    QCOMPARE(startOnce(settings(), { seed("t1", "hs-secret"), seed("t2", "other") }, directory)
                     .readyCount,
             2);
    // An operator edits the row; jsonb accepts any JSON, usable as a JWKS or not.
    const auto db = inspect();
    QVERIFY2(db->exec(QStringLiteral("UPDATE _realtime.tenants SET jwt_jwks = ?::jsonb "
                                     "WHERE external_id = 't1'"),
                      { storedJwks }),
             qPrintable(db->lastError()));

    if (warns) {
        // The operator is told, naming the tenant.
        QTest::ignoreMessage(
                QtWarningMsg,
                QRegularExpression(QStringLiteral("tenant \"t1\" has an unusable jwt_jwks")));
    }
    TenantDirectory reloaded;
    const StartOutcome outcome = startOnce(settings(), {}, reloaded);
    QCOMPARE(outcome.failure, QString());
    QCOMPARE(outcome.readyCount, 2);
    const TenantPtr tenant = reloaded.find("t1");
    QVERIFY(tenant);
    QVERIFY(!tenant->jwtJwks.isEmpty());
    QVERIFY(tenant->keys);

    // HS tokens keep working with the tenant's secret; a wrong secret still fails.
    rt::auth::VerifyOptions options;
    options.nowSeconds = QDateTime::currentSecsSinceEpoch();
    const auto good = rt::auth::verifyToken(hsToken("hs-secret"), *tenant->keys, options);
    QVERIFY(good.ok());
    QCOMPARE(good->role, QStringLiteral("anon"));
    QVERIFY(!rt::auth::verifyToken(hsToken("wrong"), *tenant->keys, options).ok());
    QVERIFY(reloaded.find("t2"));
}

void ControlPlanePgTest::jwksThatIsNotJsonIsRefusedByJsonb()
{
    // The tenant API only accepts {"keys":[...]}, but a TenantInput built in code can carry any
    // bytes. SQLite stores them (and loading warns); jsonb refuses them, so the start fails,
    // naming the tenant, and nothing of that tenant is written.
    TenantInput broken = seed("t1", "s");
    broken.jwtJwks = "{not json";
    TenantDirectory directory;
    const StartOutcome outcome = startOnce(settings(), { seed("t0", "s"), broken }, directory);
    QCOMPARE(outcome.readySignals, 0);
    QCOMPARE(outcome.failedSignals, 1);
    QVERIFY2(outcome.failure.contains(QLatin1String("tenant t1")), qPrintable(outcome.failure));
    QVERIFY2(outcome.failure.contains(QLatin1String("json")), qPrintable(outcome.failure));
    const auto db = inspect();
    QCOMPARE(db->column(QStringLiteral("SELECT external_id FROM _realtime.tenants")),
             QStringList{ QStringLiteral("t0") });
}

void ControlPlanePgTest::unusableDatabaseFailsWithOneMessage_data()
{
    QTest::addColumn<QString>("what");
    QTest::addColumn<QString>("expectedDetail");

    QTest::newRow("wrong password")
            << QStringLiteral("password")
            << QStringLiteral("password authentication failed for user \"realtime\"");
    QTest::newRow("nothing listens on the port")
            << QStringLiteral("port") << QStringLiteral("Connection refused");
    QTest::newRow("no such database")
            << QStringLiteral("database")
            << QStringLiteral("database \"rt_cp_does_not_exist\" does not exist");
    QTest::newRow("unknown role") << QStringLiteral(
            "user") << QStringLiteral("password authentication failed for user \"nobody\"");
}

void ControlPlanePgTest::unusableDatabaseFailsWithOneMessage()
{
    QFETCH(QString, what);
    QFETCH(QString, expectedDetail);

    ControlPlaneSettings broken = settings();
    if (what == QLatin1String("password")) {
        broken.password = QStringLiteral("wrong-password");
    } else if (what == QLatin1String("port")) {
        // A port that was free a moment ago: bound, noted, released.
        QTcpServer probe;
        QVERIFY(probe.listen(QHostAddress::LocalHost, 0));
        broken.port = probe.serverPort();
    } else if (what == QLatin1String("database")) {
        broken.database = QStringLiteral("rt_cp_does_not_exist");
    } else {
        broken.user = QStringLiteral("nobody");
    }

    TenantDirectory directory;
    directory.upsert(std::make_shared<rt::tenants::Tenant>());
    QElapsedTimer timer;
    timer.start();
    const StartOutcome outcome = startOnce(broken, { seed("t1", "s") }, directory);
    QVERIFY2(timer.elapsed() < 5000, qPrintable(QString::number(timer.elapsed())));
    QCOMPARE(outcome.readySignals, 0);
    QCOMPARE(outcome.failedSignals, 1);
    const QString prefix =
            QStringLiteral("cannot connect to the control-plane database %1@%2:%3/%4: ")
                    .arg(broken.user, broken.host)
                    .arg(broken.port)
                    .arg(broken.database);
    QVERIFY2(outcome.failure.startsWith(prefix), qPrintable(outcome.failure));
    QVERIFY2(outcome.failure.contains(expectedDetail), qPrintable(outcome.failure));
    // One line, and the password is not in it.
    QVERIFY2(!outcome.failure.contains(u'\n'), qPrintable(outcome.failure));
    QVERIFY(!outcome.failure.contains(broken.password));
    // The directory is left alone, and nothing was written.
    QCOMPARE(directory.size(), 1);
    const auto db = inspect();
    QCOMPARE(db->column(QStringLiteral("SELECT count(*) FROM pg_namespace "
                                       "WHERE nspname = '_realtime'")),
             QStringList{ QStringLiteral("0") });
}

void ControlPlanePgTest::tenantCrudThroughTheApi()
{
    LivePlane live(settings());
    QVERIFY2(live.started, qPrintable(live.failure));

    // Create: 201, named after the external id, env defaults, a fresh uuid.
    const ControlPlane::Written created = live.write(
            "acme",
            patchOf("{`name`:`ignored`,`jwt_secret`:`s`,`max_concurrent_users`:5,"
                    "`private_only`:true,`feature_flags`:{`f`:1},`extensions`:[{`type`:`postgres`,"
                    "`settings`:{`region`:`eu`,`db_host`:`h`,`db_port`:`5432`,`db_name`:`n`,"
                    "`db_user`:`u`,`db_password`:`p`}}]}"));
    QVERIFY(created.created);
    QVERIFY(created.tenant);
    QCOMPARE(created.tenant->name, QStringLiteral("acme"));
    QCOMPARE(created.tenant->maxConcurrentUsers, 5);
    QCOMPARE(created.tenant->maxEventsPerSecond, customDefaults().maxEventsPerSecond);
    QVERIFY(!QUuid::fromString(created.tenant->id).isNull());
    QCOMPARE(created.tenant->featureFlags, json("{`f`:1}"));
    QCOMPARE(created.tenant->extensions.size(), 1);
    QCOMPARE(created.tenant->extensions.constFirst().type, QStringLiteral("postgres_cdc_rls"));
    QCOMPARE(live.directory.find("acme"), created.tenant);

    // Update: 200, only the given fields change.
    const ControlPlane::Written updated =
            live.write("acme", patchOf("{`name`:`Acme`,`max_joins_per_second`:2}"));
    QVERIFY(!updated.created);
    QCOMPARE(updated.tenant->id, created.tenant->id);
    QCOMPARE(updated.tenant->name, QStringLiteral("Acme"));
    QCOMPARE(updated.tenant->maxJoinsPerSecond, 2);
    QVERIFY(updated.joinLimitChanged);
    QCOMPARE(updated.tenant->maxConcurrentUsers, 5);
    QVERIFY(updated.tenant->privateOnly);
    QCOMPARE(updated.tenant->jwtSecret, QByteArray("s"));
    QCOMPARE(updated.tenant->extensions.constFirst().settings,
             created.tenant->extensions.constFirst().settings);
    QVERIFY(!updated.disconnectSockets);
    // Access changes disconnect.
    QVERIFY(live.write("acme", patchOf("{`private_only`:false}")).disconnectSockets);
    QVERIFY(live.write("acme", patchOf("{`jwt_jwks`:{`keys`:[]}}")).disconnectSockets);
    QVERIFY(!live.write("acme", patchOf("{`jwt_jwks`:{`keys`:[]}}")).disconnectSockets);

    const auto db = inspect();
    QCOMPARE(db->column(QStringLiteral(
                     "SELECT external_id || ':' || name || ':' || max_joins_per_second || ':' || "
                     "private_only || ':' || jwt_jwks::text FROM _realtime.tenants")),
             QStringList{ QStringLiteral("acme:Acme:2:false:{\"keys\": []}") });

    // 422: no secret and no JWKS; nothing is written.
    const auto refused = live.plane.writeTenant("t2", patchOf("{`max_concurrent_users`:1}"),
                                                ControlPlane::WriteMode::Upsert);
    QVERIFY(!refused.ok());
    QCOMPARE(refused.error().status, 422);
    QCOMPARE(compact(refused.error().errors),
             compact(json("{`jwt_secret`:[`either jwt_secret or jwt_jwks must be provided`]}")));
    QCOMPARE(db->column(QStringLiteral("SELECT count(*) FROM _realtime.tenants")),
             QStringList{ QStringLiteral("1") });

    // Read back from the database, and by a fresh start.
    live.write("t2", patchOf("{`jwt_secret`:`x`}"));
    const auto all = live.plane.fetchAll();
    QVERIFY(all.ok());
    QCOMPARE(all->size(), 2);
    TenantDirectory fresh;
    QCOMPARE(startOnce(settings(), {}, fresh).readyCount, 2);
    QCOMPARE(fresh.find("acme")->name, QStringLiteral("Acme"));
    QCOMPARE(fresh.find("acme")->databaseExtension()->settings,
             created.tenant->extensions.constFirst().settings);

    // Delete: the row and (cascade) its extensions; the sockets go.
    live.tenantChanged.clear();
    const auto deleted = live.plane.deleteTenant("acme");
    QVERIFY(deleted.ok() && *deleted);
    QCOMPARE(live.tenantChanged.size(), 1);
    QCOMPARE(live.tenantChanged.at(0).at(1).toBool(), true);
    QVERIFY(!live.directory.find("acme"));
    QCOMPARE(db->column(QStringLiteral("SELECT external_id FROM _realtime.tenants")),
             QStringList{ QStringLiteral("t2") });
    QCOMPARE(db->column(QStringLiteral("SELECT count(*) FROM _realtime.extensions")),
             QStringList{ QStringLiteral("0") });
    const auto again = live.plane.deleteTenant("acme");
    QVERIFY(again.ok() && !*again);
}

void ControlPlanePgTest::failedWriteRollsBackEverything()
{
    LivePlane live(settings());
    QVERIFY2(live.started, qPrintable(live.failure));
    live.write("t1",
               patchOf("{`jwt_secret`:`s`,`max_concurrent_users`:3,"
                       "`extensions`:[{`type`:`custom`,`settings`:{`a`:1}}]}"));
    TenantPatch patch = patchOf("{`jwt_secret`:`new`,`max_concurrent_users`:9}");
    patch.extensions = QList<Extension>{ Extension{ QStringLiteral("x"), {}, {}, {}, {} },
                                         Extension{ QStringLiteral("x"), {}, {}, {}, {} } };
    const auto failed = live.plane.writeTenant("t1", patch, ControlPlane::WriteMode::Upsert);
    QVERIFY(!failed.ok());
    QCOMPARE(failed.error().status, 500);
    QVERIFY2(!failed.error().message.contains(u'\n'), qPrintable(failed.error().message));
    const auto db = inspect();
    QCOMPARE(db->column(QStringLiteral("SELECT max_concurrent_users::text FROM _realtime.tenants "
                                       "UNION ALL SELECT type FROM _realtime.extensions")),
             (QStringList{ QStringLiteral("3"), QStringLiteral("custom") }));
    // The connection is usable afterwards.
    QCOMPARE(live.write("t1", patchOf("{`max_concurrent_users`:4}")).tenant->maxConcurrentUsers, 4);
}

void ControlPlanePgTest::secretsAreEncryptedAtRest()
{
    LivePlane live(settings());
    QVERIFY2(live.started, qPrintable(live.failure));
    const ControlPlane::Written written = live.write(
            "t1",
            patchOf("{`jwt_secret`:`super-secret`,`extensions`:[{`type`:`postgres_cdc_rls`,"
                    "`settings`:{`region`:`eu`,`db_host`:`db.internal`,`db_port`:`5432`,"
                    "`db_name`:`postgres`,`db_user`:`u`,`db_password`:`hunter2`}}]}"));
    QVERIFY(written.tenant);

    const auto db = inspect();
    const QString secret =
            db->scalar(QStringLiteral("SELECT jwt_secret FROM _realtime.tenants")).toString();
    QVERIFY(!secret.isEmpty());
    QVERIFY(secret != QLatin1String("super-secret"));
    const SecretCipher cipher = *SecretCipher::create(TestKey, {}, false);
    QCOMPARE(*cipher.decrypt(secret.toLatin1()), QByteArray("super-secret"));

    // In the jsonb settings: the five db_* values encrypted, the rest as given.
    QCOMPARE(db->column(QStringLiteral(
                     "SELECT key || '=' || value FROM _realtime.extensions, "
                     "jsonb_each_text(settings) WHERE key IN ('region', 'publication') "
                     "ORDER BY key")),
             (QStringList{ QStringLiteral("publication=supabase_realtime"),
                           QStringLiteral("region=eu") }));
    const QJsonObject plain = json("{`db_host`:`db.internal`,`db_port`:`5432`,"
                                   "`db_name`:`postgres`,`db_user`:`u`,`db_password`:`hunter2`}");
    for (auto it = plain.begin(); it != plain.end(); ++it) {
        const QString stored =
                db->scalar(QStringLiteral("SELECT settings->>? FROM _realtime.extensions"),
                           { it.key() })
                        .toString();
        QVERIFY2(!stored.isEmpty() && stored != it.value().toString(), qPrintable(it.key()));
        QCOMPARE(QString::fromUtf8(*cipher.decrypt(stored.toLatin1())), it.value().toString());
        QCOMPARE(written.tenant->databaseExtension()->settings.value(it.key()), it.value());
        QCOMPARE(written.tenant->databaseExtension()->storedSettings.value(it.key()).toString(),
                 stored);
    }
    // No plaintext anywhere in the row.
    QCOMPARE(db->column(QStringLiteral(
                     "SELECT count(*) FROM _realtime.tenants t JOIN _realtime.extensions e ON "
                     "e.tenant_external_id = t.external_id WHERE t::text LIKE '%super-secret%' "
                     "OR e::text LIKE '%hunter2%' OR e::text LIKE '%db.internal%'")),
             QStringList{ QStringLiteral("0") });
}

void ControlPlanePgTest::wrongKeyFailsAtStart()
{
    TenantDirectory directory;
    QCOMPARE(startOnce(settings(), { seed("t1", "s") }, directory).readyCount, 1);

    ControlPlaneSettings wrong = settings();
    wrong.encryptionKey = QByteArrayLiteral("fedcba9876543210");
    TenantDirectory other;
    other.upsert(std::make_shared<rt::tenants::Tenant>());
    const StartOutcome outcome = startOnce(wrong, { seed("t2", "s") }, other);
    QCOMPARE(outcome.readySignals, 0);
    QCOMPARE(outcome.failedSignals, 1);
    QVERIFY2(outcome.failure.startsWith(QLatin1String("DB_ENC_KEY (or DB_ENC_KEY_GCM) is not the "
                                                      "key this control plane's secrets were "
                                                      "encrypted with")),
             qPrintable(outcome.failure));
    QCOMPARE(other.size(), 1);
    const auto db = inspect();
    QCOMPARE(db->column(QStringLiteral("SELECT external_id FROM _realtime.tenants")),
             QStringList{ QStringLiteral("t1") });

    // No key at all: refused before touching the database.
    ControlPlaneSettings none = settings();
    none.encryptionKey.clear();
    const StartOutcome missing = startOnce(none, {}, other);
    QCOMPARE(missing.failedSignals, 1);
    QVERIFY2(missing.failure.startsWith(QLatin1String("DB_ENC_KEY is required")),
             qPrintable(missing.failure));

    // The right key still works.
    TenantDirectory right;
    QCOMPARE(startOnce(settings(), {}, right).readyCount, 1);
    QCOMPARE(right.find("t1")->jwtSecret, QByteArray("s"));
}

void ControlPlanePgTest::refreshSeesAnotherWriter()
{
    LivePlane reader(settings());
    QVERIFY2(reader.started, qPrintable(reader.failure));
    reader.write("a", patchOf("{`jwt_secret`:`s`}"));
    reader.write("b", patchOf("{`jwt_secret`:`s`}"));
    reader.write("c", patchOf("{`jwt_secret`:`s`}"));
    reader.tenantChanged.clear();
    const TenantPtr untouched = reader.directory.find("c");

    // The cache's TTL: nothing changed, nothing announced.
    reader.plane.refresh();
    QCOMPARE(reader.tenantChanged.size(), 0);
    QCOMPARE(reader.directory.find("c"), untouched);

    // Another node changes a's limit and b's secret and adds d; an operator suspends c by hand
    // (within the same second: updated_at cannot tell).
    {
        LivePlane writer(settings());
        QVERIFY2(writer.started, qPrintable(writer.failure));
        writer.write("a", patchOf("{`max_concurrent_users`:1}"));
        writer.write("b", patchOf("{`jwt_secret`:`rotated`}"));
        writer.write("d", patchOf("{`jwt_secret`:`s`}"));
    }
    const auto db = inspect();
    QVERIFY2(db->exec(QStringLiteral(
                     "UPDATE _realtime.tenants SET suspend = true WHERE external_id = 'c'")),
             qPrintable(db->lastError()));

    reader.plane.refresh();
    QHash<QByteArray, bool> announced;
    for (const QList<QVariant> &signal : std::as_const(reader.tenantChanged)) {
        announced.insert(signal.at(0).toByteArray(), signal.at(1).toBool());
    }
    QCOMPARE(reader.tenantChanged.size(), 4);
    QCOMPARE(announced.value("a", true), false);
    QCOMPARE(announced.value("b", false), true);
    QCOMPARE(announced.value("c", false), true); // suspended: its sockets go
    QCOMPARE(announced.value("d", true), false);
    QCOMPARE(reader.directory.find("a")->maxConcurrentUsers, 1);
    QCOMPARE(reader.directory.find("b")->jwtSecret, QByteArray("rotated"));
    QVERIFY(reader.directory.find("c")->suspend);
    QVERIFY(reader.directory.find("d"));

    // Deleted by hand: gone on the next refresh, sockets go.
    QVERIFY2(db->exec(QStringLiteral("DELETE FROM _realtime.tenants WHERE external_id = 'a'")),
             qPrintable(db->lastError()));
    reader.tenantChanged.clear();
    reader.plane.refresh();
    QCOMPARE(reader.tenantChanged.size(), 1);
    QCOMPARE(reader.tenantChanged.at(0).at(0).toByteArray(), QByteArray("a"));
    QCOMPARE(reader.tenantChanged.at(0).at(1).toBool(), true);
    QVERIFY(!reader.directory.find("a"));
}

QTEST_GUILESS_MAIN(ControlPlanePgTest)
#include "tst_control_plane_pg.moc"
