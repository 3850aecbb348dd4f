// Placement (seed 000): all deciders agree within a time bucket whatever their member order,
// tenants spread over nodes and over buckets, the lower load wins between the two candidates,
// missing load data falls back to hashing over sorted nodes, regions filter and map, and the
// degenerate clusters (no node in the region, one node) behave.
#include "server/cluster/placement/placement.h"
#include "server/cluster/placement/stable_hash.h"

#include <QSet>
#include <QTest>

#include <algorithm>
#include <random>

using namespace rt::cluster::placement;

namespace {

constexpr qint64 T0 = 1'700'000'040'000; // 28,333,334 × 60 s: the start of a 60 s bucket
static_assert(T0 % 60'000 == 0);

QList<NodeCandidate> equalNodes(int count, const QString &region = QStringLiteral("eu"),
                                std::optional<double> load = 1.0)
{
    QList<NodeCandidate> nodes;
    for (int i = 0; i < count; ++i) {
        nodes.append({ QStringLiteral("node-%1").arg(i), region, load });
    }
    return nodes;
}

PlacementInput input(const QString &tenant, const QList<NodeCandidate> &nodes, qint64 epochMs = T0)
{
    PlacementInput in;
    in.tenantId = tenant;
    in.tenantRegion = QStringLiteral("eu");
    in.selfNodeId = QStringLiteral("self");
    in.selfRegion = QStringLiteral("eu");
    in.epochMs = epochMs;
    in.nodes = nodes;
    return in;
}

} // namespace

class PlacementTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void stableHashIsFixed();
    void agreementWithinBucketWhateverTheOrder();
    void agreementAcrossDecidersWithDifferentSelf();
    void spreadOverTenants_data();
    void spreadOverTenants();
    void spreadOverBuckets();
    void candidatesAreDistinctAndInRange();
    void lowerLoadWins();
    void tieGoesToFirstCandidate();
    void fallbackToConsistentHashWhenNoData();
    void consistentHashIgnoresOrderAndBucket();
    void invalidLoadsCountAsNoData();
    void regionFiltering();
    void regionMapping();
    void defaultTenantRegion();
    void noCandidatesMeansSelf();
    void singleNode();
    void duplicateMembersDoNotChangeTheAnswer();
    void reportedLoadHonoursUptimeThreshold();
    void timeBuckets();
    void loadCacheKeepsFirstFigureForTheBucket();
};

void PlacementTest::stableHashIsFixed()
{
    // Published FNV-1a 64 test vectors: the hash must never depend on the process.
    QCOMPARE(fnv1a64(QByteArrayView("")), 0xcbf29ce484222325ULL);
    QCOMPARE(fnv1a64(QByteArrayView("a")), 0xaf63dc4c8601ec8cULL);
    QCOMPARE(fnv1a64(QByteArrayView("foobar")), 0x85944171f73967e8ULL);
    // The QString overload hashes UTF-8.
    QCOMPARE(fnv1a64(QStringView(u"grüße")),
             fnv1a64(QByteArrayView("gr\xc3\xbc\xc3\x9f"
                                    "e")));
    // SplitMix64's reference first output for seed 0.
    SplitMix64 rng(0);
    QCOMPARE(rng.next(), 0xe220a8397b1dcdafULL);
    // Pinned draws (computed independently with a Python model of FNV-1a + SplitMix64): if
    // these change, nodes running different versions would disagree about placement.
    QCOMPARE(candidatePair(QStringLiteral("tenant-a"), 28'333'333, 4), std::make_pair(1, 2));
    QCOMPARE(candidatePair(QStringLiteral("tenant-a"), 28'333'334, 4), std::make_pair(3, 1));
    QCOMPARE(candidatePair(QStringLiteral("tenant-b"), 28'333'334, 7), std::make_pair(4, 1));
    QCOMPARE(consistentIndex(QStringLiteral("tenant-a"), 4), 3);
    QCOMPARE(consistentIndex(QStringLiteral("tenant-b"), 7), 6);
}

