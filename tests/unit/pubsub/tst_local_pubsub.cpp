#include "recording_subscriber.h"
#include "server/pubsub/hub.h"
#include "server/pubsub/local_pubsub.h"
#include "server/runtime/post.h"
#include "tests/support/threads/semaphore.h"

#include <QTest>
#include <QThread>

#include <array>
#include <atomic>
#include <memory>
#include <vector>

using rt::protocol::Vsn;
using rt::pubsub::Audience;
using rt::pubsub::Hub;
using rt::pubsub::LocalPubSub;
using rt::pubsub::OutboundMessage;
using rt::pubsub::OutboundMessagePtr;
using rt::pubsub::TopicKey;
using rt::pubsub::test::RecordingSubscriber;

namespace {

const TopicKey Room("tenant", false, "room");
constexpr int WaitMs = 5000;

// Runs `fn` on `target`'s thread and waits until it ran there: everything posted to that thread
// before has been handled by then (posted events are handled in order).
template <typename Fn>
bool runOn(QObject *target, Fn fn)
{
    rt::test::Semaphore done;
    rt::runtime::post(target, [&done, &fn] {
        fn();
        done.release();
    });
    return done.tryAcquire(1, WaitMs);
}

} // namespace

// Tests in-node fan-out: a published message reaches the hub of this thread synchronously and
// the hubs of other worker threads through one posted delivery each, with frames encoded once for
// all of them; a numbered message never overtakes one another thread posted before it; after
// stop() nothing is delivered.
class LocalPubSubTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void hubsInRegistrationOrder();
    void callersHubIsServedSynchronously();
    void otherThreadsHubsGetAPostedDelivery();
    void allWorkersShareTheEncodedFrames();
    void onePostedDeliveryPerHubNotPerSubscriber();
    void publishFromAWorkerServesItsOwnHubSynchronously();
    void numberedMessagesKeepTheirOrderOnThePublishersThread();
    void stopDropsEverything();
    void hubsMayBeDestroyedOnceStopReturns();

private:
    static constexpr int Workers = 2;
    std::unique_ptr<LocalPubSub> m_pubsub;
    Hub m_mainHub;
    RecordingSubscriber m_mainMember;
    std::array<std::unique_ptr<QThread>, Workers> m_threads;
    std::array<std::unique_ptr<Hub>, Workers> m_hubs;
    std::array<RecordingSubscriber, Workers> m_members;
};

void LocalPubSubTest::init()
{
    // Set up as the server does: hubs registered and subscribed before the workers run.
    m_pubsub = std::make_unique<LocalPubSub>();
    m_mainMember.clear();
    m_mainHub.subscribe(Room, &m_mainMember, 100, Vsn::V2, {});
    m_pubsub->addHub(&m_mainHub);
    for (std::size_t i = 0; i < Workers; ++i) {
        m_threads[i] = std::make_unique<QThread>();
        m_hubs[i] = std::make_unique<Hub>();
        m_members[i].clear();
        m_hubs[i]->subscribe(Room, &m_members[i], i + 1, i == 0 ? Vsn::V1 : Vsn::V2, {});
        m_hubs[i]->moveToThread(m_threads[i].get());
        m_pubsub->addHub(m_hubs[i].get());
        rt::watchFinish(m_threads[i].get());
        m_threads[i]->start();
    }
}

void LocalPubSubTest::cleanup()
{
    for (std::size_t i = 0; i < Workers; ++i) {
        m_threads[i]->quit();
        QVERIFY(rt::waitFinished(m_threads[i].get(), QDeadlineTimer(WaitMs)));
        // The worker stopped: its hub can be used and destroyed from here.
        m_hubs[i]->unsubscribe(Room, &m_members[i]);
        m_hubs[i].reset();
        m_threads[i].reset();
    }
    m_mainHub.unsubscribe(Room, &m_mainMember);
    m_pubsub.reset();
    while (m_mainMember.delivered.tryAcquire()) { }
    for (RecordingSubscriber &member : m_members) {
        while (member.delivered.tryAcquire()) { }
    }
}

void LocalPubSubTest::hubsInRegistrationOrder()
{
    const std::vector<Hub *> &hubs = m_pubsub->hubs();
    QCOMPARE(hubs.size(), std::size_t(Workers + 1));
    QCOMPARE(hubs[0], &m_mainHub);
    QCOMPARE(hubs[1], m_hubs[0].get());
    QCOMPARE(hubs[2], m_hubs[1].get());
}

