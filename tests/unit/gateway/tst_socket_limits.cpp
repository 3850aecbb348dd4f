// Socket-level limits of the Phoenix transport (spec server §1.1): a socket that sends nothing
// is closed after the idle timeout while one that heartbeats stays; a message over 5,000,000
// bytes closes the socket with 1009 while one at the limit is accepted.
#include "tests/support/server/phoenix_client.h"
#include "tests/support/server/test_server.h"

#include <QElapsedTimer>
#include <QTest>

using rt::testsupport::PhoenixClient;
using rt::testsupport::TestServer;

class SocketLimitsTest : public QObject
{
    Q_OBJECT

private:
    static TestServer::Options options()
    {
        TestServer::Options options;
        options.websocketIdleTimeoutMs = 1500;
        return options;
    }
    TestServer m_server{ options() };

private Q_SLOTS:
    void initTestCase() { QVERIFY2(m_server.start(), qPrintable(m_server.failure())); }

    void silentSocketsAreClosedHeartbeatingOnesStay()
    {
        PhoenixClient silent(m_server.socketUrl());
        PhoenixClient alive(m_server.socketUrl());
        QVERIFY(silent.open() && alive.open());
        QElapsedTimer timer;
        timer.start();
        int ref = 0;
        // Heartbeat every 400 ms on one socket, nothing on the other.
        const bool closed = QTest::qWaitFor(
                [&] {
                    if (timer.elapsed() / 400 > ref) {
                        ++ref;
                        alive.sendText("[null,\"" + QByteArray::number(ref)
                                       + "\",\"phoenix\",\"heartbeat\",{}]");
                    }
                    return !silent.isConnected();
                },
                6000);
        QVERIFY(closed);
        // Not before the timeout (1.5 s), and within it plus the once-a-second check.
        QVERIFY2(timer.elapsed() >= 1400, qPrintable(QString::number(timer.elapsed())));
        QCOMPARE(silent.closeCode(), 1000);
        QVERIFY(alive.isConnected());
        alive.sendText("[null,\"hb\",\"phoenix\",\"heartbeat\",{}]");
        QVERIFY(alive.waitForText("\"hb\"").contains("phx_reply"));
    }

    void messagesOverFiveMillionBytesCloseTheSocket()
    {
        PhoenixClient client(m_server.socketUrl());
        QVERIFY(client.open());
        // 5,000,000 bytes exactly: accepted (a heartbeat padded with spaces is still valid).
        QByteArray atLimit = "[null,\"big\",\"phoenix\",\"heartbeat\",{}]";
        atLimit.append(QByteArray(5'000'000 - atLimit.size(), ' '));
        client.sendText(atLimit);
        QVERIFY(client.waitForText("\"big\"", 10'000).contains("phx_reply"));
        QVERIFY(client.isConnected());
        // One byte more: the connection is closed with 1009 (message too big).
        client.sendText(atLimit + ' ');
        QVERIFY(client.waitForDisconnect(10'000));
        QCOMPARE(client.closeCode(), 1009);
    }
};

QTEST_GUILESS_MAIN(SocketLimitsTest)
#include "tst_socket_limits.moc"
