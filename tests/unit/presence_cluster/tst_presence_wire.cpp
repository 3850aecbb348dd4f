// The presence replication wire codec (server/presence/presence_wire.h): every message round
// trips, full syncs are cut into ordered chunks that reassemble to the same records, and bad
// bytes (every truncation, trailing bytes, wrong version/op/flags/kind, non-object metas,
// absurd counts and lengths) are error values.
#include "server/presence/presence_wire.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <QtEndian>

using namespace rt::presence;
using namespace rt::presence::wire;
using rt::pubsub::TopicKey;

namespace {

const TopicKey PublicRoom("tenant-a", false, "room");
const TopicKey PrivateRoom("tenant-b", true, "secret \xe2\x9c\x93");

PresenceRecord record(int i)
{
    QJsonObject meta;
    meta.insert(QStringLiteral("name"), QStringLiteral("user %1").arg(i));
    meta.insert(QStringLiteral("n"), i);
    meta.insert(QStringLiteral("nested"), QJsonObject{ { QStringLiteral("ok"), true } });
    return PresenceRecord{ i % 2 ? PrivateRoom : PublicRoom, static_cast<quint64>(1000 + i),
                           QByteArray("key-") + QByteArray::number(i), meta,
                           QByteArray("ref-") + QByteArray::number(i) };
}

template <typename T>
T decodeAs(quint8 kind, const QByteArray &payload)
{
    auto decoded = decode(kind, payload);
    if (!decoded) {
        qWarning("decode failed: %s", qPrintable(decoded.error().message));
        return {};
    }
    const T *value = std::get_if<T>(&*decoded);
    return value ? *value : T{};
}

} // namespace

class PresenceWireTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void trackDeltaRoundTrips();
    void untrackDeltaRoundTrips();
    void markerAndResyncRequestRoundTrip();
    void kindsAreInPresenceRange();
    void syncIsCutIntoOrderedChunks();
    void emptySyncIsOneLastChunk();
    void oversizedRecordGetsAChunkOfItsOwn();
    void everyTruncationIsAnError();
    void trailingBytesAreAnError();
    void badVersionOpFlagsAndKindAreErrors();
    void metaMustBeAJsonObject();
    void absurdCountsAndLengthsAreErrors();
};

void PresenceWireTest::trackDeltaRoundTrips()
{
    const Delta delta{ 0xDEADBEEFCAFEF00DULL, 42,
                       PresenceChange{ PresenceChange::Op::Track, record(1) } };
    const QByteArray payload = encode(delta);
    QCOMPARE(kindOf(Message(delta)), KindDelta);
    const Delta decoded = decodeAs<Delta>(KindDelta, payload);
    QCOMPARE(decoded.incarnation, delta.incarnation);
    QCOMPARE(decoded.sequence, delta.sequence);
    QVERIFY(decoded.change == delta.change);
    QVERIFY(decoded.change.record.topic.isPrivate());
    QCOMPARE(decoded.change.record.topic.subTopic(), PrivateRoom.subTopic());
}

void PresenceWireTest::untrackDeltaRoundTrips()
{
    const Delta delta{ 7, 8,
                       PresenceChange{ PresenceChange::Op::Untrack,
                                       PresenceRecord{ PublicRoom, 5, {}, {}, {} } } };
    const Delta decoded = decodeAs<Delta>(KindDelta, encode(delta));
    QCOMPARE(decoded.change.op, PresenceChange::Op::Untrack);
    QCOMPARE(decoded.change.record.topic, PublicRoom);
    QCOMPARE(decoded.change.record.memberId, quint64(5));
    QCOMPARE(decoded.sequence, quint64(8));
}

void PresenceWireTest::markerAndResyncRequestRoundTrip()
{
    const Marker marker{ 99, 12345678901ULL };
    const Marker decoded = decodeAs<Marker>(KindMarker, encode(marker));
    QCOMPARE(decoded.incarnation, marker.incarnation);
    QCOMPARE(decoded.sequence, marker.sequence);
    QCOMPARE(kindOf(Message(marker)), KindMarker);

    const auto request = decode(KindResyncRequest, encode(ResyncRequest{}));
    QVERIFY(request.ok());
    QVERIFY(std::holds_alternative<ResyncRequest>(*request));
    QCOMPARE(kindOf(*request), KindResyncRequest);
}

