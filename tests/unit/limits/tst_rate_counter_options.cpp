#include "server/limits/rate_counter.h"
#include "server/limits/rate_counter_key.h"
#include "server/limits/rate_counter_options.h"

#include <QTest>

#include <optional>

using rt::limits::kindName;
using rt::limits::RateCounter;
using rt::limits::RateCounterKind;
using rt::limits::RateCounterOptions;
using rt::limits::RateLimit;

Q_DECLARE_METATYPE(RateCounterKind)
Q_DECLARE_METATYPE(RateLimit::Measurement)

namespace {

// Ticks `counter` every options.tickMs from t=0 (the immediate first tick, with nothing added),
// adding samples[i] before tick i+1, and returns whether the limit was triggered after the last.
bool isTriggeredAfter(const RateCounterOptions &options, const QList<qint64> &samples)
{
    RateCounter counter(options, 0);
    qint64 nowMs = 0;
    counter.tick(nowMs);
    for (const qint64 sample : samples) {
        nowMs += options.tickMs;
        counter.add(sample);
        counter.tick(nowMs);
    }
    return counter.isTriggered();
}

} // namespace

// Tests RateCounterOptions::forKind() and the kind names against the counter table of
// docs/upstream/tenants-limits-metrics.md §5.2 (tick, buckets, limit measurement per counter),
// and the defaults of §5.1.
class RateCounterOptionsTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void defaultsAreUpstreams();
    void forKind_data();
    void forKind();
    void noLimitValueMeansNoLimit();
    void requestsNeverHasALimit();
    void limitValueZeroIsKept();
    void eventsOptionsReproduceTheWorkedExample();
    void sumMeasurementOfConnectErrorsTriggersOnThreeFailures();
    void averageMeasurementOfConnectErrorsWouldNot();
    void kindNames_data();
    void kindNames();
};

void RateCounterOptionsTest::defaultsAreUpstreams()
{
    const RateCounterOptions options;
    QCOMPARE(options.tickMs, 1000);
    QCOMPARE(options.maxBuckets, 60);
    QCOMPARE(options.idleShutdownMs, qint64{ 5 } * 60 * 1000);
    QCOMPARE(options.limit, std::nullopt);
}

void RateCounterOptionsTest::forKind_data()
{
    QTest::addColumn<RateCounterKind>("kind");
    QTest::addColumn<qint64>("tickMs");
    QTest::addColumn<int>("maxBuckets");
    QTest::addColumn<RateLimit::Measurement>("measurement");

    const auto avg = RateLimit::Measurement::Average;
    const auto sum = RateLimit::Measurement::Sum;
    QTest::newRow("events") << RateCounterKind::Events << qint64{ 5000 } << 12 << avg;
    QTest::newRow("db_events") << RateCounterKind::DbEvents << qint64{ 5000 } << 12 << avg;
    QTest::newRow("presence_events")
            << RateCounterKind::PresenceEvents << qint64{ 5000 } << 12 << avg;
    QTest::newRow("joins") << RateCounterKind::Joins << qint64{ 5000 } << 12 << avg;
    QTest::newRow("database_connect")
            << RateCounterKind::DatabaseConnect << qint64{ 1000 } << 5 << sum;
    QTest::newRow("authorization_errors")
            << RateCounterKind::AuthorizationErrors << qint64{ 1000 } << 30 << sum;
    QTest::newRow("subscription_errors")
            << RateCounterKind::SubscriptionErrors << qint64{ 1000 } << 30 << sum;
}

void RateCounterOptionsTest::forKind()
{
    QFETCH(RateCounterKind, kind);
    QFETCH(qint64, tickMs);
    QFETCH(int, maxBuckets);
    QFETCH(RateLimit::Measurement, measurement);

    const RateCounterOptions options = RateCounterOptions::forKind(kind, 7);
    QCOMPARE(options.tickMs, tickMs);
    QCOMPARE(options.maxBuckets, maxBuckets);
    QCOMPARE(options.idleShutdownMs, RateCounterOptions::DefaultIdleShutdownMs);
    QVERIFY(options.limit.has_value());
    QCOMPARE(options.limit->value, 7.0);
    QCOMPARE(options.limit->measurement, measurement);
}

void RateCounterOptionsTest::noLimitValueMeansNoLimit()
{
    const RateCounterOptions options = RateCounterOptions::forKind(RateCounterKind::Events);
    QCOMPARE(options.limit, std::nullopt);
    QCOMPARE(options.tickMs, 5000);
    QCOMPARE(options.maxBuckets, 12);
    // Without a limit, nothing triggers however many events there are.
    QVERIFY(!isTriggeredAfter(options, { 1'000'000, 1'000'000 }));
}

