// The empty-socket sweeper (spec server §1.6): a socket that has had channels but currently has
// none is dropped without a close frame after NO_CHANNEL_TIMEOUT_IN_MS; sockets that never
// joined, and sockets with a channel, are left alone.
#include "tests/support/server/phoenix_client.h"
#include "tests/support/server/test_server.h"

#include <QTest>

using rt::testsupport::PhoenixClient;
using rt::testsupport::TestServer;

namespace {

const QByteArray Join = "[\"1\",\"1\",\"realtime:room\",\"phx_join\",{\"config\":{}}]";
const QByteArray Leave = "[\"1\",\"2\",\"realtime:room\",\"phx_leave\",{}]";

} // namespace

class EmptySocketSweeperTest : public QObject
{
    Q_OBJECT

private:
    static TestServer::Options options()
    {
        TestServer::Options options;
        options.noChannelTimeoutMs = 200;
        return options;
    }
    TestServer m_server{ options() };

private Q_SLOTS:
    void initTestCase() { QVERIFY2(m_server.start(), qPrintable(m_server.failure())); }

    void socketsWithoutChannelsAfterALeaveAreDropped()
    {
        PhoenixClient emptied(m_server.socketUrl());
        PhoenixClient neverJoined(m_server.socketUrl());
        PhoenixClient joined(m_server.socketUrl());
        QVERIFY(emptied.open() && neverJoined.open() && joined.open());
        emptied.sendText(Join);
        joined.sendText(Join);
        QVERIFY(!emptied.waitForText("phx_reply").isEmpty());
        QVERIFY(!joined.waitForText("phx_reply").isEmpty());
        emptied.sendText(Leave);
        QVERIFY(!emptied.waitForText("\"2\"").isEmpty());

        // The sweep runs every second: the emptied socket goes within about two.
        // (QWebSocket reports the same close code whether or not a close frame came, so the
        // drop itself is what is checked.)
        QVERIFY(emptied.waitForDisconnect(4000));
        QVERIFY(neverJoined.isConnected());
        QVERIFY(joined.isConnected());
        // And the joined one still works.
        joined.sendText("[null,\"3\",\"phoenix\",\"heartbeat\",{}]");
        QVERIFY(!joined.waitForText("\"3\"").isEmpty());
    }
};

QTEST_MAIN(EmptySocketSweeperTest)
#include "tst_empty_socket_sweeper.moc"
