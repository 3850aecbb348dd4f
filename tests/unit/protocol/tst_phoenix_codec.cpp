#include "shared/protocol/json_scan.h"
#include "shared/protocol/phoenix_codec.h"

#include <QTest>

#include <initializer_list>

using namespace rt::protocol;

namespace {

// Builds a binary frame from header bytes followed by the given parts, like the hex dumps of
// spec/client-protocol.md §2.
QByteArray binaryFrame(std::initializer_list<int> header,
                       std::initializer_list<QByteArrayView> parts)
{
    QByteArray frame;
    for (const int byte : header)
        frame += static_cast<char>(byte);
    for (const QByteArrayView part : parts)
        frame += part;
    return frame;
}

Vsn vsnOf(int number)
{
    return number == 2 ? Vsn::V2 : Vsn::V1;
}

// Recorded frames (spec/client-protocol.md §2.1, §2.2, §5).
const QByteArray RecordedJoinPayload =
        R"({"config":{"broadcast":{"self":true,"ack":true},)"
        R"("presence":{"key":"user-1","enabled":true},)"
        R"("postgres_changes":[{"event":"INSERT","schema":"public",)"
        R"("table":"messages"},{"event":"*","schema":"public",)"
        R"("table":"todos","filter":"id=eq.1"}],"private":false},)"
        R"("access_token":"jwt-token-A","version":"realtime-js/2.119.1"})";
const QByteArray RecordedJoinResponse =
        R"({"postgres_changes":[{"event":"INSERT","schema":"public",)"
        R"("table":"messages","id":1000},{"event":"*",)"
        R"("schema":"public","table":"todos","filter":"id=eq.1",)"
        R"("id":1001}]})";

QByteArray recordedKind3Json()
{
    return binaryFrame({ 0x03, 0x01, 0x01, 0x0e, 0x03, 0x00, 0x01 },
                       { "6", "7", "realtime:room1", "msg", R"({"text":"hello"})" });
}

QByteArray recordedKind3Raw()
{
    return binaryFrame({ 0x03, 0x01, 0x01, 0x0e, 0x03, 0x00, 0x00 },
                       { "6", "8", "realtime:room1", "bin", "\x01\x02\x03" });
}

QByteArray recordedKind3Persist()
{
    return binaryFrame(
            { 0x03, 0x01, 0x01, 0x0d, 0x05, 0x16, 0x01 },
            { "6", "7", "realtime:priv", "saved", R"({"persist":{"ttl":60}})", R"({"v":1})" });
}

} // namespace

// Tests the Phoenix V1/V2 codec against the recorded realtime-js frames: vsn negotiation, text
// and binary decoding (including every kind of malformed frame) and byte-exact encoder output.
class PhoenixCodecTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void parseVsn_data();
    void parseVsn();
    void decodeTextV2_data();
    void decodeTextV2();
    void decodeTextV1_data();
    void decodeTextV1();
    void decodeTextMalformed_data();
    void decodeTextMalformed();
    void decodeBinary_data();
    void decodeBinary();
    void decodeBinaryMalformed_data();
    void decodeBinaryMalformed();
    void binaryPrefixesNeverReadPastTheEnd();
    void encodeReply_data();
    void encodeReply();
    void encodePush_data();
    void encodePush();
    void encodeUserBroadcast_data();
    void encodeUserBroadcast();
    void encodeUserBroadcastRejectsLongFields();
    void userBroadcastAsJsonPayload_data();
    void userBroadcastAsJsonPayload();
    void appendJsonString_data();
    void appendJsonString();
    void appendJsonStringKeepsPrefix();
    void refEcho_data();
    void refEcho();
    void kind3AckAndSelfEcho();
    void encodedPushDecodesBack_data();
    void encodedPushDecodesBack();
};

void PhoenixCodecTest::parseVsn_data()
{
    QTest::addColumn<QByteArray>("value");
    QTest::addColumn<bool>("present");
    QTest::addColumn<int>("expected"); // 1, 2, or 0 for nullopt

    QTest::newRow("absent") << QByteArray() << false << 1;
    QTest::newRow("absent ignores value") << QByteArray("garbage") << false << 1;
    QTest::newRow("1.0.0") << QByteArray("1.0.0") << true << 1;
    QTest::newRow("1.0.7") << QByteArray("1.0.7") << true << 1;
    QTest::newRow("2.0.0") << QByteArray("2.0.0") << true << 2;
    QTest::newRow("2.0.9") << QByteArray("2.0.9") << true << 2;
    QTest::newRow("2.0.10") << QByteArray("2.0.10") << true << 2;
    QTest::newRow("huge patch") << QByteArray("2.0.99999999999999999999999") << true << 2;
    QTest::newRow("build metadata") << QByteArray("2.0.0+build.7") << true << 2;
    QTest::newRow("build with dash") << QByteArray("1.0.0+a-b") << true << 1;
    // A pre-release sorts before its release: X.0.0-pre is below ">= X.0.0" ...
    QTest::newRow("2.0.0-rc1") << QByteArray("2.0.0-rc1") << true << 0;
    QTest::newRow("1.0.0-beta") << QByteArray("1.0.0-beta") << true << 0;
    QTest::newRow("2.0.0-rc1+build") << QByteArray("2.0.0-rc1+b") << true << 0;
    // ... but X.0.1-pre lies inside [X.0.0, X.1.0-0) and Phoenix matches with allow_pre: true.
    QTest::newRow("2.0.1-rc1") << QByteArray("2.0.1-rc1") << true << 2;
    QTest::newRow("1.0.3-dev.2") << QByteArray("1.0.3-dev.2") << true << 1;
    QTest::newRow("2.0.1-0a") << QByteArray("2.0.1-0a") << true << 2;
    QTest::newRow("2.0.1-rc1+b") << QByteArray("2.0.1-rc1+b") << true << 2;
    QTest::newRow("2.1.0-rc1") << QByteArray("2.1.0-rc1") << true << 0;

    QTest::newRow("2.1.0") << QByteArray("2.1.0") << true << 0;
    QTest::newRow("1.1.0") << QByteArray("1.1.0") << true << 0;
    QTest::newRow("3.0.0") << QByteArray("3.0.0") << true << 0;
    QTest::newRow("0.9.0") << QByteArray("0.9.0") << true << 0;
    QTest::newRow("empty") << QByteArray("") << true << 0;
    QTest::newRow("abc") << QByteArray("abc") << true << 0;
    QTest::newRow("two parts") << QByteArray("2.0") << true << 0;
    QTest::newRow("one part") << QByteArray("2") << true << 0;
    QTest::newRow("four parts") << QByteArray("2.0.0.0") << true << 0;
    QTest::newRow("leading zero major") << QByteArray("02.0.0") << true << 0;
    QTest::newRow("leading zero minor") << QByteArray("2.00.0") << true << 0;
    QTest::newRow("leading zero patch") << QByteArray("2.0.01") << true << 0;
    QTest::newRow("empty pre") << QByteArray("2.0.1-") << true << 0;
    QTest::newRow("empty build") << QByteArray("2.0.0+") << true << 0;
    QTest::newRow("empty pre part") << QByteArray("2.0.1-rc..1") << true << 0;
    QTest::newRow("numeric pre leading zero") << QByteArray("2.0.1-01") << true << 0;
    QTest::newRow("bad pre char") << QByteArray("2.0.1-rc_1") << true << 0;
    QTest::newRow("bad build char") << QByteArray("2.0.0+a+b") << true << 0;
    QTest::newRow("trailing space") << QByteArray("2.0.0 ") << true << 0;
    QTest::newRow("leading space") << QByteArray(" 2.0.0") << true << 0;
    QTest::newRow("v prefix") << QByteArray("v2.0.0") << true << 0;
    QTest::newRow("negative") << QByteArray("2.0.-1") << true << 0;
    QTest::newRow("empty part") << QByteArray("2..0") << true << 0;
    QTest::newRow("plus only") << QByteArray("+2.0.0") << true << 0;
    QTest::newRow("fullwidth digit") << QByteArray("\xef\xbc\x92.0.0") << true << 0;
}

