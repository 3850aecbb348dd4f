#include "server/runtime/epoll_event_dispatcher.h"
#include "server/runtime/post.h"
#include "tests/support/threads/semaphore.h"

#include <QElapsedTimer>
#include <QPointer>
#include <QScopeGuard>
#include <QSocketNotifier>
#include <QTest>
#include <QThread>
#include <QTimer>

#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

using rt::runtime::EpollEventDispatcher;

namespace {

constexpr int WaitMs = 5000;
constexpr std::size_t BatchSockets = 3;

// A worker thread as the server runs them: a QThread whose event loop is an EpollEventDispatcher.
// With RT_TEST_REFERENCE_DISPATCHER=1 the thread keeps Qt's own dispatcher instead, to check that
// an expectation below is Qt's behaviour and not an artefact of the test.
class Worker
{
public:
    explicit Worker(bool useEpoll) : m_useEpoll(useEpoll)
    {
        if (useEpoll) {
            m_thread.setEventDispatcher(new EpollEventDispatcher);
        }
        m_context.moveToThread(&m_thread);
        rt::watchFinish(&m_thread);
        m_thread.start();
    }
    ~Worker() { stop(); }
    Worker(const Worker &) = delete;
    Worker &operator=(const Worker &) = delete;

    bool stop()
    {
        m_thread.quit();
        return rt::waitFinished(&m_thread, QDeadlineTimer(WaitMs));
    }

    // Runs `fn` on the worker and waits until it has run there. Everything `fn` touches is then
    // safely visible to the caller (the semaphore orders the two threads).
    template <typename Fn>
    bool run(Fn fn)
    {
        // Shared, so that a call that runs after a timed-out wait does not touch a dead semaphore.
        const auto done = std::make_shared<rt::test::Semaphore>();
        rt::runtime::post(&m_context, [done, fn] {
            fn();
            done->release();
        });
        return done->tryAcquire(1, WaitMs);
    }

    QThread &thread() { return m_thread; }
    QObject *context() { return &m_context; }
    QAbstractEventDispatcher *dispatcher() { return QAbstractEventDispatcher::instance(&m_thread); }
    bool usesEpoll() const { return m_useEpoll; }

private:
    bool m_useEpoll;
    QThread m_thread;
    QObject m_context; // lives on the worker; receives run()'s calls
};

// A connected pair of non-blocking UNIX stream sockets.
class SocketPair
{
public:
    SocketPair()
    {
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, m_fds.data())
            != 0) {
            m_fds = { -1, -1 };
        }
    }
    ~SocketPair()
    {
        for (const int fd : m_fds) {
            if (fd >= 0) {
                ::close(fd);
            }
        }
    }
    SocketPair(const SocketPair &) = delete;
    SocketPair &operator=(const SocketPair &) = delete;

    bool isValid() const { return m_fds[0] >= 0; }
    int watched() const { return m_fds[0]; }
    // Writes to the peer, making watched() readable.
    bool send(QByteArrayView data) const
    {
        return ::write(m_fds[1], data.data(), static_cast<size_t>(data.size())) == data.size();
    }
    // Closes the peer: watched() then reports end of stream.
    void closePeer()
    {
        ::close(m_fds[1]);
        m_fds[1] = -1;
    }
    // Reads what is pending on watched().
    QByteArray drain() const
    {
        QByteArray all;
        char buffer[256];
        for (;;) {
            const ssize_t got = ::read(m_fds[0], buffer, sizeof(buffer));
            if (got <= 0) {
                return all;
            }
            all.append(buffer, static_cast<qsizetype>(got));
        }
    }

private:
    std::array<int, 2> m_fds{ -1, -1 };
};

} // namespace

// Tests the epoll event dispatcher of the worker threads against QEventDispatcherUNIX's
// semantics: QTimer single-shot, repeating and zero timers in due order, stopping, restarting and
// remainingTime; level-triggered socket notifiers on a socketpair, including deletion inside an
// activation batch; wake-ups from other threads, deleteLater, quit, and timers of objects moved
// between threads.
class EpollEventDispatcherTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void isTheWorkersDispatcher();
    void singleShotFiresOnceAfterItsInterval();
    void repeatingTimerKeepsItsInterval();
    void timersFireInDueOrder();
    void stoppedTimerDoesNotFire();
    void restartedTimerFiresOnceAtItsNewDue();
    void timerStoppedInItsOwnHandlerFiresOnce();
    void timerDeletedByAnEarlierHandlerOfTheSameBatch();
    void zeroTimerRunsEveryPassWithoutStarvingOthers();
    void remainingTime();
    void lateRepeatingTimerResumesItsPeriod();

    void readNotifierFiresOnlyWhenDataArrives();
    void readNotifierIsLevelTriggered();
    void readNotifierSeesThePeerClosing();
    void writeNotifierFiresWhenWritable();
    void disabledNotifierStaysQuietUntilReenabled();
    void deletingOtherNotifiersInTheSameBatch();
    void deletingTheWriteNotifierOfTheSameDescriptor();

    void postFromAnotherThreadEndsALongWait();
    void wakeUpFromAnotherThread();
    void nonBlockingProcessEventsReturns();
    void deleteLaterDeletesOnTheWorker();
    void quitEndsTheLoopPromptly();
    void timerMovedOntoTheWorkerKeepsRunning();
    void registeredTimersOfAnObject();

