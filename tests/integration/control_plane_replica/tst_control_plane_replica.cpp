// Control-plane read/write splitting (issue 5 part 10, seed 002) against a real streaming
// replica: the CTest fixture "postgres" starts the primary (pg-cluster.sh), the fixture
// "pg_replica" a hot standby of it made with pg_basebackup -R (pg-replica.sh). Replay on the
// standby is paused to make it observably stale: what a read returns then shows where it went.
#include "server/auth/jwt.h"
#include "server/metrics/catalog.h"
#include "server/metrics/registry.h"
#include "server/tenants/control_plane.h"
#include "server/tenants/logging.h"
#include "server/tenants/tenant_directory.h"
#include "tests/support/postgres/pg_env.h"
#include "tests/support/server/raw_http.h"
#include "tests/support/server/test_server.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QProcess>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTest>

#include <memory>

using rt::tenants::ApiSession;
using rt::tenants::ControlPlane;
using rt::tenants::ControlPlaneSettings;
using rt::tenants::TenantDirectory;
using rt::tenants::TenantPtr;
using rt::testsupport::exchange;
using rt::testsupport::PgEnv;
using rt::testsupport::PgSession;
using rt::testsupport::RawResponse;
using rt::testsupport::ScratchDatabase;

namespace {

constexpr int WaitMs = 15'000;

QByteArray apiToken(const QByteArray &secret)
{
    return rt::auth::signHmac(
            QJsonObject{ { QStringLiteral("role"), QStringLiteral("service_role") },
                         { QStringLiteral("exp"), QDateTime::currentSecsSinceEpoch() + 3600 } },
            secret);
}

rt::tenants::TenantPatch limitPatch(int maxConcurrentUsers)
{
    rt::tenants::TenantPatch patch;
    patch.jwtSecret = QByteArrayLiteral("acme-secret");
    patch.maxConcurrentUsers = maxConcurrentUsers;
    return patch;
}

// A port nothing listens on (bound, then released).
quint16 closedPort()
{
    QTcpServer probe;
    if (!probe.listen(QHostAddress::LocalHost, 0)) {
        return 1;
    }
    const quint16 port = probe.serverPort();
    probe.close();
    return port;
}

} // namespace

class ControlPlaneReplicaTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void readsGoToTheReplicaUnlessTheSessionWroteRecently();
    void refreshNeverLoadsAnOlderStateThanItPublished();
    void unreachableReplicaFallsBackToThePrimary();
    void nodeReadsItsOwnWritesThroughTheSession();
    // Stops the replica: must stay last.
    void replicaStoppedUnderANodeFallsBackToThePrimary();

private:
    ControlPlaneSettings settings(int delayMs, int retryMs = 300) const;
    std::unique_ptr<PgSession> primarySuper() const;
    std::unique_ptr<PgSession> replicaSuper() const;
    // Waits until the replica has replayed everything the primary has written so far.
    bool waitForReplay() const;
    bool setReplayPaused(bool paused) const;
    QByteArray request(const QByteArray &method, const QByteArray &path,
                       const QByteArray &extraHeaders = {}, const QByteArray &body = {}) const;
    static int limitOf(const RawResponse &response);
    static quint64 count(rt::metrics::CounterFamily &family, const char *target,
                         const char *reason);

    PgEnv m_env;
    PgEnv m_replica; // the primary's users, the replica's host and port
    QString m_replicaScript;
    QString m_replicaDir;
    bool m_replicaStopped = false;
    std::unique_ptr<ScratchDatabase> m_db;
    QByteArray m_apiSecret = QByteArrayLiteral("replica-test-secret-replica-test-secret");
};