void RateCounterOptionsTest::requestsNeverHasALimit()
{
    // 1 s x 60 = a 60 s window; the limit value is ignored (the HTTP check is on its average).
    const RateCounterOptions options = RateCounterOptions::forKind(RateCounterKind::Requests, 0);
    QCOMPARE(options.tickMs, 1000);
    QCOMPARE(options.maxBuckets, 60);
    QCOMPARE(options.limit, std::nullopt);
    QCOMPARE(options, RateCounterOptions::forKind(RateCounterKind::Requests));
    QVERIFY(!isTriggeredAfter(options, { 5000 }));
}

void RateCounterOptionsTest::limitValueZeroIsKept()
{
    // max_joins_per_second = 0 is allowed and triggers permanently from the first tick (§5.3).
    const RateCounterOptions options = RateCounterOptions::forKind(RateCounterKind::Joins, 0);
    QCOMPARE(options.limit, (RateLimit{ 0, RateLimit::Measurement::Average }));
    QVERIFY(isTriggeredAfter(options, {}));
    QVERIFY(isTriggeredAfter(options, { 0, 0, 0 }));
}

void RateCounterOptionsTest::eventsOptionsReproduceTheWorkedExample()
{
    // §5.3: max_events_per_second = 100 and 700 events per tick trigger at the third tick after
    // the first (2100 / 4 samples / 5 s = 105), not before (1400 / 3 / 5 ≈ 93.3).
    const RateCounterOptions options = RateCounterOptions::forKind(RateCounterKind::Events, 100);
    QVERIFY(!isTriggeredAfter(options, { 700 }));
    QVERIFY(!isTriggeredAfter(options, { 700, 700 }));
    QVERIFY(isTriggeredAfter(options, { 700, 700, 700 }));
}

void RateCounterOptionsTest::sumMeasurementOfConnectErrorsTriggersOnThreeFailures()
{
    // Three failed connects within the 5 s window trigger; two do not.
    const RateCounterOptions options =
            RateCounterOptions::forKind(RateCounterKind::DatabaseConnect, 3);
    QVERIFY(!isTriggeredAfter(options, { 1, 1 }));
    QVERIFY(isTriggeredAfter(options, { 1, 1, 1 }));
    QVERIFY(isTriggeredAfter(options, { 3 }));
    // Spread over more than the window (5 one-second samples), they do not.
    QVERIFY(!isTriggeredAfter(options, { 1, 0, 0, 0, 0, 1, 0, 1 }));
}

void RateCounterOptionsTest::averageMeasurementOfConnectErrorsWouldNot()
{
    // The measurement matters: 3 failures in 5 s average 0.6/s, far below 3.
    RateCounterOptions options = RateCounterOptions::forKind(RateCounterKind::DatabaseConnect, 3);
    options.limit->measurement = RateLimit::Measurement::Average;
    QVERIFY(!isTriggeredAfter(options, { 1, 1, 1 }));
}

void RateCounterOptionsTest::kindNames_data()
{
    QTest::addColumn<RateCounterKind>("kind");
    QTest::addColumn<QString>("name");

    QTest::newRow("events") << RateCounterKind::Events << QStringLiteral("events");
    QTest::newRow("db_events") << RateCounterKind::DbEvents << QStringLiteral("db_events");
    QTest::newRow("presence_events")
            << RateCounterKind::PresenceEvents << QStringLiteral("presence_events");
    QTest::newRow("joins") << RateCounterKind::Joins << QStringLiteral("joins");
    QTest::newRow("requests") << RateCounterKind::Requests << QStringLiteral("requests");
    QTest::newRow("database_connect")
            << RateCounterKind::DatabaseConnect << QStringLiteral("database_connect");
    QTest::newRow("authorization_errors")
            << RateCounterKind::AuthorizationErrors << QStringLiteral("authorization_errors");
    QTest::newRow("subscription_errors")
            << RateCounterKind::SubscriptionErrors << QStringLiteral("subscription_errors");
}

void RateCounterOptionsTest::kindNames()
{
    QFETCH(RateCounterKind, kind);
    QFETCH(QString, name);
    QCOMPARE(QString(kindName(kind)), name);
}

QTEST_GUILESS_MAIN(RateCounterOptionsTest)
#include "tst_rate_counter_options.moc"
