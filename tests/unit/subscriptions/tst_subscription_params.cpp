// Tests of postgres_changes parameter parsing (spec/server-protocol.md §6.1), the Elixir
// `inspect` rendering used in its error texts, and the "Unable to subscribe" messages (§3.5).
#include "server/subscriptions/elixir_inspect.h"
#include "server/subscriptions/params.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <cmath>

using rt::subscriptions::ElixirTerm;
using rt::subscriptions::Filter;
using rt::subscriptions::Op;
using rt::subscriptions::SubscriptionParams;

namespace {

QJsonValue json(const QByteArray &text)
{
    QJsonParseError error{};
    const QJsonDocument document = QJsonDocument::fromJson("[" + text + "]", &error);
    if (error.error != QJsonParseError::NoError) {
        qFatal("bad test JSON: %s", text.constData());
    }
    return document.array().at(0);
}

// "event|schema|table|filters|select" with filters as col:op:value:negate joined by ';' and
// select as "nil" or columns joined by ','.
QString describe(const SubscriptionParams &params)
{
    QStringList filters;
    for (const Filter &filter : params.filters) {
        filters.append(filter.column + u':' + rt::subscriptions::opName(filter.op) + u':'
                       + filter.value + u':' + (filter.negate ? u't' : u'f'));
    }
    return params.event + u'|' + params.schema + u'|' + params.table + u'|' + filters.join(u';')
            + u'|' + (params.select ? params.select->join(u',') : QStringLiteral("nil"));
}

const QString NoParams = QStringLiteral(
        "No subscription params provided. Please provide at least a `schema` or `table` to "
        "subscribe to: ");
const QString SelectError = QStringLiteral(
        "Error parsing `select` params: expected a list of column name strings, e.g. select: "
        "[\"col1\", \"col2\"]");
const QString WildcardSelect = QStringLiteral(
        "Column selection is not supported for wildcard subscriptions. Provide an explicit "
        "schema and table name.");

} // namespace

class SubscriptionParamsTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void accepts_data();
    void accepts();
    void refuses_data();
    void refuses();
    void nonObjectElements();
    void inspectJson_data();
    void inspectJson();
    void inspectFloats_data();
    void inspectFloats();
    void inspectLimits();
    void inspectPretty();
    void describeForError();
    void messages();
};

