// Conformance suite of the ClusterBackend port: the same tests run against InProcessCluster
// (rows "in_process", with a ManualClock that the tests drive) and against a real etcd 3.4
// (rows "etcd", several EtcdClusterBackend instances with different node ids against the
// fixture's server, a fresh key prefix per test, 2 s leases).
#include "server/cluster/etcd/etcd_cluster_backend.h"
#include "server/cluster/in_process/in_process_cluster.h"
#include "shared/core/clock.h"
#include "tests/support/etcd/etcd_env.h"

#include <QDateTime>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QRandomGenerator>
#include <QTest>

#include <memory>
#include <vector>

using namespace rt::cluster;

namespace {

constexpr int LeaseTtlSeconds = 2;
// Long enough for an etcd lease to expire (TTL + the lessor's 500 ms check + slack).
constexpr int Timeout = 15'000;

// What one node has been told, in order.
struct Recorder
{
    QList<QList<NodeInfo>> members;
    QStringList granted;
    QList<std::pair<QString, Claim>> refused;
    QStringList failed;
    QList<std::pair<QString, std::optional<Claim>>> changed;
    QStringList lost;
    QList<ConfigSnapshot> configs;
    int available = 0;
    int unavailable = 0;
    int stopped = 0;

    // The last claimChanged for `resource`, if any.
    std::optional<std::optional<Claim>> lastChange(const QString &resource) const
    {
        for (auto it = changed.crbegin(); it != changed.crend(); ++it) {
            if (it->first == resource) {
                return it->second;
            }
        }
        return std::nullopt;
    }
};

struct Node
{
    std::unique_ptr<ClusterBackend> backend;
    std::unique_ptr<Recorder> seen = std::make_unique<Recorder>();
};

// lastChange() of a claim whose last change was "gone".
const std::optional<std::optional<Claim>> Vanished{ std::in_place, std::nullopt };

QStringList ids(const QList<NodeInfo> &members)
{
    QStringList result;
    for (const NodeInfo &node : members) {
        result.append(node.id);
    }
    return result;
}

QByteArray meta(const char *state, const QString &node)
{
    return QByteArrayLiteral("{\"state\":\"") + state + QByteArrayLiteral("\",\"node\":\"")
            + node.toUtf8() + QByteArrayLiteral("\"}");
}

// A config write's answer, captured by the callback.
struct WriteAnswer
{
    std::optional<ConfigWriteResult> result;
    ClusterBackend::ConfigCallback callback()
    {
        return [this](ConfigWriteResult answer) { result.emplace(std::move(answer)); };
    }
};

} // namespace

class TstClusterBackend : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase_data();
    void initTestCase();
    void init();
    void cleanup();

    void membershipSeenByAll();
    void nodeLeaveRemovesMemberAndClaims();
    void nodeDeathRemovesMemberAndClaims();
    void concurrentClaimsHaveOneWinner();
    void claimUpdateWakesWaiters();
    void releaseWakesWaiters();
    void configCompareAndSwap();
    void temporaryOverrideTellsWhenItExpires();
    void temporaryOverrideExpires();
    void claimBeforeRegistrationFails();
    void droppedWatchResumesWithoutMissingEvents(); // etcd only
    void unavailableThenRecovery(); // etcd only (private server)
    void lostLeaseRegistersAgain(); // etcd only
    void endpointFailover(); // etcd only
    void compactedWatchReloads(); // etcd only

private:
    bool isEtcd() const { return m_kind == QLatin1String("etcd"); }
    ClusterBackend *addNode(const QString &id, const QString &endpoints = {});
    Recorder &seen(ClusterBackend *backend);
    bool waitAvailable(ClusterBackend *backend);
    void kill(ClusterBackend *backend);
    void passTime(qint64 ms);
    std::optional<ConfigWriteResult> put(ClusterBackend *backend, const QString &key,
                                         const QByteArray &value, qint64 expected, int ttl = 0);
    std::optional<ConfigWriteResult> remove(ClusterBackend *backend, const QString &key,
                                            qint64 expected);

    QString m_kind;
    QString m_endpoints;
    QString m_prefix;
    std::unique_ptr<rt::ManualClock> m_clock;
    std::unique_ptr<InProcessCluster> m_cluster;
    std::vector<Node> m_nodes;
};

void TstClusterBackend::initTestCase_data()
{
    QTest::addColumn<QString>("backend");
    QTest::newRow("in_process") << QStringLiteral("in_process");
    QTest::newRow("etcd") << QStringLiteral("etcd");
}

void TstClusterBackend::initTestCase()
{
    QString error;
    const auto env = rt::testsupport::EtcdEnv::fromEnvironment(&error);
    QVERIFY2(env, qPrintable(error));
    m_endpoints = env->endpoints;
}

void TstClusterBackend::init()
{
    QFETCH_GLOBAL(QString, backend);
    m_kind = backend;
    m_prefix = QStringLiteral("/qtrealtime-test/%1/%2/%3")
                       .arg(QRandomGenerator::global()->generate(), 0, 16)
                       .arg(QLatin1String(QTest::currentTestFunction()), m_kind);
    m_clock = std::make_unique<rt::ManualClock>();
    m_cluster = std::make_unique<InProcessCluster>(*m_clock);
    m_cluster->setLeaseTtlMs(LeaseTtlSeconds * 1000);
}

