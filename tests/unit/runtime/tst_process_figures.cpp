// This process's own figures: the resident set parsed from /proc/<pid>/statm text (malformed
// text is no figure, never a crash), CPU rates from two readings, and the live readers: CPU time
// grows while a thread spins, a rate over a busy interval is about one core, and the resident
// set is the size of something real.
#include "server/runtime/process_figures.h"

#include <QTest>

using namespace rt::runtime;

class TestProcessFigures : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void statmResidentBytes()
    {
        QCOMPARE(parseStatmResidentBytes("12345 678 90 1 0 2 0\n", 4096), qint64(678) * 4096);
        QCOMPARE(parseStatmResidentBytes("1 2", 1), qint64(2));
        QCOMPARE(parseStatmResidentBytes("", 4096), std::nullopt);
        QCOMPARE(parseStatmResidentBytes("12345", 4096), std::nullopt);
        QCOMPARE(parseStatmResidentBytes("12345 ", 4096), std::nullopt);
        QCOMPARE(parseStatmResidentBytes("a 2", 4096), std::nullopt);
        QCOMPARE(parseStatmResidentBytes("1 -2", 4096), std::nullopt);
        QCOMPARE(parseStatmResidentBytes("1 99999999999999999999999", 4096), std::nullopt);
        QCOMPARE(parseStatmResidentBytes("1 4611686018427387904", 4096), std::nullopt); // overflow
        QCOMPARE(parseStatmResidentBytes("1 2", 0), std::nullopt);
    }

    void cpuRateBetweenReadings()
    {
        constexpr qint64 Second = 1'000'000'000;
        CpuRate rate(1 * Second);
        QCOMPARE(rate.update(3 * Second, Second / 2), 0.25); // since the start: 0.5 s over 2 s
        QCOMPARE(rate.update(4 * Second, 3 * Second / 2), 1.0); // one core for a second
        QCOMPARE(rate.update(4 * Second, 2 * Second), 0.0); // no wall time passed
        QCOMPARE(rate.update(5 * Second, Second / 10), 0.1); // the clock started over
    }

    void liveReadersMeasureThisProcess()
    {
        const qint64 wallBefore = monotonicNs();
        const qint64 processBefore = processCpuNs();
        const qint64 threadBefore = threadCpuNs();
        CpuRate rate(wallBefore);
        (void)rate.update(wallBefore, threadBefore);
        // Spin until the thread has used 50 ms of CPU (decided by the CPU clock, not by time).
        volatile quint64 sink = 0;
        while (threadCpuNs() - threadBefore < 50'000'000) {
            sink = sink + 1;
        }
        QVERIFY(processCpuNs() - processBefore >= 50'000'000);
        const double cores = rate.update(monotonicNs(), threadCpuNs());
        QVERIFY2(cores > 0.05 && cores <= 1.05, qPrintable(QString::number(cores)));
        QVERIFY(processStartedNs() > 0 && processStartedNs() <= wallBefore);
        // A QTest process holds at least a megabyte, and less than its virtual size bound.
        const qint64 resident = residentBytes();
        QVERIFY2(resident > (1 << 20) && resident < (qint64(64) << 30),
                 qPrintable(QString::number(resident)));
    }
};

QTEST_GUILESS_MAIN(TestProcessFigures)
#include "tst_process_figures.moc"