private:
    // Waits `ms` on the worker with a single-shot timer: whatever the worker had to do until then
    // (and what was due before) has happened.
    bool waitOnWorker(int ms);

    // Deletes what the test created on the worker (the children of m_scope) when the test returns,
    // also after a failed check: declared after the locals that the test's callbacks use, it runs
    // before they are destroyed.
    [[nodiscard]] auto scopeReset()
    {
        return qScopeGuard([this] { resetScope(); });
    }
    void resetScope();
    // A socket pair that outlives the test's notifiers (closed in cleanup(), after them).
    SocketPair &socketPair();

    std::unique_ptr<Worker> m_worker;
    QObject *m_scope = nullptr; // lives on the worker; parent of the objects a test creates there
    std::vector<std::unique_ptr<SocketPair>> m_pairs;
};

void EpollEventDispatcherTest::init()
{
    m_worker = std::make_unique<Worker>(!qEnvironmentVariableIsSet("RT_TEST_REFERENCE_DISPATCHER"));
    QVERIFY(m_worker->run([this] { m_scope = new QObject; }));
}

void EpollEventDispatcherTest::cleanup()
{
    if (m_worker->thread().isRunning()) {
        QVERIFY(m_worker->run([this] { delete m_scope; }));
    } else {
        delete m_scope; // the thread has ended: safe from here
    }
    m_scope = nullptr;
    m_pairs.clear();
    QVERIFY(m_worker->stop());
    m_worker.reset();
}

void EpollEventDispatcherTest::resetScope()
{
    if (m_scope != nullptr && m_worker->thread().isRunning()) {
        QVERIFY(m_worker->run([this] {
            delete m_scope;
            m_scope = new QObject;
        }));
    }
}

SocketPair &EpollEventDispatcherTest::socketPair()
{
    m_pairs.push_back(std::make_unique<SocketPair>());
    return *m_pairs.back();
}

bool EpollEventDispatcherTest::waitOnWorker(int ms)
{
    const auto elapsed = std::make_shared<rt::test::Semaphore>();
    const bool started = m_worker->run([this, ms, elapsed] {
        QTimer::singleShot(ms, m_scope, [elapsed] { elapsed->release(); });
    });
    return started && elapsed->tryAcquire(1, ms + WaitMs);
}

void EpollEventDispatcherTest::isTheWorkersDispatcher()
{
    if (!m_worker->usesEpoll()) {
        QSKIP("reference run with Qt's dispatcher");
    }
    QAbstractEventDispatcher *seen = nullptr;
    QVERIFY(m_worker->run([&seen] { seen = QAbstractEventDispatcher::instance(); }));
    QVERIFY(qobject_cast<EpollEventDispatcher *>(seen) != nullptr);
    QCOMPARE(seen, m_worker->dispatcher());
    QCOMPARE(seen->thread(), &m_worker->thread());
}

void EpollEventDispatcherTest::singleShotFiresOnceAfterItsInterval()
{
    std::atomic<int> fired{ 0 };
    std::atomic<qint64> elapsedMs{ -1 };
    rt::test::Semaphore done;
    const auto reset = scopeReset();
    QVERIFY(m_worker->run([&] {
        auto *clock = new QElapsedTimer;
        clock->start();
        QTimer::singleShot(50, m_scope, [&, clock] {
            elapsedMs = clock->elapsed();
            delete clock;
            ++fired;
            done.release();
        });
    }));
    QVERIFY(done.tryAcquire(1, WaitMs));
    QVERIFY2(elapsedMs >= 49 && elapsedMs < 50 + 1000, qPrintable(QString::number(elapsedMs)));
    // Three more intervals later it has still fired once.
    QVERIFY(waitOnWorker(150));
    QCOMPARE(fired.load(), 1);
}