void PresenceWireTest::kindsAreInPresenceRange()
{
    // 16-19 are the broadcasts', 24-25 the change streams', 28-29 the cluster counters': the
    // replicator must not take their frames for malformed presence frames (and ask for syncs).
    for (quint8 kind : { KindDelta, KindSyncChunk, KindMarker, KindResyncRequest }) {
        QVERIFY(isPresenceKind(kind));
    }
    for (quint8 kind : { quint8(19), quint8(24), quint8(25), quint8(28), quint8(29), quint8(32) }) {
        QVERIFY2(!isPresenceKind(kind), qPrintable(QString::number(kind)));
    }
}

void PresenceWireTest::syncIsCutIntoOrderedChunks()
{
    QList<PresenceRecord> records;
    for (int i = 0; i < 200; ++i) {
        records.append(record(i));
    }
    const QList<QByteArray> chunks = encodeSync(11, 22, records, 2000);
    QVERIFY2(chunks.size() > 5, qPrintable(QString::number(chunks.size())));
    QList<PresenceRecord> reassembled;
    for (qsizetype i = 0; i < chunks.size(); ++i) {
        // About the size asked for: one record more would have passed it.
        QVERIFY(chunks.at(i).size() <= 2000);
        const SyncChunk chunk = decodeAs<SyncChunk>(KindSyncChunk, chunks.at(i));
        QCOMPARE(chunk.incarnation, quint64(11));
        QCOMPARE(chunk.sequence, quint64(22));
        QCOMPARE(chunk.index, quint32(i));
        QCOMPARE(chunk.last, i == chunks.size() - 1);
        QVERIFY(!chunk.records.isEmpty());
        reassembled.append(chunk.records);
    }
    QCOMPARE(reassembled.size(), records.size());
    QVERIFY(reassembled == records);

    // One chunk when everything fits; encode(SyncChunk) writes the same bytes.
    const QList<QByteArray> one = encodeSync(11, 22, records.mid(0, 3), 1 << 20);
    QCOMPARE(one.size(), 1);
    QCOMPARE(one.constFirst(), encode(SyncChunk{ 11, 22, 0, true, records.mid(0, 3) }));
}

void PresenceWireTest::emptySyncIsOneLastChunk()
{
    const QList<QByteArray> chunks = encodeSync(1, 0, {}, 1024);
    QCOMPARE(chunks.size(), 1);
    const SyncChunk chunk = decodeAs<SyncChunk>(KindSyncChunk, chunks.constFirst());
    QVERIFY(chunk.last);
    QCOMPARE(chunk.index, quint32(0));
    QVERIFY(chunk.records.isEmpty());
}

void PresenceWireTest::oversizedRecordGetsAChunkOfItsOwn()
{
    PresenceRecord big = record(1);
    big.meta.insert(QStringLiteral("blob"), QString(5000, QLatin1Char('x')));
    const QList<QByteArray> chunks = encodeSync(1, 2, { record(0), big, record(2) }, 1000);
    QCOMPARE(chunks.size(), 3);
    QCOMPARE(decodeAs<SyncChunk>(KindSyncChunk, chunks.at(1)).records.constFirst(), big);
}

void PresenceWireTest::everyTruncationIsAnError()
{
    const QList<std::pair<quint8, QByteArray>> messages{
        { KindDelta,
          encode(Delta{ 1, 2, PresenceChange{ PresenceChange::Op::Track, record(3) } }) },
        { KindDelta,
          encode(Delta{ 1, 2,
                        PresenceChange{ PresenceChange::Op::Untrack,
                                        PresenceRecord{ PublicRoom, 5, {}, {}, {} } } }) },
        { KindSyncChunk, encode(SyncChunk{ 1, 2, 0, true, { record(1), record(2) } }) },
        { KindMarker, encode(Marker{ 1, 2 }) },
        { KindResyncRequest, encode(ResyncRequest{}) },
    };
    for (const auto &[kind, payload] : messages) {
        QVERIFY(decode(kind, payload).ok());
        for (qsizetype size = 0; size < payload.size(); ++size) {
            QVERIFY2(!decode(kind, payload.first(size)).ok(),
                     qPrintable(QStringLiteral("kind %1 cut at %2").arg(kind).arg(size)));
        }
    }
}

