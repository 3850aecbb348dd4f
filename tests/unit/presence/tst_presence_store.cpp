#include "server/presence/presence_store.h"
#include "server/pubsub/hub.h"
#include "server/pubsub/local_pubsub.h"
#include "server/runtime/post.h"
#include "tests/support/threads/semaphore.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QSet>
#include <QTest>
#include <QThread>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <memory>
#include <mutex>

using rt::presence::PresenceStore;
using rt::protocol::Vsn;
using rt::pubsub::Hub;
using rt::pubsub::LocalPubSub;
using rt::pubsub::MemberRights;
using rt::pubsub::OutboundMessage;
using rt::pubsub::Subscriber;
using rt::pubsub::TopicKey;

namespace {

QJsonObject object(QByteArrayView json)
{
    return QJsonDocument::fromJson(json.toByteArray()).object();
}

// A channel stand-in: records every frame the hub hands it, from whichever thread, plus markers
// the test adds, so that the order of deliveries and callbacks can be checked.
class RecordingSubscriber final : public Subscriber
{
public:
    void deliver(const OutboundMessage &message, const OutboundMessage::Frame &frame) override
    {
        const std::lock_guard lock(m_mutex);
        m_events.append(message.audience() == rt::pubsub::Audience::PresenceReaders
                                ? QByteArrayLiteral("diff")
                                : QByteArrayLiteral("other"));
        m_frames.append(frame.bytes);
    }
    void appendMarker(const QByteArray &marker)
    {
        const std::lock_guard lock(m_mutex);
        m_events.append(marker);
    }
    QByteArrayList frames() const
    {
        const std::lock_guard lock(m_mutex);
        return m_frames;
    }
    QByteArrayList events() const
    {
        const std::lock_guard lock(m_mutex);
        return m_events;
    }
    void clear()
    {
        const std::lock_guard lock(m_mutex);
        m_frames.clear();
        m_events.clear();
    }

private:
    mutable std::mutex m_mutex;
    QByteArrayList m_frames; // guarded by m_mutex
    QByteArrayList m_events; // guarded by m_mutex
};

// The payload of a V1 push frame {"topic":...,"event":"presence_diff","payload":{...},"ref":null}.
QJsonObject payloadOfV1(const QByteArray &frame)
{
    return object(frame).value(QLatin1String("payload")).toObject();
}

QJsonObject onlyMeta(const QJsonObject &side, const QString &key)
{
    const QJsonArray metas = side.value(key).toObject().value(QLatin1String("metas")).toArray();
    return metas.size() == 1 ? metas.at(0).toObject() : QJsonObject();
}

const TopicKey Room("tenant-a", false, "room");

} // namespace

// Tests the node's presence store: every change is published once as a fastlane presence_diff to
// presence readers, refs are unique 16-character strings, and presence_state requests are
// answered after every change requested before them (spec/server-protocol.md §5).
class PresenceStoreTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void trackPublishesAJoinDiffToPresenceReaders();
    void identicalTrackPublishesNothing();
    void updateCarriesThePreviousRef();
    void untrackPublishesALeave();
    void untrackOfAnUnknownMemberPublishesNothing();
    void refsAreUniqueUrlSafe16Characters();
    void topicsAreSeparatedByTenantAndPrivacy();
    void requestStateSeesEarlierChangesInOrder();
    void requestStateForADeadContextIsDropped();

private:
    std::unique_ptr<LocalPubSub> m_pubsub;
    std::unique_ptr<Hub> m_hub;
    std::unique_ptr<PresenceStore> m_store;
    RecordingSubscriber m_reader;
    RecordingSubscriber m_broadcastOnly;
};

void PresenceStoreTest::init()
{
    m_pubsub = std::make_unique<LocalPubSub>();
    m_hub = std::make_unique<Hub>();
    m_pubsub->addHub(m_hub.get());
    m_store = std::make_unique<PresenceStore>(*m_pubsub);
    m_reader.clear();
    m_broadcastOnly.clear();
    m_hub->subscribe(Room, &m_reader, 1, Vsn::V1, MemberRights{ true, true });
    m_hub->subscribe(Room, &m_broadcastOnly, 2, Vsn::V1, MemberRights{ true, false });
}