void EpollEventDispatcherTest::repeatingTimerKeepsItsInterval()
{
    constexpr int Interval = 20;
    constexpr int Ticks = 10;
    std::atomic<int> ticks{ 0 };
    std::atomic<qint64> totalMs{ -1 };
    rt::test::Semaphore done;
    const auto reset = scopeReset();
    QVERIFY(m_worker->run([&] {
        auto *timer = new QTimer(m_scope);
        timer->setTimerType(Qt::PreciseTimer);
        auto *clock = new QElapsedTimer;
        clock->start();
        connect(timer, &QTimer::timeout, timer, [&, timer, clock] {
            if (++ticks == Ticks) {
                totalMs = clock->elapsed();
                delete clock;
                timer->stop();
                done.release();
            }
        });
        timer->start(Interval);
    }));
    QVERIFY(done.tryAcquire(1, WaitMs));
    // Ten periods: not earlier, and not dramatically later (loaded CI machines are slow).
    QVERIFY2(totalMs >= Ticks * Interval - 2 && totalMs < Ticks * Interval + 1500,
             qPrintable(QString::number(totalMs)));
    QVERIFY(waitOnWorker(3 * Interval));
    QCOMPARE(ticks.load(), Ticks);
}

void EpollEventDispatcherTest::timersFireInDueOrder()
{
    std::mutex mutex;
    QList<int> order; // guarded by mutex
    rt::test::Semaphore done;
    const auto reset = scopeReset();
    QVERIFY(m_worker->run([&] {
        for (const int interval : { 60, 20, 40, 0, 10, 30 }) {
            QTimer::singleShot(interval, Qt::PreciseTimer, m_scope, [&, interval] {
                const std::lock_guard lock(mutex);
                order.append(interval);
                done.release();
            });
        }
    }));
    QVERIFY(done.tryAcquire(6, WaitMs));
    const std::lock_guard lock(mutex);
    QCOMPARE(order, (QList<int>{ 0, 10, 20, 30, 40, 60 }));
}

void EpollEventDispatcherTest::stoppedTimerDoesNotFire()
{
    std::atomic<int> fired{ 0 };
    bool activeAfterStop = true;
    const auto reset = scopeReset();
    QVERIFY(m_worker->run([&] {
        auto *timer = new QTimer(m_scope);
        timer->setSingleShot(true);
        connect(timer, &QTimer::timeout, timer, [&] { ++fired; });
        timer->start(30);
        timer->stop();
        activeAfterStop = timer->isActive();
    }));
    QVERIFY(!activeAfterStop);
    QVERIFY(waitOnWorker(100));
    QCOMPARE(fired.load(), 0);
}

void EpollEventDispatcherTest::restartedTimerFiresOnceAtItsNewDue()
{
    std::atomic<int> fired{ 0 };
    std::atomic<qint64> elapsedMs{ -1 };
    rt::test::Semaphore done;
    QElapsedTimer clock;
    const auto reset = scopeReset();
    QVERIFY(m_worker->run([&] {
        auto *timer = new QTimer(m_scope);
        timer->setSingleShot(true);
        connect(timer, &QTimer::timeout, timer, [&] {
            elapsedMs = clock.elapsed();
            ++fired;
            done.release();
        });
        clock.start();
        timer->start(400);
        timer->start(30); // restart with a shorter interval replaces the first
    }));
    QVERIFY(done.tryAcquire(1, WaitMs));
    QVERIFY2(elapsedMs >= 29 && elapsedMs < 400, qPrintable(QString::number(elapsedMs)));
    // Past the first due time: no second timeout.
    QVERIFY(waitOnWorker(450));
    QCOMPARE(fired.load(), 1);

    // A later restart of the same timer fires again.
    QVERIFY(m_worker->run([&] {
        const QList<QTimer *> timers = m_scope->findChildren<QTimer *>();
        timers.constFirst()->start(10);
    }));
    QVERIFY(done.tryAcquire(1, WaitMs));
    QCOMPARE(fired.load(), 2);
}

void EpollEventDispatcherTest::timerStoppedInItsOwnHandlerFiresOnce()
{
    std::atomic<int> fired{ 0 };
    const auto reset = scopeReset();
    QVERIFY(m_worker->run([&] {
        auto *timer = new QTimer(m_scope);
        connect(timer, &QTimer::timeout, timer, [&, timer] {
            ++fired;
            timer->stop();
        });
        timer->start(5);
    }));
    QVERIFY(waitOnWorker(100));
    QCOMPARE(fired.load(), 1);
}

void EpollEventDispatcherTest::timerDeletedByAnEarlierHandlerOfTheSameBatch()
{
    // Two timers due together; whichever fires first deletes the other. The dispatcher collects
    // due timers before activating them and must not activate the deleted one.
    std::atomic<int> fired{ 0 };
    const auto reset = scopeReset();
    QVERIFY(m_worker->run([&] {
        auto *first = new QTimer(m_scope);
        auto *second = new QTimer(m_scope);
        const auto handler = [&fired](QTimer *self, QPointer<QTimer> other) {
            ++fired;
            self->stop();
            delete other.data();
        };
        connect(first, &QTimer::timeout, first, [=] { handler(first, QPointer<QTimer>(second)); });
        connect(second, &QTimer::timeout, second,
                [=] { handler(second, QPointer<QTimer>(first)); });
        first->start(20);
        second->start(20);
    }));
    QVERIFY(waitOnWorker(100));
    QCOMPARE(fired.load(), 1);
}

