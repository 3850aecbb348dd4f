// Presence across three nodes in one process. Each node has its own PresenceStore, LocalPubSub
// and hub on the main thread (as in the server) and its NodeLinks + PresenceReplicator on a
// shared "cluster thread", linked over loopback. The tests observe what each node's clients
// would receive (presence_diff frames delivered by the hub) and what presence_state answers:
// tracks, untracks and meta updates propagate; a late node gets a full sync without duplicate
// joins; a dead node's presences leave (membership or link grace); a link flap neither
// duplicates nor loses presences; a lost or forged change is repaired by a resync; order per
// topic holds.
#include "server/cluster/links/node_links.h"
#include "server/presence/presence_replicator.h"
#include "server/presence/presence_store.h"
#include "server/presence/presence_wire.h"
#include "server/pubsub/hub.h"
#include "server/pubsub/local_pubsub.h"
#include "tests/support/threads/run_on.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSet>
#include <QTest>
#include <QThread>

#include <algorithm>
#include <memory>
#include <mutex>

using namespace std::chrono_literals;
using rt::cluster::links::LinkSettings;
using rt::cluster::links::NodeLinks;
using rt::cluster::links::PeerAddress;
using rt::presence::PresenceChange;
using rt::presence::PresenceRecord;
using rt::presence::PresenceReplicator;
using rt::presence::PresenceStore;
using rt::presence::ReplicatorSettings;
using rt::protocol::Vsn;
using rt::pubsub::Hub;
using rt::pubsub::LocalPubSub;
using rt::pubsub::MemberRights;
using rt::pubsub::OutboundMessage;
using rt::pubsub::Subscriber;
using rt::pubsub::TopicKey;

namespace {

constexpr int WaitMs = 10'000;

const TopicKey Room("tenant-a", false, "room");
const TopicKey Lobby("tenant-a", false, "lobby");

QJsonObject object(QByteArrayView json)
{
    return QJsonDocument::fromJson(json.toByteArray()).object();
}

QJsonObject meta(const char *json)
{
    return object(json);
}

// A channel stand-in on one topic: the presence_diff payloads its hub delivered.
class DiffRecorder final : public Subscriber
{
public:
    void deliver(const OutboundMessage &, const OutboundMessage::Frame &frame) override
    {
        const std::lock_guard lock(m_mutex);
        m_diffs.append(object(frame.bytes).value(QLatin1String("payload")).toObject());
    }
    QList<QJsonObject> diffs() const
    {
        const std::lock_guard lock(m_mutex);
        return m_diffs;
    }
    void clear()
    {
        const std::lock_guard lock(m_mutex);
        m_diffs.clear();
    }

private:
    mutable std::mutex m_mutex;
    QList<QJsonObject> m_diffs; // guarded by m_mutex
};

// The metas of one side ("joins"/"leaves") of a diff, or of a presence_state, with their key.
QList<std::pair<QString, QJsonObject>> metas(const QJsonObject &grouped)
{
    QList<std::pair<QString, QJsonObject>> all;
    for (auto it = grouped.begin(); it != grouped.end(); ++it) {
        const QJsonArray list = it.value().toObject().value(QLatin1String("metas")).toArray();
        for (const QJsonValue &value : list) {
            all.append({ it.key(), value.toObject() });
        }
    }
    return all;
}

// How often a meta with phx_ref `ref` appears on one side over all diffs.
int countRef(const QList<QJsonObject> &diffs, const char *side, const QString &ref)
{
    int count = 0;
    for (const QJsonObject &diff : diffs) {
        for (const auto &[key, value] : metas(diff.value(QLatin1String(side)).toObject())) {
            if (value.value(QLatin1String("phx_ref")).toString() == ref) {
                ++count;
            }
        }
    }
    return count;
}

int countSide(const QList<QJsonObject> &diffs, const char *side)
{
    int count = 0;
    for (const QJsonObject &diff : diffs) {
        count += static_cast<int>(metas(diff.value(QLatin1String(side)).toObject()).size());
    }
    return count;
}

// A presence_state independent of tracking order: "key|meta-json" strings, sorted.
QStringList normalized(const QByteArray &stateJson)
{
    QStringList entries;
    for (const auto &[key, value] : metas(object(stateJson))) {
        entries.append(key + QLatin1Char('|')
                       + QString::fromUtf8(QJsonDocument(value).toJson(QJsonDocument::Compact)));
    }
    entries.sort();
    return entries;
}

// The phx_ref of the only meta of `key` in a presence_state, or "".
QString refOf(const QByteArray &stateJson, const QString &key)
{
    const QJsonArray list =
            object(stateJson).value(key).toObject().value(QLatin1String("metas")).toArray();
    return list.size() == 1 ? list.at(0).toObject().value(QLatin1String("phx_ref")).toString()
                            : QString();
}

// Runs `fn` on `context`'s thread and waits (test set-up only).
template <typename Fn>
void onThread(QObject *context, Fn fn)
{
    QVERIFY(rt::test::runOn(context, std::move(fn)));
}

// One node: the main-thread half (store, pubsub, hub, observers) and the cluster-thread half
// (links and replicator), which can be stopped and restarted.
struct Node
{
    explicit Node(QString nodeId, QObject *clusterContext)
        : id(std::move(nodeId)),
          context(clusterContext),
          store(std::make_unique<PresenceStore>(pubsub))
    {
        pubsub.addHub(&hub);
        hub.subscribe(Room, &room, 1'000'000, Vsn::V1, MemberRights{ true, true });
        hub.subscribe(Lobby, &lobby, 1'000'001, Vsn::V1, MemberRights{ true, true });
    }
    ~Node()
    {
        stopLinks();
        hub.unsubscribe(Room, &room);
        hub.unsubscribe(Lobby, &lobby);
        store.reset();
    }