void LocalPubSubTest::callersHubIsServedSynchronously()
{
    m_pubsub->publish(OutboundMessage::push(Room, "broadcast", "{}", Audience::Everyone));
    // No event loop has run: the main hub's member has it already.
    QCOMPARE(m_mainMember.count(), 1);
    QCOMPARE(m_mainMember.records().constFirst().thread, QThread::currentThread());
}

void LocalPubSubTest::numberedMessagesKeepTheirOrderOnThePublishersThread()
{
    const auto numbered = [](quint64 offset) {
        const OutboundMessagePtr message =
                OutboundMessage::userBroadcast(Room, "n", QByteArray::number(offset), true, {});
        return OutboundMessage::withPosition(*message, rt::pubsub::StreamPosition{ 7, offset, 0 });
    };
    // A worker numbers offset 1 and posts it to this thread's hub; before this thread has run
    // that post, it publishes offset 2 itself.
    QMetaObject::invokeMethod(
            m_hubs[0].get(), [this, &numbered] { m_pubsub->publish(numbered(1)); },
            Qt::BlockingQueuedConnection);
    m_pubsub->publish(numbered(2));
    QCOMPARE(m_mainMember.count(), 0); // queued behind offset 1, not served at once
    QTRY_COMPARE(m_mainMember.count(), 2);
    const QList<RecordingSubscriber::Record> records = m_mainMember.records();
    QVERIFY2(records[0].bytes.contains("\"offset\":1"), records[0].bytes.constData());
    QVERIFY2(records[1].bytes.contains("\"offset\":2"), records[1].bytes.constData());
}

void LocalPubSubTest::otherThreadsHubsGetAPostedDelivery()
{
    m_pubsub->publish(OutboundMessage::push(Room, "broadcast", R"({"n":1})", Audience::Everyone));
    m_pubsub->publish(OutboundMessage::push(Room, "broadcast", R"({"n":2})", Audience::Everyone));
    for (std::size_t i = 0; i < Workers; ++i) {
        QVERIFY(m_members[i].delivered.tryAcquire(2, WaitMs));
        const QList<RecordingSubscriber::Record> records = m_members[i].records();
        QCOMPARE(records.size(), 2);
        for (const RecordingSubscriber::Record &record : records) {
            // Delivered on the worker's own thread, never on the publisher's.
            QCOMPARE(record.thread, m_threads[i].get());
        }
        // In publication order.
        QVERIFY(records.at(0).bytes.contains(R"({"n":1})"));
        QVERIFY(records.at(1).bytes.contains(R"({"n":2})"));
    }
    // Member 0 is V1, member 1 is V2.
    QVERIFY(m_members[0].records().constFirst().bytes.startsWith(R"({"topic":"realtime:room")"));
    QVERIFY(m_members[1].records().constFirst().bytes.startsWith(R"([null,null,"realtime:room")"));
}

void LocalPubSubTest::allWorkersShareTheEncodedFrames()
{
    // A second V2 member on the first worker and one on the main hub: all V2 recipients on all
    // threads get the same buffer.
    RecordingSubscriber extra;
    QVERIFY(runOn(m_hubs[0].get(), [&] { m_hubs[0]->subscribe(Room, &extra, 50, Vsn::V2, {}); }));

    const OutboundMessagePtr message =
            OutboundMessage::userBroadcast(Room, "msg", R"({"text":"hi"})", true, {});
    m_pubsub->publish(message);
    QVERIFY(m_members[0].delivered.tryAcquire(1, WaitMs));
    QVERIFY(m_members[1].delivered.tryAcquire(1, WaitMs));
    QVERIFY(extra.delivered.tryAcquire(1, WaitMs));

    const char *v2 = message->frameFor(Vsn::V2).bytes.constData();
    const char *v1 = message->frameFor(Vsn::V1).bytes.constData();
    QCOMPARE(m_mainMember.records().constFirst().bytes.constData(), v2);
    QCOMPARE(m_members[1].records().constFirst().bytes.constData(), v2);
    QCOMPARE(extra.records().constFirst().bytes.constData(), v2);
    QCOMPARE(m_members[0].records().constFirst().bytes.constData(), v1);

    QVERIFY(runOn(m_hubs[0].get(), [&] { m_hubs[0]->unsubscribe(Room, &extra); }));
}