void PhoenixCodecTest::parseVsn()
{
    QFETCH(QByteArray, value);
    QFETCH(bool, present);
    QFETCH(int, expected);
    const std::optional<Vsn> vsn = rt::protocol::parseVsn(value, present);
    QCOMPARE(vsn.has_value(), expected != 0);
    if (vsn)
        QCOMPARE(*vsn, vsnOf(expected));
}

void PhoenixCodecTest::decodeTextV2_data()
{
    QTest::addColumn<QByteArray>("frame");
    QTest::addColumn<QByteArray>("joinRef");
    QTest::addColumn<QByteArray>("ref");
    QTest::addColumn<QByteArray>("topic");
    QTest::addColumn<QByteArray>("event");
    QTest::addColumn<QByteArray>("payload");

    QTest::newRow("recorded join")
            << QByteArray(R"(["6","6","realtime:room1","phx_join",)" + RecordedJoinPayload + "]")
            << QByteArray(R"("6")") << QByteArray(R"("6")") << QByteArray("realtime:room1")
            << QByteArray("phx_join") << RecordedJoinPayload;
    QTest::newRow("recorded heartbeat")
            << QByteArray(R"([null,"12","phoenix","heartbeat",{}])") << QByteArray("null")
            << QByteArray(R"("12")") << QByteArray("phoenix") << QByteArray("heartbeat")
            << QByteArray("{}");
    QTest::newRow("recorded track")
            << QByteArray(
                       R"(["6","9","realtime:room1","presence",{"type":"presence","event":)"
                       R"("track","payload":{"name":"alice","online_at":"2024-05-01T12:00:00Z"}}])")
            << QByteArray(R"("6")") << QByteArray(R"("9")") << QByteArray("realtime:room1")
            << QByteArray("presence")
            << QByteArray(R"({"type":"presence","event":"track","payload":{"name":"alice",)"
                          R"("online_at":"2024-05-01T12:00:00Z"}})");
    QTest::newRow("recorded leave")
            << QByteArray(R"(["6","13","realtime:room1","phx_leave",{}])") << QByteArray(R"("6")")
            << QByteArray(R"("13")") << QByteArray("realtime:room1") << QByteArray("phx_leave")
            << QByteArray("{}");
    QTest::newRow("numeric refs stay numbers")
            << QByteArray(R"([6,7.5e1,"t","e",{}])") << QByteArray("6") << QByteArray("7.5e1")
            << QByteArray("t") << QByteArray("e") << QByteArray("{}");
    QTest::newRow("escaped ref kept raw")
            << QByteArray(R"(["\u0036","7","t","e",{}])") << QByteArray(R"("\u0036")")
            << QByteArray(R"("7")") << QByteArray("t") << QByteArray("e") << QByteArray("{}");
    QTest::newRow("boolean refs") << QByteArray(R"([true,false,"t","e",{}])") << QByteArray("true")
                                  << QByteArray("false") << QByteArray("t") << QByteArray("e")
                                  << QByteArray("{}");
    QTest::newRow("extra elements ignored")
            << QByteArray(R"(["1","2","t","e",{"a":1},"extra",[1,{"b":2}],null])")
            << QByteArray(R"("1")") << QByteArray(R"("2")") << QByteArray("t") << QByteArray("e")
            << QByteArray(R"({"a":1})");
    QTest::newRow("whitespace trimmed from payload")
            << QByteArray(" [ \"1\" ,\n\"2\" , \"t\" , \"e\" , { \"a\" : 1 }\t] \r\n")
            << QByteArray(R"("1")") << QByteArray(R"("2")") << QByteArray("t") << QByteArray("e")
            << QByteArray(R"({ "a" : 1 })");
    QTest::newRow("escaped topic decoded")
            << QByteArray(R"([null,"1","realtime:caf\u00e9\/x","ev\"t",[]])") << QByteArray("null")
            << QByteArray(R"("1")") << QByteArray("realtime:caf\xc3\xa9/x") << QByteArray("ev\"t")
            << QByteArray("[]");
    QTest::newRow("raw utf8 topic")
            << QByteArray("[null,null,\"\xe6\x97\xa5\",\"e\",1]") << QByteArray("null")
            << QByteArray("null") << QByteArray("\xe6\x97\xa5") << QByteArray("e")
            << QByteArray("1");
    QTest::newRow("scalar payload kept")
            << QByteArray(R"([null,null,"t","e","text"])") << QByteArray("null")
            << QByteArray("null") << QByteArray("t") << QByteArray("e") << QByteArray(R"("text")");
    QTest::newRow("null payload kept")
            << QByteArray(R"([null,null,"t","e",null])") << QByteArray("null") << QByteArray("null")
            << QByteArray("t") << QByteArray("e") << QByteArray("null");
    QTest::newRow("empty topic and event")
            << QByteArray(R"([null,null,"","",{}])") << QByteArray("null") << QByteArray("null")
            << QByteArray() << QByteArray() << QByteArray("{}");
}

void PhoenixCodecTest::decodeTextV2()
{
    QFETCH(QByteArray, frame);
    QFETCH(QByteArray, joinRef);
    QFETCH(QByteArray, ref);
    QFETCH(QByteArray, topic);
    QFETCH(QByteArray, event);
    QFETCH(QByteArray, payload);

    const auto decoded = rt::protocol::decodeText(frame, Vsn::V2);
    QVERIFY2(decoded.ok(), decoded.ok() ? "" : qPrintable(decoded.error().message));
    QCOMPARE(decoded->joinRef, joinRef);
    QCOMPARE(decoded->ref, ref);
    QCOMPARE(decoded->topic, topic);
    QCOMPARE(decoded->event, event);
    QCOMPARE(decoded->payload, payload);
    QVERIFY(!decoded->isUserBroadcast);
    QVERIFY(decoded->payloadIsJson);
    QVERIFY(decoded->userEvent.isEmpty());
    QVERIFY(decoded->metadata.isEmpty());
}