void PresenceWireTest::trailingBytesAreAnError()
{
    for (const auto &[kind, payload] :
         QList<std::pair<quint8, QByteArray>>{ { KindMarker, encode(Marker{ 1, 2 }) },
                                               { KindResyncRequest, encode(ResyncRequest{}) },
                                               { KindSyncChunk, encode(SyncChunk{}) } }) {
        const QByteArray longer = payload + QByteArray(1, '\0');
        const auto decoded = decode(kind, longer);
        QVERIFY(!decoded.ok());
        QCOMPARE(decoded.error().message, QStringLiteral("trailing bytes"));
    }
}

void PresenceWireTest::badVersionOpFlagsAndKindAreErrors()
{
    QByteArray marker = encode(Marker{ 1, 2 });
    marker[0] = 2;
    QVERIFY(!decode(KindMarker, marker).ok());

    // The op byte follows version, incarnation and sequence.
    QByteArray delta =
            encode(Delta{ 1, 2, PresenceChange{ PresenceChange::Op::Track, record(0) } });
    delta[17] = 3;
    QVERIFY(!decode(KindDelta, delta).ok());

    // Topic flags follow the op and the tenant ("tenant-a", 8 bytes with its length).
    QByteArray flags =
            encode(Delta{ 1, 2, PresenceChange{ PresenceChange::Op::Track, record(0) } });
    QCOMPARE(flags.at(18 + 4 + 8), '\0');
    flags[18 + 4 + 8] = 2;
    QVERIFY(!decode(KindDelta, flags).ok());

    // Last flag other than 0/1.
    QByteArray chunk = encode(SyncChunk{ 1, 2, 0, true, {} });
    chunk[1 + 8 + 8 + 4] = 7;
    QVERIFY(!decode(KindSyncChunk, chunk).ok());

    // Presence kinds without a message yet, and kinds outside the range.
    for (quint8 kind : { quint8(24), quint8(31), quint8(19), quint8(0), quint8(255) }) {
        QVERIFY(!decode(kind, encode(ResyncRequest{})).ok());
    }
    QVERIFY(!decode(KindDelta, QByteArray()).ok());
}

void PresenceWireTest::metaMustBeAJsonObject()
{
    // Rebuild a track delta by hand with a chosen meta text.
    const auto withMeta = [](const QByteArray &metaText) {
        const Delta base{ 1, 2,
                          PresenceChange{ PresenceChange::Op::Track,
                                          PresenceRecord{ PublicRoom, 9, "k", {}, "r" } } };
        QByteArray payload = encode(base);
        const QByteArray emptyMeta = QByteArray("\0\0\0\x02{}", 6);
        const qsizetype at = payload.indexOf(emptyMeta);
        const QByteArray replacement = QByteArray(4, '\0') + metaText; // length patched below
        payload.replace(at, emptyMeta.size(), replacement);
        qToBigEndian(static_cast<quint32>(metaText.size()), payload.data() + at);
        return payload;
    };
    QVERIFY(decode(KindDelta, withMeta("{\"a\":1}")).ok());
    QVERIFY(!decode(KindDelta, withMeta("[1,2]")).ok());
    QVERIFY(!decode(KindDelta, withMeta("{\"a\":")).ok());
    QVERIFY(!decode(KindDelta, withMeta("")).ok());
    QVERIFY(!decode(KindDelta, withMeta("\xff\xfe")).ok());
}

void PresenceWireTest::absurdCountsAndLengthsAreErrors()
{
    // A chunk announcing 4 billion records in a few bytes is refused before allocating.
    QByteArray chunk = encode(SyncChunk{ 1, 2, 0, true, {} });
    qToBigEndian(quint32(0xFFFFFFFF), chunk.data() + chunk.size() - 4);
    const auto many = decode(KindSyncChunk, chunk);
    QVERIFY(!many.ok());
    QCOMPARE(many.error().message, QStringLiteral("record count exceeds payload"));

    // A byte string longer than the payload.
    QByteArray delta =
            encode(Delta{ 1, 2, PresenceChange{ PresenceChange::Op::Track, record(0) } });
    qToBigEndian(quint32(0xFFFFFFF0), delta.data() + 18);
    QVERIFY(!decode(KindDelta, delta).ok());
}

QTEST_GUILESS_MAIN(PresenceWireTest)
#include "tst_presence_wire.moc"
