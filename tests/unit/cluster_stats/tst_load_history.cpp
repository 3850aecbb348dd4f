// The members' load history: one sample per member with a load figure per record(), bounded
// per member, oldest first, and forgotten when a node leaves the membership.
#include "server/cluster/stats/load_history.h"

#include <QTest>

using rt::cluster::NodeInfo;
using rt::cluster::stats::LoadHistory;

namespace {

NodeInfo node(const QString &id, std::optional<double> load)
{
    NodeInfo info;
    info.id = id;
    info.load = load;
    return info;
}

} // namespace

class TestLoadHistory : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void samplesAreKeptPerMemberOldestFirst()
    {
        LoadHistory history(3);
        for (int i = 0; i < 5; ++i) {
            history.record(1000 * i,
                           { node(QStringLiteral("a"), 0.5 * i), node(QStringLiteral("b"), 2) });
        }
        const auto a = history.history(QStringLiteral("a"));
        QCOMPARE(a.size(), qsizetype(3));
        QCOMPARE(a[0].atMs, qint64(2000));
        QCOMPARE(a[0].load, 1.0);
        QCOMPARE(a[2].atMs, qint64(4000));
        QCOMPARE(a[2].load, 2.0);
        QCOMPARE(history.history(QStringLiteral("b")).size(), qsizetype(3));
        QVERIFY(history.history(QStringLiteral("c")).isEmpty());
    }

    void nodesWithoutLoadAreSkippedAndLeaversForgotten()
    {
        LoadHistory history(10);
        history.record(0,
                       { node(QStringLiteral("a"), std::nullopt), node(QStringLiteral("b"), 1) });
        QVERIFY(history.history(QStringLiteral("a")).isEmpty());
        history.record(5000, { node(QStringLiteral("a"), 0.25), node(QStringLiteral("b"), 1) });
        QCOMPARE(history.history(QStringLiteral("a")).size(), qsizetype(1));
        QCOMPARE(history.history(QStringLiteral("b")).size(), qsizetype(2));
        history.record(10000, { node(QStringLiteral("a"), 0.25) });
        QVERIFY(history.history(QStringLiteral("b")).isEmpty());
        // A node back in the membership starts a new history.
        history.record(15000, { node(QStringLiteral("a"), 0.25), node(QStringLiteral("b"), 3) });
        QCOMPARE(history.history(QStringLiteral("b")).size(), qsizetype(1));
    }

    void aJoiningMemberStartsAtOnce()
    {
        LoadHistory history(10);
        history.record(0, { node(QStringLiteral("a"), 1) });
        history.start(1000, node(QStringLiteral("b"), 2));
        history.start(1500, node(QStringLiteral("b"), 3)); // has one already
        history.start(1500, node(QStringLiteral("a"), 3));
        history.start(1500, node(QStringLiteral("c"), std::nullopt)); // nothing to show
        QCOMPARE(history.history(QStringLiteral("a")).size(), qsizetype(1));
        QCOMPARE(history.history(QStringLiteral("b")),
                 (QList<rt::api::LoadSample>{ rt::api::LoadSample{ 1000, 2 } }));
        QVERIFY(history.history(QStringLiteral("c")).isEmpty());
        history.record(5000, { node(QStringLiteral("a"), 1), node(QStringLiteral("b"), 2) });
        QCOMPARE(history.history(QStringLiteral("b")).size(), qsizetype(2));
    }
};

QTEST_GUILESS_MAIN(TestLoadHistory)
#include "tst_load_history.moc"
