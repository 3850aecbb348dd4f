#include "server/limits/rate_counter.h"
#include "server/limits/rate_counter_key.h"
#include "server/limits/rate_counter_options.h"
#include "server/limits/rate_counter_registry.h"
#include "shared/core/clock.h"

#include <QSet>
#include <QTest>

#include <algorithm>
#include <array>
#include <atomic>
#include <memory>
#include <thread>
#include <vector>

using rt::ManualClock;
using rt::limits::RateCounter;
using rt::limits::RateCounterKey;
using rt::limits::RateCounterKeyHash;
using rt::limits::RateCounterKind;
using rt::limits::RateCounterOptions;
using rt::limits::RateCounterRegistry;
using rt::limits::RateCounterState;
using rt::limits::RateLimit;
using rt::limits::TickedCounter;

namespace {

RateCounterKey eventsKey(const QString &tenant)
{
    return RateCounterKey{ tenant, RateCounterKind::Events };
}

RateCounterOptions eventsOptions(double limit)
{
    return RateCounterOptions::forKind(RateCounterKind::Events, limit);
}

// The entry of `key` in a pass, or null.
const TickedCounter *findTicked(const RateCounterRegistry::TickPass &pass,
                                const RateCounterKey &key)
{
    const auto it = std::find_if(pass.ticked.begin(), pass.ticked.end(),
                                 [&key](const TickedCounter &ticked) { return ticked.key == key; });
    return it == pass.ticked.end() ? nullptr : &*it;
}

} // namespace

// Tests RateCounterRegistry (upstream's RateCounter.get/new, publish_update and idle shutdown,
// docs/upstream/tenants-limits-metrics.md §5.1) with a ManualClock and explicit tickDue() times:
// one counter per key created on demand with a first tick due at once, restart and limit
// changes, tenant removal, and idle expiry that drops unheld counters and keeps held ones
// dormant.
class RateCounterRegistryTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void keysNameTenantAndKind();
    void keysOfDifferentKindsOrTenantsDiffer();
    void obtainCreatesOneCounterPerKey();
    void obtainKeepsTheOptionsOfAnExistingCounter();
    void findNeverCreates();
    void firstTickIsDueAtCreation();
    void tickDueTicksOnlyDueCounters();
    void tickDueRunsTheWorkedExampleAndReportsFlips();
    void restartGivesAFreshStateDueNow();
    void restartCanReplaceTheOptions();
    void restartOfAnUnknownKeyFails();
    void restartTenantRestartsOnlyThatTenant();
    void setLimitKeepsTheWindow();
    void removeTenantDetachesItsCounters();
    void idleUnheldCounterIsDropped();
    void idleHeldCounterStaysDormantAndWakesOnAdd();
    void dormantCounterIsDroppedOnceItsHolderLetsGo();
    void obtainRestartsADormantCounterWithTheCallersOptions();
    void concurrentObtainAndAddWhileTicking();
};

void RateCounterRegistryTest::keysNameTenantAndKind()
{
    QCOMPARE(eventsKey(QStringLiteral("acme")).toString(), QStringLiteral("acme/events"));
    QCOMPARE((RateCounterKey{ QStringLiteral("t1"), RateCounterKind::DbEvents }).toString(),
             QStringLiteral("t1/db_events"));
}

void RateCounterRegistryTest::keysOfDifferentKindsOrTenantsDiffer()
{
    const RateCounterKey a{ QStringLiteral("a"), RateCounterKind::Events };
    const RateCounterKey aJoins{ QStringLiteral("a"), RateCounterKind::Joins };
    const RateCounterKey b{ QStringLiteral("b"), RateCounterKind::Events };
    QVERIFY(a == (RateCounterKey{ QStringLiteral("a"), RateCounterKind::Events }));
    QVERIFY(!(a == aJoins));
    QVERIFY(!(a == b));

    const RateCounterKeyHash hash;
    QCOMPARE(hash(a), hash(RateCounterKey{ QStringLiteral("a"), RateCounterKind::Events }));
    // The kind takes part in the hash: one tenant's counters do not all collide.
    QSet<std::size_t> hashes;
    for (const RateCounterKind kind :
         { RateCounterKind::Events, RateCounterKind::DbEvents, RateCounterKind::PresenceEvents,
           RateCounterKind::Joins, RateCounterKind::Requests, RateCounterKind::DatabaseConnect,
           RateCounterKind::AuthorizationErrors, RateCounterKind::SubscriptionErrors }) {
        hashes.insert(hash(RateCounterKey{ QStringLiteral("a"), kind }));
    }
    QCOMPARE(hashes.size(), 8);
}

