// RemoteSequences (server/pubsub/remote_sequences): numbered messages from a tenant's home are
// delivered in offset order, each once; a message whose `previous` names an offset not
// delivered here holds the topic's later messages until the home's answer fills the gap (or
// says it cannot); a new epoch starts afresh; a catch-up after a link came back asks for every
// topic of that home; the bounds hold.
#include "server/pubsub/remote_sequences.h"

#include <QTest>

using rt::pubsub::OutboundMessage;
using rt::pubsub::OutboundMessagePtr;
using rt::pubsub::RemoteSequences;
using rt::pubsub::StreamPosition;
using rt::pubsub::TopicHistory;
using rt::pubsub::TopicKey;

namespace {

const TopicKey Room("tenant-a", false, "room");
const TopicKey Other("tenant-b", false, "room");
constexpr quint64 Epoch = 0x77;

// Offset `offset` of `topic`, whose previous shared message was `previous`.
OutboundMessagePtr numbered(quint64 offset, quint64 previous, const TopicKey &topic = Room,
                            quint64 epoch = Epoch)
{
    return OutboundMessage::withPosition(
            *OutboundMessage::userBroadcast(topic, "e", "{}", true, {}),
            StreamPosition{ epoch, offset, previous });
}

std::vector<quint64> offsets(const std::vector<OutboundMessagePtr> &messages)
{
    std::vector<quint64> out;
    for (const OutboundMessagePtr &message : messages) {
        out.push_back(message->position().offset);
    }
    return out;
}

TopicHistory::Recovery answer(std::vector<OutboundMessagePtr> messages)
{
    TopicHistory::Recovery recovery;
    recovery.messages = std::move(messages);
    return recovery;
}

} // namespace

class RemoteSequencesTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void inOrderMessagesGoStraightThrough();
    void holesLeftByChangesAreNoGap();
    void duplicatesAreDropped();
    void gapHoldsLaterMessagesUntilTheAnswer();
    void failedAnswerReleasesWhatWaited();
    void newEpochStartsAfresh();
    void catchUpAsksForEveryTopicOfThatHome();
    void tooManyWaitingGiveUpTheGap();
    void idleTopicsAreForgotten();
};

void RemoteSequencesTest::inOrderMessagesGoStraightThrough()
{
    RemoteSequences sequences;
    QCOMPARE(offsets(sequences.received(numbered(5, 4), 0).deliver), std::vector<quint64>{ 5 });
    for (quint64 n = 6; n <= 8; ++n) {
        const auto out = sequences.received(numbered(n, n - 1), 0);
        QCOMPARE(offsets(out.deliver), std::vector<quint64>{ n });
        QVERIFY(!out.askFrom);
    }
}

void RemoteSequencesTest::holesLeftByChangesAreNoGap()
{
    // Offsets 2..4 were postgres_changes for other nodes' members: 5 names 1 as its previous.
    RemoteSequences sequences;
    (void)sequences.received(numbered(1, 0), 0);
    const auto out = sequences.received(numbered(5, 1), 0);
    QCOMPARE(offsets(out.deliver), std::vector<quint64>{ 5 });
    QVERIFY(!out.askFrom);
    QCOMPARE(sequences.figures().gapsSeen, quint64{ 0 });
}

void RemoteSequencesTest::duplicatesAreDropped()
{
    RemoteSequences sequences;
    (void)sequences.received(numbered(1, 0), 0);
    (void)sequences.received(numbered(2, 1), 0);
    QVERIFY(sequences.received(numbered(2, 1), 0).deliver.empty());
    QVERIFY(sequences.received(numbered(1, 0), 0).deliver.empty());
    QCOMPARE(sequences.figures().duplicatesDropped, quint64{ 2 });
}

void RemoteSequencesTest::gapHoldsLaterMessagesUntilTheAnswer()
{
    RemoteSequences sequences;
    (void)sequences.received(numbered(1, 0), 0);
    // 2 and 3 were lost on the way.
    const auto gap = sequences.received(numbered(4, 3), 0);
    QVERIFY(gap.deliver.empty());
    QVERIFY(gap.askFrom);
    QCOMPARE(*gap.askFrom, (StreamPosition{ Epoch, 1 }));
    QVERIFY(sequences.received(numbered(5, 4), 0).deliver.empty()); // held
    // The answer (read at the home after 5 was numbered) has 2..5: each once, then 6 live.
    const auto filled = sequences.answered(
            Room, answer({ numbered(2, 1), numbered(3, 2), numbered(4, 3), numbered(5, 4) }));
    QCOMPARE(offsets(filled.deliver), (std::vector<quint64>{ 2, 3, 4, 5 }));
    QCOMPARE(offsets(sequences.received(numbered(6, 5), 0).deliver), std::vector<quint64>{ 6 });
    QCOMPARE(sequences.figures().gapsFilled, quint64{ 1 });
    // A late second answer changes nothing.
    QVERIFY(sequences.answered(Room, answer({ numbered(2, 1) })).deliver.empty());
}