void PresenceStoreTest::cleanup()
{
    m_hub->unsubscribe(Room, &m_reader);
    m_hub->unsubscribe(Room, &m_broadcastOnly);
    m_store.reset();
    m_hub.reset();
    m_pubsub.reset();
}

void PresenceStoreTest::trackPublishesAJoinDiffToPresenceReaders()
{
    m_store->track(Room, 1, "user-1", object(R"({"name":"Ann"})"));

    // The hub is on this thread: delivery is synchronous.
    const QByteArrayList frames = m_reader.frames();
    QCOMPARE(frames.size(), 1);
    const QJsonObject frame = object(frames.constFirst());
    QCOMPARE(frame.value(QLatin1String("topic")).toString(), QStringLiteral("realtime:room"));
    QCOMPARE(frame.value(QLatin1String("event")).toString(), QStringLiteral("presence_diff"));
    QVERIFY(frame.value(QLatin1String("ref")).isNull());
    const QJsonObject diff = payloadOfV1(frames.constFirst());
    QCOMPARE(diff.value(QLatin1String("leaves")).toObject(), QJsonObject());
    QJsonObject meta =
            onlyMeta(diff.value(QLatin1String("joins")).toObject(), QStringLiteral("user-1"));
    QVERIFY(meta.value(QLatin1String("phx_ref")).isString());
    meta.remove(QStringLiteral("phx_ref"));
    QCOMPARE(meta, object(R"({"name":"Ann"})"));

    // Members without presence-read never receive presence_diff (spec §5.2).
    QCOMPARE(m_broadcastOnly.frames().size(), 0);
    QCOMPARE(m_store->presenceCount(Room), 1);
}

void PresenceStoreTest::identicalTrackPublishesNothing()
{
    m_store->track(Room, 1, "user-1", object(R"({"name":"Ann"})"));
    m_store->track(Room, 1, "user-1", object(R"({"name":"Ann"})"));
    QCOMPARE(m_reader.frames().size(), 1);
}

void PresenceStoreTest::updateCarriesThePreviousRef()
{
    m_store->track(Room, 1, "user-1", object(R"({"name":"Ann"})"));
    m_store->track(Room, 1, "user-1", object(R"({"name":"Ann2"})"));

    const QByteArrayList frames = m_reader.frames();
    QCOMPARE(frames.size(), 2);
    const QString firstRef =
            onlyMeta(payloadOfV1(frames.at(0)).value(QLatin1String("joins")).toObject(),
                     QStringLiteral("user-1"))
                    .value(QLatin1String("phx_ref"))
                    .toString();
    const QJsonObject update = payloadOfV1(frames.at(1));
    const QJsonObject joined =
            onlyMeta(update.value(QLatin1String("joins")).toObject(), QStringLiteral("user-1"));
    const QJsonObject left =
            onlyMeta(update.value(QLatin1String("leaves")).toObject(), QStringLiteral("user-1"));
    QCOMPARE(joined.value(QLatin1String("name")).toString(), QStringLiteral("Ann2"));
    QCOMPARE(joined.value(QLatin1String("phx_ref_prev")).toString(), firstRef);
    QVERIFY(joined.value(QLatin1String("phx_ref")).toString() != firstRef);
    QCOMPARE(left.value(QLatin1String("name")).toString(), QStringLiteral("Ann"));
    QCOMPARE(left.value(QLatin1String("phx_ref")).toString(), firstRef);
    QVERIFY(!left.contains(QLatin1String("phx_ref_prev")));

    // presence_state has the new meta under its new ref.
    const QJsonObject state = object(m_store->stateJson(Room));
    QCOMPARE(onlyMeta(state, QStringLiteral("user-1")).value(QLatin1String("phx_ref")),
             joined.value(QLatin1String("phx_ref")));
}