void RateCounterRegistryTest::obtainCreatesOneCounterPerKey()
{
    ManualClock clock;
    RateCounterRegistry registry(clock);
    QCOMPARE(registry.size(), std::size_t{ 0 });

    const auto first = registry.obtain(eventsKey(QStringLiteral("a")), eventsOptions(100));
    QVERIFY(first);
    const auto again = registry.obtain(eventsKey(QStringLiteral("a")), eventsOptions(100));
    QCOMPARE(again.get(), first.get());
    QCOMPARE(registry.size(), std::size_t{ 1 });

    const auto joins =
            registry.obtain(RateCounterKey{ QStringLiteral("a"), RateCounterKind::Joins },
                            RateCounterOptions::forKind(RateCounterKind::Joins, 10));
    const auto other = registry.obtain(eventsKey(QStringLiteral("b")), eventsOptions(100));
    QVERIFY(joins.get() != first.get());
    QVERIFY(other.get() != first.get());
    QVERIFY(other.get() != joins.get());
    QCOMPARE(registry.size(), std::size_t{ 3 });

    // Adds through one holder are seen through another.
    first->add(5);
    QCOMPARE(again->pendingCount(), 5);
    QCOMPARE(other->pendingCount(), 0);
}

void RateCounterRegistryTest::obtainKeepsTheOptionsOfAnExistingCounter()
{
    ManualClock clock;
    RateCounterRegistry registry(clock);
    const auto counter = registry.obtain(eventsKey(QStringLiteral("a")), eventsOptions(100));
    counter->add(10);
    registry.tickDue(clock.monotonicMs());

    const auto again = registry.obtain(eventsKey(QStringLiteral("a")), eventsOptions(1));
    QCOMPARE(again.get(), counter.get());
    QCOMPARE(again->options(), eventsOptions(100));
    QCOMPARE(again->sum(), 10); // not restarted
}

void RateCounterRegistryTest::findNeverCreates()
{
    ManualClock clock;
    RateCounterRegistry registry(clock);
    QVERIFY(!registry.find(eventsKey(QStringLiteral("a"))));
    QCOMPARE(registry.size(), std::size_t{ 0 });

    const auto counter = registry.obtain(eventsKey(QStringLiteral("a")), eventsOptions(100));
    QCOMPARE(registry.find(eventsKey(QStringLiteral("a"))).get(), counter.get());
    QVERIFY(!registry.find(RateCounterKey{ QStringLiteral("a"), RateCounterKind::Joins }));
    QVERIFY(!registry.find(eventsKey(QStringLiteral("A"))));
}

void RateCounterRegistryTest::firstTickIsDueAtCreation()
{
    ManualClock clock;
    clock.advance(1000);
    RateCounterRegistry registry(clock);
    const auto counter = registry.obtain(eventsKey(QStringLiteral("a")), eventsOptions(100));
    QCOMPARE(counter->nextTickAtMs(), 1000);
    QCOMPARE(counter->state(), RateCounterState{});

    RateCounterRegistry::TickPass pass = registry.tickDue(1000);
    QCOMPARE(pass.ticked.size(), std::size_t{ 1 });
    QCOMPARE(pass.ticked.front().key, eventsKey(QStringLiteral("a")));
    QCOMPARE(pass.ticked.front().tick.state.samples, 1);
    QCOMPARE(counter->state().samples, 1);

    // Not again until one interval (5 s) later.
    QVERIFY(registry.tickDue(1000).ticked.empty());
    QVERIFY(registry.tickDue(5999).ticked.empty());
    pass = registry.tickDue(6000);
    QCOMPARE(pass.ticked.size(), std::size_t{ 1 });
    QCOMPARE(counter->state().samples, 2);
}