void PhoenixCodecTest::decodeTextV1_data()
{
    QTest::addColumn<QByteArray>("frame");
    QTest::addColumn<QByteArray>("joinRef");
    QTest::addColumn<QByteArray>("ref");
    QTest::addColumn<QByteArray>("topic");
    QTest::addColumn<QByteArray>("event");
    QTest::addColumn<QByteArray>("payload");

    QTest::newRow("recorded join")
            << QByteArray(R"({"topic":"realtime:room1","event":"phx_join","payload":)"
                          + RecordedJoinPayload + R"(,"ref":"6","join_ref":"6"})")
            << QByteArray(R"("6")") << QByteArray(R"("6")") << QByteArray("realtime:room1")
            << QByteArray("phx_join") << RecordedJoinPayload;
    QTest::newRow("recorded broadcast")
            << QByteArray(R"({"topic":"realtime:room1","event":"broadcast","payload":{"type":)"
                          R"("broadcast","event":"msg","payload":{"text":"hello"}},"ref":"7",)"
                          R"("join_ref":"6"})")
            << QByteArray(R"("6")") << QByteArray(R"("7")") << QByteArray("realtime:room1")
            << QByteArray("broadcast")
            << QByteArray(R"({"type":"broadcast","event":"msg","payload":{"text":"hello"}})");
    QTest::newRow("recorded heartbeat without join_ref")
            << QByteArray(R"({"topic":"phoenix","event":"heartbeat","payload":{},"ref":"12"})")
            << QByteArray("null") << QByteArray(R"("12")") << QByteArray("phoenix")
            << QByteArray("heartbeat") << QByteArray("{}");
    QTest::newRow("explicit null join_ref")
            << QByteArray(R"({"join_ref":null,"ref":null,"payload":[],"event":"e","topic":"t"})")
            << QByteArray("null") << QByteArray("null") << QByteArray("t") << QByteArray("e")
            << QByteArray("[]");
    QTest::newRow("numeric refs") << QByteArray(
            R"({"topic":"t","event":"e","payload":{},"ref":12,"join_ref":-3})")
                                  << QByteArray("-3") << QByteArray("12") << QByteArray("t")
                                  << QByteArray("e") << QByteArray("{}");
    QTest::newRow("duplicate keys: last wins")
            << QByteArray(R"({"topic":"a","event":"e","payload":1,"ref":"1","topic":"b",)"
                          R"("payload":{"x":2}})")
            << QByteArray("null") << QByteArray(R"("1")") << QByteArray("b") << QByteArray("e")
            << QByteArray(R"({"x":2})");
    QTest::newRow("escaped key") << QByteArray(
            R"({"\u0074opic":"t","event":"e","payload":{},"re\u0066":"1"})")
                                 << QByteArray("null") << QByteArray(R"("1")") << QByteArray("t")
                                 << QByteArray("e") << QByteArray("{}");
    QTest::newRow("extra keys ignored, spaced")
            << QByteArray(" { \"x\" : [ 1 ] , \"topic\" : \"t\" , \"event\" : \"e\" , "
                          "\"payload\" : { } , \"ref\" : \"1\" , \"Topic\" : 5 } ")
            << QByteArray("null") << QByteArray(R"("1")") << QByteArray("t") << QByteArray("e")
            << QByteArray("{ }");
    QTest::newRow("many keys (heap path)")
            << QByteArray(R"({"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,)"
                          R"("topic":"t","event":"e","payload":{"p":true},"ref":"1",)"
                          R"("join_ref":"2","j":10})")
            << QByteArray(R"("2")") << QByteArray(R"("1")") << QByteArray("t") << QByteArray("e")
            << QByteArray(R"({"p":true})");
}

void PhoenixCodecTest::decodeTextV1()
{
    QFETCH(QByteArray, frame);
    QFETCH(QByteArray, joinRef);
    QFETCH(QByteArray, ref);
    QFETCH(QByteArray, topic);
    QFETCH(QByteArray, event);
    QFETCH(QByteArray, payload);

    const auto decoded = rt::protocol::decodeText(frame, Vsn::V1);
    QVERIFY2(decoded.ok(), decoded.ok() ? "" : qPrintable(decoded.error().message));
    QCOMPARE(decoded->joinRef, joinRef);
    QCOMPARE(decoded->ref, ref);
    QCOMPARE(decoded->topic, topic);
    QCOMPARE(decoded->event, event);
    QCOMPARE(decoded->payload, payload);
    QVERIFY(!decoded->isUserBroadcast);
}

void PhoenixCodecTest::decodeTextMalformed_data()
{
    QTest::addColumn<int>("vsn");
    QTest::addColumn<QByteArray>("frame");

    // V2.
    QTest::newRow("v2 empty") << 2 << QByteArray();
    QTest::newRow("v2 whitespace") << 2 << QByteArray(" \n");
    QTest::newRow("v2 empty array") << 2 << QByteArray("[]");
    QTest::newRow("v2 four elements") << 2 << QByteArray(R"(["1","2","t","e"])");
    QTest::newRow("v2 object form")
            << 2 << QByteArray(R"({"topic":"t","event":"e","payload":{},"ref":"1"})");
    QTest::newRow("v2 string") << 2 << QByteArray(R"("hello")");
    QTest::newRow("v2 null") << 2 << QByteArray("null");
    QTest::newRow("v2 numeric topic") << 2 << QByteArray(R"(["1","2",3,"e",{}])");
    QTest::newRow("v2 null topic") << 2 << QByteArray(R"(["1","2",null,"e",{}])");
    QTest::newRow("v2 null event") << 2 << QByteArray(R"(["1","2","t",null,{}])");
    QTest::newRow("v2 array event") << 2 << QByteArray(R"(["1","2","t",["e"],{}])");
    QTest::newRow("v2 object join_ref") << 2 << QByteArray(R"([{},"2","t","e",{}])");
    QTest::newRow("v2 array ref") << 2 << QByteArray(R"(["1",[2],"t","e",{}])");
    QTest::newRow("v2 invalid json") << 2 << QByteArray(R"(["1","2","t","e",{])");
    QTest::newRow("v2 truncated") << 2 << QByteArray(R"(["1","2","t","e",{})");
    QTest::newRow("v2 trailing garbage") << 2 << QByteArray(R"(["1","2","t","e",{}]])");
    QTest::newRow("v2 two frames")
            << 2 << QByteArray(R"([null,"1","t","e",{}][null,"2","t","e",{}])");
    QTest::newRow("v2 NaN payload") << 2 << QByteArray(R"(["1","2","t","e",NaN])");
    QTest::newRow("v2 single-quoted") << 2 << QByteArray("['1','2','t','e',{}]");
    QTest::newRow("v2 invalid utf8 in payload")
            << 2 << QByteArray("[\"1\",\"2\",\"t\",\"e\",{\"a\":\"\xed\xa0\x80\"}]");
    QTest::newRow("v2 invalid utf8 in topic") << 2 << QByteArray("[\"1\",\"2\",\"\xff\",\"e\",{}]");
    QTest::newRow("v2 lone surrogate in event") << 2 << QByteArray(R"(["1","2","t","\udead",{}])");
    QTest::newRow("v2 payload too deep")
            << 2
            << QByteArray(R"([null,null,"t","e",)" + QByteArray(json::MaxDepth, '[')
                          + QByteArray(json::MaxDepth, ']') + "]");
    QTest::newRow("v2 BOM") << 2 << QByteArray("\xef\xbb\xbf[null,null,\"t\",\"e\",{}]");

    // V1.
    QTest::newRow("v1 empty") << 1 << QByteArray();
    QTest::newRow("v1 array form") << 1 << QByteArray(R"([null,"12","phoenix","heartbeat",{}])");
    QTest::newRow("v1 missing topic") << 1 << QByteArray(R"({"event":"e","payload":{},"ref":"1"})");
    QTest::newRow("v1 missing event") << 1 << QByteArray(R"({"topic":"t","payload":{},"ref":"1"})");
    QTest::newRow("v1 missing payload")
            << 1 << QByteArray(R"({"topic":"t","event":"e","ref":"1"})");
    QTest::newRow("v1 missing ref")
            << 1 << QByteArray(R"({"topic":"t","event":"e","payload":{},"join_ref":"1"})");
    QTest::newRow("v1 case-sensitive keys")
            << 1 << QByteArray(R"({"Topic":"t","event":"e","payload":{},"ref":"1"})");
    QTest::newRow("v1 numeric topic")
            << 1 << QByteArray(R"({"topic":1,"event":"e","payload":{},"ref":"1"})");
    QTest::newRow("v1 object event")
            << 1 << QByteArray(R"({"topic":"t","event":{},"payload":{},"ref":"1"})");
    QTest::newRow("v1 object join_ref")
            << 1 << QByteArray(R"({"topic":"t","event":"e","payload":{},"ref":"1","join_ref":{}})");
    QTest::newRow("v1 array ref")
            << 1 << QByteArray(R"({"topic":"t","event":"e","payload":{},"ref":["1"]})");
    QTest::newRow("v1 last duplicate invalid")
            << 1 << QByteArray(R"({"topic":"t","event":"e","payload":{},"ref":"1","topic":2})");
    QTest::newRow("v1 invalid json")
            << 1 << QByteArray(R"({"topic":"t","event":"e","payload":{},"ref":"1",})");
    QTest::newRow("v1 invalid utf8 in key")
            << 1
            << QByteArray("{\"topic\":\"t\",\"event\":\"e\",\"payload\":{},\"ref\":\"1\","
                          "\"\xc0\x80\":1}");
    QTest::newRow("v1 payload too deep")
            << 1
            << QByteArray(R"({"topic":"t","event":"e","ref":"1","payload":)"
                          + QByteArray(json::MaxDepth, '[') + QByteArray(json::MaxDepth, ']')
                          + "}");
    QTest::newRow("v1 scalar") << 1 << QByteArray("42");
}

