// The sequencer in front of fan-out (server/pubsub/sequencing_pubsub): broadcasts and
// postgres_changes of a tenant with history get their topic's next position in `meta` and reach
// the wrapped pubsub in offset order, kept for recovery; one change's messages to the member
// groups of a topic share one position; presence, system pushes, messages from other nodes and
// tenants without history pass through untouched. In a cluster only the tenant's home numbers:
// elsewhere a broadcast goes to the home (or, with no home reachable, out unnumbered), and a
// node stops numbering (and forgets its sequences) when it stops being the home.
#include "server/pubsub/sequencing_pubsub.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <thread>
#include <vector>

using rt::pubsub::Audience;
using rt::pubsub::HistorySettings;
using rt::pubsub::OutboundMessage;
using rt::pubsub::OutboundMessagePtr;
using rt::pubsub::PubSub;
using rt::pubsub::SequencingPubSub;
using rt::pubsub::StreamPosition;
using rt::pubsub::TopicHistory;
using rt::pubsub::TopicKey;

namespace {

const TopicKey Room("kept", false, "room");
const TopicKey PrivateRoom("kept", true, "room");
const TopicKey Unkept("off", false, "room");

// Records what reaches fan-out (publish from any thread, under the sequencer's lock).
class RecordingPubSub final : public PubSub
{
public:
    void publish(const OutboundMessagePtr &message) const override
    {
        const std::lock_guard lock(m_mutex);
        m_published.push_back(message);
    }
    void publishLocal(const OutboundMessagePtr &message) const override
    {
        const std::lock_guard lock(m_mutex);
        m_local.push_back(message);
    }
    bool awaitTenantReachable(const QByteArray &, QObject *, std::function<void()>) const override
    {
        return true;
    }
    std::vector<OutboundMessagePtr> published() const
    {
        const std::lock_guard lock(m_mutex);
        return m_published;
    }
    void clear()
    {
        const std::lock_guard lock(m_mutex);
        m_published.clear();
    }
    std::vector<OutboundMessagePtr> local() const
    {
        const std::lock_guard lock(m_mutex);
        return m_local;
    }

private:
    mutable std::mutex m_mutex;
    mutable std::vector<OutboundMessagePtr> m_published;
    mutable std::vector<OutboundMessagePtr> m_local;
};

struct Fixture
{
    RecordingPubSub inner;
    TopicHistory history{ 1 << 30 };
    SequencingPubSub sequencer{
        inner, history,
        [](const QByteArray &tenant) {
            return tenant == "kept" ? HistorySettings{ 100, 120 } : HistorySettings{ 0, 120 };
        }
    };
};

OutboundMessagePtr broadcastOn(const TopicKey &topic, int n)
{
    return OutboundMessage::userBroadcast(topic, "e", "{\"n\":" + QByteArray::number(n) + '}', true,
                                          {});
}

QJsonObject metaOf(const OutboundMessagePtr &message)
{
    return QJsonDocument::fromJson(message->metadata()).object();
}

} // namespace

class SequencingPubSubTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void broadcastsAreNumberedPerTopic();
    void recoveryReturnsWhatWasPublished();
    void changeGroupSharesOnePosition();
    void changesTakeOffsetsButAreNotRecovered();
    void keptMessagesLeaveTheFlowLedger();
    void passThroughWhatIsNotSequenced();
    void concurrentPublishersReachFanOutInOffsetOrder();
    void onlyTheHomeNumbers();
    void losingTheHomeStartsANewEpochOnReturn();
    void changeGroupThroughASinkSharesOnePosition();
    void joinsWaitForAnUnknownHome();
    void previousNamesTheLastMessageForEveryNode();
};