void PresenceStoreTest::untrackPublishesALeave()
{
    m_store->track(Room, 1, "user-1", object(R"({"name":"Ann"})"));
    m_store->untrack(Room, 1);

    const QByteArrayList frames = m_reader.frames();
    QCOMPARE(frames.size(), 2);
    const QJsonObject leave = payloadOfV1(frames.at(1));
    QCOMPARE(leave.value(QLatin1String("joins")).toObject(), QJsonObject());
    QCOMPARE(onlyMeta(leave.value(QLatin1String("leaves")).toObject(), QStringLiteral("user-1"))
                     .value(QLatin1String("name"))
                     .toString(),
             QStringLiteral("Ann"));
    QCOMPARE(m_store->presenceCount(Room), 0);
    QCOMPARE(m_store->stateJson(Room), QByteArray("{}"));
}

void PresenceStoreTest::untrackOfAnUnknownMemberPublishesNothing()
{
    m_store->untrack(Room, 1); // unknown topic
    m_store->track(Room, 1, "user-1", {});
    m_store->untrack(Room, 99); // known topic, unknown member
    QCOMPARE(m_reader.frames().size(), 1);
    QCOMPARE(m_store->presenceCount(Room), 1);
}

void PresenceStoreTest::refsAreUniqueUrlSafe16Characters()
{
    QSet<QString> refs;
    const QRegularExpression shape(QStringLiteral("^[A-Za-z0-9_-]{16}$"));
    constexpr int Tracks = 300;
    for (int i = 0; i < Tracks; ++i) {
        QJsonObject meta;
        meta.insert(QStringLiteral("i"), i);
        // Members 1..10 update their meta over and over: every track needs a new ref.
        m_store->track(Room, static_cast<quint64>(i % 10 + 1), "k", meta);
    }
    const QByteArrayList frames = m_reader.frames();
    QCOMPARE(frames.size(), Tracks);
    for (const QByteArray &frame : frames) {
        const QJsonObject joined = onlyMeta(
                payloadOfV1(frame).value(QLatin1String("joins")).toObject(), QStringLiteral("k"));
        const QString ref = joined.value(QLatin1String("phx_ref")).toString();
        QVERIFY2(shape.match(ref).hasMatch(), qPrintable(ref));
        refs.insert(ref);
    }
    QCOMPARE(refs.size(), Tracks);

    // Another store (another process start) does not repeat this store's refs.
    PresenceStore other(*m_pubsub);
    m_reader.clear();
    other.track(Room, 1000, "k", {});
    const QString otherRef = onlyMeta(payloadOfV1(m_reader.frames().value(0))
                                              .value(QLatin1String("joins"))
                                              .toObject(),
                                      QStringLiteral("k"))
                                     .value(QLatin1String("phx_ref"))
                                     .toString();
    QVERIFY(!otherRef.isEmpty());
    QVERIFY(!refs.contains(otherRef));
}

void PresenceStoreTest::topicsAreSeparatedByTenantAndPrivacy()
{
    const TopicKey privateRoom("tenant-a", true, "room");
    const TopicKey otherTenant("tenant-b", false, "room");
    RecordingSubscriber privateReader;
    m_hub->subscribe(privateRoom, &privateReader, 3, Vsn::V2, MemberRights{ true, true });

    m_store->track(privateRoom, 3, "p", object(R"({"x":1})"));
    m_store->track(otherTenant, 4, "t", object(R"({"x":2})"));

    QCOMPARE(m_reader.frames().size(), 0);
    const QByteArrayList privateFrames = privateReader.frames();
    QCOMPARE(privateFrames.size(), 1);
    QVERIFY(privateFrames.constFirst().startsWith(
            R"([null,null,"realtime:room","presence_diff",{)"));
    QCOMPARE(m_store->presenceCount(Room), 0);
    QCOMPARE(m_store->presenceCount(privateRoom), 1);
    QCOMPARE(m_store->presenceCount(otherTenant), 1);
    QCOMPARE(m_store->stateJson(Room), QByteArray("{}"));
    QVERIFY(object(m_store->stateJson(privateRoom)).contains(QLatin1String("p")));
    QVERIFY(object(m_store->stateJson(otherTenant)).contains(QLatin1String("t")));
    m_hub->unsubscribe(privateRoom, &privateReader);
}