void PhoenixCodecTest::decodeTextMalformed()
{
    QFETCH(int, vsn);
    QFETCH(QByteArray, frame);
    const auto decoded = rt::protocol::decodeText(frame, vsnOf(vsn));
    QVERIFY(!decoded.ok());
    QVERIFY(!decoded.error().message.isEmpty());
}

void PhoenixCodecTest::decodeBinary_data()
{
    QTest::addColumn<QByteArray>("frame");
    QTest::addColumn<QByteArray>("joinRef");
    QTest::addColumn<QByteArray>("ref");
    QTest::addColumn<QByteArray>("topic");
    QTest::addColumn<QByteArray>("event");
    QTest::addColumn<QByteArray>("payload");
    QTest::addColumn<bool>("isUserBroadcast");
    QTest::addColumn<QByteArray>("userEvent");
    QTest::addColumn<QByteArray>("metadata");
    QTest::addColumn<bool>("payloadIsJson");

    QTest::newRow("recorded kind 3 json")
            << recordedKind3Json() << QByteArray(R"("6")") << QByteArray(R"("7")")
            << QByteArray("realtime:room1") << QByteArray("broadcast")
            << QByteArray(R"({"text":"hello"})") << true << QByteArray("msg") << QByteArray()
            << true;
    QTest::newRow("recorded kind 3 raw")
            << recordedKind3Raw() << QByteArray(R"("6")") << QByteArray(R"("8")")
            << QByteArray("realtime:room1") << QByteArray("broadcast") << QByteArray("\x01\x02\x03")
            << true << QByteArray("bin") << QByteArray() << false;
    QTest::newRow("recorded kind 3 persist")
            << recordedKind3Persist() << QByteArray(R"("6")") << QByteArray(R"("7")")
            << QByteArray("realtime:priv") << QByteArray("broadcast") << QByteArray(R"({"v":1})")
            << true << QByteArray("saved") << QByteArray(R"({"persist":{"ttl":60}})") << true;
    QTest::newRow("kind 3 empty refs become empty strings")
            << binaryFrame({ 3, 0, 0, 1, 1, 0, 1 }, { "t", "e", "[]" }) << QByteArray(R"("")")
            << QByteArray(R"("")") << QByteArray("t") << QByteArray("broadcast") << QByteArray("[]")
            << true << QByteArray("e") << QByteArray() << true;
    QTest::newRow("kind 3 refs needing escapes")
            << binaryFrame({ 3, 2, 2, 1, 1, 0, 0 }, { "a\"", "\\\n", "t", "e" })
            << QByteArray(R"("a\"")") << QByteArray(R"("\\\n")") << QByteArray("t")
            << QByteArray("broadcast") << QByteArray() << true << QByteArray("e") << QByteArray()
            << false;
    QTest::newRow("kind 3 encoding 2 means JSON (upstream)")
            << binaryFrame({ 3, 1, 1, 1, 1, 0, 2 }, { "1", "2", "t", "e", " {\"a\":1} " })
            << QByteArray(R"("1")") << QByteArray(R"("2")") << QByteArray("t")
            << QByteArray("broadcast") << QByteArray(" {\"a\":1} ") << true << QByteArray("e")
            << QByteArray() << true;
    QTest::newRow("kind 3 raw payload may be anything")
            << binaryFrame({ 3, 1, 1, 1, 1, 0, 0 },
                           { "1", "2", "t", "e", QByteArray("\xff\x00{", 3) })
            << QByteArray(R"("1")") << QByteArray(R"("2")") << QByteArray("t")
            << QByteArray("broadcast") << QByteArray("\xff\x00{", 3) << true << QByteArray("e")
            << QByteArray() << false;
    QTest::newRow("kind 3 scalar metadata")
            << binaryFrame({ 3, 1, 1, 1, 1, 4, 1 }, { "1", "2", "t", "e", "true", "1" })
            << QByteArray(R"("1")") << QByteArray(R"("2")") << QByteArray("t")
            << QByteArray("broadcast") << QByteArray("1") << true << QByteArray("e")
            << QByteArray("true") << true;
    QTest::newRow("kind 3 utf8 topic")
            << binaryFrame({ 3, 1, 1, 4, 1, 0, 1 }, { "1", "2", "t\xc3\xa9!", "e", "{}" })
            << QByteArray(R"("1")") << QByteArray(R"("2")") << QByteArray("t\xc3\xa9!")
            << QByteArray("broadcast") << QByteArray("{}") << true << QByteArray("e")
            << QByteArray() << true;
    QTest::newRow("kind 0 push") << binaryFrame(
            { 0, 1, 2, 14, 4 }, { "6", "10", "realtime:room1", "ping", QByteArray("\x00\x01", 2) })
                                 << QByteArray(R"("6")") << QByteArray(R"("10")")
                                 << QByteArray("realtime:room1") << QByteArray("ping")
                                 << QByteArray("\x00\x01", 2) << false << QByteArray()
                                 << QByteArray() << false;
    QTest::newRow("kind 0 push empty everything")
            << binaryFrame({ 0, 0, 0, 0, 0 }, {}) << QByteArray(R"("")") << QByteArray(R"("")")
            << QByteArray() << QByteArray() << QByteArray() << false << QByteArray() << QByteArray()
            << false;
}