    void startLinks(const ReplicatorSettings &settings)
    {
        LinkSettings linkSettings;
        linkSettings.nodeId = id;
        linkSettings.secret = "presence-test-secret-presence-test-secret";
        linkSettings.reconnectInitialDelay = 20ms;
        linkSettings.reconnectMaxDelay = 200ms;
        linkSettings.handshakeTimeout = 2000ms;
        linkSettings.heartbeatInterval = 500ms;
        onThread(context, [&] {
            links = new NodeLinks(linkSettings);
            const auto bound = links->listen(QHostAddress::LocalHost, port);
            port = bound.ok() ? *bound : 0;
            replicator = new PresenceReplicator(*links, settings);
        });
        rt::presence::connectReplication(*store, *replicator);
    }
    void stopLinks()
    {
        if (!links) {
            return;
        }
        onThread(context, [&] {
            delete replicator;
            delete links;
        });
        replicator = nullptr;
        links = nullptr;
    }
    PeerAddress address() const { return PeerAddress{ id, QStringLiteral("127.0.0.1"), port }; }
    void setPeers(const QList<PeerAddress> &peers)
    {
        onThread(context, [&] { links->setPeers(peers); });
    }
    bool connectedTo(int count) const
    {
        int connected = 0;
        onThread(context, [&] { connected = static_cast<int>(links->connectedPeers().size()); });
        return connected == count;
    }
    QStringList synced() const
    {
        QStringList origins;
        onThread(context, [&] { origins = replicator->syncedOrigins(); });
        return origins;
    }
    QByteArray state(const TopicKey &topic = Room) const { return store->stateJson(topic); }
    quint64 markersFrom(const Node &origin) const
    {
        quint64 count = 0;
        onThread(context, [&] { count = replicator->markersReceivedFrom(origin.id); });
        return count;
    }

    QString id;
    QObject *context;
    LocalPubSub pubsub;
    Hub hub;
    std::unique_ptr<PresenceStore> store;
    DiffRecorder room;
    DiffRecorder lobby;
    NodeLinks *links = nullptr; // cluster thread
    PresenceReplicator *replicator = nullptr; // cluster thread
    quint16 port = 0; // kept across restarts, so peers redial the same address
};

} // namespace

class PresenceClusterTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void init();
    void cleanup();

    void trackAppearsOnEveryNode();
    void untrackPropagates();
    void metaUpdatePropagatesWithPreviousRef();
    void lateNodeGetsAFullSyncWithoutDuplicates();
    void deadNodePresencesLeaveOnMembershipChange();
    void unreachableNodePresencesLeaveAfterGrace();
    void linkFlapNeitherDuplicatesNorLoses();
    void forgedChangeIsRepairedByMarker();
    void gapTriggersResync();
    void orderPerTopicIsKept();

private:
    Node &node(int index) { return *m_nodes[static_cast<size_t>(index)]; }
    void startNodes(int count, const ReplicatorSettings &settings);
    void linkAll(const QList<Node *> &nodes);
    bool waitSynced(const QList<Node *> &nodes);
    bool waitMarkerRounds(Node &at, const QList<Node *> &origins, int rounds);

    QThread m_clusterThread;
    QObject *m_clusterContext = nullptr;
    std::vector<std::unique_ptr<Node>> m_nodes;
    ReplicatorSettings m_settings;
};

void PresenceClusterTest::initTestCase()
{
    m_clusterThread.setObjectName(QStringLiteral("cluster"));
    rt::watchFinish(&m_clusterThread);
    m_clusterThread.start();
    m_clusterContext = new QObject;
    m_clusterContext->moveToThread(&m_clusterThread);
    m_settings.disconnectGrace = 5s;
    m_settings.markerInterval = 200ms;
    m_settings.resyncRetry = 300ms;
}

void PresenceClusterTest::cleanupTestCase()
{
    rt::runtime::post(m_clusterContext, [context = m_clusterContext] { delete context; });
    m_clusterThread.quit();
    rt::waitFinished(&m_clusterThread);
}

void PresenceClusterTest::init()
{
    m_nodes.clear();
    for (const char *name : { "node-a", "node-b", "node-c" }) {
        m_nodes.push_back(std::make_unique<Node>(QString::fromLatin1(name), m_clusterContext));
    }
}

void PresenceClusterTest::cleanup()
{
    m_nodes.clear();
}

void PresenceClusterTest::startNodes(int count, const ReplicatorSettings &settings)
{
    for (int i = 0; i < count; ++i) {
        node(i).startLinks(settings);
    }
}

void PresenceClusterTest::linkAll(const QList<Node *> &nodes)
{
    QList<PeerAddress> peers;
    QStringList ids;
    for (const Node *n : nodes) {
        peers.append(n->address());
        ids.append(n->id);
    }
    for (Node *n : nodes) {
        n->setPeers(peers);
        onThread(n->context, [&] { n->replicator->setMembers(ids); });
    }
}

// Every node holds every other node's presences in sync.
bool PresenceClusterTest::waitSynced(const QList<Node *> &nodes)
{
    return QTest::qWaitFor(
            [&] {
                for (const Node *n : nodes) {
                    QStringList expected;
                    for (const Node *other : nodes) {
                        if (other != n) {
                            expected.append(other->id);
                        }
                    }
                    expected.sort();
                    if (!n->connectedTo(static_cast<int>(nodes.size()) - 1)
                        || n->synced() != expected) {
                        return false;
                    }
                }
                return true;
            },
            WaitMs);
}

// The sentinel for "nothing more arrives": `rounds` more markers from each of `origins` reached
// `at`, each after every change its origin sent before it (one ordering key per link), and what
// they queued to this thread (the store's side) has run. A marker that reveals a gap makes `at`
// ask for a sync, which the next round's marker follows.
bool PresenceClusterTest::waitMarkerRounds(Node &at, const QList<Node *> &origins, int rounds)
{
    QList<quint64> targets;
    for (const Node *origin : origins) {
        targets.append(at.markersFrom(*origin) + static_cast<quint64>(rounds));
    }
    const bool reached = QTest::qWaitFor(
            [&] {
                for (qsizetype i = 0; i < origins.size(); ++i) {
                    if (at.markersFrom(*origins[i]) < targets[i]) {
                        return false;
                    }
                }
                return true;
            },
            WaitMs + rounds * static_cast<int>(m_settings.markerInterval.count()));
    QCoreApplication::sendPostedEvents();
    return reached;
}

