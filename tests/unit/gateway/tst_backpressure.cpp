// A client that stops reading must not make the server buffer without bound: once its unread
// output passes MAX_SEND_BUFFER_BYTES, or stays above SOCKET_HIGH_WATER_BYTES for
// SLOW_CONSUMER_GRACE_MS, it is cut off (told why, then closed), and the other members of the
// topic keep receiving.
#include "tests/support/server/phoenix_client.h"
#include "tests/support/server/test_server.h"

#include <QTcpSocket>
#include <QTest>

using rt::testsupport::PhoenixClient;
using rt::testsupport::TestServer;

class BackpressureTest : public QObject
{
    Q_OBJECT

private:
    static TestServer::Options options()
    {
        TestServer::Options options;
        options.maxSendBufferBytes = 512 * 1024;
        return options;
    }
    TestServer m_server{ options() };

    // GET /metrics of `server`, spinning the event loop (the node answers from this thread).
    static QByteArray metricsOf(TestServer &server)
    {
        QTcpSocket http;
        http.connectToHost(QHostAddress::LocalHost, server.port());
        http.write("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
                   + server.token() + "\r\nConnection: close\r\n\r\n");
        QByteArray response;
        const bool answered = QTest::qWaitFor(
                [&] {
                    response += http.readAll();
                    return http.state() == QAbstractSocket::UnconnectedState;
                },
                5000);
        return answered ? response + http.readAll() : QByteArray();
    }

    // The value of the counter `name` for the self-host tenant in a /metrics response, or -1.
    static double tenantCounter(const QByteArray &metrics, const QByteArray &name)
    {
        for (const QByteArray &line : metrics.split('\n')) {
            if (line.startsWith(QByteArray(name + '{'))
                && line.contains("tenant=\"realtime-dev\"")) {
                return line.mid(line.lastIndexOf(' ') + 1).toDouble();
            }
        }
        return -1;
    }