void PhoenixCodecTest::decodeBinary()
{
    QFETCH(QByteArray, frame);
    QFETCH(QByteArray, joinRef);
    QFETCH(QByteArray, ref);
    QFETCH(QByteArray, topic);
    QFETCH(QByteArray, event);
    QFETCH(QByteArray, payload);
    QFETCH(bool, isUserBroadcast);
    QFETCH(QByteArray, userEvent);
    QFETCH(QByteArray, metadata);
    QFETCH(bool, payloadIsJson);

    const auto decoded = rt::protocol::decodeBinary(frame);
    QVERIFY2(decoded.ok(), decoded.ok() ? "" : qPrintable(decoded.error().message));
    QCOMPARE(decoded->joinRef, joinRef);
    QCOMPARE(decoded->ref, ref);
    QCOMPARE(decoded->topic, topic);
    QCOMPARE(decoded->event, event);
    QCOMPARE(decoded->isUserBroadcast, isUserBroadcast);
    QCOMPARE(decoded->userEvent, userEvent);
    QCOMPARE(decoded->metadata, metadata);
    QCOMPARE(decoded->payloadIsJson, payloadIsJson);
    QCOMPARE(decoded->payload, payload);
}

void PhoenixCodecTest::decodeBinaryMalformed_data()
{
    QTest::addColumn<QByteArray>("frame");

    QTest::newRow("empty") << QByteArray();
    QTest::newRow("kind 1 reply") << binaryFrame({ 1, 0, 0, 0, 0 }, {});
    QTest::newRow("kind 2 broadcast") << binaryFrame({ 2, 1, 1 }, { "t", "e" });
    QTest::newRow("kind 4 is server-to-client")
            << binaryFrame({ 4, 1, 1, 0, 1 }, { "t", "e", "{}" });
    QTest::newRow("kind 5") << binaryFrame({ 5, 0, 0, 0, 0, 0, 0 }, {});
    QTest::newRow("kind 255") << binaryFrame({ 255, 0, 0, 0, 0, 0, 0 }, {});
    QTest::newRow("kind 3 only kind byte") << binaryFrame({ 3 }, {});
    QTest::newRow("kind 3 header short by one") << binaryFrame({ 3, 0, 0, 0, 0, 0 }, {});
    QTest::newRow("kind 3 join_ref past end") << binaryFrame({ 3, 5, 0, 0, 0, 0, 0 }, { "1234" });
    QTest::newRow("kind 3 ref past end") << binaryFrame({ 3, 1, 5, 0, 0, 0, 0 }, { "1", "2" });
    QTest::newRow("kind 3 topic past end")
            << binaryFrame({ 3, 1, 1, 14, 0, 0, 0 }, { "1", "2", "realtime:room" });
    QTest::newRow("kind 3 event past end")
            << binaryFrame({ 3, 1, 1, 1, 3, 0, 0 }, { "1", "2", "t", "ms" });
    QTest::newRow("kind 3 metadata past end")
            << binaryFrame({ 3, 1, 1, 1, 1, 200, 0 }, { "1", "2", "t", "e", "{}" });
    QTest::newRow("kind 3 all lengths 255, short")
            << binaryFrame({ 3, 255, 255, 255, 255, 255, 1 }, { QByteArray(1000, 'a') });
    QTest::newRow("kind 3 empty JSON payload")
            << binaryFrame({ 3, 1, 1, 1, 1, 0, 1 }, { "1", "2", "t", "e" });
    QTest::newRow("kind 3 invalid JSON payload")
            << binaryFrame({ 3, 1, 1, 1, 1, 0, 1 }, { "1", "2", "t", "e", "{\"a\":" });
    QTest::newRow("kind 3 JSON payload with two values")
            << binaryFrame({ 3, 1, 1, 1, 1, 0, 1 }, { "1", "2", "t", "e", "{} {}" });
    QTest::newRow("kind 3 JSON payload invalid utf8")
            << binaryFrame({ 3, 1, 1, 1, 1, 0, 1 }, { "1", "2", "t", "e", "\"\xc3\x28\"" });
    QTest::newRow("kind 3 JSON payload too deep")
            << binaryFrame({ 3, 1, 1, 1, 1, 0, 1 },
                           { "1", "2", "t", "e",
                             QByteArray(QByteArray(json::MaxDepth + 1, '[')
                                        + QByteArray(json::MaxDepth + 1, ']')) });
    QTest::newRow("kind 3 invalid metadata")
            << binaryFrame({ 3, 1, 1, 1, 1, 2, 0 }, { "1", "2", "t", "e", "{x" });
    QTest::newRow("kind 3 metadata takes the payload")
            << binaryFrame({ 3, 1, 1, 1, 1, 4, 1 }, { "1", "2", "t", "e", "{}{}" });
    QTest::newRow("kind 3 invalid utf8 topic")
            << binaryFrame({ 3, 1, 1, 2, 1, 0, 0 }, { "1", "2", "\xc3\x28", "e" });
    QTest::newRow("kind 3 invalid utf8 join_ref")
            << binaryFrame({ 3, 1, 1, 1, 1, 0, 0 }, { "\xff", "2", "t", "e" });
    QTest::newRow("kind 3 invalid utf8 ref")
            << binaryFrame({ 3, 1, 3, 1, 1, 0, 0 }, { "1", "\xed\xa0\x80", "t", "e" });
    QTest::newRow("kind 3 invalid utf8 event")
            << binaryFrame({ 3, 1, 1, 1, 2, 0, 0 }, { "1", "2", "t", "\xe2\x82" });
    QTest::newRow("kind 0 header short") << binaryFrame({ 0, 0, 0, 0 }, {});
    QTest::newRow("kind 0 topic past end") << binaryFrame({ 0, 0, 0, 9, 0 }, { "realtime" });
    QTest::newRow("kind 0 event past end") << binaryFrame({ 0, 0, 0, 1, 9 }, { "t", "e" });
    QTest::newRow("kind 0 invalid utf8 topic") << binaryFrame({ 0, 0, 0, 1, 0 }, { "\x80" });
}

void PhoenixCodecTest::decodeBinaryMalformed()
{
    QFETCH(QByteArray, frame);
    const auto decoded = rt::protocol::decodeBinary(frame);
    QVERIFY(!decoded.ok());
    QVERIFY(!decoded.error().message.isEmpty());
}