void EpollEventDispatcherTest::zeroTimerRunsEveryPassWithoutStarvingOthers()
{
    std::atomic<int> zeroTicks{ 0 };
    std::atomic<int> zeroTicksWhenDue{ -1 };
    rt::test::Semaphore due;
    rt::test::Semaphore posted;
    const SocketPair &pair = socketPair();
    QVERIFY(pair.isValid());
    rt::test::Semaphore socketSeen;
    const auto reset = scopeReset();
    QVERIFY(m_worker->run([&] {
        auto *zero = new QTimer(m_scope);
        connect(zero, &QTimer::timeout, zero, [&] { ++zeroTicks; });
        zero->start(0);
        QTimer::singleShot(30, Qt::PreciseTimer, m_scope, [&] {
            zeroTicksWhenDue = zeroTicks.load();
            due.release();
        });
        auto *notifier = new QSocketNotifier(pair.watched(), QSocketNotifier::Read, m_scope);
        connect(notifier, &QSocketNotifier::activated, notifier, [&] {
            pair.drain();
            socketSeen.release();
        });
    }));
    // While the zero timer spins, timers, posted calls and sockets still get their turn.
    QVERIFY(due.tryAcquire(1, WaitMs));
    QVERIFY2(zeroTicksWhenDue > 1, qPrintable(QString::number(zeroTicksWhenDue)));
    rt::runtime::post(m_worker->context(), [&posted] { posted.release(); });
    QVERIFY(posted.tryAcquire(1, WaitMs));
    QVERIFY(pair.send("x"));
    QVERIFY(socketSeen.tryAcquire(1, WaitMs));
    const int before = zeroTicks;
    QVERIFY(waitOnWorker(10));
    QVERIFY(zeroTicks > before);
}

void EpollEventDispatcherTest::remainingTime()
{
    int longRemaining = -2;
    int zeroRemaining = -2;
    int stoppedRemaining = -2;
    int unknownRemaining = -2;
    const auto reset = scopeReset();
    QVERIFY(m_worker->run([&] {
        auto *timer = new QTimer(m_scope);
        timer->setTimerType(Qt::PreciseTimer); // coarse timers may be moved by up to 5 %
        timer->start(1000);
        longRemaining = timer->remainingTime();
        auto *zero = new QTimer(m_scope);
        zero->start(0);
        zeroRemaining = zero->remainingTime();
        zero->stop();
        timer->stop();
        stoppedRemaining = timer->remainingTime();
        unknownRemaining = QAbstractEventDispatcher::instance()->remainingTime(987654);
    }));
    QVERIFY2(longRemaining > 900 && longRemaining <= 1000,
             qPrintable(QString::number(longRemaining)));
    QCOMPARE(zeroRemaining, 0);
    QCOMPARE(stoppedRemaining, -1);
    QCOMPARE(unknownRemaining, -1);

    // Later, less remains.
    int first = -1;
    int later = -1;
    QTimer *timer = nullptr;
    QVERIFY(m_worker->run([&] {
        timer = new QTimer(m_scope);
        timer->setTimerType(Qt::PreciseTimer);
        timer->start(500);
        first = timer->remainingTime();
    }));
    QVERIFY(waitOnWorker(100));
    QVERIFY(m_worker->run([&] { later = timer->remainingTime(); }));
    QVERIFY2(later < first - 50 && later >= 0,
             qPrintable(QStringLiteral("%1 then %2").arg(first).arg(later)));
}

