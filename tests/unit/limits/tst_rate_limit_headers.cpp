#include "server/limits/rate_counter.h"
#include "server/limits/rate_counter_options.h"
#include "server/limits/rate_limit_headers.h"

#include <QTest>

#include <limits>

using rt::limits::computeRateLimitHeaders;
using rt::limits::RateCounter;
using rt::limits::RateCounterKind;
using rt::limits::RateCounterOptions;
using rt::limits::RateLimitHeaders;

// Tests the x-rate-* headers and the 429 decision of upstream's RateLimiter plug
// (docs/upstream/tenants-limits-metrics.md §5.5): rolling = trunc(requests average),
// limit = max_events_per_second, remaining = limit - rolling (may be negative), limited when
// rolling >= limit.
class RateLimitHeadersTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void compute_data();
    void compute();
    void nonsenseAveragesCountAsZero();
    void hugeAveragesSaturate();
    void httpHeadersAreLowerCaseDecimalInOrder();
    void negativeRemainingIsWrittenWithASign();
    void headersFollowTheRequestsCounterAtTicks();
};

void RateLimitHeadersTest::compute_data()
{
    QTest::addColumn<double>("average");
    QTest::addColumn<qint64>("maxEventsPerSecond");
    QTest::addColumn<qint64>("rolling");
    QTest::addColumn<qint64>("remaining");
    QTest::addColumn<bool>("isLimited");

    QTest::newRow("idle") << 0.0 << qint64{ 100 } << qint64{ 0 } << qint64{ 100 } << false;
    QTest::newRow("fraction truncated")
            << 0.99 << qint64{ 100 } << qint64{ 0 } << qint64{ 100 } << false;
    QTest::newRow("just below") << 99.999 << qint64{ 100 } << qint64{ 99 } << qint64{ 1 } << false;
    QTest::newRow("at the limit") << 100.0 << qint64{ 100 } << qint64{ 100 } << qint64{ 0 } << true;
    QTest::newRow("above, truncated")
            << 100.7 << qint64{ 100 } << qint64{ 100 } << qint64{ 0 } << true;
    QTest::newRow("remaining negative")
            << 150.5 << qint64{ 100 } << qint64{ 150 } << qint64{ -50 } << true;
    // max_events_per_second = 0: every request gets 429 (0 >= 0), §5.3.
    QTest::newRow("limit zero") << 0.0 << qint64{ 0 } << qint64{ 0 } << qint64{ 0 } << true;
    QTest::newRow("limit one, average 0.5")
            << 0.5 << qint64{ 1 } << qint64{ 0 } << qint64{ 1 } << false;
}

void RateLimitHeadersTest::compute()
{
    QFETCH(double, average);
    QFETCH(qint64, maxEventsPerSecond);
    QFETCH(qint64, rolling);
    QFETCH(qint64, remaining);
    QFETCH(bool, isLimited);

    const RateLimitHeaders headers = computeRateLimitHeaders(average, maxEventsPerSecond);
    QCOMPARE(headers.rolling, rolling);
    QCOMPARE(headers.limit, maxEventsPerSecond);
    QCOMPARE(headers.remaining, remaining);
    QCOMPARE(headers.isLimited, isLimited);
}

void RateLimitHeadersTest::nonsenseAveragesCountAsZero()
{
    const RateLimitHeaders expected{ 0, 10, 10, false };
    QCOMPARE(computeRateLimitHeaders(-3.5, 10), expected);
    QCOMPARE(computeRateLimitHeaders(std::numeric_limits<double>::quiet_NaN(), 10), expected);
    QCOMPARE(computeRateLimitHeaders(-std::numeric_limits<double>::infinity(), 10), expected);
}

void RateLimitHeadersTest::hugeAveragesSaturate()
{
    const RateLimitHeaders headers =
            computeRateLimitHeaders(std::numeric_limits<double>::infinity(), 100);
    QVERIFY(headers.rolling > qint64{ 9'000'000'000'000'000'000 });
    QCOMPARE(headers.remaining, 100 - headers.rolling);
    QVERIFY(headers.remaining < 0);
    QVERIFY(headers.isLimited);

    QCOMPARE(computeRateLimitHeaders(1e30, 100).rolling, headers.rolling);
}

void RateLimitHeadersTest::httpHeadersAreLowerCaseDecimalInOrder()
{
    const auto headers = computeRateLimitHeaders(42.9, 100).toHttpHeaders();
    QCOMPARE(headers.size(), std::size_t{ 3 });
    QCOMPARE(headers[0].first, QByteArrayLiteral("x-rate-rolling"));
    QCOMPARE(headers[0].second, QByteArrayLiteral("42"));
    QCOMPARE(headers[1].first, QByteArrayLiteral("x-rate-limit"));
    QCOMPARE(headers[1].second, QByteArrayLiteral("100"));
    QCOMPARE(headers[2].first, QByteArrayLiteral("x-rate-limit-remaining"));
    QCOMPARE(headers[2].second, QByteArrayLiteral("58"));
}

void RateLimitHeadersTest::negativeRemainingIsWrittenWithASign()
{
    const auto headers = computeRateLimitHeaders(250.0, 100).toHttpHeaders();
    QCOMPARE(headers[0].second, QByteArrayLiteral("250"));
    QCOMPARE(headers[1].second, QByteArrayLiteral("100"));
    QCOMPARE(headers[2].second, QByteArrayLiteral("-150"));
}

void RateLimitHeadersTest::headersFollowTheRequestsCounterAtTicks()
{
    // The plug counts the request into the tenant's requests counter (1 s x 60), then reads the
    // average of the last tick: requests since the last tick are not in it yet.
    constexpr qint64 MaxEventsPerSecond = 100;
    const RateCounterOptions options = RateCounterOptions::forKind(RateCounterKind::Requests);
    RateCounter requests(options, 0);
    requests.tick(0); // [0]

    requests.add(300);
    QCOMPARE(computeRateLimitHeaders(requests.average(), MaxEventsPerSecond),
             (RateLimitHeaders{ 0, 100, 100, false }));

    requests.tick(1000); // [300, 0] -> 300 / 2 / 1 = 150
    QCOMPARE(computeRateLimitHeaders(requests.average(), MaxEventsPerSecond),
             (RateLimitHeaders{ 150, 100, -50, true }));

    requests.tick(2000); // [0, 300, 0] -> 100: still limited (>=)
    QCOMPARE(computeRateLimitHeaders(requests.average(), MaxEventsPerSecond),
             (RateLimitHeaders{ 100, 100, 0, true }));

    requests.add(1);
    requests.tick(3000); // [1, 0, 300, 0] -> 75.25 -> 75
    QCOMPARE(computeRateLimitHeaders(requests.average(), MaxEventsPerSecond),
             (RateLimitHeaders{ 75, 100, 25, false }));

    // The requests counter itself never triggers: the plug decides on the average alone.
    QVERIFY(!requests.isTriggered());
}

QTEST_GUILESS_MAIN(RateLimitHeadersTest)
#include "tst_rate_limit_headers.moc"
