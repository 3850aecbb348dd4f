// The node-link frame codec: round trips, input split at every position, several frames per
// feed, limits (the exact maximum passes, one byte more is refused before any payload
// arrives), kind 0 garbage, and that errors are sticky.
#include "server/cluster/links/frame_codec.h"

#include <QRandomGenerator>
#include <QTest>

using namespace rt::cluster::links;

namespace {

QList<Frame> drain(FrameDecoder &decoder)
{
    QList<Frame> frames;
    while (auto frame = decoder.next()) {
        frames.append(*frame);
    }
    return frames;
}

QByteArray samplePayload(qsizetype size, quint32 seed)
{
    QByteArray bytes(size, Qt::Uninitialized);
    QRandomGenerator rng(seed);
    for (char &c : bytes) {
        c = static_cast<char>(rng.bounded(256));
    }
    return bytes;
}

} // namespace

class FrameCodecTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void headerLayout();
    void roundTrip_data();
    void roundTrip();
    void splitAtEveryPosition();
    void manyFramesInOneFeed();
    void randomChunking();
    void exactLimitPasses();
    void oversizedRejectedBeforePayload();
    void kindZeroIsGarbage();
    void errorsAreSticky();
    void emptyFeedIsHarmless();
};

void FrameCodecTest::headerLayout()
{
    const QByteArray frame = encodeFrame(0x42, QByteArrayView("abc"));
    QCOMPARE(frame,
             QByteArray("\x00\x00\x00\x03\x42"
                        "abc",
                        8));
    QCOMPARE(encodeFrameHeader(16, 0x01020304), QByteArray("\x01\x02\x03\x04\x10", 5));
    QVERIFY(isControlKind(1));
    QVERIFY(isControlKind(15));
    QVERIFY(!isControlKind(0));
    QVERIFY(!isControlKind(FirstApplicationKind));
}

void FrameCodecTest::roundTrip_data()
{
    QTest::addColumn<int>("kind");
    QTest::addColumn<QByteArray>("payload");
    QTest::newRow("empty payload") << 16 << QByteArray();
    QTest::newRow("one byte") << 200 << QByteArray("x");
    QTest::newRow("binary") << 255 << samplePayload(1000, 7);
    QTest::newRow("control") << 1 << QByteArray("hello");
    QTest::newRow("1 MiB") << 17 << samplePayload(1024 * 1024, 9);
}

void FrameCodecTest::roundTrip()
{
    QFETCH(int, kind);
    QFETCH(QByteArray, payload);
    FrameDecoder decoder;
    decoder.feed(encodeFrame(static_cast<quint8>(kind), payload));
    const auto frame = decoder.next();
    QVERIFY(frame.has_value());
    QCOMPARE(frame->kind, kind);
    QCOMPARE(frame->payload, payload);
    QVERIFY(!decoder.next().has_value());
    QVERIFY(!decoder.hasError());
    QCOMPARE(decoder.bufferedBytes(), 0);
}

void FrameCodecTest::splitAtEveryPosition()
{
    QByteArray stream = encodeFrame(16, QByteArrayView("first"));
    stream += encodeFrame(17, QByteArrayView());
    stream += encodeFrame(18, samplePayload(40, 1));
    for (qsizetype cut = 0; cut <= stream.size(); ++cut) {
        for (qsizetype cut2 = cut; cut2 <= stream.size(); cut2 += 3) {
            FrameDecoder decoder;
            QList<Frame> frames;
            decoder.feed(QByteArrayView(stream).first(cut));
            frames += drain(decoder);
            decoder.feed(QByteArrayView(stream).sliced(cut, cut2 - cut));
            frames += drain(decoder);
            decoder.feed(QByteArrayView(stream).sliced(cut2));
            frames += drain(decoder);
            QCOMPARE(frames.size(), 3);
            QCOMPARE(frames[0].payload, QByteArray("first"));
            QCOMPARE(frames[1].kind, 17);
            QVERIFY(frames[1].payload.isEmpty());
            QCOMPARE(frames[2].payload, samplePayload(40, 1));
            QVERIFY(!decoder.hasError());
        }
    }
}

void FrameCodecTest::manyFramesInOneFeed()
{
    QByteArray stream;
    for (int i = 0; i < 1000; ++i) {
        stream += encodeFrame(static_cast<quint8>(16 + i % 200), QByteArray::number(i));
    }
    FrameDecoder decoder;
    decoder.feed(stream);
    const QList<Frame> frames = drain(decoder);
    QCOMPARE(frames.size(), 1000);
    for (int i = 0; i < 1000; ++i) {
        QCOMPARE(frames[i].kind, 16 + i % 200);
        QCOMPARE(frames[i].payload, QByteArray::number(i));
    }
}

