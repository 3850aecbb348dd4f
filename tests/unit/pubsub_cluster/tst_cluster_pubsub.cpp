// ClusterPubSub over real NodeLinks on loopback, four "nodes" in one process (each with its own
// links, LocalPubSub and hub; the test thread plays every node's cluster thread and worker).
// Targeting is asserted on the links' own counters (application frames only: heartbeats and
// handshakes are not counted there) once the interest protocol has settled: a tenant held on
// 1 of 4 nodes costs 1 link frame per broadcast, on 3 nodes 2; unknown peers are flooded within
// the region only; a tenant leaving a node stops its frames; a restarted peer is fully synced;
// Members messages stay local; bytes, event and private flag arrive intact; nothing is
// forwarded twice; counters per peer and tenant; the receiver attaches its own counting;
// malformed frames are counted, not fatal. A node's first join of a tenant is answered once
// every connected peer acknowledged the announcement (a silent peer holds it up for a bounded
// wait only; one that goes away not at all), and a departure noticed by the periodic
// comparison never overtakes an announcement made meanwhile.
#include "server/cluster/links/node_links.h"
#include "server/limits/rate_counter.h"
#include "server/pubsub/cluster_pubsub.h"
#include "server/pubsub/history_exchange.h"
#include "server/pubsub/hub.h"
#include "server/pubsub/local_pubsub.h"
#include "server/pubsub/tenant_homes.h"
#include "server/pubsub/topic_history.h"

#include <QElapsedTimer>
#include <QHostAddress>
#include <QTest>
#include <QThread>

#include <algorithm>
#include <array>
#include <memory>
#include <mutex>
#include <vector>

using namespace rt::pubsub;
using rt::cluster::links::LinkSettings;
using rt::cluster::links::NodeLinks;
using rt::cluster::links::PeerAddress;
using rt::cluster::links::PeerCounters;
using rt::protocol::Vsn;
using namespace std::chrono_literals;

namespace {

constexpr int WaitMs = 10'000;
const QByteArray TenantT = QByteArrayLiteral("tenant-t");
const TopicKey RoomT(TenantT, false, QByteArrayLiteral("room"));
const TopicKey PrivateRoomT(TenantT, true, QByteArrayLiteral("room"));
const QString Local = QStringLiteral("local");

// A joined channel stand-in: records the frames its hub hands it.
class Recorder final : public Subscriber
{
public:
    struct Record
    {
        QByteArray bytes;
        bool isBinary = false;
    };
    void deliver(const OutboundMessage &, const OutboundMessage::Frame &frame) override
    {
        const std::lock_guard lock(m_mutex);
        m_records.append(Record{ frame.bytes, frame.isBinary });
    }
    QList<Record> records() const
    {
        const std::lock_guard lock(m_mutex);
        return m_records;
    }
    qsizetype count() const
    {
        const std::lock_guard lock(m_mutex);
        return m_records.size();
    }

private:
    mutable std::mutex m_mutex;
    QList<Record> m_records;
};

LinkSettings linkSettings(const QString &nodeId)
{
    LinkSettings settings;
    settings.nodeId = nodeId;
    settings.secret = QByteArrayLiteral("fanout-test-secret-fanout-test-secret");
    settings.reconnectInitialDelay = 20ms;
    settings.reconnectMaxDelay = 200ms;
    settings.handshakeTimeout = 2000ms;
    settings.heartbeatInterval = 500ms;
    return settings;
}

// One node: links, in-node fan-out with one hub, and (optionally) the cluster fan-out.
struct Node
{
    Node(const QString &nodeId, const QString &nodeRegion) : id(nodeId), region(nodeRegion)
    {
        local.addHub(&hub);
    }
    ~Node()
    {
        pubsub.reset();
        exchange.reset();
        links.reset();
        for (const auto &[topic, recorder] : subscriptions) {
            hub.unsubscribe(topic, recorder.get());
        }
    }

    bool startLinks(quint16 port = 0)
    {
        links = std::make_unique<NodeLinks>(linkSettings(id));
        QObject::connect(links.get(), &NodeLinks::frameReceived, links.get(),
                         [this](const QString &, quint8 kind, const QByteArray &) {
                             if (kind == cluster_frame::Envelope) {
                                 ++envelopeFramesIn;
                             }
                         });
        return links->listen(QHostAddress::LocalHost, port).ok();
    }
    void startPubSub(std::chrono::milliseconds checkInterval = 1h,
                     std::chrono::milliseconds reachableWait = 5s)
    {
        ClusterPubSubSettings settings;
        settings.nodeId = id;
        settings.region = region;
        settings.interestCheckInterval = checkInterval;
        settings.reachableWait = reachableWait;
        settings.syncRequestMinInterval = 100ms;
        pubsub = std::make_unique<ClusterPubSub>(
                settings, local, *links, [this](const TopicKey &topic, bool isBroadcast) {
                    resolved.append({ topic, isBroadcast });
                    return DeliveryCounting{ counter, isBroadcast, nullptr };
                });
    }
    // Positions and history as a node of a cluster has them (ClusterNode::startHomes), with
    // `homeNode` the home of TenantT.
    void startHistory(const QString &homeNode)
    {
        homes.setSelf(id);
        homes.setHome(TenantT, homeNode);
        exchange = std::make_unique<HistoryExchange>(
                id, *links, history, [](const QByteArray &) { return HistorySettings{}; },
                [this](const TopicKey &, bool isBroadcast) {
                    return DeliveryCounting{ counter, isBroadcast, nullptr };
                });
        pubsub->setHistoryExchange(exchange.get());
        pubsub->setHomes(&homes);
    }
    // At the home: numbers a broadcast of RoomT carrying {"n":n} and sends it out.
    void publishNumbered(int n)
    {
        const OutboundMessagePtr base = OutboundMessage::userBroadcast(
                RoomT, "n", QByteArray("{\"n\":").append(QByteArray::number(n)).append('}'), true,
                {});
        history.append(
                RoomT, HistorySettings{},
                [&base](StreamPosition position) {
                    return OutboundMessage::withPosition(*base, position);
                },
                [this](const OutboundMessagePtr &message) { pubsub->publish(message); });
    }
    PeerAddress address() const
    {
        return PeerAddress{ id, QStringLiteral("127.0.0.1"), links->listeningPort() };
    }
    Recorder *subscribe(const TopicKey &topic, Vsn vsn = Vsn::V2)
    {
        auto recorder = std::make_unique<Recorder>();
        hub.subscribe(topic, recorder.get(), ++lastMemberId, vsn, {});
        subscriptions.emplace_back(topic, std::move(recorder));
        return subscriptions.back().second.get();
    }
    quint64 linkFramesOut() const
    {
        quint64 total = 0;
        const auto counters = links->allCounters();
        for (const auto &peer : counters) {
            total += peer.framesOut;
        }
        return total;
    }
    quint64 linkFramesOutTo(const QString &peer) const { return links->counters(peer).framesOut; }

