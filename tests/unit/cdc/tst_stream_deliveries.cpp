// Change deliveries between two nodes over real node links on loopback (server/cdc/
// stream_deliveries): in order and once each; across the owner dropping the peer and adding it
// again (what a partition does), the frames sent meanwhile arrive after the reconnect, before
// the newer ones; a frame too large for a link is skipped instead of stopping every frame after
// it; frames stamped for another process of the receiving node are not passed on.
#include "server/cdc/stream_deliveries.h"
#include "server/cluster/links/node_links.h"

#include <QSignalSpy>
#include <QTest>

#include <memory>

using namespace rt::cdc;
using namespace rt::cluster::links;
using namespace std::chrono_literals;

namespace {

constexpr int WaitMs = 10'000;
constexpr quint64 OwnerIncarnation = 1'700'000'000'001ULL;
constexpr quint64 ReceiverIncarnation = 1'700'000'000'002ULL;
const rt::pubsub::TopicKey Topic("tenant", false, "room");

LinkSettings settingsFor(const QString &nodeId)
{
    LinkSettings settings;
    settings.nodeId = nodeId;
    settings.secret = "test-secret-test-secret-test-secret";
    settings.reconnectInitialDelay = 20ms;
    settings.reconnectMaxDelay = 200ms;
    settings.handshakeTimeout = 2000ms;
    settings.heartbeatInterval = 500ms;
    settings.maxFramePayloadBytes = 64 * 1024;
    return settings;
}

// One node: its links and its deliveries, wired as StreamCoordinator wires them.
struct Node
{
    Node(const QString &id, quint64 incarnation)
        : links(std::make_unique<NodeLinks>(settingsFor(id))),
          deliveries(std::make_unique<StreamDeliveries>(*links, incarnation,
                                                        StreamDeliveries::Settings{}))
    {
        QObject::connect(links.get(), &NodeLinks::peerConnected, deliveries.get(),
                         [this](const QString &peer) { deliveries->peerConnected(peer); });
        QObject::connect(links.get(), &NodeLinks::frameReceived, deliveries.get(),
                         [this](const QString &from, quint8 kind, const QByteArray &payload) {
                             onFrame(from, kind, payload);
                         });
        QVERIFY(links->listen(QHostAddress::LocalHost, 0).ok());
    }
    void onFrame(const QString &from, quint8 kind, const QByteArray &payload)
    {
        if (kind == wire::DeliveryFrameKind) {
            if (auto delivery = deliveries->receive(from, payload)) {
                payloads.append(delivery->payload);
            }
            return;
        }
        const auto control = wire::decodeControl(payload);
        if (control.ok()) {
            if (const auto *ack = std::get_if<wire::DeliveryAck>(&control.value())) {
                deliveries->acknowledged(from, *ack);
            }
        }
    }
    PeerAddress address() const
    {
        return PeerAddress{ links->settings().nodeId, QStringLiteral("127.0.0.1"),
                            links->listeningPort() };
    }
    void send(const QString &to, quint64 incarnation, const QByteArray &payload)
    {
        deliveries->send(to, incarnation, Topic, "postgres_changes", payload, { 1 });
    }

    std::unique_ptr<NodeLinks> links;
    std::unique_ptr<StreamDeliveries> deliveries;
    QList<QByteArray> payloads;
};

QByteArray row(int n)
{
    return "{\"n\":" + QByteArray::number(n) + "}";
}

QList<QByteArray> rows(int from, int to)
{
    QList<QByteArray> out;
    for (int n = from; n < to; ++n) {
        out.append(row(n));
    }
    return out;
}

} // namespace

class TstStreamDeliveries : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void deliveriesArriveOnceInOrderAcrossAnAbsence()
    {
        Node owner(QStringLiteral("owner"), OwnerIncarnation);
        Node receiver(QStringLiteral("receiver"), ReceiverIncarnation);
        owner.links->setPeers({ receiver.address() });
        receiver.links->setPeers({ owner.address() });
        QTRY_VERIFY_WITH_TIMEOUT(owner.links->isConnected(QStringLiteral("receiver")), WaitMs);
        for (int n = 0; n < 50; ++n) {
            owner.send(QStringLiteral("receiver"), ReceiverIncarnation, row(n));
        }
        QTRY_COMPARE_WITH_TIMEOUT(receiver.payloads.size(), 50, WaitMs);
        // The receiver leaves the owner's membership (its pool and queue go) while changes go on.
        owner.links->setPeers({});
        for (int n = 50; n < 120; ++n) {
            owner.send(QStringLiteral("receiver"), ReceiverIncarnation, row(n));
        }
        owner.links->setPeers({ receiver.address() });
        for (int n = 120; n < 150; ++n) {
            owner.send(QStringLiteral("receiver"), ReceiverIncarnation, row(n));
        }
        QTRY_COMPARE_WITH_TIMEOUT(receiver.payloads.size(), 150, WaitMs);
        QCOMPARE(receiver.payloads, rows(0, 150));
    }

    void aFrameNoLinkCarriesIsSkipped()
    {
        Node owner(QStringLiteral("owner"), OwnerIncarnation);
        Node receiver(QStringLiteral("receiver"), ReceiverIncarnation);
        owner.links->setPeers({ receiver.address() });
        receiver.links->setPeers({ owner.address() });
        QTRY_VERIFY_WITH_TIMEOUT(owner.links->isConnected(QStringLiteral("receiver")), WaitMs);
        owner.send(QStringLiteral("receiver"), ReceiverIncarnation, row(1));
        owner.send(QStringLiteral("receiver"), ReceiverIncarnation,
                   "\"" + QByteArray(100 * 1024, 'x') + "\""); // beyond the 64 KiB link limit
        owner.send(QStringLiteral("receiver"), ReceiverIncarnation, row(2));
        QTRY_COMPARE_WITH_TIMEOUT(receiver.payloads.size(), 2, WaitMs);
        QCOMPARE(receiver.payloads, (QList<QByteArray>{ row(1), row(2) }));
    }

    void framesForAnotherProcessAreNotPassedOn()
    {
        Node owner(QStringLiteral("owner"), OwnerIncarnation);
        Node receiver(QStringLiteral("receiver"), ReceiverIncarnation);
        owner.links->setPeers({ receiver.address() });
        receiver.links->setPeers({ owner.address() });
        QTRY_VERIFY_WITH_TIMEOUT(owner.links->isConnected(QStringLiteral("receiver")), WaitMs);
        // Meant for the receiver's predecessor (an earlier start): never delivered here.
        owner.send(QStringLiteral("receiver"), ReceiverIncarnation - 1, row(1));
        owner.send(QStringLiteral("receiver"), ReceiverIncarnation, row(2));
        // A frame for the earlier process after the later one's: dropped at the owner.
        owner.send(QStringLiteral("receiver"), ReceiverIncarnation - 1, row(3));
        owner.send(QStringLiteral("receiver"), ReceiverIncarnation, row(4)); // the sentinel
        QTRY_COMPARE_WITH_TIMEOUT(receiver.payloads.size(), 2, WaitMs);
        QCOMPARE(receiver.payloads, (QList<QByteArray>{ row(2), row(4) }));
    }
};

QTEST_MAIN(TstStreamDeliveries)
#include "tst_stream_deliveries.moc"
