#include "tests/support/metrics/prometheus_text.h"

#include <QTest>

#include <cmath>

using rt::test::checkConsistency;
using rt::test::Exposition;
using rt::test::Labels;
using rt::test::parseExposition;

// The exposition parser of tests/support/metrics: what it accepts, what it reports as malformed,
// and the consistency checks integration tests run on a scraped /metrics body.
class TestMetricsParser : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void parsesAWellFormedBody();
    void rejectsMalformedLines_data();
    void rejectsMalformedLines();
    void reportsInconsistencies_data();
    void reportsInconsistencies();
};

void TestMetricsParser::parsesAWellFormedBody()
{
    const QByteArray text =
            "# A plain comment\n"
            "# HELP requests Requests\\nserved, with a \\\\ and a \\t.\n"
            "# TYPE requests counter\n"
            "requests{code=\"200\",path=\"/a \\\"b\\\"\\\\c\\nd\"} 12 1700000000000\n"
            "requests { code = \"500\" , path=\"/\" , } 3\n"
            "\n"
            "  # TYPE temperature gauge\n"
            "temperature\t-1.5e3\n"
            "# HELP empty_help \n"
            "# TYPE empty_help gauge\n"
            "empty_help NaN\n"
            "# TYPE h histogram\n"
            "h_bucket{le=\"1.0e3\"} 1\n"
            "h_bucket{le=\"+Inf\"} 2\n"
            "h_sum 1500.5\n"
            "h_count 2\n"
            "# EOF\n"
            "untyped_thing +Inf\n"
            "untyped_other -inf\n";
    const auto result = parseExposition(text);
    QVERIFY2(result.ok(), qPrintable(result.ok() ? QString() : result.error().message));
    const Exposition &exposition = *result;
    QCOMPARE(exposition.samples.size(), std::size_t(10));
    QCOMPARE(exposition.help.at("requests"), QByteArray("Requests\nserved, with a \\ and a \\t."));
    QCOMPARE(exposition.help.at("empty_help"), QByteArray());
    QCOMPARE(exposition.types.at("requests"), QByteArray("counter"));
    QCOMPARE(exposition.types.at("temperature"), QByteArray("gauge"));

    const rt::test::Sample &first = exposition.samples.front();
    QCOMPARE(first.name, QByteArray("requests"));
    QCOMPARE(first.labels, (Labels{ { "code", "200" }, { "path", "/a \"b\"\\c\nd" } }));
    QCOMPARE(first.value, 12.0);
    QCOMPARE(first.timestampMs, std::optional<qint64>(1700000000000));
    QCOMPARE(first.line, 4);
    QCOMPARE(exposition.value("requests", { { "code", "500" } }), std::optional<double>(3));
    QCOMPARE(exposition.value("requests"), std::nullopt); // two samples match
    QCOMPARE(exposition.find("requests").size(), std::size_t(2));
    QCOMPARE(exposition.value("temperature"), std::optional<double>(-1500));
    QVERIFY(std::isnan(*exposition.value("empty_help")));
    QCOMPARE(exposition.value("h_bucket", { { "le", "1.0e3" } }), std::optional<double>(1));
    QVERIFY(std::isinf(*exposition.value("untyped_thing")));
    QVERIFY(*exposition.value("untyped_other") < 0);
    QCOMPARE(exposition.familyOf("h_sum"), QByteArray("h"));
    QCOMPARE(exposition.familyOf("requests_count"), QByteArray("requests_count"));

    const QStringList problems = checkConsistency(exposition);
    QCOMPARE(problems.size(), 2); // the two untyped families
    QVERIFY(problems.at(0).contains(QLatin1String("untyped_thing has no # TYPE")));

    QVERIFY(parseExposition("").ok());
    QVERIFY(parseExposition("\n\n").ok());
}