void PresenceClusterTest::trackAppearsOnEveryNode()
{
    startNodes(3, m_settings);
    Node &a = node(0), &b = node(1), &c = node(2);
    linkAll({ &a, &b, &c });
    QVERIFY(waitSynced({ &a, &b, &c }));

    a.store->track(Room, 1, "user-a", meta(R"({"name":"Ann"})"));
    // The same member id on another node is another presence.
    b.store->track(Room, 1, "user-b", meta(R"({"name":"Bob"})"));
    const QString annRef = refOf(a.state(), QStringLiteral("user-a"));
    const QString bobRef = refOf(b.state(), QStringLiteral("user-b"));
    QVERIFY(!annRef.isEmpty() && !bobRef.isEmpty() && annRef != bobRef);

    for (Node *n : { &a, &b, &c }) {
        QTRY_COMPARE_WITH_TIMEOUT(n->store->presenceCount(Room), 2, WaitMs);
        // presence_state holds both, under their origin's refs.
        QCOMPARE(refOf(n->state(), QStringLiteral("user-a")), annRef);
        QCOMPARE(refOf(n->state(), QStringLiteral("user-b")), bobRef);
        QCOMPARE(normalized(n->state()), normalized(a.state()));
        // Clients saw each join once, as a presence_diff in the spec's shape.
        const QList<QJsonObject> diffs = n->room.diffs();
        QCOMPARE(diffs.size(), 2);
        QCOMPARE(countRef(diffs, "joins", annRef), 1);
        QCOMPARE(countRef(diffs, "joins", bobRef), 1);
        QCOMPARE(countSide(diffs, "leaves"), 0);
    }
    const QJsonObject first = c.room.diffs().constFirst();
    QVERIFY(first.contains(QLatin1String("joins")) && first.contains(QLatin1String("leaves")));
    QJsonObject annOnC;
    for (const QJsonObject &diff : c.room.diffs()) {
        for (const auto &[key, value] : metas(diff.value(QLatin1String("joins")).toObject())) {
            if (key == QLatin1String("user-a")) {
                annOnC = value;
            }
        }
    }
    QCOMPARE(annOnC,
             object(QStringLiteral(R"({"name":"Ann","phx_ref":"%1"})").arg(annRef).toUtf8()));
}

void PresenceClusterTest::untrackPropagates()
{
    startNodes(3, m_settings);
    Node &a = node(0), &b = node(1), &c = node(2);
    linkAll({ &a, &b, &c });
    QVERIFY(waitSynced({ &a, &b, &c }));

    a.store->track(Room, 7, "user-a", meta(R"({"name":"Ann"})"));
    const QString ref = refOf(a.state(), QStringLiteral("user-a"));
    QTRY_COMPARE_WITH_TIMEOUT(b.store->presenceCount(Room), 1, WaitMs);
    QTRY_COMPARE_WITH_TIMEOUT(c.store->presenceCount(Room), 1, WaitMs);
    a.store->untrack(Room, 7);
    for (Node *n : { &b, &c }) {
        QTRY_COMPARE_WITH_TIMEOUT(n->store->presenceCount(Room), 0, WaitMs);
        QCOMPARE(n->state(), QByteArray("{}"));
        const QList<QJsonObject> diffs = n->room.diffs();
        QCOMPARE(diffs.size(), 2);
        QCOMPARE(countRef(diffs, "leaves", ref), 1);
        QCOMPARE(diffs.at(1).value(QLatin1String("joins")).toObject(), QJsonObject());
    }
}

