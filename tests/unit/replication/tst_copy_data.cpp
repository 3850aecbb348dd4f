// Tests of the streaming replication CopyData framing: XLogData and keepalive parsing (with every
// truncation of a real message rejected), the 34-byte standby status update byte for byte, and
// the "X/Y" LSN text format.
#include "server/replication/copy_data.h"

#include <QDateTime>
#include <QTest>

using rt::replication::CopyDataError;
using rt::replication::PrimaryKeepalive;
using rt::replication::StandbyStatusUpdate;
using rt::replication::XLogData;

namespace {

QByteArray hex(const char *text)
{
    return QByteArray::fromHex(QByteArray(text));
}

// 'w', start 0/16B3748 , end 0/16B3790, send time 0x0002B3F1A2C5D6E7, payload "BEGIN".
QByteArray sampleXLogData()
{
    return 'w' + hex("00000000016B3748") + hex("00000000016B3790") + hex("0002B3F1A2C5D6E7")
            + QByteArrayLiteral("Bpayload");
}

// 'k', walEnd 1/2, time 0x0102030405060708, reply requested.
QByteArray sampleKeepalive()
{
    return 'k' + hex("0000000100000002") + hex("0102030405060708") + '\1';
}

} // namespace

class CopyDataTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void parsesXLogData();
    void parsesXLogDataWithEmptyPayload();
    void parsesKeepalive();
    void keepaliveIgnoresTrailingBytes();
    void rejectsEveryTruncation_data();
    void rejectsEveryTruncation();
    void rejectsEmptyAndUnknown();
    void buildsStandbyStatusUpdate();
    void postgresEpoch();
    void formatsLsn_data();
    void formatsLsn();
    void rejectsBadLsn_data();
    void rejectsBadLsn();
};

void CopyDataTest::parsesXLogData()
{
    const QByteArray bytes = sampleXLogData();
    const auto parsed = rt::replication::parseCopyData(bytes);
    QVERIFY(parsed.ok());
    const auto *data = std::get_if<XLogData>(&*parsed);
    QVERIFY(data != nullptr);
    QCOMPARE(data->walStart, quint64(0x16B3748));
    QCOMPARE(data->walEnd, quint64(0x16B3790));
    QCOMPARE(data->serverTimeMicros, qint64(0x0002B3F1A2C5D6E7));
    QCOMPARE(data->payload.toByteArray(), QByteArrayLiteral("Bpayload"));
    // A view into the caller's buffer, not a copy.
    QCOMPARE(data->payload.data(), bytes.constData() + 25);
}

void CopyDataTest::parsesXLogDataWithEmptyPayload()
{
    const QByteArray bytes = sampleXLogData().first(25);
    const auto parsed = rt::replication::parseCopyData(bytes);
    QVERIFY(parsed.ok());
    const auto *data = std::get_if<XLogData>(&*parsed);
    QVERIFY(data != nullptr);
    QVERIFY(data->payload.isEmpty());
}

void CopyDataTest::parsesKeepalive()
{
    const auto parsed = rt::replication::parseCopyData(sampleKeepalive());
    QVERIFY(parsed.ok());
    const auto *keepalive = std::get_if<PrimaryKeepalive>(&*parsed);
    QVERIFY(keepalive != nullptr);
    QCOMPARE(keepalive->walEnd, (quint64(1) << 32) | 2);
    QCOMPARE(keepalive->serverTimeMicros, qint64(0x0102030405060708));
    QVERIFY(keepalive->replyRequested);

    QByteArray noReply = sampleKeepalive();
    noReply[17] = '\0';
    const auto second = rt::replication::parseCopyData(noReply);
    QVERIFY(second.ok());
    QVERIFY(!std::get<PrimaryKeepalive>(*second).replyRequested);
}

void CopyDataTest::keepaliveIgnoresTrailingBytes()
{
    const auto parsed = rt::replication::parseCopyData(QByteArray(sampleKeepalive() + "future"));
    QVERIFY(parsed.ok());
    QCOMPARE(std::get<PrimaryKeepalive>(*parsed).walEnd, (quint64(1) << 32) | 2);
}

void CopyDataTest::rejectsEveryTruncation_data()
{
    QTest::addColumn<QByteArray>("bytes");
    const QByteArray xlog = sampleXLogData();
    for (int size = 1; size < 25; ++size) {
        QTest::addRow("w, %d bytes", size) << xlog.first(size);
    }
    const QByteArray keepalive = sampleKeepalive();
    for (int size = 1; size < 18; ++size) {
        QTest::addRow("k, %d bytes", size) << keepalive.first(size);
    }
}

void CopyDataTest::rejectsEveryTruncation()
{
    QFETCH(QByteArray, bytes);
    const auto parsed = rt::replication::parseCopyData(bytes);
    QVERIFY(!parsed.ok());
    QCOMPARE(parsed.error().code, CopyDataError::Code::Truncated);
    QVERIFY2(parsed.error().message.contains(QString::number(bytes.size())),
             qPrintable(parsed.error().message));
}