void ControlPlaneReplicaTest::initTestCase()
{
    QLoggingCategory::setFilterRules(QStringLiteral("rt.*.info=false"));
    // Every routing decision is logged at debug level (CTest's QT_LOGGING_RULES turns debug
    // off; the category itself is switched on for the assertions on those lines).
    const_cast<QLoggingCategory &>(rt::tenants::lcTenants()).setEnabled(QtDebugMsg, true);
    QString error;
    const std::optional<PgEnv> env = PgEnv::fromEnvironment(&error);
    QVERIFY2(env, qPrintable(error));
    m_env = *env;
    const QString replicaEnv = qEnvironmentVariable("RT_PG_REPLICA_ENV");
    bool ok = false;
    const QHash<QString, QString> values = PgEnv::parseEnvFile(replicaEnv, &ok);
    QVERIFY2(ok, qPrintable(QStringLiteral("cannot read RT_PG_REPLICA_ENV=") + replicaEnv));
    m_replica = m_env;
    m_replica.host = values.value(QStringLiteral("RT_PG_REPLICA_HOST"));
    m_replica.port = values.value(QStringLiteral("RT_PG_REPLICA_PORT")).toInt();
    QVERIFY(!m_replica.host.isEmpty() && m_replica.port > 0);
    m_replicaScript = qEnvironmentVariable("RT_PG_REPLICA_SCRIPT");
    m_replicaDir = qEnvironmentVariable("RT_PG_REPLICA_DIR");
    QVERIFY(!m_replicaScript.isEmpty() && !m_replicaDir.isEmpty());
    QCOMPARE(replicaSuper()->scalar(QStringLiteral("SELECT pg_is_in_recovery()")).toBool(), true);
}

void ControlPlaneReplicaTest::init()
{
    m_db = std::make_unique<ScratchDatabase>(m_env, QStringLiteral("rt_cpr"));
    QVERIFY2(m_db->isValid(), qPrintable(m_db->error()));
    if (!m_replicaStopped) {
        QVERIFY(setReplayPaused(false));
        // The new database exists on the replica once it has been replayed.
        QVERIFY(waitForReplay());
    }
}

void ControlPlaneReplicaTest::cleanup()
{
    if (!m_replicaStopped) {
        // A failed test must not leave the replica paused for the next one.
        setReplayPaused(false);
        waitForReplay();
    }
    m_db.reset();
}

ControlPlaneSettings ControlPlaneReplicaTest::settings(int delayMs, int retryMs) const
{
    ControlPlaneSettings settings;
    settings.backend = ControlPlaneSettings::Backend::Postgres;
    settings.host = m_env.host;
    settings.port = m_env.port;
    settings.database = m_db->name();
    settings.user = m_env.user;
    settings.password = m_env.password;
    settings.encryptionKey = QByteArrayLiteral("0123456789abcdef");
    settings.replicaHost = m_replica.host;
    settings.replicaPort = m_replica.port;
    settings.replicaDelayMs = delayMs;
    settings.replicaRetryMs = retryMs;
    return settings;
}

std::unique_ptr<PgSession> ControlPlaneReplicaTest::primarySuper() const
{
    return std::make_unique<PgSession>(m_env, m_db ? m_db->name() : QStringLiteral("postgres"));
}

std::unique_ptr<PgSession> ControlPlaneReplicaTest::replicaSuper() const
{
    return std::make_unique<PgSession>(m_replica, QStringLiteral("postgres"));
}

bool ControlPlaneReplicaTest::waitForReplay() const
{
    const QString position =
            PgSession(m_env, QStringLiteral("postgres"))
                    .scalar(QStringLiteral("SELECT pg_current_wal_insert_lsn()::text"))
                    .toString();
    if (position.isEmpty()) {
        return false;
    }
    const auto replica = replicaSuper();
    const QString replayed =
            QStringLiteral("SELECT pg_last_wal_replay_lsn() >= '%1'::pg_lsn").arg(position);
    if (QTest::qWaitFor([&] { return replica->scalar(replayed).toBool(); }, WaitMs)) {
        return true;
    }
    qWarning() << "the replica did not replay" << position << "in time";
    return false;
}

bool ControlPlaneReplicaTest::setReplayPaused(bool paused) const
{
    const auto replica = replicaSuper();
    if (!replica->exec(paused ? QStringLiteral("SELECT pg_wal_replay_pause()")
                              : QStringLiteral("SELECT pg_wal_replay_resume()"))) {
        qWarning() << replica->lastError();
        return false;
    }
    // Pausing takes effect at the next record the startup process looks at.
    const QString wanted = paused ? QStringLiteral("paused") : QStringLiteral("not paused");
    return QTest::qWaitFor(
            [&] {
                return replica->scalar(QStringLiteral("SELECT pg_get_wal_replay_pause_state()"))
                               .toString()
                        == wanted;
            },
            WaitMs);
}