// Every prefix of the recorded frames: prefixes that cut into the header fields must fail, and
// those that only cut the payload succeed exactly when what is left is still acceptable. Run
// under ASan this also proves no length check reads past the view.
void PhoenixCodecTest::binaryPrefixesNeverReadPastTheEnd()
{
    const QByteArrayList frames{ recordedKind3Json(), recordedKind3Raw(), recordedKind3Persist(),
                                 binaryFrame({ 0, 1, 1, 1, 1 }, { "1", "2", "t", "e", "xyz" }) };
    for (const QByteArray &frame : frames) {
        const auto kind = static_cast<unsigned char>(frame[0]);
        const qsizetype headerBytes = kind == 3 ? 7 : 5;
        qsizetype fieldsEnd = headerBytes;
        for (qsizetype i = 1; i < headerBytes - (kind == 3 ? 1 : 0); ++i)
            fieldsEnd += static_cast<unsigned char>(frame[i]);
        const bool isJson = kind == 3 && frame[6] != 0;
        for (qsizetype length = 0; length <= frame.size(); ++length) {
            // A heap copy of exactly `length` bytes, so ASan catches any over-read.
            const QByteArray prefix = frame.first(length);
            const auto decoded = rt::protocol::decodeBinary(QByteArrayView(prefix));
            const bool expectOk = length >= fieldsEnd
                    && (!isJson || json::isValid(frame.sliced(fieldsEnd, length - fieldsEnd)));
            QCOMPARE(decoded.ok(), expectOk);
        }
    }
}

void PhoenixCodecTest::encodeReply_data()
{
    QTest::addColumn<int>("vsn");
    QTest::addColumn<QByteArray>("joinRef");
    QTest::addColumn<QByteArray>("ref");
    QTest::addColumn<QByteArray>("topic");
    QTest::addColumn<QByteArray>("status");
    QTest::addColumn<QByteArray>("response");
    QTest::addColumn<QByteArray>("expected");

    QTest::newRow("v2 heartbeat reply")
            << 2 << QByteArray("null") << QByteArray(R"("12")") << QByteArray("phoenix")
            << QByteArray("ok") << QByteArray("{}")
            << QByteArray(R"([null,"12","phoenix","phx_reply",{"status":"ok","response":{}}])");
    QTest::newRow("v2 recorded join reply")
            << 2 << QByteArray(R"("6")") << QByteArray(R"("6")") << QByteArray("realtime:room1")
            << QByteArray("ok") << RecordedJoinResponse
            << QByteArray(R"(["6","6","realtime:room1","phx_reply",{"status":"ok","response":)"
                          + RecordedJoinResponse + "}]");
    QTest::newRow("v2 error reply")
            << 2 << QByteArray(R"("3")") << QByteArray(R"("4")") << QByteArray("x")
            << QByteArray("error") << QByteArray(R"({"reason":"unmatched topic"})")
            << QByteArray(R"(["3","4","x","phx_reply",{"status":"error","response":)"
                          R"({"reason":"unmatched topic"}}])");
    QTest::newRow("v2 string response")
            << 2 << QByteArray(R"("6")") << QByteArray(R"("7")") << QByteArray("realtime:room1")
            << QByteArray("error") << QByteArray(R"("payload_size_exceeded")")
            << QByteArray(R"(["6","7","realtime:room1","phx_reply",{"status":"error",)"
                          R"("response":"payload_size_exceeded"}])");
    QTest::newRow("v2 empty refs become null")
            << 2 << QByteArray() << QByteArray() << QByteArray("t") << QByteArray("ok")
            << QByteArray("{}")
            << QByteArray(R"([null,null,"t","phx_reply",{"status":"ok","response":{}}])");
    QTest::newRow("v2 topic escaped")
            << 2 << QByteArray("1") << QByteArray("2") << QByteArray("a\"b\\c\n\x01/\xc3\xa9")
            << QByteArray("ok") << QByteArray("{}")
            << QByteArray("[1,2,\"a\\\"b\\\\c\\n\\u0001/\xc3\xa9\",\"phx_reply\","
                          "{\"status\":\"ok\",\"response\":{}}]");
    QTest::newRow("v1 recorded join reply")
            << 1 << QByteArray(R"("6")") << QByteArray(R"("6")") << QByteArray("realtime:room1")
            << QByteArray("ok") << RecordedJoinResponse
            << QByteArray(R"({"topic":"realtime:room1","event":"phx_reply","payload":)"
                          R"({"status":"ok","response":)"
                          + RecordedJoinResponse + R"(},"ref":"6"})");
    QTest::newRow("v1 heartbeat reply, no join_ref key")
            << 1 << QByteArray("null") << QByteArray(R"("12")") << QByteArray("phoenix")
            << QByteArray("ok") << QByteArray("{}")
            << QByteArray(R"({"topic":"phoenix","event":"phx_reply","payload":)"
                          R"({"status":"ok","response":{}},"ref":"12"})");
}

void PhoenixCodecTest::encodeReply()
{
    QFETCH(int, vsn);
    QFETCH(QByteArray, joinRef);
    QFETCH(QByteArray, ref);
    QFETCH(QByteArray, topic);
    QFETCH(QByteArray, status);
    QFETCH(QByteArray, response);
    QFETCH(QByteArray, expected);

    const QByteArray frame =
            rt::protocol::encodeReply(vsnOf(vsn), joinRef, ref, topic, status, response);
    QCOMPARE(frame, expected);
    QVERIFY(json::isValid(frame));
    QCOMPARE(frame.capacity(), frame.size()); // sized exactly, one allocation
}

void PhoenixCodecTest::encodePush_data()
{
    QTest::addColumn<int>("vsn");
    QTest::addColumn<QByteArray>("joinRef");
    QTest::addColumn<QByteArray>("ref");
    QTest::addColumn<QByteArray>("topic");
    QTest::addColumn<QByteArray>("event");
    QTest::addColumn<QByteArray>("payload");
    QTest::addColumn<QByteArray>("expected");

    const QByteArray presence = R"({"user-2":{"metas":[{"phx_ref":"GAAA-bob","name":"bob"}]}})";
    QTest::newRow("v2 recorded presence_state")
            << 2 << QByteArray(R"("6")") << QByteArray("null") << QByteArray("realtime:room1")
            << QByteArray("presence_state") << presence
            << QByteArray(R"(["6",null,"realtime:room1","presence_state",)" + presence + "]");
    const QByteArray diff = R"({"joins":{"user-1":{"metas":[{"phx_ref":"F1-alice","name":"alice",)"
                            R"("online_at":"2024-05-01T12:00:00Z"}]}},"leaves":{}})";
    QTest::newRow("v2 recorded presence_diff fastlane")
            << 2 << QByteArray("null") << QByteArray("null") << QByteArray("realtime:room1")
            << QByteArray("presence_diff") << diff
            << QByteArray(R"([null,null,"realtime:room1","presence_diff",)" + diff + "]");
    QTest::newRow("v2 phx_close") << 2 << QByteArray(R"("6")") << QByteArray(R"("6")")
                                  << QByteArray("realtime:room1") << QByteArray("phx_close")
                                  << QByteArray("{}")
                                  << QByteArray(R"(["6","6","realtime:room1","phx_close",{}])");
    QTest::newRow("v2 escaped event")
            << 2 << QByteArray() << QByteArray() << QByteArray("t") << QByteArray("tab\there")
            << QByteArray("{}") << QByteArray(R"([null,null,"t","tab\there",{}])");
    QTest::newRow("v1 broadcast")
            << 1 << QByteArray(R"("6")") << QByteArray("null") << QByteArray("realtime:room1")
            << QByteArray("broadcast")
            << QByteArray(R"({"type":"broadcast","event":"msg","payload":{"text":"hello"}})")
            << QByteArray(R"({"topic":"realtime:room1","event":"broadcast","payload":)"
                          R"({"type":"broadcast","event":"msg","payload":{"text":"hello"}},)"
                          R"("ref":null})");
    QTest::newRow("v1 phx_close")
            << 1 << QByteArray(R"("6")") << QByteArray(R"("6")") << QByteArray("realtime:room1")
            << QByteArray("phx_close") << QByteArray("{}")
            << QByteArray(
                       R"({"topic":"realtime:room1","event":"phx_close","payload":{},"ref":"6"})");
}