void EpollEventDispatcherTest::lateRepeatingTimerResumesItsPeriod()
{
    // QEventDispatcherUNIX (QTimerInfoList): a repeating timer that is late by more than its
    // interval fires once at once and then schedules the next timeout one full interval after
    // "now" -- it does not fire back-to-back to catch up.
    constexpr int Interval = 100;
    constexpr int SlowHandlerMs = 250;
    std::mutex mutex;
    QList<qint64> stamps; // guarded by mutex
    rt::test::Semaphore done;
    const auto reset = scopeReset();
    QVERIFY(m_worker->run([&] {
        auto *timer = new QTimer(m_scope);
        timer->setTimerType(Qt::PreciseTimer);
        auto *clock = new QElapsedTimer;
        clock->start();
        connect(timer, &QTimer::timeout, timer, [&, timer, clock] {
            qsizetype count = 0;
            {
                const std::lock_guard lock(mutex);
                stamps.append(clock->elapsed());
                count = stamps.size();
            }
            if (count == 1) {
                // A slow handler: the work it models takes longer than two intervals.
                QThread::msleep(SlowHandlerMs);
            } else if (count == 3) {
                timer->stop();
                delete clock;
                done.release();
            }
        });
        timer->start(Interval);
    }));
    QVERIFY(done.tryAcquire(1, WaitMs));
    const std::lock_guard lock(mutex);
    QCOMPARE(stamps.size(), 3);
    // Tick 2 comes right after the slow handler (it was overdue).
    QVERIFY2(stamps[1] - stamps[0] >= SlowHandlerMs,
             qPrintable(QStringLiteral("ticks at %1, %2, %3")
                                .arg(stamps[0])
                                .arg(stamps[1])
                                .arg(stamps[2])));
    QVERIFY2(stamps[2] - stamps[1] >= Interval * 8 / 10,
             qPrintable(QStringLiteral("ticks at %1, %2, %3")
                                .arg(stamps[0])
                                .arg(stamps[1])
                                .arg(stamps[2])));
}

void EpollEventDispatcherTest::readNotifierFiresOnlyWhenDataArrives()
{
    const SocketPair &pair = socketPair();
    QVERIFY(pair.isValid());
    std::atomic<int> activations{ 0 };
    std::mutex mutex;
    QByteArray received; // guarded by mutex
    rt::test::Semaphore activated;
    const auto reset = scopeReset();
    QVERIFY(m_worker->run([&] {
        auto *notifier = new QSocketNotifier(pair.watched(), QSocketNotifier::Read, m_scope);
        connect(notifier, &QSocketNotifier::activated, notifier,
                [&](QSocketDescriptor socket, QSocketNotifier::Type type) {
                    if (static_cast<int>(socket) != pair.watched()
                        || type != QSocketNotifier::Read) {
                        return;
                    }
                    ++activations;
                    const std::lock_guard lock(mutex);
                    received += pair.drain();
                    activated.release();
                });
    }));
    // Nothing to read yet: no activation.
    QVERIFY(waitOnWorker(50));
    QCOMPARE(activations.load(), 0);

    QVERIFY(pair.send("hello"));
    QVERIFY(activated.tryAcquire(1, WaitMs));
    {
        const std::lock_guard lock(mutex);
        QCOMPARE(received, QByteArray("hello"));
    }
    // Drained: quiet again until the next write.
    QVERIFY(waitOnWorker(30));
    QCOMPARE(activations.load(), 1);
    QVERIFY(pair.send(" world"));
    QVERIFY(activated.tryAcquire(1, WaitMs));
    const std::lock_guard lock(mutex);
    QCOMPARE(received, QByteArray("hello world"));
    QCOMPARE(activations.load(), 2);
}

void EpollEventDispatcherTest::readNotifierIsLevelTriggered()
{
    // Like QEventDispatcherUNIX (poll): a notifier keeps firing while data is pending.
    const SocketPair &pair = socketPair();
    QVERIFY(pair.isValid());
    std::atomic<int> activations{ 0 };
    rt::test::Semaphore drained;
    const auto reset = scopeReset();
    QVERIFY(m_worker->run([&] {
        auto *notifier = new QSocketNotifier(pair.watched(), QSocketNotifier::Read, m_scope);
        connect(notifier, &QSocketNotifier::activated, notifier, [&] {
            if (++activations == 3) {
                pair.drain();
                drained.release();
            }
        });
    }));
    QVERIFY(pair.send("x"));
    QVERIFY(drained.tryAcquire(1, WaitMs));
    QVERIFY(waitOnWorker(30));
    QCOMPARE(activations.load(), 3);
}

void EpollEventDispatcherTest::readNotifierSeesThePeerClosing()
{
    // A hang-up is reported to the reader (as poll() does), which then reads end of stream.
    SocketPair &pair = socketPair();
    QVERIFY(pair.isValid());
    std::atomic<int> activations{ 0 };
    rt::test::Semaphore activated;
    const auto reset = scopeReset();
    QVERIFY(m_worker->run([&] {
        auto *notifier = new QSocketNotifier(pair.watched(), QSocketNotifier::Read, m_scope);
        connect(notifier, &QSocketNotifier::activated, notifier, [&, notifier] {
            ++activations;
            char byte = 0;
            if (::read(pair.watched(), &byte, 1) == 0) {
                notifier->setEnabled(false); // end of stream: the connection is over
                activated.release();
            }
        });
    }));
    QVERIFY(waitOnWorker(20));
    QCOMPARE(activations.load(), 0);
    pair.closePeer();
    QVERIFY(activated.tryAcquire(1, WaitMs));
    QCOMPARE(activations.load(), 1);
}

