#pragma once

#include <QObject>
#include <QThread>

#include <memory>
#include <vector>

namespace rt::runtime {

// A set of worker threads, each running its own event loop. Workers own their connections and
// everything hanging off them; other threads reach a worker only by posting to its context
// object. Lives on the main thread; start() and stop() are called there.
class WorkerPool : public QObject
{
    Q_OBJECT
public:
    enum class Dispatcher {
        Epoll, // EpollEventDispatcher: cost per pass independent of the number of sockets
        Qt, // Qt's default for the platform
    };

    WorkerPool(int workerCount, Dispatcher dispatcher, QObject *parent = nullptr);
    ~WorkerPool() override;

    // Starts the threads; each gets a context QObject that lives on it.
    void start();
    // Quits every loop and joins the threads. Objects still living on a worker are deleted on
    // that worker's thread before it ends (they are children of its context).
    void stop();
    // Joins the threads once each loop has ended by itself: post
    // `QThread::currentThread()->quit()` to each context after the work that must still run
    // there (stop()'s QThread::quit() can end a loop before it has run what was posted to it).
    void join();

    int size() const { return static_cast<int>(m_workers.size()); }
    // The QObject living on worker `index`; parent worker-owned QObjects to it.
    QObject *context(int index) const;
    // Index of the worker whose thread is the calling thread, or -1.
    int currentIndex() const;

private:
    struct Worker
    {
        std::unique_ptr<QThread> thread;
        QObject *context = nullptr; // lives on thread; deleted on it at finish
    };
    std::vector<Worker> m_workers;
    Dispatcher m_dispatcher;
    bool m_running = false;
};

// Number of CPUs this process may run on (respects taskset/cgroup affinity), at least 1.
int availableCpuCount();

} // namespace rt::runtime
