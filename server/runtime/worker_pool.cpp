#include "server/runtime/worker_pool.h"

#include "server/runtime/epoll_event_dispatcher.h"
#include "shared/core/happens_before.h"

#include <sched.h>

namespace rt::runtime {

WorkerPool::WorkerPool(int workerCount, Dispatcher dispatcher, QObject *parent)
    : QObject(parent),
      m_dispatcher(dispatcher)
{
    m_workers.resize(static_cast<std::size_t>(qMax(1, workerCount)));
}

WorkerPool::~WorkerPool()
{
    stop();
}

void WorkerPool::start()
{
    if (m_running) {
        return;
    }
    m_running = true;
    int index = 0;
    for (Worker &worker : m_workers) {
        worker.thread = std::make_unique<QThread>();
        worker.thread->setObjectName(QStringLiteral("worker-%1").arg(index++));
        if (m_dispatcher == Dispatcher::Epoll) {
            // The thread takes ownership of its dispatcher.
            worker.thread->setEventDispatcher(new EpollEventDispatcher);
        }
        worker.context = new QObject; // NOLINT(cppcoreguidelines-owning-memory): deleted on finish
        worker.context->moveToThread(worker.thread.get());
        connect(worker.thread.get(), &QThread::finished, worker.context, &QObject::deleteLater);
        watchFinish(worker.thread.get());
        worker.thread->start();
    }
}

void WorkerPool::stop()
{
    if (!m_running) {
        return;
    }
    m_running = false;
    for (Worker &worker : m_workers) {
        worker.thread->quit();
    }
    for (Worker &worker : m_workers) {
        waitFinished(worker.thread.get());
        worker.context = nullptr;
        worker.thread.reset();
    }
}

void WorkerPool::join()
{
    if (!m_running) {
        return;
    }
    m_running = false;
    for (Worker &worker : m_workers) {
        waitFinished(worker.thread.get());
        worker.context = nullptr;
        worker.thread.reset();
    }
}

QObject *WorkerPool::context(int index) const
{
    return m_workers.at(static_cast<std::size_t>(index)).context;
}

int WorkerPool::currentIndex() const
{
    const QThread *current = QThread::currentThread();
    for (std::size_t i = 0; i < m_workers.size(); ++i) {
        if (m_workers[i].thread.get() == current) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

int availableCpuCount()
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        return qMax(1, CPU_COUNT(&set));
    }
    return qMax(1, QThread::idealThreadCount());
}

} // namespace rt::runtime
