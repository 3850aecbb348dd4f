// The interest protocol's pure parts: frame codecs (round trips, every truncation and hostile
// count refused), LocalInterest (numbered updates, coalescing, syncs of what was announced) and
// InterestMap (targeting Known peers by tenant, flooding Unknown ones within the flood scope,
// gaps, epochs and checks forcing a sync, departed peers forgotten, sync request pacing).
#include "server/pubsub/cluster_interest.h"

#include <QTest>

using rt::pubsub::ClusterPeer;
using rt::pubsub::FloodScope;
using rt::pubsub::InterestChange;
using rt::pubsub::InterestMap;
using rt::pubsub::InterestSync;
using rt::pubsub::InterestUpdate;
using rt::pubsub::LocalInterest;
using Outcome = rt::pubsub::InterestMap::UpdateOutcome;
using State = rt::pubsub::InterestMap::PeerState;

namespace {

const QString Local = QStringLiteral("local");

QStringList ids(std::initializer_list<const char *> names)
{
    QStringList list;
    for (const char *name : names) {
        list.append(QString::fromLatin1(name));
    }
    return list;
}

QStringList sorted(QStringList list)
{
    list.sort();
    return list;
}

QStringList targetsOf(const InterestMap &map, const QByteArray &tenant,
                      FloodScope scope = FloodScope::Region, const QString &region = Local)
{
    return sorted(map.targets(tenant, region, scope).nodes);
}

// b, c, d in this node's region; e elsewhere.
InterestMap fourPeers()
{
    InterestMap map(QStringLiteral("a"));
    map.setPeers({ { QStringLiteral("a"), Local },
                   { QStringLiteral("b"), Local },
                   { QStringLiteral("c"), Local },
                   { QStringLiteral("d"), Local },
                   { QStringLiteral("e"), QStringLiteral("far") } });
    return map;
}

InterestSync syncOf(quint64 epoch, quint64 seq, QList<QByteArray> tenants)
{
    return InterestSync{ epoch, seq, std::move(tenants) };
}

} // namespace

class ClusterInterestTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void updateRoundTrip();
    void syncRoundTrip();
    void syncRequestRoundTrip();
    void ackRoundTrip();
    void truncatedFramesAreErrors();
    void hostileCountsAreErrors();
    void badFieldsAreErrors();

    void localInterestNumbersUpdates();
    void localInterestCoalesces();
    void localSyncIsWhatWasAnnounced();

    void unknownPeersAreFloodedWithinTheRegion();
    void clusterScopeFloodsEveryUnknownPeer();
    void knownPeersGetOnlyTheirTenants();
    void updatesApplyInOrder();
    void gapForcesASync();
    void newEpochForcesASync();
    void checksDetectALostLastUpdate();
    void updatesFromUnknownPeersAskForASync();
    void staleSyncIsIgnored();
    void markUnknownFloodsAgain();
    void heldNumberingIsWhatWasApplied();
    void departedPeersAreForgotten();
    void framesFromNonPeersAreIgnored();
    void syncRequestsArePaced();
};

void ClusterInterestTest::updateRoundTrip()
{
    const InterestUpdate update{ 0x0102030405060708ULL,
                                 77,
                                 { InterestChange{ "t1", true }, InterestChange{ "t2", false } } };
    const auto decoded = rt::pubsub::decodeInterestUpdate(rt::pubsub::encodeInterestUpdate(update));
    QVERIFY(decoded.ok());
    QCOMPARE(*decoded, update);

    const InterestUpdate check{ 9, 3, {} };
    QCOMPARE(rt::pubsub::decodeInterestUpdate(rt::pubsub::encodeInterestUpdate(check)).value(),
             check);
}

void ClusterInterestTest::syncRoundTrip()
{
    const InterestSync sync{ 5, 6, { "alpha", "beta", QByteArray(300, 'x') } };
    const auto decoded = rt::pubsub::decodeInterestSync(rt::pubsub::encodeInterestSync(sync));
    QVERIFY(decoded.ok());
    QCOMPARE(*decoded, sync);
    const InterestSync empty{ 5, 0, {} };
    QCOMPARE(rt::pubsub::decodeInterestSync(rt::pubsub::encodeInterestSync(empty)).value(), empty);
}