void PresenceStoreTest::requestStateSeesEarlierChangesInOrder()
{
    // A worker thread with its own hub, as in the server: the store lives on this thread, the
    // channel (here: the subscriber and the context object) on the worker.
    QThread worker;
    Hub workerHub;
    RecordingSubscriber channel;
    workerHub.subscribe(Room, &channel, 10, Vsn::V1, MemberRights{ true, true });
    workerHub.moveToThread(&worker);
    m_pubsub->addHub(&workerHub);
    QObject context;
    context.moveToThread(&worker);
    rt::watchFinish(&worker);
    worker.start();
    auto stopWorker = qScopeGuard([&worker] {
        worker.quit();
        rt::waitFinished(&worker);
    });

    rt::test::Semaphore stateArrived;
    QByteArray state;
    QThread *callbackThread = nullptr;
    // Both requests are made from the worker thread, one after the other, like a channel that
    // tracks and then asks for its presence_state.
    rt::runtime::post(&context, [&] {
        m_store->trackAsync(Room, 10, "user-10", object(R"({"n":1})"));
        m_store->trackAsync(Room, 11, "user-11", object(R"({"n":2})"));
        m_store->requestStateAsync(Room, &context, QPointer<QObject>(&context),
                                   [&](const QByteArray &json) {
                                       state = json;
                                       callbackThread = QThread::currentThread();
                                       channel.appendMarker("state");
                                       stateArrived.release();
                                   });
    });

    // The store runs on this thread: spin its event loop until the worker got the snapshot.
    QTRY_VERIFY_WITH_TIMEOUT(stateArrived.available() == 1, 5000);
    stateArrived.acquire(); // pairs with the worker's release: `state` is safe to read
    QCOMPARE(callbackThread, &worker);
    const QJsonObject snapshot = object(state);
    QCOMPARE(snapshot.keys(),
             (QStringList{ QStringLiteral("user-10"), QStringLiteral("user-11") }));
    // Both diffs reached the worker before the snapshot did.
    QCOMPARE(channel.events(), (QByteArrayList{ "diff", "diff", "state" }));

    stopWorker.dismiss();
    worker.quit();
    QVERIFY(worker.wait(5000));
    // The worker has stopped: its hub may now be used and destroyed from here.
    workerHub.unsubscribe(Room, &channel);
}

void PresenceStoreTest::requestStateForADeadContextIsDropped()
{
    // The answer travels to a receiver that lives on (the worker's hub in the server); the
    // channel that asked is only a guard checked on the receiver's thread. A channel that left
    // meanwhile gets nothing, and nothing touches its memory (ASan builds would report it).
    QObject receiver;
    bool called = false;
    auto *guard = new QObject;
    m_store->requestStateAsync(Room, &receiver, QPointer<QObject>(guard),
                               [&called](const QByteArray &) { called = true; });
    delete guard;
    QCoreApplication::sendPostedEvents(); // the store's request
    QCoreApplication::sendPostedEvents(); // the answer
    QVERIFY(!called);

    // With the guard alive, the same request is answered.
    QObject liveGuard;
    m_store->requestStateAsync(Room, &receiver, QPointer<QObject>(&liveGuard),
                               [&called](const QByteArray &) { called = true; });
    QCoreApplication::sendPostedEvents();
    QCoreApplication::sendPostedEvents();
    QVERIFY(called);
}

QTEST_GUILESS_MAIN(PresenceStoreTest)
#include "tst_presence_store.moc"