void TstClusterBackend::cleanup()
{
    m_nodes.clear(); // before the cluster they point at
    m_cluster.reset();
    m_clock.reset();
}

ClusterBackend *TstClusterBackend::addNode(const QString &id, const QString &endpoints)
{
    Node node;
    if (isEtcd()) {
        EtcdBackendSettings settings;
        settings.endpoints = *rt::cluster::etcd::EtcdClient::parseEndpoints(
                endpoints.isEmpty() ? m_endpoints : endpoints);
        settings.prefix = m_prefix;
        settings.leaseTtlSeconds = LeaseTtlSeconds;
        settings.requestTimeoutMs = 2000;
        node.backend = std::make_unique<EtcdClusterBackend>(settings);
    } else {
        node.backend = std::make_unique<InProcessClusterBackend>(*m_cluster);
    }
    ClusterBackend *backend = node.backend.get();
    Recorder *seen = node.seen.get();
    connect(backend, &ClusterBackend::membersChanged, backend,
            [seen](const QList<NodeInfo> &members) { seen->members.append(members); });
    connect(backend, &ClusterBackend::claimGranted, backend,
            [seen](const QString &resource) { seen->granted.append(resource); });
    connect(backend, &ClusterBackend::claimRefused, backend,
            [seen](const QString &resource, const Claim &current) {
                seen->refused.append({ resource, current });
            });
    connect(backend, &ClusterBackend::claimFailed, backend,
            [seen](const QString &resource, const QString &) { seen->failed.append(resource); });
    connect(backend, &ClusterBackend::claimChanged, backend,
            [seen](const QString &resource, const std::optional<Claim> &claim) {
                seen->changed.append({ resource, claim });
            });
    connect(backend, &ClusterBackend::claimLost, backend,
            [seen](const QString &resource, const QString &) { seen->lost.append(resource); });
    connect(backend, &ClusterBackend::configChanged, backend,
            [seen](const ConfigSnapshot &snapshot) { seen->configs.append(snapshot); });
    connect(backend, &ClusterBackend::backendAvailable, backend, [seen] { ++seen->available; });
    connect(backend, &ClusterBackend::backendUnavailable, backend,
            [seen](const QString &) { ++seen->unavailable; });
    connect(backend, &ClusterBackend::stopped, backend, [seen] { ++seen->stopped; });
    m_nodes.push_back(std::move(node));
    backend->start(NodeInfo{ id, QStringLiteral("local"), id + QStringLiteral(":4000"),
                             id + QStringLiteral(":4100"), 1'700'000'000'000, std::nullopt });
    return backend;
}

Recorder &TstClusterBackend::seen(ClusterBackend *backend)
{
    for (Node &node : m_nodes) {
        if (node.backend.get() == backend) {
            return *node.seen;
        }
    }
    qFatal("unknown node");
}

bool TstClusterBackend::waitAvailable(ClusterBackend *backend)
{
    return QTest::qWaitFor([backend] { return backend->isAvailable(); }, Timeout);
}

// A node stops renewing its lease (hung or crashed); on etcd the lease then expires by itself.
void TstClusterBackend::kill(ClusterBackend *backend)
{
    if (isEtcd()) {
        static_cast<EtcdClusterBackend *>(backend)->suspendKeepAliveForTesting();
    } else {
        static_cast<InProcessClusterBackend *>(backend)->suspendKeepAlive();
        passTime(LeaseTtlSeconds * 1000 + 1);
    }
}

// In-process time moves only when told; etcd's passes by itself while the tests wait.
void TstClusterBackend::passTime(qint64 ms)
{
    if (!isEtcd()) {
        m_clock->advance(ms);
        m_cluster->sweep();
    }
}

std::optional<ConfigWriteResult> TstClusterBackend::put(ClusterBackend *backend, const QString &key,
                                                        const QByteArray &value, qint64 expected,
                                                        int ttl)
{
    WriteAnswer answer;
    backend->putConfig(key, value, expected, ttl, answer.callback());
    if (!QTest::qWaitFor([&answer] { return answer.result.has_value(); }, Timeout)) {
        return std::nullopt;
    }
    return answer.result;
}

std::optional<ConfigWriteResult> TstClusterBackend::remove(ClusterBackend *backend,
                                                           const QString &key, qint64 expected)
{
    WriteAnswer answer;
    backend->deleteConfig(key, expected, answer.callback());
    if (!QTest::qWaitFor([&answer] { return answer.result.has_value(); }, Timeout)) {
        return std::nullopt;
    }
    return answer.result;
}

// ---------------------------------------------------------------------------------------------

void TstClusterBackend::membershipSeenByAll()
{
    const QStringList all{ QStringLiteral("node-a"), QStringLiteral("node-b"),
                           QStringLiteral("node-c") };
    QList<ClusterBackend *> nodes;
    for (const QString &id : all) {
        nodes.append(addNode(id));
    }
    for (ClusterBackend *node : nodes) {
        QVERIFY(waitAvailable(node));
        QTRY_COMPARE_WITH_TIMEOUT(ids(node->members()), all, Timeout);
        QTRY_VERIFY_WITH_TIMEOUT(
                !seen(node).members.isEmpty() && ids(seen(node).members.last()) == all, Timeout);
        QCOMPARE(seen(node).available, 1);
        QCOMPARE(seen(node).unavailable, 0);
    }
    // The records carry what each node published, and updates reach everyone.
    const NodeInfo b = nodes[0]->members().at(1);
    QCOMPARE(b.linkAddress, QStringLiteral("node-b:4100"));
    QCOMPARE(b.clientAddress, QStringLiteral("node-b:4000"));
    QVERIFY(!b.load);
    NodeInfo loaded = b;
    loaded.load = 0.42;
    nodes[1]->updateSelf(loaded);
    for (ClusterBackend *node : nodes) {
        QTRY_COMPARE_WITH_TIMEOUT(node->members().at(1).load, std::optional<double>(0.42), Timeout);
    }
}