void ClusterInterestTest::syncRequestRoundTrip()
{
    QVERIFY(rt::pubsub::decodeInterestSyncRequest(rt::pubsub::encodeInterestSyncRequest()).ok());
    QVERIFY(!rt::pubsub::decodeInterestSyncRequest(QByteArray()).ok());
    QVERIFY(!rt::pubsub::decodeInterestSyncRequest(QByteArray("\x01\x00", 2)).ok());
    QVERIFY(!rt::pubsub::decodeInterestSyncRequest(QByteArray("\x02", 1)).ok());
}

void ClusterInterestTest::ackRoundTrip()
{
    const rt::pubsub::InterestAck ack{ 0xfedcba9876543210ULL, 12 };
    const QByteArray bytes = rt::pubsub::encodeInterestAck(ack);
    QCOMPARE(bytes.size(), 17);
    QCOMPARE(rt::pubsub::decodeInterestAck(bytes).value(), ack);
    for (qsizetype size = 0; size < bytes.size(); ++size) {
        QVERIFY(!rt::pubsub::decodeInterestAck(QByteArrayView(bytes).first(size)).ok());
    }
    QVERIFY(!rt::pubsub::decodeInterestAck(QByteArray(bytes + 'x')).ok());
    QByteArray otherVersion = bytes;
    otherVersion[0] = 2;
    QVERIFY(!rt::pubsub::decodeInterestAck(otherVersion).ok());
}

void ClusterInterestTest::truncatedFramesAreErrors()
{
    const QByteArray update = rt::pubsub::encodeInterestUpdate(
            InterestUpdate{ 1, 2, { InterestChange{ "tenant", true } } });
    for (qsizetype size = 0; size < update.size(); ++size) {
        QVERIFY(!rt::pubsub::decodeInterestUpdate(QByteArrayView(update).first(size)).ok());
    }
    QVERIFY(!rt::pubsub::decodeInterestUpdate(QByteArray(update + 'x')).ok());

    const QByteArray sync = rt::pubsub::encodeInterestSync(InterestSync{ 1, 2, { "t1", "t2" } });
    for (qsizetype size = 0; size < sync.size(); ++size) {
        QVERIFY(!rt::pubsub::decodeInterestSync(QByteArrayView(sync).first(size)).ok());
    }
    QVERIFY(!rt::pubsub::decodeInterestSync(QByteArray(sync + 'x')).ok());
}

void ClusterInterestTest::hostileCountsAreErrors()
{
    // Version, epoch, seq, then a count of 2^32 - 1 entries with nothing behind it.
    QByteArray bytes(1 + 8 + 8, '\0');
    bytes[0] = 1;
    bytes.append("\xff\xff\xff\xff", 4);
    QVERIFY(!rt::pubsub::decodeInterestUpdate(bytes).ok());
    QVERIFY(!rt::pubsub::decodeInterestSync(bytes).ok());
}

void ClusterInterestTest::badFieldsAreErrors()
{
    QByteArray update = rt::pubsub::encodeInterestUpdate(
            InterestUpdate{ 1, 2, { InterestChange{ "tenant", true } } });
    update[0] = 2;
    QVERIFY(!rt::pubsub::decodeInterestUpdate(update).ok());

    update = rt::pubsub::encodeInterestUpdate(
            InterestUpdate{ 1, 2, { InterestChange{ "tenant", true } } });
    update[1 + 8 + 8 + 4] = 2; // presence flag
    QVERIFY(!rt::pubsub::decodeInterestUpdate(update).ok());

    // Empty tenant ids mean nothing.
    QVERIFY(!rt::pubsub::decodeInterestUpdate(
                     rt::pubsub::encodeInterestUpdate(
                             InterestUpdate{ 1, 2, { InterestChange{ QByteArray(), true } } }))
                     .ok());
    QVERIFY(!rt::pubsub::decodeInterestSync(
                     rt::pubsub::encodeInterestSync(InterestSync{ 1, 2, { QByteArray() } }))
                     .ok());
}