void SubscriptionParamsTest::accepts_data()
{
    QTest::addColumn<QByteArray>("params");
    QTest::addColumn<QString>("expected");

    QTest::newRow("schema+table+filter")
            << QByteArray(R"({"schema":"public","table":"messages","filter":"subject=eq.hey"})")
            << "*|public|messages|subject:eq:hey:f|nil";
    QTest::newRow("schema+table") << QByteArray(R"({"schema":"public","table":"messages"})")
                                  << "*|public|messages||nil";
    QTest::newRow("schema only") << QByteArray(R"({"schema":"public"})") << "*|public|*||nil";
    QTest::newRow("table only") << QByteArray(R"({"table":"messages"})")
                                << "*|public|messages||nil";
    QTest::newRow("wildcards") << QByteArray(R"({"schema":"*","table":"*"})") << "*|*|*||nil";
    QTest::newRow("empty filter") << QByteArray(R"({"schema":"public","table":"t","filter":""})")
                                  << "*|public|t||nil";
    QTest::newRow("blank filter") << QByteArray(R"({"schema":"public","table":"t","filter":"   "})")
                                  << "*|public|t||nil";
    QTest::newRow("extra keys ignored")
            << QByteArray(R"({"schema":"public","table":"t","id":5,"foo":[1]})")
            << "*|public|t||nil";
    QTest::newRow("empty strings accepted")
            << QByteArray(R"({"schema":"","table":""})") << "*||||nil";

    // event
    QTest::newRow("event INSERT") << QByteArray(R"({"event":"INSERT","schema":"public"})")
                                  << "INSERT|public|*||nil";
    QTest::newRow("event insert") << QByteArray(R"({"event":"insert","schema":"public"})")
                                  << "INSERT|public|*||nil";
    QTest::newRow("event Update") << QByteArray(R"({"event":"Update","schema":"public"})")
                                  << "UPDATE|public|*||nil";
    QTest::newRow("event delete") << QByteArray(R"({"event":"dElEtE","schema":"public"})")
                                  << "DELETE|public|*||nil";
    QTest::newRow("event *") << QByteArray(R"({"event":"*","schema":"public"})")
                             << "*|public|*||nil";
    QTest::newRow("event TRUNCATE")
            << QByteArray(R"({"event":"TRUNCATE","schema":"public"})") << "*|public|*||nil";
    QTest::newRow("event empty") << QByteArray(R"({"event":"","schema":"public"})")
                                 << "*|public|*||nil";
    QTest::newRow("event number") << QByteArray(R"({"event":1,"schema":"public"})")
                                  << "*|public|*||nil";
    QTest::newRow("event null") << QByteArray(R"({"event":null,"schema":"public"})")
                                << "*|public|*||nil";
    QTest::newRow("event with spaces")
            << QByteArray(R"({"event":" INSERT","schema":"public"})") << "*|public|*||nil";

    // select
    QTest::newRow("select") << QByteArray(R"({"schema":"public","table":"t","select":["a","b"]})")
                            << "*|public|t||a,b";
    QTest::newRow("select drops non-strings")
            << QByteArray(R"({"schema":"public","table":"t","select":["a",1,null,{"x":1},"b"]})")
            << "*|public|t||a,b";
    QTest::newRow("select empty = all")
            << QByteArray(R"({"schema":"public","table":"t","select":[]})") << "*|public|t||nil";
    QTest::newRow("select only non-strings = all")
            << QByteArray(R"({"schema":"public","table":"t","select":[1,2]})") << "*|public|t||nil";
    QTest::newRow("select null") << QByteArray(R"({"schema":"public","table":"t","select":null})")
                                 << "*|public|t||nil";
    QTest::newRow("select number")
            << QByteArray(R"({"schema":"public","table":"t","select":5})") << "*|public|t||nil";
    QTest::newRow("select object")
            << QByteArray(R"({"schema":"public","table":"t","select":{"a":1}})")
            << "*|public|t||nil";
    QTest::newRow("empty select with wildcard")
            << QByteArray(R"({"schema":"public","select":[]})") << "*|public|*||nil";
    QTest::newRow("select with filter")
            << QByteArray(R"({"schema":"public","table":"t","filter":"id=gt.1","select":["id"]})")
            << "*|public|t|id:gt:1:f|id";
    QTest::newRow("table-only select")
            << QByteArray(R"({"table":"t","select":["a"]})") << "*|public|t||a";

    // A token next to a valid shape does not matter.
    QTest::newRow("user_token with schema")
            << QByteArray(R"({"schema":"public","user_token":"x"})") << "*|public|*||nil";
}

void SubscriptionParamsTest::accepts()
{
    QFETCH(QByteArray, params);
    QFETCH(QString, expected);
    const auto result = rt::subscriptions::parseParams(json(params).toObject());
    QVERIFY2(result.ok(), qPrintable(result.ok() ? QString() : result.error()));
    QCOMPARE(describe(*result), expected);
}

