// ConnectionManager and AdminClient against a real node (the server's code, in process; see
// tests/support/server): the snapshot read, the live feed's join and pushes, configuration and
// tenant calls, a refused token, and a node that shuts down while the last snapshot stays.
// Failover across the nodes of one cluster needs etcd: tests/e2e.
#include "dashboard/api/admin_client.h"
#include "dashboard/api/connection_manager.h"
#include "tests/support/server/test_server.h"

#include <QJsonObject>
#include <QSignalSpy>
#include <QTest>

#include <memory>

using namespace std::chrono_literals;
using rt::dashboard::AdminReply;
using rt::dashboard::ApiError;
using rt::dashboard::ConfigConflict;
using rt::dashboard::ConfigListing;
using rt::dashboard::ConfigListReply;
using rt::dashboard::ConfigWriteReply;
using rt::dashboard::ConnectionManager;
using rt::dashboard::ConnectionState;
using rt::dashboard::TenantListReply;
using rt::testsupport::TestServer;
using Kind = ConnectionState::Kind;

namespace {

QString nodeUrl(const TestServer &server)
{
    return QStringLiteral("http://127.0.0.1:%1").arg(server.port());
}

// An operator token: signed with API_JWT_SECRET (the test server's secret).
QByteArray operatorToken(const TestServer &server)
{
    return server.token(QJsonObject{ { QStringLiteral("role"), QStringLiteral("service_role") } });
}

} // namespace

class ConnectionLiveTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void connectsAndFollowsTheLiveFeed()
    {
        TestServer server;
        QVERIFY2(server.start(), qPrintable(server.failure()));
        ConnectionManager manager;
        QSignalSpy snapshots(&manager, &ConnectionManager::snapshotReceived);
        QVERIFY(manager.connectTo(nodeUrl(server), operatorToken(server)));
        QTRY_COMPARE_WITH_TIMEOUT(manager.state().kind, Kind::Connected, 10000);
        QVERIFY(manager.lastSnapshot());
        QVERIFY(!manager.lastSnapshot()->answeredBy.isEmpty());
        QCOMPARE(manager.state().nodeId, manager.lastSnapshot()->answeredBy);
        QCOMPARE(manager.lastSnapshot()->nodes.size(), 1);
        // The HTTP read, the push at the join, then one a second.
        QTRY_VERIFY_WITH_TIMEOUT(snapshots.size() >= 3, 5000);
    }

    void configurationAndTenantCalls()
    {
        TestServer server;
        QVERIFY2(server.start(), qPrintable(server.failure()));
        ConnectionManager manager;
        QVERIFY(manager.connectTo(nodeUrl(server), operatorToken(server)));
        QTRY_COMPARE_WITH_TIMEOUT(manager.state().kind, Kind::Connected, 10000);

        ConfigListReply *list = manager.adminClient()->listConfig();
        QSignalSpy listed(list, &ConfigListReply::succeeded);
        QTRY_COMPARE(listed.size(), 1);

        // Compare-and-swap against a revision the key never had: a conflict, nothing written.
        ConfigWriteReply *stale = manager.adminClient()->putConfig(
                QStringLiteral("tenant_flags.realtime-dev"), R"({"suspend":false})", 999);
        QSignalSpy conflicted(stale, &ConfigWriteReply::conflicted);
        QSignalSpy staleFailed(stale, &AdminReply::failed);
        QTRY_COMPARE(conflicted.size() + staleFailed.size(), 1);
        QVERIFY2(staleFailed.isEmpty(),
                 qPrintable(staleFailed.isEmpty()
                                    ? QString()
                                    : staleFailed.at(0).at(0).value<ApiError>().text));
        QVERIFY(!conflicted.at(0).at(0).value<ConfigConflict>().exists);

        TenantListReply *tenants = manager.adminClient()->listTenants();
        QSignalSpy tenantsListed(tenants, &TenantListReply::succeeded);
        QTRY_COMPARE(tenantsListed.size(), 1);
        const auto rows = tenantsListed.at(0).at(0).value<QList<rt::api::TenantSummary>>();
        QVERIFY(std::any_of(rows.cbegin(), rows.cend(), [](const rt::api::TenantSummary &row) {
            return row.externalId == QLatin1String("realtime-dev");
        }));
    }

    void aRefusedTokenFails()
    {
        TestServer server;
        QVERIFY2(server.start(), qPrintable(server.failure()));
        ConnectionManager manager;
        QVERIFY(manager.connectTo(nodeUrl(server), "not-a-token"));
        QTRY_COMPARE_WITH_TIMEOUT(manager.state().kind, Kind::Failed, 10000);
        QVERIFY2(manager.state().reason.startsWith(
                         QStringLiteral("The server refused the operator token (HTTP 403")),
                 qPrintable(manager.state().reason));
    }

    void aNodeThatStopsKeepsThePicture()
    {
        auto server = std::make_unique<TestServer>();
        QVERIFY2(server->start(), qPrintable(server->failure()));
        ConnectionManager manager;
        manager.setRotationPolicy({ 60000ms, 60000ms });
        QVERIFY(manager.connectTo(nodeUrl(*server), operatorToken(*server)));
        QTRY_COMPARE_WITH_TIMEOUT(manager.state().kind, Kind::Connected, 10000);
        const rt::api::ClusterSnapshot before = *manager.lastSnapshot();

        server.reset(); // shuts down: the live feed is closed
        QTRY_COMPARE_WITH_TIMEOUT(manager.state().kind, Kind::Reconnecting, 10000);
        QCOMPARE(manager.state().attempt, 1);
        QVERIFY(!manager.state().reason.isEmpty());
        QVERIFY(manager.lastSnapshot());
        QCOMPARE(manager.lastSnapshot()->answeredBy, before.answeredBy);
    }
};

QTEST_GUILESS_MAIN(ConnectionLiveTest)
#include "tst_connection_live.moc"