void TstClusterBackend::nodeLeaveRemovesMemberAndClaims()
{
    ClusterBackend *a = addNode(QStringLiteral("node-a"));
    ClusterBackend *b = addNode(QStringLiteral("node-b"));
    ClusterBackend *c = addNode(QStringLiteral("node-c"));
    for (ClusterBackend *node : { a, b, c }) {
        QVERIFY(waitAvailable(node));
        QTRY_COMPARE_WITH_TIMEOUT(node->members().size(), 3, Timeout);
    }
    const QString resource = QStringLiteral("cdc/tenant-leave");
    c->claim(resource, meta("ready", QStringLiteral("node-c")));
    QTRY_COMPARE_WITH_TIMEOUT(seen(c).granted, QStringList{ resource }, Timeout);
    QTRY_VERIFY_WITH_TIMEOUT(a->claimOf(resource) && b->claimOf(resource), Timeout);
    QCOMPARE(a->claimOf(resource)->owner, QStringLiteral("node-c"));

    c->stop();
    QTRY_COMPARE_WITH_TIMEOUT(seen(c).stopped, 1, Timeout);
    const QStringList remaining{ QStringLiteral("node-a"), QStringLiteral("node-b") };
    for (ClusterBackend *node : { a, b }) {
        QTRY_COMPARE_WITH_TIMEOUT(ids(node->members()), remaining, Timeout);
        QTRY_VERIFY_WITH_TIMEOUT(!node->claimOf(resource), Timeout);
        QTRY_COMPARE_WITH_TIMEOUT(seen(node).lastChange(resource), Vanished, Timeout);
    }
    QVERIFY(seen(c).lost.isEmpty()); // a clean leave is not a loss
    QVERIFY(c->ownedClaims().isEmpty());
}

void TstClusterBackend::nodeDeathRemovesMemberAndClaims()
{
    ClusterBackend *a = addNode(QStringLiteral("node-a"));
    ClusterBackend *b = addNode(QStringLiteral("node-b"));
    ClusterBackend *c = addNode(QStringLiteral("node-c"));
    for (ClusterBackend *node : { a, b, c }) {
        QVERIFY(waitAvailable(node));
        QTRY_COMPARE_WITH_TIMEOUT(node->members().size(), 3, Timeout);
    }
    const QString resource = QStringLiteral("cdc/tenant-death");
    c->claim(resource, meta("ready", QStringLiteral("node-c")));
    QTRY_COMPARE_WITH_TIMEOUT(seen(c).granted, QStringList{ resource }, Timeout);
    QTRY_VERIFY_WITH_TIMEOUT(a->claimOf(resource) && b->claimOf(resource), Timeout);

    // A waiter on b is refused while c holds it.
    b->claim(resource, meta("starting", QStringLiteral("node-b")));
    QTRY_COMPARE_WITH_TIMEOUT(seen(b).refused.size(), 1, Timeout);
    QCOMPARE(seen(b).refused.first().second.owner, QStringLiteral("node-c"));

    kill(c);
    const QStringList remaining{ QStringLiteral("node-a"), QStringLiteral("node-b") };
    for (ClusterBackend *node : { a, b }) {
        QTRY_COMPARE_WITH_TIMEOUT(ids(node->members()), remaining, Timeout);
        QTRY_VERIFY_WITH_TIMEOUT(!node->claimOf(resource), Timeout);
        QTRY_COMPARE_WITH_TIMEOUT(seen(node).lastChange(resource), Vanished, Timeout);
    }
    // The dead node is told (if it is alive enough to listen) that it no longer owns anything.
    QTRY_COMPARE_WITH_TIMEOUT(seen(c).lost, QStringList{ resource }, Timeout);
    QVERIFY(c->ownedClaims().isEmpty());

    // Takeover: the waiter claims again and wins; everyone sees the new owner.
    b->claim(resource, meta("starting", QStringLiteral("node-b")));
    QTRY_COMPARE_WITH_TIMEOUT(seen(b).granted, QStringList{ resource }, Timeout);
    QCOMPARE(b->ownedClaims(), QStringList{ resource });
    QTRY_VERIFY_WITH_TIMEOUT(a->claimOf(resource)
                                     && a->claimOf(resource)->owner == QStringLiteral("node-b"),
                             Timeout);
}