void SubscriptionParamsTest::refuses_data()
{
    QTest::addColumn<QByteArray>("params");
    QTest::addColumn<QString>("error");

    QTest::newRow("empty") << QByteArray("{}") << NoParams + QStringLiteral("%{}");
    QTest::newRow("null filter") << QByteArray(R"({"schema":"public","table":"t","filter":null})")
                                 << NoParams
                    + QStringLiteral(R"(%{"filter" => nil, "schema" => "public", "table" => "t"})");
    QTest::newRow("filter without table")
            << QByteArray(R"({"event":"INSERT","schema":"public","filter":"id=eq.1"})")
            << NoParams
                    + QStringLiteral(
                            R"(%{"event" => "INSERT", "filter" => "id=eq.1", "schema" => "public"})");
    QTest::newRow("filter without schema")
            << QByteArray(R"({"table":"t","filter":"id=eq.1"})")
            << NoParams + QStringLiteral(R"(%{"filter" => "id=eq.1", "table" => "t"})");
    QTest::newRow("non-string schema")
            << QByteArray(R"({"schema":1})") << NoParams + QStringLiteral(R"(%{"schema" => 1})");
    QTest::newRow("null table") << QByteArray(R"({"schema":"public","table":null})")
                                << NoParams
                    + QStringLiteral(R"(%{"schema" => "public", "table" => nil})");
    QTest::newRow("non-string filter")
            << QByteArray(R"({"schema":"public","table":"t","filter":5})")
            << NoParams
                    + QStringLiteral(R"(%{"filter" => 5, "schema" => "public", "table" => "t"})");
    QTest::newRow("only event") << QByteArray(R"({"event":"*"})")
                                << NoParams + QStringLiteral(R"(%{"event" => "*"})");
    QTest::newRow("nested values")
            << QByteArray(R"({"table":["a",{"b":true}],"x":false})")
            << NoParams + QStringLiteral(R"(%{"table" => ["a", %{"b" => true}], "x" => false})");
    QTest::newRow("user_token redacted") << QByteArray(R"({"user_token":"secret","table":null})")
                                         << NoParams + QStringLiteral("<redacted>");
    QTest::newRow("auth_token redacted")
            << QByteArray(R"({"auth_token":"secret"})") << NoParams + QStringLiteral("<redacted>");

    QTest::newRow("filter parse error")
            << QByteArray(R"({"schema":"public","table":"messages","filter":"subject=foo.hey"})")
            << QStringLiteral(R"(Error parsing `filter` params: ["foo", "hey"])");
    QTest::newRow("filter undefined")
            << QByteArray(R"({"schema":"public","table":"messages","filter":"undefined"})")
            << QStringLiteral(R"(Error parsing `filter` params: ["undefined"])");

    QTest::newRow("string select")
            << QByteArray(R"({"schema":"public","table":"t","select":"a"})") << SelectError;
    QTest::newRow("string select is checked first")
            << QByteArray(R"({"select":"a"})") << SelectError;
    QTest::newRow("string select before filter error")
            << QByteArray(R"({"schema":"public","table":"t","filter":"x","select":"a"})")
            << SelectError;
    QTest::newRow("select with schema only")
            << QByteArray(R"({"schema":"public","select":["a"]})") << WildcardSelect;
    QTest::newRow("select with * table")
            << QByteArray(R"({"schema":"public","table":"*","select":["a"]})") << WildcardSelect;
    QTest::newRow("select with * schema")
            << QByteArray(R"({"schema":"*","table":"t","select":["a"]})") << WildcardSelect;
    QTest::newRow("filter error before wildcard select")
            << QByteArray(R"({"schema":"*","table":"*","filter":"x","select":["a"]})")
            << QStringLiteral(R"(Error parsing `filter` params: ["x"])");
    QTest::newRow("select list then no params")
            << QByteArray(R"({"select":["a"]})")
            << NoParams + QStringLiteral(R"(%{"select" => ["a"]})");
}

void SubscriptionParamsTest::refuses()
{
    QFETCH(QByteArray, params);
    QFETCH(QString, error);
    const auto result = rt::subscriptions::parseParams(json(params).toObject());
    QVERIFY(!result.ok());
    QCOMPARE(result.error(), error);
    // The QJsonValue overload agrees for objects.
    const auto viaValue = rt::subscriptions::parseParams(json(params));
    QVERIFY(!viaValue.ok());
    QCOMPARE(viaValue.error(), error);
}

void SubscriptionParamsTest::nonObjectElements()
{
    const auto text = rt::subscriptions::parseParams(json("\"x\""));
    QVERIFY(!text.ok());
    QCOMPARE(text.error(), NoParams + QStringLiteral("\"x\""));
    const auto list = rt::subscriptions::parseParams(json("[1, 2]"));
    QVERIFY(!list.ok());
    QCOMPARE(list.error(), NoParams + QStringLiteral("[1, 2]"));
    const auto object = rt::subscriptions::parseParams(json(R"({"table":"t"})"));
    QVERIFY(object.ok());
    QCOMPARE(describe(*object), QStringLiteral("*|public|t||nil"));
}

