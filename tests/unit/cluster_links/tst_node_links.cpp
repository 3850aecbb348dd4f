// NodeLinks over loopback, several "nodes" in one process: frames flow between three nodes
// with the right sender and counters, order holds per ordering key over two links, a wrong
// secret or a wrong node is refused on both sides, garbage on the port is closed, a restarted
// peer is reconnected and gets the frames queued meanwhile, the queue for an unreachable peer
// is bounded (drops counted), frames of many megabytes arrive intact, and a peer that goes
// silent without closing is dropped by the heartbeat; before the handshake frames are capped
// at a few KiB and handshakes in progress per address.
#include "server/cluster/links/frame_codec.h"
#include "server/cluster/links/handshake.h"
#include "server/cluster/links/node_links.h"
#include "server/cluster/links/peer_links.h"

#include <QElapsedTimer>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>
#include <QtEndian>

#include <memory>

using namespace rt::cluster::links;
using namespace std::chrono_literals;

namespace {

constexpr quint8 KindData = 16;
constexpr quint8 KindOther = 77;
constexpr int WaitMs = 10'000;

LinkSettings testSettings(const QString &nodeId,
                          const QByteArray &secret = "test-secret-test-secret-test-secret")
{
    LinkSettings settings;
    settings.nodeId = nodeId;
    settings.secret = secret;
    settings.reconnectInitialDelay = 20ms;
    settings.reconnectMaxDelay = 200ms;
    settings.handshakeTimeout = 2000ms;
    settings.heartbeatInterval = 500ms;
    return settings;
}

struct Received
{
    QString from;
    quint8 kind = 0;
    QByteArray payload;
};

// One node: its links and everything they delivered.
struct Node
{
    explicit Node(const LinkSettings &settings) : links(std::make_unique<NodeLinks>(settings))
    {
        QObject::connect(links.get(), &NodeLinks::frameReceived, links.get(),
                         [this](const QString &from, quint8 kind, const QByteArray &payload) {
                             received.append(Received{ from, kind, payload });
                         });
    }
    bool listen(quint16 port = 0)
    {
        auto bound = links->listen(QHostAddress::LocalHost, port);
        return bound.ok();
    }
    PeerAddress address() const
    {
        return PeerAddress{ links->settings().nodeId, QStringLiteral("127.0.0.1"),
                            links->listeningPort() };
    }

    std::unique_ptr<NodeLinks> links;
    QList<Received> received;
};

quint16 unusedPort()
{
    QTcpServer probe;
    if (!probe.listen(QHostAddress::LocalHost, 0)) {
        return 0;
    }
    return probe.serverPort();
}

QByteArray randomBytes(qsizetype size, quint32 seed)
{
    QByteArray bytes(size, Qt::Uninitialized);
    QRandomGenerator rng(seed);
    auto *words = reinterpret_cast<quint32 *>(bytes.data());
    rng.fillRange(words, size / 4);
    return bytes;
}

} // namespace

class NodeLinksTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void threeNodesExchangeFrames();
    void orderPerKeyOverTwoLinks();
    void wrongSecretIsRefused();
    void wrongNodeAtAddressIsRefused();
    void garbageOnThePortIsClosed();
    void silentClientTimesOut();
    void largeFrameBeforeTheHandshakeIsRefused();
    void pendingHandshakesAreCappedPerAddress();
    void restartedPeerIsReconnected();
    void boundedQueueDropsWhileDown();
    void largeFramesArriveIntact();
    void oversizedAndReservedFramesAreRefused();
    void removedPeerIsClosed();
    void silentPeerIsDroppedByHeartbeat();
};