void EpollEventDispatcherTest::writeNotifierFiresWhenWritable()
{
    const SocketPair &pair = socketPair();
    QVERIFY(pair.isValid());
    std::atomic<int> activations{ 0 };
    rt::test::Semaphore activated;
    const auto reset = scopeReset();
    QVERIFY(m_worker->run([&] {
        auto *notifier = new QSocketNotifier(pair.watched(), QSocketNotifier::Write, m_scope);
        connect(notifier, &QSocketNotifier::activated, notifier,
                [&, notifier](QSocketDescriptor, QSocketNotifier::Type type) {
                    if (type == QSocketNotifier::Write) {
                        ++activations;
                        notifier->setEnabled(false); // written what it had
                        activated.release();
                    }
                });
    }));
    // An empty socket buffer is writable at once.
    QVERIFY(activated.tryAcquire(1, WaitMs));
    QVERIFY(waitOnWorker(30));
    QCOMPARE(activations.load(), 1);
}

void EpollEventDispatcherTest::disabledNotifierStaysQuietUntilReenabled()
{
    const SocketPair &pair = socketPair();
    QVERIFY(pair.isValid());
    std::atomic<int> activations{ 0 };
    rt::test::Semaphore activated;
    QSocketNotifier *notifier = nullptr;
    const auto reset = scopeReset();
    QVERIFY(m_worker->run([&] {
        notifier = new QSocketNotifier(pair.watched(), QSocketNotifier::Read, m_scope);
        connect(notifier, &QSocketNotifier::activated, notifier, [&] {
            ++activations;
            notifier->setEnabled(false); // without reading: the data stays pending
            activated.release();
        });
    }));
    QVERIFY(pair.send("pending"));
    QVERIFY(activated.tryAcquire(1, WaitMs));
    QVERIFY(waitOnWorker(50));
    QCOMPARE(activations.load(), 1);

    // Disabled before any data arrived: nothing either.
    QVERIFY(waitOnWorker(10));
    QCOMPARE(activations.load(), 1);

    // Enabled again: the pending data is reported.
    QVERIFY(m_worker->run([&] { notifier->setEnabled(true); }));
    QVERIFY(activated.tryAcquire(1, WaitMs));
    QCOMPARE(activations.load(), 2);
    QCOMPARE(pair.drain(), QByteArray("pending"));
}

void EpollEventDispatcherTest::deletingOtherNotifiersInTheSameBatch()
{
    // Three sockets become readable before the loop looks, so one epoll_wait reports all three.
    // The first activation deletes the other notifiers; the dispatcher must not touch them.
    std::array<const SocketPair *, BatchSockets> pairs{};
    for (const SocketPair *&pair : pairs) {
        pair = &socketPair();
        QVERIFY(pair->isValid());
        QVERIFY(pair->send("x"));
    }
    std::atomic<int> activations{ 0 };
    const auto reset = scopeReset();
    QVERIFY(m_worker->run([&] {
        auto notifiers = std::make_shared<std::array<QPointer<QSocketNotifier>, BatchSockets>>();
        for (std::size_t i = 0; i < BatchSockets; ++i) {
            (*notifiers)[i] =
                    new QSocketNotifier(pairs[i]->watched(), QSocketNotifier::Read, m_scope);
        }
        for (std::size_t i = 0; i < BatchSockets; ++i) {
            connect((*notifiers)[i].data(), &QSocketNotifier::activated, (*notifiers)[i].data(),
                    [&activations, notifiers, i, &pairs] {
                        ++activations;
                        pairs[i]->drain();
                        for (std::size_t other = 0; other < BatchSockets; ++other) {
                            if (other != i) {
                                delete (*notifiers)[other].data();
                            }
                        }
                    });
        }
    }));
    QVERIFY(waitOnWorker(50));
    QCOMPARE(activations.load(), 1);
    if (m_worker->usesEpoll()) {
        const auto *epoll = static_cast<EpollEventDispatcher *>(m_worker->dispatcher());
        qsizetype watched = -1;
        QVERIFY(m_worker->run([&] { watched = epoll->watchedDescriptors(); }));
        QCOMPARE(watched, qsizetype(1)); // the survivor only
    }
}

void EpollEventDispatcherTest::deletingTheWriteNotifierOfTheSameDescriptor()
{
    // One descriptor, readable and writable in the same epoll event: the read handler deletes
    // the write notifier, which must then not be activated.
    const SocketPair &pair = socketPair();
    QVERIFY(pair.isValid());
    QVERIFY(pair.send("x"));
    std::atomic<int> reads{ 0 };
    std::atomic<int> writes{ 0 };
    const auto reset = scopeReset();
    QVERIFY(m_worker->run([&] {
        auto *reader = new QSocketNotifier(pair.watched(), QSocketNotifier::Read, m_scope);
        auto *writer = new QSocketNotifier(pair.watched(), QSocketNotifier::Write, m_scope);
        QPointer<QSocketNotifier> guardedWriter(writer);
        connect(reader, &QSocketNotifier::activated, reader, [&, guardedWriter] {
            ++reads;
            pair.drain();
            delete guardedWriter.data();
        });
        connect(writer, &QSocketNotifier::activated, writer, [&] { ++writes; });
    }));
    QVERIFY(waitOnWorker(50));
    QCOMPARE(reads.load(), 1);
    QCOMPARE(writes.load(), 0);
}

