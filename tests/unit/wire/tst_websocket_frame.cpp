#include "server/wire/websocket_frame.h"

#include <QRandomGenerator>
#include <QTest>

using rt::wire::WebSocketParser;
using rt::wire::WsOpcode;
namespace ws_close = rt::wire::ws_close;

namespace {

// The RFC 6455 §5.7 masking key.
const QByteArray RfcMask = QByteArray::fromHex("37fa213d");

enum class LengthForm { Minimal, Force16, Force64 };

// A client frame: `b0` is the first byte as on the wire (FIN, RSV, opcode); the payload is masked
// with `maskKey`. LengthForm forces the (non-minimal) extended length encodings.
QByteArray clientFrame(quint8 b0, QByteArrayView payload, LengthForm form = LengthForm::Minimal,
                       const QByteArray &maskKey = RfcMask)
{
    const qsizetype n = payload.size();
    QByteArray out;
    out.append(char(b0));
    if (form == LengthForm::Minimal && n <= 125) {
        out.append(char(0x80 | n));
    } else if ((form == LengthForm::Minimal && n <= 0xFFFF) || form == LengthForm::Force16) {
        out.append(char(0xFE));
        out.append(char(n >> 8));
        out.append(char(n & 0xFF));
    } else {
        out.append(char(0xFF));
        for (int i = 7; i >= 0; --i) {
            out.append(char((quint64(n) >> (8 * i)) & 0xFF));
        }
    }
    out.append(maskKey);
    for (qsizetype i = 0; i < n; ++i) {
        out.append(char(payload[i] ^ maskKey[i % 4]));
    }
    return out;
}

// Turns a server frame (as encodeFrame writes it) into the same frame sent by a client.
QByteArray maskServerFrame(const QByteArray &serverFrame, const QByteArray &maskKey)
{
    const quint8 length7 = quint8(serverFrame[1]) & 0x7F;
    const qsizetype headerBytes = length7 == 126 ? 4 : (length7 == 127 ? 10 : 2);
    QByteArray out = serverFrame.first(headerBytes);
    out[1] = char(quint8(out[1]) | 0x80);
    out.append(maskKey);
    for (qsizetype i = headerBytes; i < serverFrame.size(); ++i) {
        out.append(char(serverFrame[i] ^ maskKey[(i - headerBytes) % 4]));
    }
    return out;
}

QByteArray closeBody(quint16 code, QByteArrayView reason = {})
{
    QByteArray out;
    out.append(char(code >> 8));
    out.append(char(code & 0xFF));
    out.append(reason);
    return out;
}

QByteArray pattern(qsizetype size, int seed = 0)
{
    QByteArray out(size, Qt::Uninitialized);
    for (qsizetype i = 0; i < size; ++i) {
        out[i] = char((i * 31 + seed * 7 + (i >> 8)) & 0xFF);
    }
    return out;
}

// Printable payloads as they are, anything else as hex, so that failures stay readable.
QByteArray show(const QByteArray &payload)
{
    for (const char c : payload) {
        if (c < 0x20 || c > 0x7E) {
            return "0x" + payload.toHex();
        }
    }
    return payload;
}

class Recorder : public WebSocketParser::Visitor
{
public:
    QByteArrayList events; // "text:Hello", "close:1000:bye", "error:1002", ...
    QByteArrayList detailed; // the same with error reasons, to compare ways of splitting
    QList<QByteArray> messages;