void PresenceClusterTest::metaUpdatePropagatesWithPreviousRef()
{
    startNodes(3, m_settings);
    Node &a = node(0), &b = node(1), &c = node(2);
    linkAll({ &a, &b, &c });
    QVERIFY(waitSynced({ &a, &b, &c }));

    a.store->track(Room, 1, "user-a", meta(R"({"name":"Ann"})"));
    const QString firstRef = refOf(a.state(), QStringLiteral("user-a"));
    a.store->track(Room, 1, "user-a", meta(R"({"name":"Ann2"})"));
    const QString secondRef = refOf(a.state(), QStringLiteral("user-a"));
    QVERIFY(firstRef != secondRef);
    const QList<QJsonObject> onA = a.room.diffs();
    QCOMPARE(onA.size(), 2);
    for (Node *n : { &b, &c }) {
        QTRY_COMPARE_WITH_TIMEOUT(n->room.diffs().size(), 2, WaitMs);
        // Exactly the diffs the origin's own clients saw.
        QCOMPARE(n->room.diffs(), onA);
        const QJsonObject update = n->room.diffs().at(1);
        const auto joins = metas(update.value(QLatin1String("joins")).toObject());
        QCOMPARE(joins.size(), 1);
        QCOMPARE(joins.at(0).second.value(QLatin1String("phx_ref_prev")).toString(), firstRef);
        QCOMPARE(joins.at(0).second.value(QLatin1String("name")).toString(),
                 QStringLiteral("Ann2"));
        QCOMPARE(countRef({ update }, "leaves", firstRef), 1);
        QCOMPARE(refOf(n->state(), QStringLiteral("user-a")), secondRef);
    }
}

void PresenceClusterTest::lateNodeGetsAFullSyncWithoutDuplicates()
{
    startNodes(2, m_settings);
    Node &a = node(0), &b = node(1), &c = node(2);
    linkAll({ &a, &b });
    QVERIFY(waitSynced({ &a, &b }));
    a.store->track(Room, 1, "user-a1", meta(R"({"n":1})"));
    a.store->track(Lobby, 2, "user-a2", meta(R"({"n":2})"));
    b.store->track(Room, 1, "user-b1", meta(R"({"n":3})"));
    QTRY_COMPARE_WITH_TIMEOUT(a.store->presenceCount(Room), 2, WaitMs);
    QTRY_COMPARE_WITH_TIMEOUT(b.store->presenceCount(Room), 2, WaitMs);
    QTRY_COMPARE_WITH_TIMEOUT(b.store->presenceCount(Lobby), 1, WaitMs);
    const int diffsOnA = static_cast<int>(a.room.diffs().size());
    const int diffsOnB = static_cast<int>(b.room.diffs().size());

    c.startLinks(m_settings);
    linkAll({ &a, &b, &c });
    QVERIFY(waitSynced({ &a, &b, &c }));
    QTRY_COMPARE_WITH_TIMEOUT(c.store->presenceCount(Room), 2, WaitMs);
    QTRY_COMPARE_WITH_TIMEOUT(c.store->presenceCount(Lobby), 1, WaitMs);
    // A few marker rounds: nothing more arrives.
    QVERIFY(waitMarkerRounds(c, { &a, &b }, 3));
    QCOMPARE(normalized(c.state(Room)), normalized(a.state(Room)));
    QCOMPARE(normalized(c.state(Lobby)), normalized(a.state(Lobby)));
    for (const QString &key : { QStringLiteral("user-a1"), QStringLiteral("user-b1") }) {
        QCOMPARE(countRef(c.room.diffs(), "joins", refOf(a.state(Room), key)), 1);
    }
    QCOMPARE(countSide(c.room.diffs(), "joins"), 2);
    QCOMPARE(countSide(c.room.diffs(), "leaves"), 0);
    QCOMPARE(countSide(c.lobby.diffs(), "joins"), 1);
    QCOMPARE(countSide(c.lobby.diffs(), "leaves"), 0);
    // The new node brought nothing, so the others saw nothing.
    QCOMPARE(a.room.diffs().size(), diffsOnA);
    QCOMPARE(b.room.diffs().size(), diffsOnB);

    // And it takes part from now on.
    c.store->track(Room, 1, "user-c1", {});
    QTRY_COMPARE_WITH_TIMEOUT(a.store->presenceCount(Room), 3, WaitMs);
    QTRY_COMPARE_WITH_TIMEOUT(b.store->presenceCount(Room), 3, WaitMs);
}