void EpollEventDispatcherTest::postFromAnotherThreadEndsALongWait()
{
    // The worker blocks in epoll_wait until a 10 s timer; a call posted from here must run
    // promptly, not when the timer is due.
    rt::test::Semaphore blocked;
    const auto reset = scopeReset();
    QVERIFY(m_worker->run([&] {
        auto *longTimer = new QTimer(m_scope);
        longTimer->start(10000);
        connect(
                m_worker->dispatcher(), &QAbstractEventDispatcher::aboutToBlock, m_scope,
                [&blocked] { blocked.release(); }, Qt::DirectConnection);
    }));
    QVERIFY(blocked.tryAcquire(1, WaitMs));

    rt::test::Semaphore ran;
    QElapsedTimer clock;
    clock.start();
    rt::runtime::post(m_worker->context(), [&ran] { ran.release(); });
    QVERIFY(ran.tryAcquire(1, WaitMs));
    QVERIFY2(clock.elapsed() < 1000, qPrintable(QString::number(clock.elapsed())));
}

void EpollEventDispatcherTest::wakeUpFromAnotherThread()
{
    rt::test::Semaphore blocked;
    rt::test::Semaphore awake;
    const auto reset = scopeReset();
    QVERIFY(m_worker->run([&] {
        auto *longTimer = new QTimer(m_scope);
        longTimer->start(10000);
        connect(
                m_worker->dispatcher(), &QAbstractEventDispatcher::aboutToBlock, m_scope,
                [&blocked] { blocked.release(); }, Qt::DirectConnection);
        connect(
                m_worker->dispatcher(), &QAbstractEventDispatcher::awake, m_scope,
                [&awake] { awake.release(); }, Qt::DirectConnection);
    }));
    QVERIFY(blocked.tryAcquire(1, WaitMs));
    while (awake.tryAcquire()) { }
    while (blocked.tryAcquire()) { }

    QElapsedTimer clock;
    clock.start();
    m_worker->dispatcher()->wakeUp(); // thread-safe; nothing posted
    QVERIFY(awake.tryAcquire(1, WaitMs));
    QVERIFY2(clock.elapsed() < 1000, qPrintable(QString::number(clock.elapsed())));
    // And it goes back to sleep.
    QVERIFY(blocked.tryAcquire(1, WaitMs));
}

void EpollEventDispatcherTest::nonBlockingProcessEventsReturns()
{
    qint64 elapsedMs = -1;
    const auto reset = scopeReset();
    QVERIFY(m_worker->run([&] {
        auto *longTimer = new QTimer(m_scope);
        longTimer->start(10000);
        QElapsedTimer clock;
        clock.start();
        // Without WaitForMoreEvents the dispatcher polls and returns.
        QAbstractEventDispatcher::instance()->processEvents(QEventLoop::AllEvents);
        elapsedMs = clock.elapsed();
    }));
    QVERIFY2(elapsedMs < 1000, qPrintable(QString::number(elapsedMs)));
}

void EpollEventDispatcherTest::deleteLaterDeletesOnTheWorker()
{
    rt::test::Semaphore destroyed;
    std::mutex mutex;
    QList<QThread *> threads; // guarded by mutex
    QObject *fromWorker = nullptr;
    QObject *fromMain = nullptr;
    const auto reset = scopeReset();
    QVERIFY(m_worker->run([&] {
        for (QObject **slot : { &fromWorker, &fromMain }) {
            *slot = new QObject; // no parent: only deleteLater deletes it
            connect(
                    *slot, &QObject::destroyed, m_scope,
                    [&] {
                        const std::lock_guard lock(mutex);
                        threads.append(QThread::currentThread());
                        destroyed.release();
                    },
                    Qt::DirectConnection);
        }
        fromWorker->deleteLater();
    }));
    QVERIFY(destroyed.tryAcquire(1, WaitMs));

    // deleteLater() called from another thread: deleted by the worker's loop.
    fromMain->deleteLater();
    QVERIFY(destroyed.tryAcquire(1, WaitMs));
    const std::lock_guard lock(mutex);
    QCOMPARE(threads, (QList<QThread *>{ &m_worker->thread(), &m_worker->thread() }));
}