void RateCounterRegistryTest::tickDueTicksOnlyDueCounters()
{
    ManualClock clock;
    RateCounterRegistry registry(clock);
    const RateCounterKey requestsKey{ QStringLiteral("a"), RateCounterKind::Requests };
    const auto events = registry.obtain(eventsKey(QStringLiteral("a")), eventsOptions(100));
    const auto requests =
            registry.obtain(requestsKey, RateCounterOptions::forKind(RateCounterKind::Requests));
    QCOMPARE(registry.tickDue(0).ticked.size(), std::size_t{ 2 });

    // Requests tick every second, events every 5 s.
    int eventsTicks = 0;
    int requestsTicks = 0;
    for (qint64 nowMs = 100; nowMs <= 10'000; nowMs += 100) {
        const RateCounterRegistry::TickPass pass = registry.tickDue(nowMs);
        eventsTicks += findTicked(pass, eventsKey(QStringLiteral("a"))) ? 1 : 0;
        requestsTicks += findTicked(pass, requestsKey) ? 1 : 0;
    }
    QCOMPARE(eventsTicks, 2);
    QCOMPARE(requestsTicks, 10);
    QCOMPARE(events->state().samples, 3);
    QCOMPARE(requests->state().samples, 11);
}

void RateCounterRegistryTest::tickDueRunsTheWorkedExampleAndReportsFlips()
{
    // §5.3 through the registry: 700 events per 5 s tick against max_events_per_second = 100.
    ManualClock clock;
    RateCounterRegistry registry(clock);
    const RateCounterKey key = eventsKey(QStringLiteral("a"));
    const auto counter = registry.obtain(key, eventsOptions(100));
    registry.tickDue(clock.monotonicMs()); // t=0: [0]

    struct Expected
    {
        double average;
        bool isTriggered;
    };
    for (const Expected expected : { Expected{ 70.0, false }, Expected{ 1400.0 / 3.0 / 5.0, false },
                                     Expected{ 105.0, true } }) {
        counter->add(700);
        clock.advance(5000);
        const RateCounterRegistry::TickPass pass = registry.tickDue(clock.monotonicMs());
        const TickedCounter *ticked = findTicked(pass, key);
        QVERIFY(ticked);
        QCOMPARE(ticked->tick.state.average, expected.average);
        QCOMPARE(ticked->tick.state.isTriggered, expected.isTriggered);
        QCOMPARE(ticked->tick.hasTriggeredChanged, expected.isTriggered);
    }
    QVERIFY(counter->isTriggered());

    // Zero samples push the average below 100 again: [0, 700, 700, 700, 0] = 84 < 100.
    clock.advance(5000);
    const RateCounterRegistry::TickPass pass = registry.tickDue(clock.monotonicMs());
    const TickedCounter *ticked = findTicked(pass, key);
    QVERIFY(ticked);
    QCOMPARE(ticked->tick.state.average, 84.0);
    QVERIFY(!ticked->tick.state.isTriggered);
    QVERIFY(ticked->tick.hasTriggeredChanged);
    QVERIFY(!counter->isTriggered());
}

void RateCounterRegistryTest::restartGivesAFreshStateDueNow()
{
    ManualClock clock;
    RateCounterRegistry registry(clock);
    const RateCounterKey key = eventsKey(QStringLiteral("a"));
    const auto counter = registry.obtain(key, eventsOptions(0));
    counter->add(50);
    registry.tickDue(clock.monotonicMs());
    QVERIFY(counter->isTriggered());
    QCOMPARE(counter->sum(), 50);

    clock.advance(2000); // mid-interval
    counter->add(9); // discarded by the restart, as upstream resets the cell
    QVERIFY(registry.restart(key));
    QCOMPARE(counter->state(), RateCounterState{});
    QCOMPARE(counter->pendingCount(), 0);
    QCOMPARE(counter->options(), eventsOptions(0));
    QCOMPARE(registry.find(key).get(), counter.get());

    // The first tick after the restart is due now, not at the old schedule (t=5 s).
    const RateCounterRegistry::TickPass pass = registry.tickDue(2000);
    const TickedCounter *ticked = findTicked(pass, key);
    QVERIFY(ticked);
    QCOMPARE(ticked->tick.state.samples, 1);
    QCOMPARE(ticked->tick.state.sum, 0);
    QVERIFY(ticked->tick.state.isTriggered); // limit 0: triggered again from the first tick
    QCOMPARE(counter->nextTickAtMs(), 7000);
}

void RateCounterRegistryTest::restartCanReplaceTheOptions()
{
    ManualClock clock;
    RateCounterRegistry registry(clock);
    const RateCounterKey key = eventsKey(QStringLiteral("a"));
    const auto counter = registry.obtain(key, eventsOptions(100));
    counter->add(1000);
    registry.tickDue(0);
    QVERIFY(counter->isTriggered()); // 1000 / 1 / 5 = 200

    // The tenant's max_events_per_second was raised: upstream's publish_update, and this
    // implementation restarts with the new limit.
    QVERIFY(registry.restart(key, eventsOptions(500)));
    QCOMPARE(counter->options(), eventsOptions(500));
    counter->add(1000);
    registry.tickDue(0);
    QVERIFY(!counter->isTriggered());
    QCOMPARE(counter->average(), 200.0);
}