void PhoenixCodecTest::encodePush()
{
    QFETCH(int, vsn);
    QFETCH(QByteArray, joinRef);
    QFETCH(QByteArray, ref);
    QFETCH(QByteArray, topic);
    QFETCH(QByteArray, event);
    QFETCH(QByteArray, payload);
    QFETCH(QByteArray, expected);

    const QByteArray frame =
            rt::protocol::encodePush(vsnOf(vsn), joinRef, ref, topic, event, payload);
    QCOMPARE(frame, expected);
    QVERIFY(json::isValid(frame));
    QCOMPARE(frame.capacity(), frame.size());
}

void PhoenixCodecTest::encodeUserBroadcast_data()
{
    QTest::addColumn<QByteArray>("topic");
    QTest::addColumn<QByteArray>("userEvent");
    QTest::addColumn<QByteArray>("metadata");
    QTest::addColumn<bool>("payloadIsJson");
    QTest::addColumn<QByteArray>("payload");
    QTest::addColumn<QByteArray>("expected");

    QTest::newRow("recorded kind 4 with meta")
            << QByteArray("realtime:room1") << QByteArray("msg")
            << QByteArray(R"({"id":"m-1","replayed":true})") << true
            << QByteArray(R"({"text":"from-server-binary-json"})")
            << binaryFrame({ 0x04, 0x0e, 0x03, 0x1c, 0x01 },
                           { "realtime:room1", "msg", R"({"id":"m-1","replayed":true})",
                             R"({"text":"from-server-binary-json"})" });
    QTest::newRow("recorded self echo")
            << QByteArray("realtime:room1") << QByteArray("msg") << QByteArray() << true
            << QByteArray(R"({"text":"hello"})")
            << binaryFrame({ 0x04, 0x0e, 0x03, 0x00, 0x01 },
                           { "realtime:room1", "msg", R"({"text":"hello"})" });
    QTest::newRow("raw payload") << QByteArray("realtime:room1") << QByteArray("bin")
                                 << QByteArray() << false << QByteArray("\x01\x02\x03")
                                 << binaryFrame({ 0x04, 0x0e, 0x03, 0x00, 0x00 },
                                                { "realtime:room1", "bin", "\x01\x02\x03" });
    QTest::newRow("255-byte fields")
            << QByteArray(255, 't') << QByteArray(255, 'e')
            << QByteArray("\"" + QByteArray(253, 'm') + "\"") << true << QByteArray("{}")
            << binaryFrame({ 4, 255, 255, 255, 1 },
                           { QByteArray(255, 't'), QByteArray(255, 'e'),
                             QByteArray("\"" + QByteArray(253, 'm') + "\""), "{}" });
    QTest::newRow("empty everything") << QByteArray() << QByteArray() << QByteArray() << false
                                      << QByteArray() << binaryFrame({ 4, 0, 0, 0, 0 }, {});
}

void PhoenixCodecTest::encodeUserBroadcast()
{
    QFETCH(QByteArray, topic);
    QFETCH(QByteArray, userEvent);
    QFETCH(QByteArray, metadata);
    QFETCH(bool, payloadIsJson);
    QFETCH(QByteArray, payload);
    QFETCH(QByteArray, expected);

    const std::optional<QByteArray> frame =
            rt::protocol::encodeUserBroadcast(topic, userEvent, metadata, payloadIsJson, payload);
    QVERIFY(frame.has_value());
    QCOMPARE(*frame, expected);
    QCOMPARE(frame->capacity(), frame->size());
}

void PhoenixCodecTest::encodeUserBroadcastRejectsLongFields()
{
    const QByteArray ok(255, 'x');
    const QByteArray tooLong(256, 'x');
    QVERIFY(!rt::protocol::encodeUserBroadcast(tooLong, "e", "", true, "{}").has_value());
    QVERIFY(!rt::protocol::encodeUserBroadcast("t", tooLong, "", true, "{}").has_value());
    QVERIFY(!rt::protocol::encodeUserBroadcast("t", "e", tooLong, true, "{}").has_value());
    // The payload has no length byte and no limit.
    QVERIFY(rt::protocol::encodeUserBroadcast(ok, ok, ok, false, QByteArray(100000, 'p'))
                    .has_value());
}

void PhoenixCodecTest::userBroadcastAsJsonPayload_data()
{
    QTest::addColumn<QByteArray>("userEvent");
    QTest::addColumn<QByteArray>("payload");
    QTest::addColumn<QByteArray>("metadata");
    QTest::addColumn<QByteArray>("expected");

    QTest::newRow("without meta")
            << QByteArray("msg") << QByteArray(R"({"text":"hello"})") << QByteArray()
            << QByteArray(R"({"event":"msg","payload":{"text":"hello"},"type":"broadcast"})");
    // Upstream's key order (Jason, sorted small map): event, meta, payload, type.
    QTest::newRow("with meta")
            << QByteArray("msg") << QByteArray(R"({"text":"from-server-binary-json"})")
            << QByteArray(R"({"id":"m-1","replayed":true})")
            << QByteArray(R"({"event":"msg","meta":{"id":"m-1","replayed":true},)"
                          R"("payload":{"text":"from-server-binary-json"},"type":"broadcast"})");
    QTest::newRow("event escaped")
            << QByteArray("a\"b") << QByteArray("[1]") << QByteArray()
            << QByteArray(R"({"event":"a\"b","payload":[1],"type":"broadcast"})");
}

void PhoenixCodecTest::userBroadcastAsJsonPayload()
{
    QFETCH(QByteArray, userEvent);
    QFETCH(QByteArray, payload);
    QFETCH(QByteArray, metadata);
    QFETCH(QByteArray, expected);
    const QByteArray json = rt::protocol::userBroadcastAsJsonPayload(userEvent, payload, metadata);
    QCOMPARE(json, expected);
    QVERIFY(json::isValid(json));
    QCOMPARE(json.capacity(), json.size());
}

