#pragma once

#include <QAbstractEventDispatcher>
#include <QList>

#include <atomic>
#include <set>
#include <unordered_map>
#include <utility>

struct epoll_event;

namespace rt::runtime {

// An event dispatcher on Linux epoll for the worker threads. Qt's GLib dispatcher (the default)
// and its poll()-based UNIX dispatcher rebuild and scan the whole set of watched sockets on every
// loop pass, so their cost grows with the number of connections of a thread; epoll reports only
// the ready ones (design/performance.md §4.6: at 10,000 sockets GLib delivered 30k messages/s).
//
// Semantics follow QEventDispatcherUNIX: level-triggered socket notifiers activated with
// QEvent::SockAct, timers delivered as QTimerEvent, posted events sent at the start of each pass,
// wakeUp() safe from any thread (an eventfd). Installed with QThread::setEventDispatcher() before
// the thread starts; lives on, and is used only from, that thread (except wakeUp/interrupt).
class EpollEventDispatcher final : public QAbstractEventDispatcher
{
    Q_OBJECT
public:
    explicit EpollEventDispatcher(QObject *parent = nullptr);
    ~EpollEventDispatcher() override;

    bool processEvents(QEventLoop::ProcessEventsFlags flags) override;

    void registerSocketNotifier(QSocketNotifier *notifier) override;
    void unregisterSocketNotifier(QSocketNotifier *notifier) override;

    void registerTimer(int timerId, qint64 interval, Qt::TimerType timerType,
                       QObject *object) override;
    bool unregisterTimer(int timerId) override;
    bool unregisterTimers(QObject *object) override;
    QList<TimerInfo> registeredTimers(QObject *object) const override;
    int remainingTime(int timerId) override;

    void wakeUp() override;
    void interrupt() override;

    // Number of sockets watched (for tests).
    qsizetype watchedDescriptors() const { return static_cast<qsizetype>(m_descriptors.size()); }

private:
    struct Watch
    {
        QSocketNotifier *read = nullptr;
        QSocketNotifier *write = nullptr;
        QSocketNotifier *exception = nullptr;
        quint32 events = 0; // what epoll currently watches for this descriptor
    };
    struct Timer
    {
        qint64 intervalMs;
        Qt::TimerType type;
        QObject *object;
        qint64 dueMs;
    };

    void updateWatch(int descriptor, Watch &watch) const;
    bool activateSockets(int readyCount);
    bool activateTimers();
    int msUntilNextTimer() const;
    static qint64 nowMs();

    int m_epoll = -1;
    int m_wakeFd = -1;
    std::atomic<bool> m_wakePending{ false };
    std::atomic<bool> m_interrupted{ false };
    std::unordered_map<int, Watch> m_descriptors;
    std::unordered_map<int, Timer> m_timers; // timer id -> timer
    std::set<std::pair<qint64, int>> m_schedule; // (due ms, timer id), earliest first
    ::epoll_event *m_events = nullptr; // buffer for epoll_wait
};

} // namespace rt::runtime