    void onMessage(WsOpcode opcode, QByteArray message) override
    {
        add(QByteArray(opcode == WsOpcode::Text ? "text:" : "binary:") + show(message));
        messages.append(message);
    }
    void onPing(QByteArray payload) override { add("ping:" + show(payload)); }
    void onPong(QByteArray payload) override { add("pong:" + show(payload)); }
    void onClose(quint16 code, QByteArray reason) override
    {
        add("close:" + QByteArray::number(code) + ':' + show(reason));
    }
    void onProtocolError(quint16 closeCode, const char *reason) override
    {
        const QByteArray event = "error:" + QByteArray::number(closeCode);
        events.append(event);
        detailed.append(event + ':' + reason);
    }

private:
    void add(const QByteArray &event)
    {
        events.append(event);
        detailed.append(event);
    }
};

WebSocketParser::Limits limitsOf(qsizetype maxMessageBytes)
{
    WebSocketParser::Limits limits;
    limits.maxMessageBytes = maxMessageBytes;
    return limits;
}

QByteArrayList feedChunks(const QList<QByteArrayView> &chunks, WebSocketParser::Limits limits)
{
    WebSocketParser parser(limits);
    Recorder recorder;
    for (const QByteArrayView chunk : chunks) {
        parser.feed(chunk, recorder);
    }
    return recorder.detailed;
}

QByteArrayList feedSplitAt(QByteArrayView input, WebSocketParser::Limits limits,
                           std::initializer_list<qsizetype> cuts)
{
    QList<QByteArrayView> chunks;
    qsizetype start = 0;
    for (const qsizetype cut : cuts) {
        chunks.append(input.sliced(start, cut - start));
        start = cut;
    }
    chunks.append(input.sliced(start));
    return feedChunks(chunks, limits);
}

QByteArrayList feedByteByByte(QByteArrayView input, WebSocketParser::Limits limits)
{
    QList<QByteArrayView> chunks;
    for (qsizetype i = 0; i < input.size(); ++i) {
        chunks.append(input.sliced(i, 1));
    }
    return feedChunks(chunks, limits);
}

void failWithDiff(const char *what, qsizetype at, const QByteArrayList &got,
                  const QByteArrayList &expected)
{
    const QByteArray message = QByteArray(what) + ' ' + QByteArray::number(at) + ": got ["
            + got.join(", ") + "], expected [" + expected.join(", ") + ']';
    QFAIL(message.constData());
}

// The parser must report the same events however the input is cut: at every single offset
// (including inside the 2/4/10-byte header and the mask key), at every pair of offsets for short
// inputs, byte by byte, and at sampled offsets for long inputs.
void checkEverySplit(const QByteArray &input, WebSocketParser::Limits limits,
                     const QByteArrayList &expected)
{
    const qsizetype n = input.size();
    QList<qsizetype> cuts;
    if (n <= 2048) {
        for (qsizetype i = 0; i <= n; ++i) {
            cuts.append(i);
        }
    } else {
        QRandomGenerator rng{ quint32(n) };
        for (qsizetype i = 0; i < 16; ++i) {
            cuts.append(i); // the header area
        }
        for (int i = 0; i < 48; ++i) {
            cuts.append(qsizetype(rng.bounded(quint64(n + 1))));
        }
        cuts.append(n - 1);
    }
    for (const qsizetype cut : std::as_const(cuts)) {
        const QByteArrayList got = feedSplitAt(input, limits, { cut });
        if (got != expected) {
            failWithDiff("split at", cut, got, expected);
            return;
        }
    }
    if (n <= 64) {
        for (qsizetype i = 0; i <= n; ++i) {
            for (qsizetype j = i; j <= n; ++j) {
                const QByteArrayList got = feedSplitAt(input, limits, { i, j });
                if (got != expected) {
                    failWithDiff("split at pair, first cut", i, got, expected);
                    return;
                }
            }
        }
    }
    const QByteArrayList got = feedByteByByte(input, limits);
    if (got != expected) {
        failWithDiff("byte by byte, size", n, got, expected);
    }
}

} // namespace

class WebSocketFrameTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void parse_data();
    void parse();
    void messageSizeLimit_data();
    void messageSizeLimit();
    void tooBigReportedFromHeaderAlone();
    void maxSizeMessageAccepted();
    void wholeFrameIsAllocatedOnce();
    void bufferedBytesAccounting();
    void failedIgnoresFurtherInput();
    void closeIgnoresFurtherInput();
    void randomStreamInRandomChunks();

    void encodeFrame_data();
    void encodeFrame();
    void appendFrameAppends();
    void encodeParseRoundTrip_data();
    void encodeParseRoundTrip();
    void closePayload_data();
    void closePayload();
    void acceptKey_data();
    void acceptKey();
};

