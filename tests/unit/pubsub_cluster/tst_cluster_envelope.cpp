// The broadcast envelope that crosses node links: a message rebuilt from its envelope encodes
// to the same Phoenix bytes as the original for both serializers (JSON and binary broadcasts,
// pushes of every audience, private topics, metadata), node-local fields (excluded member,
// counting) do not travel, Members messages are refused, and every malformation of the bytes
// is an error value of the right kind.
#include "server/limits/rate_counter.h"
#include "server/pubsub/cluster_envelope.h"

#include <QTest>

#include <memory>

using rt::protocol::Vsn;
using rt::pubsub::Audience;
using rt::pubsub::ClusterEnvelope;
using rt::pubsub::decodeEnvelope;
using rt::pubsub::DeliveryCounting;
using rt::pubsub::encodeEnvelope;
using rt::pubsub::EnvelopeError;
using rt::pubsub::OutboundMessage;
using rt::pubsub::OutboundMessagePtr;
using rt::pubsub::TopicKey;

Q_DECLARE_METATYPE(rt::pubsub::OutboundMessagePtr)
Q_DECLARE_METATYPE(rt::pubsub::EnvelopeError::Code)

namespace {

const TopicKey PublicRoom("tenant-a", false, "room:1");
const TopicKey PrivateRoom("tenant-a", true, "room:1");

QByteArray binaryPayload()
{
    QByteArray bytes;
    for (int i = 0; i < 256; ++i) {
        bytes.append(static_cast<char>(i)); // every byte value, NULs included
    }
    return bytes;
}

DeliveryCounting someCounting(bool shutsDown)
{
    rt::limits::RateCounterOptions options;
    return DeliveryCounting{ std::make_shared<rt::limits::RateCounter>(options, 0), shutsDown,
                             nullptr };
}

QByteArray validEnvelope()
{
    return encodeEnvelope(*OutboundMessage::userBroadcast(PrivateRoom, "ev", "{\"a\":1}", true,
                                                          "{\"id\":\"x\"}"))
            .value();
}

} // namespace

class ClusterEnvelopeTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void wireFormatIsStable();
    void roundTripGivesTheSameFrames_data();
    void roundTripGivesTheSameFrames();
    void nodeLocalFieldsDoNotTravel();
    void countsAsBroadcastFollowsTheSendersCounting();
    void membersMessagesAreNotForwardable();
    void everyTruncationIsAnError();
    void headerErrors_data();
    void headerErrors();
    void trailingBytesAreAnError();
    void emptyTenantIsAnError();
    void impossibleCombinationsAreErrors();
    void hostileLengthDoesNotAllocate();
    void numberedEnvelopeCarriesPositionAndSender();
    void senderIsExcludedOnlyOnItsOwnNode();
    void homeCopyNamesTheRemoteSender();
    void forwardIdComesBackToTheSender();
    void nonCanonicalVersionTwoIsAnError_data();
    void nonCanonicalVersionTwoIsAnError();
};

void ClusterEnvelopeTest::wireFormatIsStable()
{
    // Nodes of different builds must understand each other: the layout is spelled out here
    // (and in the fuzz corpus, tests/fuzz/cluster_envelope/corpus/envelope-private-metadata.bin).
    const auto message =
            OutboundMessage::userBroadcast(PrivateRoom, "shout", R"({"a":[1,2,3]})", true,
                                           R"({"id":"0b1c"})", 7, someCounting(true));
    const auto field = [](const QByteArray &value) -> QByteArray {
        return QByteArray(3, '\0') + static_cast<char>(value.size()) + value;
    };
    const QByteArray expected = QByteArray("\x01\x01\x07\x00", 4) + field("tenant-a")
            + field("room:1") + field("shout") + field(R"({"id":"0b1c"})")
            + field(R"({"a":[1,2,3]})");
    QCOMPARE(encodeEnvelope(*message).value(), expected);
}

