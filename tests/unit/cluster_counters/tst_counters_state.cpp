// The bookkeeping of cluster-wide counters: a node reports only what changed (and a sync that
// matches its updates), peers' figures add up per tenant and leave with the peer, a lost update
// is repaired by the next sync, the board collects only local counts of the limited kinds, and
// two nodes exchanging their counts over the codec make a rate limit trip on the cluster's total
// without ever echoing a count back.
#include "server/cluster/counters/counters_state.h"
#include "server/limits/rate_counter.h"

#include <QJsonDocument>
#include <QTest>

using namespace rt::cluster::counters;
using rt::limits::RateCounterKind;

namespace {

const QString P1 = QStringLiteral("node-1");
const QString P2 = QStringLiteral("node-2");

// Outside the test class: moc mis-parses raw string literals.
const QByteArray ExpectedUsersView = R"({
    "a": {"self": 1, "node-1": 2},
    "b": {"node-1": 1},
    "c": {"self": 3}
})";

Message roundTrip(const Message &message)
{
    auto decoded = decode(encode(message));
    Q_ASSERT(decoded.ok());
    return *decoded;
}

rt::limits::TickedCounter ticked(const char *tenant, RateCounterKind kind, qint64 local,
                                 qint64 total)
{
    rt::limits::TickedCounter counter;
    counter.key = rt::limits::RateCounterKey{ QString::fromLatin1(tenant), kind };
    counter.tick.state.lastLocalCount = local;
    counter.tick.state.lastCount = total;
    return counter;
}

} // namespace

