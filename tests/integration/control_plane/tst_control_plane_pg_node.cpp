// A whole node (TestServer) whose control plane is a real PostgreSQL 15 (the CTest fixture
// "postgres", pg-cluster.sh): the tenants it serves are stored in schema _realtime of a fresh
// database, and a socket of a tenant stored there connects with that tenant's secret.
// Apart from tst_control_plane_pg so that the control plane's suite builds without the server.
#include "server/auth/jwt.h"
#include "server/tenants/control_plane.h"
#include "server/tenants/tenant_directory.h"
#include "tests/support/postgres/pg_env.h"
#include "tests/support/server/raw_http.h"
#include "tests/support/server/test_server.h"
#include "tests/support/tenants/tenant_fixtures.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QTest>

#include <memory>

using rt::tenants::ControlPlaneSettings;
using rt::tenants::TenantPtr;
using rt::testsupport::PgEnv;
using rt::testsupport::PgSession;
using rt::testsupport::ScratchDatabase;

using rt::testsupport::exchange;
using rt::testsupport::RawResponse;

using rt::testsupport::hsToken;

class ControlPlanePgNodeTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void nodeServesATenantStoredInPostgres();

private:
    ControlPlaneSettings settings() const;
    std::unique_ptr<PgSession> inspect() const;

    PgEnv m_env;
    std::unique_ptr<ScratchDatabase> m_db;
};

void ControlPlanePgNodeTest::initTestCase()
{
    QLoggingCategory::setFilterRules(QStringLiteral("rt.*.info=false"));
    QString error;
    const std::optional<PgEnv> env = PgEnv::fromEnvironment(&error);
    QVERIFY2(env, qPrintable(error));
    m_env = *env;
}

void ControlPlanePgNodeTest::init()
{
    m_db = std::make_unique<ScratchDatabase>(m_env, QStringLiteral("rt_cpn"));
    QVERIFY2(m_db->isValid(), qPrintable(m_db->error()));
}

void ControlPlanePgNodeTest::cleanup()
{
    m_db.reset();
}

ControlPlaneSettings ControlPlanePgNodeTest::settings() const
{
    ControlPlaneSettings settings;
    settings.backend = ControlPlaneSettings::Backend::Postgres;
    settings.host = m_env.host;
    settings.port = m_env.port;
    settings.database = m_db->name();
    settings.user = m_env.user;
    settings.password = m_env.password;
    settings.encryptionKey = QByteArrayLiteral("0123456789abcdef");
    return settings;
}

// A superuser connection to this test case's database.
std::unique_ptr<PgSession> ControlPlanePgNodeTest::inspect() const
{
    return std::make_unique<PgSession>(m_env, m_db->name());
}

void ControlPlanePgNodeTest::nodeServesATenantStoredInPostgres()
{
    rt::testsupport::TestServer::Options options;
    options.controlPlane = settings();
    options.extraTenants = {
        QJsonObject{ { QStringLiteral("external_id"), QStringLiteral("acme") },
                     { QStringLiteral("jwt_secret"), QStringLiteral("acme-secret") },
                     { QStringLiteral("max_concurrent_users"), 3 } },
    };
    rt::testsupport::TestServer server(options);
    QVERIFY2(server.start(), qPrintable(server.failure()));

    // The tenants are in PostgreSQL: the seeded one and the self-host tenant, whose database
    // (upstream's seed) is the control-plane database itself.
    const auto db = inspect();
    QCOMPARE(db->column(QStringLiteral("SELECT external_id || ':' || max_concurrent_users "
                                       "FROM _realtime.tenants ORDER BY external_id")),
             (QStringList{ QStringLiteral("acme:3"), QStringLiteral("realtime-dev:200") }));
    QCOMPARE(db->column(QStringLiteral(
                     "SELECT tenant_external_id || ' ' || type FROM _realtime.extensions")),
             QStringList{ QStringLiteral("realtime-dev postgres_cdc_rls") });
    const TenantPtr self = server.server().tenants().find("realtime-dev");
    QVERIFY(self && self->hasDatabase());
    QCOMPARE(self->databaseExtension()->settings.value(QStringLiteral("db_name")).toString(),
             m_db->name());
    QCOMPARE(server.server().tenants().find("acme")->maxConcurrentUsers, 3);

    const QByteArray host = "acme.localhost:" + QByteArray::number(server.port());
    const RawResponse upgrade =
            exchange(server.port(),
                     "GET /socket/websocket?vsn=1.0.0&apikey=" + hsToken("acme-secret")
                             + " HTTP/1.1\r\nHost: " + host
                             + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                               "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                               "Sec-WebSocket-Version: 13\r\n\r\n");
    QVERIFY2(upgrade.status == 101, upgrade.head.constData());

    const RawResponse refused =
            exchange(server.port(),
                     "GET /socket/websocket?vsn=1.0.0&apikey=" + hsToken("not-acme")
                             + " HTTP/1.1\r\nHost: " + host
                             + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                               "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                               "Sec-WebSocket-Version: 13\r\n\r\n");
    // A token signed with another secret is refused (the exact answer is the unit suites' job).
    QVERIFY2(refused.status >= 400 && refused.status < 500, refused.head.constData());

    const RawResponse ping =
            exchange(server.port(), "GET /api/ping HTTP/1.1\r\nHost: " + host + "\r\n\r\n");
    QCOMPARE(ping.status, 200);
    QCOMPARE(QJsonDocument::fromJson(ping.body).object(),
             (QJsonObject{ { QStringLiteral("message"), QStringLiteral("Success") } }));
    const RawResponse ghost =
            exchange(server.port(), "GET /api/ping HTTP/1.1\r\nHost: ghost.localhost\r\n\r\n");
    QCOMPARE(ghost.status, 401);
}

QTEST_GUILESS_MAIN(ControlPlanePgNodeTest)
#include "tst_control_plane_pg_node.moc"