void FrameCodecTest::randomChunking()
{
    QRandomGenerator rng(1234);
    QList<QByteArray> payloads;
    QByteArray stream;
    for (int i = 0; i < 200; ++i) {
        payloads.append(samplePayload(rng.bounded(5000), static_cast<quint32>(i)));
        stream += encodeFrame(16, payloads.last());
    }
    FrameDecoder decoder;
    QList<Frame> frames;
    qsizetype position = 0;
    while (position < stream.size()) {
        const qsizetype chunk = qMin<qsizetype>(1 + rng.bounded(3000), stream.size() - position);
        decoder.feed(QByteArrayView(stream).sliced(position, chunk));
        position += chunk;
        frames += drain(decoder);
        // Never more buffered than one frame plus one chunk.
        QVERIFY(decoder.bufferedBytes() <= 5000 + FrameHeaderBytes + 3000);
    }
    QCOMPARE(frames.size(), payloads.size());
    for (int i = 0; i < payloads.size(); ++i) {
        QCOMPARE(frames[i].payload, payloads[i]);
    }
}

void FrameCodecTest::exactLimitPasses()
{
    FrameDecoder decoder(64);
    decoder.feed(encodeFrame(16, QByteArray(64, 'a')));
    const auto frame = decoder.next();
    QVERIFY(frame.has_value());
    QCOMPARE(frame->payload.size(), 64);
    QCOMPARE(decoder.maxPayloadBytes(), 64U);
}

void FrameCodecTest::oversizedRejectedBeforePayload()
{
    FrameDecoder decoder(64);
    // Only the header of a 65-byte frame: refused without waiting for the payload.
    decoder.feed(encodeFrameHeader(16, 65));
    QVERIFY(!decoder.next().has_value());
    QVERIFY(decoder.hasError());
    QCOMPARE(decoder.error()->code, FrameErrorCode::TooLarge);
    QVERIFY2(decoder.error()->message.contains(u"65"), qPrintable(decoder.error()->message));

    // The default limit is 16 MiB; a 4 GiB announcement is refused at once.
    FrameDecoder defaults;
    defaults.feed(QByteArray("\xff\xff\xff\xff\x10", 5));
    QVERIFY(!defaults.next().has_value());
    QCOMPARE(defaults.error()->code, FrameErrorCode::TooLarge);
    QCOMPARE(defaults.bufferedBytes(), 0);
}

void FrameCodecTest::kindZeroIsGarbage()
{
    FrameDecoder decoder;
    decoder.feed(QByteArray(64, '\0'));
    QVERIFY(!decoder.next().has_value());
    QCOMPARE(decoder.error()->code, FrameErrorCode::InvalidKind);

    // An HTTP request on the link port: "GET " announces ~1.2 GB.
    FrameDecoder http;
    http.feed(QByteArrayView("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
    QVERIFY(!http.next().has_value());
    QCOMPARE(http.error()->code, FrameErrorCode::TooLarge);
}

void FrameCodecTest::errorsAreSticky()
{
    FrameDecoder decoder(10);
    decoder.feed(encodeFrame(16, QByteArrayView("ok")));
    decoder.feed(encodeFrameHeader(16, 11));
    decoder.feed(encodeFrame(16, QByteArrayView("after")));
    const auto first = decoder.next();
    QVERIFY(first.has_value());
    QCOMPARE(first->payload, QByteArray("ok"));
    QVERIFY(!decoder.next().has_value());
    QVERIFY(decoder.hasError());
    decoder.feed(encodeFrame(16, QByteArrayView("more")));
    QVERIFY(!decoder.next().has_value());
    QCOMPARE(decoder.bufferedBytes(), 0);
}

void FrameCodecTest::emptyFeedIsHarmless()
{
    FrameDecoder decoder;
    decoder.feed(QByteArrayView());
    QVERIFY(!decoder.next().has_value());
    QVERIFY(!decoder.hasError());
    decoder.feed(QByteArrayView("\x00\x00", 2));
    QVERIFY(!decoder.next().has_value());
    QCOMPARE(decoder.bufferedBytes(), 2);
}

QTEST_GUILESS_MAIN(FrameCodecTest)
#include "tst_frame_codec.moc"
