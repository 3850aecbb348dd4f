// WorkerPool's join(): whatever was posted to a worker before its posted quit still runs there
// (a server posts its goodbyes to the connections, then the quit), with both dispatchers.
#include "server/runtime/post.h"
#include "server/runtime/worker_pool.h"

#include <QTest>
#include <QThread>

#include <atomic>

using rt::runtime::WorkerPool;

class WorkerPoolTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void workPostedBeforeTheQuitRuns_data()
    {
        QTest::addColumn<WorkerPool::Dispatcher>("dispatcher");
        QTest::newRow("qt") << WorkerPool::Dispatcher::Qt;
        QTest::newRow("epoll") << WorkerPool::Dispatcher::Epoll;
    }

    void workPostedBeforeTheQuitRuns()
    {
        QFETCH(WorkerPool::Dispatcher, dispatcher);
        // Many rounds: with stop() (QThread::quit()) the work was lost now and then.
        for (int round = 0; round < 200; ++round) {
            WorkerPool pool(2, dispatcher);
            pool.start();
            std::atomic<int> ran{ 0 };
            std::atomic<int> onWorker{ 0 };
            for (int i = 0; i < pool.size(); ++i) {
                QObject *context = pool.context(i);
                rt::runtime::post(context, [&ran, &onWorker, context] {
                    onWorker += QThread::currentThread() == context->thread() ? 1 : 0;
                    ++ran;
                });
                rt::runtime::post(context, [] { QThread::currentThread()->quit(); });
            }
            pool.join();
            QCOMPARE(ran.load(), pool.size());
            QCOMPARE(onWorker.load(), pool.size());
        }
    }
};

QTEST_GUILESS_MAIN(WorkerPoolTest)
#include "tst_worker_pool.moc"