void SubscriptionParamsTest::inspectJson_data()
{
    QTest::addColumn<QByteArray>("value");
    QTest::addColumn<QString>("expected");

    QTest::newRow("empty map") << QByteArray("{}") << "%{}";
    QTest::newRow("map") << QByteArray(R"({"schema":"public","filter":null})")
                         << R"(%{"filter" => nil, "schema" => "public"})";
    QTest::newRow("binary key order") << QByteArray(R"({"b":1,"a":2,"B":3,"aa":4,"":5})")
                                      << R"(%{"" => 5, "B" => 3, "a" => 2, "aa" => 4, "b" => 1})";
    QTest::newRow("utf-8 keys sort after ascii")
            << QByteArray(R"({"é":1,"z":2})") << QStringLiteral("%{\"z\" => 2, \"\u00e9\" => 1}");
    QTest::newRow("atoms") << QByteArray("[true, false, null]") << "[true, false, nil]";
    QTest::newRow("integers") << QByteArray("[0, -5, 123456789012]") << "[0, -5, 123456789012]";
    QTest::newRow("empty list") << QByteArray("[]") << "[]";
    QTest::newRow("strings") << QByteArray(R"(["a", "b"])") << R"(["a", "b"])";
    QTest::newRow("nested") << QByteArray(R"([[1000, "a"], {"k": null}])")
                            << R"([[1000, "a"], %{"k" => nil}])";
    QTest::newRow("charlist") << QByteArray("[104, 105]") << R"(~c"hi")";
    QTest::newRow("charlist escapes") << QByteArray("[7, 10, 34, 35, 123]") << R"(~c"\a\n\"\#{")";
    QTest::newRow("not a charlist") << QByteArray("[104, 1]") << "[104, 1]";
    QTest::newRow("quote and backslash") << QByteArray(R"("a\"b\\c")") << R"("a\"b\\c")";
    QTest::newRow("control escapes")
            << QByteArray(R"("\n\t\r\b\f\u000b\u0007\u001b\u007f")") << R"("\n\t\r\b\f\v\a\e\d")";
    QTest::newRow("interpolation") << QByteArray(R"("#{x} # {")") << R"("\#{x} # {")";
    QTest::newRow("unicode") << QByteArray(R"("caf\u00e9 \ud83d\ude00")")
                             << QStringLiteral("\"caf\u00e9 \U0001F600\"");
    QTest::newRow("invisible characters")
            << QByteArray(R"("a\u00a0b\u200bc\ufeff")") << R"("a\u00A0b\u200Bc\uFEFF")";
    QTest::newRow("NUL makes a bitstring") << QByteArray(R"("a\u0000")") << "<<97, 0>>";
    QTest::newRow("C1 control makes a bitstring") << QByteArray(R"("\u0085")") << "<<194, 133>>";
    QTest::newRow("empty string") << QByteArray(R"("")") << R"("")";
}

void SubscriptionParamsTest::inspectJson()
{
    QFETCH(QByteArray, value);
    QFETCH(QString, expected);
    QCOMPARE(rt::subscriptions::elixirInspect(json(value)), expected);
}

void SubscriptionParamsTest::inspectFloats_data()
{
    QTest::addColumn<double>("value");
    QTest::addColumn<QString>("expected");

    QTest::newRow("1.0") << 1.0 << "1.0";
    QTest::newRow("100.0") << 100.0 << "100.0";
    QTest::newRow("-2.5") << -2.5 << "-2.5";
    QTest::newRow("0.0") << 0.0 << "0.0";
    QTest::newRow("0.5") << 0.5 << "0.5";
    QTest::newRow("0.1") << 0.1 << "0.1";
    QTest::newRow("0.001") << 0.001 << "0.001";
    QTest::newRow("0.0001") << 0.0001 << "1.0e-4";
    QTest::newRow("1.5e-7") << 1.5e-7 << "1.5e-7";
    QTest::newRow("123.456") << 123.456 << "123.456";
    QTest::newRow("1.0e16") << 1.0e16 << "1.0e16";
    QTest::newRow("1.0e20") << 1.0e20 << "1.0e20";
    QTest::newRow("1.5e300") << 1.5e300 << "1.5e300";
    QTest::newRow("1.2345678901234567e19") << 12345678901234567890.0 << "1.2345678901234567e19";
    QTest::newRow("123456.789") << 123456.789 << "123456.789";
}

void SubscriptionParamsTest::inspectFloats()
{
    QFETCH(double, value);
    QFETCH(QString, expected);
    QCOMPARE(rt::subscriptions::inspect(ElixirTerm::floating(value)), expected);
    // A QJsonValue built from a double keeps it a float (parsed integral numbers do not).
    if (std::trunc(value) != value) {
        QCOMPARE(rt::subscriptions::elixirInspect(QJsonValue(value)), expected);
    }
}

