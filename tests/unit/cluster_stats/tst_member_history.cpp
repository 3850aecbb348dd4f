// The members' hour of figures: samples are kept in time order within the capacity (the oldest
// go), a peer's own history fills in only what is older than what this node saw, departed
// members are forgotten, and a sample is built from a node's figures with its largest loop lag.
#include "server/cluster/stats/member_history.h"

#include <QTest>

using rt::api::NodeSample;
using namespace rt::cluster::stats;

namespace {

NodeSample at(qint64 atMs, double cpu = 0)
{
    NodeSample sample;
    sample.atMs = atMs;
    sample.cpuCores = cpu;
    return sample;
}

QList<qint64> times(const QList<NodeSample> &samples)
{
    QList<qint64> out;
    for (const NodeSample &sample : samples) {
        out.append(sample.atMs);
    }
    return out;
}

} // namespace

class TestMemberHistory : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void keepsTheNewestWithinTheCapacity()
    {
        MemberHistory history(3);
        for (qint64 t = 1; t <= 5; ++t) {
            history.record(QStringLiteral("a"), at(t * 5000));
        }
        QCOMPARE(times(history.samples(QStringLiteral("a"))),
                 (QList<qint64>{ 15000, 20000, 25000 }));
        history.record(QStringLiteral("a"), at(25000, 9)); // not newer: ignored
        QCOMPARE(history.samples(QStringLiteral("a")).last().cpuCores, 0.0);
        QVERIFY(history.samples(QStringLiteral("b")).isEmpty());
    }

    void aPeersOwnHistoryFillsInWhatIsOlder()
    {
        MemberHistory history(5);
        history.record(QStringLiteral("b"), at(30000, 1));
        history.record(QStringLiteral("b"), at(35000, 1));
        // b's own hour overlaps what this node saw: only the older part goes in, newest first
        // within the capacity.
        history.merge(QStringLiteral("b"),
                      { at(10000, 2), at(15000, 2), at(20000, 2), at(25000, 2), at(30000, 2) });
        const QList<NodeSample> merged = history.samples(QStringLiteral("b"));
        QCOMPARE(times(merged), (QList<qint64>{ 15000, 20000, 25000, 30000, 35000 }));
        QCOMPARE(merged[3].cpuCores, 1.0); // what this node saw stays
        // A node that saw nothing of c takes c's own history as it is.
        history.merge(QStringLiteral("c"), { at(1), at(2) });
        QCOMPARE(times(history.samples(QStringLiteral("c"))), (QList<qint64>{ 1, 2 }));
    }

    void departedMembersAreForgotten()
    {
        MemberHistory history;
        history.record(QStringLiteral("a"), at(1));
        history.record(QStringLiteral("b"), at(1));
        history.retainOnly({ QStringLiteral("b") });
        QVERIFY(history.samples(QStringLiteral("a")).isEmpty());
        const rt::api::ClusterHistory all = history.history(99, QStringLiteral("b"), 5000);
        QCOMPARE(all.nodes.size(), qsizetype(1));
        QCOMPARE(all.nodes[0].id, QStringLiteral("b"));
        QCOMPARE(all.takenAtMs, qint64(99));
        QCOMPARE(all.intervalMs, qint64(5000));
    }

    void historyListsNodesSortedById()
    {
        MemberHistory history;
        for (const char *id : { "c", "a", "b" }) {
            history.record(QString::fromLatin1(id), at(1));
        }
        const rt::api::ClusterHistory all = history.history(0, QStringLiteral("a"), 5000);
        QCOMPARE(all.nodes.size(), qsizetype(3));
        QCOMPARE(all.nodes[0].id, QStringLiteral("a"));
        QCOMPARE(all.nodes[2].id, QStringLiteral("c"));
    }

    void aSampleCarriesTheLargestLoopLag()
    {
        NodeStats figures;
        figures.cpuCores = 1.5;
        figures.residentBytes = 1024;
        figures.connections = 7;
        figures.channels = 9;
        figures.messagesInPerSecond = 2;
        figures.messagesOutPerSecond = 3;
        figures.workers = { WorkerLoad{ 0.5, 1.25 }, WorkerLoad{ 1, 40 }, WorkerLoad{ 0, 3 } };
        const NodeSample sample = sampleOf(5, figures, 0.75);
        QCOMPARE(sample, (NodeSample{ 5, 1.5, 1024, 7, 9, 2, 3, 40, 0.75 }));
        QCOMPARE(sampleOf(5, NodeStats{}, std::nullopt).loopLagMs, 0.0);
    }
};

QTEST_GUILESS_MAIN(TestMemberHistory)
#include "tst_member_history.moc"