void LocalPubSubTest::onePostedDeliveryPerHubNotPerSubscriber()
{
    // Counts the queued calls the first worker's hub receives.
    class CallCounter : public QObject
    {
    public:
        std::atomic<int> calls{ 0 };
        bool eventFilter(QObject *, QEvent *event) override
        {
            if (event->type() == QEvent::MetaCall) {
                ++calls;
            }
            return false;
        }
    };
    std::array<RecordingSubscriber, 5> extras;
    CallCounter counter;
    counter.moveToThread(m_threads[0].get());
    QVERIFY(runOn(m_hubs[0].get(), [&] {
        m_hubs[0]->installEventFilter(&counter);
        for (std::size_t i = 0; i < extras.size(); ++i) {
            m_hubs[0]->subscribe(Room, &extras[i], 200 + i, Vsn::V2, {});
        }
    }));
    const int before = counter.calls; // includes runOn's own call

    m_pubsub->publish(OutboundMessage::push(Room, "broadcast", "{}", Audience::Everyone));
    QVERIFY(runOn(m_hubs[0].get(), [] {}));
    // Six members on that hub: one delivery call, plus the runOn marker.
    QCOMPARE(counter.calls - before, 2);
    QCOMPARE(m_members[0].count(), 1);
    for (const RecordingSubscriber &extra : extras) {
        QCOMPARE(extra.count(), 1);
    }

    QVERIFY(runOn(m_hubs[0].get(), [&] {
        m_hubs[0]->removeEventFilter(&counter);
        for (RecordingSubscriber &extra : extras) {
            m_hubs[0]->unsubscribe(Room, &extra);
        }
    }));
    QVERIFY(runOn(&counter, [&] { counter.moveToThread(QCoreApplication::instance()->thread()); }));
}

void LocalPubSubTest::publishFromAWorkerServesItsOwnHubSynchronously()
{
    qsizetype seenSynchronously = -1;
    QVERIFY(runOn(m_hubs[1].get(), [&] {
        m_pubsub->publish(OutboundMessage::push(Room, "broadcast", "{}", Audience::Everyone));
        seenSynchronously = m_members[1].count();
    }));
    QCOMPARE(seenSynchronously, qsizetype(1));
    QVERIFY(m_members[0].delivered.tryAcquire(1, WaitMs));
    QCOMPARE(m_members[0].records().constFirst().thread, m_threads[0].get());
    // The main hub's delivery was posted to this thread: it arrives once this loop runs.
    QCOMPARE(m_mainMember.count(), 0);
    QTRY_COMPARE_WITH_TIMEOUT(m_mainMember.count(), qsizetype(1), WaitMs);
}

void LocalPubSubTest::stopDropsEverything()
{
    m_pubsub->stop();
    m_pubsub->publish(OutboundMessage::push(Room, "broadcast", "{}", Audience::Everyone));
    QCOMPARE(m_mainMember.count(), 0);
    // Anything posted to a worker by that publish would run before these markers.
    for (std::size_t i = 0; i < Workers; ++i) {
        QVERIFY(runOn(m_hubs[i].get(), [] {}));
        QCOMPARE(m_members[i].count(), 0);
    }
    QCoreApplication::sendPostedEvents();
    QCOMPARE(m_mainMember.count(), 0);
}

void LocalPubSubTest::hubsMayBeDestroyedOnceStopReturns()
{
    // Publishers on other threads keep posting to a hub on this thread. Once stop() returned,
    // the hub is destroyed: a post that still reached it would use freed memory (ASan reports
    // it; posts made before the destruction are discarded with the hub).
    LocalPubSub pubsub;
    auto hub = std::make_unique<Hub>();
    pubsub.addHub(hub.get());
    std::atomic<bool> finish{ false };
    std::atomic<int> published{ 0 };
    std::vector<std::unique_ptr<QThread>> publishers;
    for (int i = 0; i < 2; ++i) {
        publishers.emplace_back(QThread::create([&] {
            const OutboundMessagePtr message =
                    OutboundMessage::push(Room, "broadcast", "{}", Audience::Everyone);
            while (!finish.load()) {
                pubsub.publish(message);
                ++published;
            }
        }));
        rt::watchFinish(publishers.back().get());
        publishers.back()->start();
    }
    while (published.load() < 2000) {
        QThread::yieldCurrentThread();
    }
    pubsub.stop();
    hub.reset();
    const int afterStop = published.load();
    while (published.load() < afterStop + 2000) {
        QThread::yieldCurrentThread(); // publishing goes on, and must do nothing now
    }
    finish.store(true);
    for (const auto &publisher : publishers) {
        QVERIFY(rt::waitFinished(publisher.get(), QDeadlineTimer(WaitMs)));
    }
    QCoreApplication::sendPostedEvents();
}

QTEST_GUILESS_MAIN(LocalPubSubTest)
#include "tst_local_pubsub.moc"