namespace {

// A cluster node's sequencer: homes as the claims say, forwards recorded.
struct ClusterFixture
{
    RecordingPubSub inner;
    TopicHistory history{ 1 << 30 };
    rt::pubsub::TenantHomes homes{ [this](const QByteArray &tenant) {
        history.forgetTenant(tenant);
    } };
    mutable std::mutex mutex;
    mutable std::vector<std::pair<QString, OutboundMessagePtr>> forwarded;
    SequencingPubSub sequencer{ inner, history,
                                [](const QByteArray &) {
                                    return HistorySettings{ 100, 120 };
                                },
                                SequencingPubSub::Routing{
                                        &homes,
                                        [this](const QString &home, const OutboundMessagePtr &m) {
                                            const std::lock_guard lock(mutex);
                                            forwarded.emplace_back(home, m);
                                            return true;
                                        },
                                        {} } };

    ClusterFixture() { homes.setSelf(QStringLiteral("self")); }
};

} // namespace

void SequencingPubSubTest::onlyTheHomeNumbers()
{
    ClusterFixture f;
    // No home known: delivered unnumbered (the node's own members still get it).
    f.sequencer.publish(broadcastOn(Room, 1));
    QCOMPARE(f.inner.published().size(), size_t{ 1 });
    QVERIFY(!f.inner.published()[0]->position().isSet());
    // Home elsewhere, link up: sent there, nothing delivered here yet.
    f.homes.setHome("kept", QStringLiteral("other"));
    f.homes.setConnected(QStringLiteral("other"), true);
    f.sequencer.publish(broadcastOn(Room, 2));
    QCOMPARE(f.inner.published().size(), size_t{ 1 });
    QCOMPARE(f.forwarded.size(), size_t{ 1 });
    QCOMPARE(f.forwarded[0].first, QStringLiteral("other"));
    QVERIFY(!f.forwarded[0].second->position().isSet());
    // Its link down: unnumbered here again (issue 18: clients of a cut-off node still talk).
    f.homes.setConnected(QStringLiteral("other"), false);
    f.sequencer.publish(broadcastOn(Room, 3));
    QCOMPARE(f.inner.published().size(), size_t{ 2 });
    QVERIFY(!f.inner.published()[1]->position().isSet());
    // What a peer sent here to number while this node is not the home: unnumbered, never sent on.
    f.homes.setConnected(QStringLiteral("other"), true);
    f.sequencer.publishAsHome(broadcastOn(Room, 4));
    QCOMPARE(f.forwarded.size(), size_t{ 1 });
    QVERIFY(!f.inner.published().back()->position().isSet());
    // This node is the home: numbered here, forwarded messages of peers too.
    f.homes.setHome("kept", QStringLiteral("self"));
    f.sequencer.publish(broadcastOn(Room, 5));
    f.sequencer.publishAsHome(broadcastOn(Room, 6));
    const std::vector<OutboundMessagePtr> out = f.inner.published();
    QCOMPARE(out.size(), size_t{ 5 });
    QCOMPARE(out[3]->position().offset, quint64{ 1 });
    QCOMPARE(out[4]->position().offset, quint64{ 2 });
    QCOMPARE(f.forwarded.size(), size_t{ 1 });
}

void SequencingPubSubTest::losingTheHomeStartsANewEpochOnReturn()
{
    ClusterFixture f;
    f.homes.setHome("kept", QStringLiteral("self"));
    f.sequencer.publish(broadcastOn(Room, 1));
    const StreamPosition first = f.inner.published().back()->position();
    QVERIFY(first.isSet());
    f.homes.setHome("kept", QStringLiteral("other")); // another node numbered meanwhile
    QCOMPARE(f.history.topicCount(), qsizetype{ 0 });
    f.homes.setHome("kept", QStringLiteral("self"));
    f.sequencer.publish(broadcastOn(Room, 2));
    const StreamPosition again = f.inner.published().back()->position();
    QVERIFY(again.epoch != first.epoch);
    QCOMPARE(again.offset, quint64{ 1 });
    // A client that recovers from the old epoch learns that it cannot.
    QCOMPARE(f.history.since(Room, first, HistorySettings{ 100, 120 }).failure,
             TopicHistory::RecoveryFailure::EpochChanged);
}

