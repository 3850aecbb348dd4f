#include "server/pubsub/outbound_message.h"
#include "server/wire/websocket_frame.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <QThread>

#include <array>
#include <atomic>
#include <memory>
#include <vector>

using rt::protocol::Vsn;
using rt::pubsub::Audience;
using rt::pubsub::OutboundMessage;
using rt::pubsub::OutboundMessagePtr;
using rt::pubsub::TopicKey;

Q_DECLARE_METATYPE(rt::protocol::Vsn)

namespace {

const TopicKey Room("tenant", false, "room1");

QByteArray bytes(std::initializer_list<int> values)
{
    QByteArray out;
    for (const int value : values) {
        out.append(static_cast<char>(value));
    }
    return out;
}

} // namespace

// Tests the shared outbound message: the exact Phoenix bytes per serializer (spec/client-protocol.md
// §2, server-protocol.md §4.2), and that each serializer's frame is encoded once and shared by
// every recipient.
class OutboundMessageTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void pushFrames_data();
    void pushFrames();
    void pushKeepsAudienceAndExcludedMember();
    void userBroadcastV2IsABinaryKind4Frame_data();
    void userBroadcastV2IsABinaryKind4Frame();
    void jsonUserBroadcastToV1IsATextBroadcast_data();
    void jsonUserBroadcastToV1IsATextBroadcast();
    void rawUserBroadcastToV1HasNoFrame();
    void userBroadcastProperties();
    void frameIsEncodedOnceAndShared_data();
    void frameIsEncodedOnceAndShared();
    void concurrentFirstUseEncodesOnce();
    void overlongFieldsGiveNoV2Frame();
    void wireFrameWrapsTheBytesOnce();
    void positionGoesIntoMeta_data();
    void positionGoesIntoMeta();
    void positionKeepsEverythingElse();
    void onlyBroadcastsAndChangesAreSequenced();
    void epochTextRoundTrips();
};

void OutboundMessageTest::pushFrames_data()
{
    QTest::addColumn<QByteArray>("event");
    QTest::addColumn<QByteArray>("payload");
    QTest::addColumn<QByteArray>("expectedV1");
    QTest::addColumn<QByteArray>("expectedV2");

    QTest::newRow("presence_diff")
            << QByteArray("presence_diff") << QByteArray(R"({"joins":{},"leaves":{}})")
            << QByteArray(R"({"topic":"realtime:room1","event":"presence_diff",)"
                          R"("payload":{"joins":{},"leaves":{}},"ref":null})")
            << QByteArray(R"([null,null,"realtime:room1","presence_diff",)"
                          R"({"joins":{},"leaves":{}}])");
    QTest::newRow("text broadcast")
            << QByteArray("broadcast")
            << QByteArray(R"({"type":"broadcast","event":"msg","payload":{"text":"hi"}})")
            << QByteArray(R"({"topic":"realtime:room1","event":"broadcast","payload":)"
                          R"({"type":"broadcast","event":"msg","payload":{"text":"hi"}},)"
                          R"("ref":null})")
            << QByteArray(R"([null,null,"realtime:room1","broadcast",)"
                          R"({"type":"broadcast","event":"msg","payload":{"text":"hi"}}])");
}

void OutboundMessageTest::pushFrames()
{
    QFETCH(QByteArray, event);
    QFETCH(QByteArray, payload);
    QFETCH(QByteArray, expectedV1);
    QFETCH(QByteArray, expectedV2);

    const OutboundMessagePtr message =
            OutboundMessage::push(Room, event, payload, Audience::Everyone);
    QCOMPARE(message->frameFor(Vsn::V1).bytes, expectedV1);
    QCOMPARE(message->frameFor(Vsn::V1).isBinary, false);
    QCOMPARE(message->frameFor(Vsn::V2).bytes, expectedV2);
    QCOMPARE(message->frameFor(Vsn::V2).isBinary, false);
    QVERIFY(!message->isUserBroadcast());
}