void TstClusterBackend::concurrentClaimsHaveOneWinner()
{
    QList<ClusterBackend *> nodes{ addNode(QStringLiteral("node-a")),
                                   addNode(QStringLiteral("node-b")),
                                   addNode(QStringLiteral("node-c")) };
    for (ClusterBackend *node : nodes) {
        QVERIFY(waitAvailable(node));
    }
    const QString resource = QStringLiteral("cdc/tenant-race");
    for (ClusterBackend *node : nodes) { // all in the same event-loop turn
        node->claim(resource, meta("starting", node->nodeId()));
    }
    auto answered = [&] {
        int answers = 0;
        for (ClusterBackend *node : nodes) {
            answers += int(seen(node).granted.size() + seen(node).refused.size());
        }
        return answers;
    };
    QTRY_COMPARE_WITH_TIMEOUT(answered(), 3, Timeout);
    QString winner;
    for (ClusterBackend *node : nodes) {
        QVERIFY(seen(node).failed.isEmpty());
        if (!seen(node).granted.isEmpty()) {
            QVERIFY2(winner.isEmpty(), "two nodes were granted the same claim");
            winner = node->nodeId();
        }
    }
    QVERIFY(!winner.isEmpty());
    for (ClusterBackend *node : nodes) {
        if (node->nodeId() == winner) {
            QCOMPARE(node->ownedClaims(), QStringList{ resource });
            continue;
        }
        QCOMPARE(seen(node).refused.size(), 1);
        const Claim &current = seen(node).refused.first().second;
        QCOMPARE(current.resource, resource);
        QCOMPARE(current.owner, winner);
        QCOMPARE(current.metadata, meta("starting", winner));
        QVERIFY(current.createRevision > 0);
        QVERIFY(node->ownedClaims().isEmpty());
    }
    for (ClusterBackend *node : nodes) {
        QTRY_VERIFY_WITH_TIMEOUT(
                node->claimOf(resource) && node->claimOf(resource)->owner == winner, Timeout);
    }
    // Claiming what one already holds is granted again, and changes nothing.
    ClusterBackend *owner = nodes[winner.back().unicode() - u'a'];
    const qint64 created = owner->claimOf(resource)->createRevision;
    owner->claim(resource, meta("starting", winner));
    QTRY_COMPARE_WITH_TIMEOUT(seen(owner).granted.size(), 2, Timeout);
    QCOMPARE(owner->claimOf(resource)->createRevision, created);
    QVERIFY(claimWins(*owner->claimOf(resource),
                      Claim{ resource, QStringLiteral("zzz"), {}, created + 1, created + 1 }));
}

void TstClusterBackend::claimUpdateWakesWaiters()
{
    ClusterBackend *a = addNode(QStringLiteral("node-a"));
    ClusterBackend *b = addNode(QStringLiteral("node-b"));
    ClusterBackend *c = addNode(QStringLiteral("node-c"));
    for (ClusterBackend *node : { a, b, c }) {
        QVERIFY(waitAvailable(node));
    }
    const QString resource = QStringLiteral("db/tenant-update");
    a->claim(resource, meta("starting", QStringLiteral("node-a")));
    QTRY_COMPARE_WITH_TIMEOUT(seen(a).granted, QStringList{ resource }, Timeout);
    for (ClusterBackend *waiter : { b, c }) {
        QTRY_VERIFY_WITH_TIMEOUT(waiter->claimOf(resource), Timeout);
        QCOMPARE(waiter->claimOf(resource)->metadata, meta("starting", QStringLiteral("node-a")));
    }
    const qint64 created = b->claimOf(resource)->createRevision;

    a->updateClaim(resource, meta("ready", QStringLiteral("node-a")));
    for (ClusterBackend *waiter : { a, b, c }) {
        QTRY_VERIFY_WITH_TIMEOUT(seen(waiter).lastChange(resource)
                                         && *seen(waiter).lastChange(resource)
                                         && (*seen(waiter).lastChange(resource))->metadata
                                                 == meta("ready", QStringLiteral("node-a")),
                                 Timeout);
        const Claim claim = *waiter->claimOf(resource);
        QCOMPARE(claim.owner, QStringLiteral("node-a"));
        QCOMPARE(claim.createRevision, created); // same ownership, new metadata
        QVERIFY(claim.modRevision > created);
    }
    // Only the owner may update; anyone else learns it does not hold the claim.
    b->updateClaim(resource, meta("ready", QStringLiteral("node-b")));
    QTRY_COMPARE_WITH_TIMEOUT(seen(b).lost, QStringList{ resource }, Timeout);
    // The sentinel: a claim a makes now reaches c after anything written before it (one
    // revision order for every watcher), so b's refused write cannot still be on its way.
    const QString sentinel = QStringLiteral("db/tenant-update-sentinel");
    a->claim(sentinel, meta("starting", QStringLiteral("node-a")));
    QTRY_VERIFY_WITH_TIMEOUT(c->claimOf(sentinel), Timeout);
    QCOMPARE(c->claimOf(resource)->metadata, meta("ready", QStringLiteral("node-a")));
    QVERIFY(seen(a).lost.isEmpty());
}

