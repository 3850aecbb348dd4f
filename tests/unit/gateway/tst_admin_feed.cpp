// The admin live feed (docs/admin-api.md) over a real WebSocket against an in-process single
// node: the operator token from the apikey parameter or the Authorization header, 403 without
// one, the exact reply bytes of join, heartbeat and unmatched topics, a snapshot push at once
// and then every second that reads back as rt::api::ClusterSnapshot, and close code 1001 when
// the node shuts down.
#include "server/auth/jwt.h"
#include "shared/api/cluster_snapshot.h"
#include "tests/support/server/phoenix_client.h"
#include "tests/support/server/test_server.h"

#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkRequest>
#include <QSignalSpy>
#include <QTcpSocket>
#include <QTest>
#include <QUrlQuery>
#include <QWebSocket>

#include <algorithm>

using rt::testsupport::PhoenixClient;
using rt::testsupport::TestServer;

class AdminFeedTest : public QObject
{
    Q_OBJECT

private:
    QUrl feedUrl(const QByteArray &apikey) const
    {
        QUrl url(QStringLiteral("ws://127.0.0.1:%1/api/admin/live/websocket").arg(m_server.port()));
        QUrlQuery query;
        query.addQueryItem(QStringLiteral("vsn"), QStringLiteral("1.0.0"));
        if (!apikey.isEmpty()) {
            query.addQueryItem(QStringLiteral("apikey"), QString::fromLatin1(apikey));
        }
        url.setQuery(query);
        return url;
    }

    std::unique_ptr<PhoenixClient> connectFeed()
    {
        auto client = std::make_unique<PhoenixClient>(feedUrl(m_server.operatorToken()));
        return client->open() ? std::move(client) : nullptr;
    }

    static QByteArray join(PhoenixClient &client)
    {
        client.sendText("{\"topic\":\"admin:cluster\",\"event\":\"phx_join\",\"payload\":{},"
                        "\"ref\":\"1\",\"join_ref\":\"1\"}");
        return client.waitForText("\"phx_reply\"");
    }

    static bool isSnapshot(const QByteArray &frame)
    {
        return frame.contains("\"event\":\"snapshot\"");
    }

    // Pushes come from the node's one-second timer. The sentinel: a second subscriber, joined
    // now, receives two snapshots (the one at its join and the next periodic one), so a push
    // round ran; `client` got no snapshot meanwhile.
    bool noPushWhileAnotherGetsOne(PhoenixClient &client)
    {
        auto witness = connectFeed();
        if (!witness || !join(*witness).contains("\"ok\"")) {
            return false;
        }
        for (int round = 0; round < 2; ++round) {
            if (witness->waitForText(&isSnapshot, 3000).isEmpty()) {
                return false;
            }
        }
        return std::none_of(client.texts.cbegin(), client.texts.cend(), &isSnapshot);
    }

    TestServer m_server;

private Q_SLOTS:
    void initTestCase() { QVERIFY2(m_server.start(), qPrintable(m_server.failure())); }

    void joinIsAnsweredAndASnapshotFollowsAtOnceAndEverySecond()
    {
        auto client = connectFeed();
        QVERIFY(client);
        QElapsedTimer clock;
        clock.start();
        QCOMPARE(join(*client),
                 QByteArray("{\"topic\":\"admin:cluster\",\"event\":\"phx_reply\",\"payload\":"
                            "{\"status\":\"ok\",\"response\":{}},\"ref\":\"1\"}"));
        const QByteArray first = client->waitForText(&isSnapshot, 1000);
        QVERIFY(!first.isEmpty());
        const QJsonObject frame = QJsonDocument::fromJson(first).object();
        QCOMPARE(frame.value(QLatin1String("topic")).toString(), QStringLiteral("admin:cluster"));
        QVERIFY(frame.value(QLatin1String("ref")).isNull());
        const auto snapshot = rt::api::ClusterSnapshot::fromJson(
                frame.value(QLatin1String("payload")).toObject());
        QVERIFY2(snapshot.ok(), qPrintable(snapshot ? QString() : snapshot.error().message));
        QCOMPARE(snapshot->answeredBy, m_server.server().nodeName());
        QCOMPARE(snapshot->nodes.size(), qsizetype(1));
        QCOMPARE(snapshot->nodes[0].id, m_server.server().nodeName());
        QVERIFY(snapshot->links.isEmpty());
        QVERIFY(!client->waitForText(&isSnapshot, 1500).isEmpty());
        QVERIFY(clock.elapsed() < 2500);
        // A leave stops the pushes.
        client->sendText("{\"topic\":\"admin:cluster\",\"event\":\"phx_leave\",\"payload\":{},"
                         "\"ref\":\"2\",\"join_ref\":\"1\"}");
        QVERIFY(!client->waitForText("\"ref\":\"2\"").isEmpty());
        client->texts.clear();
        QVERIFY(noPushWhileAnotherGetsOne(*client));
    }