void RateCounterRegistryTest::restartOfAnUnknownKeyFails()
{
    ManualClock clock;
    RateCounterRegistry registry(clock);
    QVERIFY(!registry.restart(eventsKey(QStringLiteral("a"))));
    QVERIFY(!registry.restart(eventsKey(QStringLiteral("a")), eventsOptions(1)));
    QVERIFY(!registry.setLimit(eventsKey(QStringLiteral("a")), RateLimit{ 1 }));
    QCOMPARE(registry.size(), std::size_t{ 0 }); // none of these create a counter
}

void RateCounterRegistryTest::restartTenantRestartsOnlyThatTenant()
{
    ManualClock clock;
    RateCounterRegistry registry(clock);
    const auto aEvents = registry.obtain(eventsKey(QStringLiteral("a")), eventsOptions(100));
    const auto aJoins =
            registry.obtain(RateCounterKey{ QStringLiteral("a"), RateCounterKind::Joins },
                            RateCounterOptions::forKind(RateCounterKind::Joins, 100));
    const auto bEvents = registry.obtain(eventsKey(QStringLiteral("b")), eventsOptions(100));
    for (const auto &counter : { aEvents, aJoins, bEvents }) {
        counter->add(10);
    }
    registry.tickDue(0);

    QCOMPARE(registry.restartTenant(QStringLiteral("a")), 2);
    QCOMPARE(aEvents->sum(), 0);
    QCOMPARE(aJoins->sum(), 0);
    QCOMPARE(bEvents->sum(), 10);
    QCOMPARE(aEvents->options(), eventsOptions(100)); // current options kept
    QCOMPARE(registry.restartTenant(QStringLiteral("nobody")), 0);
    QCOMPARE(registry.size(), std::size_t{ 3 });
}

