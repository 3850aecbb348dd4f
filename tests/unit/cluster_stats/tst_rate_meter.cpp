// Rates from running totals: nothing on the first sample, differences over the window after,
// keys new since the baseline counted from 0, and counter resets read as 0.
#include "server/cluster/stats/rate_meter.h"

#include <QTest>

using rt::cluster::stats::RateMeter;

class TestRateMeter : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void firstSampleHasNoRate()
    {
        RateMeter meter(2000);
        const auto rates = meter.update(0, { { "a", 100 } });
        QCOMPARE(rates.value("a"), 0.0);
        QCOMPARE(rates.size(), qsizetype(1));
    }

    void differencesOverTheWindow()
    {
        RateMeter meter(2000);
        meter.update(0, { { "a", 0 } });
        QCOMPARE(meter.update(500, { { "a", 50 } }).value("a"), 100.0);
        QCOMPARE(meter.update(1000, { { "a", 100 } }).value("a"), 100.0);
        QCOMPARE(meter.update(2000, { { "a", 200 } }).value("a"), 100.0);
        // The baseline moves on (the newest sample at least 2 s old): a quiet half second after
        // a busy window still shows traffic, (200 - 50) / 2 s, then (200 - 100) / 2 s.
        QCOMPARE(meter.update(2500, { { "a", 200 } }).value("a"), 150.0 / 2.0);
        QCOMPARE(meter.update(3000, { { "a", 200 } }).value("a"), 100.0 / 2.0);
        QCOMPARE(meter.update(5000, { { "a", 200 } }).value("a"), 0.0);
    }

    void newKeysStartFromZeroAndResetsReadAsZero()
    {
        RateMeter meter(1000);
        meter.update(0, { { "a", 10 } });
        const auto rates = meter.update(1000, { { "a", 5 }, { "b", 20 } });
        QCOMPARE(rates.value("a"), 0.0);
        QCOMPARE(rates.value("b"), 20.0);
    }

    void sameInstantReplacesTheSample()
    {
        RateMeter meter(1000);
        meter.update(0, { { "a", 0 } });
        meter.update(0, { { "a", 10 } });
        QCOMPARE(meter.update(1000, { { "a", 30 } }).value("a"), 20.0);
    }
};

QTEST_GUILESS_MAIN(TestRateMeter)
#include "tst_rate_meter.moc"