void NodeLinksTest::threeNodesExchangeFrames()
{
    Node a(testSettings(QStringLiteral("node-a")));
    Node b(testSettings(QStringLiteral("node-b")));
    Node c(testSettings(QStringLiteral("node-c")));
    QVERIFY(a.listen() && b.listen() && c.listen());
    const QList<PeerAddress> all{ a.address(), b.address(), c.address() };
    QSignalSpy aConnected(a.links.get(), &NodeLinks::peerConnected);
    for (Node *node : { &a, &b, &c }) {
        node->links->setPeers(all); // includes itself, which is ignored
    }
    QCOMPARE(a.links->peers(), (QStringList{ QStringLiteral("node-b"), QStringLiteral("node-c") }));
    for (Node *node : { &a, &b, &c }) {
        QTRY_COMPARE_WITH_TIMEOUT(node->links->connectedPeers().size(), 2, WaitMs);
    }
    QCOMPARE(aConnected.size(), 2);

    for (int i = 0; i < 50; ++i) {
        QVERIFY(a.links->send(QStringLiteral("node-b"), KindData, QByteArray::number(i),
                              u"tenant-1:room"));
        QVERIFY(a.links->send(QStringLiteral("node-c"), KindOther, QByteArray("to c")));
    }
    QVERIFY(b.links->send(QStringLiteral("node-a"), KindData, QByteArray("reply")));
    QTRY_COMPARE_WITH_TIMEOUT(b.received.size(), 50, WaitMs);
    QTRY_COMPARE_WITH_TIMEOUT(c.received.size(), 50, WaitMs);
    QTRY_COMPARE_WITH_TIMEOUT(a.received.size(), 1, WaitMs);
    for (int i = 0; i < 50; ++i) {
        QCOMPARE(b.received[i].from, QStringLiteral("node-a"));
        QCOMPARE(b.received[i].kind, KindData);
        QCOMPARE(b.received[i].payload, QByteArray::number(i));
        QCOMPARE(c.received[i].kind, KindOther);
    }
    QCOMPARE(a.received[0].from, QStringLiteral("node-b"));
    QCOMPARE(a.received[0].payload, QByteArray("reply"));

    // Counters on both ends agree (wire bytes: 5-byte header + payload).
    const PeerCounters out = a.links->counters(QStringLiteral("node-b"));
    const PeerCounters in = b.links->counters(QStringLiteral("node-a"));
    QCOMPARE(out.framesOut, 50U);
    QCOMPARE(in.framesIn, 50U);
    QCOMPARE(out.bytesOut, in.bytesIn);
    QVERIFY(out.connected);
    QCOMPARE(out.linksUp, 2);
    QCOMPARE(in.linksIn, 2);
    QCOMPARE(out.framesDropped, 0U);
    QCOMPARE(out.queuedFrames, 0);
    QCOMPARE(a.links->allCounters().size(), 2);
    QCOMPARE(a.links->totals().authFailures, 0U);
}

void NodeLinksTest::orderPerKeyOverTwoLinks()
{
    Node a(testSettings(QStringLiteral("node-a")));
    Node b(testSettings(QStringLiteral("node-b")));
    QVERIFY(a.listen() && b.listen());
    a.links->setPeers({ b.address() });
    QTRY_VERIFY_WITH_TIMEOUT(a.links->counters(QStringLiteral("node-b")).linksUp == 2, WaitMs);

    constexpr int Keys = 16;
    constexpr int PerKey = 300;
    // Interleave keys; sizes vary so that the two links are unevenly busy.
    for (int seq = 0; seq < PerKey; ++seq) {
        for (int k = 0; k < Keys; ++k) {
            QByteArray payload = QByteArray::number(k) + ':' + QByteArray::number(seq) + ':';
            payload += QByteArray((k * 131 + seq * 7) % 4000, 'p');
            QVERIFY(a.links->send(QStringLiteral("node-b"), KindData, payload,
                                  QStringLiteral("tenant-%1:topic").arg(k)));
        }
    }
    QTRY_COMPARE_WITH_TIMEOUT(b.received.size(), Keys * PerKey, WaitMs);
    QList<int> next(Keys, 0);
    for (const Received &r : std::as_const(b.received)) {
        const QList<QByteArray> parts = r.payload.split(':');
        const int key = parts.at(0).toInt();
        const int seq = parts.at(1).toInt();
        QCOMPARE(seq, next[key]);
        ++next[key];
    }
    // Both links carried traffic.
    const PeerCounters counters = a.links->counters(QStringLiteral("node-b"));
    QCOMPARE(counters.framesOutPerLink.size(), 2);
    QVERIFY(counters.framesOutPerLink[0] > 0);
    QVERIFY(counters.framesOutPerLink[1] > 0);
    QCOMPARE(counters.framesOutPerLink[0] + counters.framesOutPerLink[1], quint64(Keys * PerKey));
}