void ClusterEnvelopeTest::roundTripGivesTheSameFrames_data()
{
    QTest::addColumn<OutboundMessagePtr>("message");
    QTest::newRow("json user broadcast, public")
            << OutboundMessage::userBroadcast(PublicRoom, "shout", "{\"text\":\"hi\"}", true, {});
    QTest::newRow("json user broadcast, private, metadata") << OutboundMessage::userBroadcast(
            PrivateRoom, "shout", "{\"text\":\"hi\"}", true, "{\"id\":\"0b1c\"}");
    QTest::newRow("binary user broadcast")
            << OutboundMessage::userBroadcast(PublicRoom, "blob", binaryPayload(), false, {});
    QTest::newRow("binary user broadcast, private") << OutboundMessage::userBroadcast(
            PrivateRoom, "blob", binaryPayload(), false, "{\"id\":\"m\"}");
    QTest::newRow("empty payload")
            << OutboundMessage::userBroadcast(PublicRoom, "e", {}, false, {});
    QTest::newRow("text broadcast push") << OutboundMessage::push(
            PublicRoom, "broadcast",
            R"({"type":"broadcast","event":"msg","payload":{"text":"héllo"}})",
            Audience::BroadcastReaders);
    QTest::newRow("presence diff, private") << OutboundMessage::push(
            PrivateRoom, "presence_diff", R"({"joins":{},"leaves":{}})", Audience::PresenceReaders);
    QTest::newRow("everyone") << OutboundMessage::push(PublicRoom, "system", R"({"message":"x"})",
                                                       Audience::Everyone);
}

void ClusterEnvelopeTest::roundTripGivesTheSameFrames()
{
    QFETCH(OutboundMessagePtr, message);
    const auto bytes = encodeEnvelope(*message);
    QVERIFY(bytes.ok());
    const auto decoded = decodeEnvelope(*bytes);
    QVERIFY2(decoded.ok(), qPrintable(decoded.ok() ? QString() : decoded.error().message));
    QCOMPARE(decoded->topic, message->topic());
    QCOMPARE(decoded->topic.isPrivate(), message->topic().isPrivate());
    QCOMPARE(decoded->event, message->event());
    QCOMPARE(decoded->payload, message->payload());
    QCOMPARE(decoded->payloadIsJson, message->payloadIsJson());
    QCOMPARE(decoded->metadata, message->metadata());
    QCOMPARE(decoded->audience, message->audience());

    const OutboundMessagePtr rebuilt = decoded->toMessage({});
    QCOMPARE(rebuilt->isUserBroadcast(), message->isUserBroadcast());
    QCOMPARE(rebuilt->audience(), message->audience());
    QCOMPARE(rebuilt->metadataId(), message->metadataId());
    for (const Vsn vsn : { Vsn::V1, Vsn::V2 }) {
        const OutboundMessage::Frame &original = message->frameFor(vsn);
        const OutboundMessage::Frame &copy = rebuilt->frameFor(vsn);
        QCOMPARE(copy.bytes, original.bytes);
        QCOMPARE(copy.isBinary, original.isBinary);
        QCOMPARE(copy.wire, original.wire);
    }
    // Encoding is deterministic: the rebuilt message has the same envelope.
    QCOMPARE(encodeEnvelope(*rebuilt).value(), bytes.value());
}

void ClusterEnvelopeTest::nodeLocalFieldsDoNotTravel()
{
    const auto message = OutboundMessage::push(PublicRoom, "broadcast", "{}",
                                               Audience::BroadcastReaders, 42, someCounting(true));
    const auto decoded = decodeEnvelope(encodeEnvelope(*message).value());
    QVERIFY(decoded.ok());
    const OutboundMessagePtr rebuilt = decoded->toMessage({});
    QCOMPARE(rebuilt->excludedMember(), quint64(0));
    QVERIFY(!rebuilt->counting().counter);

    // The receiver's own counting is attached.
    const DeliveryCounting mine = someCounting(true);
    const OutboundMessagePtr counted = decoded->toMessage(mine);
    QCOMPARE(counted->counting().counter.get(), mine.counter.get());
    QVERIFY(counted->counting().shutsDownReceivers);
}

void ClusterEnvelopeTest::countsAsBroadcastFollowsTheSendersCounting()
{
    const auto broadcast =
            OutboundMessage::userBroadcast(PublicRoom, "e", "{}", true, {}, 0, someCounting(true));
    const auto database =
            OutboundMessage::userBroadcast(PublicRoom, "e", "{}", true, {}, 0, someCounting(false));
    const auto uncounted =
            OutboundMessage::push(PublicRoom, "presence_diff", "{}", Audience::PresenceReaders);
    QVERIFY(decodeEnvelope(encodeEnvelope(*broadcast).value())->countsAsBroadcast);
    QVERIFY(!decodeEnvelope(encodeEnvelope(*database).value())->countsAsBroadcast);
    QVERIFY(!decodeEnvelope(encodeEnvelope(*uncounted).value())->countsAsBroadcast);
}