quint64 ControlPlaneReplicaTest::count(rt::metrics::CounterFamily &family, const char *target,
                                       const char *reason)
{
    return family.labels({ QByteArrayView(target), QByteArrayView(reason) })->value();
}

// The control plane itself (no HTTP): where each kind of read goes, what it returns while the
// replica is stale, and the counters.
void ControlPlaneReplicaTest::readsGoToTheReplicaUnlessTheSessionWroteRecently()
{
    rt::metrics::Registry registry;
    rt::metrics::ServerMetrics metrics(registry);
    rt::metrics::CounterFamily &routing = metrics.controlPlaneRouting;
    TenantDirectory directory;
    ControlPlane plane(settings(1000), rt::tenants::TenantDefaults{}, directory);
    plane.setRoutingCounters(&routing);
    QSignalSpy ready(&plane, &ControlPlane::ready);
    plane.start({});
    QCOMPARE(ready.size(), 1);
    QVERIFY(plane.writeTenant("acme", limitPatch(5), ControlPlane::WriteMode::Upsert));
    QCOMPARE(count(routing, "primary", "write"), quint64(1));
    QVERIFY(waitForReplay());

    // No session: the replica, which has the tenant. The decision is logged.
    QTest::ignoreMessage(QtDebugMsg, "tenant API: read tenant acme: replica (no_session)");
    auto read = plane.fetchTenant("acme", ApiSession::read(std::nullopt));
    QVERIFY2(read && *read, read ? "missing" : qPrintable(read.error().message));
    QCOMPARE((*read)->maxConcurrentUsers, 5);
    QCOMPARE(count(routing, "replica", "no_session"), quint64(1));

    // A stale replica: the write lands on the primary only.
    QVERIFY(setReplayPaused(true));
    QVERIFY(plane.writeTenant("acme", limitPatch(7), ControlPlane::WriteMode::Upsert));
    const qint64 wroteAt = QDateTime::currentMSecsSinceEpoch();
    QCOMPARE(primarySuper()->scalar(QStringLiteral("SELECT max_concurrent_users FROM "
                                                   "_realtime.tenants WHERE external_id = 'acme'")),
             QVariant(7));

    read = plane.fetchTenant("acme", ApiSession::read(std::nullopt));
    QVERIFY(read && *read);
    QCOMPARE((*read)->maxConcurrentUsers, 5); // stale: it came from the replica
    QCOMPARE(count(routing, "replica", "no_session"), quint64(2));

    QTest::ignoreMessage(QtDebugMsg, "tenant API: read tenant acme: primary (recent_write)");
    read = plane.fetchTenant("acme", ApiSession::read(wroteAt));
    QVERIFY(read && *read);
    QCOMPARE((*read)->maxConcurrentUsers, 7); // the session's own write, from the primary
    QCOMPARE(count(routing, "primary", "recent_write"), quint64(1));

    read = plane.fetchTenant("acme", ApiSession::read(wroteAt - 1000));
    QVERIFY(read && *read);
    QCOMPARE((*read)->maxConcurrentUsers, 5); // the delay has passed: the replica again
    QCOMPARE(count(routing, "replica", "delay_elapsed"), quint64(1));

    const auto all = plane.fetchAll(ApiSession::read(std::nullopt));
    QVERIFY(all);
    QCOMPARE(all->size(), 1);
    QCOMPARE(all->constFirst()->maxConcurrentUsers, 5);
    QCOMPARE(count(routing, "replica", "no_session"), quint64(3));

    // Reads inside write requests (reload, shutdown) use the primary.
    read = plane.fetchTenant("acme", ApiSession::write());
    QVERIFY(read && *read);
    QCOMPARE((*read)->maxConcurrentUsers, 7);
    QCOMPARE(count(routing, "primary", "write"), quint64(3));

    // A read of a tenant the replica has not seen yet.
    QVERIFY(plane.writeTenant("beta", limitPatch(1), ControlPlane::WriteMode::Upsert));
    read = plane.fetchTenant("beta", ApiSession::read(std::nullopt));
    QVERIFY(read);
    QVERIFY(!*read);
    read = plane.fetchTenant("beta", ApiSession::read(QDateTime::currentMSecsSinceEpoch()));
    QVERIFY(read && *read);

    QVERIFY(plane.deleteTenant("beta"));
    QCOMPARE(count(routing, "primary", "write"), quint64(5));
    // Everything was counted once and nothing fell back.
    QCOMPARE(count(routing, "primary", "replica_error"), quint64(0));
    const QByteArray text = registry.render();
    QVERIFY2(text.contains("qtrealtime_control_plane_routing_total{reason=\"no_session\","
                           "target=\"replica\"} 4\n"),
             text.constData());
}

