#include "server/metrics/text_format.h"

#include <QTest>

#include <cmath>
#include <limits>

using namespace rt::metrics;

// The pure pieces of the exposition format: sample values, upstream's bucket-bound notation,
// escaping and name validation.
class TestMetricsTextFormat : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void formatsValues_data();
    void formatsValues();
    void formatsUnsignedValues();
    void formatsBucketBoundsAsUpstream_data();
    void formatsBucketBoundsAsUpstream();
    void escapesHelp();
    void escapesLabelValues();
    void validatesNames_data();
    void validatesNames();
};

void TestMetricsTextFormat::formatsValues_data()
{
    QTest::addColumn<double>("value");
    QTest::addColumn<QByteArray>("expected");
    const double inf = std::numeric_limits<double>::infinity();
    QTest::newRow("zero") << 0.0 << QByteArray("0");
    QTest::newRow("negative zero") << -0.0 << QByteArray("0");
    QTest::newRow("integer") << 3.0 << QByteArray("3");
    QTest::newRow("negative integer") << -12.0 << QByteArray("-12");
    QTest::newRow("million") << 1e6 << QByteArray("1000000");
    QTest::newRow("half") << 0.5 << QByteArray("0.5");
    QTest::newRow("fraction") << 104.25 << QByteArray("104.25");
    QTest::newRow("small") << 1e-5 << QByteArray("1e-05");
    QTest::newRow("huge") << 1.5e300 << QByteArray("1.5e+300");
    // Beyond qint64, to_chars picks the shorter of the fixed and exponent forms.
    QTest::newRow("2^63") << 9223372036854775808.0 << QByteArray("9223372036854775808");
    QTest::newRow("1e20") << 1e20 << QByteArray("1e+20");
    QTest::newRow("NaN") << std::nan("") << QByteArray("NaN");
    QTest::newRow("+Inf") << inf << QByteArray("+Inf");
    QTest::newRow("-Inf") << -inf << QByteArray("-Inf");
}

void TestMetricsTextFormat::formatsValues()
{
    QFETCH(double, value);
    QFETCH(QByteArray, expected);
    QCOMPARE(formatValue(value), expected);
    QByteArray appended("x ");
    appendValue(appended, value);
    QCOMPARE(appended, QByteArray("x ") + expected);
}

void TestMetricsTextFormat::formatsUnsignedValues()
{
    QByteArray out;
    appendValue(out, quint64(0));
    out.append(' ');
    appendValue(out, std::numeric_limits<quint64>::max());
    QCOMPARE(out, QByteArray("0 18446744073709551615"));
}

void TestMetricsTextFormat::formatsBucketBoundsAsUpstream_data()
{
    QTest::addColumn<double>("bound");
    QTest::addColumn<QByteArray>("expected");
    // docs/upstream/tenants-limits-metrics.md §6.2: every bound upstream uses.
    const std::pair<double, const char *> table[] = {
        { 10, "10.0" },       { 100, "100.0" },    { 250, "250.0" },    { 500, "500.0" },
        { 1000, "1.0e3" },    { 2000, "2.0e3" },   { 3000, "3.0e3" },   { 5000, "5.0e3" },
        { 10000, "1.0e4" },   { 15000, "1.5e4" },  { 20000, "2.0e4" },  { 25000, "2.5e4" },
        { 30000, "3.0e4" },   { 45000, "4.5e4" },  { 60000, "6.0e4" },  { 90000, "9.0e4" },
        { 100000, "1.0e5" },  { 120000, "1.2e5" }, { 500000, "5.0e5" }, { 1000000, "1.0e6" },
        { 3000000, "3.0e6" },
    };
    for (const auto &[bound, text] : table)
        QTest::newRow(text) << bound << QByteArray(text);
    // Fractions and other shapes of Erlang's shortest form.
    QTest::newRow("0.5") << 0.5 << QByteArray("0.5");
    QTest::newRow("0.1") << 0.1 << QByteArray("0.1");
    QTest::newRow("0.25") << 0.25 << QByteArray("0.25");
    QTest::newRow("1") << 1.0 << QByteArray("1.0");
    QTest::newRow("2.5") << 2.5 << QByteArray("2.5");
    QTest::newRow("123456") << 123456.0 << QByteArray("123456.0");
    QTest::newRow("0.00025") << 0.00025 << QByteArray("2.5e-4");
    QTest::newRow("negative") << -250.0 << QByteArray("-250.0");
    QTest::newRow("zero") << 0.0 << QByteArray("0.0");
    QTest::newRow("+Inf") << std::numeric_limits<double>::infinity() << QByteArray("+Inf");
}

void TestMetricsTextFormat::formatsBucketBoundsAsUpstream()
{
    QFETCH(double, bound);
    QFETCH(QByteArray, expected);
    QCOMPARE(formatBucketBound(bound), expected);
    // Whatever the notation, Prometheus must read the bound back exactly.
    if (std::isfinite(bound))
        QCOMPARE(formatBucketBound(bound).toDouble(), bound);
}

void TestMetricsTextFormat::escapesHelp()
{
    QByteArray out;
    appendEscapedHelp(out, "back\\slash\nnew line \"quoted\"");
    // Quotes stay as they are in HELP text.
    QCOMPARE(out, QByteArray("back\\\\slash\\nnew line \"quoted\""));
}

void TestMetricsTextFormat::escapesLabelValues()
{
    QByteArray out;
    appendEscapedLabelValue(out, "back\\slash\nnew line \"quoted\" tab\t");
    QCOMPARE(out, QByteArray("back\\\\slash\\nnew line \\\"quoted\\\" tab\t"));
}

void TestMetricsTextFormat::validatesNames_data()
{
    QTest::addColumn<QByteArray>("name");
    QTest::addColumn<bool>("metric");
    QTest::addColumn<bool>("label");
    QTest::newRow("plain") << QByteArray("realtime_channel_joins") << true << true;
    QTest::newRow("colon") << QByteArray("job:rate5m") << true << false;
    QTest::newRow("leading colon") << QByteArray(":x") << true << false;
    QTest::newRow("leading digit") << QByteArray("1x") << false << false;
    QTest::newRow("digits later") << QByteArray("x1_2") << true << true;
    QTest::newRow("reserved") << QByteArray("__name__") << true << false;
    QTest::newRow("single underscore") << QByteArray("_x") << true << true;
    QTest::newRow("dash") << QByteArray("a-b") << false << false;
    QTest::newRow("dot") << QByteArray("a.b") << false << false;
    QTest::newRow("empty") << QByteArray() << false << false;
    QTest::newRow("non-ascii") << QByteArray("caf\xc3\xa9") << false << false;
}

void TestMetricsTextFormat::validatesNames()
{
    QFETCH(QByteArray, name);
    QFETCH(bool, metric);
    QFETCH(bool, label);
    QCOMPARE(isValidMetricName(name), metric);
    QCOMPARE(isValidLabelName(name), label);
}

QTEST_GUILESS_MAIN(TestMetricsTextFormat)
#include "tst_metrics_text_format.moc"