void PresenceClusterTest::deadNodePresencesLeaveOnMembershipChange()
{
    startNodes(3, m_settings);
    Node &a = node(0), &b = node(1), &c = node(2);
    linkAll({ &a, &b, &c });
    QVERIFY(waitSynced({ &a, &b, &c }));
    a.store->track(Room, 1, "user-a", {});
    b.store->track(Room, 1, "user-b", meta(R"({"x":1})"));
    b.store->track(Lobby, 2, "user-b2", meta(R"({"x":2})"));
    const QString bRef = refOf(b.state(Room), QStringLiteral("user-b"));
    const QString b2Ref = refOf(b.state(Lobby), QStringLiteral("user-b2"));
    for (Node *n : { &a, &c }) {
        QTRY_COMPARE_WITH_TIMEOUT(n->store->presenceCount(Room), 2, WaitMs);
        QTRY_COMPARE_WITH_TIMEOUT(n->store->presenceCount(Lobby), 1, WaitMs);
    }

    // B dies: its links stop; the membership (lease expiry) tells the others.
    b.stopLinks();
    for (Node *n : { &a, &c }) {
        onThread(n->context, [&] {
            n->replicator->setMembers({ a.id, c.id });
            n->links->setPeers({ a.address(), c.address() });
        });
    }
    for (Node *n : { &a, &c }) {
        QTRY_COMPARE_WITH_TIMEOUT(n->store->presenceCount(Lobby), 0, WaitMs);
        QTRY_COMPARE_WITH_TIMEOUT(n->store->presenceCount(Room), 1, WaitMs);
        QCOMPARE(countRef(n->room.diffs(), "leaves", bRef), 1);
        QCOMPARE(countRef(n->lobby.diffs(), "leaves", b2Ref), 1);
        QVERIFY(!refOf(n->state(Room), QStringLiteral("user-a")).isEmpty());
    }
    // The grace timer that the closed links started finds nothing left to remove.
    QCOMPARE(countSide(a.room.diffs(), "leaves"), 1);
}

void PresenceClusterTest::unreachableNodePresencesLeaveAfterGrace()
{
    ReplicatorSettings settings = m_settings;
    settings.disconnectGrace = 400ms;
    startNodes(3, settings);
    Node &a = node(0), &b = node(1), &c = node(2);
    linkAll({ &a, &b, &c });
    QVERIFY(waitSynced({ &a, &b, &c }));
    b.store->track(Room, 1, "user-b", {});
    QTRY_COMPARE_WITH_TIMEOUT(a.store->presenceCount(Room), 1, WaitMs);
    QTRY_COMPARE_WITH_TIMEOUT(c.store->presenceCount(Room), 1, WaitMs);

    // No membership news (etcd still sees B), but nobody can reach it.
    b.stopLinks();
    for (Node *n : { &a, &c }) {
        QTRY_COMPARE_WITH_TIMEOUT(n->store->presenceCount(Room), 0, WaitMs);
        QCOMPARE(countSide(n->room.diffs(), "leaves"), 1);
    }

    // B comes back (same address): its presences are synced again, once.
    b.startLinks(settings);
    linkAll({ &a, &b, &c });
    QVERIFY(waitSynced({ &a, &b, &c }));
    for (Node *n : { &a, &c }) {
        QTRY_COMPARE_WITH_TIMEOUT(n->store->presenceCount(Room), 1, WaitMs);
        QCOMPARE(countSide(n->room.diffs(), "joins"), 2);
    }
}