void RateCounterRegistryTest::setLimitKeepsTheWindow()
{
    ManualClock clock;
    RateCounterRegistry registry(clock);
    const RateCounterKey key = eventsKey(QStringLiteral("a"));
    const auto counter = registry.obtain(key, eventsOptions(100));
    counter->add(250);
    registry.tickDue(0); // 50/s
    QVERIFY(!counter->isTriggered());

    QVERIFY(registry.setLimit(key, RateLimit{ 40, RateLimit::Measurement::Average }));
    QVERIFY(!counter->isTriggered()); // applies at the next tick
    const RateCounterRegistry::TickPass pass = registry.tickDue(5000); // [0, 250] -> 25/s
    QVERIFY(findTicked(pass, key));
    QCOMPARE(counter->state().samples, 2); // the window survived
    QCOMPARE(counter->average(), 25.0);
    QVERIFY(!counter->isTriggered());

    QVERIFY(registry.setLimit(key, RateLimit{ 25, RateLimit::Measurement::Average }));
    counter->add(125);
    registry.tickDue(10'000); // [125, 0, 250] -> 25/s >= 25
    QVERIFY(counter->isTriggered());
}

void RateCounterRegistryTest::removeTenantDetachesItsCounters()
{
    ManualClock clock;
    RateCounterRegistry registry(clock);
    const auto aEvents = registry.obtain(eventsKey(QStringLiteral("a")), eventsOptions(100));
    registry.obtain(RateCounterKey{ QStringLiteral("a"), RateCounterKind::Requests },
                    RateCounterOptions::forKind(RateCounterKind::Requests));
    const auto bEvents = registry.obtain(eventsKey(QStringLiteral("b")), eventsOptions(100));
    registry.tickDue(0);

    QCOMPARE(registry.removeTenant(QStringLiteral("a")), 2);
    QCOMPARE(registry.size(), std::size_t{ 1 });
    QVERIFY(!registry.find(eventsKey(QStringLiteral("a"))));
    QCOMPARE(registry.removeTenant(QStringLiteral("a")), 0);

    // The holder keeps a working but detached counter that nobody ticks any more.
    aEvents->add(3);
    bEvents->add(4);
    const RateCounterRegistry::TickPass pass = registry.tickDue(5000);
    QCOMPARE(pass.ticked.size(), std::size_t{ 1 });
    QCOMPARE(pass.ticked.front().key, eventsKey(QStringLiteral("b")));
    QCOMPARE(aEvents->pendingCount(), 3);
    QCOMPARE(bEvents->sum(), 4);

    // A later obtain() creates a fresh counter for the (re-created) tenant.
    const auto fresh = registry.obtain(eventsKey(QStringLiteral("a")), eventsOptions(100));
    QVERIFY(fresh.get() != aEvents.get());
    QCOMPARE(fresh->pendingCount(), 0);
}

void RateCounterRegistryTest::idleUnheldCounterIsDropped()
{
    ManualClock clock;
    RateCounterRegistry registry(clock);
    const RateCounterKey key = eventsKey(QStringLiteral("a"));
    registry.obtain(key, eventsOptions(100))->add(1); // nobody keeps it

    // t=0: [1]; the sample leaves the 12 x 5 s window at t=60 s; the idle check runs every
    // 5 min: at t=300 s every retained sample is 0.
    RateCounterRegistry::TickPass pass = registry.tickDue(0);
    QCOMPARE(pass.ticked.size(), std::size_t{ 1 });
    for (qint64 nowMs = 1000; nowMs < 300'000; nowMs += 1000) {
        pass = registry.tickDue(nowMs);
        QCOMPARE(pass.expired, 0);
        QCOMPARE(pass.dropped, 0);
    }
    QCOMPARE(registry.size(), std::size_t{ 1 });

    pass = registry.tickDue(300'000);
    QCOMPARE(pass.expired, 1);
    QCOMPARE(pass.dropped, 1);
    QCOMPARE(registry.size(), std::size_t{ 0 });
    QVERIFY(!registry.find(key));

    // The next use starts it fresh.
    const auto counter = registry.obtain(key, eventsOptions(100));
    QCOMPARE(counter->state(), RateCounterState{});
    QVERIFY(counter->isTickDue(300'000));
}

void RateCounterRegistryTest::idleHeldCounterStaysDormantAndWakesOnAdd()
{
    ManualClock clock;
    RateCounterRegistry registry(clock);
    const RateCounterKey key = eventsKey(QStringLiteral("a"));
    const auto counter = registry.obtain(key, eventsOptions(0));
    registry.tickDue(0);
    QVERIFY(counter->isTriggered()); // limit 0

    for (qint64 nowMs = 5000; nowMs < 300'000; nowMs += 5000) {
        QCOMPARE(registry.tickDue(nowMs).expired, 0);
    }
    RateCounterRegistry::TickPass pass = registry.tickDue(300'000);
    QCOMPARE(pass.expired, 1);
    QCOMPARE(pass.dropped, 0); // held by `counter`
    QCOMPARE(registry.size(), std::size_t{ 1 });
    QVERIFY(counter->isDormant());
    QCOMPARE(counter->state(), RateCounterState{});
    QCOMPARE(registry.find(key).get(), counter.get());

    // Dormant: no ticks, however long.
    pass = registry.tickDue(3'600'000);
    QVERIFY(pass.ticked.empty());
    QCOMPARE(pass.expired, 0);
    QCOMPARE(pass.dropped, 0);

    // An add() through the held pointer makes it due; the next pass wakes it with a new window.
    counter->add(2);
    pass = registry.tickDue(3'600'100);
    const TickedCounter *ticked = findTicked(pass, key);
    QVERIFY(ticked);
    QVERIFY(!counter->isDormant());
    QCOMPARE(ticked->tick.state.samples, 1);
    QCOMPARE(ticked->tick.state.sum, 2);
    QVERIFY(ticked->tick.state.isTriggered);
    QVERIFY(ticked->tick.hasTriggeredChanged);
    QCOMPARE(counter->nextTickAtMs(), 3'605'100);
}

void RateCounterRegistryTest::dormantCounterIsDroppedOnceItsHolderLetsGo()
{
    ManualClock clock;
    RateCounterRegistry registry(clock);
    const RateCounterKey key = eventsKey(QStringLiteral("a"));
    auto counter = registry.obtain(key, eventsOptions(100));
    registry.tickDue(0);
    RateCounterRegistry::TickPass pass = registry.tickDue(300'000);
    QCOMPARE(pass.expired, 1);
    QCOMPARE(pass.dropped, 0);
    QVERIFY(counter->isDormant());

    counter.reset(); // e.g. the last channel holding it left
    pass = registry.tickDue(300'100);
    QCOMPARE(pass.expired, 0); // it had expired before
    QCOMPARE(pass.dropped, 1);
    QCOMPARE(registry.size(), std::size_t{ 0 });
    QVERIFY(!registry.find(key));
}

void RateCounterRegistryTest::obtainRestartsADormantCounterWithTheCallersOptions()
{
    // Upstream restarts an idled counter "with the args of whoever calls first".
    ManualClock clock;
    RateCounterRegistry registry(clock);
    const RateCounterKey key = eventsKey(QStringLiteral("a"));
    const auto holder = registry.obtain(key, eventsOptions(100));
    registry.tickDue(0);
    registry.tickDue(300'000);
    QVERIFY(holder->isDormant());

    clock.advance(400'000);
    const auto counter = registry.obtain(key, eventsOptions(0));
    QCOMPARE(counter.get(), holder.get());
    QVERIFY(!counter->isDormant());
    QCOMPARE(counter->options(), eventsOptions(0));
    QVERIFY(counter->isTickDue(400'000));
    QCOMPARE(counter->nextTickAtMs(), 400'000);

    registry.tickDue(400'000);
    QVERIFY(holder->isTriggered()); // the new limit (0) from its first tick
    // Its idle check runs 5 min after the restart, not earlier.
    for (qint64 nowMs = 405'000; nowMs < 700'000; nowMs += 5000) {
        QCOMPARE(registry.tickDue(nowMs).expired, 0);
    }
    QCOMPARE(registry.tickDue(700'000).expired, 1);
}

void RateCounterRegistryTest::concurrentObtainAndAddWhileTicking()
{
    // Threads obtain the same keys and add while one thread runs tickDue(): every thread gets
    // the same counter per key, and every add lands in exactly one tick.
    constexpr int ThreadCount = 4;
    constexpr int AddsPerThread = 20'000;
    const std::array<RateCounterKey, 2> keys = { eventsKey(QStringLiteral("a")),
                                                 eventsKey(QStringLiteral("b")) };
    const ManualClock clock; // never advanced: reads from any thread are safe
    RateCounterRegistry registry(clock);
    RateCounterOptions options;
    options.tickMs = 1;
    options.maxBuckets = 4;
    // The ticker's time races ahead; an idle restart would discard pending adds.
    options.idleShutdownMs = 0;

    std::atomic<bool> isAdding{ true };
    std::array<qint64, 2> ticked = { 0, 0 }; // ticker thread only, read after join
    std::thread ticker([&] {
        qint64 nowMs = 0;
        while (isAdding.load(std::memory_order_acquire)) {
            for (const TickedCounter &counter : registry.tickDue(nowMs++).ticked) {
                ticked.at(counter.key == keys[0] ? 0 : 1) += counter.tick.state.lastCount;
            }
        }
    });
    std::array<std::vector<RateCounter *>, ThreadCount> seen; // the first two obtained per thread
    std::vector<std::thread> adders;
    adders.reserve(ThreadCount);
    for (std::vector<RateCounter *> &seenByThread : seen) {
        adders.emplace_back([&] {
            for (int i = 0; i < AddsPerThread; ++i) {
                const std::shared_ptr<RateCounter> counter =
                        registry.obtain(keys.at(static_cast<std::size_t>(i % 2)), options);
                if (i < 2) {
                    seenByThread.push_back(counter.get());
                }
                counter->add(1);
            }
        });
    }
    for (std::thread &adder : adders) {
        adder.join();
    }
    isAdding.store(false, std::memory_order_release);
    ticker.join();
    for (const TickedCounter &counter : registry.tickDue(1'000'000'000).ticked) {
        ticked.at(counter.key == keys[0] ? 0 : 1) += counter.tick.state.lastCount;
    }

    QCOMPARE(registry.size(), std::size_t{ 2 });
    for (const std::vector<RateCounter *> &seenByThread : seen) {
        QCOMPARE(seenByThread.size(), std::size_t{ 2 });
        QCOMPARE(seenByThread[0], registry.find(keys[0]).get());
        QCOMPARE(seenByThread[1], registry.find(keys[1]).get());
    }
    QCOMPARE(ticked[0], qint64{ ThreadCount } * AddsPerThread / 2);
    QCOMPARE(ticked[1], qint64{ ThreadCount } * AddsPerThread / 2);
}

QTEST_GUILESS_MAIN(RateCounterRegistryTest)
#include "tst_rate_counter_registry.moc"