void OutboundMessageTest::pushKeepsAudienceAndExcludedMember()
{
    const OutboundMessagePtr message = OutboundMessage::push(
            TopicKey("t", true, "secret"), "broadcast", "{}", Audience::BroadcastReaders, 42);
    QCOMPARE(message->audience(), Audience::BroadcastReaders);
    QCOMPARE(message->excludedMember(), quint64(42));
    QCOMPARE(message->topic(), TopicKey("t", true, "secret"));
    // The private namespace is internal: clients see the plain channel topic.
    QCOMPARE(message->frameFor(Vsn::V2).bytes,
             QByteArray(R"([null,null,"realtime:secret","broadcast",{}])"));

    const OutboundMessagePtr presence =
            OutboundMessage::push(Room, "presence_diff", "{}", Audience::PresenceReaders);
    QCOMPARE(presence->audience(), Audience::PresenceReaders);
    QCOMPARE(presence->excludedMember(), quint64(0));
}

void OutboundMessageTest::userBroadcastV2IsABinaryKind4Frame_data()
{
    QTest::addColumn<QByteArray>("payload");
    QTest::addColumn<bool>("isJson");
    QTest::addColumn<QByteArray>("metadata");
    QTest::addColumn<QByteArray>("expected");

    // The recorded frame of spec/client-protocol.md §2.2.
    QTest::newRow("json with metadata") << QByteArray(R"({"text":"from-server-binary-json"})")
                                        << true << QByteArray(R"({"id":"m-1","replayed":true})")
                                        << QByteArray(bytes({ 4, 14, 3, 28, 1 }) + "realtime:room1"
                                                      + "msg" + R"({"id":"m-1","replayed":true})"
                                                      + R"({"text":"from-server-binary-json"})");
    QTest::newRow("json without metadata")
            << QByteArray(R"({"a":1})") << true << QByteArray()
            << QByteArray(bytes({ 4, 14, 3, 0, 1 }) + "realtime:room1" + "msg" + R"({"a":1})");
    QTest::newRow("raw bytes") << bytes({ 1, 2, 3, 0, 255 }) << false << QByteArray()
                               << QByteArray(bytes({ 4, 14, 3, 0, 0 }) + "realtime:room1" + "msg"
                                             + bytes({ 1, 2, 3, 0, 255 }));
}

void OutboundMessageTest::userBroadcastV2IsABinaryKind4Frame()
{
    QFETCH(QByteArray, payload);
    QFETCH(bool, isJson);
    QFETCH(QByteArray, metadata);
    QFETCH(QByteArray, expected);

    const OutboundMessagePtr message =
            OutboundMessage::userBroadcast(Room, "msg", payload, isJson, metadata);
    const OutboundMessage::Frame &frame = message->frameFor(Vsn::V2);
    QCOMPARE(frame.bytes.toHex(' '), expected.toHex(' '));
    QVERIFY(frame.isBinary);
}

void OutboundMessageTest::jsonUserBroadcastToV1IsATextBroadcast_data()
{
    QTest::addColumn<QByteArray>("metadata");
    QTest::addColumn<QByteArray>("expected");

    QTest::newRow("no metadata")
            << QByteArray()
            << QByteArray(R"({"topic":"realtime:room1","event":"broadcast","payload":)"
                          R"({"event":"msg","payload":{"text":"hi"},"type":"broadcast"},)"
                          R"("ref":null})");
    // Database broadcasts carry meta.id (spec/server-protocol.md §4.6).
    QTest::newRow("metadata")
            << QByteArray(R"({"id":"m-1"})")
            << QByteArray(R"({"topic":"realtime:room1","event":"broadcast","payload":)"
                          R"({"event":"msg","meta":{"id":"m-1"},"payload":{"text":"hi"},)"
                          R"("type":"broadcast"},"ref":null})");
}

void OutboundMessageTest::jsonUserBroadcastToV1IsATextBroadcast()
{
    QFETCH(QByteArray, metadata);
    QFETCH(QByteArray, expected);

    const OutboundMessagePtr message =
            OutboundMessage::userBroadcast(Room, "msg", R"({"text":"hi"})", true, metadata);
    const OutboundMessage::Frame &frame = message->frameFor(Vsn::V1);
    QCOMPARE(frame.bytes, expected);
    QCOMPARE(frame.isBinary, false);
    QVERIFY(QJsonDocument::fromJson(frame.bytes).isObject());
}

