// The history frames between a node and a tenant's home (history_wire.h): requests and reply
// chunks round-trip, the wire layout is stable, a reply is cut into chunks below the bound with
// the verdict in the last, and every malformation is an error, never a crash.
#include "server/pubsub/cluster_envelope.h"
#include "server/pubsub/history_wire.h"

#include <QTest>

using rt::pubsub::OutboundMessage;
using rt::pubsub::StreamPosition;
using rt::pubsub::TopicHistory;
using rt::pubsub::TopicKey;
namespace wire = rt::pubsub::history_wire;

class HistoryWireTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void requestRoundTrips();
    void requestLayoutIsStable();
    void replyChunkRoundTrips();
    void replyIsCutIntoChunksWithTheVerdictLast();
    void emptyReplyIsOneLastChunk();
    void everyTruncationIsAnError();
    void malformedFieldsAreErrors();
};

void HistoryWireTest::requestRoundTrips()
{
    wire::Request request;
    request.requestId = 77;
    request.mode = wire::Request::Mode::Time;
    request.topic = TopicKey("tenant-a", true, "room:1");
    request.from = StreamPosition{ 0x1122334455667788ULL, 9 };
    request.sinceMs = 1'700'000'000'123;
    const auto decoded = wire::decodeRequest(wire::encodeRequest(request));
    QVERIFY(decoded);
    QCOMPARE(*decoded, request);
}

void HistoryWireTest::requestLayoutIsStable()
{
    wire::Request request;
    request.requestId = 1;
    request.topic = TopicKey("t", false, "s");
    request.from = StreamPosition{ 2, 3 };
    QCOMPARE(wire::encodeRequest(request).toHex(),
             QByteArray("01" // version
                        "0000000000000001" // request id
                        "00" // mode: position
                        "0000000174" // tenant "t"
                        "00" // public
                        "0000000173" // sub-topic "s"
                        "0000000000000002" // epoch
                        "0000000000000003" // offset
                        "0000000000000000")); // sinceMs
}

void HistoryWireTest::replyChunkRoundTrips()
{
    wire::ReplyChunk chunk;
    chunk.requestId = 5;
    chunk.last = false;
    chunk.failure = TopicHistory::RecoveryFailure::HistoryTooShort;
    chunk.top = StreamPosition{ 8, 100 };
    chunk.envelopes = { QByteArray("one"), QByteArray(), QByteArray(300, 'x') };
    const auto decoded = wire::decodeReplyChunk(wire::encodeReplyChunk(chunk));
    QVERIFY(decoded);
    QCOMPARE(*decoded, chunk);
}

void HistoryWireTest::replyIsCutIntoChunksWithTheVerdictLast()
{
    TopicHistory::Recovery recovery;
    recovery.top = StreamPosition{ 3, 40 };
    const TopicKey topic("tenant-a", false, "room");
    for (int i = 0; i < 40; ++i) {
        recovery.messages.push_back(OutboundMessage::withPosition(
                *OutboundMessage::userBroadcast(topic, "e", QByteArray(100, 'a'), false, {}),
                StreamPosition{ 3, quint64(i + 1) }));
    }
    const QList<wire::ReplyChunk> chunks = wire::replyChunks(9, recovery, 1000);
    QVERIFY(chunks.size() > 1);
    qsizetype envelopes = 0;
    for (qsizetype i = 0; i < chunks.size(); ++i) {
        const wire::ReplyChunk &chunk = chunks.at(i);
        QCOMPARE(chunk.requestId, quint64(9));
        QCOMPARE(chunk.last, i == chunks.size() - 1);
        qsizetype bytes = 0;
        for (const QByteArray &envelope : chunk.envelopes) {
            bytes += envelope.size();
            const auto decoded = rt::pubsub::decodeEnvelope(envelope);
            QVERIFY(decoded.ok());
            QCOMPARE(decoded->position.offset, quint64(envelopes + 1)); // oldest first, all kept
            ++envelopes;
        }
        QVERIFY(bytes <= 1000);
    }
    QCOMPARE(envelopes, qsizetype(40));
    QCOMPARE(chunks.last().top, recovery.top);
    QCOMPARE(chunks.last().failure, TopicHistory::RecoveryFailure::None);
}

void HistoryWireTest::emptyReplyIsOneLastChunk()
{
    TopicHistory::Recovery recovery;
    recovery.failure = TopicHistory::RecoveryFailure::EpochChanged;
    const QList<wire::ReplyChunk> chunks = wire::replyChunks(1, recovery, 1000);
    QCOMPARE(chunks.size(), qsizetype(1));
    QVERIFY(chunks.first().last);
    QCOMPARE(chunks.first().failure, TopicHistory::RecoveryFailure::EpochChanged);
}

void HistoryWireTest::everyTruncationIsAnError()
{
    wire::Request request;
    request.topic = TopicKey("tenant", false, "sub");
    const QByteArray requestBytes = wire::encodeRequest(request);
    for (qsizetype size = 0; size < requestBytes.size(); ++size) {
        QVERIFY(!wire::decodeRequest(QByteArrayView(requestBytes).first(size)));
    }
    wire::ReplyChunk chunk;
    chunk.envelopes = { QByteArray("abc") };
    const QByteArray chunkBytes = wire::encodeReplyChunk(chunk);
    for (qsizetype size = 0; size < chunkBytes.size(); ++size) {
        QVERIFY(!wire::decodeReplyChunk(QByteArrayView(chunkBytes).first(size)));
    }
    QVERIFY(!wire::decodeRequest(QByteArray(requestBytes + 'x')));
    QVERIFY(!wire::decodeReplyChunk(QByteArray(chunkBytes + 'x')));
}

void HistoryWireTest::malformedFieldsAreErrors()
{
    wire::Request request;
    request.topic = TopicKey("tenant", false, "sub");
    const QByteArray good = wire::encodeRequest(request);
    QByteArray badVersion = good;
    badVersion[0] = 2;
    QVERIFY(!wire::decodeRequest(badVersion));
    QByteArray badMode = good;
    badMode[9] = 7;
    QVERIFY(!wire::decodeRequest(badMode));
    wire::Request noTenant = request;
    noTenant.topic = TopicKey("", false, "sub");
    QVERIFY(!wire::decodeRequest(wire::encodeRequest(noTenant)));
    wire::Request offsetOnly = request;
    offsetOnly.from = StreamPosition{ 0, 4 };
    QVERIFY(!wire::decodeRequest(wire::encodeRequest(offsetOnly)));

    wire::ReplyChunk chunk;
    QByteArray badFlags = wire::encodeReplyChunk(chunk);
    badFlags[9] = static_cast<char>(0x80);
    QVERIFY(!wire::decodeReplyChunk(badFlags));
    QByteArray badFailure = wire::encodeReplyChunk(chunk);
    badFailure[10] = 9;
    QVERIFY(!wire::decodeReplyChunk(badFailure));
    // A count far beyond what the frame holds: refused before anything is reserved.
    QByteArray hostileCount = wire::encodeReplyChunk(chunk);
    hostileCount[27] = static_cast<char>(0x7f);
    QVERIFY(!wire::decodeReplyChunk(hostileCount));
}

QTEST_GUILESS_MAIN(HistoryWireTest)
#include "tst_history_wire.moc"