void SubscriptionParamsTest::inspectLimits()
{
    // 50 elements, then "...".
    QJsonArray numbers;
    QStringList shown;
    for (int i = 0; i < 60; ++i) {
        numbers.append(1000 + i);
        if (i < 50) {
            shown.append(QString::number(1000 + i));
        }
    }
    QCOMPARE(rt::subscriptions::elixirInspect(numbers),
             u'[' + shown.join(QStringLiteral(", ")) + QStringLiteral(", ...]"));

    // Elixir 1.19 threads the limit through nested containers: each inner list of three costs
    // four, so the 13th list shows one element and the outer list stops after it.
    QJsonArray outer;
    QStringList expected;
    for (int i = 0; i < 20; ++i) {
        outer.append(QJsonArray{ 1000 + 3 * i, 1001 + 3 * i, 1002 + 3 * i });
        if (i < 12) {
            expected.append(QStringLiteral("[%1, %2, %3]")
                                    .arg(1000 + 3 * i)
                                    .arg(1001 + 3 * i)
                                    .arg(1002 + 3 * i));
        }
    }
    expected.append(QStringLiteral("[1036, ...]"));
    expected.append(QStringLiteral("..."));
    QCOMPARE(rt::subscriptions::elixirInspect(outer),
             u'[' + expected.join(QStringLiteral(", ")) + u']');

    // A map with more than 50 keys.
    QJsonObject wide;
    for (int i = 0; i < 55; ++i) {
        wide.insert(QStringLiteral("k%1").arg(i, 2, 10, QLatin1Char('0')), i);
    }
    const QString inspected = rt::subscriptions::elixirInspect(wide);
    QVERIFY(inspected.startsWith(QStringLiteral("%{\"k00\" => 0, \"k01\" => 1, ")));
    QVERIFY(inspected.endsWith(QStringLiteral("\"k49\" => 49, ...}")));

    // Strings are cut after 4096 characters.
    const QString longText(5000, u'x');
    QCOMPARE(rt::subscriptions::elixirInspect(longText),
             u'"' + QString(4096, u'x') + QStringLiteral("\" <> ..."));

    // A non-printable binary shows at most `limit` bytes.
    QByteArray bytes(60, '\x01');
    QStringList ones;
    for (int i = 0; i < 50; ++i) {
        ones.append(QStringLiteral("1"));
    }
    QCOMPARE(rt::subscriptions::inspect(ElixirTerm::binary(bytes)),
             QStringLiteral("<<") + ones.join(QStringLiteral(", ")) + QStringLiteral(", ...>>"));
}

void SubscriptionParamsTest::inspectPretty()
{
    rt::subscriptions::InspectOptions pretty;
    pretty.pretty = true;

    // Short: one line either way.
    const ElixirTerm shortList = ElixirTerm::list({ ElixirTerm::string(QStringLiteral("a")) });
    QCOMPARE(rt::subscriptions::inspect(shortList, pretty), QStringLiteral("[\"a\"]"));

    // Strings fill lines up to 80 columns, continuation lines indented by one.
    QList<ElixirTerm> columns;
    for (int i = 1; i <= 20; ++i) {
        columns.append(
                ElixirTerm::string(QStringLiteral("column_%1").arg(i, 2, 10, QLatin1Char('0'))));
    }
    const QString expected = QStringLiteral("[\"column_01\", \"column_02\", \"column_03\", "
                                            "\"column_04\", \"column_05\", \"column_06\",\n"
                                            " \"column_07\", \"column_08\", \"column_09\", "
                                            "\"column_10\", \"column_11\", \"column_12\",\n"
                                            " \"column_13\", \"column_14\", \"column_15\", "
                                            "\"column_16\", \"column_17\", \"column_18\",\n"
                                            " \"column_19\", \"column_20\"]");
    QCOMPARE(rt::subscriptions::inspect(ElixirTerm::list(columns), pretty), expected);
    // Without pretty: one line.
    QVERIFY(!rt::subscriptions::inspect(ElixirTerm::list(columns)).contains(u'\n'));

    // A long tuple wraps inside its braces.
    QList<ElixirTerm> parts;
    for (int i = 0; i < 8; ++i) {
        parts.append(ElixirTerm::string(QString(12, QLatin1Char(char('a' + i)))));
    }
    QCOMPARE(rt::subscriptions::inspect(ElixirTerm::tuple(parts), pretty),
             QStringLiteral(
                     "{\"aaaaaaaaaaaa\", \"bbbbbbbbbbbb\", \"cccccccccccc\", \"dddddddddddd\", "
                     "\"eeeeeeeeeeee\",\n \"ffffffffffff\", \"gggggggggggg\", \"hhhhhhhhhhhh\"}"));
}