void OutboundMessageTest::rawUserBroadcastToV1HasNoFrame()
{
    const OutboundMessagePtr message =
            OutboundMessage::userBroadcast(Room, "bin", bytes({ 1, 2, 3 }), false, {});
    // V1 sockets cannot take binary frames and raw payloads have no JSON form (spec §4.2).
    QVERIFY(message->frameFor(Vsn::V1).bytes.isEmpty());
    // The V2 frame still exists.
    QVERIFY(!message->frameFor(Vsn::V2).bytes.isEmpty());
}

void OutboundMessageTest::userBroadcastProperties()
{
    const OutboundMessagePtr message =
            OutboundMessage::userBroadcast(Room, "msg", R"({"k":"v"})", true, {}, 9);
    QVERIFY(message->isUserBroadcast());
    QCOMPARE(message->audience(), Audience::BroadcastReaders);
    QCOMPARE(message->excludedMember(), quint64(9));
    QCOMPARE(message->payloadBytes(), qsizetype(9));
    QCOMPARE(message->topic(), Room);
}

void OutboundMessageTest::frameIsEncodedOnceAndShared_data()
{
    QTest::addColumn<bool>("userBroadcast");
    QTest::addColumn<Vsn>("vsn");

    QTest::newRow("push V1") << false << Vsn::V1;
    QTest::newRow("push V2") << false << Vsn::V2;
    QTest::newRow("user broadcast V1") << true << Vsn::V1;
    QTest::newRow("user broadcast V2") << true << Vsn::V2;
}

void OutboundMessageTest::frameIsEncodedOnceAndShared()
{
    QFETCH(bool, userBroadcast);
    QFETCH(Vsn, vsn);

    const OutboundMessagePtr message = userBroadcast
            ? OutboundMessage::userBroadcast(Room, "msg", R"({"a":1})", true, {})
            : OutboundMessage::push(Room, "broadcast", R"({"a":1})", Audience::Everyone);
    const OutboundMessage::Frame &first = message->frameFor(vsn);
    QVERIFY(!first.bytes.isEmpty());
    // Recipients copy the frame's QByteArray into their send queue: every copy shares the one
    // encoded buffer.
    std::vector<QByteArray> queued;
    for (int i = 0; i < 100; ++i) {
        const OutboundMessage::Frame &again = message->frameFor(vsn);
        QCOMPARE(&again, &first);
        queued.push_back(again.bytes);
    }
    for (const QByteArray &copy : queued) {
        QCOMPARE(copy.constData(), first.bytes.constData());
    }
}

void OutboundMessageTest::concurrentFirstUseEncodesOnce()
{
    // Workers ask for the same frame at the same time; all must get one and the same buffer.
    constexpr int Threads = 8;
    constexpr int Rounds = 50;
    for (int round = 0; round < Rounds; ++round) {
        const OutboundMessagePtr message =
                OutboundMessage::userBroadcast(Room, "msg", R"({"n":1})", true, {});
        std::array<const char *, Threads> seen{};
        std::atomic<int> ready{ 0 };
        std::vector<std::unique_ptr<QThread>> threads;
        for (int i = 0; i < Threads; ++i) {
            threads.emplace_back(QThread::create([&, i] {
                ready.fetch_add(1);
                while (ready.load() < Threads) {
                    QThread::yieldCurrentThread();
                }
                const QByteArray copy = message->frameFor(i % 2 == 0 ? Vsn::V1 : Vsn::V2).bytes;
                seen[static_cast<std::size_t>(i)] = copy.constData();
            }));
            threads.back()->start();
        }
        for (const auto &thread : threads) {
            QVERIFY(thread->wait(10000));
        }
        for (int i = 0; i < Threads; ++i) {
            const Vsn vsn = i % 2 == 0 ? Vsn::V1 : Vsn::V2;
            QCOMPARE(seen[static_cast<std::size_t>(i)], message->frameFor(vsn).bytes.constData());
        }
    }
}

void OutboundMessageTest::overlongFieldsGiveNoV2Frame()
{
    // Topic, event and metadata are bounded to 255 bytes on entry; a longer one must never
    // produce a malformed kind-4 header.
    const TopicKey longTopic("t", false, QByteArray(300, 'x'));
    const OutboundMessagePtr message =
            OutboundMessage::userBroadcast(longTopic, "msg", R"({"a":1})", true, {});
    QVERIFY(message->frameFor(Vsn::V2).bytes.isEmpty());
}