void NodeLinksTest::wrongSecretIsRefused()
{
    Node a(testSettings(QStringLiteral("node-a"), "right-secret-right-secret-right-secret"));
    Node x(testSettings(QStringLiteral("node-x"), "wrong-secret-wrong-secret-wrong-secret"));
    QVERIFY(a.listen() && x.listen());
    QSignalSpy aConnected(a.links.get(), &NodeLinks::peerConnected);
    QSignalSpy xConnected(x.links.get(), &NodeLinks::peerConnected);
    // Both try both directions.
    x.links->setPeers({ a.address() });
    a.links->setPeers({ x.address() });
    QVERIFY(x.links->send(QStringLiteral("node-a"), KindData, QByteArray("intruder"))); // queued
    // Each side refuses the other's dial (acceptor: bad proof; dialer: Reject received).
    QTRY_VERIFY_WITH_TIMEOUT(a.links->totals().authFailures >= 2, WaitMs);
    QTRY_VERIFY_WITH_TIMEOUT(x.links->totals().authFailures >= 2, WaitMs);
    // A few more reconnect rounds, each refused again.
    QTRY_VERIFY_WITH_TIMEOUT(a.links->totals().authFailures >= 6, WaitMs);
    QTRY_VERIFY_WITH_TIMEOUT(x.links->totals().authFailures >= 6, WaitMs);
    QCOMPARE(aConnected.size(), 0);
    QCOMPARE(xConnected.size(), 0);
    QVERIFY(a.received.isEmpty());
    QVERIFY(x.received.isEmpty());
    QCOMPARE(a.links->counters(QStringLiteral("node-x")).linksIn, 0);
    QCOMPARE(x.links->counters(QStringLiteral("node-a")).framesOut, 0U);
}

void NodeLinksTest::wrongNodeAtAddressIsRefused()
{
    Node a(testSettings(QStringLiteral("node-a")));
    Node b(testSettings(QStringLiteral("node-b")));
    QVERIFY(a.listen() && b.listen());
    QSignalSpy connected(a.links.get(), &NodeLinks::peerConnected);
    // a believes node-c listens where node-b does.
    PeerAddress stale = b.address();
    stale.nodeId = QStringLiteral("node-c");
    a.links->setPeers({ stale });
    QTRY_VERIFY_WITH_TIMEOUT(a.links->totals().authFailures >= 1, WaitMs);
    QCOMPARE(connected.size(), 0);
    // The corrected address connects.
    a.links->setPeers({ b.address() });
    QTRY_COMPARE_WITH_TIMEOUT(connected.size(), 1, WaitMs);
    QCOMPARE(connected.at(0).at(0).toString(), QStringLiteral("node-b"));
}

void NodeLinksTest::garbageOnThePortIsClosed()
{
    Node a(testSettings(QStringLiteral("node-a")));
    QVERIFY(a.listen());
    QTcpSocket client;
    QSignalSpy disconnected(&client, &QTcpSocket::disconnected);
    client.connectToHost(QHostAddress::LocalHost, a.links->listeningPort());
    QTRY_COMPARE_WITH_TIMEOUT(client.state(), QAbstractSocket::ConnectedState, WaitMs);
    client.write("GET / HTTP/1.1\r\nHost: example\r\n\r\n");
    QTRY_COMPARE_WITH_TIMEOUT(disconnected.size(), 1, WaitMs);
    QCOMPARE(a.links->totals().authFailures, 1U);
    QVERIFY(a.received.isEmpty());
    // What the node sent: its hello and possibly a reject; never application frames.
    const QByteArray answer = client.readAll();
    QVERIFY(answer.size() >= 5);
    QCOMPARE(static_cast<quint8>(answer.at(4)), quint8(ControlKind::Hello));
}