    // A raw WebSocket client with a tiny receive window that reads nothing until told to,
    // joined to `topic`.
    static bool openStalledClient(QTcpSocket &socket, TestServer &server, const QByteArray &topic)
    {
        socket.setSocketOption(QAbstractSocket::ReceiveBufferSizeSocketOption, 4096);
        socket.setReadBufferSize(4096);
        socket.connectToHost(QHostAddress::LocalHost, server.port());
        if (!socket.waitForConnected(3000)) {
            return false;
        }
        socket.write("GET /socket/websocket?vsn=2.0.0&apikey=" + server.token()
                     + " HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: "
                       "Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                       "Sec-WebSocket-Version: 13\r\n\r\n");
        // A masked join frame with a zero key.
        const QByteArray join = "[\"1\",\"1\",\"" + topic + "\",\"phx_join\",{}]";
        QByteArray frame;
        frame.append(char(0x81)).append(char(0x80 | join.size())).append(QByteArray(4, '\0'));
        frame.append(join);
        socket.write(frame);
        return QTest::qWaitFor([&] { return socket.bytesAvailable() > 0; }, 3000);
    }

    // Whether `reader` receives `count` more messages (then forgotten) within 20 s.
    static bool receivesAll(PhoenixClient &reader, int count)
    {
        int received = 0;
        return QTest::qWaitFor(
                [&] {
                    received += static_cast<int>(reader.texts.size());
                    reader.texts.clear();
                    return received >= count;
                },
                20'000);
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY2(m_server.start(), qPrintable(m_server.failure())); }

    void aStalledConsumerIsCutOffAfterTheGraceAndToldWhy()
    {
        // Far below the hard cap, above the high-water mark: only the grace can cut it off.
        TestServer::Options graceOptions;
        graceOptions.socketHighWaterBytes = 64 * 1024;
        graceOptions.slowConsumerGraceMs = 300;
        graceOptions.metricsJwtSecret = graceOptions.secret;
        TestServer server(graceOptions);
        QVERIFY2(server.start(), qPrintable(server.failure()));
        QTcpSocket stalled;
        QVERIFY(openStalledClient(stalled, server, "realtime:grace"));
        PhoenixClient publisher(server.socketUrl());
        PhoenixClient reader(server.socketUrl());
        QVERIFY(publisher.open() && reader.open());
        for (PhoenixClient *client : { &publisher, &reader }) {
            client->sendText("[\"1\",\"1\",\"realtime:grace\",\"phx_join\",{\"config\":{}}]");
            QVERIFY(client->waitForText("phx_reply").contains("\"ok\""));
        }
        const QByteArray message = "[\"1\",\"2\",\"realtime:grace\",\"broadcast\",{\"type\":"
                                   "\"broadcast\",\"event\":\"big\",\"payload\":{\"d\":\""
                + QByteArray(64 * 1024, 'x') + "\"}}]";
        // 10.5 MB: beyond the kernel's buffers (about 4 MB on loopback), below the 16 MiB cap.
        constexpr int Messages = 160;
        for (int i = 0; i < Messages; ++i) {
            publisher.sendText(message);
        }
        QVERIFY(receivesAll(reader, Messages));
        // The cut-off is counted for the tenant...
        QByteArray metrics;
        QVERIFY2(QTest::qWaitFor(
                         [&] {
                             metrics = metricsOf(server);
                             return tenantCounter(metrics,
                                                  "qtrealtime_slow_consumer_disconnects_total")
                                     == 1;
                         },
                         10'000),
                 metrics.right(2000).constData());
        QVERIFY(tenantCounter(metrics, "qtrealtime_slow_consumer_dropped_messages_total") > 0);
        // ...and the stalled client, once it reads, finds the system message of its channel and
        // a close frame 1008, after the frames that had reached its kernel buffer.
        QByteArray bytes;
        stalled.setReadBufferSize(0);
        QVERIFY(QTest::qWaitFor(
                [&] {
                    bytes += stalled.readAll();
                    return stalled.state() == QAbstractSocket::UnconnectedState;
                },
                10'000));
        bytes += stalled.readAll();
        QVERIFY2(bytes.contains("\"extension\":\"system\"")
                         && bytes.contains("Disconnected: this client read too slowly; "),
                 bytes.right(300).constData());
        QVERIFY(bytes.contains(QByteArray("\x03\xf0slow consumer", 15)));
        QVERIFY(publisher.isConnected() && reader.isConnected());
    }

    void slowConsumerIsDisconnectedOthersKeepReceiving()
    {
        // The slow client: a raw socket with a tiny receive window that never reads.
        QTcpSocket slow;
        QVERIFY(openStalledClient(slow, m_server, "realtime:flood"));

        const QUrl url = m_server.socketUrl();
        PhoenixClient publisher(url);
        PhoenixClient reader(url);
        QVERIFY(publisher.open() && reader.open());
        for (PhoenixClient *client : { &publisher, &reader }) {
            client->sendText("[\"1\",\"1\",\"realtime:flood\",\"phx_join\",{\"config\":{}}]");
            QVERIFY(client->waitForText("phx_reply").contains("\"ok\""));
        }

        // 8 MB for the slow client: more than its kernel buffers (about 4 MB on loopback) plus
        // the 512 KB the server may queue for it.
        const QByteArray chunk(100 * 1024, 'x');
        const QByteArray message = "[\"1\",\"2\",\"realtime:flood\",\"broadcast\",{\"type\":"
                                   "\"broadcast\",\"event\":\"big\",\"payload\":{\"d\":\""
                + chunk + "\"}}]";
        constexpr int Messages = 80;
        for (int i = 0; i < Messages; ++i) {
            publisher.sendText(message);
        }
        // The healthy reader gets every one of them: the server has fanned them all out.
        QVERIFY(receivesAll(reader, Messages));

        // The slow client, once it reads, finds its connection closed by the server after far
        // less than it was sent.
        qint64 slowBytes = 0;
        slow.setReadBufferSize(0);
        const bool closed = QTest::qWaitFor(
                [&] {
                    slowBytes += slow.readAll().size();
                    return slow.state() == QAbstractSocket::UnconnectedState;
                },
                10'000);
        slowBytes += slow.readAll().size();
        QVERIFY2(closed, qPrintable(QStringLiteral("slow client read %1 bytes").arg(slowBytes)));
        QVERIFY2(slowBytes < qint64(Messages) * chunk.size(),
                 qPrintable(QStringLiteral("slow client read %1 bytes").arg(slowBytes)));

        // The healthy member still gets broadcasts after the slow one was dropped.
        reader.texts.clear();
        publisher.sendText("[\"1\",\"3\",\"realtime:flood\",\"broadcast\",{\"type\":\"broadcast\","
                           "\"event\":\"after\",\"payload\":{}}]");
        QVERIFY(!reader.waitForText("\"after\"", 5000).isEmpty());
        QVERIFY(publisher.isConnected());
    }
};

QTEST_GUILESS_MAIN(BackpressureTest)
#include "tst_backpressure.moc"