// The tenant cache refresh reads the replica only when it has replayed what the node saw.
void ControlPlaneReplicaTest::refreshNeverLoadsAnOlderStateThanItPublished()
{
    rt::metrics::Registry registry;
    rt::metrics::ServerMetrics metrics(registry);
    rt::metrics::CounterFamily &routing = metrics.controlPlaneRouting;
    TenantDirectory directory;
    ControlPlane plane(settings(0), rt::tenants::TenantDefaults{}, directory);
    plane.setRoutingCounters(&routing);
    QSignalSpy changed(&plane, &ControlPlane::tenantChanged);
    plane.start({});
    QVERIFY(plane.writeTenant("acme", limitPatch(5), ControlPlane::WriteMode::Upsert));
    QVERIFY(waitForReplay());
    plane.refresh();
    QCOMPARE(count(routing, "replica", "caught_up"), quint64(1));

    QVERIFY(setReplayPaused(true));
    QVERIFY(plane.writeTenant("acme", limitPatch(8), ControlPlane::WriteMode::Upsert));
    QCOMPARE(directory.find("acme")->maxConcurrentUsers, 8);
    changed.clear();
    // Even with no read-your-writes delay at all, the stale replica is not used.
    plane.refresh();
    QCOMPARE(count(routing, "primary", "replica_behind"), quint64(1));
    QCOMPARE(directory.find("acme")->maxConcurrentUsers, 8);
    QCOMPARE(changed.size(), 0);

    // Another writer (another node) changes the tenant; this node's refresh sees it on the
    // primary, and must not lose it again to the stale replica afterwards.
    QVERIFY(primarySuper()->exec(QStringLiteral(
            "UPDATE _realtime.tenants SET max_concurrent_users = 9 WHERE external_id = 'acme'")));
    plane.refresh();
    QCOMPARE(directory.find("acme")->maxConcurrentUsers, 9);
    plane.refresh();
    QCOMPARE(directory.find("acme")->maxConcurrentUsers, 9);
    QCOMPARE(count(routing, "primary", "replica_behind"), quint64(3));
    QCOMPARE(changed.size(), 1);

    QVERIFY(setReplayPaused(false));
    QVERIFY(waitForReplay());
    plane.refresh();
    QCOMPARE(count(routing, "replica", "caught_up"), quint64(2));
    QCOMPARE(directory.find("acme")->maxConcurrentUsers, 9);
    QCOMPARE(changed.size(), 1);
}

// A replica nobody listens on: reads answer from the primary, counted and retried later.
void ControlPlaneReplicaTest::unreachableReplicaFallsBackToThePrimary()
{
    rt::metrics::Registry registry;
    rt::metrics::ServerMetrics metrics(registry);
    rt::metrics::CounterFamily &routing = metrics.controlPlaneRouting;
    TenantDirectory directory;
    ControlPlaneSettings broken = settings(1000, 400);
    broken.replicaPort = closedPort();
    ControlPlane plane(broken, rt::tenants::TenantDefaults{}, directory);
    plane.setRoutingCounters(&routing);
    QSignalSpy ready(&plane, &ControlPlane::ready);
    plane.start({});
    QCOMPARE(ready.size(), 1); // the replica is not needed to start
    QVERIFY(plane.writeTenant("acme", limitPatch(5), ControlPlane::WriteMode::Upsert));

    auto read = plane.fetchTenant("acme", ApiSession::read(std::nullopt));
    QVERIFY(read && *read);
    QCOMPARE((*read)->maxConcurrentUsers, 5);
    QCOMPARE(count(routing, "primary", "replica_error"), quint64(1));
    QCOMPARE(count(routing, "replica", "no_session"), quint64(0));

    // Within the retry interval the replica is not even tried.
    read = plane.fetchTenant("acme", ApiSession::read(std::nullopt));
    QVERIFY(read && *read);
    QCOMPARE(count(routing, "primary", "replica_down"), quint64(1));
    plane.refresh();
    QCOMPARE(count(routing, "primary", "replica_down"), quint64(2));
    QCOMPARE(directory.find("acme")->maxConcurrentUsers, 5);

    // After it, the replica is tried again (and fails again). Time passing is the behaviour
    // here, not a quiet period: waiting too little fails the test.
    QTest::qWait(450);
    const auto all = plane.fetchAll(ApiSession::read(std::nullopt));
    QVERIFY(all);
    QCOMPARE(all->size(), 1);
    QCOMPARE(count(routing, "primary", "replica_error"), quint64(2));
}

