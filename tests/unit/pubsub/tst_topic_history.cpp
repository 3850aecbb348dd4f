// Topic sequences and bounded histories (server/pubsub/topic_history): offsets rise by one within
// an epoch and reach fan-out in that order even when threads publish at once; a recovery returns
// exactly what came after a position, or says why it cannot; the count, age and node bounds
// hold; an idle topic starts a new epoch. The clock is the test's.
#include "server/pubsub/topic_history.h"

#include <QTest>

#include <thread>
#include <vector>

using rt::pubsub::HistorySettings;
using rt::pubsub::OutboundMessage;
using rt::pubsub::OutboundMessagePtr;
using rt::pubsub::StreamPosition;
using rt::pubsub::TopicHistory;
using rt::pubsub::TopicKey;
using Failure = rt::pubsub::TopicHistory::RecoveryFailure;

namespace {

const TopicKey Room("tenant", false, "room");
const TopicKey Other("tenant", false, "other");

OutboundMessagePtr messageAt(const TopicKey &topic, StreamPosition position, qsizetype size = 10)
{
    return OutboundMessage::userBroadcast(topic, "ev", "\"" + QByteArray(size, 'x') + "\"", true,
                                          QByteArrayLiteral("{\"offset\":")
                                                  + QByteArray::number(position.offset) + "}");
}

struct Fixture
{
    qint64 nowMs = 1'000'000;
    TopicHistory history;
    std::vector<StreamPosition> published;

    explicit Fixture(qint64 maxBytes = 1 << 30) : history(maxBytes, [this] { return nowMs; }) { }

    StreamPosition append(const TopicKey &topic, const HistorySettings &settings = {},
                          qsizetype size = 10)
    {
        StreamPosition given;
        history.append(
                topic, settings,
                [&](StreamPosition position) {
                    given = position;
                    return messageAt(topic, position, size);
                },
                [&](const OutboundMessagePtr &) { published.push_back(given); });
        return given;
    }
};

std::vector<QByteArray> metadataOf(const std::vector<OutboundMessagePtr> &messages)
{
    std::vector<QByteArray> out;
    for (const OutboundMessagePtr &message : messages) {
        out.push_back(message->metadata());
    }
    return out;
}

QByteArray at(quint64 offset)
{
    return QByteArrayLiteral("{\"offset\":") + QByteArray::number(offset) + "}";
}

} // namespace