    QString id;
    QString region;
    Hub hub;
    LocalPubSub local;
    std::unique_ptr<NodeLinks> links;
    std::unique_ptr<ClusterPubSub> pubsub;
    TenantHomes homes;
    TopicHistory history{ qint64{ 1 } << 20 };
    std::unique_ptr<HistoryExchange> exchange;
    std::vector<std::pair<TopicKey, std::unique_ptr<Recorder>>> subscriptions;
    quint64 lastMemberId = 0;
    int envelopeFramesIn = 0;
    QList<std::pair<TopicKey, bool>> resolved;
    std::shared_ptr<rt::limits::RateCounter> counter =
            std::make_shared<rt::limits::RateCounter>(rt::limits::RateCounterOptions{}, 0);
};

} // namespace

class ClusterPubSubTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void tenantOnOneOfFourNodesCostsOneFrame();
    void tenantOnThreeNodesCostsTwoRemoteFrames();
    void unknownPeersAreFloodedWithinTheRegion();
    void unknownPeersOfOtherRegionsAreNotFlooded();
    void tenantLeavingANodeStopsItsFrames();
    void restartedPeerGetsAFullSync();
    void membersMessagesStayLocal();
    void bytesEventAndPrivacyArriveIntact();
    void publishFromAnotherThread();
    void receiverAttachesItsOwnCounting();
    void departedPeerIsForgotten();
    void lostUpdateIsRepairedByTheCheck();
    void malformedFramesAreCountedNotFatal();
    void firstJoinIsAnsweredOnceEveryPeerRoutesTheTenant();
    void silentPeerHoldsAJoinOnlyForTheWait();
    void peerThatGoesAwayEndsTheWait();
    void departureNoticedLaterNeverOvertakesAnArrival();
    void catchUpWaitsUntilTheHomeCanAnswer();

private:
    // Nodes a..d; `withPubSub` false leaves a node with links only (it never answers).
    bool startCluster(const QList<bool> &withPubSub = { true, true, true, true },
                      const QStringList &regions = {});
    void setMembership();
    bool interestSettled(const QList<int> &nodes);
    bool linksIdle();
    qint64 framesInFlight() const;
    Node &node(int i) { return *m_nodes[static_cast<std::size_t>(i)]; }

    std::vector<std::unique_ptr<Node>> m_nodes;
};

void ClusterPubSubTest::init()
{
    m_nodes.clear();
}

void ClusterPubSubTest::cleanup()
{
    m_nodes.clear();
}

bool ClusterPubSubTest::startCluster(const QList<bool> &withPubSub, const QStringList &regions)
{
    const QStringList names{ QStringLiteral("a"), QStringLiteral("b"), QStringLiteral("c"),
                             QStringLiteral("d") };
    for (qsizetype i = 0; i < names.size(); ++i) {
        const QString region = i < regions.size() ? regions[i] : Local;
        m_nodes.push_back(std::make_unique<Node>(names[i], region));
        if (!m_nodes.back()->startLinks()) {
            return false;
        }
        if (withPubSub.value(i, true)) {
            m_nodes.back()->startPubSub();
        }
    }
    setMembership();
    return true;
}

void ClusterPubSubTest::setMembership()
{
    QList<PeerAddress> addresses;
    QList<ClusterPeer> peers;
    for (const auto &n : m_nodes) {
        if (n->links) {
            addresses.append(n->address());
            peers.append(ClusterPeer{ n->id, n->region });
        }
    }
    for (const auto &n : m_nodes) {
        if (n->links) {
            n->links->setPeers(addresses);
        }
        if (n->pubsub) {
            n->pubsub->setPeers(peers);
        }
    }
}

// Every listed node knows the interest of every other listed node.
bool ClusterPubSubTest::interestSettled(const QList<int> &nodes)
{
    return QTest::qWaitFor(
            [&] {
                for (const int i : nodes) {
                    for (const int j : nodes) {
                        if (i != j
                            && node(i).pubsub->interest().state(node(j).id)
                                    != InterestMap::PeerState::Known) {
                            return false;
                        }
                    }
                }
                return true;
            },
            WaitMs);
}

// Nothing in flight between the live nodes: every application frame one of them handed to a
// link (or queued) for another has been received there. The nodes run on this thread and
// answer a frame while receiving it, so a reply it causes is counted before the next check:
// "settled" is a fact about the counters, not a quiet period.
bool ClusterPubSubTest::linksIdle()
{
    return QTest::qWaitFor([this] { return framesInFlight() == 0; }, WaitMs);
}