void NodeLinksTest::silentClientTimesOut()
{
    LinkSettings settings = testSettings(QStringLiteral("node-a"));
    settings.handshakeTimeout = 300ms;
    Node a(settings);
    QVERIFY(a.listen());
    QTcpSocket client;
    QSignalSpy disconnected(&client, &QTcpSocket::disconnected);
    client.connectToHost(QHostAddress::LocalHost, a.links->listeningPort());
    QTRY_COMPARE_WITH_TIMEOUT(disconnected.size(), 1, WaitMs);
}

void NodeLinksTest::largeFrameBeforeTheHandshakeIsRefused()
{
    // A peer that has not proved the secret may announce a few KiB, not the 16 MiB a ready
    // link carries: the header alone gets it closed, nothing of the payload is awaited.
    Node a(testSettings(QStringLiteral("node-a")));
    QVERIFY(a.listen());
    QTcpSocket client;
    QSignalSpy disconnected(&client, &QTcpSocket::disconnected);
    client.connectToHost(QHostAddress::LocalHost, a.links->listeningPort());
    QTRY_COMPARE_WITH_TIMEOUT(client.state(), QAbstractSocket::ConnectedState, WaitMs);
    QByteArray header(5, '\0');
    qToBigEndian<quint32>(PreAuthMaxFramePayloadBytes + 1, header.data());
    header[4] = static_cast<char>(ControlKind::Hello);
    client.write(header);
    QTRY_COMPARE_WITH_TIMEOUT(disconnected.size(), 1, WaitMs);
    QCOMPARE(a.links->totals().authFailures, 1U);
    QVERIFY(a.received.isEmpty());
}

void NodeLinksTest::pendingHandshakesAreCappedPerAddress()
{
    LinkSettings settings = testSettings(QStringLiteral("node-a"));
    settings.maxPendingHandshakesPerAddress = 3;
    Node a(settings);
    QVERIFY(a.listen());
    // Three silent sockets from one address hold its handshake places...
    std::vector<std::unique_ptr<QTcpSocket>> silent;
    for (int i = 0; i < 3; ++i) {
        silent.push_back(std::make_unique<QTcpSocket>());
        silent.back()->connectToHost(QHostAddress::LocalHost, a.links->listeningPort());
        QTRY_COMPARE_WITH_TIMEOUT(silent.back()->state(), QAbstractSocket::ConnectedState, WaitMs);
        // The node's hello is its sign that it took the socket as a handshake.
        QTRY_VERIFY_WITH_TIMEOUT(silent.back()->bytesAvailable() > 0, WaitMs);
    }
    // ...so a fourth is refused at once.
    QTcpSocket fourth;
    QSignalSpy dropped(&fourth, &QTcpSocket::disconnected);
    fourth.connectToHost(QHostAddress::LocalHost, a.links->listeningPort());
    QTRY_COMPARE_WITH_TIMEOUT(dropped.size(), 1, WaitMs);
    QTRY_COMPARE_WITH_TIMEOUT(a.links->totals().refusedConnections, 1U, WaitMs);
    // A real peer on the same address gets in once one place is free.
    silent.front()->abort();
    silent.erase(silent.begin());
    Node b(testSettings(QStringLiteral("node-b")));
    QVERIFY(b.listen());
    b.links->setPeers({ a.address() });
    QTRY_VERIFY_WITH_TIMEOUT(b.links->isConnected(QStringLiteral("node-a")), WaitMs);
}