void PhoenixCodecTest::appendJsonString_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QByteArray>("expected");

    QTest::newRow("empty") << QByteArray() << QByteArray(R"("")");
    QTest::newRow("plain") << QByteArray("realtime:room1") << QByteArray(R"("realtime:room1")");
    QTest::newRow("quote and backslash") << QByteArray(R"(a"b\c)") << QByteArray(R"("a\"b\\c")");
    QTest::newRow("short escapes") << QByteArray("\b\f\n\r\t") << QByteArray(R"("\b\f\n\r\t")");
    QTest::newRow("other controls")
            << QByteArray("\x01\x1f\x0b", 3) << QByteArray(R"("\u0001\u001f\u000b")");
    QTest::newRow("NUL") << QByteArray("a\0b", 3) << QByteArray(R"("a\u0000b")");
    QTest::newRow("slash and DEL kept") << QByteArray("/\x7f") << QByteArray("\"/\x7f\"");
    QTest::newRow("non-ASCII kept") << QByteArray("caf\xc3\xa9 \xf0\x9f\x98\x80")
                                    << QByteArray("\"caf\xc3\xa9 \xf0\x9f\x98\x80\"");
}

void PhoenixCodecTest::appendJsonString()
{
    QFETCH(QByteArray, text);
    QFETCH(QByteArray, expected);
    QCOMPARE(jsonString(text), expected);
    QByteArray decoded;
    QVERIFY(json::decodeString(expected, decoded));
    QCOMPARE(decoded, text);
}

void PhoenixCodecTest::appendJsonStringKeepsPrefix()
{
    QByteArray out = "[1,";
    rt::protocol::appendJsonString(out, "x\"");
    out += ',';
    rt::protocol::appendJsonString(out, "");
    const QByteArray expected =
            R"([1,"x\"","")"; // outside QCOMPARE: moc mis-lexes \" in raw strings
    QCOMPARE(out, expected);
}

// realtime-js compares refs with ===: what comes in must go back out byte for byte.
void PhoenixCodecTest::refEcho_data()
{
    QTest::addColumn<int>("vsn");
    QTest::addColumn<QByteArray>("frame");
    QTest::addColumn<QByteArray>("reply");

    QTest::newRow("v2 string refs")
            << 2 << QByteArray(R"(["6","7","realtime:room1","broadcast",{}])")
            << QByteArray(
                       R"(["6","7","realtime:room1","phx_reply",{"status":"ok","response":{}}])");
    QTest::newRow("v2 numeric refs stay numbers")
            << 2 << QByteArray(R"([6,7,"realtime:room1","broadcast",{}])")
            << QByteArray(R"([6,7,"realtime:room1","phx_reply",{"status":"ok","response":{}}])");
    QTest::newRow("v2 heartbeat")
            << 2 << QByteArray(R"([null,"12","phoenix","heartbeat",{}])")
            << QByteArray(R"([null,"12","phoenix","phx_reply",{"status":"ok","response":{}}])");
    QTest::newRow("v2 escaped ref")
            << 2 << QByteArray(R"(["\u0036", "7" ,"t","e",{}])")
            << QByteArray(R"(["\u0036","7","t","phx_reply",{"status":"ok","response":{}}])");
    QTest::newRow("v1 heartbeat")
            << 1 << QByteArray(R"({"topic":"phoenix","event":"heartbeat","payload":{},"ref":"12"})")
            << QByteArray(R"({"topic":"phoenix","event":"phx_reply","payload":{"status":"ok",)"
                          R"("response":{}},"ref":"12"})");
    QTest::newRow("v1 numeric ref")
            << 1 << QByteArray(R"({"topic":"t","event":"e","payload":{},"ref":12,"join_ref":1})")
            << QByteArray(R"({"topic":"t","event":"phx_reply","payload":{"status":"ok",)"
                          R"("response":{}},"ref":12})");
    QTest::newRow("kind 3 refs become strings")
            << 3 << recordedKind3Json()
            << QByteArray(
                       R"(["6","7","realtime:room1","phx_reply",{"status":"ok","response":{}}])");
}

void PhoenixCodecTest::refEcho()
{
    QFETCH(int, vsn);
    QFETCH(QByteArray, frame);
    QFETCH(QByteArray, reply);
    const auto decoded = vsn == 3 ? rt::protocol::decodeBinary(frame)
                                  : rt::protocol::decodeText(frame, vsnOf(vsn));
    QVERIFY(decoded.ok());
    const Vsn replyVsn = vsn == 1 ? Vsn::V1 : Vsn::V2;
    QCOMPARE(rt::protocol::encodeReply(replyVsn, decoded->joinRef, decoded->ref, decoded->topic,
                                       "ok", "{}"),
             reply);
}

// The recorded exchange of client-protocol.md §5: a kind-3 push is acked with its refs and
// echoed to the sender as kind 4.
void PhoenixCodecTest::kind3AckAndSelfEcho()
{
    const auto push = rt::protocol::decodeBinary(recordedKind3Json());
    QVERIFY(push.ok());
    const std::optional<QByteArray> echo = rt::protocol::encodeUserBroadcast(
            push->topic, push->userEvent, push->metadata, push->payloadIsJson, push->payload);
    QVERIFY(echo.has_value());
    QCOMPARE(*echo,
             binaryFrame({ 0x04, 0x0e, 0x03, 0x00, 0x01 },
                         { "realtime:room1", "msg", R"({"text":"hello"})" }));
    // A V1 subscriber receives the JSON form instead.
    QCOMPARE(rt::protocol::encodePush(Vsn::V1, "null", "null", push->topic, "broadcast",
                                      rt::protocol::userBroadcastAsJsonPayload(
                                              push->userEvent, push->payload, push->metadata)),
             QByteArray(R"({"topic":"realtime:room1","event":"broadcast","payload":{"event":"msg",)"
                        R"("payload":{"text":"hello"},"type":"broadcast"},"ref":null})"));
}

void PhoenixCodecTest::encodedPushDecodesBack_data()
{
    QTest::addColumn<int>("vsn");
    QTest::newRow("v1") << 1;
    QTest::newRow("v2") << 2;
}

void PhoenixCodecTest::encodedPushDecodesBack()
{
    QFETCH(int, vsn);
    const QByteArray topic = "realtime:\"odd\"\\topic\n\xc3\xa9";
    const QByteArray event = "ev\x01nt";
    const QByteArray frame = rt::protocol::encodePush(vsnOf(vsn), R"("5")", R"("9")", topic, event,
                                                      R"({"k":[1,2]})");
    const auto decoded = rt::protocol::decodeText(frame, vsnOf(vsn));
    QVERIFY(decoded.ok());
    QCOMPARE(decoded->joinRef, vsn == 2 ? QByteArray(R"("5")") : QByteArray("null"));
    QCOMPARE(decoded->ref, QByteArray(R"("9")"));
    QCOMPARE(decoded->topic, topic);
    QCOMPARE(decoded->event, event);
    QCOMPARE(decoded->payload, QByteArray(R"({"k":[1,2]})"));
}

QTEST_GUILESS_MAIN(PhoenixCodecTest)
#include "tst_phoenix_codec.moc"