qint64 ClusterPubSubTest::framesInFlight() const
{
    qint64 inFlight = 0;
    for (const auto &sender : m_nodes) {
        if (!sender || !sender->links) {
            continue;
        }
        const QHash<QString, PeerCounters> peers = sender->links->allCounters();
        for (auto peer = peers.begin(); peer != peers.end(); ++peer) {
            const auto receiver = std::find_if(m_nodes.begin(), m_nodes.end(), [&](const auto &n) {
                return n && n->links && n->id == peer.key();
            });
            if (receiver == m_nodes.end()) {
                continue; // gone: what was in flight to it is lost with it
            }
            const quint64 received = (*receiver)->links->counters(sender->id).framesIn;
            inFlight += static_cast<qint64>(peer->framesOut - received) + peer->queuedFrames;
        }
    }
    return inFlight;
}

void ClusterPubSubTest::tenantOnOneOfFourNodesCostsOneFrame()
{
    QVERIFY(startCluster());
    Node &a = node(0);
    Node &d = node(3);
    Recorder *atA = a.subscribe(RoomT);
    Recorder *atB = node(1).subscribe(RoomT); // joined, but b never announced the tenant
    Recorder *atD = d.subscribe(RoomT);
    d.pubsub->noteLocalTenant(TenantT, true);
    QVERIFY(interestSettled({ 0, 1, 2, 3 }));
    QVERIFY(QTest::qWaitFor([&] { return a.pubsub->interest().tenantsOf(d.id).contains(TenantT); },
                            WaitMs));
    QVERIFY(linksIdle());

    std::array<quint64, 4> before{};
    for (int i = 0; i < 4; ++i) {
        before[static_cast<std::size_t>(i)] = node(i).linkFramesOut();
    }
    const quint64 beforeD = a.linkFramesOutTo(d.id);
    a.pubsub->publish(OutboundMessage::userBroadcast(RoomT, "ev", "{\"n\":1}", true, {}));
    QCOMPARE(atA->count(), 1); // local fan-out, synchronously
    QVERIFY(QTest::qWaitFor([&] { return atD->count() == 1; }, WaitMs));
    QVERIFY(linksIdle());
    QCOMPARE(a.linkFramesOut() - before[0], quint64(1)); // 1 link frame, not 3
    QCOMPARE(a.linkFramesOutTo(d.id) - beforeD, quint64(1));
    QCOMPARE(atB->count(), 0);
    QCOMPARE(node(1).envelopeFramesIn + node(2).envelopeFramesIn, 0);
    QCOMPARE(d.envelopeFramesIn, 1);
    // Nobody sent anything on (no loops).
    for (int i = 1; i < 4; ++i) {
        QCOMPARE(node(i).linkFramesOut(), before[static_cast<std::size_t>(i)]);
    }

    const ClusterPubSubStats stats = a.pubsub->stats();
    QCOMPARE(stats.peers.value(d.id).envelopesOut, quint64(1));
    QCOMPARE(stats.peers.value(d.id).floodedOut, quint64(0));
    QCOMPARE(stats.peers.value(QStringLiteral("b")).envelopesOut, quint64(0));
    QCOMPARE(stats.tenants.value(TenantT).envelopesOut, quint64(1));
    QVERIFY(stats.tenants.value(TenantT).bytesOut > 0);
    QVERIFY(stats.peers.value(d.id).interestKnown);
    QCOMPARE(stats.peers.value(d.id).tenants, qsizetype(1));
    QCOMPARE(stats.published, quint64(1));
    const ClusterPubSubStats atReceiver = d.pubsub->stats();
    QCOMPARE(atReceiver.peers.value(a.id).envelopesIn, quint64(1));
    QCOMPARE(atReceiver.tenants.value(TenantT).envelopesIn, quint64(1));
    QCOMPARE(atReceiver.tenants.value(TenantT).bytesIn, stats.tenants.value(TenantT).bytesOut);
    QCOMPARE(atReceiver.localTenants, qsizetype(1));
}

void ClusterPubSubTest::tenantOnThreeNodesCostsTwoRemoteFrames()
{
    QVERIFY(startCluster());
    std::array<Recorder *, 4> recorders{};
    for (int i = 0; i < 4; ++i) {
        recorders[static_cast<std::size_t>(i)] = node(i).subscribe(RoomT);
    }
    for (int i = 0; i < 3; ++i) {
        node(i).pubsub->noteLocalTenant(TenantT, true); // a, b, c
    }
    QVERIFY(interestSettled({ 0, 1, 2, 3 }));
    Node &a = node(0);
    QVERIFY(QTest::qWaitFor(
            [&] {
                return a.pubsub->interest().tenantsOf(QStringLiteral("b")).contains(TenantT)
                        && a.pubsub->interest().tenantsOf(QStringLiteral("c")).contains(TenantT);
            },
            WaitMs));
    QVERIFY(linksIdle());

    std::array<quint64, 4> before{};
    for (int i = 0; i < 4; ++i) {
        before[static_cast<std::size_t>(i)] = node(i).linkFramesOut();
    }
    a.pubsub->publish(
            OutboundMessage::push(RoomT, "broadcast", "{\"x\":1}", Audience::BroadcastReaders));
    QVERIFY(QTest::qWaitFor(
            [&] { return recorders[1]->count() == 1 && recorders[2]->count() == 1; }, WaitMs));
    QVERIFY(linksIdle());
    QCOMPARE(a.linkFramesOut() - before[0], quint64(2));
    QCOMPARE(recorders[0]->count(), 1);
    QCOMPARE(recorders[3]->count(), 0);
    QCOMPARE(node(3).envelopeFramesIn, 0);
    // b and c delivered locally and sent nothing on.
    for (int i = 1; i < 4; ++i) {
        QCOMPARE(node(i).linkFramesOut(), before[static_cast<std::size_t>(i)]);
    }
}