    void heartbeatsAndOtherTopics()
    {
        auto client = connectFeed();
        QVERIFY(client);
        client->sendText("{\"topic\":\"phoenix\",\"event\":\"heartbeat\",\"payload\":{},"
                         "\"ref\":\"7\"}");
        QCOMPARE(client->waitForText("phx_reply"),
                 QByteArray("{\"topic\":\"phoenix\",\"event\":\"phx_reply\",\"payload\":"
                            "{\"status\":\"ok\",\"response\":{}},\"ref\":\"7\"}"));
        client->sendText("{\"topic\":\"realtime:room\",\"event\":\"phx_join\",\"payload\":{},"
                         "\"ref\":\"8\",\"join_ref\":\"8\"}");
        QCOMPARE(client->waitForText("phx_reply"),
                 QByteArray("{\"topic\":\"realtime:room\",\"event\":\"phx_reply\",\"payload\":"
                            "{\"status\":\"error\",\"response\":{\"reason\":\"unmatched "
                            "topic\"}},\"ref\":\"8\"}"));
        QVERIFY(noPushWhileAnotherGetsOne(*client)); // nothing joined, nothing pushed
    }

    void theTokenMayComeAsAHeader()
    {
        QWebSocket socket;
        QNetworkRequest request(feedUrl({}));
        request.setRawHeader("Authorization", "Bearer " + m_server.operatorToken());
        QSignalSpy connected(&socket, &QWebSocket::connected);
        socket.open(request);
        QVERIFY(connected.wait(5000));
        socket.close();
    }

    void withoutAValidTokenTheUpgradeIsRefused_data()
    {
        QTest::addColumn<QByteArray>("apikey");
        QTest::newRow("none") << QByteArray();
        QTest::newRow("garbage") << QByteArray("not-a-jwt");
        QTest::newRow("other secret") << rt::auth::signHmac(
                QJsonObject{}, QByteArrayLiteral("another-secret-another-secret-another"),
                rt::auth::HmacAlgorithm::HS256);
        // The right secret but a client's role (the self-host tenant's anon key).
        QTest::newRow("client role") << m_server.token();
    }
    void withoutAValidTokenTheUpgradeIsRefused()
    {
        QFETCH(QByteArray, apikey);
        PhoenixClient client(feedUrl(apikey));
        QVERIFY(!client.open(3000));
    }

    void shutdownClosesWithGoingAway()
    {
        // A raw socket, not QWebSocket: QWebSocket reads frames in a queued slot but notices the
        // end of the stream at once, so when the Close frame and the FIN arrive together it may
        // report the connection gone without ever reading the code.
        QTcpSocket socket;
        socket.connectToHost(QHostAddress::LocalHost, m_server.port());
        QTRY_COMPARE(socket.state(), QAbstractSocket::ConnectedState);
        const QUrl url = feedUrl(m_server.operatorToken());
        socket.write("GET " + url.path(QUrl::FullyEncoded).toLatin1() + '?'
                     + url.query(QUrl::FullyEncoded).toLatin1()
                     + " HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                       "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                       "Sec-WebSocket-Version: 13\r\n\r\n");
        QByteArray received;
        QTRY_VERIFY((received += socket.readAll()).contains("\r\n\r\n"));
        QVERIFY2(received.startsWith("HTTP/1.1 101"), received.constData());
        m_server.server().stop();
        QTRY_COMPARE(socket.state(), QAbstractSocket::UnconnectedState);
        received += socket.readAll();
        // The last frame: Close (0x88), 2 + reason bytes, the code 1001 big-endian first.
        const qsizetype close = received.lastIndexOf("\x88");
        QVERIFY(close > received.indexOf("\r\n\r\n"));
        QVERIFY(received.size() >= close + 4);
        QCOMPARE(quint8(received.at(close + 2)) << 8 | quint8(received.at(close + 3)), 1001);
    }
};

QTEST_GUILESS_MAIN(AdminFeedTest)
#include "tst_admin_feed.moc"