void ClusterInterestTest::localInterestNumbersUpdates()
{
    LocalInterest local(42);
    QVERIFY(!local.takeUpdate());
    QVERIFY(local.note("t1", true));
    QVERIFY(!local.note("t1", true)); // already present
    QVERIFY(local.hasUnannouncedChanges());
    auto update = local.takeUpdate();
    QVERIFY(update);
    QCOMPARE(update->epoch, quint64(42));
    QCOMPARE(update->seq, quint64(1));
    QCOMPARE(update->changes, (QList<InterestChange>{ InterestChange{ "t1", true } }));
    QVERIFY(!local.hasUnannouncedChanges());
    QVERIFY(!local.takeUpdate());

    QVERIFY(local.note("t1", false));
    QVERIFY(!local.note("t1", false));
    QVERIFY(local.note("t2", true));
    update = local.takeUpdate();
    QVERIFY(update);
    QCOMPARE(update->seq, quint64(2));
    QCOMPARE(
            update->changes,
            (QList<InterestChange>{ InterestChange{ "t1", false }, InterestChange{ "t2", true } }));
    QCOMPARE(local.check(), (InterestUpdate{ 42, 2, {} }));
    QVERIFY(!local.note(QByteArray(), true));
}

void ClusterInterestTest::localInterestCoalesces()
{
    LocalInterest local(1);
    QVERIFY(local.note("t1", true));
    QVERIFY(local.note("t1", false));
    QVERIFY(!local.takeUpdate()); // appeared and left before anything was announced
    QCOMPARE(local.seq(), quint64(0));
}

void ClusterInterestTest::localSyncIsWhatWasAnnounced()
{
    LocalInterest local(7);
    local.note("b", true);
    local.note("a", true);
    QVERIFY(local.takeUpdate());
    local.note("c", true); // not announced yet
    QCOMPARE(local.sync(), syncOf(7, 1, { "a", "b" }));

    // A receiver holding the sync and then the next update has everything.
    InterestMap map(QStringLiteral("x"));
    map.setPeers({ { QStringLiteral("me"), Local } });
    QVERIFY(map.applySync(QStringLiteral("me"), local.sync()));
    QCOMPARE(map.applyUpdate(QStringLiteral("me"), *local.takeUpdate()), Outcome::Applied);
    QCOMPARE(map.tenantsOf(QStringLiteral("me")), (QSet<QByteArray>{ "a", "b", "c" }));
}

void ClusterInterestTest::unknownPeersAreFloodedWithinTheRegion()
{
    const InterestMap map = fourPeers();
    QCOMPARE(map.state(QStringLiteral("b")), State::Unknown);
    const InterestMap::Targets targets = map.targets("t", Local, FloodScope::Region);
    QCOMPARE(sorted(targets.nodes), (ids({ "b", "c", "d" })));
    QCOMPARE(targets.flooded, 3);
    QVERIFY(!map.state(QStringLiteral("a"))); // this node is not its own peer
}

void ClusterInterestTest::clusterScopeFloodsEveryUnknownPeer()
{
    const InterestMap map = fourPeers();
    QCOMPARE(targetsOf(map, "t", FloodScope::Cluster), (ids({ "b", "c", "d", "e" })));
    // Seen from the "far" region, only e is in the region.
    QCOMPARE(targetsOf(map, "t", FloodScope::Region, QStringLiteral("far")), ids({ "e" }));
}

void ClusterInterestTest::knownPeersGetOnlyTheirTenants()
{
    InterestMap map = fourPeers();
    QVERIFY(map.applySync(QStringLiteral("b"), syncOf(1, 0, { "t1" })));
    QVERIFY(map.applySync(QStringLiteral("c"), syncOf(2, 0, { "t2" })));
    QVERIFY(map.applySync(QStringLiteral("d"), syncOf(3, 0, {})));
    QVERIFY(map.applySync(QStringLiteral("e"), syncOf(4, 0, { "t1" })));
    QCOMPARE(targetsOf(map, "t1"), (ids({ "b", "e" })));
    QCOMPARE(map.targets("t1", Local, FloodScope::Region).flooded, 0);
    QCOMPARE(targetsOf(map, "t2"), ids({ "c" }));
    QCOMPARE(targetsOf(map, "t3"), QStringList());
}