void NodeLinksTest::restartedPeerIsReconnected()
{
    Node a(testSettings(QStringLiteral("node-a")));
    auto b = std::make_unique<Node>(testSettings(QStringLiteral("node-b")));
    QVERIFY(a.listen() && b->listen());
    const PeerAddress bAddress = b->address();
    QSignalSpy connected(a.links.get(), &NodeLinks::peerConnected);
    QSignalSpy disconnected(a.links.get(), &NodeLinks::peerDisconnected);
    a.links->setPeers({ bAddress });
    QTRY_COMPARE_WITH_TIMEOUT(connected.size(), 1, WaitMs);
    QVERIFY(a.links->send(QStringLiteral("node-b"), KindData, QByteArray("before")));
    QTRY_COMPARE_WITH_TIMEOUT(b->received.size(), 1, WaitMs);

    b.reset(); // the peer process dies
    QTRY_COMPARE_WITH_TIMEOUT(disconnected.size(), 1, WaitMs);
    QVERIFY(!a.links->isConnected(QStringLiteral("node-b")));
    for (int i = 0; i < 10; ++i) {
        QVERIFY(a.links->send(QStringLiteral("node-b"), KindData, QByteArray::number(i), u"key"));
    }
    QCOMPARE(a.links->counters(QStringLiteral("node-b")).queuedFrames, 10);
    // A few failed reconnects (the queue waits through them).
    const quint64 failedBefore = a.links->counters(QStringLiteral("node-b")).connectsFailed;
    QTRY_VERIFY_WITH_TIMEOUT(
            a.links->counters(QStringLiteral("node-b")).connectsFailed >= failedBefore + 2, WaitMs);
    QCOMPARE(a.links->counters(QStringLiteral("node-b")).queuedFrames, 10);

    b = std::make_unique<Node>(testSettings(QStringLiteral("node-b")));
    QVERIFY(b->listen(bAddress.port)); // restarted on the same port
    QTRY_COMPARE_WITH_TIMEOUT(connected.size(), 2, WaitMs);
    QTRY_COMPARE_WITH_TIMEOUT(b->received.size(), 10, WaitMs);
    for (int i = 0; i < 10; ++i) {
        QCOMPARE(b->received[i].payload, QByteArray::number(i));
    }
    QVERIFY(a.links->send(QStringLiteral("node-b"), KindData, QByteArray("after")));
    QTRY_COMPARE_WITH_TIMEOUT(b->received.size(), 11, WaitMs);
    QCOMPARE(b->received.last().payload, QByteArray("after"));
    // Both links came back (2 connects before the restart, 2 after).
    QTRY_VERIFY_WITH_TIMEOUT(a.links->counters(QStringLiteral("node-b")).connectsSucceeded >= 4,
                             WaitMs);
}

void NodeLinksTest::boundedQueueDropsWhileDown()
{
    LinkSettings settings = testSettings(QStringLiteral("node-a"));
    settings.maxQueuedFramesPerPeer = 100;
    settings.maxQueuedBytesPerPeer = 10'240;
    Node a(settings);
    const quint16 port = unusedPort();
    QVERIFY(port != 0);
    a.links->setPeers(
            { PeerAddress{ QStringLiteral("node-b"), QStringLiteral("127.0.0.1"), port } });
    QSignalSpy dropped(a.links.get(), &NodeLinks::framesDropped);
    int accepted = 0;
    for (int i = 0; i < 300; ++i) {
        accepted += a.links->send(QStringLiteral("node-b"), KindData,
                                  QByteArray::number(i).leftJustified(50, '.'), u"k");
    }
    QCOMPARE(accepted, 100); // frame-count bound (100 × 55 bytes < 10 KiB)
    QCOMPARE(dropped.size(), 200);
    QCOMPARE(dropped.last().at(1).toULongLong(), 200ULL);
    PeerCounters counters = a.links->counters(QStringLiteral("node-b"));
    QCOMPARE(counters.queuedFrames, 100);
    QCOMPARE(counters.queuedBytes, 100 * 55);
    QCOMPARE(counters.framesDropped, 200U);
    QCOMPARE(counters.bytesDropped, 200U * 55);
    QVERIFY(!counters.connected);

    // The byte bound holds too, while reconnects fail.
    QTRY_VERIFY_WITH_TIMEOUT(a.links->counters(QStringLiteral("node-b")).connectsFailed >= 3,
                             WaitMs);
    QVERIFY(!a.links->send(QStringLiteral("node-b"), KindData, QByteArray(5000, 'x')));
    QCOMPARE(a.links->counters(QStringLiteral("node-b")).queuedBytes, 100 * 55);
    QCOMPARE(a.links->counters(QStringLiteral("node-b")).framesDropped, 201U);

    // The peer comes up: the 100 queued frames arrive, in order, and nothing else.
    Node b(testSettings(QStringLiteral("node-b")));
    QVERIFY(b.listen(port));
    QTRY_COMPARE_WITH_TIMEOUT(b.received.size(), 100, WaitMs);
    for (int i = 0; i < 100; ++i) {
        QCOMPARE(b.received[i].payload, QByteArray::number(i).leftJustified(50, '.'));
    }
    QCOMPARE(a.links->counters(QStringLiteral("node-b")).queuedFrames, 0);
    // The sentinel: a frame sent now on the same ordering key arrives right after them.
    QVERIFY(a.links->send(QStringLiteral("node-b"), KindData, QByteArray("sentinel"), u"k"));
    QTRY_COMPARE_WITH_TIMEOUT(b.received.size(), 101, WaitMs);
    QCOMPARE(b.received.last().payload, QByteArray("sentinel"));
}