void SubscriptionParamsTest::describeForError()
{
    SubscriptionParams params;
    params.event = QStringLiteral("*");
    params.schema = QStringLiteral("public");
    params.table = QStringLiteral("test");
    params.filters = { Filter{ QStringLiteral("subject"), Op::Eq, QStringLiteral("hey"), false,
                               nullptr } };
    QCOMPARE(
            rt::subscriptions::describeForError(params),
            QStringLiteral(
                    R"([event: *, schema: public, table: test, filters: [{"subject", "eq", "hey", false}], select: nil])"));

    SubscriptionParams insert;
    insert.event = QStringLiteral("INSERT");
    insert.schema = QStringLiteral("public");
    insert.table = QStringLiteral("*");
    QCOMPARE(rt::subscriptions::describeForError(insert),
             QStringLiteral("[event: INSERT, schema: public, table: *, filters: [], select: nil]"));

    SubscriptionParams selected = params;
    selected.filters = { Filter{ QStringLiteral("id"), Op::In, QStringLiteral("{1,\"a b\"}"), true,
                                 nullptr } };
    selected.select = QStringList{ QStringLiteral("id"), QStringLiteral("title") };
    QCOMPARE(
            rt::subscriptions::describeForError(selected),
            QStringLiteral(
                    R"([event: *, schema: public, table: test, filters: [{"id", "in", "{1,\"a b\"}", true}], select: ["id", "title"]])"));

    // Past 80 columns the filter list is laid out one tuple per line (inspect pretty: true).
    SubscriptionParams many = params;
    many.filters = { Filter{ QStringLiteral("id"), Op::Gt, QStringLiteral("0"), false, nullptr },
                     Filter{ QStringLiteral("id"), Op::Lt, QStringLiteral("100"), false, nullptr },
                     Filter{ QStringLiteral("name"), Op::Eq, QStringLiteral("abc"), true,
                             nullptr } };
    QCOMPARE(rt::subscriptions::describeForError(many),
             QStringLiteral("[event: *, schema: public, table: test, filters: [\n"
                            "  {\"id\", \"gt\", \"0\", false},\n"
                            "  {\"id\", \"lt\", \"100\", false},\n"
                            "  {\"name\", \"eq\", \"abc\", true}\n"
                            "], select: nil]"));

    // Ten filters fit the inspect limit (five per tuple); the eleventh becomes "...".
    SubscriptionParams eleven = params;
    eleven.filters.clear();
    for (int i = 0; i < 11; ++i) {
        eleven.filters.append(
                Filter{ QStringLiteral("c"), Op::Eq, QString::number(i), false, nullptr });
    }
    const QString described = rt::subscriptions::describeForError(eleven);
    QVERIFY2(described.contains(
                     QStringLiteral("  {\"c\", \"eq\", \"9\", false},\n  ...\n], select: nil]")),
             qPrintable(described));
    QVERIFY(!described.contains(QStringLiteral("\"10\"")));
}

void SubscriptionParamsTest::messages()
{
    SubscriptionParams params;
    params.event = QStringLiteral("*");
    params.schema = QStringLiteral("public");
    params.table = QStringLiteral("doesnotexist");
    QCOMPARE(rt::subscriptions::notInPublicationMessage(params),
             QStringLiteral("Unable to subscribe to changes with given parameters. Please check "
                            "Realtime is enabled for the given connect parameters: [event: *, "
                            "schema: public, table: doesnotexist, filters: [], select: nil]"));

    params.table = QStringLiteral("test");
    params.filters = { Filter{ QStringLiteral("notacolumn"), Op::Eq, QStringLiteral("123"), false,
                               nullptr } };
    QCOMPARE(rt::subscriptions::exceptionMessage(
                     params,
                     rt::subscriptions::raiseExceptionText(
                             QStringLiteral("invalid column for filter notacolumn"))),
             QStringLiteral("Unable to subscribe to changes with given parameters. An exception "
                            "happened so please check your connect parameters: [event: *, schema: "
                            "public, table: test, filters: [{\"notacolumn\", \"eq\", \"123\", "
                            "false}], select: nil]. Exception: ERROR P0001 (raise_exception) "
                            "invalid column for filter notacolumn"));
}

QTEST_APPLESS_MAIN(SubscriptionParamsTest)
#include "tst_subscription_params.moc"