void WebSocketFrameTest::parse_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QByteArrayList>("expected");

    // RFC 6455 §5.7 examples. The unmasked ones are server frames: a server must reject them.
    QTest::newRow("rfc 5.7 masked text Hello")
            << QByteArray::fromHex("818537fa213d7f9f4d5158") << QByteArrayList{ "text:Hello" };
    QTest::newRow("rfc 5.7 unmasked text rejected")
            << QByteArray::fromHex("810548656c6c6f") << QByteArrayList{ "error:1002" };
    QTest::newRow("rfc 5.7 unmasked fragments rejected")
            << QByteArray::fromHex("010348656c80026c6f") << QByteArrayList{ "error:1002" };
    QTest::newRow("rfc 5.7 fragments, masked")
            << clientFrame(0x01, "Hel") + clientFrame(0x80, "lo") << QByteArrayList{ "text:Hello" };
    QTest::newRow("rfc 5.7 unmasked ping rejected")
            << QByteArray::fromHex("890548656c6c6f") << QByteArrayList{ "error:1002" };
    QTest::newRow("rfc 5.7 masked pong Hello")
            << QByteArray::fromHex("8a8537fa213d7f9f4d5158") << QByteArrayList{ "pong:Hello" };
    QTest::newRow("rfc 5.7 256-byte binary (16-bit length), masked")
            << clientFrame(0x82, pattern(256)) << QByteArrayList{ "binary:" + show(pattern(256)) };
    QTest::newRow("rfc 5.7 64KiB binary (64-bit length), masked")
            << clientFrame(0x82, pattern(65536))
            << QByteArrayList{ "binary:" + show(pattern(65536)) };

    // Lengths around the 8-byte unmasking step and the 7/16/64-bit boundaries.
    for (const qsizetype n : { 1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 125, 126, 127, 65535 }) {
        const QByteArray name = "binary of " + QByteArray::number(n) + " bytes";
        QTest::newRow(name.constData()) << clientFrame(0x82, pattern(n, int(n)))
                                        << QByteArrayList{ "binary:" + show(pattern(n, int(n))) };
    }
    QTest::newRow("zero mask key")
            << clientFrame(0x81, "plain", LengthForm::Minimal, QByteArray(4, '\0'))
            << QByteArrayList{ "text:plain" };
    QTest::newRow("empty text") << clientFrame(0x81, "") << QByteArrayList{ "text:" };
    QTest::newRow("empty binary") << clientFrame(0x82, "") << QByteArrayList{ "binary:" };
    QTest::newRow("empty fragments")
            << clientFrame(0x01, "") + clientFrame(0x00, "") + clientFrame(0x80, "")
            << QByteArrayList{ "text:" };
    QTest::newRow("three binary fragments")
            << clientFrame(0x02, "a") + clientFrame(0x00, "bc") + clientFrame(0x80, "def")
            << QByteArrayList{ "binary:abcdef" };
    QTest::newRow("ping and pong between fragments")
            << clientFrame(0x01, "Hel") + clientFrame(0x89, "p1") + clientFrame(0x00, "l")
                    + clientFrame(0x8A, "p2") + clientFrame(0x80, "o")
            << QByteArrayList{ "ping:p1", "pong:p2", "text:Hello" };
    QTest::newRow("several messages in one read")
            << clientFrame(0x81, "one") + clientFrame(0x82, "two") + clientFrame(0x89, "")
                    + clientFrame(0x81, "three")
            << QByteArrayList{ "text:one", "binary:two", "ping:", "text:three" };
    QTest::newRow("non-minimal 16-bit length")
            << clientFrame(0x81, "short", LengthForm::Force16) << QByteArrayList{ "text:short" };
    QTest::newRow("non-minimal 64-bit length")
            << clientFrame(0x81, "short", LengthForm::Force64) << QByteArrayList{ "text:short" };
    QTest::newRow("ping of 125 bytes")
            << clientFrame(0x89, pattern(125)) << QByteArrayList{ "ping:" + show(pattern(125)) };
    QTest::newRow("empty pong") << clientFrame(0x8A, "") << QByteArrayList{ "pong:" };

    // Close frames.
    QTest::newRow("close without code") << clientFrame(0x88, "") << QByteArrayList{ "close:1005:" };
    QTest::newRow("close 1000 with reason")
            << clientFrame(0x88, closeBody(1000, "bye")) << QByteArrayList{ "close:1000:bye" };
    QTest::newRow("close with 123-byte reason")
            << clientFrame(0x88, closeBody(4000, QByteArray(123, 'r')))
            << QByteArrayList{ "close:4000:" + QByteArray(123, 'r') };
    for (const quint16 code : { 1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013,
                                1014, 3000, 3999, 4000, 4999 }) {
        const QByteArray name = "close code " + QByteArray::number(code) + " accepted";
        QTest::newRow(name.constData())
                << clientFrame(0x88, closeBody(code))
                << QByteArrayList{ "close:" + QByteArray::number(code) + ':' };
    }
    for (const quint16 code :
         { 0, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535 }) {
        const QByteArray name = "close code " + QByteArray::number(code) + " rejected";
        QTest::newRow(name.constData())
                << clientFrame(0x88, closeBody(code)) << QByteArrayList{ "error:1002" };
    }
    QTest::newRow("close with 1-byte payload")
            << clientFrame(0x88, "\x03") << QByteArrayList{ "error:1002" };
    QTest::newRow("nothing after close") << clientFrame(0x88, closeBody(1000))
                    + clientFrame(0x81, "late") + QByteArray::fromHex("ffff")
                                         << QByteArrayList{ "close:1000:" };
    QTest::newRow("close drops the unfinished message") << clientFrame(0x01, "Hel")
                    + clientFrame(0x88, closeBody(1001, "away"))
                    + clientFrame(0x80, "lo") << QByteArrayList{ "close:1001:away" };

    // Protocol errors (1002).
    QTest::newRow("RSV1") << clientFrame(0xC1, "x") << QByteArrayList{ "error:1002" };
    QTest::newRow("RSV2") << clientFrame(0xA1, "x") << QByteArrayList{ "error:1002" };
    QTest::newRow("RSV3") << clientFrame(0x91, "x") << QByteArrayList{ "error:1002" };
    for (const quint8 opcode : { 0x3, 0x4, 0x5, 0x6, 0x7, 0xB, 0xC, 0xD, 0xE, 0xF }) {
        const QByteArray name = "opcode " + QByteArray::number(opcode, 16);
        QTest::newRow(name.constData())
                << clientFrame(quint8(0x80 | opcode), "x") << QByteArrayList{ "error:1002" };
    }
    QTest::newRow("ping without FIN") << clientFrame(0x09, "x") << QByteArrayList{ "error:1002" };
    QTest::newRow("pong without FIN") << clientFrame(0x0A, "x") << QByteArrayList{ "error:1002" };
    QTest::newRow("close without FIN")
            << clientFrame(0x08, closeBody(1000)) << QByteArrayList{ "error:1002" };
    QTest::newRow("ping of 126 bytes")
            << clientFrame(0x89, pattern(126)) << QByteArrayList{ "error:1002" };
    QTest::newRow("ping of 5 bytes in 16-bit form")
            << clientFrame(0x89, "hello", LengthForm::Force16) << QByteArrayList{ "error:1002" };
    QTest::newRow("64-bit length with MSB, header only")
            << QByteArray::fromHex("82ff8000000000000000") << QByteArrayList{ "error:1002" };
    QTest::newRow("continuation without message")
            << clientFrame(0x80, "x") << QByteArrayList{ "error:1002" };
    QTest::newRow("non-final continuation without message")
            << clientFrame(0x00, "x") << QByteArrayList{ "error:1002" };
    QTest::newRow("text inside fragmented message")
            << clientFrame(0x01, "a") + clientFrame(0x81, "b") << QByteArrayList{ "error:1002" };
    QTest::newRow("binary inside fragmented message")
            << clientFrame(0x02, "a") + clientFrame(0x02, "b") << QByteArrayList{ "error:1002" };
    QTest::newRow("events before an error are kept, after it dropped")
            << clientFrame(0x81, "a") + clientFrame(0x91, "b") + clientFrame(0x81, "c")
            << QByteArrayList{ "text:a", "error:1002" };
}