class TstTopicHistory : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void offsetsRiseByOneWithinAnEpoch()
    {
        Fixture f;
        const StreamPosition first = f.append(Room);
        QVERIFY(first.epoch != 0);
        QCOMPARE(first.offset, 1u);
        QCOMPARE(f.append(Room), (StreamPosition{ first.epoch, 2 }));
        const StreamPosition other = f.append(Other);
        QCOMPARE(other.offset, 1u); // every topic has its own sequence
        QVERIFY(other.epoch != first.epoch);
        QCOMPARE(f.published.size(), size_t(3));
    }

    void recoveryReturnsExactlyWhatCameAfter()
    {
        Fixture f;
        StreamPosition last;
        for (int i = 0; i < 5; ++i) {
            last = f.append(Room);
        }
        const auto recovery = f.history.since(Room, { last.epoch, 2 }, {});
        QCOMPARE(recovery.failure, Failure::None);
        QCOMPARE(metadataOf(recovery.messages), (std::vector<QByteArray>{ at(3), at(4), at(5) }));
        QCOMPARE(recovery.top, last);
        const auto upToDate = f.history.since(Room, last, {});
        QCOMPARE(upToDate.failure, Failure::None);
        QVERIFY(upToDate.messages.empty());
        const auto fromStart = f.history.since(Room, { last.epoch, 0 }, {});
        QCOMPARE(fromStart.messages.size(), size_t(5));
    }

    void recoveryFailsWithTheReason()
    {
        Fixture f;
        const HistorySettings three{ 3, 120 };
        StreamPosition last;
        for (int i = 0; i < 6; ++i) {
            last = f.append(Room, three);
        }
        // Kept: 4, 5, 6.
        QCOMPARE(f.history.since(Room, { last.epoch, 3 }, three).failure, Failure::None);
        QCOMPARE(f.history.since(Room, { last.epoch, 2 }, three).failure, Failure::HistoryTooShort);
        QVERIFY(f.history.since(Room, { last.epoch, 2 }, three).messages.empty());
        QCOMPARE(f.history.since(Room, { last.epoch + 2, 5 }, three).failure,
                 Failure::EpochChanged);
        QCOMPARE(f.history.since(Room, { last.epoch, 7 }, three).failure,
                 Failure::EpochChanged); // a position that never was
        QCOMPARE(f.history.since(Other, { 1, 1 }, three).failure, Failure::EpochChanged);
        QCOMPARE(TopicHistory::toString(Failure::HistoryTooShort),
                 QStringLiteral("history too short"));
        QCOMPARE(TopicHistory::toString(Failure::EpochChanged), QStringLiteral("epoch changed"));
    }

    void messagesOlderThanTheTtlGo()
    {
        Fixture f;
        const HistorySettings tenSeconds{ 100, 10 };
        const StreamPosition first = f.append(Room, tenSeconds);
        f.nowMs += 6000;
        f.append(Room, tenSeconds);
        f.nowMs += 6000; // the first is 12 s old
        const auto recovery = f.history.since(Room, { first.epoch, 1 }, tenSeconds);
        QCOMPARE(recovery.failure, Failure::None);
        QCOMPARE(metadataOf(recovery.messages), (std::vector<QByteArray>{ at(2) }));
        QCOMPARE(f.history.since(Room, { first.epoch, 0 }, tenSeconds).failure,
                 Failure::HistoryTooShort);
        QCOMPARE(metadataOf(f.history.sinceTime(Room, f.nowMs - 7000, tenSeconds).messages),
                 (std::vector<QByteArray>{ at(2) }));
        QVERIFY(f.history.sinceTime(Room, f.nowMs - 5000, tenSeconds).messages.empty());
    }

    void anIdleTopicStartsANewEpoch()
    {
        Fixture f;
        const HistorySettings tenSeconds{ 100, 10 };
        const StreamPosition first = f.append(Room, tenSeconds);
        f.nowMs += 5000;
        QCOMPARE(f.append(Room, tenSeconds).epoch, first.epoch); // not idle long enough
        f.nowMs += 11'000;
        f.history.sweep();
        QCOMPARE(f.history.topicCount(), 0);
        QCOMPARE(f.history.retainedBytes(), 0);
        const StreamPosition again = f.append(Room, tenSeconds);
        QVERIFY(again.epoch != first.epoch);
        QCOMPARE(again.offset, 1u);
        QCOMPARE(f.history.since(Room, { first.epoch, 2 }, tenSeconds).failure,
                 Failure::EpochChanged);
    }

    void withoutHistoryNothingIsKept()
    {
        Fixture f;
        const HistorySettings off{ 0, 120 };
        const StreamPosition first = f.append(Room, off);
        f.append(Room, off);
        QCOMPARE(f.history.retainedBytes(), 0);
        QCOMPARE(f.history.since(Room, { first.epoch, 1 }, off).failure, Failure::HistoryTooShort);
    }

    void theNodeBoundDropsTheOldestMessagesFirst()
    {
        Fixture probe;
        probe.append(Room, {}, 100);
        const qint64 one = probe.history.retainedBytes(); // the message and its entry
        QVERIFY(one > messageAt(Room, {}, 100)->footprintBytes());
        Fixture f(4 * one + one / 2);
        const StreamPosition room1 = f.append(Room, {}, 100);
        f.nowMs += 10;
        const StreamPosition other1 = f.append(Other, {}, 100);
        for (int i = 0; i < 4; ++i) {
            f.nowMs += 10;
            f.append(i % 2 == 0 ? Room : Other, {}, 100);
        }
        QCOMPARE(f.history.retainedBytes(), 6 * one);
        f.history.sweep(); // room 1 and other 1 are the oldest
        QCOMPARE(f.history.retainedBytes(), 4 * one);
        QCOMPARE(f.history.since(Room, { room1.epoch, 0 }, {}).failure, Failure::HistoryTooShort);
        QCOMPARE(f.history.since(Room, { room1.epoch, 1 }, {}).messages.size(), size_t(2));
        QCOMPARE(f.history.since(Other, { other1.epoch, 1 }, {}).messages.size(), size_t(2));
        QCOMPARE(f.history.since(Other, { other1.epoch, 0 }, {}).failure, Failure::HistoryTooShort);
    }

    // Four threads publish to one topic at once: fan-out sees the offsets 1..N in order, and
    // the history holds them in that order too.
    void concurrentPublishersReachFanOutInOffsetOrder()
    {
        TopicHistory history(1 << 30);
        std::vector<quint64> fanOut;
        constexpr int PerThread = 2000;
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; ++t) {
            threads.emplace_back([&] {
                for (int i = 0; i < PerThread; ++i) {
                    quint64 offset = 0;
                    history.append(
                            Room, HistorySettings{ 10'000, 120 },
                            [&](StreamPosition position) {
                                offset = position.offset;
                                return messageAt(Room, position);
                            },
                            [&](const OutboundMessagePtr &) { fanOut.push_back(offset); });
                }
            });
        }
        for (std::thread &thread : threads) {
            thread.join();
        }
        QCOMPARE(fanOut.size(), size_t(4 * PerThread));
        for (size_t i = 0; i < fanOut.size(); ++i) {
            QCOMPARE(fanOut[i], quint64(i + 1));
        }
        const HistorySettings settings{ 10'000, 120 };
        const auto all =
                history.since(Room, { history.since(Room, {}, settings).top.epoch, 0 }, settings);
        QCOMPARE(all.messages.size(), size_t(4 * PerThread));
        QCOMPARE(all.messages.back()->metadata(), at(4 * PerThread));
    }
};

QTEST_APPLESS_MAIN(TstTopicHistory)
#include "tst_topic_history.moc"