void RemoteSequencesTest::failedAnswerReleasesWhatWaited()
{
    RemoteSequences sequences;
    (void)sequences.received(numbered(1, 0), 0);
    (void)sequences.received(numbered(4, 3), 0);
    (void)sequences.received(numbered(5, 4), 0);
    TopicHistory::Recovery failed;
    failed.failure = TopicHistory::RecoveryFailure::HistoryTooShort;
    QCOMPARE(offsets(sequences.answered(Room, failed).deliver), (std::vector<quint64>{ 4, 5 }));
    QCOMPARE(sequences.figures().gapsLeft, quint64{ 1 });
    QCOMPARE(offsets(sequences.received(numbered(6, 5), 0).deliver), std::vector<quint64>{ 6 });
}

void RemoteSequencesTest::newEpochStartsAfresh()
{
    RemoteSequences sequences;
    (void)sequences.received(numbered(10, 9), 0);
    (void)sequences.received(numbered(13, 12), 0); // a gap: waits
    const auto out = sequences.received(numbered(1, 0, Room, 0x99), 0);
    // What waited for the old epoch goes out as it came, then the new epoch's first.
    QCOMPARE(offsets(out.deliver), (std::vector<quint64>{ 13, 1 }));
    QCOMPARE(offsets(sequences.received(numbered(2, 1, Room, 0x99), 0).deliver),
             std::vector<quint64>{ 2 });
}

void RemoteSequencesTest::catchUpAsksForEveryTopicOfThatHome()
{
    RemoteSequences sequences;
    (void)sequences.received(numbered(3, 2), 0);
    (void)sequences.received(numbered(7, 6, Other), 0);
    const auto questions =
            sequences.catchUp([](const QByteArray &tenant) { return tenant == "tenant-a"; }, 0);
    QCOMPARE(questions.size(), size_t{ 1 });
    QCOMPARE(questions[0].first, Room);
    QCOMPARE(questions[0].second, (StreamPosition{ Epoch, 3 }));
    // Live messages wait for the answer, which brings what the partition lost.
    QVERIFY(sequences.received(numbered(9, 8), 0).deliver.empty());
    const auto filled =
            sequences.answered(Room, answer({ numbered(4, 3), numbered(8, 4), numbered(9, 8) }));
    QCOMPARE(offsets(filled.deliver), (std::vector<quint64>{ 4, 8, 9 }));
    // The other tenant's topic was not asked about and flows on.
    QCOMPARE(offsets(sequences.received(numbered(8, 7, Other), 0).deliver),
             std::vector<quint64>{ 8 });
}

void RemoteSequencesTest::tooManyWaitingGiveUpTheGap()
{
    RemoteSequences sequences;
    (void)sequences.received(numbered(1, 0), 0);
    (void)sequences.received(numbered(3, 2), 0); // waits for 2
    for (quint64 n = 4; n < 3 + RemoteSequences::MaxHeldPerTopic; ++n) {
        QVERIFY(sequences.received(numbered(n, n - 1), 0).deliver.empty());
    }
    const quint64 next = 3 + RemoteSequences::MaxHeldPerTopic;
    const auto out = sequences.received(numbered(next, next - 1), 0);
    QCOMPARE(out.deliver.size(), size_t(RemoteSequences::MaxHeldPerTopic + 1));
    QCOMPARE(out.deliver.front()->position().offset, quint64{ 3 });
    QCOMPARE(out.deliver.back()->position().offset, next);
    QCOMPARE(sequences.figures().gapsLeft, quint64{ 1 });
}

void RemoteSequencesTest::idleTopicsAreForgotten()
{
    RemoteSequences sequences;
    (void)sequences.received(numbered(1, 0), 0);
    (void)sequences.received(numbered(1, 0, Other), 0);
    (void)sequences.received(numbered(5, 4, Other), 0); // waits: kept however long
    sequences.sweep(RemoteSequences::IdleForgetMs);
    QCOMPARE(sequences.topicCount(), qsizetype{ 1 });
    sequences.forgetTenant("tenant-b");
    QCOMPARE(sequences.topicCount(), qsizetype{ 0 });
}

QTEST_GUILESS_MAIN(RemoteSequencesTest)
#include "tst_remote_sequences.moc"
