// /proc/loadavg parsing: the 5-minute figure from real-looking lines, nullopt for anything else.
#include "server/cluster/placement/load_average.h"

#include <QTest>

using namespace rt::cluster::placement;

class LoadAverageTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void parses_data();
    void parses();
    void rejects_data();
    void rejects();
    void readsThisMachine();
};

void LoadAverageTest::parses_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<double>("expected");
    QTest::newRow("typical") << QByteArray("0.52 0.58 0.59 1/467 12345\n") << 0.58;
    QTest::newRow("no newline") << QByteArray("1.00 2.50 3.00 2/100 99") << 2.5;
    QTest::newRow("idle") << QByteArray("0.00 0.00 0.00 1/1 1\n") << 0.0;
    QTest::newRow("busy") << QByteArray("123.45 67.89 10.11 50/900 4242\n") << 67.89;
    QTest::newRow("three fields") << QByteArray("0.1 0.2 0.3") << 0.2;
    QTest::newRow("extra spaces") << QByteArray("  0.1\t 0.25  0.3  1/2 3 \n") << 0.25;
    QTest::newRow("integers") << QByteArray("1 2 3 1/2 3") << 2.0;
}

void LoadAverageTest::parses()
{
    QFETCH(QByteArray, text);
    QFETCH(double, expected);
    const auto load = parseLoadAverage5(text);
    QVERIFY(load.has_value());
    QCOMPARE(*load, expected);
}

void LoadAverageTest::rejects_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::newRow("empty") << QByteArray();
    QTest::newRow("blank") << QByteArray(" \n");
    QTest::newRow("two fields") << QByteArray("0.1 0.2");
    QTest::newRow("letters") << QByteArray("a b c d e");
    QTest::newRow("negative") << QByteArray("0.1 -0.2 0.3 1/2 3");
    QTest::newRow("nan") << QByteArray("0.1 nan 0.3 1/2 3");
    QTest::newRow("inf") << QByteArray("0.1 inf 0.3 1/2 3");
    QTest::newRow("exponent") << QByteArray("0.1 1e308 0.3 1/2 3");
    QTest::newRow("two dots") << QByteArray("0.1 0.2.3 0.3 1/2 3");
    QTest::newRow("lone dot") << QByteArray("0.1 . 0.3 1/2 3");
    QTest::newRow("bad third") << QByteArray("0.1 0.2 x 1/2 3");
    QTest::newRow("nul inside") << QByteArray("0.1 0\0002 0.3", 12);
    QTest::newRow("huge") << QByteArray(4096, '1');
    QTest::newRow("long field") << QByteArray("0.1 " + QByteArray(40, '9') + " 0.3");
}

void LoadAverageTest::rejects()
{
    QFETCH(QByteArray, text);
    QCOMPARE(parseLoadAverage5(text), std::nullopt);
}

void LoadAverageTest::readsThisMachine()
{
    // The build machines run Linux: /proc/loadavg exists and parses.
    const auto load = readLoadAverage5();
    QVERIFY(load.has_value());
    QVERIFY(*load >= 0);
}

QTEST_GUILESS_MAIN(LoadAverageTest)
#include "tst_load_average.moc"