void OutboundMessageTest::wireFrameWrapsTheBytesOnce()
{
    // The complete WebSocket frame is built once beside the Phoenix bytes: text opcode for
    // pushes, binary for kind 4, and the same shared buffer on every call.
    const auto push =
            OutboundMessage::push(TopicKey("t", false, "room"), "broadcast",
                                  "{\"type\":\"broadcast\",\"event\":\"e\",\"payload\":{}}",
                                  rt::pubsub::Audience::BroadcastReaders);
    for (const Vsn vsn : { Vsn::V1, Vsn::V2 }) {
        const OutboundMessage::Frame &frame = push->frameFor(vsn);
        QCOMPARE(frame.wire, rt::wire::encodeFrame(rt::wire::WsOpcode::Text, frame.bytes));
        QCOMPARE(push->frameFor(vsn).wire.constData(), frame.wire.constData());
    }
    const QByteArray big(70'000, 'x');
    const auto binary =
            OutboundMessage::userBroadcast(TopicKey("t", false, "room"), "bin", big, false, {});
    const OutboundMessage::Frame &v2 = binary->frameFor(Vsn::V2);
    QCOMPARE(v2.wire, rt::wire::encodeFrame(rt::wire::WsOpcode::Binary, v2.bytes));
    QCOMPARE(static_cast<quint8>(v2.wire.at(0)), quint8(0x82)); // FIN + binary
    QCOMPARE(static_cast<quint8>(v2.wire.at(1)), quint8(127)); // 64-bit length for > 65535
    // No frame at all where there are no bytes (raw binary to V1).
    QVERIFY(binary->frameFor(Vsn::V1).wire.isEmpty());
}

namespace {
const rt::pubsub::StreamPosition Position{ 0xabcdef0123456789ULL, 42 };
const QByteArray PositionMembers = R"("epoch":"abcdef0123456789","offset":42)";
} // namespace

void OutboundMessageTest::positionGoesIntoMeta_data()
{
    QTest::addColumn<QByteArray>("payload");
    QTest::addColumn<QByteArray>("expected");
    // Byte-preserving: the client's bytes stay as they were, the position is added.
    QTest::newRow("no meta") << QByteArray(R"({"type":"broadcast","event":"e","payload":{"a":1}})")
                             << R"({"type":"broadcast","event":"e","payload":{"a":1},"meta":{)"
                    + PositionMembers + "}}";
    QTest::newRow("empty object") << QByteArray("{}") << "{\"meta\":{" + PositionMembers + "}}";
    QTest::newRow("trailing blanks")
            << QByteArray("{\"a\":1}  ") << "{\"a\":1,\"meta\":{" + PositionMembers + "}}  ";
    QTest::newRow("meta object merged")
            << QByteArray(R"({"meta":{"id":"x"},"payload":{"meta":1}})")
            << R"({"meta":{"id":"x",)" + PositionMembers + R"(},"payload":{"meta":1}})";
    // A sender's own position members are replaced, never duplicated.
    QTest::newRow("sender's epoch and offset replaced")
            << QByteArray(R"({"meta":{"epoch":"x","a":1,"offset":99},"p":2})")
            << R"({"meta":{"a":1,)" + PositionMembers + R"(},"p":2})";
    QTest::newRow("empty meta object")
            << QByteArray(R"({"meta":{}})") << "{\"meta\":{" + PositionMembers + "}}";
    QTest::newRow("meta not an object replaced") << QByteArray(R"({"meta":"text","x":2})")
                                                 << "{\"meta\":{" + PositionMembers + "},\"x\":2}";
    QTest::newRow("escaped key is the same key")
            << QByteArray(R"({"me\u0074a":[1]})") << "{\"me\\u0074a\":{" + PositionMembers + "}}";
    QTest::newRow("meta only nested")
            << QByteArray(R"({"payload":{"meta":{"k":1}}})")
            << R"({"payload":{"meta":{"k":1}},"meta":{)" + PositionMembers + "}}";
    // Large integers are copied as text, never through a double.
    QTest::newRow("big integer kept")
            << QByteArray(R"({"meta":{},"n":9007199254740993})")
            << "{\"meta\":{" + PositionMembers + "},\"n\":9007199254740993}";
}

void OutboundMessageTest::positionGoesIntoMeta()
{
    QFETCH(QByteArray, payload);
    QFETCH(QByteArray, expected);
    const OutboundMessagePtr text =
            OutboundMessage::push(Room, "broadcast", payload, Audience::BroadcastReaders);
    const OutboundMessagePtr numbered = OutboundMessage::withPosition(*text, Position);
    QCOMPARE(numbered->payload(), expected);
    QVERIFY(QJsonDocument::fromJson(numbered->payload()).isObject());
    QCOMPARE(numbered->position(), Position);
    QVERIFY(!text->position().isSet());
}

void OutboundMessageTest::positionKeepsEverythingElse()
{
    const OutboundMessagePtr plain =
            OutboundMessage::userBroadcast(Room, "evt", "{\"v\":1}", true, QByteArray(), 7);
    const OutboundMessagePtr numbered = OutboundMessage::withPosition(*plain, Position);
    QCOMPARE(numbered->metadata(), "{" + PositionMembers + "}");
    QCOMPARE(numbered->payload(), QByteArray("{\"v\":1}"));
    QCOMPARE(numbered->event(), QByteArray("evt"));
    QCOMPARE(numbered->excludedMember(), quint64{ 7 });
    QVERIFY(numbered->isUserBroadcast());
    // What realtime-js hands the callback as `meta`.
    const QJsonObject meta = QJsonDocument::fromJson(numbered->metadata()).object();
    QCOMPARE(meta.value(QLatin1String("epoch")).toString(), QStringLiteral("abcdef0123456789"));
    QCOMPARE(meta.value(QLatin1String("offset")).toInt(), 42);

    const OutboundMessagePtr database =
            OutboundMessage::userBroadcast(Room, "evt", "{}", true, R"({"id":"7f0c"})");
    QCOMPARE(OutboundMessage::withPosition(*database, Position)->metadata(),
             R"({"id":"7f0c",)" + PositionMembers + "}");
    QCOMPARE(OutboundMessage::withPosition(*database, Position)->metadataId(), QByteArray("7f0c"));

    const OutboundMessagePtr change = OutboundMessage::pushTo(
            Room, "postgres_changes", R"({"ids":[3],"data":{"meta":"column"}})", { 1, 5 });
    const OutboundMessagePtr numberedChange = OutboundMessage::withPosition(*change, Position);
    QCOMPARE(numberedChange->payload(),
             R"({"ids":[3],"data":{"meta":"column"},"meta":{)" + PositionMembers + "}}");
    QCOMPARE(numberedChange->members(), (std::vector<quint64>{ 1, 5 }));
    QCOMPARE(numberedChange->audience(), Audience::Members);
}

void OutboundMessageTest::onlyBroadcastsAndChangesAreSequenced()
{
    QVERIFY(OutboundMessage::userBroadcast(Room, "e", "{}", true, {})->isSequenced());
    QVERIFY(OutboundMessage::push(Room, "broadcast", "{}", Audience::BroadcastReaders)
                    ->isSequenced());
    QVERIFY(OutboundMessage::pushTo(Room, "postgres_changes", "{}", { 1 })->isSequenced());
    QVERIFY(!OutboundMessage::push(Room, "presence_diff", "{}", Audience::PresenceReaders)
                     ->isSequenced());
    QVERIFY(!OutboundMessage::pushTo(Room, "INSERT", "{}", { 1 })->isSequenced()); // legacy
    QVERIFY(!OutboundMessage::push(Room, "system", "{}", Audience::Everyone)->isSequenced());
}

void OutboundMessageTest::epochTextRoundTrips()
{
    const rt::pubsub::StreamPosition small{ 0x1f, 1 };
    QCOMPARE(small.epochText(), QByteArray("000000000000001f"));
    QCOMPARE(rt::pubsub::StreamPosition::parseEpoch(QStringLiteral("000000000000001f")),
             std::optional<quint64>(0x1f));
    QCOMPARE(rt::pubsub::StreamPosition::parseEpoch(QString::fromLatin1(Position.epochText())),
             std::optional<quint64>(Position.epoch));
    for (const char *bad : { "", "1f", "000000000000000g", "0000000000000000", "x000000000000001f",
                             "-00000000000001f", "+00000000000001f", " 00000000000001f" }) {
        QVERIFY2(!rt::pubsub::StreamPosition::parseEpoch(QString::fromLatin1(bad)), bad);
    }
}

QTEST_GUILESS_MAIN(OutboundMessageTest)
#include "tst_outbound_message.moc"
