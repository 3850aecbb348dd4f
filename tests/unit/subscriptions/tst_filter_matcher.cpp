// Tests of filter evaluation against a row (realtime.is_visible_through_filters /
// check_equality_op semantics, spec/server-protocol.md §6.5 step 5): every operator against the
// column types it is used with, NULLs, negation, and the row lookup rules.
#include "server/subscriptions/filter.h"
#include "server/subscriptions/matcher.h"

#include <QTest>

using rt::subscriptions::ColumnList;
using rt::subscriptions::ColumnValue;
using rt::subscriptions::Filter;
using rt::subscriptions::NamedColumn;

namespace {

const char *const Null = nullptr;

// One row: the column `c` of `type` holding `value` (nullptr = NULL) against `filter`.
void row(const char *filter, const char *type, const char *value, bool expected)
{
    QTest::addRow("%s | %s | %s", filter, type, value ? value : "NULL")
            << QString::fromUtf8(filter) << QByteArray(type) << QByteArray(value)
            << (value == nullptr) << expected;
}

Filter parseOne(const QString &text)
{
    const auto parsed = rt::subscriptions::parseFilterSyntax(text);
    if (!parsed.ok() || parsed->size() != 1) {
        qFatal("test filter does not parse to one condition: %s", qPrintable(text));
    }
    return parsed->first();
}

} // namespace

class FilterMatcherTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void evaluates_data();
    void evaluates();
    void nullIsUnknownNotFalse();
    void emptyFilterListIsVisible();
    void missingColumnIsNotVisible();
    void filtersAreAnded();
    void rowViewOverALambda();
};