void PlacementTest::agreementWithinBucketWhateverTheOrder()
{
    QList<NodeCandidate> nodes = equalNodes(7);
    for (int i = 0; i < nodes.size(); ++i) {
        nodes[i].load = 0.5 + 0.25 * ((i * 5) % 7);
    }
    std::mt19937 shuffle(42);
    for (int t = 0; t < 500; ++t) {
        const QString tenant = QStringLiteral("tenant-%1").arg(t);
        const PlacementDecision reference = placeTenant(input(tenant, nodes), {});
        QCOMPARE(reference.reason, PlacementReason::LowerLoad);
        for (int round = 0; round < 5; ++round) {
            QList<NodeCandidate> shuffled = nodes;
            std::shuffle(shuffled.begin(), shuffled.end(), shuffle);
            // Any instant inside the same 60 s bucket.
            const qint64 when = T0 + (round * 13'999) % 60'000;
            const PlacementDecision d = placeTenant(input(tenant, shuffled, when), {});
            QCOMPARE(d.nodeId, reference.nodeId);
            QCOMPARE(d.candidates, reference.candidates);
        }
    }
}

void PlacementTest::agreementAcrossDecidersWithDifferentSelf()
{
    // The deciding node's identity must not matter while the region has nodes.
    const QList<NodeCandidate> nodes = equalNodes(4);
    for (int t = 0; t < 200; ++t) {
        PlacementInput a = input(QStringLiteral("t%1").arg(t), nodes);
        PlacementInput b = a;
        a.selfNodeId = QStringLiteral("node-0");
        b.selfNodeId = QStringLiteral("node-3");
        QCOMPARE(placeTenant(a, {}).nodeId, placeTenant(b, {}).nodeId);
    }
}

void PlacementTest::spreadOverTenants_data()
{
    QTest::addColumn<bool>("withLoad");
    QTest::newRow("equal loads") << true;
    QTest::newRow("no load data (consistent hash)") << false;
}

void PlacementTest::spreadOverTenants()
{
    QFETCH(bool, withLoad);
    const QList<NodeCandidate> nodes = equalNodes(
            4, QStringLiteral("eu"), withLoad ? std::optional<double>(1.0) : std::nullopt);
    QHash<QString, int> counts;
    constexpr int Tenants = 10'000;
    for (int t = 0; t < Tenants; ++t) {
        ++counts[placeTenant(input(QStringLiteral("tenant-%1").arg(t), nodes), {}).nodeId];
    }
    QCOMPARE(counts.size(), 4);
    for (auto it = counts.cbegin(); it != counts.cend(); ++it) {
        const double share = double(it.value()) / Tenants;
        QVERIFY2(share >= 0.15 && share <= 0.35,
                 qPrintable(QStringLiteral("%1 got %2").arg(it.key()).arg(share)));
    }
}

void PlacementTest::spreadOverBuckets()
{
    // One tenant decided in 1,000 consecutive buckets visits every node, roughly evenly.
    const QList<NodeCandidate> nodes = equalNodes(4);
    QHash<QString, int> counts;
    QSet<QString> pairs;
    for (int b = 0; b < 1000; ++b) {
        const PlacementDecision d =
                placeTenant(input(QStringLiteral("tenant-x"), nodes, T0 + b * 60'000LL), {});
        ++counts[d.nodeId];
        pairs.insert(d.candidates.join(u','));
    }
    QCOMPARE(counts.size(), 4);
    for (const int c : std::as_const(counts)) {
        QVERIFY2(c >= 150 && c <= 350, qPrintable(QString::number(c)));
    }
    QCOMPARE(pairs.size(), 12); // every ordered pair of distinct nodes shows up
}

void PlacementTest::candidatesAreDistinctAndInRange()
{
    for (int n = 2; n <= 9; ++n) {
        for (int t = 0; t < 300; ++t) {
            const auto [a, b] = candidatePair(QStringLiteral("t%1").arg(t), t * 7, n);
            QVERIFY(a != b);
            QVERIFY(a >= 0 && a < n);
            QVERIFY(b >= 0 && b < n);
        }
    }
    QCOMPARE(candidatePair(QStringLiteral("t"), 1, 1), std::make_pair(0, 0));
    QCOMPARE(candidatePair(QStringLiteral("t"), 1, 0), std::make_pair(0, 0));
}

void PlacementTest::lowerLoadWins()
{
    for (int t = 0; t < 300; ++t) {
        QList<NodeCandidate> nodes = equalNodes(5);
        const QString tenant = QStringLiteral("tenant-%1").arg(t);
        const PlacementDecision drawn = placeTenant(input(tenant, nodes), {});
        QCOMPARE(drawn.candidates.size(), 2);
        // Make the second candidate strictly less loaded: it must win; then the first.
        for (NodeCandidate &node : nodes) {
            node.load = node.nodeId == drawn.candidates.at(1) ? 0.25 : 3.0;
        }
        PlacementDecision d = placeTenant(input(tenant, nodes), {});
        QCOMPARE(d.reason, PlacementReason::LowerLoad);
        QCOMPARE(d.nodeId, drawn.candidates.at(1));
        for (NodeCandidate &node : nodes) {
            node.load = node.nodeId == drawn.candidates.at(0) ? 0.25 : 3.0;
        }
        d = placeTenant(input(tenant, nodes), {});
        QCOMPARE(d.nodeId, drawn.candidates.at(0));
    }
}

void PlacementTest::tieGoesToFirstCandidate()
{
    const PlacementDecision d = placeTenant(input(QStringLiteral("tie"), equalNodes(3)), {});
    QCOMPARE(d.reason, PlacementReason::LowerLoad);
    QCOMPARE(d.nodeId, d.candidates.at(0));
}

void PlacementTest::fallbackToConsistentHashWhenNoData()
{
    for (int t = 0; t < 200; ++t) {
        const QString tenant = QStringLiteral("tenant-%1").arg(t);
        QList<NodeCandidate> nodes = equalNodes(6);
        const PlacementDecision drawn = placeTenant(input(tenant, nodes), {});
        const QStringList sorted = regionNodes(nodes, QStringLiteral("eu"));
        const QString hashed = sorted.at(consistentIndex(tenant, 6));
        // Either candidate without data sends the tenant to the hashed node, whatever the
        // other loads say.
        for (int missing = 0; missing < 2; ++missing) {
            for (NodeCandidate &node : nodes) {
                node.load = node.nodeId == drawn.candidates.at(missing)
                        ? std::nullopt
                        : std::optional<double>(node.nodeId == hashed ? 99.0 : 0.1);
            }
            const PlacementDecision d = placeTenant(input(tenant, nodes), {});
            QCOMPARE(d.reason, PlacementReason::ConsistentHash);
            QCOMPARE(d.candidates, drawn.candidates);
            QCOMPARE(d.nodeId, hashed);
        }
    }
}

void PlacementTest::consistentHashIgnoresOrderAndBucket()
{
    QList<NodeCandidate> nodes = equalNodes(5, QStringLiteral("eu"), std::nullopt);
    const QString first = placeTenant(input(QStringLiteral("tenant-h"), nodes), {}).nodeId;
    std::reverse(nodes.begin(), nodes.end());
    for (int b = 0; b < 50; ++b) {
        const auto d = placeTenant(input(QStringLiteral("tenant-h"), nodes, T0 + b * 60'000LL), {});
        QCOMPARE(d.reason, PlacementReason::ConsistentHash);
        QCOMPARE(d.nodeId, first);
    }
}

void PlacementTest::invalidLoadsCountAsNoData()
{
    const double bad[] = { -1.0, std::numeric_limits<double>::quiet_NaN(),
                           std::numeric_limits<double>::infinity() };
    for (const double value : bad) {
        const PlacementDecision d = placeTenant(
                input(QStringLiteral("tenant-bad"), equalNodes(2, QStringLiteral("eu"), value)),
                {});
        QCOMPARE(d.reason, PlacementReason::ConsistentHash);
    }
}

void PlacementTest::regionFiltering()
{
    QList<NodeCandidate> nodes = equalNodes(3, QStringLiteral("eu"));
    nodes += equalNodes(3, QStringLiteral("us"));
    for (int i = 3; i < 6; ++i) {
        nodes[i].nodeId = QStringLiteral("us-node-%1").arg(i);
    }
    for (int t = 0; t < 300; ++t) {
        PlacementInput in = input(QStringLiteral("tenant-%1").arg(t), nodes);
        in.tenantRegion = QStringLiteral("us");
        const PlacementDecision d = placeTenant(in, {});
        QVERIFY2(d.nodeId.startsWith(u"us-node-"), qPrintable(d.nodeId));
        QCOMPARE(d.region, QStringLiteral("us"));
        for (const QString &candidate : d.candidates) {
            QVERIFY(candidate.startsWith(u"us-node-"));
        }
    }
    QCOMPARE(regionNodes(nodes, QStringLiteral("us")),
             (QStringList{ QStringLiteral("us-node-3"), QStringLiteral("us-node-4"),
                           QStringLiteral("us-node-5") }));
}

void PlacementTest::regionMapping()
{
    PlacementSettings settings;
    settings.regionMapping.insert(QStringLiteral("eu-central-1"), QStringLiteral("eu-west-2"));
    settings.regionMapping.insert(QStringLiteral("eu-west-1"), QStringLiteral("eu-west-2"));
    QCOMPARE(platformRegion(QStringLiteral("eu-central-1"), QStringLiteral("x"), settings),
             QStringLiteral("eu-west-2"));
    // Unmapped regions map to themselves.
    QCOMPARE(platformRegion(QStringLiteral("us-east-1"), QStringLiteral("x"), settings),
             QStringLiteral("us-east-1"));

    QList<NodeCandidate> nodes = equalNodes(3, QStringLiteral("eu-west-2"));
    nodes.append({ QStringLiteral("other"), QStringLiteral("eu-central-1"), 0.0 });
    for (int t = 0; t < 100; ++t) {
        PlacementInput in = input(QStringLiteral("tenant-%1").arg(t), nodes);
        in.tenantRegion = QStringLiteral("eu-central-1");
        const PlacementDecision d = placeTenant(in, settings);
        QCOMPARE(d.region, QStringLiteral("eu-west-2"));
        QVERIFY(d.nodeId.startsWith(u"node-"));
    }
}

void PlacementTest::defaultTenantRegion()
{
    QList<NodeCandidate> nodes = equalNodes(2, QStringLiteral("local"));
    nodes.append({ QStringLiteral("far"), QStringLiteral("far-region"), 1.0 });
    PlacementInput in = input(QStringLiteral("tenant"), nodes);
    in.tenantRegion.clear();
    in.selfRegion = QStringLiteral("local");
    PlacementDecision d = placeTenant(in, {});
    QCOMPARE(d.region, QStringLiteral("local"));
    QVERIFY(d.nodeId.startsWith(u"node-"));

    PlacementSettings settings;
    settings.defaultTenantRegion = QStringLiteral("far-region");
    d = placeTenant(in, settings);
    QCOMPARE(d.region, QStringLiteral("far-region"));
    QCOMPARE(d.nodeId, QStringLiteral("far"));
    QCOMPARE(d.reason, PlacementReason::SingleNode);
}

void PlacementTest::noCandidatesMeansSelf()
{
    PlacementInput in = input(QStringLiteral("tenant"), equalNodes(3, QStringLiteral("eu")));
    in.tenantRegion = QStringLiteral("ap-south-1");
    const PlacementDecision d = placeTenant(in, {});
    QCOMPARE(d.nodeId, QStringLiteral("self"));
    QCOMPARE(d.reason, PlacementReason::NoRegionNodes);
    QVERIFY(d.candidates.isEmpty());

    in.nodes.clear();
    QCOMPARE(placeTenant(in, {}).nodeId, QStringLiteral("self"));
}

void PlacementTest::singleNode()
{
    // The one node of the region runs it, even with no load data and even if it is not self.
    const PlacementDecision d = placeTenant(
            input(QStringLiteral("tenant"), equalNodes(1, QStringLiteral("eu"), std::nullopt)), {});
    QCOMPARE(d.nodeId, QStringLiteral("node-0"));
    QCOMPARE(d.reason, PlacementReason::SingleNode);
}

void PlacementTest::duplicateMembersDoNotChangeTheAnswer()
{
    QList<NodeCandidate> nodes = equalNodes(4);
    QList<NodeCandidate> doubled = nodes + nodes;
    std::reverse(doubled.begin(), doubled.end());
    for (int t = 0; t < 100; ++t) {
        const QString tenant = QStringLiteral("tenant-%1").arg(t);
        QCOMPARE(placeTenant(input(tenant, doubled), {}).nodeId,
                 placeTenant(input(tenant, nodes), {}).nodeId);
    }
    // Nodes with an empty id are ignored.
    nodes.append({ QString(), QStringLiteral("eu"), 0.0 });
    QCOMPARE(regionNodes(nodes, QStringLiteral("eu")).size(), 4);
}

void PlacementTest::reportedLoadHonoursUptimeThreshold()
{
    PlacementSettings settings;
    settings.uptimeThreshold = std::chrono::minutes(5);
    QCOMPARE(reportedLoad(0, 0.3, settings), std::nullopt);
    QCOMPARE(reportedLoad(5 * 60'000 - 1, 0.3, settings), std::nullopt);
    QCOMPARE(reportedLoad(5 * 60'000, 0.3, settings), std::optional<double>(0.3));
    QCOMPARE(reportedLoad(10 * 60'000, std::nullopt, settings), std::nullopt);
    QCOMPARE(reportedLoad(10 * 60'000, -2.0, settings), std::nullopt);
}

void PlacementTest::timeBuckets()
{
    PlacementSettings settings; // 60 s
    QCOMPARE(timeBucket(0, settings), 0);
    QCOMPARE(timeBucket(59'999, settings), 0);
    QCOMPARE(timeBucket(60'000, settings), 1);
    QCOMPARE(timeBucket(-1, settings), -1);
    settings.timeBucket = std::chrono::seconds(10);
    QCOMPARE(timeBucket(25'000, settings), 2);
    settings.timeBucket = std::chrono::seconds(0); // counts as 1 s
    QCOMPARE(timeBucket(2'500, settings), 2);

    // A different bucket width changes the pairs drawn.
    QList<NodeCandidate> nodes = equalNodes(8);
    settings.timeBucket = std::chrono::seconds(60);
    PlacementSettings narrow;
    narrow.timeBucket = std::chrono::seconds(1);
    int differ = 0;
    for (int t = 0; t < 100; ++t) {
        const auto in = input(QStringLiteral("t%1").arg(t), nodes);
        differ += placeTenant(in, settings).candidates != placeTenant(in, narrow).candidates;
    }
    QVERIFY(differ > 50);
}

void PlacementTest::loadCacheKeepsFirstFigureForTheBucket()
{
    LoadCache cache;
    const QString node = QStringLiteral("node-1");
    QCOMPARE(cache.lookup(node, 7), std::nullopt);
    QCOMPARE(cache.resolve(node, 7, 0.5), std::optional<double>(0.5));
    // Later figures in the same bucket do not change the answer.
    QCOMPARE(cache.resolve(node, 7, 9.0), std::optional<double>(0.5));
    QCOMPARE(cache.lookup(node, 7), std::optional<std::optional<double>>(0.5));
    // "Not enough data" is cached too.
    QCOMPARE(cache.resolve(QStringLiteral("young"), 7, std::nullopt), std::nullopt);
    QCOMPARE(cache.resolve(QStringLiteral("young"), 7, 1.0), std::nullopt);
    QVERIFY(cache.lookup(QStringLiteral("young"), 7).has_value());
    // A new bucket takes the fresh figure.
    QCOMPARE(cache.resolve(node, 8, 2.0), std::optional<double>(2.0));
    QCOMPARE(cache.lookup(node, 7), std::nullopt);
    cache.dropBefore(8);
    QCOMPARE(cache.size(), 1);
    cache.forget(node);
    QCOMPARE(cache.size(), 0);
}

QTEST_GUILESS_MAIN(PlacementTest)
#include "tst_placement.moc"
