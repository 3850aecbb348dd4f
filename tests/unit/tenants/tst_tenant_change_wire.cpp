#include "server/tenants/tenant_change_wire.h"

#include <QTest>

using namespace rt::tenants::change_wire;

// The "tenant written" node-link message: the exact bytes of version 1, the round trip, and a
// clear error for every malformed payload a peer could send.
class TenantChangeWireTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void encodesVersionThenId();
    void roundTrips_data();
    void roundTrips();
    void refusesMalformedPayloads_data();
    void refusesMalformedPayloads();
};

void TenantChangeWireTest::encodesVersionThenId()
{
    QCOMPARE(encode("scale3"), QByteArray("\x01scale3"));
}

void TenantChangeWireTest::roundTrips_data()
{
    QTest::addColumn<QByteArray>("id");
    QTest::newRow("ascii") << QByteArray("realtime-dev");
    QTest::newRow("one byte") << QByteArray("a");
    QTest::newRow("utf-8") << QByteArray("gr\xc3\xbc\xc3\x9f"
                                         "e");
    QTest::newRow("longest") << QByteArray(MaxIdBytes, 'x');
}

void TenantChangeWireTest::roundTrips()
{
    QFETCH(QByteArray, id);
    const auto decoded = decode(encode(id));
    QVERIFY2(decoded.ok(), qPrintable(decoded.ok() ? QString() : decoded.error().message));
    QCOMPARE(*decoded, id);
}

void TenantChangeWireTest::refusesMalformedPayloads_data()
{
    QTest::addColumn<QByteArray>("payload");
    QTest::addColumn<QString>("message");
    QTest::newRow("empty") << QByteArray() << QStringLiteral("tenant change: empty payload");
    QTest::newRow("version 2") << QByteArray("\x02scale3")
                               << QStringLiteral("tenant change: unknown version 2");
    QTest::newRow("version 0") << QByteArray("\x00scale3", 7)
                               << QStringLiteral("tenant change: unknown version 0");
    QTest::newRow("no id") << QByteArray("\x01")
                           << QStringLiteral("tenant change: external id of 0 bytes");
    QTest::newRow("overlong") << QByteArray("\x01") + QByteArray(MaxIdBytes + 1, 'x')
                              << QStringLiteral("tenant change: external id of 1025 bytes");
    QTest::newRow("not utf-8") << QByteArray("\x01"
                                             "ab\xff")
                               << QStringLiteral("tenant change: external id is not UTF-8");
    QTest::newRow("surrogate") << QByteArray("\x01\xed\xa0\x80")
                               << QStringLiteral("tenant change: external id is not UTF-8");
}

void TenantChangeWireTest::refusesMalformedPayloads()
{
    QFETCH(QByteArray, payload);
    QFETCH(QString, message);
    const auto decoded = decode(payload);
    QVERIFY(!decoded.ok());
    QCOMPARE(decoded.error().message, message);
}

QTEST_GUILESS_MAIN(TenantChangeWireTest)
#include "tst_tenant_change_wire.moc"