void FilterMatcherTest::evaluates_data()
{
    QTest::addColumn<QString>("filter");
    QTest::addColumn<QByteArray>("type");
    QTest::addColumn<QByteArray>("value");
    QTest::addColumn<bool>("isNull");
    QTest::addColumn<bool>("expected");

    // ---- integers
    row("c=eq.5", "int4", "5", true);
    row("c=eq.5", "int4", "6", false);
    row("c=eq. 5", "int4", "5", true); // int4in skips white space
    row("c=eq.+5", "int4", "5", true);
    row("c=neq.5", "int4", "6", true);
    row("c=neq.5", "int4", "5", false);
    row("c=lt.10", "int4", "5", true);
    row("c=lt.5", "int4", "5", false);
    row("c=lte.5", "int4", "5", true);
    row("c=lte.4", "int4", "5", false);
    row("c=gt.4", "int4", "5", true);
    row("c=gt.5", "int4", "5", false);
    row("c=gte.5", "int4", "5", true);
    row("c=gte.6", "int4", "5", false);
    row("c=lt.-4", "int4", "-5", true);
    row("c=gt.9", "int4", "10", true); // numeric, not text, order
    row("c=eq.abc", "int4", "5", false); // does not cast: not visible either way
    row("c=not.eq.abc", "int4", "5", false);
    row("c=eq.1.0", "int4", "1", false);
    row("c=eq.3000000000", "int4", "5", false); // out of int4 range
    row("c=lt.3000000000", "int8", "5", true);
    row("c=eq.40000", "int2", "1", false);
    row("c=eq.9223372036854775807", "int8", "9223372036854775807", true);
    row("c=gt.-9223372036854775808", "int8", "-9223372036854775807", true);
    row("c=eq.5", "integer", "5", true); // regtype spelling
    row("c=eq.4294967295", "oid", "4294967295", true);
    row("c=eq.-1", "oid", "4294967295", true);
    row("c=not.eq.5", "int4", "6", true);
    row("c=not.eq.5", "int4", "5", false);
    row("c=not.lt.5", "int4", "5", true);
    row("c=eq.5", "int4", Null, false);
    row("c=not.eq.5", "int4", Null, false);
    row("c=neq.5", "int4", Null, false);
    row("c=not.neq.5", "int4", Null, false);
    row("c=lt.5", "int4", Null, false);

    // ---- floating point and numeric
    row("c=eq.1.50", "float8", "1.5", true);
    row("c=lt.1.6", "float8", "1.5", true);
    row("c=eq.nan", "float8", "NaN", true); // NaN = NaN in PostgreSQL
    row("c=gt.1e308", "float8", "NaN", true); // NaN sorts above everything
    row("c=gt.1e308", "float8", "Infinity", true);
    row("c=lt.-1e308", "float8", "-Infinity", true);
    row("c=eq.1e400", "float8", "1", false); // out of range: does not cast
    row("c=eq.0.1", "float4", "0.1", true);
    row("c=eq.0.10000000149011612", "float4", "0.1", true); // same float4
    row("c=eq.0.10000000149011612", "float8", "0.1", false);
    row("c=eq.1.1", "numeric", "1.10", true);
    row("c=gt.9.99", "numeric", "10", true);
    row("c=lt.0", "numeric", "-1", true);
    row("c=lt.-1", "numeric", "-2.5", true);
    row("c=gt.-3", "numeric", "-2.5", true);
    row("c=eq.100", "numeric", "1e2", true);
    row("c=eq.0", "numeric", "0.000", true);
    row("c=eq.0", "numeric", "-0", true);
    row("c=gt.123456789012345678901234567889", "numeric", "123456789012345678901234567890", true);
    row("c=lt.0.30000000000000000001", "numeric", "0.3", true); // exact, no binary rounding
    row("c=eq.NaN", "numeric", "NaN", true);
    row("c=gt.Infinity", "numeric", "NaN", true);
    row("c=lt.-1e100", "numeric", "-Infinity", true);
    row("c=eq.abc", "numeric", "1", false);
    row("c=eq.1e", "numeric", "1", false);

    // ---- bool
    row("c=eq.true", "bool", "t", true);
    row("c=eq.yes", "bool", "t", true);
    row("c=eq.TR", "bool", "t", true);
    row("c=eq.1", "bool", "t", true);
    row("c=eq.off", "bool", "f", true);
    row("c=eq.o", "bool", "f", false); // ambiguous prefix: does not cast
    row("c=eq.maybe", "bool", "t", false);
    row("c=gt.false", "bool", "t", true);
    row("c=neq.t", "boolean", "f", true);

    // ---- text-like (C collation: bytewise)
    row("c=eq.abc", "text", "abc", true);
    row("c=eq.ABC", "text", "abc", false);
    row("c=lt.abd", "text", "abc", true);
    row("c=lt.a", "text", "B", true); // 'B' (0x42) < 'a' (0x61) in C collation
    row("c=gt.z", "text", "\xc3\xa9", true); // é sorts after z bytewise
    row("c=eq.abc", "varchar", "abc", true);
    row("c=eq.abc", "name", "abc", true);
    row("c=eq.happy", "mood", "happy", true); // unknown types (enums) compare as text
    row("c=eq.a", "bpchar", "a  ", true); // trailing spaces insignificant
    row("c=lt.b", "bpchar", "a  ", true);
    row("c=eq.hello", "citext", "Hello", true);
    row("c=lt.B", "citext", "a", true);

    // ---- uuid
    row("c=eq.A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11", "uuid", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
        true);
    row("c=eq.{a0eebc999c0b4ef8bb6d6bb9bd380a11}", "uuid", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
        true);
    row("c=eq.a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12", "uuid", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
        false);
    row("c=gt.00000000-0000-0000-0000-000000000000", "uuid", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
        true);
    row("c=eq.xyz", "uuid", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", false);
    row("c=eq.a0eebc99--9c0b-4ef8-bb6d-6bb9bd380a11", "uuid",
        "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", false);

    // ---- date / time
    row("c=eq.2024-01-01T12:00:00+02:00", "timestamptz", "2024-01-01 10:00:00+00", true);
    row("c=eq.2024-01-01T04:30:00Z", "timestamptz", "2024-01-01 10:00:00+05:30", true);
    row("c=gt.2024-01-01", "timestamptz", "2024-01-01 10:00:00+00", true);
    row("c=eq.2024-01-01", "timestamptz", "2024-01-01 00:00:00+00", true);
    row("c=gt.2024-05-01T12:00:00.122Z", "timestamptz", "2024-05-01 12:00:00.123+00", true);
    row("c=lt.infinity", "timestamptz", "2024-05-01 12:00:00+00", true);
    row("c=gt.-infinity", "timestamptz", "2024-05-01 12:00:00+00", true);
    row("c=lt.2024-01-01 10:00:00-01", "timestamptz", "2024-01-01 10:00:00+00", true);
    row("c=eq.not a date", "timestamptz", "2024-01-01 10:00:00+00", false);
    row("c=eq.2024-01-01T10:00:00+05", "timestamp", "2024-01-01 10:00:00", true); // offset ignored
    row("c=lt.2024-01-02", "timestamp", "2024-01-01 10:00:00", true);
    row("c=eq.2024-01-01 10:00:00.5", "timestamp", "2024-01-01 10:00:00.500", true);
    row("c=eq.2024-01-01 12:00", "date", "2024-01-01", true);
    row("c=lt.2024-01-02", "date", "2024-01-01", true);
    row("c=eq.2024-02-29", "date", "2024-02-29", true);
    row("c=eq.2023-02-29", "date", "2023-03-01", false); // not a date
    row("c=eq.2024-02-30", "date", "2024-03-01", false);
    row("c=lt.2024-01-01", "date", "2024-01-01 BC", true);
    // Years whose microseconds do not fit 64 bits are out of range (fuzzer: a signed overflow).
    row("c=gte.\"404848-05-01T12:00:00+00:00\"", "timestamptz", "2024-05-01 12:00:00+00", false);
    row("c=lt.9999999-12-31", "date", "2024-01-01", false);
    row("c=lt.404848-05-01", "timestamp", "2024-01-01 10:00:00", false);
    row("c=gt.2024-01-01", "timestamptz", "404848-05-01 12:00:00+00", false);
    row("c=eq.10:00", "time", "10:00:00", true);
    row("c=lt.10:00:01", "time", "10:00:00", true);

    // ---- json, arrays (values with commas are quoted, or they would split the filter)
    row("c=eq.\"{\\\"b\\\":[1,2],\\\"a\\\":1}\"", "jsonb", "{\"a\": 1, \"b\": [1, 2]}", true);
    row("c=neq.{\"a\":2}", "jsonb", "{\"a\": 1}", true);
    row("c=lt.{\"a\":2}", "jsonb", "{\"a\": 1}", false); // no ordering here
    row("c=eq.1", "jsonb", "1", true);
    row("c=eq.{\"a\":1}", "json", "{\"a\":1}", false); // json has no = operator
    row("c=eq.\"{1,2,3}\"", "_int4", "{1,2,3}", true);
    row("c=eq.\"{1,02}\"", "_int4", "{1,2}", true);
    row("c=lt.\"{1,3}\"", "_int4", "{1,2}", true);
    row("c=lt.\"{1,2,0}\"", "_int4", "{1,2}", true);
    row("c=eq.\"{1,NULL}\"", "_int4", "{1,NULL}", true);
    row("c=eq.\"{a,\\\"b c\\\"}\"", "_text", "{a,\"b c\"}", true);
    row("c=eq.\"{1,x}\"", "_int4", "{1,2}", false);

    // ---- in
    row("c=in.(1,2,3)", "int4", "2", true);
    row("c=in.(1,2,3)", "int4", "4", false);
    row("c=not.in.(1,2,3)", "int4", "4", true);
    row("c=not.in.(1,2,3)", "int4", "2", false);
    row("c=in.(1,2,3)", "int4", Null, false);
    row("c=not.in.(1,2,3)", "int4", Null, false);
    row("c=in.(1,NULL)", "int4", "1", true);
    row("c=in.(1,NULL)", "int4", "4", false); // NULL: no match but a NULL element
    row("c=not.in.(1,NULL)", "int4", "4", false); // NOT NULL is NULL
    row("c=in.( 1 , 2 )", "int4", "2", true);
    row("c=in.(1,abc)", "int4", "1", false); // the array does not cast
    row("c=in.(a,b,\"c,d\")", "text", "c,d", true);
    row("c=in.(a,b,\"c,d\")", "text", "c", false);
    row("c=in.(\"NULL\")", "text", "NULL", true); // quoted: a string, not NULL
    row("c=in.(a,b)", "bpchar", "a  ", true);
    row("c=in.()", "int4", "1", false);
    row("c=in.(A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11)", "uuid",
        "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", true);
    row("c=in.(\"x)", "text", "x", false); // malformed literal

    // ---- like / ilike
    row("c=like.hel%", "text", "hello", true);
    row("c=like.h_llo", "text", "hello", true);
    row("c=like.%llo", "text", "hello", true);
    row("c=like.%l%o", "text", "hello", true);
    row("c=like.%bc%bc", "text", "abcabc", true);
    row("c=like.%bc%bd", "text", "abcabc", false);
    row("c=like.HEL%", "text", "hello", false);
    row("c=like.hell", "text", "hello", false);
    row("c=like.50\\%", "text", "50%", true);
    row("c=like.50\\%", "text", "500", false);
    row("c=like.a\\_c", "text", "a_c", true);
    row("c=like.a\\_c", "text", "abc", false);
    row("c=like.abc\\", "text", "abc", false); // pattern ends with the escape: error upstream
    row("c=not.like.abc\\", "text", "abc", false);
    row("c=like.%", "text", "", true);
    row("c=like.", "text", "abc", false);
    row("c=like.h_llo", "text", "h\xc3\xa9llo", true); // '_' is one character
    row("c=like.hel%", "text", Null, false);
    row("c=not.like.hel%", "text", Null, false);
    row("c=not.like.hel%", "text", "hello", false);
    row("c=not.like.hel%", "text", "world", true);
    row("c=like.a", "bpchar", "a  ", false); // the column keeps its padding
    row("c=like.a%", "bpchar", "a  ", true);
    row("c=like.HE%", "citext", "hello", true); // citext's LIKE ignores case
    row("c=ilike.HEL%", "text", "hello", true);
    row("c=ilike.H\xc3\x89LLO", "text", "h\xc3\xa9llo", true);
    row("c=not.ilike.HEL%", "text", "hello", false);
    row("c=ilike.x%", "varchar", "hello", false);

    // ---- match / imatch
    row("c=match.^h.*o$", "text", "hello", true);
    row("c=match.^h", "text", "Hello", false);
    row("c=imatch.^h", "text", "Hello", true);
    row("c=match.a.b", "text", "a\nb", true); // '.' matches a newline in an ARE
    row("c=match.(", "text", "(", false); // invalid pattern
    row("c=not.match.(", "text", "(", false);
    row("c=not.match.^x", "text", "hello", true);
    row("c=match.ell", "text", "hello", true); // unanchored
    row("c=match.^h", "text", Null, false);
    row("c=not.imatch.^H", "text", "hello", false);
    row("c=match.^h", "citext", "Hello", true);

    // ---- is
    row("c=is.null", "int4", Null, true);
    row("c=is.null", "int4", "1", false);
    row("c=not.is.null", "int4", Null, false);
    row("c=not.is.null", "int4", "1", true);
    row("c=is.true", "bool", "t", true);
    row("c=is.true", "bool", "f", false);
    row("c=is.true", "bool", Null, false);
    row("c=is.false", "bool", "f", true);
    row("c=is.false", "bool", Null, false);
    row("c=is.unknown", "bool", Null, true);
    row("c=is.unknown", "bool", "t", false);
    row("c=not.is.true", "bool", Null, true);
    row("c=not.is.false", "bool", "t", true);
    row("c=not.is.unknown", "bool", "f", true);
    row("c=is.true", "int4", "1", false); // needs a boolean column
    row("c=not.is.true", "int4", "1", false);
    row("c=is.maybe", "bool", "t", false);

    // ---- isdistinct
    row("c=isdistinct.5", "int4", "5", false);
    row("c=isdistinct.5", "int4", "6", true);
    row("c=isdistinct.5", "int4", Null, true);
    row("c=not.isdistinct.5", "int4", Null, false);
    row("c=not.isdistinct.5", "int4", "5", true);
    row("c=not.isdistinct.05", "int4", "5", true);
    row("c=isdistinct.abc", "int4", "5", false);
    row("c=isdistinct.abc", "int4", Null, false);
    row("c=isdistinct.a", "text", "a", false);
    row("c=isdistinct.a", "text", Null, true);
}

void FilterMatcherTest::evaluates()
{
    QFETCH(QString, filter);
    QFETCH(QByteArray, type);
    QFETCH(QByteArray, value);
    QFETCH(bool, isNull);
    QFETCH(bool, expected);

    const QList<NamedColumn> columns = {
        NamedColumn{
                QStringLiteral("c"),
                ColumnValue{ type, isNull ? std::nullopt : std::optional<QByteArray>(value) } },
    };
    const QList<Filter> filters = { parseOne(filter) };
    QCOMPARE(rt::subscriptions::visibleThroughFilters(filters, ColumnList(columns)), expected);
}

void FilterMatcherTest::nullIsUnknownNotFalse()
{
    const ColumnValue null{ QByteArrayLiteral("int4"), std::nullopt };
    QCOMPARE(rt::subscriptions::checkFilter(parseOne(QStringLiteral("c=eq.1")), null),
             std::nullopt);
    QCOMPARE(rt::subscriptions::checkFilter(parseOne(QStringLiteral("c=not.eq.1")), null),
             std::nullopt);
    QCOMPARE(rt::subscriptions::checkFilter(parseOne(QStringLiteral("c=is.null")), null),
             std::optional<bool>(true));
    QCOMPARE(rt::subscriptions::checkFilter(parseOne(QStringLiteral("c=isdistinct.1")), null),
             std::optional<bool>(true));
    const ColumnValue one{ QByteArrayLiteral("int4"), QByteArrayLiteral("1") };
    QCOMPARE(rt::subscriptions::checkFilter(parseOne(QStringLiteral("c=not.eq.1")), one),
             std::optional<bool>(false));
}

void FilterMatcherTest::emptyFilterListIsVisible()
{
    const QList<NamedColumn> none;
    QVERIFY(rt::subscriptions::visibleThroughFilters({}, ColumnList(none)));
}

void FilterMatcherTest::missingColumnIsNotVisible()
{
    const QList<NamedColumn> row = {
        NamedColumn{ QStringLiteral("id"),
                     ColumnValue{ QByteArrayLiteral("int4"), QByteArrayLiteral("1") } },
    };
    for (const char *text : { "other=eq.1", "other=not.eq.1", "other=is.null", "other=not.is.null",
                              "other=isdistinct.1", "ID=eq.1" }) {
        QVERIFY2(!rt::subscriptions::visibleThroughFilters({ parseOne(QString::fromUtf8(text)) },
                                                           ColumnList(row)),
                 text);
    }
}

void FilterMatcherTest::filtersAreAnded()
{
    const QList<NamedColumn> row = {
        NamedColumn{ QStringLiteral("id"),
                     ColumnValue{ QByteArrayLiteral("int8"), QByteArrayLiteral("42") } },
        NamedColumn{ QStringLiteral("title"),
                     ColumnValue{ QByteArrayLiteral("text"), QByteArrayLiteral("hello") } },
        NamedColumn{ QStringLiteral("done"),
                     ColumnValue{ QByteArrayLiteral("bool"), std::nullopt } },
    };
    const auto visible = [&](const char *filter) {
        const auto parsed = rt::subscriptions::parseFilterSyntax(QString::fromUtf8(filter));
        if (!parsed.ok()) {
            qFatal("bad test filter %s", filter);
        }
        return rt::subscriptions::visibleThroughFilters(*parsed, ColumnList(row));
    };
    QVERIFY(visible("id=gt.0,id=lt.100"));
    QVERIFY(visible("id=eq.42,title=like.hel%,done=is.null"));
    QVERIFY(!visible("id=gt.0,id=lt.10"));
    QVERIFY(!visible("id=eq.42,title=eq.world"));
    QVERIFY(!visible("id=eq.42,done=eq.true")); // NULL comparison
    QVERIFY(!visible("id=eq.42,missing=is.null"));
    QVERIFY(visible("title=not.in.(a,b),done=not.is.true"));
}

void FilterMatcherTest::rowViewOverALambda()
{
    // Callers keep their own row layout and hand a lookup to the matcher.
    const ColumnValue id{ QByteArrayLiteral("int4"), QByteArrayLiteral("7") };
    int lookups = 0;
    const auto lookup = [&](QStringView name) -> const ColumnValue * {
        ++lookups;
        return name == u"id" ? &id : nullptr;
    };
    const QList<Filter> filters = { parseOne(QStringLiteral("id=eq.7")),
                                    parseOne(QStringLiteral("id=in.(1,7)")) };
    QVERIFY(rt::subscriptions::visibleThroughFilters(filters, lookup));
    QCOMPARE(lookups, 2);
    const QList<Filter> failing = { parseOne(QStringLiteral("id=eq.8")),
                                    parseOne(QStringLiteral("id=eq.7")) };
    lookups = 0;
    QVERIFY(!rt::subscriptions::visibleThroughFilters(failing, lookup));
    QCOMPARE(lookups, 1); // stops at the first filter that fails
}

QTEST_APPLESS_MAIN(FilterMatcherTest)
#include "tst_filter_matcher.moc"