void TstClusterBackend::releaseWakesWaiters()
{
    ClusterBackend *a = addNode(QStringLiteral("node-a"));
    ClusterBackend *b = addNode(QStringLiteral("node-b"));
    for (ClusterBackend *node : { a, b }) {
        QVERIFY(waitAvailable(node));
    }
    const QString resource = QStringLiteral("cdc/tenant-release");
    a->claim(resource, meta("ready", QStringLiteral("node-a")));
    QTRY_COMPARE_WITH_TIMEOUT(seen(a).granted, QStringList{ resource }, Timeout);
    b->claim(resource, meta("starting", QStringLiteral("node-b")));
    QTRY_COMPARE_WITH_TIMEOUT(seen(b).refused.size(), 1, Timeout);

    a->release(resource);
    QVERIFY(a->ownedClaims().isEmpty());
    QTRY_COMPARE_WITH_TIMEOUT(seen(b).lastChange(resource), Vanished, Timeout);
    QVERIFY(!b->claimOf(resource));
    QVERIFY(seen(a).lost.isEmpty()); // a release is not a loss
    b->claim(resource, meta("starting", QStringLiteral("node-b")));
    QTRY_COMPARE_WITH_TIMEOUT(seen(b).granted, QStringList{ resource }, Timeout);
    QTRY_VERIFY_WITH_TIMEOUT(a->claimOf(resource)
                                     && a->claimOf(resource)->owner == QStringLiteral("node-b"),
                             Timeout);
}

void TstClusterBackend::configCompareAndSwap()
{
    QList<ClusterBackend *> nodes{ addNode(QStringLiteral("node-a")),
                                   addNode(QStringLiteral("node-b")),
                                   addNode(QStringLiteral("node-c")) };
    for (ClusterBackend *node : nodes) {
        QVERIFY(waitAvailable(node));
    }
    ClusterBackend *a = nodes[0];
    ClusterBackend *b = nodes[1];
    ClusterBackend *c = nodes[2];
    const QString key = QStringLiteral("limits/tenant-1");

    auto first = put(a, key, "v1", 0);
    QVERIFY(first && first->ok());
    const qint64 rev1 = **first;
    // "Must not exist" now conflicts, with the stored value and revision.
    auto again = put(b, key, "other", 0);
    QVERIFY(again && !again->ok());
    QCOMPARE(again->error().kind, ConfigWriteError::Kind::Conflict);
    QVERIFY(again->error().current);
    QCOMPARE(again->error().current->value, QByteArray("v1"));
    QCOMPARE(again->error().current->modRevision, rev1);

    auto second = put(b, key, "v2", rev1);
    QVERIFY(second && second->ok());
    const qint64 rev2 = **second;
    QVERIFY(rev2 > rev1);
    // A stale edit (based on rev1) is rejected; nothing is overwritten.
    auto stale = put(c, key, "v3", rev1);
    QVERIFY(stale && !stale->ok());
    QCOMPARE(stale->error().kind, ConfigWriteError::Kind::Conflict);
    QCOMPARE(stale->error().current->value, QByteArray("v2"));
    QCOMPARE(stale->error().current->modRevision, rev2);

    for (ClusterBackend *node : nodes) {
        QTRY_VERIFY_WITH_TIMEOUT(node->configSnapshot().find(key)
                                         && node->configSnapshot().find(key)->value == "v2",
                                 Timeout);
        const ConfigEntry entry = *node->configSnapshot().find(key);
        QCOMPARE(entry.modRevision, rev2);
        QVERIFY(!entry.temporary);
        QVERIFY(node->configSnapshot().revision >= rev2);
        // configChanged reached every node, last with v2.
        QTRY_VERIFY_WITH_TIMEOUT(!seen(node).configs.isEmpty()
                                         && seen(node).configs.last().find(key)
                                         && seen(node).configs.last().find(key)->value == "v2",
                                 Timeout);
    }

    // Deletes are compare-and-swap too.
    auto wrongDelete = remove(c, key, rev1);
    QVERIFY(wrongDelete && !wrongDelete->ok());
    QCOMPARE(wrongDelete->error().kind, ConfigWriteError::Kind::Conflict);
    QCOMPARE(wrongDelete->error().current->modRevision, rev2);
    auto missing = remove(c, QStringLiteral("limits/absent"), 5);
    QVERIFY(missing && !missing->ok());
    QCOMPARE(missing->error().kind, ConfigWriteError::Kind::Conflict);
    QVERIFY(!missing->error().current);
    auto deleted = remove(c, key, rev2);
    QVERIFY(deleted && deleted->ok());
    QVERIFY(**deleted > rev2);
    for (ClusterBackend *node : nodes) {
        QTRY_VERIFY_WITH_TIMEOUT(!node->configSnapshot().find(key), Timeout);
        QTRY_VERIFY_WITH_TIMEOUT(!seen(node).configs.last().find(key), Timeout);
    }
    auto invalid = put(a, QString(), "x", 0);
    QVERIFY(invalid && !invalid->ok());
    QCOMPARE(invalid->error().kind, ConfigWriteError::Kind::Invalid);
}

void TstClusterBackend::temporaryOverrideTellsWhenItExpires()
{
    // The admin snapshot shows when a temporary override ends: every node learns it (etcd: from
    // the lease's time to live), a permanent entry has none, a deleted one loses it.
    ClusterBackend *a = addNode(QStringLiteral("node-a"));
    ClusterBackend *b = addNode(QStringLiteral("node-b"));
    for (ClusterBackend *node : { a, b }) {
        QVERIFY(waitAvailable(node));
    }
    const QString boost = QStringLiteral("limits/boost");
    const QString base = QStringLiteral("limits/base");
    auto permanent = put(a, base, "1", 0);
    QVERIFY(permanent && permanent->ok());
    const qint64 before = QDateTime::currentMSecsSinceEpoch();
    auto written = put(a, boost, "2", 0, 60);
    const qint64 after = QDateTime::currentMSecsSinceEpoch();
    QVERIFY(written && written->ok());
    for (ClusterBackend *node : { a, b }) {
        QTRY_VERIFY_WITH_TIMEOUT(node->configExpiries().contains(boost), Timeout);
        const qint64 expiry = node->configExpiries().value(boost);
        // etcd answers in whole seconds left: up to a second (and the lookup's time) early.
        QVERIFY2(expiry >= before + 58'000 && expiry <= after + 61'000,
                 qPrintable(QStringLiteral("%1 expires at %2, written between %3 and %4")
                                    .arg(boost)
                                    .arg(expiry)
                                    .arg(before)
                                    .arg(after)));
        QVERIFY(node->configSnapshot().find(base));
        QVERIFY(!node->configExpiries().contains(base));
    }
    auto removed = remove(b, boost, **written);
    QVERIFY(removed && removed->ok());
    for (ClusterBackend *node : { a, b }) {
        QTRY_VERIFY_WITH_TIMEOUT(!node->configExpiries().contains(boost), Timeout);
    }
}