void ClusterInterestTest::updatesApplyInOrder()
{
    InterestMap map = fourPeers();
    const QString b = QStringLiteral("b");
    QVERIFY(map.applySync(b, syncOf(9, 4, { "t1" })));
    QCOMPARE(map.applyUpdate(b, InterestUpdate{ 9, 5, { { "t2", true } } }), Outcome::Applied);
    QCOMPARE(map.applyUpdate(b, InterestUpdate{ 9, 6, { { "t1", false } } }), Outcome::Applied);
    QCOMPARE(map.tenantsOf(b), QSet<QByteArray>{ "t2" });
    QCOMPARE(map.applyUpdate(b, InterestUpdate{ 9, 6, { { "t1", true } } }), Outcome::Duplicate);
    QCOMPARE(map.tenantsOf(b), QSet<QByteArray>{ "t2" });
    QCOMPARE(map.applyUpdate(b, InterestUpdate{ 9, 6, {} }), Outcome::InSync);
    QCOMPARE(targetsOf(map, "t1"), (ids({ "c", "d" }))); // c, d still unknown
    QCOMPARE(targetsOf(map, "t2"), (ids({ "b", "c", "d" })));
}

void ClusterInterestTest::gapForcesASync()
{
    InterestMap map = fourPeers();
    const QString b = QStringLiteral("b");
    QVERIFY(map.applySync(b, syncOf(9, 4, { "t1" })));
    QCOMPARE(map.applyUpdate(b, InterestUpdate{ 9, 6, { { "t2", true } } }), Outcome::NeedSync);
    QCOMPARE(map.state(b), State::Unknown);
    QVERIFY(map.tenantsOf(b).isEmpty());
    // Unknown again: flooded until the sync arrives.
    QVERIFY(map.targets("zzz", Local, FloodScope::Region).nodes.contains(b));
    QCOMPARE(map.applyUpdate(b, InterestUpdate{ 9, 7, { { "t3", true } } }), Outcome::NeedSync);
    QVERIFY(map.applySync(b, syncOf(9, 7, { "t2", "t3" })));
    QCOMPARE(map.state(b), State::Known);
    QCOMPARE(map.applyUpdate(b, InterestUpdate{ 9, 8, { { "t3", false } } }), Outcome::Applied);
    QCOMPARE(map.tenantsOf(b), QSet<QByteArray>{ "t2" });
}

void ClusterInterestTest::newEpochForcesASync()
{
    InterestMap map = fourPeers();
    const QString b = QStringLiteral("b");
    QVERIFY(map.applySync(b, syncOf(9, 4, { "t1" })));
    // b restarted: its new run numbers from 1 again.
    QCOMPARE(map.applyUpdate(b, InterestUpdate{ 10, 1, { { "t2", true } } }), Outcome::NeedSync);
    QCOMPARE(map.state(b), State::Unknown);
    QVERIFY(map.applySync(b, syncOf(10, 1, { "t2" })));
    QCOMPARE(map.tenantsOf(b), QSet<QByteArray>{ "t2" });
}

void ClusterInterestTest::checksDetectALostLastUpdate()
{
    InterestMap map = fourPeers();
    const QString b = QStringLiteral("b");
    QVERIFY(map.applySync(b, syncOf(9, 4, { "t1" })));
    QCOMPARE(map.applyUpdate(b, InterestUpdate{ 9, 4, {} }), Outcome::InSync);
    // Update 5 was lost; the check at 5 reveals it.
    QCOMPARE(map.applyUpdate(b, InterestUpdate{ 9, 5, {} }), Outcome::NeedSync);
    QCOMPARE(map.state(b), State::Unknown);
}

void ClusterInterestTest::updatesFromUnknownPeersAskForASync()
{
    InterestMap map = fourPeers();
    QCOMPARE(map.applyUpdate(QStringLiteral("b"), InterestUpdate{ 1, 1, { { "t", true } } }),
             Outcome::NeedSync);
    QCOMPARE(map.applyUpdate(QStringLiteral("b"), InterestUpdate{ 1, 1, {} }), Outcome::NeedSync);
}

void ClusterInterestTest::staleSyncIsIgnored()
{
    InterestMap map = fourPeers();
    const QString b = QStringLiteral("b");
    QVERIFY(map.applySync(b, syncOf(9, 4, { "t1" })));
    QCOMPARE(map.applyUpdate(b, InterestUpdate{ 9, 5, { { "t2", true } } }), Outcome::Applied);
    QVERIFY(!map.applySync(b, syncOf(9, 3, { "old" })));
    QCOMPARE(map.tenantsOf(b), (QSet<QByteArray>{ "t1", "t2" }));
    QVERIFY(map.applySync(b, syncOf(9, 5, { "t2" }))); // same number: replaces
    QCOMPARE(map.tenantsOf(b), QSet<QByteArray>{ "t2" });
    QVERIFY(map.applySync(b, syncOf(3, 1, { "new-run" }))); // other epoch: replaces
    QCOMPARE(map.tenantsOf(b), QSet<QByteArray>{ "new-run" });
}