void NodeLinksTest::largeFramesArriveIntact()
{
    Node a(testSettings(QStringLiteral("node-a")));
    Node b(testSettings(QStringLiteral("node-b")));
    QVERIFY(a.listen() && b.listen());
    a.links->setPeers({ b.address() });
    QTRY_VERIFY_WITH_TIMEOUT(a.links->isConnected(QStringLiteral("node-b")), WaitMs);
    const QByteArray big = randomBytes(8 * 1024 * 1024, 1);
    const QByteArray max = randomBytes(DefaultMaxFramePayloadBytes, 2);
    const QByteArray small("small after big");
    QVERIFY(a.links->send(QStringLiteral("node-b"), KindData, big, u"k"));
    QVERIFY(a.links->send(QStringLiteral("node-b"), KindData, max, u"k"));
    QVERIFY(a.links->send(QStringLiteral("node-b"), KindData, small, u"k"));
    QTRY_COMPARE_WITH_TIMEOUT(b.received.size(), 3, 30'000);
    QCOMPARE(b.received[0].payload.size(), big.size());
    QVERIFY(b.received[0].payload == big);
    QVERIFY(b.received[1].payload == max);
    QCOMPARE(b.received[2].payload, small);
    // The links stayed up (no protocol error, no heartbeat timeout during the transfer).
    QVERIFY(a.links->isConnected(QStringLiteral("node-b")));
    QCOMPARE(a.links->totals().protocolErrors + b.links->totals().protocolErrors, 0U);
}

void NodeLinksTest::oversizedAndReservedFramesAreRefused()
{
    LinkSettings settings = testSettings(QStringLiteral("node-a"));
    settings.maxFramePayloadBytes = 4096;
    Node a(settings);
    Node b(testSettings(QStringLiteral("node-b")));
    QVERIFY(a.listen() && b.listen());
    a.links->setPeers({ b.address() });
    QTRY_VERIFY_WITH_TIMEOUT(a.links->isConnected(QStringLiteral("node-b")), WaitMs);
    QVERIFY(!a.links->send(QStringLiteral("node-b"), KindData, QByteArray(4097, 'x')));
    QCOMPARE(a.links->counters(QStringLiteral("node-b")).framesDropped, 1U);
    QVERIFY(a.links->send(QStringLiteral("node-b"), KindData, QByteArray(4096, 'x')));
    // Control kinds belong to the link.
    QVERIFY(!a.links->send(QStringLiteral("node-b"), quint8(ControlKind::Reject), QByteArray()));
    QVERIFY(!a.links->send(QStringLiteral("node-b"), 0, QByteArray()));
    QTRY_COMPARE_WITH_TIMEOUT(b.received.size(), 1, WaitMs);
    QCOMPARE(b.received[0].payload, QByteArray(4096, 'x'));
    // The sentinels: frames without an ordering key go round-robin over the links, so one
    // sentinel per link, sent last, arrives after anything sent before it on that link; once all
    // are in, nothing refused came in between.
    const int links = a.links->settings().linksPerPeer;
    for (int i = 0; i < links; ++i) {
        QVERIFY(a.links->send(QStringLiteral("node-b"), KindData, QByteArray("sentinel")));
    }
    QTRY_COMPARE_WITH_TIMEOUT(b.received.size(), 1 + links, WaitMs);
    for (int i = 1; i <= links; ++i) {
        QCOMPARE(b.received[i].payload, QByteArray("sentinel"));
    }
    QVERIFY(a.links->isConnected(QStringLiteral("node-b")));
}

void NodeLinksTest::removedPeerIsClosed()
{
    Node a(testSettings(QStringLiteral("node-a")));
    Node b(testSettings(QStringLiteral("node-b")));
    QVERIFY(a.listen() && b.listen());
    QSignalSpy disconnected(a.links.get(), &NodeLinks::peerDisconnected);
    a.links->setPeers({ b.address() });
    QTRY_VERIFY_WITH_TIMEOUT(a.links->isConnected(QStringLiteral("node-b")), WaitMs);
    QTRY_COMPARE_WITH_TIMEOUT(b.links->counters(QStringLiteral("node-a")).linksIn, 2, WaitMs);
    a.links->setPeers({});
    QCOMPARE(disconnected.size(), 1);
    QVERIFY(a.links->peers().isEmpty());
    QVERIFY(!a.links->send(QStringLiteral("node-b"), KindData, QByteArray("late")));
    QCOMPARE(a.links->totals().unroutableFrames, 1U);
    // b sees the incoming links go.
    QTRY_COMPARE_WITH_TIMEOUT(b.links->counters(QStringLiteral("node-a")).linksIn, 0, WaitMs);
}

void NodeLinksTest::silentPeerIsDroppedByHeartbeat()
{
    // A hand-made acceptor completes the handshake correctly, then never sends another byte
    // and never closes (as a host that lost power would look): the dialer must give up on it
    // after three heartbeat intervals and redial.
    const QByteArray secret("test-secret-test-secret-test-secret");
    QTcpServer fake;
    QVERIFY(fake.listen(QHostAddress::LocalHost, 0));
    QList<QTcpSocket *> accepted;
    int handshakes = 0;
    connect(&fake, &QTcpServer::newConnection, &fake, [&] {
        QTcpSocket *socket = fake.nextPendingConnection();
        accepted.append(socket);
        const QByteArray ownHello = encodeHello(makeHello(QStringLiteral("node-silent")));
        socket->write(encodeFrame(quint8(ControlKind::Hello), ownHello));
        auto decoder = std::make_shared<FrameDecoder>();
        auto dialerHello = std::make_shared<QByteArray>();
        connect(socket, &QTcpSocket::readyRead, socket,
                [&, socket, decoder, dialerHello, ownHello] {
                    decoder->feed(socket->readAll());
                    while (auto frame = decoder->next()) {
                        if (frame->kind == quint8(ControlKind::Hello)) {
                            *dialerHello = frame->payload;
                        } else if (frame->kind == quint8(ControlKind::Proof)) {
                            QVERIFY(proofMatches(computeProof(secret, HandshakeRole::Dialer,
                                                              *dialerHello, ownHello),
                                                 frame->payload));
                            socket->write(encodeFrame(quint8(ControlKind::Proof),
                                                      computeProof(secret, HandshakeRole::Acceptor,
                                                                   *dialerHello, ownHello)));
                            ++handshakes;
                        }
                    }
                });
    });
    LinkSettings settings = testSettings(QStringLiteral("node-a"), secret);
    settings.linksPerPeer = 1;
    settings.heartbeatInterval = 200ms;
    Node a(settings);
    QSignalSpy connected(a.links.get(), &NodeLinks::peerConnected);
    QSignalSpy disconnected(a.links.get(), &NodeLinks::peerDisconnected);
    QElapsedTimer clock;
    clock.start();
    a.links->setPeers({ PeerAddress{ QStringLiteral("node-silent"), QStringLiteral("127.0.0.1"),
                                     fake.serverPort() } });
    QTRY_COMPARE_WITH_TIMEOUT(connected.size(), 1, WaitMs);
    QTRY_COMPARE_WITH_TIMEOUT(disconnected.size(), 1, WaitMs);
    // Not before three silent intervals (600 ms), and the fake never closed its socket.
    QVERIFY2(clock.elapsed() >= 600, qPrintable(QString::number(clock.elapsed())));
    QVERIFY(!accepted.isEmpty());
    // It redials and is accepted again.
    QTRY_VERIFY_WITH_TIMEOUT(handshakes >= 2, WaitMs);
}

QTEST_GUILESS_MAIN(NodeLinksTest)
#include "tst_node_links.moc"
