// A client that stops reading must not make the server buffer without bound: once its unread
// output passes MAX_SEND_BUFFER_BYTES it is disconnected, and the other members of the topic
// keep receiving.
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

private Q_SLOTS:
    void initTestCase() { QVERIFY2(m_server.start(), qPrintable(m_server.failure())); }

    void slowConsumerIsDisconnectedOthersKeepReceiving()
    {
        // The slow client: a raw socket with a tiny receive window that never reads.
        QTcpSocket slow;
        slow.setSocketOption(QAbstractSocket::ReceiveBufferSizeSocketOption, 4096);
        slow.setReadBufferSize(4096);
        slow.connectToHost(QHostAddress::LocalHost, m_server.port());
        QVERIFY(slow.waitForConnected(3000));
        slow.write("GET /socket/websocket?vsn=2.0.0&apikey=" + m_server.token()
                   + " HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: "
                     "13\r\n\r\n");
        // A masked join frame: [\"1\",\"1\",\"realtime:flood\",\"phx_join\",{}] with a zero key.
        const QByteArray join = "[\"1\",\"1\",\"realtime:flood\",\"phx_join\",{}]";
        QByteArray frame;
        frame.append(char(0x81)).append(char(0x80 | join.size())).append(QByteArray(4, '\0'));
        frame.append(join);
        slow.write(frame);
        QVERIFY(QTest::qWaitFor([&] { return slow.bytesAvailable() > 0; }, 3000));

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
        int received = 0;
        QVERIFY(QTest::qWaitFor(
                [&] {
                    received += static_cast<int>(reader.texts.size());
                    reader.texts.clear();
                    return received >= Messages;
                },
                20'000));

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