void ClusterPubSubTest::unknownPeersAreFloodedWithinTheRegion()
{
    // d has links but no fan-out yet (a node still starting): its interest stays unknown.
    QVERIFY(startCluster({ true, true, true, false }));
    Recorder *atD = node(3).subscribe(RoomT);
    QVERIFY(interestSettled({ 0, 1, 2 }));
    QVERIFY(QTest::qWaitFor([&] { return node(0).links->isConnected(QStringLiteral("d")); },
                            WaitMs));
    QVERIFY(linksIdle());
    Node &a = node(0);
    QCOMPARE(a.pubsub->interest().state(QStringLiteral("d")), InterestMap::PeerState::Unknown);

    // Nobody announced the tenant: only the unknown peer gets it.
    const quint64 before = a.linkFramesOut();
    const quint64 beforeD = a.linkFramesOutTo(QStringLiteral("d"));
    a.pubsub->publish(OutboundMessage::userBroadcast(RoomT, "ev", "{}", true, {}));
    QVERIFY(QTest::qWaitFor([&] { return node(3).envelopeFramesIn == 1; }, WaitMs));
    QVERIFY(linksIdle());
    QCOMPARE(a.linkFramesOut() - before, quint64(1));
    QCOMPARE(a.linkFramesOutTo(QStringLiteral("d")) - beforeD, quint64(1));
    QCOMPARE(a.pubsub->stats().peers.value(QStringLiteral("d")).floodedOut, quint64(1));
    QCOMPARE(atD->count(), 0); // no fan-out on d yet: the frame was not understood

    // d starts its fan-out: it syncs, and the flood stops.
    node(3).startPubSub();
    setMembership();
    QVERIFY(interestSettled({ 0, 1, 2, 3 }));
    QVERIFY(linksIdle());
    const quint64 after = a.linkFramesOut();
    a.pubsub->publish(OutboundMessage::userBroadcast(RoomT, "ev", "{}", true, {}));
    QVERIFY(linksIdle());
    QCOMPARE(a.linkFramesOut(), after);
    QCOMPARE(node(3).envelopeFramesIn, 1);
}

void ClusterPubSubTest::unknownPeersOfOtherRegionsAreNotFlooded()
{
    // d is in another region and not synced: the region flood does not reach it.
    QVERIFY(startCluster({ true, true, true, false },
                         { Local, Local, Local, QStringLiteral("far") }));
    QVERIFY(interestSettled({ 0, 1, 2 }));
    QVERIFY(QTest::qWaitFor([&] { return node(0).links->isConnected(QStringLiteral("d")); },
                            WaitMs));
    QVERIFY(linksIdle());
    Node &a = node(0);
    QCOMPARE(a.pubsub->interest().state(QStringLiteral("d")), InterestMap::PeerState::Unknown);
    const quint64 before = a.linkFramesOut();
    a.pubsub->publish(OutboundMessage::userBroadcast(RoomT, "ev", "{}", true, {}));
    QVERIFY(linksIdle());
    QCOMPARE(a.linkFramesOut(), before);
    QCOMPARE(node(3).envelopeFramesIn, 0);

    // Once d knows its part, a tenant it holds reaches it across regions.
    node(3).startPubSub();
    setMembership();
    node(3).pubsub->noteLocalTenant(TenantT, true);
    Recorder *atD = node(3).subscribe(RoomT);
    QVERIFY(QTest::qWaitFor(
            [&] { return a.pubsub->interest().tenantsOf(QStringLiteral("d")).contains(TenantT); },
            WaitMs));
    a.pubsub->publish(OutboundMessage::userBroadcast(RoomT, "ev", "{}", true, {}));
    QVERIFY(QTest::qWaitFor([&] { return atD->count() == 1; }, WaitMs));
}

void ClusterPubSubTest::tenantLeavingANodeStopsItsFrames()
{
    QVERIFY(startCluster());
    Node &a = node(0);
    Node &c = node(2);
    Recorder *atC = c.subscribe(RoomT);
    c.pubsub->noteLocalTenant(TenantT, true);
    QVERIFY(interestSettled({ 0, 1, 2, 3 }));
    QVERIFY(QTest::qWaitFor([&] { return a.pubsub->interest().tenantsOf(c.id).contains(TenantT); },
                            WaitMs));
    a.pubsub->publish(OutboundMessage::userBroadcast(RoomT, "ev", "{}", true, {}));
    QVERIFY(QTest::qWaitFor([&] { return atC->count() == 1; }, WaitMs));

    c.pubsub->noteLocalTenant(TenantT, false); // its last socket left
    QVERIFY(QTest::qWaitFor([&] { return !a.pubsub->interest().tenantsOf(c.id).contains(TenantT); },
                            WaitMs));
    QCOMPARE(a.pubsub->interest().state(c.id),
             InterestMap::PeerState::Known); // an update, no resync
    QVERIFY(linksIdle());
    const quint64 before = a.linkFramesOut();
    a.pubsub->publish(OutboundMessage::userBroadcast(RoomT, "ev", "{}", true, {}));
    QVERIFY(linksIdle());
    QCOMPARE(a.linkFramesOut(), before);
    QCOMPARE(atC->count(), 1);
    QCOMPARE(c.envelopeFramesIn, 1);
}

