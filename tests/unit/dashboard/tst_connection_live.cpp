// ConnectionManager and AdminClient against a real node (the server's code, in process; see
// tests/support/server): the snapshot read, the live feed's join and pushes, configuration and
// tenant calls, a refused token, and a node that shuts down while the last snapshot stays. Over
// https/wss (issue 18 part 5): connected with the cluster's CA file, refused without it, with
// another CA, or with a certificate that does not name the host dialled.
// Failover across the nodes of one cluster needs etcd: tests/e2e.
#include "dashboard/api/admin_client.h"
#include "dashboard/api/connection_manager.h"
#include "tests/support/server/test_server.h"
#include "tests/support/tls/test_certificates.h"

#include <QJsonObject>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

using namespace std::chrono_literals;
using rt::dashboard::AdminReply;
using rt::dashboard::ApiError;
using rt::dashboard::ConfigConflict;
using rt::dashboard::ConfigListReply;
using rt::dashboard::ConfigWriteReply;
using rt::dashboard::ConnectionManager;
using rt::dashboard::ConnectionState;
using rt::dashboard::NodeTrust;
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

// A node on https/wss with a certificate from `ca` for `names` (DNS names; 127.0.0.1 always as
// an address unless `withAddress` is false), files in `dir`.
std::unique_ptr<TestServer> startTlsServer(const rt::testing::TestCertificateAuthority &ca,
                                           const QTemporaryDir &dir, const QStringList &names,
                                           bool withAddress = true)
{
    const rt::testing::IssuedCertificate issued = ca.issue(
            names, withAddress ? QStringList{ QStringLiteral("127.0.0.1") } : QStringList{});
    TestServer::Options options;
    options.clientTls.certificateFile = dir.filePath(QStringLiteral("node.crt"));
    options.clientTls.keyFile = dir.filePath(QStringLiteral("node.key"));
    if (!rt::testing::writeFile(options.clientTls.certificateFile, issued.certificatePem)
        || !rt::testing::writeFile(options.clientTls.keyFile, issued.keyPem)) {
        return nullptr;
    }
    auto server = std::make_unique<TestServer>(options);
    if (!server->start()) {
        qWarning() << server->failure();
        return nullptr;
    }
    return server;
}

QString writeCaFile(const rt::testing::TestCertificateAuthority &ca, const QTemporaryDir &dir,
                    const QString &name)
{
    const QString file = dir.filePath(name);
    return rt::testing::writeFile(file, ca.certificatePem()) ? file : QString();
}