void PresenceClusterTest::linkFlapNeitherDuplicatesNorLoses()
{
    startNodes(3, m_settings);
    Node &a = node(0), &b = node(1), &c = node(2);
    linkAll({ &a, &b, &c });
    QVERIFY(waitSynced({ &a, &b, &c }));
    a.store->track(Room, 1, "user-a1", {});
    b.store->track(Room, 1, "user-b1", {});
    for (Node *n : { &a, &b, &c }) {
        QTRY_COMPARE_WITH_TIMEOUT(n->store->presenceCount(Room), 2, WaitMs);
    }
    const QString a1Ref = refOf(a.state(), QStringLiteral("user-a1"));
    const QString b1Ref = refOf(b.state(), QStringLiteral("user-b1"));

    // A's links to B go down (both ways) for less than the grace period; meanwhile A changes
    // its presences, which B cannot hear of.
    a.setPeers({ a.address(), c.address() });
    b.setPeers({ b.address(), c.address() });
    QTRY_VERIFY_WITH_TIMEOUT(a.connectedTo(1) && b.connectedTo(1), WaitMs);
    a.store->untrack(Room, 1);
    a.store->track(Room, 2, "user-a2", {});
    const QString a2Ref = refOf(a.state(), QStringLiteral("user-a2"));
    QTRY_COMPARE_WITH_TIMEOUT(c.store->presenceCount(Room), 2, WaitMs);
    QTRY_COMPARE_WITH_TIMEOUT(countRef(c.room.diffs(), "joins", a2Ref), 1, WaitMs);
    // B is behind: C, which has A's change, does not pass it on (a marker round from C).
    QVERIFY(waitMarkerRounds(b, { &c }, 1));
    QCOMPARE(countRef(b.room.diffs(), "leaves", a1Ref), 0);

    // The links come back: each side sends its full state, and B catches up exactly.
    linkAll({ &a, &b, &c });
    QVERIFY(waitSynced({ &a, &b, &c }));
    QTRY_COMPARE_WITH_TIMEOUT(countRef(b.room.diffs(), "joins", a2Ref), 1, WaitMs);
    for (Node *n : { &a, &b, &c }) {
        QList<Node *> others;
        for (Node *other : { &a, &b, &c }) {
            if (other != n) {
                others.append(other);
            }
        }
        QVERIFY(waitMarkerRounds(*n, others, 3));
    }
    for (Node *n : { &a, &b, &c }) {
        QCOMPARE(normalized(n->state()), normalized(a.state()));
        const QList<QJsonObject> diffs = n->room.diffs();
        QCOMPARE(countRef(diffs, "joins", a1Ref), 1);
        QCOMPARE(countRef(diffs, "leaves", a1Ref), 1);
        QCOMPARE(countRef(diffs, "joins", a2Ref), 1);
        QCOMPARE(countRef(diffs, "joins", b1Ref), 1);
        QCOMPARE(countRef(diffs, "leaves", b1Ref), 0); // the flap lost nothing
    }
}

void PresenceClusterTest::forgedChangeIsRepairedByMarker()
{
    startNodes(2, m_settings);
    Node &a = node(0), &b = node(1);
    linkAll({ &a, &b });
    QVERIFY(waitSynced({ &a, &b }));
    a.store->track(Room, 1, "user-a", {});
    QTRY_COMPARE_WITH_TIMEOUT(b.store->presenceCount(Room), 1, WaitMs);

    // B applies a change A never made (as if A's last frames were not the ones B saw). A's next
    // marker shows B is ahead; B asks for a full sync, which removes the phantom.
    QTest::ignoreMessage(QtInfoMsg,
                         QRegularExpression(QStringLiteral(
                                 "asking \"node-a\" for a full presence sync: marker ahead")));
    onThread(b.context, [&] {
        // A's replicator lives on the same (cluster) thread: safe to read here.
        const quint64 incarnation = a.replicator->incarnation();
        const quint64 sequence = a.replicator->sequence();
        const PresenceChange phantom{ PresenceChange::Op::Track,
                                      PresenceRecord{ Room, 99, "phantom", meta(R"({"p":1})"),
                                                      "phantom-ref-0001" } };
        b.replicator->handleFrame(a.id, rt::presence::wire::KindDelta,
                                  rt::presence::wire::encode(rt::presence::wire::Delta{
                                          incarnation, sequence + 1, phantom }));
    });
    QTRY_COMPARE_WITH_TIMEOUT(countRef(b.room.diffs(), "joins", QStringLiteral("phantom-ref-0001")),
                              1, WaitMs);
    QTRY_COMPARE_WITH_TIMEOUT(
            countRef(b.room.diffs(), "leaves", QStringLiteral("phantom-ref-0001")), 1, WaitMs);
    QCOMPARE(normalized(b.state()), normalized(a.state()));
    QTRY_VERIFY_WITH_TIMEOUT(b.synced() == QStringList{ a.id }, WaitMs);
}