void ClusterPubSubTest::restartedPeerGetsAFullSync()
{
    QVERIFY(startCluster());
    Node &a = node(0);
    a.pubsub->noteLocalTenant(TenantT, true);
    a.pubsub->noteLocalTenant("tenant-u", true);
    QVERIFY(interestSettled({ 0, 1, 2, 3 }));
    QVERIFY(QTest::qWaitFor([&] { return node(1).pubsub->interest().tenantsOf(a.id).size() == 2; },
                            WaitMs));

    // b dies and comes back on the same port: a new run, knowing nothing.
    const quint16 port = node(1).links->listeningPort();
    m_nodes[1] = std::make_unique<Node>(QStringLiteral("b"), Local);
    Node &b = node(1);
    QVERIFY(b.startLinks(port));
    b.startPubSub();
    Recorder *atA = a.subscribe(TopicKey("tenant-u", false, "lobby"));
    b.pubsub->noteLocalTenant("tenant-v", true);
    setMembership();
    QVERIFY(interestSettled({ 0, 1, 2, 3 }));
    // a's full sync reached the new b, and b's (new epoch) reached a.
    QVERIFY(QTest::qWaitFor(
            [&] {
                return b.pubsub->interest().tenantsOf(a.id)
                        == QSet<QByteArray>{ TenantT, QByteArrayLiteral("tenant-u") };
            },
            WaitMs));
    QVERIFY(QTest::qWaitFor(
            [&] {
                return a.pubsub->interest().tenantsOf(b.id)
                        == QSet<QByteArray>{ QByteArrayLiteral("tenant-v") };
            },
            WaitMs));
    // And broadcasts flow from the new b to a.
    b.pubsub->publish(OutboundMessage::userBroadcast(TopicKey("tenant-u", false, "lobby"), "ev",
                                                     "{}", true, {}));
    QVERIFY(QTest::qWaitFor([&] { return atA->count() == 1; }, WaitMs));
}

void ClusterPubSubTest::membersMessagesStayLocal()
{
    QVERIFY(startCluster());
    for (int i = 0; i < 4; ++i) {
        node(i).pubsub->noteLocalTenant(TenantT, true);
    }
    Node &a = node(0);
    Recorder *first = a.subscribe(RoomT); // member 1
    Recorder *second = a.subscribe(RoomT); // member 2
    Recorder *atB = node(1).subscribe(RoomT); // member 1 on b: a different member
    QVERIFY(interestSettled({ 0, 1, 2, 3 }));
    QVERIFY(QTest::qWaitFor(
            [&] { return a.pubsub->interest().tenantsOf(QStringLiteral("d")).contains(TenantT); },
            WaitMs));
    QVERIFY(linksIdle());
    const quint64 before = a.linkFramesOut();
    a.pubsub->publish(OutboundMessage::pushTo(RoomT, "postgres_changes", "{\"ids\":[1]}", { 1 }));
    QCOMPARE(first->count(), 1);
    QCOMPARE(second->count(), 0);
    QVERIFY(linksIdle());
    QCOMPARE(a.linkFramesOut(), before);
    QCOMPARE(atB->count(), 0);
    QCOMPARE(a.pubsub->stats().keptLocal, quint64(1));
}

void ClusterPubSubTest::bytesEventAndPrivacyArriveIntact()
{
    QVERIFY(startCluster());
    Node &a = node(0);
    Node &d = node(3);
    d.pubsub->noteLocalTenant(TenantT, true);
    Recorder *aV1 = a.subscribe(PrivateRoomT, Vsn::V1);
    Recorder *aV2 = a.subscribe(PrivateRoomT, Vsn::V2);
    Recorder *dV1 = d.subscribe(PrivateRoomT, Vsn::V1);
    Recorder *dV2 = d.subscribe(PrivateRoomT, Vsn::V2);
    Recorder *dPublic = d.subscribe(RoomT, Vsn::V2);
    QVERIFY(interestSettled({ 0, 1, 2, 3 }));
    QVERIFY(QTest::qWaitFor([&] { return a.pubsub->interest().tenantsOf(d.id).contains(TenantT); },
                            WaitMs));

    QByteArray binary;
    for (int i = 0; i < 1024; ++i) {
        binary.append(static_cast<char>(i * 7));
    }
    const QList<OutboundMessagePtr> messages{
        OutboundMessage::userBroadcast(PrivateRoomT, "json-event", R"({"text":"héllo","n":[1,2]})",
                                       true, R"({"id":"7f3a"})"),
        OutboundMessage::userBroadcast(PrivateRoomT, "binary-event", binary, false, {}),
        OutboundMessage::push(PrivateRoomT, "broadcast",
                              R"({"type":"broadcast","event":"e","payload":{"k":"v"}})",
                              Audience::BroadcastReaders),
    };
    for (const OutboundMessagePtr &message : messages) {
        a.pubsub->publish(message);
    }
    // V1 gets no frame for the raw binary broadcast.
    QVERIFY(QTest::qWaitFor([&] { return dV2->count() == 3 && dV1->count() == 2; }, WaitMs));
    QCOMPARE(aV2->count(), 3);
    QCOMPARE(aV1->count(), 2);
    // Byte for byte what the sending node's own members got (same topic, event, payload,
    // metadata, binary-ness), in publication order (one topic, one ordering key).
    const auto sent = aV2->records();
    const auto received = dV2->records();
    for (qsizetype i = 0; i < sent.size(); ++i) {
        QCOMPARE(received[i].bytes, sent[i].bytes);
        QCOMPARE(received[i].isBinary, sent[i].isBinary);
    }
    QVERIFY(received[1].bytes.contains(binary));
    QVERIFY(received[1].bytes.contains("binary-event"));
    QVERIFY(received[0].bytes.contains("7f3a"));
    const auto sentV1 = aV1->records();
    const auto receivedV1 = dV1->records();
    for (qsizetype i = 0; i < sentV1.size(); ++i) {
        QCOMPARE(receivedV1[i].bytes, sentV1[i].bytes);
    }
    // The private flag was kept: the public channel of the same name saw nothing.
    QVERIFY(linksIdle());
    QCOMPARE(dPublic->count(), 0);
}