void TstClusterBackend::temporaryOverrideExpires()
{
    ClusterBackend *a = addNode(QStringLiteral("node-a"));
    ClusterBackend *b = addNode(QStringLiteral("node-b"));
    for (ClusterBackend *node : { a, b }) {
        QVERIFY(waitAvailable(node));
    }
    auto permanent = put(a, QStringLiteral("flags/base"), "1", 0);
    QVERIFY(permanent && permanent->ok());
    auto temporary = put(a, QStringLiteral("flags/boost"), "on", 0, 1);
    QVERIFY(temporary && temporary->ok());
    for (ClusterBackend *node : { a, b }) {
        QTRY_VERIFY_WITH_TIMEOUT(node->configSnapshot().find(QStringLiteral("flags/boost")),
                                 Timeout);
        QVERIFY(node->configSnapshot().find(QStringLiteral("flags/boost"))->temporary);
    }
    passTime(1'001);
    for (ClusterBackend *node : { a, b }) {
        QTRY_VERIFY_WITH_TIMEOUT(!node->configSnapshot().find(QStringLiteral("flags/boost")),
                                 Timeout);
        QTRY_VERIFY_WITH_TIMEOUT(!seen(node).configs.last().find(QStringLiteral("flags/boost")),
                                 Timeout);
        QCOMPARE(node->configSnapshot().find(QStringLiteral("flags/base"))->value, QByteArray("1"));
    }
    // The nodes themselves are unaffected by the override's lease.
    QCOMPARE(a->members().size(), 2);
}

void TstClusterBackend::claimBeforeRegistrationFails()
{
    ClusterBackend *a = addNode(QStringLiteral("node-a"));
    QVERIFY(waitAvailable(a));
    // A second node with the same id is refused (in-process) or simply not yet registered:
    // either way a claim through a node that is not registered fails instead of hanging.
    std::unique_ptr<ClusterBackend> unstarted;
    if (isEtcd()) {
        EtcdBackendSettings settings;
        settings.endpoints = *rt::cluster::etcd::EtcdClient::parseEndpoints(m_endpoints);
        settings.prefix = m_prefix;
        unstarted = std::make_unique<EtcdClusterBackend>(settings);
    } else {
        unstarted = std::make_unique<InProcessClusterBackend>(*m_cluster);
    }
    QStringList failed;
    connect(unstarted.get(), &ClusterBackend::claimFailed, this,
            [&failed](const QString &resource, const QString &) { failed.append(resource); });
    unstarted->claim(QStringLiteral("x"), "{}");
    QVERIFY(failed.isEmpty()); // never from inside the call
    QTRY_COMPARE_WITH_TIMEOUT(failed, QStringList{ QStringLiteral("x") }, Timeout);
    QVERIFY(!a->claimOf(QStringLiteral("x")));
}

void TstClusterBackend::droppedWatchResumesWithoutMissingEvents()
{
    if (!isEtcd()) {
        QSKIP("etcd only: in-process has no stream to lose");
    }
    auto *a = static_cast<EtcdClusterBackend *>(addNode(QStringLiteral("node-a")));
    ClusterBackend *b = addNode(QStringLiteral("node-b"));
    QVERIFY(waitAvailable(a));
    QVERIFY(waitAvailable(b));
    QTRY_COMPARE_WITH_TIMEOUT(a->members().size(), 2, Timeout);

    a->dropWatchForTesting(true); // cut, and kept down while b makes changes
    QTRY_COMPARE_WITH_TIMEOUT(seen(a).unavailable, 1, Timeout);
    const qint64 before = a->revision();
    seen(a).changed.clear();
    const int configsBefore = int(seen(a).configs.size());

    // A claim that lives and dies entirely while a is not listening: a reload would miss it,
    // only a watch resumed at the right revision shows it.
    const QString transient = QStringLiteral("cdc/transient");
    b->claim(transient, meta("starting", QStringLiteral("node-b")));
    QTRY_COMPARE_WITH_TIMEOUT(seen(b).granted, QStringList{ transient }, Timeout);
    b->updateClaim(transient, meta("ready", QStringLiteral("node-b")));
    QTRY_VERIFY_WITH_TIMEOUT(b->claimOf(transient)
                                     && b->claimOf(transient)->metadata
                                             == meta("ready", QStringLiteral("node-b")),
                             Timeout);
    b->release(transient);
    QTRY_VERIFY_WITH_TIMEOUT(!b->claimOf(transient), Timeout);
    for (int i = 1; i <= 3; ++i) {
        auto written = put(b, QStringLiteral("k%1").arg(i), QByteArray::number(i), 0);
        QVERIFY(written && written->ok());
    }
    QCOMPARE(a->revision(), before); // a really heard nothing meanwhile
    QVERIFY(!a->configSnapshot().find(QStringLiteral("k1")));

    a->resumeWatchForTesting();
    QTRY_VERIFY_WITH_TIMEOUT(a->isAvailable(), Timeout);
    QTRY_COMPARE_WITH_TIMEOUT(a->configSnapshot().entries.size(), 3, Timeout);
    QCOMPARE(seen(a).available, 2);
    // Every step of the transient claim arrived, in order.
    QList<std::optional<Claim>> steps;
    for (const auto &[resource, claim] : std::as_const(seen(a).changed)) {
        if (resource == transient) {
            steps.append(claim);
        }
    }
    QCOMPARE(steps.size(), 3);
    QVERIFY(steps[0] && steps[0]->metadata == meta("starting", QStringLiteral("node-b")));
    QVERIFY(steps[1] && steps[1]->metadata == meta("ready", QStringLiteral("node-b")));
    QVERIFY(!steps[2]);
    QVERIFY(seen(a).configs.size() > configsBefore);
    QCOMPARE(seen(a).configs.last(), a->configSnapshot());
    QCOMPARE(a->revision(), static_cast<EtcdClusterBackend *>(b)->revision());
}

void TstClusterBackend::unavailableThenRecovery()
{
    if (!isEtcd()) {
        QSKIP("etcd only: in-process cannot become unreachable");
    }
    rt::testsupport::ScratchEtcd etcd;
    QString error;
    QVERIFY2(etcd.start(&error), qPrintable(error));
    auto *a =
            static_cast<EtcdClusterBackend *>(addNode(QStringLiteral("node-a"), etcd.endpoints()));
    ClusterBackend *b = addNode(QStringLiteral("node-b"), etcd.endpoints());
    QVERIFY(waitAvailable(a));
    QVERIFY(waitAvailable(b));
    auto written = put(b, QStringLiteral("region-map"), "eu=node-a", 0);
    QVERIFY(written && written->ok());
    QTRY_VERIFY_WITH_TIMEOUT(a->configSnapshot().find(QStringLiteral("region-map")), Timeout);
    const QString held = QStringLiteral("cdc/held");
    a->claim(held, "{}");
    QTRY_COMPARE_WITH_TIMEOUT(seen(a).granted, QStringList{ held }, Timeout);
    QTRY_VERIFY_WITH_TIMEOUT(a->claimOf(held), Timeout);
    const ConfigSnapshot lastKnown = a->configSnapshot();

    QVERIFY2(etcd.halt(&error), qPrintable(error));
    QTRY_COMPARE_WITH_TIMEOUT(seen(a).unavailable, 1, Timeout);
    QTRY_COMPARE_WITH_TIMEOUT(seen(b).unavailable, 1, Timeout);
    QVERIFY(!a->isAvailable());
    // Last known good: configuration and members are still served.
    QCOMPARE(a->configSnapshot(), lastKnown);
    QCOMPARE(a->members().size(), 2);
    auto refused = put(a, QStringLiteral("region-map"), "eu=node-b", lastKnown.revision);
    QVERIFY(refused && !refused->ok());
    QCOMPARE(refused->error().kind, ConfigWriteError::Kind::Unavailable);

    // Unreachable for longer than the lease TTL: the lease may have expired and another node may
    // own the resource now, so a gives it up.
    QTRY_COMPARE_WITH_TIMEOUT(seen(a).lost, QStringList{ held }, Timeout);
    QVERIFY(a->ownedClaims().isEmpty());

    QVERIFY2(etcd.resume(&error), qPrintable(error));
    QTRY_COMPARE_WITH_TIMEOUT(seen(a).available, 2, Timeout);
    QTRY_COMPARE_WITH_TIMEOUT(seen(b).available, 2, Timeout);
    // The change made after recovery reaches a through its resumed watch.
    const qint64 modRevision = a->configSnapshot().find(QStringLiteral("region-map"))->modRevision;
    auto changed = put(b, QStringLiteral("region-map"), "eu=node-b", modRevision);
    QVERIFY(changed && changed->ok());
    QTRY_COMPARE_WITH_TIMEOUT(a->configSnapshot().find(QStringLiteral("region-map"))->value,
                              QByteArray("eu=node-b"), Timeout);
    QCOMPARE(a->members().size(), 2);
    // etcd restores leases when it restarts, so a's claim survived there; a gave it up, so it
    // deletes it and the resource is free for anyone (here b).
    QTRY_VERIFY_WITH_TIMEOUT(!b->claimOf(held), Timeout);
    b->claim(held, "{}");
    QTRY_COMPARE_WITH_TIMEOUT(seen(b).granted, QStringList{ held }, Timeout);
    QTRY_VERIFY_WITH_TIMEOUT(a->claimOf(held) && a->claimOf(held)->owner == b->nodeId(), Timeout);
    m_nodes.clear(); // before the private etcd goes away
}

void TstClusterBackend::lostLeaseRegistersAgain()
{
    if (!isEtcd()) {
        QSKIP("etcd only: an in-process lease cannot be lost behind the node's back");
    }
    auto *a = static_cast<EtcdClusterBackend *>(addNode(QStringLiteral("node-a")));
    ClusterBackend *b = addNode(QStringLiteral("node-b"));
    QVERIFY(waitAvailable(a));
    QVERIFY(waitAvailable(b));
    const QString resource = QStringLiteral("cdc/lease");
    a->claim(resource, "{}");
    QTRY_COMPARE_WITH_TIMEOUT(seen(a).granted, QStringList{ resource }, Timeout);
    const qint64 oldLease = a->leaseId();

    // The lease vanishes behind a's back (as after a partition longer than the TTL).
    rt::cluster::etcd::EtcdClient admin(
            *rt::cluster::etcd::EtcdClient::parseEndpoints(m_endpoints));
    bool revoked = false;
    admin.leaseRevoke(oldLease, [&revoked](rt::cluster::etcd::EtcdResult<qint64> result) {
        revoked = result.ok();
    });
    QTRY_VERIFY_WITH_TIMEOUT(revoked, Timeout);
    QTRY_COMPARE_WITH_TIMEOUT(seen(a).lost, QStringList{ resource }, Timeout);
    QTRY_VERIFY_WITH_TIMEOUT(!b->claimOf(resource), Timeout);
    // a registers again under a new lease and is a member everywhere again.
    QTRY_VERIFY_WITH_TIMEOUT(a->leaseId() != 0 && a->leaseId() != oldLease, Timeout);
    for (ClusterBackend *node : { static_cast<ClusterBackend *>(a), b }) {
        QTRY_COMPARE_WITH_TIMEOUT(
                ids(node->members()),
                QStringList({ QStringLiteral("node-a"), QStringLiteral("node-b") }), Timeout);
    }
    QTRY_VERIFY_WITH_TIMEOUT(a->isAvailable(), Timeout);
    a->claim(resource, "{}");
    QTRY_COMPARE_WITH_TIMEOUT(seen(a).granted.size(), 2, Timeout);
}

void TstClusterBackend::endpointFailover()
{
    if (!isEtcd()) {
        QSKIP("etcd only: in-process has no endpoints");
    }
    // The first endpoint refuses connections (port 1): requests and the watch move on.
    ClusterBackend *a =
            addNode(QStringLiteral("node-a"), QStringLiteral("http://127.0.0.1:1,") + m_endpoints);
    QVERIFY(waitAvailable(a));
    auto written = put(a, QStringLiteral("k"), "v", 0);
    QVERIFY(written && written->ok());
    QTRY_VERIFY_WITH_TIMEOUT(a->configSnapshot().find(QStringLiteral("k")), Timeout);
    QCOMPARE(ids(a->members()), QStringList{ QStringLiteral("node-a") });
}

void TstClusterBackend::compactedWatchReloads()
{
    if (!isEtcd()) {
        QSKIP("etcd only: in-process keeps no history to compact");
    }
    auto *a = static_cast<EtcdClusterBackend *>(addNode(QStringLiteral("node-a")));
    auto *b = static_cast<EtcdClusterBackend *>(addNode(QStringLiteral("node-b")));
    QVERIFY(waitAvailable(a));
    QVERIFY(waitAvailable(b));
    auto gone = put(b, QStringLiteral("gone"), "x", 0);
    QVERIFY(gone && gone->ok());
    QTRY_VERIFY_WITH_TIMEOUT(a->configSnapshot().find(QStringLiteral("gone")), Timeout);

    a->dropWatchForTesting(true);
    auto removed = remove(b, QStringLiteral("gone"), **gone);
    QVERIFY(removed && removed->ok());
    auto added = put(b, QStringLiteral("added"), "y", 0);
    QVERIFY(added && added->ok());
    // Compact the history a would resume from.
    QNetworkAccessManager network;
    QUrl url = rt::cluster::etcd::EtcdClient::parseEndpoints(m_endpoints)->first();
    url.setPath(QStringLiteral("/v3/kv/compaction"));
    QNetworkRequest request(url);
    request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
    std::unique_ptr<QNetworkReply> reply(network.post(request,
                                                      QByteArrayLiteral("{\"revision\":\"")
                                                              + QByteArray::number(**added)
                                                              + QByteArrayLiteral("\"}")));
    QTRY_VERIFY_WITH_TIMEOUT(reply->isFinished(), Timeout);
    QCOMPARE(reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(), 200);

    a->resumeWatchForTesting(); // canceled as compacted: a reads everything again
    QTRY_VERIFY_WITH_TIMEOUT(a->configSnapshot().find(QStringLiteral("added")), Timeout);
    QVERIFY(!a->configSnapshot().find(QStringLiteral("gone")));
    QTRY_VERIFY_WITH_TIMEOUT(a->isAvailable(), Timeout);
    QCOMPARE(seen(a).configs.last(), a->configSnapshot());
    // And it watches again from there.
    auto after = put(b, QStringLiteral("after"), "z", 0);
    QVERIFY(after && after->ok());
    QTRY_VERIFY_WITH_TIMEOUT(a->configSnapshot().find(QStringLiteral("after")), Timeout);
    QCOMPARE(ids(a->members()),
             QStringList({ QStringLiteral("node-a"), QStringLiteral("node-b") }));
}

QTEST_GUILESS_MAIN(TstClusterBackend)
#include "tst_cluster_backend.moc"
