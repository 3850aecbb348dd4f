// Tests of the JSON typing of column values (what to_jsonb(text::type) gives, checked on a
// PostgreSQL 15.20 server with psql for the rows marked "pg") and of the built-in type names.
#include "server/pgoutput/types.h"
#include "server/pgoutput/values.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using rt::pgoutput::builtinTypeName;
using rt::pgoutput::jsonValue;

namespace {

// The value as compact JSON, wrapped in an array so that scalars can be written too.
QByteArray compact(const QJsonValue &value)
{
    return QJsonDocument(QJsonArray{ value }).toJson(QJsonDocument::Compact);
}

} // namespace

class PgoutputValuesTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void converts_data();
    void converts();
    void numbersKeepTheirKind();
    void builtinTypeNames_data();
    void builtinTypeNames();
    void unknownTypeNames();
};

void PgoutputValuesTest::converts_data()
{
    QTest::addColumn<QByteArray>("type");
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QByteArray>("json"); // compact JSON of [value]

    // Numbers
    QTest::newRow("int2") << QByteArray("int2") << QByteArray("-32768") << QByteArray("[-32768]");
    QTest::newRow("int4") << QByteArray("int4") << QByteArray("42") << QByteArray("[42]");
    QTest::newRow("int8 max") << QByteArray("int8") << QByteArray("9223372036854775807")
                              << QByteArray("[9223372036854775807]");
    QTest::newRow("int8 min") << QByteArray("int8") << QByteArray("-9223372036854775808")
                              << QByteArray("[-9223372036854775808]");
    QTest::newRow("float8") << QByteArray("float8") << QByteArray("1.5") << QByteArray("[1.5]");
    QTest::newRow("float8 exponent")
            << QByteArray("float8") << QByteArray("1.5e-07") << QByteArray("[1.5e-07]");
    QTest::newRow("float4 exponent")
            << QByteArray("float4") << QByteArray("3.4e+38") << QByteArray("[3.4e+38]");
    QTest::newRow("float8 negative zero (pg: 0)")
            << QByteArray("float8") << QByteArray("-0") << QByteArray("[0]");
    QTest::newRow("float8 NaN (pg)")
            << QByteArray("float8") << QByteArray("NaN") << QByteArray("[\"NaN\"]");
    QTest::newRow("float8 Infinity (pg)")
            << QByteArray("float8") << QByteArray("Infinity") << QByteArray("[\"Infinity\"]");
    QTest::newRow("float4 -Infinity (pg)")
            << QByteArray("float4") << QByteArray("-Infinity") << QByteArray("[\"-Infinity\"]");
    QTest::newRow("numeric") << QByteArray("numeric") << QByteArray("-12.25")
                             << QByteArray("[-12.25]");
    QTest::newRow("numeric integer")
            << QByteArray("numeric") << QByteArray("100") << QByteArray("[100]");
    QTest::newRow("numeric NaN (pg)")
            << QByteArray("numeric") << QByteArray("NaN") << QByteArray("[\"NaN\"]");
    QTest::newRow("numeric -Infinity (pg)")
            << QByteArray("numeric") << QByteArray("-Infinity") << QByteArray("[\"-Infinity\"]");
    // Beyond int64: a double (precision loss documented in values.h).
    QTest::newRow("numeric beyond int64")
            << QByteArray("numeric") << QByteArray("123456789012345678901234567890")
            << QByteArray("[1.2345678901234568e+29]");
    QTest::newRow("numeric beyond double")
            << QByteArray("numeric") << QByteArray("1e400") << QByteArray("[\"1e400\"]");
    QTest::newRow("int4 garbage stays text")
            << QByteArray("int4") << QByteArray("12abc") << QByteArray("[\"12abc\"]");
    QTest::newRow("float8 inf spelling stays text")
            << QByteArray("float8") << QByteArray("inf") << QByteArray("[\"inf\"]");
    QTest::newRow("oid is a string (pg)")
            << QByteArray("oid") << QByteArray("5") << QByteArray("[\"5\"]");
    QTest::newRow("money (pg)") << QByteArray("money") << QByteArray("$1.00")
                                << QByteArray("[\"$1.00\"]");

    // bool
    QTest::newRow("bool t") << QByteArray("bool") << QByteArray("t") << QByteArray("[true]");
    QTest::newRow("bool f") << QByteArray("bool") << QByteArray("f") << QByteArray("[false]");
    QTest::newRow("bool other") << QByteArray("bool") << QByteArray("yes")
                                << QByteArray("[\"yes\"]");

    // json / jsonb
    QTest::newRow("jsonb object") << QByteArray("jsonb")
                                  << QByteArray(R"({"b": 1, "a": [1, 2.5, "x"]})")
                                  << QByteArray(R"([{"a":[1,2.5,"x"],"b":1}])");
    QTest::newRow("json array") << QByteArray("json") << QByteArray("[1, null, true]")
                                << QByteArray("[[1,null,true]]");
    QTest::newRow("jsonb string") << QByteArray("jsonb") << QByteArray(R"("x")")
                                  << QByteArray(R"(["x"])");
    QTest::newRow("jsonb number") << QByteArray("jsonb") << QByteArray("12") << QByteArray("[12]");
    QTest::newRow("jsonb null") << QByteArray("jsonb") << QByteArray("null")
                                << QByteArray("[null]");
    QTest::newRow("jsonb empty object")
            << QByteArray("jsonb") << QByteArray("{}") << QByteArray("[{}]");
    QTest::newRow("json invalid") << QByteArray("json") << QByteArray("{nope")
                                  << QByteArray(R"(["{nope"])");
    QTest::newRow("json two values")
            << QByteArray("json") << QByteArray("1,2") << QByteArray(R"(["1,2"])");
    QTest::newRow("json bracket injection")
            << QByteArray("json") << QByteArray("1],[2") << QByteArray(R"(["1],[2"])");

    // bytea
    QTest::newRow("bytea hex (spec)") << QByteArray("bytea") << QByteArray("\\x0102030405")
                                      << QByteArray(R"(["0102030405"])");
    QTest::newRow("bytea empty") << QByteArray("bytea") << QByteArray("\\x")
                                 << QByteArray(R"([""])");
    QTest::newRow("bytea escape format")
            << QByteArray("bytea") << QByteArray("abc") << QByteArray(R"(["abc"])");

    // timestamptz / timestamp (pg: to_jsonb under several TimeZone settings)
    QTest::newRow("timestamptz utc")
            << QByteArray("timestamptz") << QByteArray("2024-05-01 10:00:00.123+00")
            << QByteArray(R"(["2024-05-01T10:00:00.123+00:00"])");
    QTest::newRow("timestamptz +05:30")
            << QByteArray("timestamptz") << QByteArray("2024-05-01 15:30:00.123+05:30")
            << QByteArray(R"(["2024-05-01T15:30:00.123+05:30"])");
    QTest::newRow("timestamptz -02:30")
            << QByteArray("timestamptz") << QByteArray("2024-05-01 07:30:00-02:30")
            << QByteArray(R"(["2024-05-01T07:30:00-02:30"])");
    QTest::newRow("timestamptz -07")
            << QByteArray("timestamptz") << QByteArray("2024-05-01 03:00:00.5-07")
            << QByteArray(R"(["2024-05-01T03:00:00.5-07:00"])");
    QTest::newRow("timestamptz LMT seconds")
            << QByteArray("timestamptz") << QByteArray("1800-05-01 10:19:32+00:19:32")
            << QByteArray(R"(["1800-05-01T10:19:32+00:19:32"])");
    QTest::newRow("timestamptz BC")
            << QByteArray("timestamptz") << QByteArray("0044-03-15 10:00:00+00 BC")
            << QByteArray(R"(["0044-03-15T10:00:00+00:00 BC"])");
    QTest::newRow("timestamptz year 10000")
            << QByteArray("timestamptz") << QByteArray("10000-01-01 00:00:00+00")
            << QByteArray(R"(["10000-01-01T00:00:00+00:00"])");
    QTest::newRow("timestamptz infinity")
            << QByteArray("timestamptz") << QByteArray("infinity") << QByteArray(R"(["infinity"])");
    QTest::newRow("timestamptz -infinity") << QByteArray("timestamptz") << QByteArray("-infinity")
                                           << QByteArray(R"(["-infinity"])");
    QTest::newRow("timestamptz without zone stays")
            << QByteArray("timestamptz") << QByteArray("2024-05-01 10:00:00")
            << QByteArray(R"(["2024-05-01 10:00:00"])");
    QTest::newRow("timestamptz other DateStyle stays")
            << QByteArray("timestamptz") << QByteArray("Wed May 01 10:00:00 2024 UTC")
            << QByteArray(R"(["Wed May 01 10:00:00 2024 UTC"])");
    QTest::newRow("timestamp") << QByteArray("timestamp") << QByteArray("2024-05-01 10:00:00.123")
                               << QByteArray(R"(["2024-05-01T10:00:00.123"])");
    QTest::newRow("timestamp whole seconds")
            << QByteArray("timestamp") << QByteArray("2024-05-01 10:00:00")
            << QByteArray(R"(["2024-05-01T10:00:00"])");
    QTest::newRow("timestamp BC") << QByteArray("timestamp") << QByteArray("0044-03-15 10:00:00 BC")
                                  << QByteArray(R"(["0044-03-15T10:00:00 BC"])");
    QTest::newRow("timestamp infinity")
            << QByteArray("timestamp") << QByteArray("infinity") << QByteArray(R"(["infinity"])");
    QTest::newRow("timestamp with zone stays")
            << QByteArray("timestamp") << QByteArray("2024-05-01 10:00:00+00")
            << QByteArray(R"(["2024-05-01 10:00:00+00"])");

    // Strings, unchanged
    QTest::newRow("text") << QByteArray("text") << QByteArray(" x ") << QByteArray(R"([" x "])");
    QTest::newRow("text utf8") << QByteArray("text") << QByteArray("h\xc3\xa9")
                               << QByteArray("[\"h\xc3\xa9\"]");
    QTest::newRow("varchar") << QByteArray("varchar") << QByteArray("a\"b")
                             << QByteArray(R"(["a\"b"])");
    QTest::newRow("bpchar padding")
            << QByteArray("bpchar") << QByteArray("ab  ") << QByteArray(R"(["ab  "])");
    QTest::newRow("date") << QByteArray("date") << QByteArray("2024-05-01")
                          << QByteArray(R"(["2024-05-01"])");
    QTest::newRow("date BC") << QByteArray("date") << QByteArray("0044-03-15 BC")
                             << QByteArray(R"(["0044-03-15 BC"])");
    QTest::newRow("time") << QByteArray("time") << QByteArray("10:00:00.5")
                          << QByteArray(R"(["10:00:00.5"])");
    QTest::newRow("timetz") << QByteArray("timetz") << QByteArray("10:00:00.5+05:30")
                            << QByteArray(R"(["10:00:00.5+05:30"])");
    QTest::newRow("interval") << QByteArray("interval") << QByteArray("1 day 02:00:00")
                              << QByteArray(R"(["1 day 02:00:00"])");
    QTest::newRow("uuid") << QByteArray("uuid")
                          << QByteArray("00000000-0000-0000-0000-000000000000")
                          << QByteArray(R"(["00000000-0000-0000-0000-000000000000"])");
    QTest::newRow("enum") << QByteArray("mood") << QByteArray("happy")
                          << QByteArray(R"(["happy"])");
    QTest::newRow("int4range") << QByteArray("int4range") << QByteArray("[1,5)")
                               << QByteArray(R"j(["[1,5)"])j");
    QTest::newRow("point") << QByteArray("point") << QByteArray("(1,2)")
                           << QByteArray(R"j(["(1,2)"])j");
    QTest::newRow("empty type name") << QByteArray() << QByteArray("x") << QByteArray(R"(["x"])");

    // Arrays (pg: to_jsonb of the same literal)
    QTest::newRow("int4[]") << QByteArray("_int4") << QByteArray("{1,2,NULL}")
                            << QByteArray("[[1,2,null]]");
    QTest::newRow("int4[] empty") << QByteArray("_int4") << QByteArray("{}") << QByteArray("[[]]");
    QTest::newRow("int4[] nested")
            << QByteArray("_int4") << QByteArray("{{1,2},{3,4}}") << QByteArray("[[[1,2],[3,4]]]");
    QTest::newRow("int4[] three dims")
            << QByteArray("_int4") << QByteArray("{{{1}}}") << QByteArray("[[[[1]]]]");
    QTest::newRow("int4[] dimension decoration")
            << QByteArray("_int4") << QByteArray("[0:1]={1,2}") << QByteArray("[[1,2]]");
    QTest::newRow("int4[] 2-d decoration")
            << QByteArray("_int4") << QByteArray("[-1:0][1:1]={{1},{2}}")
            << QByteArray("[[[1],[2]]]");
    QTest::newRow("int4[] blanks")
            << QByteArray("_int4") << QByteArray(" { 1 , 2 } ") << QByteArray("[[1,2]]");
    QTest::newRow("text[] quoting")
            << QByteArray("_text") << QByteArray(R"({"a\"b","c,d",NULL,"NULL"})")
            << QByteArray(R"([["a\"b","c,d",null,"NULL"]])");
    QTest::newRow("text[] lower-case null")
            << QByteArray("_text") << QByteArray("{null,Null}") << QByteArray("[[null,null]]");
    QTest::newRow("text[] escaped null is text")
            << QByteArray("_text") << QByteArray("{N\\ULL}") << QByteArray(R"([["NULL"]])");
    QTest::newRow("text[] quoted blanks") << QByteArray("_text") << QByteArray(R"({" a "," b",""})")
                                          << QByteArray(R"([[" a "," b",""]])");
    QTest::newRow("text[] unquoted escapes")
            << QByteArray("_text") << QByteArray("{a\\,b,c\\ }") << QByteArray(R"([["a,b","c "]])");
    QTest::newRow("text[] backslash")
            << QByteArray("_text") << QByteArray(R"({"a\\b"})") << QByteArray(R"([["a\\b"]])");
    QTest::newRow("varchar[]") << QByteArray("_varchar") << QByteArray("{a,b}")
                               << QByteArray(R"([["a","b"]])");
    QTest::newRow("bool[]") << QByteArray("_bool") << QByteArray("{t,f}")
                            << QByteArray("[[true,false]]");
    QTest::newRow("float8[] NaN (pg)")
            << QByteArray("_float8") << QByteArray("{1.5,NaN}") << QByteArray(R"([[1.5,"NaN"]])");
    QTest::newRow("numeric[] (pg)")
            << QByteArray("_numeric") << QByteArray("{NaN,Infinity,-Infinity,1.0}")
            << QByteArray(R"([["NaN","Infinity","-Infinity",1]])");
    QTest::newRow("jsonb[] (pg)") << QByteArray("_jsonb")
                                  << QByteArray(R"({"{\"a\": 1}",NULL,"[1]"})")
                                  << QByteArray(R"([[{"a":1},null,[1]]])");
    QTest::newRow("timestamptz[] (pg)")
            << QByteArray("_timestamptz") << QByteArray(R"({"2024-05-01 12:00:00+02"})")
            << QByteArray(R"([["2024-05-01T12:00:00+02:00"]])");
    QTest::newRow("timestamp[] (pg)")
            << QByteArray("_timestamp") << QByteArray(R"({"2024-05-01 10:00:00"})")
            << QByteArray(R"([["2024-05-01T10:00:00"]])");
    QTest::newRow("bytea[] keeps \\x (pg)") << QByteArray("_bytea") << QByteArray(R"({"\\x0102"})")
                                            << QByteArray(R"([["\\x0102"]])");
    QTest::newRow("int4range[] (pg)") << QByteArray("_int4range") << QByteArray(R"j({"[1,5)"})j")
                                      << QByteArray(R"j([["[1,5)"]])j");
    QTest::newRow("box[] uses ; (pg)")
            << QByteArray("_box") << QByteArray("{(1,1),(0,0);(2,2),(0,0)}")
            << QByteArray(R"j([["(1,1),(0,0)","(2,2),(0,0)"]])j");
    QTest::newRow("uuid[]") << QByteArray("_uuid")
                            << QByteArray("{00000000-0000-0000-0000-000000000001}")
                            << QByteArray(R"([["00000000-0000-0000-0000-000000000001"]])");
    QTest::newRow("enum[]") << QByteArray("_mood") << QByteArray("{happy,sad}")
                            << QByteArray(R"([["happy","sad"]])");

    // Malformed array literals: the whole text as a string.
    const char *const malformed[] = {
        "",        "{",        "}",       "{1,2",  "{1,,2}",          "{,}",
        "{1}x",    "{{1},2}",  "{1,{2}}", "{\"a}", "{\"a\"b}",        "[0:1]{1}",
        "[x]={1}", "[1:2={1}", "{a\\}",   "1,2",   "{{{{{{{1}}}}}}}", "{\"a\\",
        "{a\"b}"
    };
    for (const char *literal : malformed) {
        QTest::addRow("malformed %s", literal)
                << QByteArray("_int4") << QByteArray(literal)
                << QJsonDocument(QJsonArray{ QString::fromUtf8(literal) })
                           .toJson(QJsonDocument::Compact);
    }
    QTest::newRow("six dimensions accepted")
            << QByteArray("_int4") << QByteArray("{{{{{{1}}}}}}") << QByteArray("[[[[[[[1]]]]]]]");
}