void PresenceClusterTest::gapTriggersResync()
{
    startNodes(2, m_settings);
    Node &a = node(0), &b = node(1);
    linkAll({ &a, &b });
    QVERIFY(waitSynced({ &a, &b }));
    a.store->track(Room, 1, "user-a", {});
    QTRY_COMPARE_WITH_TIMEOUT(b.store->presenceCount(Room), 1, WaitMs);

    // A change numbered past the next one: B must not apply it (something is missing before
    // it) and resyncs instead.
    QTest::ignoreMessage(
            QtInfoMsg,
            QRegularExpression(QStringLiteral(
                    "asking \"node-a\" for a full presence sync: change numbers skip")));
    QTest::ignoreMessage(QtWarningMsg,
                         QRegularExpression(QStringLiteral("malformed presence frame of kind 20")));
    onThread(b.context, [&] {
        const PresenceChange skipped{
            PresenceChange::Op::Untrack,
            PresenceRecord{ Room, 1, {}, {}, {} },
        };
        b.replicator->handleFrame(
                a.id, rt::presence::wire::KindDelta,
                rt::presence::wire::encode(rt::presence::wire::Delta{
                        a.replicator->incarnation(), a.replicator->sequence() + 3, skipped }));
        // Garbage is a lost frame too, never a crash.
        b.replicator->handleFrame(a.id, rt::presence::wire::KindDelta, QByteArray("\x01\x02", 2));
    });
    // Meanwhile real changes keep flowing and end up on B.
    a.store->track(Room, 2, "user-a2", {});
    QTRY_COMPARE_WITH_TIMEOUT(b.store->presenceCount(Room), 2, WaitMs);
    QTRY_VERIFY_WITH_TIMEOUT(b.synced() == QStringList{ a.id }, WaitMs);
    QVERIFY(waitMarkerRounds(b, { &a }, 3));
    QCOMPARE(normalized(b.state()), normalized(a.state()));
    QCOMPARE(countSide(b.room.diffs(), "leaves"), 0); // the skipped untrack never applied
    QCOMPARE(countSide(b.room.diffs(), "joins"), 2);
}

void PresenceClusterTest::orderPerTopicIsKept()
{
    startNodes(3, m_settings);
    Node &a = node(0), &b = node(1), &c = node(2);
    linkAll({ &a, &b, &c });
    QVERIFY(waitSynced({ &a, &b, &c }));

    constexpr int Updates = 200;
    for (int i = 0; i < Updates; ++i) {
        QJsonObject value;
        value.insert(QStringLiteral("i"), i);
        a.store->track(Room, 1, "counter", value);
        a.store->track(Lobby, static_cast<quint64>(i % 5), "lobby", value);
        if (i % 7 == 0) {
            a.store->untrack(Lobby, static_cast<quint64>(i % 5));
        }
    }
    for (Node *n : { &b, &c }) {
        QTRY_COMPARE_WITH_TIMEOUT(n->room.diffs().size(), a.room.diffs().size(), WaitMs);
        QTRY_COMPARE_WITH_TIMEOUT(n->lobby.diffs().size(), a.lobby.diffs().size(), WaitMs);
        // Every node's clients see the origin's diffs in the origin's order.
        QCOMPARE(n->room.diffs(), a.room.diffs());
        QCOMPARE(n->lobby.diffs(), a.lobby.diffs());
        QCOMPARE(normalized(n->state(Room)), normalized(a.state(Room)));
        QCOMPARE(normalized(n->state(Lobby)), normalized(a.state(Lobby)));
    }
}

QTEST_GUILESS_MAIN(PresenceClusterTest)
#include "tst_presence_cluster.moc"