void ClusterEnvelopeTest::membersMessagesAreNotForwardable()
{
    const auto message = OutboundMessage::pushTo(PublicRoom, "postgres_changes", "{}", { 1, 2 });
    const auto bytes = encodeEnvelope(*message);
    QVERIFY(!bytes.ok());
    QCOMPARE(bytes.error().code, EnvelopeError::Code::NotForwardable);
}

void ClusterEnvelopeTest::everyTruncationIsAnError()
{
    const QByteArray bytes = validEnvelope();
    for (qsizetype size = 0; size < bytes.size(); ++size) {
        const auto decoded = decodeEnvelope(QByteArrayView(bytes).first(size));
        QVERIFY2(!decoded.ok(), qPrintable(QStringLiteral("prefix of %1 bytes decoded").arg(size)));
        QCOMPARE(decoded.error().code, EnvelopeError::Code::Truncated);
        QVERIFY(!decoded.error().message.isEmpty());
    }
    QVERIFY(decodeEnvelope(bytes).ok());
}

void ClusterEnvelopeTest::headerErrors_data()
{
    QTest::addColumn<int>("offset");
    QTest::addColumn<int>("value");
    QTest::addColumn<EnvelopeError::Code>("code");
    QTest::newRow("version 0") << 0 << 0 << EnvelopeError::Code::UnsupportedVersion;
    QTest::newRow("version 3") << 0 << 3 << EnvelopeError::Code::UnsupportedVersion;
    QTest::newRow("kind 2") << 1 << 2 << EnvelopeError::Code::BadKind;
    QTest::newRow("kind 255") << 1 << 255 << EnvelopeError::Code::BadKind;
    QTest::newRow("flag 0x08") << 2 << 0x0b << EnvelopeError::Code::BadFlags;
    QTest::newRow("flag 0x80") << 2 << 0x83 << EnvelopeError::Code::BadFlags;
    QTest::newRow("audience 3 (members)") << 3 << 3 << EnvelopeError::Code::BadAudience;
    QTest::newRow("audience 200") << 3 << 200 << EnvelopeError::Code::BadAudience;
}

void ClusterEnvelopeTest::headerErrors()
{
    QFETCH(int, offset);
    QFETCH(int, value);
    QFETCH(EnvelopeError::Code, code);
    QByteArray bytes = validEnvelope();
    bytes[offset] = static_cast<char>(value);
    const auto decoded = decodeEnvelope(bytes);
    QVERIFY(!decoded.ok());
    QCOMPARE(decoded.error().code, code);
}

void ClusterEnvelopeTest::trailingBytesAreAnError()
{
    const auto decoded = decodeEnvelope(QByteArray(validEnvelope() + QByteArray(1, '\0')));
    QVERIFY(!decoded.ok());
    QCOMPARE(decoded.error().code, EnvelopeError::Code::TrailingBytes);
}

void ClusterEnvelopeTest::emptyTenantIsAnError()
{
    ClusterEnvelope envelope;
    envelope.topic = TopicKey(QByteArray(), false, "room");
    envelope.event = "broadcast";
    envelope.payload = "{}";
    const auto decoded = decodeEnvelope(encodeEnvelope(envelope));
    QVERIFY(!decoded.ok());
    QCOMPARE(decoded.error().code, EnvelopeError::Code::EmptyTenant);
}