// Connects to `url` with `trust` and waits until the first attempt is decided.
ConnectionState firstOutcome(ConnectionManager &manager, const QString &url,
                             const QByteArray &token, const NodeTrust &trust)
{
    manager.setRotationPolicy({ 60000ms, 60000ms });
    if (!manager.connectTo(url, token, {}, trust)) {
        return manager.state();
    }
    (void)QTest::qWaitFor(
            [&manager] {
                const Kind kind = manager.state().kind;
                return kind == Kind::Connected || kind == Kind::Reconnecting
                        || kind == Kind::Failed;
            },
            10000);
    return manager.state();
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

    void connectsOverTlsWithTheClustersCa()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        rt::testing::TestCertificateAuthority ca;
        const auto server = startTlsServer(ca, dir, { QStringLiteral("localhost") });
        QVERIFY(server);
        const QString url = QStringLiteral("https://127.0.0.1:%1").arg(server->port());
        ConnectionManager manager;
        QSignalSpy snapshots(&manager, &ConnectionManager::snapshotReceived);
        const ConnectionState state =
                firstOutcome(manager, url, operatorToken(*server),
                             { writeCaFile(ca, dir, QStringLiteral("ca.pem")), {} });
        QCOMPARE(state.kind, Kind::Connected);
        // The live feed (wss) pushes too, not only the first HTTP read.
        QTRY_VERIFY_WITH_TIMEOUT(snapshots.size() >= 2, 5000);
        // The node advertises its https address (under the machine's name), a failover
        // candidate under the same scheme.
        const QUrl advertised(manager.lastSnapshot()->nodes.constFirst().clientAddress);
        QCOMPARE(advertised.scheme(), QStringLiteral("https"));
        QCOMPARE(advertised.port(), server->port());
        const QList<QUrl> known = manager.knownEndpoints();
        QCOMPARE(known.constFirst(), QUrl(url));
        QVERIFY(std::all_of(known.cbegin(), known.cend(), [](const QUrl &endpoint) {
            return endpoint.scheme() == QLatin1String("https");
        }));
    }

    void refusesNodesItCannotVerify_data()
    {
        QTest::addColumn<QString>("why");
        QTest::addColumn<QString>("reason"); // Qt's words, after "SSL handshake failed: "
        const QString unknownIssuer =
                QStringLiteral("The issuer certificate of a locally looked up certificate");
        QTest::newRow("no CA file: the system's roots do not know the cluster CA")
                << QStringLiteral("system") << unknownIssuer;
        QTest::newRow("another CA") << QStringLiteral("other") << unknownIssuer;
        QTest::newRow("a certificate for another host")
                << QStringLiteral("name")
                << QStringLiteral("The host name did not match any of the valid hosts");
    }

    void refusesNodesItCannotVerify()
    {
        QFETCH(QString, why);
        QFETCH(QString, reason);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        rt::testing::TestCertificateAuthority ca;
        rt::testing::TestCertificateAuthority other(QStringLiteral("another CA"));
        const bool rightName = why != QLatin1String("name");
        const auto server = startTlsServer(
                ca, dir, { rightName ? QStringLiteral("localhost") : QStringLiteral("node-b") },
                rightName);
        QVERIFY(server);
        NodeTrust trust;
        if (why != QLatin1String("system")) {
            trust.caFile = writeCaFile(why == QLatin1String("other") ? other : ca, dir,
                                       QStringLiteral("trusted.pem"));
        }
        ConnectionManager manager;
        const ConnectionState state =
                firstOutcome(manager, QStringLiteral("https://127.0.0.1:%1").arg(server->port()),
                             operatorToken(*server), trust);
        // Not retried: a wrong or missing CA file does not fix itself.
        QCOMPARE(state.kind, Kind::Failed);
        QVERIFY2(state.reason.startsWith(QLatin1String("The node could not be verified (SSL "
                                                       "handshake failed: ")
                                         + reason),
                 qPrintable(state.reason));
        QVERIFY2(state.reason.endsWith(QLatin1String("A cluster with a CA of its own needs that "
                                                     "CA's certificate as the CA file.")),
                 qPrintable(state.reason));
        QVERIFY(!manager.lastSnapshot());
    }

    void anUnverifiableCandidateIsSkippedDuringFailover()
    {
        // The operator's node is down; the next candidate presents another CA's certificate: it
        // is one failed candidate (the token never reaches it), the rotation goes on.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        rt::testing::TestCertificateAuthority ca;
        rt::testing::TestCertificateAuthority other(QStringLiteral("another CA"));
        const auto impostor = startTlsServer(other, dir, { QStringLiteral("localhost") });
        QVERIFY(impostor);
        quint16 downPort = 0;
        {
            QTcpServer probe;
            QVERIFY(probe.listen(QHostAddress::LocalHost, 0));
            downPort = probe.serverPort();
        }
        const QUrl impostorUrl(QStringLiteral("https://127.0.0.1:%1").arg(impostor->port()));
        ConnectionManager manager;
        manager.setRotationPolicy({ 10ms, 10ms });
        QSignalSpy states(&manager, &ConnectionManager::stateChanged);
        QVERIFY(manager.connectTo(QStringLiteral("https://127.0.0.1:%1").arg(downPort),
                                  operatorToken(*impostor), { impostorUrl },
                                  { writeCaFile(ca, dir, QStringLiteral("ca.pem")), {} }));
        QTRY_VERIFY_WITH_TIMEOUT(manager.state().attempt >= 3, 10000);
        QCOMPARE_NE(manager.state().kind, Kind::Failed);
        const bool impostorRefused =
                std::any_of(states.cbegin(), states.cend(), [](const QList<QVariant> &args) {
                    return args.at(0).value<ConnectionState>().reason.startsWith(
                            QLatin1String("The node could not be verified"));
                });
        QVERIFY(impostorRefused);
        manager.disconnectFromCluster();
    }

    void plaintextToATlsPortIsRefused()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        rt::testing::TestCertificateAuthority ca;
        const auto server = startTlsServer(ca, dir, { QStringLiteral("localhost") });
        QVERIFY(server);
        ConnectionManager manager;
        const ConnectionState state =
                firstOutcome(manager, QStringLiteral("http://127.0.0.1:%1").arg(server->port()),
                             operatorToken(*server), {});
        QCOMPARE(state.kind, Kind::Reconnecting);
        QVERIFY2(state.reason.contains(QLatin1String("TLS only")), qPrintable(state.reason));
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