class TestCountersState : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void reportSendsOnlyWhatChanged()
    {
        LocalReport report;
        QVERIFY(!report.update({}, {}));

        auto first = report.update({ { "b", 1 }, { "a", 2 } }, {});
        QVERIFY(first);
        QCOMPARE(first->tenants,
                 (QList<TenantFigures>{ { "a", 2, {} }, { "b", 1, {} } })); // sorted by tenant
        QVERIFY(!report.update({ { "a", 2 }, { "b", 1 } }, {}));

        // a grows, b's last user leaves (reported as 0), c appears; zero figures are no users.
        auto second = report.update({ { "a", 3 }, { "c", 1 }, { "d", 0 } }, {});
        QVERIFY(second);
        QCOMPARE(second->tenants,
                 (QList<TenantFigures>{ { "a", 3, {} }, { "b", 0, {} }, { "c", 1, {} } }));
        QCOMPARE(report.reported(), (UsersByTenant{ { "a", 3 }, { "c", 1 } }));
    }

    void reportCarriesRatesOfClusterWideKindsOnly()
    {
        LocalReport report;
        QVERIFY(report.update({ { "a", 1 } }, {}));
        RateCounts rates;
        rates["a"][RateCounterKind::Events] = 5;
        rates["a"][RateCounterKind::Requests] = 9; // per node: never crosses
        rates["a"][RateCounterKind::Joins] = 0; // nothing to say
        rates["z"][RateCounterKind::DatabaseConnect] = 2; // only a per-node kind: left out
        rates["b"][RateCounterKind::PresenceEvents] = 4;
        auto message = report.update({ { "a", 1 } }, rates);
        QVERIFY(message);
        QCOMPARE(message->tenants,
                 (QList<TenantFigures>{
                         { "a", std::nullopt, { { RateCounterKind::Events, 5 } } },
                         { "b", std::nullopt, { { RateCounterKind::PresenceEvents, 4 } } } }));
    }

    void syncIsWhatTheUpdatesSaid()
    {
        LocalReport report;
        QVERIFY(!report.sync().tenants.size());
        QVERIFY(report.update({ { "b", 4 }, { "a", 1 } }, {}));
        QCOMPARE(report.sync().tenants, (QList<TenantFigures>{ { "a", 1, {} }, { "b", 4, {} } }));
        QVERIFY(report.update({ { "b", 4 } }, {}));
        QCOMPARE(report.sync().tenants, (QList<TenantFigures>{ { "b", 4, {} } }));
    }

    void peersAddUpPerTenant()
    {
        RemoteFigures remote;
        remote.apply(P1, Message{ { { "a", 2, {} } } }, false);
        remote.apply(P2, Message{ { { "a", 1, {} }, { "b", 4, {} } } }, false);
        QCOMPARE(remote.total("a"), 3);
        QCOMPARE(remote.total("b"), 4);
        QCOMPARE(remote.total("c"), 0);
        QCOMPARE(remote.takeChangedTotals(), (QHash<QByteArray, int>{ { "a", 3 }, { "b", 4 } }));
        QVERIFY(remote.takeChangedTotals().isEmpty());
        QCOMPARE(remote.peers(), (QStringList{ P1, P2 }));

        // Rates-only entries leave users alone; a repeated figure changes nothing.
        remote.apply(P1,
                     Message{ { { "a", std::nullopt, { { RateCounterKind::Events, 3 } } },
                                { "b", 0, {} } } },
                     false);
        QCOMPARE(remote.total("a"), 3);
        QVERIFY(remote.takeChangedTotals().isEmpty());

        remote.apply(P1, Message{ { { "a", 0, {} } } }, false);
        QCOMPARE(remote.takeChangedTotals(), (QHash<QByteArray, int>{ { "a", 1 } }));
        const UsersByNode byNode = remote.usersByNode();
        QCOMPARE(byNode.value("a"), (QHash<QString, int>{ { P2, 1 } }));
        QCOMPARE(byNode.value("b"), (QHash<QString, int>{ { P2, 4 } }));
    }

    void syncReplacesAndLeavingDrops()
    {
        RemoteFigures remote;
        remote.apply(P1, Message{ { { "a", 2, {} }, { "b", 1, {} } } }, false);
        remote.apply(P2, Message{ { { "a", 5, {} } } }, false);
        (void)remote.takeChangedTotals();

        remote.apply(P1, Message{ { { "b", 3, {} }, { "c", 1, {} } } }, true);
        QCOMPARE(remote.takeChangedTotals(),
                 (QHash<QByteArray, int>{ { "a", 5 }, { "b", 3 }, { "c", 1 } }));
        remote.apply(P1, Message{}, true); // a sync of nothing: the peer has no users left
        QCOMPARE(remote.takeChangedTotals(), (QHash<QByteArray, int>{ { "b", 0 }, { "c", 0 } }));

        QVERIFY(remote.dropPeer(P2));
        QCOMPARE(remote.takeChangedTotals(), (QHash<QByteArray, int>{ { "a", 0 } }));
        QVERIFY(!remote.dropPeer(P2));
        QVERIFY(!remote.dropPeer(QStringLiteral("never-seen")));
        QVERIFY(remote.usersByNode().isEmpty());
    }

    void absurdFiguresSaturate()
    {
        RemoteFigures remote;
        remote.apply(P1, Message{ { { "a", INT_MAX, {} } } }, false);
        remote.apply(P2, Message{ { { "a", INT_MAX, {} } } }, false);
        QCOMPARE(remote.total("a"), INT_MAX);
        remote.apply(P2, Message{ { { "a", 0, {} } } }, false);
        QCOMPARE(remote.total("a"), INT_MAX);
    }

    void aLostUpdateIsRepairedByTheNextSync()
    {
        LocalReport sender;
        RemoteFigures receiver;
        const auto deliver = [&receiver](const Message &message, bool isSync) {
            receiver.apply(P1, roundTrip(message), isSync);
        };
        deliver(*sender.update({ { "a", 1 } }, {}), false);
        QCOMPARE(receiver.total("a"), 1);
        (void)sender.update({ { "a", 2 }, { "b", 1 } }, {}); // lost on a breaking link
        QCOMPARE(receiver.total("a"), 1);
        deliver(*sender.update({ { "a", 2 } }, {}), false); // b left again; a unchanged
        QCOMPARE(receiver.total("a"), 1); // still stale: updates carry differences only
        QCOMPARE(receiver.total("b"), 0);
        deliver(sender.sync(), true);
        QCOMPARE(receiver.total("a"), 2);
        QCOMPARE(receiver.total("b"), 0);
    }

    void usersViewNamesEveryNode()
    {
        RemoteFigures remote;
        remote.apply(P1, Message{ { { "a", 2, {} }, { "b", 1, {} } } }, false);
        const QJsonObject view =
                usersView(QStringLiteral("self"), { { "a", 1 }, { "c", 3 }, { "d", 0 } },
                          remote.usersByNode());
        const QJsonObject expected = QJsonDocument::fromJson(ExpectedUsersView).object();
        QCOMPARE(view, expected);
    }

    void boardCollectsLocalCountsOfLimitedKinds()
    {
        CounterBoard board;
        rt::limits::RateCounterRegistry::TickPass pass;
        pass.ticked.push_back(ticked("a", RateCounterKind::Events, 4, 10));
        pass.ticked.push_back(ticked("a", RateCounterKind::Joins, 1, 1));
        pass.ticked.push_back(ticked("a", RateCounterKind::Requests, 7, 7));
        pass.ticked.push_back(ticked("b", RateCounterKind::PresenceEvents, 0, 5));

        board.noteTicks(pass); // not collecting: no cluster to tell
        QVERIFY(board.takeLocalRates().isEmpty());

        board.setCollecting(true);
        board.noteTicks(pass);
        board.noteTicks(pass);
        board.addLocal("c", RateCounterKind::Events, 2);
        RateCounts expected;
        expected["a"][RateCounterKind::Events] = 8; // local parts only: 4 + 4, not 10 + 10
        expected["a"][RateCounterKind::Joins] = 2;
        expected["c"][RateCounterKind::Events] = 2;
        QCOMPARE(board.takeLocalRates(), expected);
        QVERIFY(board.takeLocalRates().isEmpty());

        board.noteTicks(pass);
        board.setCollecting(false);
        QVERIFY(board.takeLocalRates().isEmpty());

        board.setUsersView(QJsonObject{ { QStringLiteral("a"), 1 } });
        QCOMPARE(board.usersView().value(QStringLiteral("a")).toInt(), 1);
    }

    void twoNodesTripALimitOnTheirTotal()
    {
        using rt::limits::RateCounter;
        using rt::limits::RateCounterOptions;
        using rt::limits::RateLimit;
        // Events: 1 s ticks, a limit of 10 on the sum of the window; each node alone stays under.
        RateCounterOptions options;
        options.tickMs = 1000;
        options.maxBuckets = 5;
        options.limit = RateLimit{ 10.0, RateLimit::Measurement::Sum };
        RateCounter counterA(options, 0);
        RateCounter counterB(options, 0);
        CounterBoard boardA;
        CounterBoard boardB;
        boardA.setCollecting(true);
        boardB.setCollecting(true);
        LocalReport reportA;
        LocalReport reportB;

        const auto tickAndNote = [](RateCounter &counter, CounterBoard &board, qint64 now) {
            rt::limits::RateCounterRegistry::TickPass pass;
            rt::limits::TickedCounter entry;
            entry.key = { QStringLiteral("t"), RateCounterKind::Events };
            entry.tick = counter.tick(now);
            pass.ticked.push_back(entry);
            board.noteTicks(pass);
        };
        // The receiving side of ClusterCounters: rates go to the counter as remote counts.
        const auto exchange = [](LocalReport &report, CounterBoard &board, RateCounter &peer) {
            const auto message = report.update({}, board.takeLocalRates());
            if (!message) {
                return;
            }
            for (const TenantFigures &tenant : roundTrip(*message).tenants) {
                for (const RateFigure &rate : tenant.rates) {
                    peer.addRemote(rate.count);
                }
            }
        };

        counterA.add(6);
        counterB.add(6);
        tickAndNote(counterA, boardA, 0);
        tickAndNote(counterB, boardB, 0);
        QVERIFY(!counterA.isTriggered());
        QVERIFY(!counterB.isTriggered());
        exchange(reportA, boardA, counterB);
        exchange(reportB, boardB, counterA);

        tickAndNote(counterA, boardA, 1000);
        tickAndNote(counterB, boardB, 1000);
        QCOMPARE(counterA.sum(), 12);
        QCOMPARE(counterB.sum(), 12);
        QVERIFY(counterA.isTriggered());
        QVERIFY(counterB.isTriggered());
        // Nothing was counted locally in the second tick: nothing goes back to the peers, so
        // counts are never echoed between nodes.
        QCOMPARE(counterA.lastLocalCount(), 0);
        exchange(reportA, boardA, counterB);
        exchange(reportB, boardB, counterA);
        QCOMPARE(counterA.pendingCount(), 0);
        QCOMPARE(counterB.pendingCount(), 0);
    }
};

QTEST_APPLESS_MAIN(TestCountersState)
#include "tst_counters_state.moc"
