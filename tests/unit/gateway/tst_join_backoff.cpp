// Join errors wait for CHANNEL_ERROR_BACKOFF_MS (spec server §3.3) without holding up the
// socket, and a client cannot pile up an unbounded number of them.
#include "tests/support/server/phoenix_client.h"
#include "tests/support/server/test_server.h"

#include <QElapsedTimer>
#include <QTest>

using rt::testsupport::PhoenixClient;
using rt::testsupport::TestServer;

class JoinBackoffTest : public QObject
{
    Q_OBJECT

private:
    static TestServer::Options options()
    {
        TestServer::Options options;
        options.channelErrorBackoffMs = 400;
        return options;
    }
    TestServer m_server{ options() };

private Q_SLOTS:
    void initTestCase() { QVERIFY2(m_server.start(), qPrintable(m_server.failure())); }

    void joinErrorsWaitForTheBackoffButHeartbeatsDoNot()
    {
        PhoenixClient client(m_server.socketUrl());
        QVERIFY(client.open());
        QElapsedTimer timer;
        timer.start();
        client.sendText("[\"1\",\"1\",\"realtime:\",\"phx_join\",{}]");
        client.sendText("[null,\"2\",\"phoenix\",\"heartbeat\",{}]");
        QVERIFY(!client.waitForText("\"2\"").isEmpty());
        QVERIFY2(timer.elapsed() < 300, qPrintable(QString::number(timer.elapsed())));
        const QByteArray reply = client.waitForText("TopicNameRequired", 3000);
        QVERIFY(!reply.isEmpty());
        QVERIFY2(timer.elapsed() >= 390, qPrintable(QString::number(timer.elapsed())));
        // A successful join is answered at once, even right after an error.
        timer.restart();
        client.sendText("[\"3\",\"3\",\"realtime:fine\",\"phx_join\",{\"config\":{}}]");
        QVERIFY(client.waitForText("\"3\",\"3\"").contains("\"ok\""));
        QVERIFY(timer.elapsed() < 300);
    }

    void tooManyPendingJoinErrorsCloseTheSocket()
    {
        // A backoff far longer than the flood takes to arrive: with 400 ms, a slow machine (ASan,
        // parallel builds) let the first errors fall due and leave the queue before the last
        // join came, so the socket was never over the bound.
        TestServer::Options slowErrors = options();
        slowErrors.channelErrorBackoffMs = 60'000;
        TestServer server(slowErrors);
        QVERIFY2(server.start(), qPrintable(server.failure()));
        PhoenixClient client(server.socketUrl());
        QVERIFY(client.open());
        for (int i = 0; i < 1001; ++i) {
            client.sendText("[\"" + QByteArray::number(i) + "\",\"" + QByteArray::number(i)
                            + "\",\"realtime:\",\"phx_join\",{}]");
        }
        QVERIFY(client.waitForDisconnect(5000));
        QCOMPARE(client.closeCode(), 1008);
    }
};

QTEST_GUILESS_MAIN(JoinBackoffTest)
#include "tst_join_backoff.moc"