void ClusterEnvelopeTest::impossibleCombinationsAreErrors()
{
    ClusterEnvelope presenceBroadcast;
    presenceBroadcast.kind = ClusterEnvelope::Kind::UserBroadcast;
    presenceBroadcast.topic = PublicRoom;
    presenceBroadcast.audience = Audience::PresenceReaders;
    auto decoded = decodeEnvelope(encodeEnvelope(presenceBroadcast));
    QVERIFY(!decoded.ok());
    QCOMPARE(decoded.error().code, EnvelopeError::Code::Inconsistent);

    ClusterEnvelope rawPush;
    rawPush.topic = PublicRoom;
    rawPush.payloadIsJson = false;
    decoded = decodeEnvelope(encodeEnvelope(rawPush));
    QVERIFY(!decoded.ok());
    QCOMPARE(decoded.error().code, EnvelopeError::Code::Inconsistent);

    ClusterEnvelope pushWithMetadata;
    pushWithMetadata.topic = PublicRoom;
    pushWithMetadata.metadata = "{}";
    decoded = decodeEnvelope(encodeEnvelope(pushWithMetadata));
    QVERIFY(!decoded.ok());
    QCOMPARE(decoded.error().code, EnvelopeError::Code::Inconsistent);
}

void ClusterEnvelopeTest::hostileLengthDoesNotAllocate()
{
    // Header, then a tenant length of 4 GiB - 1 with 3 bytes behind it.
    QByteArray bytes("\x01\x00\x02\x00\xff\xff\xff\xff"
                     "abc",
                     11);
    const auto decoded = decodeEnvelope(bytes);
    QVERIFY(!decoded.ok());
    QCOMPARE(decoded.error().code, EnvelopeError::Code::Truncated);
}

void ClusterEnvelopeTest::numberedEnvelopeCarriesPositionAndSender()
{
    const rt::pubsub::StreamPosition position{ 0xabcdef0123456789ULL, 42, 40 };
    const auto numbered = OutboundMessage::withPosition(
            *OutboundMessage::userBroadcast(PublicRoom, "e", "{}", true, {}), position);
    const QByteArray bytes = encodeEnvelope(*numbered).value();
    QCOMPARE(bytes.at(0), '\x02'); // version 2: a position
    // version 2's fields after the payload: u64 epoch, u64 offset, u64 previous, bytes sender,
    // u64 member, u64 forward id
    QCOMPARE(bytes.right(44),
             QByteArray::fromHex("abcdef0123456789"
                                 "000000000000002a"
                                 "0000000000000028"
                                 "00000000"
                                 "0000000000000000"
                                 "0000000000000000"));
    const auto decoded = decodeEnvelope(bytes);
    QVERIFY(decoded.ok());
    QCOMPARE(decoded->position, position);
    QCOMPARE(decoded->position.previous, quint64{ 40 });
    const OutboundMessagePtr rebuilt = decoded->toMessage({}, QStringLiteral("node-b"));
    QCOMPARE(rebuilt->position(), position);
    // meta already says so: the rebuilt frames are the numbered message's own.
    QCOMPARE(rebuilt->frameFor(Vsn::V2).bytes, numbered->frameFor(Vsn::V2).bytes);
    QCOMPARE(rebuilt->frameFor(Vsn::V1).bytes, numbered->frameFor(Vsn::V1).bytes);
    // Unnumbered, without sender: still version 1 (nodes of the previous release read it).
    QCOMPARE(encodeEnvelope(*OutboundMessage::userBroadcast(PublicRoom, "e", "{}", true, {}, 7))
                     .value()
                     .at(0),
             '\x01');
}

void ClusterEnvelopeTest::senderIsExcludedOnlyOnItsOwnNode()
{
    // Sent to the home to be numbered: the sender's node names itself and the member.
    const auto message = OutboundMessage::push(PublicRoom, "broadcast", "{}",
                                               Audience::BroadcastReaders, 42, someCounting(true));
    const auto decoded = decodeEnvelope(encodeEnvelope(*message, QStringLiteral("node-a")).value());
    QVERIFY(decoded.ok());
    QCOMPARE(decoded->senderNode, QStringLiteral("node-a"));
    QCOMPARE(decoded->senderMember, quint64(42));
    QCOMPARE(decoded->toMessage({}, QStringLiteral("node-a"))->excludedMember(), quint64(42));
    const OutboundMessagePtr elsewhere = decoded->toMessage({}, QStringLiteral("node-b"));
    QCOMPARE(elsewhere->excludedMember(), quint64(0));
    QCOMPARE(elsewhere->remoteSenderNode(), QStringLiteral("node-a"));
}

