// What only the PostgreSQL control plane does, on a real PostgreSQL 15 (the CTest fixture
// "postgres", pg-cluster.sh): the schema _realtime owned by the realtime role, migrations
// serialised between nodes by the advisory lock, jsonb extensions (and jsonb refusing JWKS bytes
// that are not JSON), one clear failure when the database cannot be reached, no key generated.
// Everything both backends must do is the conformance suite (tst_control_plane_conformance).
// Every test case gets a fresh database (ScratchDatabase), dropped when it ends.
#include "server/auth/jwt.h"
#include "server/tenants/control_plane.h"
#include "server/tenants/secret_cipher.h"
#include "server/tenants/tenant_directory.h"
#include "server/tenants/tenant_input.h"
#include "tests/support/postgres/pg_env.h"
#include "tests/support/tenants/control_plane_start.h"
#include "tests/support/tenants/tenant_fixtures.h"

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

using rt::testsupport::customDefaults;
using rt::testsupport::object;
using rt::testsupport::seed;

namespace {

constexpr qint64 kMigrationLock = 7305190412; // ControlPlane's pg_advisory_xact_lock key

// DB_ENC_KEY: tenant secrets in PostgreSQL are encrypted at rest, so the backend requires one.
const QByteArray TestKey = QByteArrayLiteral("0123456789abcdef");

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
    void concurrentStartsApplyEachMigrationOnce_data();
    void concurrentStartsApplyEachMigrationOnce();
    void extensionsAreStoredAsJsonbAndLoaded();
    void jwksThatIsNotJsonIsRefusedByJsonb();
    void unusableDatabaseFailsWithOneMessage_data();
    void unusableDatabaseFailsWithOneMessage();
    void missingKeyIsRefusedBeforeTheDatabase();

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

    // A second start applies none of them again (the rows: the conformance suite).
    MigrationLog::reset();
    TenantDirectory again;
    QCOMPARE(startOnce(settings(), {}, again).readyCount, 0);
    QCOMPARE(MigrationLog::applied(), 0);
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

void ControlPlanePgTest::missingKeyIsRefusedBeforeTheDatabase()
{
    // The PostgreSQL backend never generates a key (the embedded default does): without
    // DB_ENC_KEY the start is refused, and nothing is written. (A wrong key: the conformance
    // suite.)
    ControlPlaneSettings none = settings();
    none.encryptionKey.clear();
    TenantDirectory directory;
    const StartOutcome missing = startOnce(none, { seed("t1", "s") }, directory);
    QCOMPARE(missing.readySignals, 0);
    QCOMPARE(missing.failedSignals, 1);
    QVERIFY2(missing.failure.startsWith(QLatin1String("DB_ENC_KEY is required")),
             qPrintable(missing.failure));
    const auto db = inspect();
    QCOMPARE(db->column(QStringLiteral("SELECT count(*) FROM pg_namespace "
                                       "WHERE nspname = '_realtime'")),
             QStringList{ QStringLiteral("0") });
}

QTEST_GUILESS_MAIN(ControlPlanePgTest)
#include "tst_control_plane_pg.moc"
