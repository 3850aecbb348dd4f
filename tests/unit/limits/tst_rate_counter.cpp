#include "server/limits/rate_counter.h"
#include "shared/core/clock.h"

#include <QTest>

#include <atomic>
#include <thread>
#include <vector>

using rt::ManualClock;
using rt::limits::RateCounter;
using rt::limits::RateCounterKind;
using rt::limits::RateCounterOptions;
using rt::limits::RateCounterState;
using rt::limits::RateCounterTick;
using rt::limits::RateLimit;

namespace {

// The events counter of a tenant with max_events_per_second = `limit` (5 s x 12 samples, avg).
RateCounterOptions eventsOptions(double limit)
{
    return RateCounterOptions::forKind(RateCounterKind::Events, limit);
}

RateCounterOptions plainOptions(qint64 tickMs, int maxBuckets)
{
    RateCounterOptions options;
    options.tickMs = tickMs;
    options.maxBuckets = maxBuckets;
    return options;
}

// Advances the clock by `ms`, adds `events` and ticks.
RateCounterTick tickAfter(RateCounter &counter, ManualClock &clock, qint64 ms, qint64 events)
{
    clock.advance(ms);
    counter.add(events);
    return counter.tick(clock.monotonicMs());
}

} // namespace

// Tests RateCounter against docs/upstream/tenants-limits-metrics.md §5.1-§5.3: the sample
// window, the average over the samples so far, the limit's flips at ticks only, restart, idle
// expiry, runtime limit changes, the cluster hooks and exact counting under concurrency.
class RateCounterTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void stateIsZeroBeforeTheFirstTick();
    void firstTickIsDueImmediatelyAndSamplesZero();
    void workedExampleOfTheEventsCounter();
    void releasesOnlyWhenTheMeasurementFallsBelowTheLimit();
    void limitIsEvaluatedOnlyAtTicks();
    void limitZeroTriggersFromTheFirstTick();
    void averageUsesTheSamplesSoFarThenTheFullWindow();
    void sumMeasurementComparesTheWindowTotal();
    void tickCadenceFollowsTheSchedule();
    void restartGivesAFreshState();
    void restartCanReplaceTheOptions();
    void idleCounterExpiresAndWakesFreshOnAdd();
    void idleCheckIsRearmedWhileSamplesAreNonZero();
    void pendingEventsPreventIdleExpiry();
    void idleExpiryCanBeDisabled();
    void setLimitAppliesAtTheNextTickAndKeepsTheWindow();
    void removingTheLimitReleasesAtTheNextTick();
    void remoteContributionsAreNotLocal();
    void concurrentAddsWhileTickingAreCountedExactly();
};

void RateCounterTest::stateIsZeroBeforeTheFirstTick()
{
    const RateCounter counter(eventsOptions(0), 1000);

    QCOMPARE(counter.state(), RateCounterState{});
    QCOMPARE(counter.isTriggered(), false);
    QCOMPARE(counter.average(), 0.0);
    QCOMPARE(counter.sum(), 0);
    QCOMPARE(counter.isDormant(), false);
}

