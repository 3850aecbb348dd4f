#include "server/limits/rate_counter.h"
#include "server/limits/rate_counter_key.h"
#include "server/limits/rate_counter_options.h"
#include "server/limits/rate_counter_registry.h"
#include "server/limits/rate_counter_ticker.h"
#include "shared/core/clock.h"
#include "tests/support/threads/run_on.h"

#include <QList>
#include <QTest>
#include <QThread>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>

using rt::limits::RateCounter;
using rt::limits::RateCounterKey;
using rt::limits::RateCounterKind;
using rt::limits::RateCounterOptions;
using rt::limits::RateCounterRegistry;
using rt::limits::RateCounterTicker;
using rt::limits::TickedCounter;
using namespace std::chrono_literals;

namespace {

// A manual clock that the test advances on its thread while a ticker reads it on another.
class AtomicClock final : public rt::Clock
{
public:
    qint64 monotonicMs() const override { return m_ms.load(); }
    qint64 epochMs() const override { return 1'700'000'000'000 + m_ms.load(); }
    void advance(qint64 ms) { m_ms.fetch_add(ms); }

private:
    std::atomic<qint64> m_ms{ 0 };
};

// What a ticker's observer saw, written on the ticker's thread and read on the test's.
struct ObservedPasses
{
    std::atomic<int> passes{ 0 };
    std::atomic<int> dropped{ 0 };
    std::atomic<qint64> counted{ 0 }; // Σ lastCount over every tick of every pass
    std::atomic<QThread *> thread{ nullptr }; // the thread of the last pass

    RateCounterTicker::Observer observer()
    {
        return [this](const RateCounterRegistry::TickPass &pass) {
            for (const TickedCounter &ticked : pass.ticked) {
                counted.fetch_add(ticked.tick.state.lastCount);
            }
            dropped.fetch_add(pass.dropped);
            thread.store(QThread::currentThread());
            passes.fetch_add(1);
        };
    }
};

RateCounterKey requestsKey(const QString &tenant)
{
    return RateCounterKey{ tenant, RateCounterKind::Requests };
}

const RateCounterOptions &requestsOptions()
{
    static const RateCounterOptions options =
            RateCounterOptions::forKind(RateCounterKind::Requests);
    return options;
}

} // namespace

// Tests RateCounterTicker: a QTimer on the ticker's thread that calls
// RateCounterRegistry::tickDue() with the registry's clock. Time is an AtomicClock the test
// advances, so which ticks happen is deterministic; only when the timer fires is real.
class RateCounterTickerTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void startTicksAtOnce();
    void timerTicksCountersWhenTheClockSaysSo();
    void newCounterGetsItsFirstTickWithinAResolution();
    void stopHaltsTicking();
    void observerSeesEveryPass();
    void idleCountersAreDroppedByTheTicker();
    void tickerRunsOnItsOwnThread();
};

void RateCounterTickerTest::startTicksAtOnce()
{
    AtomicClock clock;
    RateCounterRegistry registry(clock);
    const std::shared_ptr<RateCounter> counter =
            registry.obtain(requestsKey(QStringLiteral("a")), requestsOptions());
    counter->add(3);

    RateCounterTicker ticker(registry, 1h); // the timer itself never fires in this test
    QVERIFY(!ticker.isActive());
    ticker.start();
    QVERIFY(ticker.isActive());
    // Synchronously, without an event loop: the counter created before start() is ticked.
    QCOMPARE(counter->state().samples, 1);
    QCOMPARE(counter->sum(), 3);

    ticker.stop();
    QVERIFY(!ticker.isActive());
}