void PgoutputValuesTest::converts()
{
    QFETCH(QByteArray, type);
    QFETCH(QByteArray, text);
    QFETCH(QByteArray, json);
    QCOMPARE(compact(jsonValue(type, text)), json);
}

void PgoutputValuesTest::numbersKeepTheirKind()
{
    // Integers stay exact 64-bit integers, not doubles rounded to 53 bits.
    const QJsonValue big = jsonValue("int8", "9007199254740993");
    QCOMPARE(big.toInteger(), qint64(9'007'199'254'740'993));
    QCOMPARE(jsonValue("numeric", "2.5").toDouble(), 2.5);
    QVERIFY(jsonValue("int4", "").isString());
}

void PgoutputValuesTest::builtinTypeNames_data()
{
    QTest::addColumn<quint32>("oid");
    QTest::addColumn<QByteArray>("name");
    // From PostgreSQL 15's pg_type.dat (and `SELECT oid, typname FROM pg_type`).
    const QList<QPair<quint32, const char *>> known = {
        { 16, "bool" },
        { 17, "bytea" },
        { 18, "char" },
        { 19, "name" },
        { 20, "int8" },
        { 21, "int2" },
        { 22, "int2vector" },
        { 23, "int4" },
        { 24, "regproc" },
        { 25, "text" },
        { 26, "oid" },
        { 27, "tid" },
        { 28, "xid" },
        { 29, "cid" },
        { 114, "json" },
        { 142, "xml" },
        { 600, "point" },
        { 700, "float4" },
        { 701, "float8" },
        { 790, "money" },
        { 829, "macaddr" },
        { 869, "inet" },
        { 650, "cidr" },
        { 1042, "bpchar" },
        { 1043, "varchar" },
        { 1082, "date" },
        { 1083, "time" },
        { 1114, "timestamp" },
        { 1184, "timestamptz" },
        { 1186, "interval" },
        { 1266, "timetz" },
        { 1560, "bit" },
        { 1562, "varbit" },
        { 1700, "numeric" },
        { 2950, "uuid" },
        { 3802, "jsonb" },
        { 3614, "tsvector" },
        { 3904, "int4range" },
        { 3906, "numrange" },
        { 3908, "tsrange" },
        { 3910, "tstzrange" },
        { 3912, "daterange" },
        { 3926, "int8range" },
        { 603, "box" },
        { 1000, "_bool" },
        { 1001, "_bytea" },
        { 1002, "_char" },
        { 1003, "_name" },
        { 1016, "_int8" },
        { 1005, "_int2" },
        { 1006, "_int2vector" },
        { 1007, "_int4" },
        { 1008, "_regproc" },
        { 1009, "_text" },
        { 1028, "_oid" },
        { 1010, "_tid" },
        { 1011, "_xid" },
        { 1012, "_cid" },
        { 199, "_json" },
        { 143, "_xml" },
        { 1017, "_point" },
        { 1021, "_float4" },
        { 1022, "_float8" },
        { 791, "_money" },
        { 1040, "_macaddr" },
        { 1041, "_inet" },
        { 651, "_cidr" },
        { 1014, "_bpchar" },
        { 1015, "_varchar" },
        { 1182, "_date" },
        { 1183, "_time" },
        { 1115, "_timestamp" },
        { 1185, "_timestamptz" },
        { 1187, "_interval" },
        { 1270, "_timetz" },
        { 1561, "_bit" },
        { 1563, "_varbit" },
        { 1231, "_numeric" },
        { 2951, "_uuid" },
        { 3807, "_jsonb" },
        { 3643, "_tsvector" },
        { 3905, "_int4range" },
        { 3907, "_numrange" },
        { 3909, "_tsrange" },
        { 3911, "_tstzrange" },
        { 3913, "_daterange" },
        { 3927, "_int8range" },
        { 1020, "_box" },
        { 2249, "record" },
        { 2278, "void" },
        { 4451, "int4multirange" },
        { 71, "pg_type" },
    };
    for (const auto &[oid, name] : known) {
        QTest::addRow("%u %s", oid, name) << oid << QByteArray(name);
    }
}

void PgoutputValuesTest::builtinTypeNames()
{
    QFETCH(quint32, oid);
    QFETCH(QByteArray, name);
    QCOMPARE(builtinTypeName(oid), name);
}

void PgoutputValuesTest::unknownTypeNames()
{
    for (const quint32 oid : { 0u, 1u, 15u, 31u, 9999u, 10000u, 16384u, 16385u, 0xffffffffu }) {
        QVERIFY2(builtinTypeName(oid).isEmpty(), qPrintable(QString::number(oid)));
    }
}

QTEST_GUILESS_MAIN(PgoutputValuesTest)
#include "tst_pgoutput_values.moc"