void ClusterPubSubTest::publishFromAnotherThread()
{
    QVERIFY(startCluster());
    Node &b = node(1);
    b.pubsub->noteLocalTenant(TenantT, true);
    Recorder *atB = b.subscribe(RoomT);
    QVERIFY(interestSettled({ 0, 1, 2, 3 }));
    QVERIFY(QTest::qWaitFor(
            [&] { return node(0).pubsub->interest().tenantsOf(b.id).contains(TenantT); }, WaitMs));
    constexpr int Messages = 200;
    ClusterPubSub *pubsub = node(0).pubsub.get();
    std::unique_ptr<QThread> publisher(QThread::create([pubsub] {
        for (int i = 0; i < Messages; ++i) {
            pubsub->publish(
                    OutboundMessage::userBroadcast(RoomT, "ev", QByteArray::number(i), true, {}));
        }
    }));
    publisher->start();
    QVERIFY(publisher->wait(WaitMs));
    QVERIFY(QTest::qWaitFor([&] { return atB->count() == Messages; }, WaitMs));
    // In order (one topic).
    const auto records = atB->records();
    for (int i = 0; i < Messages; ++i) {
        QVERIFY(records[i].bytes.endsWith(QByteArray::number(i)));
    }
}

void ClusterPubSubTest::receiverAttachesItsOwnCounting()
{
    QVERIFY(startCluster());
    Node &a = node(0);
    Node &c = node(2);
    c.pubsub->noteLocalTenant(TenantT, true);
    c.subscribe(RoomT);
    c.subscribe(RoomT);
    QVERIFY(interestSettled({ 0, 1, 2, 3 }));
    QVERIFY(QTest::qWaitFor([&] { return a.pubsub->interest().tenantsOf(c.id).contains(TenantT); },
                            WaitMs));
    rt::limits::RateCounterOptions options;
    const DeliveryCounting senders{ std::make_shared<rt::limits::RateCounter>(options, 0), true,
                                    nullptr };
    a.pubsub->publish(OutboundMessage::userBroadcast(RoomT, "ev", "{}", true, {}, 0, senders));
    a.pubsub->publish(
            OutboundMessage::push(RoomT, "presence_diff", "{}", Audience::PresenceReaders));
    QVERIFY(QTest::qWaitFor([&] { return c.counter->pendingCount() == 4; }, WaitMs));
    QCOMPARE(c.resolved.size(), 2);
    QCOMPARE(c.resolved[0].first, RoomT);
    QCOMPARE(c.resolved[0].second, true); // the sender counted it as a broadcast event
    QCOMPARE(c.resolved[1].second, false);
    QCOMPARE(senders.counter->pendingCount(), 0); // nothing delivered on a
}

void ClusterPubSubTest::departedPeerIsForgotten()
{
    QVERIFY(startCluster());
    Node &a = node(0);
    node(3).pubsub->noteLocalTenant(TenantT, true);
    QVERIFY(interestSettled({ 0, 1, 2, 3 }));
    QVERIFY(QTest::qWaitFor(
            [&] { return a.pubsub->interest().tenantsOf(QStringLiteral("d")).contains(TenantT); },
            WaitMs));
    // d leaves the membership (its lease expired): forgotten, nothing sent to it any more.
    m_nodes[3].reset();
    m_nodes.pop_back();
    setMembership();
    QVERIFY(!a.pubsub->interest().state(QStringLiteral("d")));
    QVERIFY(!a.pubsub->stats().peers.contains(QStringLiteral("d")));
    QVERIFY(linksIdle());
    const quint64 before = a.linkFramesOut();
    a.pubsub->publish(OutboundMessage::userBroadcast(RoomT, "ev", "{}", true, {}));
    QVERIFY(linksIdle());
    QCOMPARE(a.linkFramesOut(), before);
    QCOMPARE(a.pubsub->stats().peers.size(), 2);
}

void ClusterPubSubTest::lostUpdateIsRepairedByTheCheck()
{
    // a checks its numbering with its peers every 200 ms.
    m_nodes.push_back(std::make_unique<Node>(QStringLiteral("a"), Local));
    m_nodes.push_back(std::make_unique<Node>(QStringLiteral("b"), Local));
    QVERIFY(node(0).startLinks() && node(1).startLinks());
    node(0).startPubSub(200ms);
    node(1).startPubSub();
    setMembership();
    QVERIFY(interestSettled({ 0, 1 }));
    Node &a = node(0);
    Node &b = node(1);
    // b's fan-out misses a's next update (as if the link carrying it broke): b still holds a's
    // interest as Known, one number behind.
    const quint64 received = b.links->counters(a.id).framesIn;
    b.links->blockSignals(true);
    a.pubsub->noteLocalTenant(TenantT, true);
    QVERIFY(QTest::qWaitFor([&] { return b.links->counters(a.id).framesIn > received; }, WaitMs));
    b.links->blockSignals(false);
    QCOMPARE(b.pubsub->interest().state(a.id), InterestMap::PeerState::Known);
    QVERIFY(!b.pubsub->interest().tenantsOf(a.id).contains(TenantT));
    // a's next check reveals the gap; b asks for a sync and gets the tenant.
    QVERIFY(QTest::qWaitFor([&] { return b.pubsub->interest().tenantsOf(a.id).contains(TenantT); },
                            WaitMs));
    QCOMPARE(b.pubsub->interest().state(a.id), InterestMap::PeerState::Known);
}