void EpollEventDispatcherTest::quitEndsTheLoopPromptly()
{
    rt::test::Semaphore blocked;
    const auto reset = scopeReset();
    QVERIFY(m_worker->run([&] {
        auto *longTimer = new QTimer(m_scope);
        longTimer->start(10000);
        connect(
                m_worker->dispatcher(), &QAbstractEventDispatcher::aboutToBlock, m_scope,
                [&blocked] { blocked.release(); }, Qt::DirectConnection);
    }));
    QVERIFY(blocked.tryAcquire(1, WaitMs));
    QVERIFY(m_worker->run([this] {
        delete m_scope; // the long timer goes with it, on its own thread
        m_scope = nullptr;
    }));

    QElapsedTimer clock;
    clock.start();
    m_worker->thread().quit();
    QVERIFY(m_worker->thread().wait(WaitMs));
    QVERIFY2(clock.elapsed() < 1000, qPrintable(QString::number(clock.elapsed())));
    QVERIFY(m_worker->thread().isFinished());
}

void EpollEventDispatcherTest::timerMovedOntoTheWorkerKeepsRunning()
{
    // A QTimer started on this thread moves to the worker and keeps ticking there (Qt re-registers
    // it with the worker's dispatcher); moved back, it ticks here again (Qt reads the timers to
    // move from the worker's dispatcher: registeredTimers/unregisterTimers).
    std::mutex mutex;
    QList<QThread *> tickThreads; // guarded by mutex
    rt::test::Semaphore ticked;
    auto *timer = new QTimer; // no parent: it changes threads
    timer->setTimerType(Qt::PreciseTimer);
    connect(timer, &QTimer::timeout, timer, [&] {
        const std::lock_guard lock(mutex);
        tickThreads.append(QThread::currentThread());
        ticked.release();
    });
    timer->start(15);
    // On an early return: cut the callbacks off (thread-safe) and let the timer's thread delete it.
    auto dropTimer = qScopeGuard([timer] {
        QObject::disconnect(timer, nullptr, nullptr, nullptr);
        timer->deleteLater();
    });
    timer->moveToThread(&m_worker->thread());

    QVERIFY(ticked.tryAcquire(3, WaitMs));
    {
        const std::lock_guard lock(mutex);
        for (QThread *thread : std::as_const(tickThreads)) {
            QCOMPARE(thread, &m_worker->thread());
        }
    }
    bool activeOnWorker = false;
    QThread *mainThread = QThread::currentThread();
    QVERIFY(m_worker->run([&] {
        activeOnWorker = timer->isActive();
        timer->moveToThread(mainThread);
    }));
    QVERIFY(activeOnWorker);
    {
        const std::lock_guard lock(mutex);
        tickThreads.clear();
    }
    while (ticked.tryAcquire()) { }
    // Now on this thread: its ticks need this thread's loop.
    QTRY_VERIFY_WITH_TIMEOUT(ticked.available() >= 2, WaitMs);
    timer->stop();
    {
        const std::lock_guard lock(mutex);
        QVERIFY(!tickThreads.isEmpty());
        for (QThread *thread : std::as_const(tickThreads)) {
            QCOMPARE(thread, mainThread);
        }
    }
    dropTimer.dismiss();
    delete timer;
}

void EpollEventDispatcherTest::registeredTimersOfAnObject()
{
    QList<QAbstractEventDispatcher::TimerInfo> running;
    QList<QAbstractEventDispatcher::TimerInfo> stopped;
    int preciseId = 0;
    int coarseId = 0;
    QVERIFY(m_worker->run([&] {
        auto *owner = new QObject(m_scope);
        preciseId = owner->startTimer(25, Qt::PreciseTimer);
        coarseId = owner->startTimer(3000, Qt::CoarseTimer);
        auto *other = new QObject(m_scope);
        other->startTimer(40);
        running = QAbstractEventDispatcher::instance()->registeredTimers(owner);
        owner->killTimer(preciseId);
        owner->killTimer(coarseId);
        stopped = QAbstractEventDispatcher::instance()->registeredTimers(owner);
    }));
    QCOMPARE(running.size(), 2);
    for (const QAbstractEventDispatcher::TimerInfo &info : std::as_const(running)) {
        if (info.timerId == preciseId) {
            QCOMPARE(info.interval, 25);
            QCOMPARE(info.timerType, Qt::PreciseTimer);
        } else {
            QCOMPARE(info.timerId, coarseId);
            QCOMPARE(info.interval, 3000);
            QCOMPARE(info.timerType, Qt::CoarseTimer);
        }
    }
    QVERIFY(stopped.isEmpty());
}

QTEST_GUILESS_MAIN(EpollEventDispatcherTest)
#include "tst_epoll_event_dispatcher.moc"