void RateCounterTickerTest::timerTicksCountersWhenTheClockSaysSo()
{
    AtomicClock clock;
    RateCounterRegistry registry(clock);
    const std::shared_ptr<RateCounter> counter =
            registry.obtain(requestsKey(QStringLiteral("a")), requestsOptions());
    ObservedPasses observed;
    RateCounterTicker ticker(registry, 5ms);
    ticker.setObserver(observed.observer());
    ticker.start();
    QCOMPARE(counter->state().samples, 1);

    // Requests tick every second of the registry's clock: however often the timer fires, no
    // tick happens while the clock stands still (the sentinel: five timer passes went by).
    counter->add(10);
    const int passes = observed.passes.load();
    QVERIFY(QTest::qWaitFor([&] { return observed.passes.load() >= passes + 5; }, 5000));
    QCOMPARE(counter->state().samples, 1);
    QCOMPARE(counter->pendingCount(), 10);

    for (int second = 1; second <= 3; ++second) {
        clock.advance(1000);
        QVERIFY2(QTest::qWaitFor([&] { return counter->state().samples == second + 1; }, 5000),
                 qPrintable(QStringLiteral("tick %1 did not happen").arg(second)));
        counter->add(10);
    }
    // [10, 10, 10, 0] -> 30 / 4 / 1
    QCOMPARE(counter->sum(), 30);
    QCOMPARE(counter->average(), 7.5);
    QCOMPARE(counter->pendingCount(), 10);
}