void ClusterEnvelopeTest::homeCopyNamesTheRemoteSender()
{
    // The home received node-a's broadcast, numbered it and publishes it: its envelope to the
    // other nodes still names node-a's member, whatever node the home is.
    const auto sent =
            decodeEnvelope(encodeEnvelope(*OutboundMessage::push(PublicRoom, "broadcast", "{}",
                                                                 Audience::BroadcastReaders, 42),
                                          QStringLiteral("node-a"))
                                   .value());
    const OutboundMessagePtr atHome = OutboundMessage::withPosition(
            *sent->toMessage({}, QStringLiteral("home")), rt::pubsub::StreamPosition{ 5, 1 });
    QCOMPARE(atHome->excludedMember(), quint64(0));
    const auto onward = decodeEnvelope(encodeEnvelope(*atHome, QStringLiteral("home")).value());
    QVERIFY(onward.ok());
    QCOMPARE(onward->senderNode, QStringLiteral("node-a"));
    QCOMPARE(onward->senderMember, quint64(42));
    QCOMPARE(onward->position, (rt::pubsub::StreamPosition{ 5, 1 }));
    QCOMPARE(onward->toMessage({}, QStringLiteral("node-a"))->excludedMember(), quint64(42));
}

void ClusterEnvelopeTest::forwardIdComesBackToTheSender()
{
    // node-a numbers its forward 9; the home's numbered copy carries 9 back to node-a.
    auto sent = rt::pubsub::envelopeOf(
            *OutboundMessage::push(PublicRoom, "broadcast", "{}", Audience::BroadcastReaders, 42),
            QStringLiteral("node-a"));
    QVERIFY(sent.ok());
    sent->forwardId = 9;
    const auto atHomeEnvelope = decodeEnvelope(encodeEnvelope(*sent));
    QVERIFY(atHomeEnvelope.ok());
    QCOMPARE(atHomeEnvelope->forwardId, quint64{ 9 });
    const OutboundMessagePtr atHome =
            OutboundMessage::withPosition(*atHomeEnvelope->toMessage({}, QStringLiteral("home")),
                                          rt::pubsub::StreamPosition{ 5, 1 });
    const auto onward = decodeEnvelope(encodeEnvelope(*atHome, QStringLiteral("home")).value());
    QVERIFY(onward.ok());
    QCOMPARE(onward->forwardId, quint64{ 9 });
    QCOMPARE(onward->senderNode, QStringLiteral("node-a"));
}

void ClusterEnvelopeTest::nonCanonicalVersionTwoIsAnError_data()
{
    QTest::addColumn<QByteArray>("trailer");
    const auto u64 = [](quint64 v) {
        QByteArray b(8, '\0');
        for (int i = 7; i >= 0; --i, v >>= 8) {
            b[i] = static_cast<char>(v & 0xff);
        }
        return b;
    };
    const QByteArray noSender = QByteArray(4, '\0');
    const QByteArray none = u64(0);
    QTest::newRow("nothing version 1 could not say")
            << u64(0) + u64(0) + u64(0) + noSender + u64(0) + none;
    QTest::newRow("offset without epoch") << u64(0) + u64(3) + u64(0) + noSender + u64(0) + none;
    QTest::newRow("epoch without offset") << u64(9) + u64(0) + u64(0) + noSender + u64(0) + none;
    QTest::newRow("previous not before offset")
            << u64(9) + u64(4) + u64(4) + noSender + u64(0) + none;
    QTest::newRow("member without node") << u64(9) + u64(1) + u64(0) + noSender + u64(5) + none;
    QTest::newRow("forward without node") << u64(9) + u64(1) + u64(0) + noSender + u64(0) + u64(7);
    QTest::newRow("sender not UTF-8")
            << u64(9) + u64(1) + u64(0) + QByteArray("\0\0\0\x02\xff\xfe", 6) + u64(5) + none;
}

void ClusterEnvelopeTest::nonCanonicalVersionTwoIsAnError()
{
    QFETCH(QByteArray, trailer);
    QByteArray bytes = validEnvelope();
    bytes[0] = '\x02';
    const auto decoded = decodeEnvelope(QByteArray(bytes + trailer));
    QVERIFY(!decoded.ok());
    QCOMPARE(decoded.error().code, EnvelopeError::Code::Inconsistent);
}

QTEST_GUILESS_MAIN(ClusterEnvelopeTest)
#include "tst_cluster_envelope.moc"
