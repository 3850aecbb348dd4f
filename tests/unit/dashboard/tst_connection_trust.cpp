// What the dashboard trusts (issue 18 part 5), without TLS: which nodes of a snapshot or of the
// remembered list it may fail over to (same scheme, allowlist), a CA file or a failover host it
// cannot use, and where the operator token travels (only the Authorization header, never a URL,
// never along a redirect). Against a fake node on loopback that records every request head.
// Over TLS against a real node: tst_connection_live.
#include "dashboard/api/admin_client.h"
#include "dashboard/api/connection_manager.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>

using namespace std::chrono_literals;
using rt::dashboard::AdminClient;
using rt::dashboard::AdminReply;
using rt::dashboard::ApiError;
using rt::dashboard::ConnectionManager;
using rt::dashboard::NodeTrust;
using Kind = rt::dashboard::ConnectionState::Kind;

namespace {

const QByteArray Token = QByteArrayLiteral("eyJhbGciOiJIUzI1NiJ9.e30.secret-part");

// A node that is only HTTP: it answers GET /api/admin/snapshot with a recorded snapshot whose
// nodes advertise `clientAddresses` (or with a redirect to `redirectTo`), refuses everything
// else with 403, and keeps the head of every request it got.
class FakeNode : public QObject
{
public:
    explicit FakeNode(const QStringList &clientAddresses, QUrl redirectTo = {})
        : m_body(snapshotBody(clientAddresses)),
          m_redirectTo(std::move(redirectTo))
    {
        if (!m_server.listen(QHostAddress::LocalHost, 0)) {
            qFatal("cannot listen on loopback");
        }
        connect(&m_server, &QTcpServer::newConnection, this, &FakeNode::accept);
    }

    QString url() const { return QStringLiteral("http://127.0.0.1:%1").arg(m_server.serverPort()); }
    const QList<QByteArray> &requests() const { return m_requests; }

private:
    static QByteArray snapshotBody(const QStringList &clientAddresses)
    {
        QFile file(QStringLiteral(RT_API_TEST_DATA "/snapshot-3-nodes.json"));
        if (!file.open(QIODevice::ReadOnly)) {
            qFatal("no recorded snapshot");
        }
        QJsonObject snapshot = QJsonDocument::fromJson(file.readAll()).object();
        QJsonArray nodes;
        const QJsonObject first =
                snapshot.value(QLatin1String("nodes")).toArray().first().toObject();
        for (qsizetype i = 0; i < clientAddresses.size(); ++i) {
            QJsonObject node = first;
            node.insert(QStringLiteral("id"), QStringLiteral("node-%1").arg(i));
            node.insert(QStringLiteral("client_address"), clientAddresses.at(i));
            nodes.append(node);
        }
        snapshot.insert(QStringLiteral("nodes"), nodes);
        return QJsonDocument(snapshot).toJson(QJsonDocument::Compact);
    }

    void accept()
    {
        while (QTcpSocket *socket = m_server.nextPendingConnection()) {
            connect(socket, &QTcpSocket::readyRead, this, [this, socket] { answer(socket); });
            connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
        }
    }

    void answer(QTcpSocket *socket)
    {
        QByteArray &received = m_partial[socket];
        received += socket->readAll();
        const qsizetype end = received.indexOf("\r\n\r\n");
        if (end < 0) {
            return;
        }
        const QByteArray head = received.left(end);
        received.remove(0, end + 4);
        m_requests.append(head);
        QByteArray response;
        if (!head.startsWith("GET /api/admin/snapshot ")) {
            response = "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
        } else if (!m_redirectTo.isEmpty()) {
            response = "HTTP/1.1 302 Found\r\nLocation: " + m_redirectTo.toEncoded()
                    + "\r\nContent-Length: 0\r\n\r\n";
        } else {
            response = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                    + QByteArray::number(m_body.size()) + "\r\n\r\n" + m_body;
        }
        socket->write(response);
    }

    QTcpServer m_server;
    QByteArray m_body;
    QUrl m_redirectTo;
    QHash<QTcpSocket *, QByteArray> m_partial;
    QList<QByteArray> m_requests;
};

QStringList urls(const QList<QUrl> &list)
{
    QStringList texts;
    for (const QUrl &url : list) {
        texts.append(url.toString());
    }
    return texts;
}

} // namespace

class ConnectionTrustTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void onlyAdmittedNodesBecomeFailoverCandidates_data()
    {
        QTest::addColumn<QStringList>("failoverHosts");
        QTest::addColumn<QStringList>("candidates");
        const QStringList everyHttpNode{ QStringLiteral("http://10.0.0.2:4000"),
                                         QStringLiteral("http://rt.evil.example:4000") };
        QTest::newRow("default: the members under the same scheme")
                << QStringList() << everyHttpNode;
        QTest::newRow("a subnet") << QStringList{ QStringLiteral("10.0.0.0/8") }
                                  << QStringList{ QStringLiteral("http://10.0.0.2:4000") };
    }

    void onlyAdmittedNodesBecomeFailoverCandidates()
    {
        QFETCH(QStringList, failoverHosts);
        QFETCH(QStringList, candidates);
        // A scheme-less address takes the operator's scheme; an https node is not one an http
        // session fails over to; a node bound to every interface cannot be dialled.
        FakeNode node({ QStringLiteral("10.0.0.2:4000"), QStringLiteral("https://10.0.0.3:4000"),
                        QStringLiteral("http://rt.evil.example:4000"),
                        QStringLiteral("0.0.0.0:4000") });
        ConnectionManager manager;
        manager.setRotationPolicy({ 60000ms, 60000ms });
        QSignalSpy snapshots(&manager, &ConnectionManager::snapshotReceived);
        QVERIFY(manager.connectTo(node.url(), Token, {}, NodeTrust{ {}, failoverHosts }));
        QTRY_COMPARE(snapshots.size(), 1);
        QCOMPARE(urls(manager.knownEndpoints()), QStringList{ node.url() } + candidates);
    }

    void rememberedEndpointsAreFilteredToo()
    {
        ConnectionManager manager;
        manager.setRotationPolicy({ 60000ms, 60000ms });
        const QList<QUrl> remembered{ QUrl(QStringLiteral("http://10.0.0.9:4000")),
                                      QUrl(QStringLiteral("https://10.0.0.8:4000")),
                                      QUrl(QStringLiteral("https://rt.evil.example:4000")) };
        QVERIFY(manager.connectTo(QStringLiteral("https://127.0.0.1:1"), Token, remembered,
                                  NodeTrust{ {}, { QStringLiteral("10.0.0.8") } }));
        QCOMPARE(urls(manager.knownEndpoints()),
                 (QStringList{ QStringLiteral("https://127.0.0.1:1"),
                               QStringLiteral("https://10.0.0.8:4000") }));
        manager.disconnectFromCluster();
    }

    void unusableTrustSettingsFailByName()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString missing = dir.filePath(QStringLiteral("missing.pem"));
        const QString notPem = dir.filePath(QStringLiteral("not.pem"));
        QFile file(notPem);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n");
        file.close();
        const QString url = QStringLiteral("https://127.0.0.1:1");

        ConnectionManager manager;
        QVERIFY(!manager.connectTo(url, Token, {}, NodeTrust{ missing, {} }));
        QCOMPARE(manager.state().kind, Kind::Failed);
        QVERIFY2(manager.state().reason.startsWith(
                         QStringLiteral("Cannot read the CA file %1: ").arg(missing)),
                 qPrintable(manager.state().reason));
        QVERIFY(!manager.connectTo(url, Token, {}, NodeTrust{ notPem, {} }));
        QCOMPARE(manager.state().reason,
                 QStringLiteral("The CA file %1 holds no PEM certificate.").arg(notPem));
        QVERIFY(!manager.connectTo(url, Token, {}, NodeTrust{ {}, { QStringLiteral("a:1") } }));
        QCOMPARE(manager.state().reason,
                 QStringLiteral("\"a:1\" is not a host name, *.domain, IP address or subnet (a "
                                "failover host has no scheme and no port)."));
        // Nothing was dialled.
        QVERIFY(manager.isIdle());
    }

    void theTokenTravelsOnlyInTheAuthorizationHeader()
    {
        FakeNode node({ QStringLiteral("10.0.0.2:4000") });
        ConnectionManager manager;
        manager.setRotationPolicy({ 60000ms, 60000ms });
        QVERIFY(manager.connectTo(node.url(), Token));
        // The snapshot read, then the live feed's upgrade (refused: 403, so the node is lost).
        QTRY_COMPARE(manager.state().kind, Kind::Reconnecting);
        QCOMPARE(node.requests().size(), 2);
        QVERIFY(node.requests().at(1).startsWith("GET /api/admin/live/websocket?vsn=1.0.0 "));
        for (const QByteArray &head : node.requests()) {
            const QByteArray requestLine = head.left(head.indexOf("\r\n"));
            QVERIFY2(!requestLine.contains("secret-part") && !requestLine.contains("apikey"),
                     requestLine.constData());
            const QByteArray header =
                    QByteArrayLiteral("\r\nauthorization: bearer ") + Token.toLower();
            QVERIFY2(head.toLower().contains(header), head.constData());
        }
        manager.disconnectFromCluster();
    }

    void redirectsAreNotFollowed()
    {
        // Were the redirect followed, the token would reach a host nobody admitted.
        QTcpServer elsewhere;
        QVERIFY(elsewhere.listen(QHostAddress::LocalHost, 0));
        FakeNode node({},
                      QUrl(QStringLiteral("http://127.0.0.1:%1/api/admin/snapshot")
                                   .arg(elsewhere.serverPort())));
        AdminClient client;
        client.setBaseUrl(QUrl(node.url()));
        client.setToken(Token);
        auto *reply = client.fetchSnapshot();
        QSignalSpy failed(reply, &AdminReply::failed);
        QTRY_COMPARE(failed.size(), 1);
        QCOMPARE(failed.at(0).at(0).value<ApiError>().httpStatus, 302);
        QCOMPARE(node.requests().size(), 1);
        QVERIFY(!elsewhere.hasPendingConnections());
    }
};

QTEST_GUILESS_MAIN(ConnectionTrustTest)
#include "tst_connection_trust.moc"
