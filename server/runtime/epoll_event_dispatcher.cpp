#include "server/runtime/epoll_event_dispatcher.h"

#include "server/runtime/logging.h"

#include <QCoreApplication>
#include <QLoggingCategory>
#include <QSocketNotifier>
#include <QTimerEvent>

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

namespace rt::runtime {

namespace {

constexpr int MaxEventsPerPass = 256;

} // namespace

EpollEventDispatcher::EpollEventDispatcher(QObject *parent) : QAbstractEventDispatcher(parent)
{
    m_epoll = ::epoll_create1(EPOLL_CLOEXEC);
    m_wakeFd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (m_epoll < 0 || m_wakeFd < 0) {
        qFatal("EpollEventDispatcher: cannot create epoll/eventfd descriptors (errno %d)", errno);
    }
    epoll_event wake{};
    wake.events = EPOLLIN;
    wake.data.fd = m_wakeFd;
    ::epoll_ctl(m_epoll, EPOLL_CTL_ADD, m_wakeFd, &wake);
    m_events = new epoll_event[MaxEventsPerPass]; // freed in the destructor
}

EpollEventDispatcher::~EpollEventDispatcher()
{
    delete[] m_events;
    ::close(m_wakeFd);
    ::close(m_epoll);
}

qint64 EpollEventDispatcher::nowMs()
{
    using namespace std::chrono;
    return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

// ---- socket notifiers ----------------------------------------------------------------------

void EpollEventDispatcher::updateWatch(int descriptor, Watch &watch) const
{
    quint32 events = 0;
    if (watch.read != nullptr) {
        events |= EPOLLIN;
    }
    if (watch.write != nullptr) {
        events |= EPOLLOUT;
    }
    if (watch.exception != nullptr) {
        events |= EPOLLPRI;
    }
    if (events == watch.events) {
        return;
    }
    epoll_event event{};
    event.events = events;
    event.data.fd = descriptor;
    if (events == 0) {
        // The descriptor may already be closed (the kernel then dropped it): ignore errors.
        ::epoll_ctl(m_epoll, EPOLL_CTL_DEL, descriptor, nullptr);
    } else if (watch.events == 0) {
        if (::epoll_ctl(m_epoll, EPOLL_CTL_ADD, descriptor, &event) != 0 && errno == EEXIST) {
            ::epoll_ctl(m_epoll, EPOLL_CTL_MOD, descriptor, &event);
        }
    } else if (::epoll_ctl(m_epoll, EPOLL_CTL_MOD, descriptor, &event) != 0 && errno == ENOENT) {
        // Closed and reopened under the same number while still registered: add it anew.
        ::epoll_ctl(m_epoll, EPOLL_CTL_ADD, descriptor, &event);
    }
    watch.events = events;
}

void EpollEventDispatcher::registerSocketNotifier(QSocketNotifier *notifier)
{
    const int descriptor = static_cast<int>(notifier->socket());
    Watch &watch = m_descriptors[descriptor];
    switch (notifier->type()) {
    case QSocketNotifier::Read:
        watch.read = notifier;
        break;
    case QSocketNotifier::Write:
        watch.write = notifier;
        break;
    case QSocketNotifier::Exception:
        watch.exception = notifier;
        break;
    }
    updateWatch(descriptor, watch);
}

void EpollEventDispatcher::unregisterSocketNotifier(QSocketNotifier *notifier)
{
    const int descriptor = static_cast<int>(notifier->socket());
    const auto it = m_descriptors.find(descriptor);
    if (it == m_descriptors.end()) {
        return;
    }
    Watch &watch = it->second;
    if (watch.read == notifier) {
        watch.read = nullptr;
    } else if (watch.write == notifier) {
        watch.write = nullptr;
    } else if (watch.exception == notifier) {
        watch.exception = nullptr;
    }
    updateWatch(descriptor, watch);
    if (watch.events == 0) {
        m_descriptors.erase(it);
    }
}

bool EpollEventDispatcher::activateSockets(int readyCount)
{
    bool activated = false;
    for (int i = 0; i < readyCount; ++i) {
        const int descriptor = m_events[i].data.fd;
        const quint32 events = m_events[i].events;
        if (descriptor == m_wakeFd) {
            quint64 counter = 0;
            [[maybe_unused]] const ssize_t got = ::read(m_wakeFd, &counter, sizeof(counter));
            m_wakePending.store(false);
            continue;
        }
        // Each activation may unregister or delete notifiers, including ones later in this
        // batch, so look the descriptor up again before every activation.
        const auto activate = [this, descriptor, &activated](QSocketNotifier *Watch::*slot) {
            const auto it = m_descriptors.find(descriptor);
            if (it == m_descriptors.end()) {
                return;
            }
            QSocketNotifier *notifier = it->second.*slot;
            if (notifier == nullptr || !notifier->isEnabled()) {
                return;
            }
            QEvent event(QEvent::SockAct);
            QCoreApplication::sendEvent(notifier, &event);
            activated = true;
        };
        // Errors and hang-ups are reported to readers and writers, as poll() would.
        if ((events & (EPOLLIN | EPOLLERR | EPOLLHUP)) != 0) {
            activate(&Watch::read);
        }
        if ((events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) != 0) {
            activate(&Watch::write);
        }
        if ((events & EPOLLPRI) != 0) {
            activate(&Watch::exception);
        }
    }
    return activated;
}

// ---- timers --------------------------------------------------------------------------------

void EpollEventDispatcher::registerTimer(int timerId, qint64 interval, Qt::TimerType timerType,
                                         QObject *object)
{
    const qint64 due = nowMs() + interval;
    m_timers[timerId] = Timer{ interval, timerType, object, due };
    m_schedule.emplace(due, timerId);
}

bool EpollEventDispatcher::unregisterTimer(int timerId)
{
    const auto it = m_timers.find(timerId);
    if (it == m_timers.end()) {
        return false;
    }
    m_schedule.erase({ it->second.dueMs, timerId });
    m_timers.erase(it);
    return true;
}

bool EpollEventDispatcher::unregisterTimers(QObject *object)
{
    bool any = false;
    for (auto it = m_timers.begin(); it != m_timers.end();) {
        if (it->second.object == object) {
            m_schedule.erase({ it->second.dueMs, it->first });
            it = m_timers.erase(it);
            any = true;
        } else {
            ++it;
        }
    }
    return any;
}

QList<QAbstractEventDispatcher::TimerInfo>
EpollEventDispatcher::registeredTimers(QObject *object) const
{
    QList<TimerInfo> timers;
    for (const auto &[id, timer] : m_timers) {
        if (timer.object == object) {
            timers.append(TimerInfo(id, static_cast<int>(timer.intervalMs), timer.type));
        }
    }
    return timers;
}

int EpollEventDispatcher::remainingTime(int timerId)
{
    const auto it = m_timers.find(timerId);
    if (it == m_timers.end()) {
        return -1;
    }
    return static_cast<int>(qMax<qint64>(0, it->second.dueMs - nowMs()));
}

int EpollEventDispatcher::msUntilNextTimer() const
{
    if (m_schedule.empty()) {
        return -1;
    }
    const qint64 wait = m_schedule.begin()->first - nowMs();
    return static_cast<int>(std::clamp<qint64>(wait, 0, qint64(24) * 3600 * 1000));
}

bool EpollEventDispatcher::activateTimers()
{
    const qint64 now = nowMs();
    // Collect first: handlers may register, unregister or restart timers.
    QList<int> due;
    for (auto it = m_schedule.begin(); it != m_schedule.end() && it->first <= now; ++it) {
        due.append(it->second);
    }
    for (const int timerId : std::as_const(due)) {
        const auto it = m_timers.find(timerId);
        if (it == m_timers.end() || it->second.dueMs > now) {
            continue; // unregistered or re-registered meanwhile
        }
        Timer &timer = it->second;
        m_schedule.erase({ timer.dueMs, timerId });
        // The next expiry keeps the period without bunching up after a late pass.
        // Keep the period; after a late pass, start again from now rather than firing the missed
        // periods back to back (QEventDispatcherUNIX does the same).
        timer.dueMs += timer.intervalMs;
        if (timer.dueMs <= now) {
            timer.dueMs = now + timer.intervalMs;
        }
        if (timer.intervalMs == 0) {
            timer.dueMs = now; // zero timers fire once per pass
        }
        m_schedule.emplace(timer.dueMs, timerId);
        QObject *object = timer.object;
        QTimerEvent event(timerId);
        QCoreApplication::sendEvent(object, &event);
    }
    return !due.isEmpty();
}

// ---- the loop ------------------------------------------------------------------------------

void EpollEventDispatcher::wakeUp()
{
    if (!m_wakePending.exchange(true)) {
        const quint64 one = 1;
        [[maybe_unused]] const ssize_t written = ::write(m_wakeFd, &one, sizeof(one));
    }
}

void EpollEventDispatcher::interrupt()
{
    m_interrupted.store(true);
    wakeUp();
}

bool EpollEventDispatcher::processEvents(QEventLoop::ProcessEventsFlags flags)
{
    m_interrupted.store(false);
    Q_EMIT awake();
    // Posted events first (deliveries from other threads, deferred deletes, our flush pass).
    // Whatever gets posted meanwhile calls wakeUp(), so the wait below returns at once.
    QCoreApplication::sendPostedEvents();

    const bool mayWait = flags.testFlag(QEventLoop::WaitForMoreEvents) && !m_interrupted.load();
    int timeout = 0;
    if (mayWait) {
        timeout = flags.testFlag(QEventLoop::X11ExcludeTimers) ? -1 : msUntilNextTimer();
        if (timeout != 0) {
            Q_EMIT aboutToBlock();
        }
    }
    int ready = 0;
    do {
        ready = ::epoll_wait(m_epoll, m_events, MaxEventsPerPass, timeout);
    } while (ready < 0 && errno == EINTR);
    if (timeout != 0) {
        Q_EMIT awake();
    }
    if (ready < 0) {
        qCWarning(lcRuntime) << "epoll_wait failed, errno" << errno;
        ready = 0;
    }

    bool activated = false;
    if (!flags.testFlag(QEventLoop::ExcludeSocketNotifiers)) {
        activated = activateSockets(ready);
    } else {
        // Still drain the wake-up descriptor so that it does not stay readable.
        for (int i = 0; i < ready; ++i) {
            if (m_events[i].data.fd == m_wakeFd) {
                quint64 counter = 0;
                [[maybe_unused]] const ssize_t got = ::read(m_wakeFd, &counter, sizeof(counter));
                m_wakePending.store(false);
            }
        }
    }
    if (!flags.testFlag(QEventLoop::X11ExcludeTimers) && !m_interrupted.load()) {
        activated = activateTimers() || activated;
    }
    return activated;
}

} // namespace rt::runtime