void SequencingPubSubTest::changeGroupThroughASinkSharesOnePosition()
{
    ClusterFixture f;
    f.homes.setHome("kept", QStringLiteral("self"));
    std::vector<OutboundMessagePtr> sunk;
    f.sequencer.publishGroupThrough(
            { OutboundMessage::pushTo(Room, "postgres_changes", R"({"ids":[1]})", { 1 }),
              OutboundMessage::pushTo(Room, "postgres_changes", R"({"ids":[2]})",
                                      { 2, quint64{ 1 } << 63 }) },
            [&sunk](const OutboundMessagePtr &m) { sunk.push_back(m); });
    QCOMPARE(sunk.size(), size_t{ 2 });
    QVERIFY(sunk[0]->position().isSet());
    QCOMPARE(sunk[0]->position(), sunk[1]->position());
    QVERIFY(f.inner.published().empty()); // the sink delivers, not the wrapped pubsub
    // Not the home: unnumbered, still through the sink.
    f.homes.setHome("kept", QStringLiteral("other"));
    sunk.clear();
    f.sequencer.publishGroupThrough(
            { OutboundMessage::pushTo(Room, "postgres_changes", R"({"ids":[1]})", { 1 }) },
            [&sunk](const OutboundMessagePtr &m) { sunk.push_back(m); });
    QCOMPARE(sunk.size(), size_t{ 1 });
    QVERIFY(!sunk[0]->position().isSet());
}

void SequencingPubSubTest::previousNamesTheLastMessageForEveryNode()
{
    // A change for some members only takes an offset but is no message every node gets: the
    // next broadcast names the broadcast before it, so other nodes see that nothing is missing.
    Fixture f;
    f.sequencer.publish(broadcastOn(Room, 1));
    f.sequencer.publishGroup(
            { OutboundMessage::pushTo(Room, "postgres_changes", R"({"ids":[1]})", { 1 }) });
    f.sequencer.publish(broadcastOn(Room, 3));
    const std::vector<OutboundMessagePtr> out = f.inner.published();
    QCOMPARE(out.size(), size_t{ 3 });
    QCOMPARE(out[0]->position().previous, quint64{ 0 });
    QCOMPARE(out[1]->position().offset, quint64{ 2 });
    QCOMPARE(out[2]->position().offset, quint64{ 3 });
    QCOMPARE(out[2]->position().previous, quint64{ 1 });
}