void RateCounterTickerTest::newCounterGetsItsFirstTickWithinAResolution()
{
    AtomicClock clock;
    RateCounterRegistry registry(clock);
    RateCounterTicker ticker(registry, 5ms);
    ticker.start();

    clock.advance(12'345);
    const std::shared_ptr<RateCounter> counter =
            registry.obtain(RateCounterKey{ QStringLiteral("a"), RateCounterKind::Joins },
                            RateCounterOptions::forKind(RateCounterKind::Joins, 0));
    QVERIFY(!counter->isTriggered());
    // Due at creation: the next timer pass ticks it, with no clock movement needed, and the
    // limit 0 triggers at that first tick.
    QVERIFY(QTest::qWaitFor([&] { return counter->state().samples == 1; }, 5000));
    QVERIFY(counter->isTriggered());
    QCOMPARE(counter->nextTickAtMs(), 12'345 + 5000);
}

void RateCounterTickerTest::stopHaltsTicking()
{
    AtomicClock clock;
    RateCounterRegistry registry(clock);
    const std::shared_ptr<RateCounter> counter =
            registry.obtain(requestsKey(QStringLiteral("a")), requestsOptions());
    ObservedPasses observed;
    RateCounterTicker ticker(registry, 5ms);
    ticker.setObserver(observed.observer());
    ticker.start();
    ticker.stop();
    QCOMPARE(counter->state().samples, 1);

    // A second ticker on the same registry's clock is the sentinel: once its timer has passed
    // five times, the stopped one's (same interval, started earlier) would have passed as well.
    clock.advance(10'000);
    RateCounterRegistry otherRegistry(clock);
    ObservedPasses sentinel;
    RateCounterTicker running(otherRegistry, 5ms);
    running.setObserver(sentinel.observer());
    running.start();
    QVERIFY(QTest::qWaitFor([&] { return sentinel.passes.load() >= 5; }, 5000));
    QCOMPARE(observed.passes.load(), 1); // the pass start() ran, none after stop()
    QCOMPARE(counter->state().samples, 1);
    QVERIFY(counter->isTickDue(clock.monotonicMs()));

    ticker.start(); // resumes, ticking at once
    QCOMPARE(counter->state().samples, 2);
}

void RateCounterTickerTest::observerSeesEveryPass()
{
    AtomicClock clock;
    RateCounterRegistry registry(clock);
    const std::shared_ptr<RateCounter> a =
            registry.obtain(requestsKey(QStringLiteral("a")), requestsOptions());
    const std::shared_ptr<RateCounter> b =
            registry.obtain(requestsKey(QStringLiteral("b")), requestsOptions());
    ObservedPasses observed;
    RateCounterTicker ticker(registry, 5ms);
    ticker.setObserver(observed.observer());

    a->add(4);
    b->add(5);
    ticker.start();
    QCOMPARE(observed.passes.load(), 1); // the pass start() runs
    QCOMPARE(observed.counted.load(), 9);

    // Passes keep coming with the timer, ticking or not.
    QVERIFY(QTest::qWaitFor([&] { return observed.passes.load() >= 5; }, 5000));
    QCOMPARE(observed.counted.load(), 9);

    a->add(6);
    clock.advance(1000);
    QVERIFY(QTest::qWaitFor([&] { return observed.counted.load() == 15; }, 5000));
    QCOMPARE(observed.thread.load(), QThread::currentThread());
}

void RateCounterTickerTest::idleCountersAreDroppedByTheTicker()
{
    AtomicClock clock;
    RateCounterRegistry registry(clock);
    registry.obtain(RateCounterKey{ QStringLiteral("a"), RateCounterKind::Events },
                    RateCounterOptions::forKind(RateCounterKind::Events, 100));
    const std::shared_ptr<RateCounter> held =
            registry.obtain(requestsKey(QStringLiteral("b")), requestsOptions());
    ObservedPasses observed;
    RateCounterTicker ticker(registry, 5ms);
    ticker.setObserver(observed.observer());
    ticker.start();
    QCOMPARE(registry.size(), std::size_t{ 2 });

    // Five idle minutes later: the unheld counter is dropped, the held one goes dormant.
    clock.advance(qint64{ 5 } * 60 * 1000);
    QVERIFY(QTest::qWaitFor([&] { return registry.size() == 1; }, 5000));
    QCOMPARE(observed.dropped.load(), 1);
    QVERIFY(held->isDormant());
    QCOMPARE(registry.find(requestsKey(QStringLiteral("b"))).get(), held.get());

    // Using the held one wakes it at the next pass.
    held->add(1);
    QVERIFY(QTest::qWaitFor([&] { return !held->isDormant(); }, 5000));
    QCOMPARE(held->sum(), 1);
}

void RateCounterTickerTest::tickerRunsOnItsOwnThread()
{
    AtomicClock clock;
    RateCounterRegistry registry(clock);
    const std::shared_ptr<RateCounter> counter =
            registry.obtain(requestsKey(QStringLiteral("a")), requestsOptions());
    ObservedPasses observed;

    QThread worker;
    worker.setObjectName(QStringLiteral("ticker"));
    auto *ticker = new RateCounterTicker(registry, 5ms);
    ticker->setObserver(observed.observer()); // before start(), as documented
    ticker->moveToThread(&worker);
    rt::watchFinish(&worker);
    worker.start();

    ticker->start(); // from the test's thread: queued to the worker, where the timer starts
    QVERIFY(QTest::qWaitFor([&] { return observed.passes.load() >= 3; }, 5000));
    QCOMPARE(observed.thread.load(), &worker);
    bool isActive = false;
    QVERIFY(rt::test::runOn(ticker, [&isActive, ticker] { isActive = ticker->isActive(); }));
    QVERIFY(isActive);

    // Producers on this thread, ticks on the worker: every add lands in exactly one tick.
    qint64 added = 0;
    for (int second = 1; second <= 5; ++second) {
        for (int i = 0; i < 1000; ++i) {
            counter->add(second);
            added += second;
        }
        clock.advance(1000);
        QVERIFY(QTest::qWaitFor([&] { return counter->state().samples == second + 1; }, 5000));
    }
    QCOMPARE(observed.counted.load(), added);
    QCOMPARE(counter->sum(), added);

    ticker->stop(); // queued as well
    QVERIFY(rt::test::runOn(ticker, [&isActive, ticker] { isActive = ticker->isActive(); }));
    QVERIFY(!isActive);
    const int passes = observed.passes.load();
    clock.advance(1000);
    // The sentinel: a second ticker with the same interval on this thread passes five times.
    RateCounterRegistry otherRegistry(clock);
    ObservedPasses sentinel;
    RateCounterTicker running(otherRegistry, 5ms);
    running.setObserver(sentinel.observer());
    running.start();
    QVERIFY(QTest::qWaitFor([&] { return sentinel.passes.load() >= 5; }, 5000));
    QCOMPARE(observed.passes.load(), passes);
    QCOMPARE(counter->state().samples, 6);

    QVERIFY(rt::test::runOn(ticker, [ticker] { delete ticker; }));
    worker.quit();
    QVERIFY(rt::waitFinished(&worker, QDeadlineTimer(5000)));
}

QTEST_GUILESS_MAIN(RateCounterTickerTest)
#include "tst_rate_counter_ticker.moc"