void ClusterPubSubTest::malformedFramesAreCountedNotFatal()
{
    QVERIFY(startCluster());
    Node &a = node(0);
    Node &b = node(1);
    Recorder *atA = a.subscribe(RoomT);
    a.pubsub->noteLocalTenant(TenantT, true);
    QVERIFY(interestSettled({ 0, 1, 2, 3 }));
    QVERIFY(QTest::qWaitFor([&] { return b.pubsub->interest().tenantsOf(a.id).contains(TenantT); },
                            WaitMs));
    // b's links carry garbage of every kind of ours to a.
    QVERIFY(b.links->send(a.id, cluster_frame::Envelope, QByteArrayLiteral("\x01garbage")));
    QVERIFY(b.links->send(a.id, cluster_frame::InterestUpdate, QByteArrayLiteral("\x01\x02")));
    QVERIFY(b.links->send(a.id, cluster_frame::InterestSyncRequest, QByteArrayLiteral("xx")));
    QVERIFY(b.links->send(a.id, cluster_frame::InterestSync, QByteArray()));
    QVERIFY(QTest::qWaitFor([&] { return a.pubsub->stats().badFrames == 4; }, WaitMs));
    // Still working.
    b.pubsub->publish(OutboundMessage::userBroadcast(RoomT, "ev", "{}", true, {}));
    QVERIFY(QTest::qWaitFor([&] { return atA->count() == 1; }, WaitMs));
    QCOMPARE(a.pubsub->interest().state(b.id), InterestMap::PeerState::Known);
}

void ClusterPubSubTest::firstJoinIsAnsweredOnceEveryPeerRoutesTheTenant()
{
    QVERIFY(startCluster());
    QVERIFY(interestSettled({ 0, 1, 2, 3 }));
    Node &b = node(1);
    QObject receiver; // the joining worker's long-lived object (the test thread's)
    bool reached = false;
    bool everyPeerRoutedItThen = false;
    QVERIFY(!b.pubsub->awaitTenantReachable(TenantT, &receiver, [&] {
        reached = true;
        everyPeerRoutedItThen = true;
        for (const int i : { 0, 2, 3 }) {
            everyPeerRoutedItThen = everyPeerRoutedItThen
                    && node(i).pubsub->interest().tenantsOf(b.id).contains(TenantT);
        }
    }));
    QVERIFY(!reached); // never synchronously: the answer comes through receiver's event loop
    QVERIFY(QTest::qWaitFor([&] { return reached; }, WaitMs));
    QVERIFY(everyPeerRoutedItThen);
    QCOMPARE(b.pubsub->stats().reachableWaits, 1U);
    QCOMPARE(b.pubsub->stats().reachableTimeouts, 0U);
    QVERIFY(b.pubsub->localInterest().tenants().contains(TenantT));

    // The next join of the tenant goes ahead at once, and a broadcast right after reaches b.
    QVERIFY(b.pubsub->awaitTenantReachable(TenantT, &receiver, [] { QFAIL("not called"); }));
    Recorder *atB = b.subscribe(RoomT);
    node(0).pubsub->publish(OutboundMessage::userBroadcast(RoomT, "ev", "{}", true, {}));
    QVERIFY(QTest::qWaitFor([&] { return atB->count() == 1; }, WaitMs));
    QCOMPARE(b.pubsub->stats().reachableWaits, 1U);
}

void ClusterPubSubTest::silentPeerHoldsAJoinOnlyForTheWait()
{
    // d has links but no fan-out: it never acknowledges.
    m_nodes.clear();
    const QStringList names{ QStringLiteral("a"), QStringLiteral("b"), QStringLiteral("d") };
    for (const QString &name : names) {
        m_nodes.push_back(std::make_unique<Node>(name, Local));
        QVERIFY(m_nodes.back()->startLinks());
    }
    node(0).startPubSub(1h, 300ms);
    node(1).startPubSub();
    setMembership();
    QVERIFY(interestSettled({ 0, 1 }));
    Node &a = node(0);
    QVERIFY(QTest::qWaitFor([&] { return a.links->isConnected(QStringLiteral("d")); }, WaitMs));

    QObject receiver;
    QElapsedTimer waited;
    waited.start();
    qint64 answeredAfterMs = -1;
    QVERIFY(!a.pubsub->awaitTenantReachable(TenantT, &receiver,
                                            [&] { answeredAfterMs = waited.elapsed(); }));
    QVERIFY(QTest::qWaitFor([&] { return answeredAfterMs >= 0; }, WaitMs));
    QVERIFY2(answeredAfterMs >= 250, qPrintable(QString::number(answeredAfterMs)));
    QVERIFY2(answeredAfterMs < 3000, qPrintable(QString::number(answeredAfterMs)));
    QCOMPARE(a.pubsub->stats().reachableTimeouts, 1U);
    // b did confirm, and the next join does not wait for d again.
    QVERIFY(node(1).pubsub->interest().tenantsOf(a.id).contains(TenantT));
    QVERIFY(a.pubsub->awaitTenantReachable(TenantT, &receiver, [] { QFAIL("not called"); }));
}