void WebSocketFrameTest::parse()
{
    QFETCH(QByteArray, input);
    QFETCH(QByteArrayList, expected);

    WebSocketParser parser;
    Recorder recorder;
    parser.feed(input, recorder);
    QCOMPARE(recorder.events, expected);
    QCOMPARE(parser.failed(), expected.last().startsWith("error:"));
    QCOMPARE(parser.bufferedBytes(), 0);

    checkEverySplit(input, {}, recorder.detailed);
}

void WebSocketFrameTest::messageSizeLimit_data()
{
    QTest::addColumn<int>("maxMessageBytes");
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QByteArrayList>("expected");

    QTest::newRow("at limit") << 10 << clientFrame(0x81, "0123456789")
                              << QByteArrayList{ "text:0123456789" };
    QTest::newRow("one over") << 10 << clientFrame(0x81, "0123456789X")
                              << QByteArrayList{ "error:1009" };
    QTest::newRow("over in 16-bit form")
            << 100 << clientFrame(0x82, pattern(200)) << QByteArrayList{ "error:1009" };
    QTest::newRow("fragments at limit")
            << 10 << clientFrame(0x01, "01234") + clientFrame(0x80, "56789")
            << QByteArrayList{ "text:0123456789" };
    QTest::newRow("fragments one over")
            << 10 << clientFrame(0x01, "01234") + clientFrame(0x80, "56789X")
            << QByteArrayList{ "error:1009" };
    QTest::newRow("control frames do not count")
            << 10
            << clientFrame(0x01, "012345") + clientFrame(0x89, pattern(100))
                    + clientFrame(0x80, "6789")
            << QByteArrayList{ "ping:" + show(pattern(100)), "text:0123456789" };
    QTest::newRow("limit applies per message")
            << 10 << clientFrame(0x81, "0123456789") + clientFrame(0x82, "0123456789")
            << QByteArrayList{ "text:0123456789", "binary:0123456789" };
    QTest::newRow("zero limit, empty message")
            << 0 << clientFrame(0x81, "") << QByteArrayList{ "text:" };
}