QByteArray ControlPlaneReplicaTest::request(const QByteArray &method, const QByteArray &path,
                                            const QByteArray &extraHeaders,
                                            const QByteArray &body) const
{
    QByteArray text = method + ' ' + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
            + apiToken(m_apiSecret) + "\r\nConnection: close\r\n" + extraHeaders;
    if (!body.isEmpty()) {
        text += "Content-Type: application/json\r\nContent-Length: "
                + QByteArray::number(body.size()) + "\r\n";
    }
    return text + "\r\n" + body;
}

int ControlPlaneReplicaTest::limitOf(const RawResponse &response)
{
    const QJsonObject data =
            QJsonDocument::fromJson(response.body).object().value(QLatin1String("data")).toObject();
    return data.value(QLatin1String("max_concurrent_users")).toInt(-1);
}

// A whole node: the session travels in the cookie (or header) the write's response set.
void ControlPlaneReplicaTest::nodeReadsItsOwnWritesThroughTheSession()
{
    constexpr int DelayMs = 3000;
    rt::testsupport::TestServer::Options options;
    options.secret = m_apiSecret;
    options.controlPlane = settings(DelayMs);
    rt::testsupport::TestServer server(options);
    QVERIFY2(server.start(), qPrintable(server.failure()));
    const quint16 port = server.port();

    const QByteArray create =
            R"({"tenant":{"external_id":"acme","jwt_secret":"acme-secret","max_concurrent_users":5}})";
    RawResponse created = exchange(port, request("POST", "/api/tenants", {}, create));
    QCOMPARE(created.status, 201);
    QVERIFY(created.header("set-cookie").startsWith("realtime_last_write="));
    QVERIFY(waitForReplay());
    QVERIFY(setReplayPaused(true));

    // The write: on the primary, and it starts the session.
    const QByteArray update = R"({"tenant":{"max_concurrent_users":9}})";
    const RawResponse updated = exchange(port, request("PATCH", "/api/tenants/acme", {}, update));
    QCOMPARE(updated.status, 200);
    QCOMPARE(limitOf(updated), 9);
    const QByteArray setCookie = updated.header("set-cookie");
    QVERIFY2(setCookie.contains("; Max-Age=3; Path=/api/tenants; HttpOnly; SameSite=Strict"),
             setCookie.constData());
    const QByteArray cookie = setCookie.left(setCookie.indexOf(';'));
    const QByteArray stamp = updated.header("x-realtime-last-write");
    QCOMPARE(cookie, "realtime_last_write=" + stamp);
    QCOMPARE(primarySuper()->scalar(QStringLiteral("SELECT max_concurrent_users FROM "
                                                   "_realtime.tenants WHERE external_id = 'acme'")),
             QVariant(9));

    // Without the session: the (stale) replica. With it, by cookie or header: the primary.
    QCOMPARE(limitOf(exchange(port, request("GET", "/api/tenants/acme"))), 5);
    QCOMPARE(limitOf(exchange(
                     port,
                     request("GET", "/api/tenants/acme", "Cookie: other=1; " + cookie + "\r\n"))),
             9);
    QCOMPARE(limitOf(exchange(port,
                              request("GET", "/api/tenants/acme",
                                      "X-Realtime-Last-Write: " + stamp + "\r\n"))),
             9);
    const RawResponse listed = exchange(port, request("GET", "/api/tenants"));
    QCOMPARE(listed.status, 200);
    QVERIFY2(listed.body.contains("\"max_concurrent_users\":5"), listed.body.constData());
    QVERIFY(listed.header("set-cookie").isNull()); // reads do not start sessions

    // A tenant created meanwhile: unknown to the replica, visible to its creator's session.
    const QByteArray createBeta = R"({"tenant":{"external_id":"beta","jwt_secret":"beta-secret"}})";
    const RawResponse beta = exchange(port, request("POST", "/api/tenants", {}, createBeta));
    QCOMPARE(beta.status, 201);
    const QByteArray betaCookie =
            beta.header("set-cookie").left(beta.header("set-cookie").indexOf(';'));
    QCOMPARE(exchange(port, request("GET", "/api/tenants/beta")).status, 404);
    QCOMPARE(exchange(port, request("GET", "/api/tenants/beta", "Cookie: " + betaCookie + "\r\n"))
                     .status,
             200);

    // After the delay the session reads the replica again (time passing is the behaviour
    // under test; waiting too little fails it).
    QTest::qWait(DelayMs + 100);
    QCOMPARE(limitOf(exchange(port,
                              request("GET", "/api/tenants/acme", "Cookie: " + cookie + "\r\n"))),
             5);
    // Deleting is a write too: it answers with a session.
    const RawResponse deleted = exchange(port, request("DELETE", "/api/tenants/beta"));
    QCOMPARE(deleted.status, 204);
    QVERIFY(deleted.header("set-cookie").startsWith("realtime_last_write="));

    QVERIFY(setReplayPaused(false));
    QVERIFY(waitForReplay());
    QCOMPARE(limitOf(exchange(port, request("GET", "/api/tenants/acme"))), 9);
}