void ClusterPubSubTest::peerThatGoesAwayEndsTheWait()
{
    QVERIFY(startCluster({ true, true, true, false })); // d never acknowledges
    QVERIFY(interestSettled({ 0, 1, 2 }));
    Node &a = node(0);
    QVERIFY(QTest::qWaitFor([&] { return a.links->isConnected(QStringLiteral("d")); }, WaitMs));
    QObject receiver;
    QElapsedTimer waited;
    waited.start();
    qint64 answeredAfterMs = -1;
    QVERIFY(!a.pubsub->awaitTenantReachable(TenantT, &receiver,
                                            [&] { answeredAfterMs = waited.elapsed(); }));
    // Still waiting for d (the wait is 5 s) once b and c have confirmed: their answers are in.
    QVERIFY(linksIdle());
    QCOMPARE(answeredAfterMs, -1);
    node(3).links.reset(); // d dies: its links drop
    QVERIFY(QTest::qWaitFor([&] { return answeredAfterMs >= 0; }, WaitMs));
    QVERIFY2(answeredAfterMs < 4000, qPrintable(QString::number(answeredAfterMs)));
    QCOMPARE(a.pubsub->stats().reachableTimeouts, 0U);
}

void ClusterPubSubTest::departureNoticedLaterNeverOvertakesAnArrival()
{
    QVERIFY(startCluster());
    QVERIFY(interestSettled({ 0, 1, 2, 3 }));
    Node &a = node(0);
    Node &b = node(1);
    QObject receiver;
    bool reached = false;
    // A join counted its user and announced the tenant; before the cluster thread ran, the
    // periodic comparison reads the users: it must see the announcement first.
    QVERIFY(!b.pubsub->awaitTenantReachable(TenantT, &receiver, [&] { reached = true; }));
    b.pubsub->reconcileLocalTenants([] { return QSet<QByteArray>{ TenantT }; });
    QVERIFY(b.pubsub->localInterest().tenants().contains(TenantT));
    QVERIFY(QTest::qWaitFor([&] { return reached; }, WaitMs));
    QVERIFY(a.pubsub->interest().tenantsOf(b.id).contains(TenantT));

    // The last user left: announced gone, and a later first join waits for the peers again.
    b.pubsub->reconcileLocalTenants([] { return QSet<QByteArray>{}; });
    QVERIFY(!b.pubsub->localInterest().tenants().contains(TenantT));
    QVERIFY(QTest::qWaitFor([&] { return !a.pubsub->interest().tenantsOf(b.id).contains(TenantT); },
                            WaitMs));
    reached = false;
    QVERIFY(!b.pubsub->awaitTenantReachable(TenantT, &receiver, [&] { reached = true; }));
    QVERIFY(QTest::qWaitFor([&] { return reached; }, WaitMs));
    QVERIFY(a.pubsub->interest().tenantsOf(b.id).contains(TenantT));
    QCOMPARE(b.pubsub->stats().reachableWaits, 2U);
}

// After a partition the links come back one way at a time: here b's link to the home a is up
// again while a, not yet seeing b as a member, has no link back. What a numbered meanwhile
// reaches b's subscriber once a can answer, in order, after what b had.
void ClusterPubSubTest::catchUpWaitsUntilTheHomeCanAnswer()
{
    m_nodes.push_back(std::make_unique<Node>(QStringLiteral("a"), Local));
    m_nodes.push_back(std::make_unique<Node>(QStringLiteral("b"), Local));
    for (const auto &n : m_nodes) {
        QVERIFY(n->startLinks());
        n->startPubSub();
        n->startHistory(QStringLiteral("a"));
    }
    Node &a = node(0);
    Node &b = node(1);
    Recorder *atB = b.subscribe(RoomT);
    b.pubsub->noteLocalTenant(TenantT, true);
    setMembership();
    QVERIFY(interestSettled({ 0, 1 }));
    QVERIFY(QTest::qWaitFor([&] { return a.pubsub->interest().tenantsOf(b.id).contains(TenantT); },
                            WaitMs));
    a.publishNumbered(1);
    QVERIFY(QTest::qWaitFor([&] { return atB->count() == 1; }, WaitMs));

    // a drops b (its lease expired) and numbers on; b still counts a as a member.
    a.links->setPeers({});
    a.pubsub->setPeers({});
    for (int n = 2; n <= 4; ++n) {
        a.publishNumbered(n);
    }
    // b's link to a comes back first: a hears b, but cannot send it anything.
    b.links->setPeers({});
    const quint64 heardBefore = a.links->counters(b.id).framesIn;
    b.links->setPeers({ a.address() });
    QVERIFY(QTest::qWaitFor([&] { return b.links->isConnected(a.id); }, WaitMs));
    // What b's new link sent (its sync and its question for a sync) has reached a (at least as
    // many frames as it sent; the old link's last ones may arrive as well).
    QVERIFY(QTest::qWaitFor(
            [&] {
                const PeerCounters out = b.links->counters(a.id);
                return out.framesOut > 0 && out.queuedFrames == 0
                        && a.links->counters(b.id).framesIn >= heardBefore + out.framesOut;
            },
            WaitMs));
    QCOMPARE(atB->count(), 1);

    // a sees b again and opens its link back: the catch-up fills what b missed.
    setMembership();
    QVERIFY(QTest::qWaitFor([&] { return atB->count() == 4; }, WaitMs));
    const QList<Recorder::Record> records = atB->records();
    const auto field = [](const char *name, int n) {
        return QByteArray("\"").append(name).append("\":").append(QByteArray::number(n));
    };
    for (int n = 1; n <= 4; ++n) {
        const QByteArray &bytes = records[n - 1].bytes;
        QVERIFY2(bytes.contains(field("n", n)), bytes.constData());
        QVERIFY2(bytes.contains(field("offset", n)), bytes.constData());
    }
    // And the live flow goes on after it.
    a.publishNumbered(5);
    QVERIFY(QTest::qWaitFor([&] { return atB->count() == 5; }, WaitMs));
}

QTEST_GUILESS_MAIN(ClusterPubSubTest)
#include "tst_cluster_pubsub.moc"