void WebSocketFrameTest::messageSizeLimit()
{
    QFETCH(int, maxMessageBytes);
    QFETCH(QByteArray, input);
    QFETCH(QByteArrayList, expected);

    WebSocketParser parser(limitsOf(maxMessageBytes));
    Recorder recorder;
    parser.feed(input, recorder);
    QCOMPARE(recorder.events, expected);
    checkEverySplit(input, limitsOf(maxMessageBytes), recorder.detailed);
}

void WebSocketFrameTest::tooBigReportedFromHeaderAlone()
{
    // Only the 14-byte header of a 5,000,001-byte frame: refused at once, nothing buffered.
    QByteArray header = QByteArray::fromHex("82ff00000000004c4b41") + RfcMask;
    WebSocketParser parser;
    Recorder recorder;
    parser.feed(QByteArrayView(header).first(10), recorder); // mask key not even needed
    QCOMPARE(recorder.events, QByteArrayList{ "error:1009" });
    QVERIFY(parser.failed());
    QCOMPARE(parser.bufferedBytes(), 0);

    // Same for the second fragment of a message that would grow past the limit.
    WebSocketParser fragmented(limitsOf(1000));
    Recorder fragmentedRecorder;
    fragmented.feed(clientFrame(0x02, pattern(600)), fragmentedRecorder);
    QCOMPARE(fragmented.bufferedBytes(), 600);
    fragmented.feed(QByteArrayView(clientFrame(0x80, pattern(401))).first(4), fragmentedRecorder);
    QCOMPARE(fragmentedRecorder.events, QByteArrayList{ "error:1009" });
    QCOMPARE(fragmented.bufferedBytes(), 0);
}

void WebSocketFrameTest::maxSizeMessageAccepted()
{
    const qsizetype size = 5'000'000;
    const QByteArray payload = pattern(size, 5);
    const QByteArray frame =
            clientFrame(0x82, payload, LengthForm::Minimal, QByteArray::fromHex("a1b2c3d4"));
    WebSocketParser parser;
    Recorder recorder;
    for (qsizetype at = 0; at < frame.size(); at += 65536) {
        parser.feed(QByteArrayView(frame).sliced(at, qMin<qsizetype>(65536, frame.size() - at)),
                    recorder);
    }
    QCOMPARE(recorder.messages.size(), 1);
    QVERIFY(recorder.messages.first() == payload);
    QVERIFY(!parser.failed());

    // One byte more is a 1009, even when split in two fragments.
    WebSocketParser over;
    Recorder overRecorder;
    over.feed(clientFrame(0x02, payload), overRecorder);
    over.feed(clientFrame(0x80, "x"), overRecorder);
    QCOMPARE(overRecorder.events, QByteArrayList{ "error:1009" });
}