void TestMetricsParser::rejectsMalformedLines_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("error");
    QTest::newRow("no final newline") << QByteArray("a 1") << QStringLiteral("newline");
    QTest::newRow("missing value") << QByteArray("a\n") << QStringLiteral("line 1: missing value");
    QTest::newRow("missing value after labels")
            << QByteArray("a{b=\"c\"}\n") << QStringLiteral("missing value");
    QTest::newRow("bad value") << QByteArray("ok 1\na 1x\n")
                               << QStringLiteral("line 2: invalid value");
    QTest::newRow("hex value") << QByteArray("a 0x10\n") << QStringLiteral("invalid value");
    QTest::newRow("bad name") << QByteArray("1a 1\n") << QStringLiteral("invalid metric name");
    QTest::newRow("glued value") << QByteArray("a-b 1\n") << QStringLiteral("blank");
    QTest::newRow("unterminated labels")
            << QByteArray("a{b=\"c\" 1\n") << QStringLiteral("expected , or }");
    QTest::newRow("unterminated value")
            << QByteArray("a{b=\"c} 1\n") << QStringLiteral("unterminated value");
    QTest::newRow("unquoted value") << QByteArray("a{b=c} 1\n") << QStringLiteral("expected \"");
    QTest::newRow("bad escape") << QByteArray("a{b=\"\\t\"} 1\n")
                                << QStringLiteral("invalid escape");
    QTest::newRow("bad label name")
            << QByteArray("a{1b=\"c\"} 1\n") << QStringLiteral("invalid label name");
    QTest::newRow("duplicate label")
            << QByteArray("a{b=\"1\",b=\"2\"} 1\n") << QStringLiteral("appears twice");
    QTest::newRow("invalid UTF-8")
            << QByteArray("a{b=\"\xff\"} 1\n") << QStringLiteral("not valid UTF-8");
    QTest::newRow("bad timestamp")
            << QByteArray("a 1 soon\n") << QStringLiteral("invalid timestamp");
    QTest::newRow("junk after timestamp")
            << QByteArray("a 1 2 3\n") << QStringLiteral("after the timestamp");
    QTest::newRow("bad type") << QByteArray("# TYPE a countr\n")
                              << QStringLiteral("invalid # TYPE");
    QTest::newRow("type without name")
            << QByteArray("# TYPE\n") << QStringLiteral("invalid metric name");
    QTest::newRow("second type") << QByteArray("# TYPE a gauge\n# TYPE a gauge\n")
                                 << QStringLiteral("line 2: second # TYPE");
    QTest::newRow("second help") << QByteArray("# HELP a x\n# HELP a y\n")
                                 << QStringLiteral("second # HELP");
}

void TestMetricsParser::rejectsMalformedLines()
{
    QFETCH(QByteArray, text);
    QFETCH(QString, error);
    const auto result = parseExposition(text);
    QVERIFY2(!result.ok(), text.constData());
    QVERIFY2(result.error().message.contains(error), qPrintable(result.error().message));
}

void TestMetricsParser::reportsInconsistencies_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("problem");
    QTest::newRow("not contiguous")
            << QByteArray("# TYPE a gauge\n# TYPE b gauge\na 1\nb 1\na{x=\"1\"} 2\n")
            << QStringLiteral("line 5: samples of a are not contiguous");
    QTest::newRow("type after samples")
            << QByteArray("a 1\n# TYPE a gauge\n") << QStringLiteral("come after its samples");
    QTest::newRow("duplicate series") << QByteArray("# TYPE a gauge\na{x=\"1\"} 1\na{x=\"1\"} 2\n")
                                      << QStringLiteral("duplicate series a{x=\"1\"}");
    QTest::newRow("no +Inf") << QByteArray(
            "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1\n")
                             << QStringLiteral("no le=\"+Inf\"");
    QTest::newRow("+Inf differs from count")
            << QByteArray("# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 1\n")
            << QStringLiteral("differs from _count");
    QTest::newRow("decreasing") << QByteArray("# TYPE h histogram\nh_bucket{le=\"1\"} "
                                              "2\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n")
                                << QStringLiteral("counts decrease");
    QTest::newRow("bounds not ascending")
            << QByteArray("# TYPE h histogram\nh_bucket{le=\"2\"} 1\nh_bucket{le=\"1\"} "
                          "1\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n")
            << QStringLiteral("not ascending");
    QTest::newRow("no sum") << QByteArray(
            "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1\nh_count 1\n")
                            << QStringLiteral("no _sum");
    QTest::newRow("bucket without le") << QByteArray(
            "# TYPE h histogram\nh_bucket 1\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n")
                                       << QStringLiteral("without le");
    QTest::newRow("bad le") << QByteArray("# TYPE h histogram\nh_bucket{le=\"one\"} "
                                          "1\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n")
                            << QStringLiteral("unparseable le");
}

void TestMetricsParser::reportsInconsistencies()
{
    QFETCH(QByteArray, text);
    QFETCH(QString, problem);
    const auto result = parseExposition(text);
    QVERIFY2(result.ok(), qPrintable(result.ok() ? QString() : result.error().message));
    const QStringList problems = checkConsistency(*result);
    QVERIFY2(problems.size() == 1, qPrintable(problems.join(QLatin1Char('\n'))));
    QVERIFY2(problems.front().contains(problem), qPrintable(problems.front()));
}

QTEST_GUILESS_MAIN(TestMetricsParser)
#include "tst_metrics_parser.moc"