void SequencingPubSubTest::joinsWaitForAnUnknownHome()
{
    ClusterFixture f;
    QObject receiver;
    int called = 0;
    QVERIFY(!f.sequencer.awaitHome(
            "kept", &receiver, [&called] { ++called; }, 60'000));
    f.homes.setHome("kept", QStringLiteral("other"));
    QTRY_COMPARE(called, 1);
    QVERIFY(f.sequencer.awaitHome(
            "kept", &receiver, [&called] { ++called; }, 60'000));
    // Unknown and never known: the wait ends at its timeout, once.
    QVERIFY(!f.sequencer.awaitHome(
            "later", &receiver, [&called] { ++called; }, 10));
    QTRY_COMPARE(called, 2);
    f.homes.setHome("later", QStringLiteral("other"));
    QCoreApplication::processEvents();
    QCOMPARE(called, 2);
    // Ended waits do not pile up while no home can be known: each new wait drops them.
    QCOMPARE(f.homes.waiterCount(), qsizetype{ 0 });
    int ended = 0;
    for (int i = 0; i < 100; ++i) {
        QVERIFY(!f.sequencer.awaitHome(
                "never", &receiver, [&ended] { ++ended; }, 1));
    }
    QTRY_COMPARE(ended, 100);
    QVERIFY(!f.sequencer.awaitHome(
            "never", &receiver, [] {}, 60'000));
    QCOMPARE(f.homes.waiterCount(), qsizetype{ 1 });
}

void SequencingPubSubTest::broadcastsAreNumberedPerTopic()
{
    Fixture f;
    f.sequencer.publish(broadcastOn(Room, 1));
    f.sequencer.publish(OutboundMessage::push(Room, "broadcast", R"({"type":"broadcast"})",
                                              Audience::BroadcastReaders));
    f.sequencer.publish(broadcastOn(PrivateRoom, 3)); // its own sequence
    f.sequencer.publish(broadcastOn(Room, 4));
    const std::vector<OutboundMessagePtr> out = f.inner.published();
    QCOMPARE(out.size(), size_t{ 4 });
    QCOMPARE(out[0]->position().offset, quint64{ 1 });
    QCOMPARE(out[1]->position().offset, quint64{ 2 });
    QCOMPARE(out[2]->position().offset, quint64{ 1 });
    QCOMPARE(out[3]->position().offset, quint64{ 3 });
    QCOMPARE(out[0]->position().epoch, out[3]->position().epoch);
    QVERIFY(out[0]->position().epoch != out[2]->position().epoch);
    QCOMPARE(metaOf(out[3]).value(QLatin1String("offset")).toInt(), 3);
    QCOMPARE(metaOf(out[3]).value(QLatin1String("epoch")).toString(),
             QString::fromLatin1(out[3]->position().epochText()));
    const QJsonObject textMeta = QJsonDocument::fromJson(out[1]->payload())
                                         .object()
                                         .value(QLatin1String("meta"))
                                         .toObject();
    QCOMPARE(textMeta.value(QLatin1String("offset")).toInt(), 2);
}

void SequencingPubSubTest::recoveryReturnsWhatWasPublished()
{
    Fixture f;
    for (int n = 1; n <= 5; ++n) {
        f.sequencer.publish(broadcastOn(Room, n));
    }
    const StreamPosition second = f.inner.published()[1]->position();
    const TopicHistory::Recovery recovery =
            f.history.since(Room, second, f.sequencer.settingsFor("kept"));
    QCOMPARE(recovery.failure, TopicHistory::RecoveryFailure::None);
    QCOMPARE(recovery.messages.size(), size_t{ 3 });
    // The very objects fan-out got: encoded once, shared.
    QCOMPARE(recovery.messages.front().get(), f.inner.published()[2].get());
    QCOMPARE(recovery.top.offset, quint64{ 5 });
}

void SequencingPubSubTest::changeGroupSharesOnePosition()
{
    Fixture f;
    f.sequencer.publish(broadcastOn(Room, 1));
    f.sequencer.publishGroup(
            { OutboundMessage::pushTo(Room, "postgres_changes", R"({"ids":[1],"data":{}})", { 1 }),
              OutboundMessage::pushTo(Room, "postgres_changes", R"({"ids":[2],"data":{}})",
                                      { 2 }) });
    f.sequencer.publish(broadcastOn(Room, 2));
    const std::vector<OutboundMessagePtr> out = f.inner.published();
    QCOMPARE(out.size(), size_t{ 4 });
    QCOMPARE(out[1]->position(), out[2]->position());
    QCOMPARE(out[1]->position().offset, quint64{ 2 });
    QCOMPARE(out[3]->position().offset, quint64{ 3 });
    QCOMPARE(out[2]->members(), (std::vector<quint64>{ 2 }));
    QCOMPARE(QJsonDocument::fromJson(out[2]->payload())
                     .object()
                     .value(QLatin1String("meta"))
                     .toObject()
                     .value(QLatin1String("offset"))
                     .toInt(),
             2);
}

void SequencingPubSubTest::changesTakeOffsetsButAreNotRecovered()
{
    Fixture f;
    f.sequencer.publish(broadcastOn(Room, 1));
    f.sequencer.publish(
            OutboundMessage::pushTo(Room, "postgres_changes", R"({"ids":[1],"data":{}})", { 1 }));
    f.sequencer.publish(broadcastOn(Room, 3));
    const HistorySettings settings = f.sequencer.settingsFor("kept");
    const StreamPosition first = f.inner.published()[0]->position();
    const TopicHistory::Recovery recovery = f.history.since(Room, first, settings);
    QCOMPARE(recovery.failure, TopicHistory::RecoveryFailure::None);
    QCOMPARE(recovery.messages.size(), size_t{ 1 }); // the change addressed members of its time
    QCOMPARE(recovery.messages[0]->position().offset, quint64{ 3 });
    QCOMPARE(recovery.top.offset, quint64{ 3 });
}

void SequencingPubSubTest::keptMessagesLeaveTheFlowLedger()
{
    Fixture f;
    auto ledger = std::make_shared<rt::FlowLedger>();
    rt::pubsub::DeliveryCounting counting;
    counting.ledger = ledger;
    f.sequencer.publish(OutboundMessage::userBroadcast(Room, "db", "{\"row\":1}", true,
                                                       R"({"id":"a"})", 0, counting));
    QVERIFY(ledger->undeliveredBytes() > 0); // the published copy, until fan-out lets it go
    f.inner.clear();
    // What the history keeps does not hold the change stream back.
    QCOMPARE(ledger->undeliveredBytes(), qint64{ 0 });
    const TopicHistory::Recovery recovery =
            f.history.since(Room, StreamPosition{ f.history.since(Room, {}, {}).top.epoch, 0 },
                            f.sequencer.settingsFor("kept"));
    QCOMPARE(recovery.messages.size(), size_t{ 1 });
    QVERIFY(!recovery.messages[0]->counting().ledger);
    QCOMPARE(recovery.messages[0]->metadataId(), QByteArray("a"));
    QCOMPARE(recovery.messages[0]->position().offset, quint64{ 1 });
}

void SequencingPubSubTest::passThroughWhatIsNotSequenced()
{
    Fixture f;
    const OutboundMessagePtr presence =
            OutboundMessage::push(Room, "presence_diff", "{}", Audience::PresenceReaders);
    const OutboundMessagePtr unkept = broadcastOn(Unkept, 1);
    const OutboundMessagePtr remote = broadcastOn(Room, 2);
    f.sequencer.publish(presence);
    f.sequencer.publish(unkept);
    f.sequencer.publishLocal(remote);
    const std::vector<OutboundMessagePtr> out = f.inner.published();
    QCOMPARE(out.size(), size_t{ 2 });
    QCOMPARE(out[0].get(), presence.get()); // the same object, untouched
    QCOMPARE(out[1].get(), unkept.get());
    QVERIFY(!out[1]->position().isSet());
    QCOMPARE(f.inner.local().size(), size_t{ 1 });
    QCOMPARE(f.inner.local()[0].get(), remote.get());
    QCOMPARE(f.history.topicCount(), qsizetype{ 0 });
}

void SequencingPubSubTest::concurrentPublishersReachFanOutInOffsetOrder()
{
    Fixture f;
    constexpr int Threads = 4;
    constexpr int PerThread = 500;
    std::vector<std::thread> threads;
    for (int t = 0; t < Threads; ++t) {
        threads.emplace_back([&f, t] {
            for (int n = 0; n < PerThread; ++n) {
                f.sequencer.publish(broadcastOn(Room, t * PerThread + n));
            }
        });
    }
    for (std::thread &thread : threads) {
        thread.join();
    }
    const std::vector<OutboundMessagePtr> out = f.inner.published();
    QCOMPARE(out.size(), size_t{ Threads * PerThread });
    for (size_t i = 0; i < out.size(); ++i) {
        QCOMPARE(out[i]->position().offset, quint64{ i + 1 });
    }
}

QTEST_GUILESS_MAIN(SequencingPubSubTest)
#include "tst_sequencing_pubsub.moc"