void WebSocketFrameTest::wholeFrameIsAllocatedOnce()
{
    // A frame that arrives whole is unmasked into one exactly sized buffer.
    for (const qsizetype size : { 5, 1000, 100'000 }) {
        WebSocketParser parser;
        Recorder recorder;
        parser.feed(clientFrame(0x82, pattern(size)), recorder);
        QCOMPARE(recorder.messages.size(), 1);
        QCOMPARE(recorder.messages.first().size(), size);
        QCOMPARE(recorder.messages.first().capacity(), size);
    }
}

void WebSocketFrameTest::bufferedBytesAccounting()
{
    WebSocketParser parser;
    Recorder recorder;
    const QByteArray first = clientFrame(0x01, pattern(300));
    parser.feed(QByteArrayView(first).first(3), recorder); // partial 8-byte header
    QCOMPARE(parser.bufferedBytes(), 3);
    parser.feed(QByteArrayView(first).sliced(3, 5), recorder); // header complete
    QCOMPARE(parser.bufferedBytes(), 0);
    parser.feed(QByteArrayView(first).sliced(8, 100), recorder);
    QCOMPARE(parser.bufferedBytes(), 100);
    parser.feed(QByteArrayView(first).sliced(108), recorder); // first fragment complete
    QCOMPARE(parser.bufferedBytes(), 300);
    const QByteArray ping = clientFrame(0x89, "ping!");
    parser.feed(QByteArrayView(ping).first(8), recorder); // control payload in progress
    QCOMPARE(parser.bufferedBytes(), 302);
    parser.feed(QByteArrayView(ping).sliced(8), recorder);
    QCOMPARE(parser.bufferedBytes(), 300);
    parser.feed(clientFrame(0x80, "end"), recorder);
    QCOMPARE(parser.bufferedBytes(), 0);
    QCOMPARE(recorder.events,
             (QByteArrayList{ "ping:ping!", "text:" + show(pattern(300) + "end") }));
}

void WebSocketFrameTest::failedIgnoresFurtherInput()
{
    WebSocketParser parser;
    Recorder recorder;
    parser.feed(clientFrame(0x02, pattern(50)), recorder);
    parser.feed(clientFrame(0xC2, "x"), recorder);
    QVERIFY(parser.failed());
    QCOMPARE(parser.bufferedBytes(), 0);
    parser.feed(clientFrame(0x81, "ignored"), recorder);
    parser.feed(clientFrame(0x88, ""), recorder);
    QCOMPARE(recorder.events, QByteArrayList{ "error:1002" });
    QVERIFY(parser.failed());
}

void WebSocketFrameTest::closeIgnoresFurtherInput()
{
    WebSocketParser parser;
    Recorder recorder;
    parser.feed(clientFrame(0x88, closeBody(1000)), recorder);
    QVERIFY(parser.closeReceived());
    QVERIFY(!parser.failed());
    parser.feed(clientFrame(0x81, "ignored"), recorder);
    parser.feed(QByteArray::fromHex("ff"), recorder); // not even an error any more
    QCOMPARE(recorder.events, QByteArrayList{ "close:1000:" });
    QVERIFY(!parser.failed());
    QCOMPARE(parser.bufferedBytes(), 0);
}

void WebSocketFrameTest::randomStreamInRandomChunks()
{
    // Seeded: a long stream of fragmented messages with interleaved control frames and random
    // mask keys, cut into random chunks, must decode to exactly the messages that were framed.
    QRandomGenerator rng(6455);
    auto randomBytes = [&rng](qsizetype size) {
        QByteArray out(size, Qt::Uninitialized);
        for (qsizetype i = 0; i < size; ++i) {
            out[i] = char(rng.bounded(256));
        }
        return out;
    };
    auto randomSize = [&rng]() -> qsizetype {
        const int bucket = rng.bounded(100);
        if (bucket < 60) {
            return rng.bounded(20);
        }
        if (bucket < 90) {
            return 100 + rng.bounded(300);
        }
        return 60'000 + rng.bounded(10'000);
    };

    QByteArray stream;
    QByteArrayList expected;
    for (int m = 0; m < 200; ++m) {
        const bool text = rng.bounded(2) == 0;
        const int fragments = 1 + rng.bounded(4);
        QByteArray message;
        for (int f = 0; f < fragments; ++f) {
            const QByteArray part = randomBytes(randomSize());
            const quint8 b0 =
                    quint8((f == fragments - 1 ? 0x80 : 0) | (f == 0 ? (text ? 1 : 2) : 0));
            stream += clientFrame(b0, part, LengthForm::Minimal, randomBytes(4));
            message += part;
            if (f == fragments - 1) {
                expected.append((text ? "text:" : "binary:") + show(message));
            }
            if (rng.bounded(4) == 0) {
                const QByteArray ping = randomBytes(rng.bounded(126));
                stream += clientFrame(0x89, ping, LengthForm::Minimal, randomBytes(4));
                expected.append("ping:" + show(ping));
            }
        }
    }

    for (const int maxChunk : { 1, 7, 4096, 70'000 }) {
        WebSocketParser parser;
        Recorder recorder;
        qsizetype at = 0;
        while (at < stream.size()) {
            const qsizetype chunk = qMin<qsizetype>(1 + rng.bounded(maxChunk), stream.size() - at);
            parser.feed(QByteArrayView(stream).sliced(at, chunk), recorder);
            at += chunk;
        }
        QCOMPARE(recorder.events.size(), expected.size());
        QVERIFY(recorder.events == expected);
        QCOMPARE(parser.bufferedBytes(), 0);
    }
}

void WebSocketFrameTest::encodeFrame_data()
{
    QTest::addColumn<int>("opcode");
    QTest::addColumn<QByteArray>("payload");
    QTest::addColumn<QByteArray>("expectedHeader");

    // RFC 6455 §5.7 server frames, byte for byte.
    QTest::newRow("rfc text Hello")
            << int(WsOpcode::Text) << QByteArray("Hello") << QByteArray::fromHex("8105");
    QTest::newRow("rfc ping Hello")
            << int(WsOpcode::Ping) << QByteArray("Hello") << QByteArray::fromHex("8905");
    QTest::newRow("rfc 256 binary")
            << int(WsOpcode::Binary) << pattern(256) << QByteArray::fromHex("827e0100");
    QTest::newRow("rfc 64KiB binary") << int(WsOpcode::Binary) << pattern(65536)
                                      << QByteArray::fromHex("827f0000000000010000");
    // Minimal length encoding at each boundary.
    QTest::newRow("empty text") << int(WsOpcode::Text) << QByteArray()
                                << QByteArray::fromHex("8100");
    QTest::newRow("125") << int(WsOpcode::Binary) << pattern(125) << QByteArray::fromHex("827d");
    QTest::newRow("126") << int(WsOpcode::Binary) << pattern(126)
                         << QByteArray::fromHex("827e007e");
    QTest::newRow("65535") << int(WsOpcode::Binary) << pattern(65535)
                           << QByteArray::fromHex("827effff");
    QTest::newRow("close") << int(WsOpcode::Close) << closeBody(1000)
                           << QByteArray::fromHex("8802");
    QTest::newRow("pong") << int(WsOpcode::Pong) << QByteArray() << QByteArray::fromHex("8a00");
}

void WebSocketFrameTest::encodeFrame()
{
    QFETCH(int, opcode);
    QFETCH(QByteArray, payload);
    QFETCH(QByteArray, expectedHeader);

    const QByteArray frame = rt::wire::encodeFrame(WsOpcode(opcode), payload);
    QCOMPARE(frame.first(expectedHeader.size()).toHex(), expectedHeader.toHex());
    QVERIFY(frame.sliced(expectedHeader.size()) == payload);
}

void WebSocketFrameTest::appendFrameAppends()
{
    QByteArray out("prefix");
    rt::wire::appendFrame(out, WsOpcode::Text, "Hello");
    rt::wire::appendFrame(out, WsOpcode::Binary, pattern(300));
    QCOMPARE(out,
             QByteArray("prefix") + QByteArray::fromHex("810548656c6c6f")
                     + QByteArray::fromHex("827e012c") + pattern(300));
}

void WebSocketFrameTest::encodeParseRoundTrip_data()
{
    QTest::addColumn<int>("opcode");
    QTest::addColumn<int>("size");
    for (const int size : { 0, 1, 125, 126, 65535, 65536, 70000 }) {
        QTest::addRow("binary %d", size) << int(WsOpcode::Binary) << size;
        QTest::addRow("text %d", size) << int(WsOpcode::Text) << size;
    }
    QTest::addRow("ping 125") << int(WsOpcode::Ping) << 125;
}

void WebSocketFrameTest::encodeParseRoundTrip()
{
    QFETCH(int, opcode);
    QFETCH(int, size);

    const QByteArray payload = pattern(size, 9);
    const QByteArray frame = maskServerFrame(rt::wire::encodeFrame(WsOpcode(opcode), payload),
                                             QByteArray::fromHex("01020304"));
    WebSocketParser parser;
    Recorder recorder;
    parser.feed(frame, recorder);
    QCOMPARE(recorder.events.size(), 1);
    if (WsOpcode(opcode) == WsOpcode::Ping) {
        QCOMPARE(recorder.events.first(), QByteArray("ping:" + show(payload)));
    } else {
        QCOMPARE(recorder.messages.size(), 1);
        QVERIFY(recorder.messages.first() == payload);
    }
}

void WebSocketFrameTest::closePayload_data()
{
    QTest::addColumn<int>("code");
    QTest::addColumn<QByteArray>("reason");
    QTest::addColumn<QByteArray>("expected");

    const QByteArray a121(121, 'a');
    QTest::newRow("code only") << 1000 << QByteArray() << QByteArray::fromHex("03e8");
    QTest::newRow("code and reason")
            << 1012 << QByteArray("restart") << QByteArray::fromHex("03f4") + "restart";
    QTest::newRow("123 bytes kept")
            << 4000 << QByteArray(123, 'r') << QByteArray::fromHex("0fa0") + QByteArray(123, 'r');
    QTest::newRow("124 bytes cut to 123")
            << 4000 << QByteArray(124, 'r') << QByteArray::fromHex("0fa0") + QByteArray(123, 'r');
    // "é" is c3 a9, "€" is e2 82 ac, "😀" is f0 9f 98 80.
    QTest::newRow("2-byte sequence across the cut")
            << 1000 << QByteArray(122, 'a') + "\xc3\xa9"
            << QByteArray::fromHex("03e8") + QByteArray(122, 'a');
    QTest::newRow("3-byte sequence across the cut")
            << 1000 << a121 + "\xe2\x82\xac" << QByteArray::fromHex("03e8") + a121;
    QTest::newRow("4-byte sequence across the cut")
            << 1000 << QByteArray(120, 'a') + "\xf0\x9f\x98\x80"
            << QByteArray::fromHex("03e8") + QByteArray(120, 'a');
    QTest::newRow("sequence ending at the cut kept")
            << 1000 << a121 + "\xc3\xa9" + "xyz" << QByteArray::fromHex("03e8") + a121 + "\xc3\xa9";
    QTest::newRow("not UTF-8: at most 3 bytes given back")
            << 1000 << QByteArray(200, '\x80')
            << QByteArray::fromHex("03e8") + QByteArray(120, '\x80');
}

void WebSocketFrameTest::closePayload()
{
    QFETCH(int, code);
    QFETCH(QByteArray, reason);
    QFETCH(QByteArray, expected);

    const QByteArray payload = rt::wire::closePayload(quint16(code), reason);
    QCOMPARE(payload.toHex(), expected.toHex());
    QVERIFY(payload.size() <= 125);
}

void WebSocketFrameTest::acceptKey_data()
{
    QTest::addColumn<QByteArray>("key");
    QTest::addColumn<QByteArray>("accept");
    QTest::newRow("rfc 6455 4.2.2")
            << QByteArray("dGhlIHNhbXBsZSBub25jZQ==") << QByteArray("s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
    // A second value, computed independently (Python hashlib):
    // base64(sha1("x3JJHMbDL1EzLkh9GBhXDw==258EAFA5-E914-47DA-95CA-C5AB0DC85B11")).
    QTest::newRow("wikipedia example")
            << QByteArray("x3JJHMbDL1EzLkh9GBhXDw==") << QByteArray("HSmrc0sMlYUkAGmm5OPpG2HaGWk=");
}

void WebSocketFrameTest::acceptKey()
{
    QFETCH(QByteArray, key);
    QFETCH(QByteArray, accept);
    QCOMPARE(rt::wire::websocketAcceptKey(key), accept);
}

QTEST_GUILESS_MAIN(WebSocketFrameTest)
#include "tst_websocket_frame.moc"
