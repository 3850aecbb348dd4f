// The connection's states and failover without a server: unusable URLs, nodes that refuse the
// connection (a port nobody listens on), the state texts, and the AdminClient's refusals of
// invalid input. Against a real cluster: tests/e2e.
#include "dashboard/api/admin_client.h"
#include "dashboard/api/connection_manager.h"
#include "dashboard/api/endpoint.h"
#include "dashboard/api/live_feed.h"
#include "dashboard/api/live_feed_connection.h"

#include <QCoreApplication>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTest>

using namespace std::chrono_literals;
using rt::dashboard::AdminClient;
using rt::dashboard::AdminReply;
using rt::dashboard::ApiError;
using rt::dashboard::ConfigWriteReply;
using rt::dashboard::ConnectionManager;
using rt::dashboard::ConnectionState;
using rt::dashboard::LiveFeed;
using rt::dashboard::LiveFeedConnection;
using rt::dashboard::LiveFeedTiming;
using Kind = ConnectionState::Kind;

namespace {

// A loopback port nobody listens on (bound, then closed): connections are refused at once.
quint16 deadPort()
{
    QTcpServer server;
    if (!server.listen(QHostAddress::LocalHost, 0)) {
        qFatal("cannot bind a loopback port");
    }
    return server.serverPort();
}

} // namespace

class ConnectionManagerTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void stateTexts()
    {
        ConnectionState state;
        QCOMPARE(state.text(), QStringLiteral("Not connected"));
        state.kind = Kind::Connecting;
        state.endpoint = QUrl(QStringLiteral("http://10.0.0.1:4000"));
        QCOMPARE(state.text(), QStringLiteral("Connecting to 10.0.0.1:4000…"));
        state.kind = Kind::Connected;
        QCOMPARE(state.text(), QStringLiteral("Connected to 10.0.0.1:4000"));
        state.nodeId = QStringLiteral("node-a");
        QCOMPARE(state.text(), QStringLiteral("Connected to node-a (10.0.0.1:4000)"));
        state.kind = Kind::Reconnecting;
        state.attempt = 2;
        state.delay = 500ms;
        state.reason = QStringLiteral("The node sent nothing for 10 s.");
        QCOMPARE(state.text(),
                 QStringLiteral("Connection lost (The node sent nothing for 10 s.) — "
                                "trying 10.0.0.1:4000 in 0.5 s (attempt 2)…"));
        state.kind = Kind::Failed;
        state.reason = QStringLiteral("no");
        QCOMPARE(state.text(), QStringLiteral("Not connected: no"));
    }

    void anUnusableUrlFails()
    {
        ConnectionManager manager;
        QSignalSpy states(&manager, &ConnectionManager::stateChanged);
        QVERIFY(!manager.connectTo(QStringLiteral("ftp://node-a"), "token"));
        QCOMPARE(manager.state().kind, Kind::Failed);
        QCOMPARE(manager.stateText(),
                 QStringLiteral("Not connected: \"ftp://node-a\" is not the URL of a node (e.g. "
                                "http://host:4000)."));
        QCOMPARE(states.size(), 1);
    }

    void deadNodesAreTriedInTurn()
    {
        const quint16 first = deadPort();
        const quint16 second = deadPort();
        ConnectionManager manager;
        manager.setRotationPolicy({ 10ms, 40ms });
        QSignalSpy states(&manager, &ConnectionManager::stateChanged);
        const QUrl other(QStringLiteral("http://127.0.0.1:%1").arg(second));
        QVERIFY(manager.connectTo(QStringLiteral("127.0.0.1:%1").arg(first), "token", { other }));
        QCOMPARE(manager.state().kind, Kind::Connecting);
        QCOMPARE(manager.knownEndpoints().size(), 2);

        // Refused at once: the other node next, then back to the first, with growing delays.
        QTRY_VERIFY_WITH_TIMEOUT(manager.state().attempt >= 3, 5000);
        QList<ConnectionState> seen;
        for (const QList<QVariant> &arguments : std::as_const(states)) {
            seen.append(arguments.at(0).value<ConnectionState>());
        }
        const auto reconnecting = [&seen](int attempt) {
            for (const ConnectionState &state : std::as_const(seen)) {
                if (state.kind == Kind::Reconnecting && state.attempt == attempt) {
                    return state;
                }
            }
            return ConnectionState{};
        };
        QCOMPARE(reconnecting(1).endpoint, other);
        QCOMPARE(reconnecting(1).delay, 10ms);
        QVERIFY2(reconnecting(1).reason.startsWith(
                         QStringLiteral("The server could not be reached")),
                 qPrintable(reconnecting(1).reason));
        QCOMPARE(reconnecting(2).endpoint.port(), first);
        QCOMPARE(reconnecting(2).delay, 20ms);
        QCOMPARE(reconnecting(3).delay, 40ms);
        QVERIFY(!manager.lastSnapshot());

        manager.disconnectFromCluster();
        QCOMPARE(manager.state().kind, Kind::Disconnected);
        // No retry after the operator disconnected: nothing is scheduled or in flight that could
        // change the state, and nothing already queued did.
        QVERIFY(manager.isIdle());
        const qsizetype settled = states.size();
        QCoreApplication::sendPostedEvents();
        QCOMPARE(states.size(), settled);
    }

    void aSilentNodeIsLeftAfterTheProbeTimeout()
    {
        // Accepts TCP but never answers: the snapshot read gives up, the next node is tried.
        QTcpServer silent;
        QVERIFY(silent.listen(QHostAddress::LocalHost, 0));
        ConnectionManager manager;
        manager.setProbeTimeout(200ms);
        manager.setRotationPolicy({ 60000ms, 60000ms });
        QVERIFY(manager.connectTo(QStringLiteral("http://127.0.0.1:%1").arg(silent.serverPort()),
                                  "token"));
        QTRY_COMPARE(manager.state().kind, Kind::Reconnecting);
        QCOMPARE(manager.state().reason, QStringLiteral("The server did not answer in time."));
        QCOMPARE(manager.state().attempt, 1);
        QCOMPARE(manager.state().delay, 60000ms);
    }

    void aLiveFeedThatCannotConnectIsLost()
    {
        LiveFeed feed;
        QSignalSpy lost(&feed, &LiveFeed::lost);
        feed.open(rt::dashboard::liveFeedUrl(
                          QUrl(QStringLiteral("http://127.0.0.1:%1").arg(deadPort()))),
                  "token");
        QTRY_COMPARE(lost.size(), 1);
        QVERIFY2(lost.at(0).at(0).toString().startsWith(
                         QStringLiteral("The live feed could not be opened: ")),
                 qPrintable(lost.at(0).at(0).toString()));
        QVERIFY(!feed.isOpen());
    }

    void aConnectionIsLostOnlyOnce()
    {
        // The connection under test and a sentinel, both on this thread with the same silence
        // timeout; the sentinel is opened second, to a node that never answers, so its silence
        // timer fires after the first one's would. Were anything of the refused connection still
        // live after its lost() (its silence timer, its socket), it would speak before the
        // sentinel is lost.
        const LiveFeedTiming timing{ 25000ms, 200ms };
        QTcpServer silent;
        QVERIFY(silent.listen(QHostAddress::LocalHost, 0));
        LiveFeedConnection refused;
        LiveFeedConnection sentinel;
        QSignalSpy refusedLost(&refused, &LiveFeedConnection::lost);
        QSignalSpy sentinelLost(&sentinel, &LiveFeedConnection::lost);
        refused.open(7,
                     rt::dashboard::liveFeedUrl(
                             QUrl(QStringLiteral("http://127.0.0.1:%1").arg(deadPort()))),
                     "token", timing);
        sentinel.open(8,
                      rt::dashboard::liveFeedUrl(
                              QUrl(QStringLiteral("http://127.0.0.1:%1").arg(silent.serverPort()))),
                      "token", timing);
        QTRY_COMPARE(sentinelLost.size(), 1);
        QCOMPARE(refusedLost.size(), 1);
        QCOMPARE(refusedLost.at(0).at(0).toULongLong(), 7ULL);
        QVERIFY2(refusedLost.at(0).at(1).toString().startsWith(
                         QStringLiteral("The live feed could not be opened: ")),
                 qPrintable(refusedLost.at(0).at(1).toString()));
    }

    void aSilentNodeIsLost()
    {
        // Accepts TCP but never answers the WebSocket handshake.
        QTcpServer silent;
        QVERIFY(silent.listen(QHostAddress::LocalHost, 0));
        LiveFeed feed;
        feed.setTiming({ 25000ms, 200ms });
        QSignalSpy lost(&feed, &LiveFeed::lost);
        feed.open(rt::dashboard::liveFeedUrl(
                          QUrl(QStringLiteral("http://127.0.0.1:%1").arg(silent.serverPort()))),
                  "token");
        QTRY_COMPARE(lost.size(), 1);
        QCOMPARE(
                lost.at(0).at(0).toString(),
                QStringLiteral("The node did not accept the live feed's connection within 0.2 s."));
    }

    void invalidCallsFailWithoutANetworkRequest()
    {
        AdminClient client;
        client.setBaseUrl(QUrl(QStringLiteral("http://127.0.0.1:%1").arg(deadPort())));
        QSignalSpy anyFailure(&client, &AdminClient::requestFailed);
        ConfigWriteReply *reply =
                client.putConfig(QStringLiteral("region_mapping"), "{not json", 3);
        QSignalSpy failed(reply, &AdminReply::failed);
        QSignalSpy finished(reply, &AdminReply::finished);
        QCOMPARE(client.pendingRequests(), 0);
        QTRY_COMPARE(finished.size(), 1);
        QCOMPARE(failed.size(), 1);
        const ApiError error = failed.at(0).at(0).value<ApiError>();
        QCOMPARE(error.kind, ApiError::Kind::Invalid);
        QVERIFY2(error.text.startsWith(
                         QStringLiteral("The value of region_mapping is not valid JSON")),
                 qPrintable(error.text));
        QCOMPARE(anyFailure.size(), 1);

        ConfigWriteReply *temporary = client.putTemporaryConfig(QStringLiteral("tenant_flags.acme"),
                                                                R"({"suspend":true})", 0, 0s);
        QSignalSpy temporaryFailed(temporary, &AdminReply::failed);
        QTRY_COMPARE(temporaryFailed.size(), 1);

        AdminClient unconnected;
        auto *snapshot = unconnected.fetchSnapshot();
        QSignalSpy snapshotFailed(snapshot, &AdminReply::failed);
        QTRY_COMPARE(snapshotFailed.size(), 1);
        QCOMPARE(snapshotFailed.at(0).at(0).value<ApiError>().text,
                 QStringLiteral("Not connected to a node."));
    }

    void aRefusedConnectionIsANetworkError()
    {
        AdminClient client;
        client.setBaseUrl(QUrl(QStringLiteral("http://127.0.0.1:%1").arg(deadPort())));
        QSignalSpy pending(&client, &AdminClient::pendingRequestsChanged);
        auto *reply = client.listConfig();
        QCOMPARE(client.pendingRequests(), 1);
        QSignalSpy failed(reply, &AdminReply::failed);
        QTRY_COMPARE(failed.size(), 1);
        const ApiError error = failed.at(0).at(0).value<ApiError>();
        QCOMPARE(error.kind, ApiError::Kind::Network);
        QCOMPARE(error.httpStatus, 0);
        QCOMPARE(client.pendingRequests(), 0);
        QCOMPARE(pending.size(), 2);
    }

    void abortedCallsAreCanceled()
    {
        // Accepts but never answers: the call stays in flight until aborted.
        QTcpServer silent;
        QVERIFY(silent.listen(QHostAddress::LocalHost, 0));
        AdminClient client;
        client.setBaseUrl(QUrl(QStringLiteral("http://127.0.0.1:%1").arg(silent.serverPort())));
        auto *reply = client.listConfig();
        QSignalSpy failed(reply, &AdminReply::failed);
        // Aborted once the request is on the wire: the server has the connection.
        QTRY_VERIFY(silent.hasPendingConnections());
        client.abortAll();
        QTRY_COMPARE(failed.size(), 1);
        QCOMPARE(failed.at(0).at(0).value<ApiError>().kind, ApiError::Kind::Canceled);
    }

    void silentServersTimeOut()
    {
        QTcpServer silent;
        QVERIFY(silent.listen(QHostAddress::LocalHost, 0));
        AdminClient client;
        client.setTimeout(200ms);
        client.setBaseUrl(QUrl(QStringLiteral("http://127.0.0.1:%1").arg(silent.serverPort())));
        auto *reply = client.fetchSnapshot();
        QSignalSpy failed(reply, &AdminReply::failed);
        QTRY_COMPARE(failed.size(), 1);
        QCOMPARE(failed.at(0).at(0).value<ApiError>().kind, ApiError::Kind::Timeout);
    }
};

QTEST_GUILESS_MAIN(ConnectionManagerTest)
#include "tst_connection_manager.moc"
