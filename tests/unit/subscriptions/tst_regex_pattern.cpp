#include "server/subscriptions/filter.h"
#include "server/subscriptions/regex_pattern.h"

#include <QTest>

using rt::subscriptions::RegexPattern;

// Tests match/imatch patterns on RE2: PostgreSQL's `~` semantics where the syntaxes agree, a
// refusal (never a different match) where they do not, the length cap, and sharing.
class RegexPatternTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void matchesLikePostgres_data();
    void matchesLikePostgres();
    void refusesWhatWouldMatchDifferently_data();
    void refusesWhatWouldMatchDifferently();
    void refusesLongPatterns();
    void hostilePatternsAreAnsweredCorrectly();
    void sameTextSharesOneProgram();
    void filtersCarryTheirCompiledPattern();
};

void RegexPatternTest::matchesLikePostgres_data()
{
    QTest::addColumn<QString>("pattern");
    QTest::addColumn<bool>("caseInsensitive");
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<bool>("matches");

    const auto row = [](const char *pattern, bool ci, const char *text, bool matches) {
        QTest::addRow("%s ~%s %s", pattern, ci ? "*" : "", text)
                << QString::fromUtf8(pattern) << ci << QByteArray(text) << matches;
    };
    row("^h.*o$", false, "hello", true);
    row("ell", false, "hello", true); // anywhere, as `~`
    row("^h", false, "Hello", false);
    row("^h", true, "Hello", true);
    row("a.b", false, "a\nb", true); // '.' matches a newline in an ARE
    row("^a$", false, "a\n", false); // '$' is the end of the text only
    row("^[[:alpha:]]+$", false, "abc", true);
    row("^[[:digit:]]+$", false, "12a", false);
    row("^[]a]+$", false, "]a]", true); // ']' first in a bracket is literal
    row("^[^]a]+$", false, "bcd", true);
    row("\\d{3}-\\d{4}", false, "call 555-1234", true);
    row("(?i)^abc$", false, "ABC", true); // a leading embedded option
    row("^(?:ab)+$", false, "ababab", true);
    row("^a+?b", false, "aaab", true);
    row("^caf.$", false, "caf\xc3\xa9", true); // '.' is one character, not one byte
    row("^CAF\xc3\x89$", true, "caf\xc3\xa9", true); // Unicode case folding
    row("^(a|a|aa)*$", false, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab", false);
}

void RegexPatternTest::matchesLikePostgres()
{
    QFETCH(QString, pattern);
    QFETCH(bool, caseInsensitive);
    QFETCH(QByteArray, text);
    QFETCH(bool, matches);

    QVERIFY2(!RegexPattern::refusal(pattern, caseInsensitive),
             qPrintable(RegexPattern::refusal(pattern, caseInsensitive).value_or(QString())));
    const auto compiled = RegexPattern::compile(pattern, caseInsensitive);
    QVERIFY(compiled);
    QCOMPARE(compiled->matches(text), matches);
}

void RegexPatternTest::refusesWhatWouldMatchDifferently_data()
{
    QTest::addColumn<QString>("pattern");
    QTest::addColumn<QString>("reason"); // a part of the refusal's text

    const auto row = [](const char *pattern, const char *reason) {
        QTest::newRow(pattern) << QString::fromUtf8(pattern) << QString::fromUtf8(reason);
    };
    row("(a)\\1", "invalid escape sequence"); // back-reference: RE2 cannot
    row("a(?=b)", "look-around");
    row("a(?!b)", "look-around");
    row("(?<=a)b", "look-around");
    row("[[:<:]]word", "word boundaries");
    row("word[[:>:]]", "word boundaries");
    row("[[.hyphen.]]", "collating elements");
    row("[[=e=]]", "equivalence classes");
    row("\\mword\\M", "PostgreSQL escape \\m");
    row("\\yword", "PostgreSQL escape \\y");
    row("end\\Z", "PostgreSQL escape \\Z");
    row("a\\bc", "\\b means something else"); // ARE: backspace; RE2: word boundary
    row("a\\Bc", "\\B means something else");
    row("***=a.b", "directors");
    row("***:abc", "directors");
    row("(?x) a b", "embedded options");
    row("a(?i)b", "embedded options");
    row("(?s)a.b", "embedded options");
    row("(?P<name>a)", "named groups");
    row("(", "missing )");
    row("a{2,1}", "invalid repetition size");
}

void RegexPatternTest::refusesWhatWouldMatchDifferently()
{
    QFETCH(QString, pattern);
    QFETCH(QString, reason);

    for (const bool caseInsensitive : { false, true }) {
        QVERIFY(!RegexPattern::compile(pattern, caseInsensitive));
        const std::optional<QString> refusal = RegexPattern::refusal(pattern, caseInsensitive);
        QVERIFY(refusal);
        QVERIFY2(refusal->startsWith(QLatin1String("match filter pattern is not supported: ")),
                 qPrintable(*refusal));
        QVERIFY2(refusal->contains(reason), qPrintable(*refusal));
        QVERIFY2(refusal->contains(QLatin1String("RE2")), qPrintable(*refusal));
    }
}

void RegexPatternTest::refusesLongPatterns()
{
    const QString longest(RegexPattern::MaxPatternBytes, u'a');
    QVERIFY(RegexPattern::compile(longest, false));
    const QString tooLong = longest + u'a';
    QVERIFY(!RegexPattern::compile(tooLong, false));
    QCOMPARE(RegexPattern::refusal(tooLong, false).value_or(QString()),
             QStringLiteral("match filter pattern is too long: 1001 bytes, at most 1000"));
    // Counted in UTF-8 bytes: 500 two-byte characters are 1,000 bytes, one more is too many.
    QVERIFY(RegexPattern::compile(QString(500, QChar(0xe9)), false));
    QVERIFY(!RegexPattern::compile(QString(501, QChar(0xe9)), false));
    // A short pattern whose program would be huge is refused too, not built.
    const std::optional<QString> huge =
            RegexPattern::refusal(QStringLiteral("((((a{100}){100}){100}){100})"), false);
    QVERIFY(huge);
    QVERIFY2(huge->startsWith(QLatin1String("match filter pattern is not supported: ")),
             qPrintable(*huge));
}

void RegexPatternTest::hostilePatternsAreAnsweredCorrectly()
{
    // Exponential for a backtracking engine on a near miss; RE2 answers in one pass.
    const auto nested = RegexPattern::compile(QStringLiteral("^(a|a|aa)*$"), false);
    const auto classic = RegexPattern::compile(QStringLiteral("^(a+)+$"), false);
    QVERIFY(nested && classic);
    const QByteArray nearMiss = QByteArray(100'000, 'a') + 'b';
    QVERIFY(!nested->matches(nearMiss));
    QVERIFY(!classic->matches(nearMiss));
    QVERIFY(nested->matches(QByteArray(100'000, 'a')));
    QVERIFY(classic->matches(QByteArray(100'000, 'a')));
}

void RegexPatternTest::sameTextSharesOneProgram()
{
    const auto first = RegexPattern::compile(QStringLiteral("^shared$"), false);
    const auto second = RegexPattern::compile(QStringLiteral("^shared$"), false);
    QCOMPARE(first.get(), second.get());
    const auto insensitive = RegexPattern::compile(QStringLiteral("^shared$"), true);
    QVERIFY(insensitive.get() != first.get());
    QVERIFY(insensitive->matches("SHARED"));
    QVERIFY(!first->matches("SHARED"));
}

void RegexPatternTest::filtersCarryTheirCompiledPattern()
{
    using namespace rt::subscriptions;
    auto parsed = parseFilterSyntax(u"name=imatch.^ab,id=eq.1,body=match.x+");
    QVERIFY(parsed.ok());
    QList<Filter> filters = *parsed;
    QCOMPARE(compileRegexFilters(filters), std::nullopt);
    QVERIFY(filters[0].regex && filters[0].regex->matches("ABC"));
    QVERIFY(!filters[1].regex);
    QVERIFY(filters[2].regex && !filters[2].regex->matches("ABC"));
    // The compiled pattern is derived: equality ignores it.
    QCOMPARE(filters, *parsed);

    auto refused = parseFilterSyntax(u"id=eq.1,body=match.(?=x),name=match.(");
    QVERIFY(refused.ok());
    QList<Filter> bad = *refused;
    const std::optional<QString> refusal = compileRegexFilters(bad);
    QVERIFY(refusal);
    QVERIFY2(refusal->contains(QLatin1String("look-around")), qPrintable(*refusal));
}

QTEST_APPLESS_MAIN(RegexPatternTest)
#include "tst_regex_pattern.moc"