void ClusterInterestTest::markUnknownFloodsAgain()
{
    InterestMap map = fourPeers();
    const QString b = QStringLiteral("b");
    QVERIFY(map.applySync(b, syncOf(9, 4, {})));
    QVERIFY(!map.targets("t", Local, FloodScope::Region).nodes.contains(b));
    map.markUnknown(b);
    QCOMPARE(map.state(b), State::Unknown);
    QVERIFY(map.targets("t", Local, FloodScope::Region).nodes.contains(b));
}

void ClusterInterestTest::heldNumberingIsWhatWasApplied()
{
    InterestMap map = fourPeers();
    const QString b = QStringLiteral("b");
    QVERIFY(!map.heldNumbering(b)); // Unknown: nothing to acknowledge
    QVERIFY(!map.heldNumbering(QStringLiteral("stranger")));
    QVERIFY(map.applySync(b, syncOf(9, 4, { "t1" })));
    QCOMPARE(*map.heldNumbering(b), (rt::pubsub::InterestAck{ 9, 4 }));
    QCOMPARE(map.applyUpdate(b, InterestUpdate{ 9, 5, { { "t2", true } } }), Outcome::Applied);
    QCOMPARE(*map.heldNumbering(b), (rt::pubsub::InterestAck{ 9, 5 }));
    QCOMPARE(map.applyUpdate(b, InterestUpdate{ 9, 7, { { "t3", true } } }), Outcome::NeedSync);
    QVERIFY(!map.heldNumbering(b)); // a gap: it must sync before it acknowledges again
}

void ClusterInterestTest::departedPeersAreForgotten()
{
    InterestMap map = fourPeers();
    QVERIFY(map.applySync(QStringLiteral("b"), syncOf(9, 4, { "t" })));
    QVERIFY(map.applySync(QStringLiteral("c"), syncOf(8, 4, { "t" })));
    const QStringList added =
            map.setPeers({ { QStringLiteral("c"), Local }, { QStringLiteral("f"), Local } });
    QCOMPARE(added, ids({ "f" }));
    QCOMPARE(map.peerIds(), (ids({ "c", "f" })));
    QVERIFY(!map.state(QStringLiteral("b")));
    QCOMPARE(map.state(QStringLiteral("c")), State::Known); // kept its interest
    QCOMPARE(targetsOf(map, "t"), (ids({ "c", "f" })));
    // b comes back: a new peer, Unknown.
    QCOMPARE(map.setPeers({ { QStringLiteral("b"), Local } }), ids({ "b" }));
    QCOMPARE(map.state(QStringLiteral("b")), State::Unknown);
}

void ClusterInterestTest::framesFromNonPeersAreIgnored()
{
    InterestMap map = fourPeers();
    const QString z = QStringLiteral("z");
    QCOMPARE(map.applyUpdate(z, InterestUpdate{ 1, 1, { { "t", true } } }), Outcome::NotAPeer);
    QVERIFY(!map.applySync(z, syncOf(1, 1, { "t" })));
    QVERIFY(!map.state(z));
    QVERIFY(!map.takeSyncRequest(z, 0, 1000));
}

void ClusterInterestTest::syncRequestsArePaced()
{
    InterestMap map = fourPeers();
    const QString b = QStringLiteral("b");
    QVERIFY(map.takeSyncRequest(b, 1000, 500));
    QVERIFY(!map.takeSyncRequest(b, 1200, 500));
    QVERIFY(map.takeSyncRequest(b, 1500, 500));
    map.resetSyncRequest(b);
    QVERIFY(map.takeSyncRequest(b, 1501, 500));
    // Known peers are never asked.
    QVERIFY(map.applySync(b, syncOf(1, 0, {})));
    QVERIFY(!map.takeSyncRequest(b, 10'000, 500));
}

QTEST_GUILESS_MAIN(ClusterInterestTest)
#include "tst_cluster_interest.moc"