void RateCounterTest::firstTickIsDueImmediatelyAndSamplesZero()
{
    ManualClock clock;
    clock.advance(42'000);
    RateCounter counter(eventsOptions(100), clock.monotonicMs());

    QCOMPARE(counter.nextTickAtMs(), 42'000);
    QVERIFY(counter.isTickDue(42'000));
    QVERIFY(!counter.isTickDue(41'999));

    const RateCounterTick first = counter.tick(clock.monotonicMs());
    QCOMPARE(first.state.samples, 1);
    QCOMPARE(first.state.sum, 0);
    QCOMPARE(first.state.average, 0.0);
    QCOMPARE(first.state.isTriggered, false);
    QCOMPARE(first.hasTriggeredChanged, false);
    QCOMPARE(counter.state(), first.state);

    // The next tick is one interval after the first.
    QCOMPARE(counter.nextTickAtMs(), 47'000);
    QVERIFY(!counter.isTickDue(46'999));
    QVERIFY(counter.isTickDue(47'000));
}

void RateCounterTest::workedExampleOfTheEventsCounter()
{
    // §5.3: max_events_per_second = 100, 700 events per 5 s tick, starting with an empty sample.
    ManualClock clock;
    RateCounter counter(eventsOptions(100), clock.monotonicMs());
    counter.tick(clock.monotonicMs());

    RateCounterTick tick = tickAfter(counter, clock, 5000, 700);
    QCOMPARE(tick.state.samples, 2);
    QCOMPARE(tick.state.sum, 700);
    QCOMPARE(tick.state.average, 70.0);
    QCOMPARE(tick.state.isTriggered, false);

    tick = tickAfter(counter, clock, 5000, 700);
    QCOMPARE(tick.state.samples, 3);
    QCOMPARE(tick.state.sum, 1400);
    QCOMPARE(tick.state.average, 1400.0 / 3.0 / 5.0); // ≈ 93.3
    QCOMPARE(tick.state.isTriggered, false);
    QCOMPARE(tick.hasTriggeredChanged, false);

    tick = tickAfter(counter, clock, 5000, 700);
    QCOMPARE(tick.state.samples, 4);
    QCOMPARE(tick.state.sum, 2100);
    QCOMPARE(tick.state.average, 105.0);
    QCOMPARE(tick.state.isTriggered, true);
    QCOMPARE(tick.hasTriggeredChanged, true);

    QCOMPARE(counter.isTriggered(), true);
    QCOMPARE(counter.average(), 105.0);
    QCOMPARE(counter.sum(), 2100);
    QCOMPARE(counter.lastLocalCount(), 700);
}

void RateCounterTest::releasesOnlyWhenTheMeasurementFallsBelowTheLimit()
{
    // limit 60 on a 1 s x 3 window: the average is the mean of the samples.
    RateCounterOptions options = plainOptions(1000, 3);
    options.limit = RateLimit{ 60, RateLimit::Measurement::Average };
    ManualClock clock;
    RateCounter counter(options, clock.monotonicMs());
    counter.add(60);
    RateCounterTick tick = counter.tick(clock.monotonicMs()); // [60] -> 60 >= 60
    QCOMPARE(tick.state.average, 60.0);
    QCOMPARE(tick.state.isTriggered, true);
    QCOMPARE(tick.hasTriggeredChanged, true);

    tick = tickAfter(counter, clock, 1000, 60); // [60, 60] -> 60: still triggered
    QCOMPARE(tick.state.average, 60.0);
    QCOMPARE(tick.state.isTriggered, true);
    QCOMPARE(tick.hasTriggeredChanged, false);

    tick = tickAfter(counter, clock, 1000, 59); // [59, 60, 60] -> 59.67 < 60: released
    QCOMPARE(tick.state.isTriggered, false);
    QCOMPARE(tick.hasTriggeredChanged, true);

    tick = tickAfter(counter, clock, 1000, 61); // [61, 59, 60] -> 60: triggered again
    QCOMPARE(tick.state.samples, 3);
    QCOMPARE(tick.state.average, 60.0);
    QCOMPARE(tick.state.isTriggered, true);
    QCOMPARE(tick.hasTriggeredChanged, true);

    // Zero samples push the old ones out until the average drops below the limit.
    tick = tickAfter(counter, clock, 1000, 0); // [0, 61, 59] -> 40
    QCOMPARE(tick.state.average, 40.0);
    QCOMPARE(tick.state.isTriggered, false);
}

void RateCounterTest::limitIsEvaluatedOnlyAtTicks()
{
    ManualClock clock;
    RateCounter counter(eventsOptions(100), clock.monotonicMs());
    counter.tick(clock.monotonicMs());

    counter.add(1'000'000);
    QCOMPARE(counter.pendingCount(), 1'000'000);
    QCOMPARE(counter.isTriggered(), false);
    QCOMPARE(counter.sum(), 0);

    tickAfter(counter, clock, 5000, 0);
    QCOMPARE(counter.isTriggered(), true);
    QCOMPARE(counter.pendingCount(), 0);

    // Readers see the last tick's state until the next tick, however long that is.
    clock.advance(60'000);
    QCOMPARE(counter.isTriggered(), true);
}

void RateCounterTest::limitZeroTriggersFromTheFirstTick()
{
    ManualClock clock;
    RateCounter counter(eventsOptions(0), clock.monotonicMs());
    QCOMPARE(counter.isTriggered(), false); // before the first tick

    RateCounterTick tick = counter.tick(clock.monotonicMs()); // 0 >= 0
    QCOMPARE(tick.state.isTriggered, true);
    QCOMPARE(tick.hasTriggeredChanged, true);

    for (int i = 0; i < 20; ++i) {
        tick = tickAfter(counter, clock, 5000, 0);
        QCOMPARE(tick.state.isTriggered, true);
        QCOMPARE(tick.hasTriggeredChanged, false);
    }
}

void RateCounterTest::averageUsesTheSamplesSoFarThenTheFullWindow()
{
    // 2 s ticks, 3 samples: average = sum / samples / 2.
    ManualClock clock;
    RateCounter counter(plainOptions(2000, 3), clock.monotonicMs());
    counter.add(12);
    RateCounterTick tick = counter.tick(clock.monotonicMs());
    QCOMPARE(tick.state.samples, 1);
    QCOMPARE(tick.state.average, 6.0); // 12 / 1 / 2

    tick = tickAfter(counter, clock, 2000, 24);
    QCOMPARE(tick.state.samples, 2);
    QCOMPARE(tick.state.average, 9.0); // 36 / 2 / 2

    tick = tickAfter(counter, clock, 2000, 36);
    QCOMPARE(tick.state.samples, 3);
    QCOMPARE(tick.state.sum, 72);
    QCOMPARE(tick.state.average, 12.0); // 72 / 3 / 2

    tick = tickAfter(counter, clock, 2000, 0); // 12 drops out: [0, 36, 24]
    QCOMPARE(tick.state.samples, 3);
    QCOMPARE(tick.state.sum, 60);
    QCOMPARE(tick.state.average, 10.0);

    tick = tickAfter(counter, clock, 2000, 0); // [0, 0, 36]
    tick = tickAfter(counter, clock, 2000, 0); // [0, 0, 0]
    QCOMPARE(tick.state.sum, 0);
    QCOMPARE(tick.state.average, 0.0);
    QCOMPARE(tick.state.lastCount, 0);
}

void RateCounterTest::sumMeasurementComparesTheWindowTotal()
{
    // The database connect counter: limit 3 on the sum of 5 one-second samples.
    ManualClock clock;
    RateCounter counter(RateCounterOptions::forKind(RateCounterKind::DatabaseConnect, 3),
                        clock.monotonicMs());
    counter.add(1);
    QCOMPARE(counter.tick(clock.monotonicMs()).state.isTriggered, false); // sum 1
    QCOMPARE(tickAfter(counter, clock, 1000, 1).state.isTriggered, false); // sum 2
    RateCounterTick tick = tickAfter(counter, clock, 1000, 1); // sum 3 >= 3
    QCOMPARE(tick.state.sum, 3);
    QCOMPARE(tick.state.average, 1.0);
    QCOMPARE(tick.state.isTriggered, true);
    QCOMPARE(tickAfter(counter, clock, 1000, 0).state.isTriggered, true); // [0,1,1,1]
    QCOMPARE(tickAfter(counter, clock, 1000, 0).state.isTriggered, true); // [0,0,1,1,1]
    tick = tickAfter(counter, clock, 1000, 0); // [0,0,0,1,1]: the first 1 left the window
    QCOMPARE(tick.state.sum, 2);
    QCOMPARE(tick.state.isTriggered, false);
}

void RateCounterTest::tickCadenceFollowsTheSchedule()
{
    RateCounter counter(eventsOptions(100), 0);
    counter.tick(30); // first tick, late
    QCOMPARE(counter.nextTickAtMs(), 5000); // anchored at the creation time
    counter.tick(5300); // late by 300 ms
    QCOMPARE(counter.nextTickAtMs(), 10'000);
    counter.tick(17'000); // stalled for more than an interval: no catch-up burst
    QCOMPARE(counter.nextTickAtMs(), 22'000);
    QVERIFY(!counter.isTickDue(21'999));
    QCOMPARE(counter.state().samples, 3);
}

void RateCounterTest::restartGivesAFreshState()
{
    ManualClock clock;
    RateCounter counter(eventsOptions(0), clock.monotonicMs());
    counter.add(10);
    counter.tick(clock.monotonicMs());
    tickAfter(counter, clock, 5000, 10);
    QCOMPARE(counter.isTriggered(), true);
    QCOMPARE(counter.sum(), 20);

    clock.advance(1234);
    counter.add(99); // counted before the restart: discarded, as upstream resets the cell
    counter.addRemote(7);
    counter.restart(clock.monotonicMs());
    QCOMPARE(counter.state(), RateCounterState{});
    QCOMPARE(counter.pendingCount(), 0);
    QCOMPARE(counter.nextTickAtMs(), clock.monotonicMs());
    QVERIFY(counter.isTickDue(clock.monotonicMs()));
    QCOMPARE(counter.options(), eventsOptions(0));

    // The first tick after the restart is immediate and starts a new window.
    const RateCounterTick tick = counter.tick(clock.monotonicMs());
    QCOMPARE(tick.state.samples, 1);
    QCOMPARE(tick.state.sum, 0);
    QCOMPARE(tick.state.isTriggered, true); // limit 0 again from the first tick
    QCOMPARE(tick.hasTriggeredChanged, true);
}

void RateCounterTest::restartCanReplaceTheOptions()
{
    ManualClock clock;
    RateCounter counter(eventsOptions(100), clock.monotonicMs());
    counter.add(5000);
    counter.tick(clock.monotonicMs());
    QCOMPARE(counter.isTriggered(), true); // 5000 / 1 / 5 = 1000

    const RateCounterOptions requests = RateCounterOptions::forKind(RateCounterKind::Requests);
    counter.restart(clock.monotonicMs(), requests);
    QCOMPARE(counter.options(), requests);
    QCOMPARE(counter.isTriggered(), false);

    for (int i = 0; i < 70; ++i) {
        counter.add(2);
        counter.tick(clock.monotonicMs());
        clock.advance(1000);
    }
    const RateCounterState state = counter.state();
    QCOMPARE(state.samples, 60); // the new bucket count
    QCOMPARE(state.sum, 120);
    QCOMPARE(state.average, 2.0); // the new tick: 120 / 60 / 1
    QCOMPARE(state.isTriggered, false); // requests has no limit
}

void RateCounterTest::idleCounterExpiresAndWakesFreshOnAdd()
{
    ManualClock clock;
    RateCounter counter(eventsOptions(0), clock.monotonicMs());
    counter.tick(clock.monotonicMs());
    for (int i = 0; i < 59; ++i) {
        tickAfter(counter, clock, 5000, 0);
        QVERIFY(!counter.expireIfIdle(clock.monotonicMs()));
    }
    QCOMPARE(clock.monotonicMs(), 295'000);
    clock.advance(4999);
    QVERIFY(!counter.expireIfIdle(clock.monotonicMs()));
    clock.advance(1); // 5 min since the start, every sample 0
    QVERIFY(counter.isTickDue(clock.monotonicMs()));
    QVERIFY(counter.expireIfIdle(clock.monotonicMs()));

    QVERIFY(counter.isDormant());
    QCOMPARE(counter.state(), RateCounterState{}); // limit 0, but untriggered while dormant
    QVERIFY(!counter.isTickDue(clock.monotonicMs() + 3'600'000)); // dormant: no ticks
    QVERIFY(!counter.expireIfIdle(clock.monotonicMs() + 3'600'000));

    // The next use wakes it with a fresh window, like a new upstream process.
    clock.advance(3'600'000);
    counter.add(3);
    QVERIFY(counter.isTickDue(clock.monotonicMs()));
    const RateCounterTick tick = counter.tick(clock.monotonicMs());
    QVERIFY(!counter.isDormant());
    QCOMPARE(tick.state.samples, 1);
    QCOMPARE(tick.state.sum, 3);
    QCOMPARE(tick.state.isTriggered, true);
    QCOMPARE(counter.nextTickAtMs(), clock.monotonicMs() + 5000);
    // Its idle check is re-armed from the wake-up.
    QVERIFY(!counter.expireIfIdle(clock.monotonicMs() + 299'999));
}

void RateCounterTest::idleCheckIsRearmedWhileSamplesAreNonZero()
{
    // Requests: 1 s x 60. One request at t=250 s is still in the window at the 300 s check.
    ManualClock clock;
    RateCounter counter(RateCounterOptions::forKind(RateCounterKind::Requests),
                        clock.monotonicMs());
    counter.tick(clock.monotonicMs());
    for (int second = 1; second <= 300; ++second) {
        tickAfter(counter, clock, 1000, second == 250 ? 1 : 0);
    }
    QVERIFY(!counter.expireIfIdle(clock.monotonicMs())); // re-armed for t=600 s

    for (int second = 301; second <= 599; ++second) {
        tickAfter(counter, clock, 1000, 0);
        QVERIFY(!counter.expireIfIdle(clock.monotonicMs()));
    }
    tickAfter(counter, clock, 1000, 0);
    QVERIFY(counter.expireIfIdle(clock.monotonicMs()));
}

void RateCounterTest::pendingEventsPreventIdleExpiry()
{
    RateCounter counter(eventsOptions(100), 0);
    counter.tick(0);
    counter.add(1); // not ticked yet
    QVERIFY(!counter.expireIfIdle(300'000));
    QVERIFY(!counter.isDormant());
    QCOMPARE(counter.pendingCount(), 1);
}

void RateCounterTest::idleExpiryCanBeDisabled()
{
    RateCounterOptions options = eventsOptions(100);
    options.idleShutdownMs = 0;
    RateCounter counter(options, 0);
    counter.tick(0);
    QVERIFY(!counter.expireIfIdle(qint64{ 24 } * 3'600'000));
    QVERIFY(!counter.isDormant());
}

void RateCounterTest::setLimitAppliesAtTheNextTickAndKeepsTheWindow()
{
    ManualClock clock;
    RateCounter counter(eventsOptions(100), clock.monotonicMs());
    counter.add(250);
    counter.tick(clock.monotonicMs()); // 250 / 1 / 5 = 50
    QCOMPARE(counter.isTriggered(), false);

    counter.setLimit(RateLimit{ 40, RateLimit::Measurement::Average });
    QCOMPARE(counter.isTriggered(), false); // not before the next tick
    QCOMPARE(counter.options().limit, (RateLimit{ 40, RateLimit::Measurement::Average }));

    RateCounterTick tick = tickAfter(counter, clock, 5000, 250); // [250, 250] -> 50 >= 40
    QCOMPARE(tick.state.samples, 2); // the window survived the change
    QCOMPARE(tick.state.isTriggered, true);
    QCOMPARE(tick.hasTriggeredChanged, true);

    counter.setLimit(RateLimit{ 1000, RateLimit::Measurement::Average });
    tick = tickAfter(counter, clock, 5000, 250);
    QCOMPARE(tick.state.isTriggered, false);
    QCOMPARE(tick.hasTriggeredChanged, true);

    counter.setLimit(RateLimit{ 750, RateLimit::Measurement::Sum });
    tick = tickAfter(counter, clock, 5000, 0); // sum 750 >= 750
    QCOMPARE(tick.state.sum, 750);
    QCOMPARE(tick.state.isTriggered, true);
}

void RateCounterTest::removingTheLimitReleasesAtTheNextTick()
{
    ManualClock clock;
    RateCounter counter(eventsOptions(0), clock.monotonicMs());
    counter.tick(clock.monotonicMs());
    QCOMPARE(counter.isTriggered(), true);

    counter.setLimit(std::nullopt);
    QCOMPARE(counter.isTriggered(), true);
    const RateCounterTick tick = tickAfter(counter, clock, 5000, 0);
    QCOMPARE(tick.state.isTriggered, false);
    QCOMPARE(tick.hasTriggeredChanged, true);
}

void RateCounterTest::remoteContributionsAreNotLocal()
{
    ManualClock clock;
    RateCounter counter(eventsOptions(100), clock.monotonicMs());
    counter.tick(clock.monotonicMs());

    counter.add(5);
    counter.addRemote(7);
    QCOMPARE(counter.pendingCount(), 12);
    RateCounterTick tick = tickAfter(counter, clock, 5000, 0);
    QCOMPARE(tick.state.lastCount, 12);
    QCOMPARE(tick.state.lastLocalCount, 5); // what a cluster backend would gossip
    QCOMPARE(tick.state.sum, 12);
    QCOMPARE(counter.lastLocalCount(), 5);

    counter.addRemote(500);
    tick = tickAfter(counter, clock, 5000, 0);
    QCOMPARE(tick.state.lastLocalCount, 0);
    QCOMPARE(tick.state.sum, 512);
    QCOMPARE(tick.state.average, 512.0 / 3.0 / 5.0);
    QCOMPARE(tick.state.isTriggered, false);
}

void RateCounterTest::concurrentAddsWhileTickingAreCountedExactly()
{
    constexpr int AdderCount = 8;
    constexpr int AddsPerThread = 200'000;
    RateCounterOptions options = plainOptions(1, 4);
    options.limit = RateLimit{ 1000, RateLimit::Measurement::Average };
    RateCounter counter(options, 0);

    std::atomic<bool> isAdding{ true };
    std::atomic<int> inconsistentStates{ 0 };
    qint64 ticked = 0; // written by the ticker thread only, read after join
    qint64 ticks = 0;

    std::thread ticker([&] {
        qint64 nowMs = 0;
        while (isAdding.load(std::memory_order_acquire)) {
            const RateCounterTick tick = counter.tick(nowMs++);
            ticked += tick.state.lastCount;
            ++ticks;
        }
    });
    // A reader checking that state() is always one tick's state: the average it reports is the
    // one computed from the sum and sample count it reports.
    std::thread reader([&] {
        while (isAdding.load(std::memory_order_acquire)) {
            const RateCounterState state = counter.state();
            const double expected = state.samples == 0 ? 0.0
                                                       : static_cast<double>(state.sum)
                            / static_cast<double>(state.samples) / (1.0 / 1000.0);
            if (state.average != expected || state.samples > 4 || state.sum < 0
                || state.lastLocalCount != state.lastCount) {
                inconsistentStates.fetch_add(1);
            }
        }
    });
    std::vector<std::thread> adders;
    adders.reserve(AdderCount);
    for (int thread = 0; thread < AdderCount; ++thread) {
        adders.emplace_back([&counter, thread] {
            for (int i = 0; i < AddsPerThread; ++i) {
                counter.add(thread % 2 == 0 ? 1 : 3);
            }
        });
    }
    for (std::thread &adder : adders) {
        adder.join();
    }
    isAdding.store(false, std::memory_order_release);
    ticker.join();
    reader.join();
    ticked += counter.tick(1'000'000'000).state.lastCount; // whatever the ticker did not see

    QVERIFY(ticks > 0);
    QCOMPARE(ticked, qint64{ AddsPerThread } * (AdderCount / 2) * (1 + 3));
    QCOMPARE(inconsistentStates.load(), 0);
    QCOMPARE(counter.pendingCount(), 0);
}

QTEST_GUILESS_MAIN(RateCounterTest)
#include "tst_rate_counter.moc"