// The replica goes away under a running node: reads are served by the primary.
void ControlPlaneReplicaTest::replicaStoppedUnderANodeFallsBackToThePrimary()
{
    rt::testsupport::TestServer::Options options;
    options.secret = m_apiSecret;
    options.controlPlane = settings(1000, 60'000);
    rt::testsupport::TestServer server(options);
    QVERIFY2(server.start(), qPrintable(server.failure()));
    const quint16 port = server.port();
    const QByteArray create =
            R"({"tenant":{"external_id":"acme","jwt_secret":"acme-secret","max_concurrent_users":4}})";
    QCOMPARE(exchange(port, request("POST", "/api/tenants", {}, create)).status, 201);
    QVERIFY(waitForReplay());
    // The node's replica connection is open and in use.
    QCOMPARE(limitOf(exchange(port, request("GET", "/api/tenants/acme"))), 4);
    QCOMPARE(replicaSuper()
                     ->scalar(QStringLiteral("SELECT count(*) FROM pg_stat_activity WHERE "
                                             "application_name = 'qtrealtime-replica'"))
                     .toInt(),
             1);

    QProcess stop;
    stop.start(QStringLiteral("bash"), { m_replicaScript, QStringLiteral("stop"), m_replicaDir });
    QVERIFY(stop.waitForFinished(60'000));
    QVERIFY2(stop.exitCode() == 0, stop.readAllStandardError().constData());
    m_replicaStopped = true;

    // The broken connection fails the first read on the replica; the primary answers it.
    RawResponse read = exchange(port, request("GET", "/api/tenants/acme"));
    QCOMPARE(read.status, 200);
    QCOMPARE(limitOf(read), 4);
    read = exchange(port, request("GET", "/api/tenants"));
    QCOMPARE(read.status, 200);
    QVERIFY(read.body.contains("\"max_concurrent_users\":4"));
    // Writes never needed it.
    const QByteArray update = R"({"tenant":{"max_concurrent_users":6}})";
    QCOMPARE(exchange(port, request("PATCH", "/api/tenants/acme", {}, update)).status, 200);
    QCOMPARE(limitOf(exchange(port, request("GET", "/api/tenants/acme"))), 6);
}

QTEST_GUILESS_MAIN(ControlPlaneReplicaTest)
#include "tst_control_plane_replica.moc"