void CopyDataTest::rejectsEmptyAndUnknown()
{
    const auto empty = rt::replication::parseCopyData(QByteArrayView());
    QVERIFY(!empty.ok());
    QCOMPARE(empty.error().code, CopyDataError::Code::Empty);

    // 'r' is what we send, never what the server sends; 'd' is a CopyData tag, not a body.
    for (const char type : { 'r', 'd', '\0', '\xff' }) {
        QByteArray bytes = sampleXLogData();
        bytes[0] = type;
        const auto parsed = rt::replication::parseCopyData(bytes);
        QVERIFY(!parsed.ok());
        QCOMPARE(parsed.error().code, CopyDataError::Code::UnknownType);
        QVERIFY(!parsed.error().message.isEmpty());
    }
}

void CopyDataTest::buildsStandbyStatusUpdate()
{
    StandbyStatusUpdate update;
    update.writeLsn = 0x0000000116B37480;
    update.flushLsn = 0x0000000116B37470;
    update.applyLsn = 0x0000000116B37460;
    update.clockMicros = 0x0002B3F1A2C5D6E7;
    update.replyRequested = false;
    const QByteArray bytes = rt::replication::buildStandbyStatusUpdate(update);
    QCOMPARE(bytes.size(), rt::replication::StandbyStatusUpdateSize);
    QCOMPARE(bytes.size(), 34);
    QCOMPARE(bytes.toHex(),
             QByteArrayLiteral("72"
                               "0000000116b37480"
                               "0000000116b37470"
                               "0000000116b37460"
                               "0002b3f1a2c5d6e7"
                               "00"));
    update.replyRequested = true;
    QCOMPARE(rt::replication::buildStandbyStatusUpdate(update).back(), '\1');
}

void CopyDataTest::postgresEpoch()
{
    // 2000-01-01 00:00 UTC is 0; one second later is 1e6.
    QCOMPARE(rt::replication::postgresEpochMicrosFromUnixMs(946'684'800'000), qint64(0));
    QCOMPARE(rt::replication::postgresEpochMicrosFromUnixMs(946'684'801'000), qint64(1'000'000));
    const qint64 now = rt::replication::postgresEpochMicros();
    const qint64 expected =
            rt::replication::postgresEpochMicrosFromUnixMs(QDateTime::currentMSecsSinceEpoch());
    QVERIFY2(qAbs(now - expected) < 5'000'000, qPrintable(QString::number(now - expected)));
}

void CopyDataTest::formatsLsn_data()
{
    QTest::addColumn<quint64>("lsn");
    QTest::addColumn<QByteArray>("text");
    QTest::newRow("invalid") << quint64(0) << QByteArrayLiteral("0/0");
    QTest::newRow("low half") << quint64(0x16B3748) << QByteArrayLiteral("0/16B3748");
    QTest::newRow("both halves") << quint64(0x16B374D848) << QByteArrayLiteral("16/B374D848");
    QTest::newRow("maximum") << ~quint64(0) << QByteArrayLiteral("FFFFFFFF/FFFFFFFF");
    QTest::newRow("high only") << (quint64(1) << 32) << QByteArrayLiteral("1/0");
}

void CopyDataTest::formatsLsn()
{
    QFETCH(quint64, lsn);
    QFETCH(QByteArray, text);
    QCOMPARE(rt::replication::formatLsn(lsn), text);
    const auto parsed = rt::replication::parseLsn(text);
    QVERIFY(parsed.has_value());
    QCOMPARE(*parsed, lsn);
    const auto lower = rt::replication::parseLsn(text.toLower());
    QVERIFY(lower.has_value());
    QCOMPARE(*lower, lsn);
}

void CopyDataTest::rejectsBadLsn_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::newRow("empty") << QByteArray();
    QTest::newRow("no slash") << QByteArrayLiteral("16B374D848");
    QTest::newRow("empty high") << QByteArrayLiteral("/1");
    QTest::newRow("empty low") << QByteArrayLiteral("1/");
    QTest::newRow("two slashes") << QByteArrayLiteral("1/2/3");
    QTest::newRow("nine digits") << QByteArrayLiteral("1/123456789");
    QTest::newRow("not hex") << QByteArrayLiteral("1/G");
    QTest::newRow("space") << QByteArrayLiteral("1/ 2");
    QTest::newRow("sign") << QByteArrayLiteral("-1/2");
    QTest::newRow("0x prefix") << QByteArrayLiteral("0x1/2");
}

void CopyDataTest::rejectsBadLsn()
{
    QFETCH(QByteArray, text);
    QVERIFY(!rt::replication::parseLsn(text).has_value());
}

QTEST_APPLESS_MAIN(CopyDataTest)
#include "tst_copy_data.moc"
