#include "shared/protocol/json_scan.h"

#include <QTest>

#include <array>
#include <optional>

using namespace rt::protocol;

namespace {

QByteArray nested(int depth, char open, char close, QByteArrayView inner = "1")
{
    QByteArray text;
    for (int i = 0; i < depth; ++i) {
        text += open;
        if (open == '{')
            text += "\"k\":";
    }
    text += inner;
    for (int i = 0; i < depth; ++i)
        text += close;
    return text;
}

QByteArrayView spanText(const QByteArray &text, const json::Span &span)
{
    return QByteArrayView(text).sliced(span.begin, span.end - span.begin);
}

// A deliberately naive UTF-8 decoder used as the oracle for the optimised validator: decode the
// bits by the lead byte, then reject overlong forms, surrogates and out-of-range values.
bool referenceUtf8(QByteArrayView bytes)
{
    qsizetype i = 0;
    while (i < bytes.size()) {
        const auto lead = static_cast<unsigned char>(bytes[i]);
        int length = 0;
        char32_t value = 0;
        if (lead < 0x80) {
            ++i;
            continue;
        } else if ((lead & 0xE0) == 0xC0) {
            length = 2;
            value = lead & 0x1F;
        } else if ((lead & 0xF0) == 0xE0) {
            length = 3;
            value = lead & 0x0F;
        } else if ((lead & 0xF8) == 0xF0) {
            length = 4;
            value = lead & 0x07;
        } else {
            return false;
        }
        if (i + length > bytes.size())
            return false;
        for (int k = 1; k < length; ++k) {
            const auto c = static_cast<unsigned char>(bytes[i + k]);
            if ((c & 0xC0) != 0x80)
                return false;
            value = (value << 6) | (c & 0x3F);
        }
        const char32_t minimum = length == 2 ? 0x80 : length == 3 ? 0x800 : 0x10000;
        if (value < minimum || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF))
            return false;
        i += length;
    }
    return true;
}

} // namespace

// Tests the validating JSON scanner: the grammar, UTF-8 rules, nesting limit and the spans that
// the Phoenix codec relies on.
class JsonScanTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void isValid_data();
    void isValid();
    void controlAndSpecialBytesAtEveryOffset();
    void depthLimit_data();
    void depthLimit();
    void hugeNestingDoesNotRecurse();
    void splitArray_data();
    void splitArray();
    void splitArrayFixedCapacity();
    void splitObject_data();
    void splitObject();
    void splitObjectFixedCapacity();
    void splitClearsOnFailure();
    void decodeString_data();
    void decodeString();
    void isValidUtf8_data();
    void isValidUtf8();
    void utf8AgreesWithReferenceExhaustively();
};

void JsonScanTest::isValid_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<bool>("valid");

    // Values of every kind.
    QTest::newRow("empty object") << QByteArray("{}") << true;
    QTest::newRow("empty array") << QByteArray("[]") << true;
    QTest::newRow("surrounding whitespace") << QByteArray(" \t\r\n[ ]\n ") << true;
    QTest::newRow("string") << QByteArray(R"("a")") << true;
    QTest::newRow("empty string") << QByteArray(R"("")") << true;
    QTest::newRow("zero") << QByteArray("0") << true;
    QTest::newRow("minus zero") << QByteArray("-0") << true;
    QTest::newRow("fraction exponent") << QByteArray("-0.5e+10") << true;
    QTest::newRow("upper exponent") << QByteArray("1E5") << true;
    QTest::newRow("negative exponent") << QByteArray("12.25e-3") << true;
    QTest::newRow("big integer") << QByteArray("123456789012345678901234567890") << true;
    QTest::newRow("true") << QByteArray("true") << true;
    QTest::newRow("false") << QByteArray("false") << true;
    QTest::newRow("null") << QByteArray("null") << true;
    QTest::newRow("nested") << QByteArray(R"({"a":1,"b":[1,2,{"c":null}],"d":{"e":[]}})") << true;
    QTest::newRow("duplicate keys") << QByteArray(R"({"a":1,"a":2})") << true;
    QTest::newRow("spaced object") << QByteArray("{ \"a\" : [ 1 , true ] , \"b\" : { } }") << true;
    QTest::newRow("escapes") << QByteArray(R"("\" \\ \/ \b \f \n \r \t")") << true;
    QTest::newRow("unicode escape") << QByteArray(R"("\u00e9\u00E9\u0000")") << true;
    QTest::newRow("surrogate pair") << QByteArray(R"("\ud83d\ude00")") << true;
    QTest::newRow("raw 2-byte utf8") << QByteArray("\"caf\xc3\xa9\"") << true;
    QTest::newRow("raw 4-byte utf8") << QByteArray("\"\xf0\x9f\x98\x80\"") << true;
    QTest::newRow("U+D7FF") << QByteArray("\"\xed\x9f\xbf\"") << true;
    QTest::newRow("U+E000") << QByteArray("\"\xee\x80\x80\"") << true;
    QTest::newRow("U+FFFF") << QByteArray("\"\xef\xbf\xbf\"") << true;
    QTest::newRow("U+10000") << QByteArray("\"\xf0\x90\x80\x80\"") << true;
    QTest::newRow("U+10FFFF") << QByteArray("\"\xf4\x8f\xbf\xbf\"") << true;
    QTest::newRow("DEL is fine") << QByteArray("\"\x7f\"") << true;
    QTest::newRow("long plain string")
            << QByteArray("\"" + QByteArray(1000, 'x') + "\\n" + QByteArray(37, 'y') + "\"")
            << true;

    // Structure.
    QTest::newRow("nothing") << QByteArray("") << false;
    QTest::newRow("only whitespace") << QByteArray("  ") << false;
    QTest::newRow("open object") << QByteArray("{") << false;
    QTest::newRow("open array") << QByteArray("[") << false;
    QTest::newRow("close only") << QByteArray("]") << false;
    QTest::newRow("mismatched 1") << QByteArray("{]") << false;
    QTest::newRow("mismatched 2") << QByteArray("[}") << false;
    QTest::newRow("mismatched nested") << QByteArray("[{]}") << false;
    QTest::newRow("trailing comma array") << QByteArray("[1,]") << false;
    QTest::newRow("leading comma array") << QByteArray("[,1]") << false;
    QTest::newRow("double comma") << QByteArray("[1,,2]") << false;
    QTest::newRow("trailing comma object") << QByteArray(R"({"a":1,})") << false;
    QTest::newRow("key without value") << QByteArray(R"({"a"})") << false;
    QTest::newRow("key colon no value") << QByteArray(R"({"a":})") << false;
    QTest::newRow("unquoted key") << QByteArray("{a:1}") << false;
    QTest::newRow("number key") << QByteArray("{1:1}") << false;
    QTest::newRow("missing comma") << QByteArray("[1 2]") << false;
    QTest::newRow("missing comma object") << QByteArray(R"({"a":1 "b":2})") << false;
    QTest::newRow("two values") << QByteArray("1 2") << false;
    QTest::newRow("trailing garbage") << QByteArray("[1]x") << false;
    QTest::newRow("trailing NUL") << QByteArray("[1]\0", 4) << false;
    QTest::newRow("single quotes") << QByteArray("'a'") << false;
    QTest::newRow("truncated nested") << QByteArray(R"({"a":[1,{"b":)") << false;

    // Numbers.
    QTest::newRow("leading zero") << QByteArray("01") << false;
    QTest::newRow("minus leading zero") << QByteArray("-01") << false;
    QTest::newRow("minus alone") << QByteArray("-") << false;
    QTest::newRow("plus") << QByteArray("+1") << false;
    QTest::newRow("dot end") << QByteArray("1.") << false;
    QTest::newRow("dot start") << QByteArray(".5") << false;
    QTest::newRow("exponent empty") << QByteArray("1e") << false;
    QTest::newRow("exponent sign only") << QByteArray("1e+") << false;
    QTest::newRow("hex") << QByteArray("0x10") << false;
    QTest::newRow("NaN") << QByteArray("NaN") << false;
    QTest::newRow("Infinity") << QByteArray("Infinity") << false;
    QTest::newRow("-Infinity") << QByteArray("-Infinity") << false;
    QTest::newRow("number in array leading zero") << QByteArray("[00]") << false;

    // Literals.
    QTest::newRow("tru") << QByteArray("tru") << false;
    QTest::newRow("True") << QByteArray("True") << false;
    QTest::newRow("nul") << QByteArray("nul") << false;
    QTest::newRow("nulll") << QByteArray("nulll") << false;
    QTest::newRow("falsey") << QByteArray("[falsey]") << false;

    // Whitespace is exactly space, tab, CR, LF.
    QTest::newRow("form feed") << QByteArray("\f1") << false;
    QTest::newRow("vertical tab") << QByteArray("\v1") << false;
    QTest::newRow("nbsp") << QByteArray("\xc2\xa0"
                                        "1")
                          << false;
    QTest::newRow("BOM") << QByteArray("\xef\xbb\xbf{}") << false;

    // Strings.
    QTest::newRow("unterminated") << QByteArray(R"("abc)") << false;
    QTest::newRow("raw control") << QByteArray("\"a\x01\"") << false;
    QTest::newRow("raw newline") << QByteArray("\"a\nb\"") << false;
    QTest::newRow("raw tab") << QByteArray("\"a\tb\"") << false;
    QTest::newRow("raw NUL") << QByteArray("\"a\0b\"", 5) << false;
    QTest::newRow("bad escape") << QByteArray(R"("\x")") << false;
    QTest::newRow("escape at end") << QByteArray(R"("\)") << false;
    QTest::newRow("short unicode") << QByteArray(R"("\u12")") << false;
    QTest::newRow("bad hex") << QByteArray(R"("\u12G4")") << false;
    QTest::newRow("lone high surrogate") << QByteArray(R"("\ud800")") << false;
    QTest::newRow("lone low surrogate") << QByteArray(R"("\udc00")") << false;
    QTest::newRow("high then non-surrogate") << QByteArray(R"("\ud800\u0041")") << false;
    QTest::newRow("high then text") << QByteArray(R"("\ud800x")") << false;
    QTest::newRow("high then high") << QByteArray(R"("\ud800\ud800")") << false;
    QTest::newRow("reversed pair") << QByteArray(R"("\ude00\ud83d")") << false;
    QTest::newRow("non-ASCII outside string") << QByteArray("\xc3\xa9") << false;

    // UTF-8 inside strings.
    QTest::newRow("overlong C0") << QByteArray("\"\xc0\x80\"") << false;
    QTest::newRow("overlong C1") << QByteArray("\"\xc1\xbf\"") << false;
    QTest::newRow("overlong E0") << QByteArray("\"\xe0\x80\x80\"") << false;
    QTest::newRow("overlong E0 9F") << QByteArray("\"\xe0\x9f\xbf\"") << false;
    QTest::newRow("overlong F0") << QByteArray("\"\xf0\x8f\xbf\xbf\"") << false;
    QTest::newRow("encoded surrogate") << QByteArray("\"\xed\xa0\x80\"") << false;
    QTest::newRow("encoded low surrogate") << QByteArray("\"\xed\xbf\xbf\"") << false;
    QTest::newRow("above U+10FFFF") << QByteArray("\"\xf4\x90\x80\x80\"") << false;
    QTest::newRow("F5 lead") << QByteArray("\"\xf5\x80\x80\x80\"") << false;
    QTest::newRow("FF byte") << QByteArray("\"\xff\"") << false;
    QTest::newRow("lone continuation") << QByteArray("\"\x80\"") << false;
    QTest::newRow("truncated 2-byte") << QByteArray("\"\xc3\"") << false;
    QTest::newRow("truncated 3-byte") << QByteArray("\"\xe2\x82\"") << false;
    QTest::newRow("truncated 4-byte") << QByteArray("\"\xf0\x9f\x98\"") << false;
    QTest::newRow("truncated at input end") << QByteArray("\"\xe2\x82") << false;
    QTest::newRow("invalid utf8 in key") << QByteArray("{\"\xff\":1}") << false;
    QTest::newRow("invalid utf8 after long ASCII")
            << QByteArray("\"" + QByteArray(20, 'a') + "\xc0\xaf\"") << false;
}

void JsonScanTest::isValid()
{
    QFETCH(QByteArray, text);
    QFETCH(bool, valid);
    QCOMPARE(json::isValid(text), valid);
    // The same value embedded in an array must be judged the same way (container path).
    if (!text.trimmed().isEmpty())
        QCOMPARE(json::isValid(QByteArray("[" + text + "]")), valid);
}

// The string scanner skips eight bytes at a time; a byte that needs attention must be found at
// any position relative to those words.
void JsonScanTest::controlAndSpecialBytesAtEveryOffset()
{
    for (int offset = 0; offset < 24; ++offset) {
        const QByteArray prefix = "\"" + QByteArray(offset, 'a');
        const QByteArray suffix = QByteArray(17, 'b') + "\"";
        QVERIFY2(!json::isValid(QByteArray(prefix + '\x1f' + suffix)), "control character");
        QVERIFY2(!json::isValid(QByteArray(prefix + '\x00' + suffix)), "NUL");
        QVERIFY2(!json::isValid(QByteArray(prefix + '\xff' + suffix)), "invalid byte");
        QVERIFY2(!json::isValid(QByteArray(prefix + "\\q" + suffix)), "bad escape");
        QVERIFY2(json::isValid(QByteArray(prefix + "\\\"" + suffix)), "escaped quote");
        QVERIFY2(json::isValid(QByteArray(prefix + "\xc3\xa9" + suffix)), "two-byte sequence");
        QVERIFY2(json::isValid(QByteArray(prefix + '\x7f' + suffix)), "DEL");
        QVERIFY2(json::isValid(QByteArray(prefix + ' ' + suffix)), "space");
        // An unescaped quote ends the string early, leaving garbage.
        QVERIFY2(!json::isValid(QByteArray(prefix + '"' + suffix)), "inner quote");
    }
}

void JsonScanTest::depthLimit_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<bool>("valid");
    const int max = json::MaxDepth;
    QTest::newRow("arrays at limit") << nested(max, '[', ']') << true;
    QTest::newRow("arrays over limit") << nested(max + 1, '[', ']') << false;
    QTest::newRow("objects at limit") << nested(max, '{', '}') << true;
    QTest::newRow("objects over limit") << nested(max + 1, '{', '}') << false;
    QTest::newRow("empty innermost at limit") << nested(max - 1, '[', ']', "[]") << true;
    QTest::newRow("empty innermost over limit") << nested(max, '[', ']', "{}") << false;
    // Depth is the number of simultaneously open containers, not the total count.
    QByteArray wide = "[";
    for (int i = 0; i < 3 * max; ++i)
        wide += (i ? "," : "") + nested(max - 1, '[', ']');
    wide += "]";
    QTest::newRow("many siblings at limit") << wide << true;
}

void JsonScanTest::depthLimit()
{
    QFETCH(QByteArray, text);
    QFETCH(bool, valid);
    QCOMPARE(json::isValid(text), valid);
    // The top-level container counts towards the limit in the split functions too.
    QList<json::Span> elements;
    QCOMPARE(json::splitArray(text, elements), valid && text.startsWith('['));
    QList<json::Member> members;
    QCOMPARE(json::splitObject(text, members), valid && text.startsWith('{'));
}

void JsonScanTest::hugeNestingDoesNotRecurse()
{
    // Would overflow a recursive parser's stack; here it is rejected at depth MaxDepth + 1.
    const QByteArray deep = QByteArray(1 << 20, '[') + QByteArray(1 << 20, ']');
    QVERIFY(!json::isValid(deep));
    QList<json::Span> elements;
    QVERIFY(!json::splitArray(deep, elements));
    const QByteArray deepObjects = nested(100000, '{', '}');
    QVERIFY(!json::isValid(deepObjects));
}

void JsonScanTest::splitArray_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<bool>("ok");
    QTest::addColumn<QByteArrayList>("elements");
    QTest::addColumn<QList<int>>("kinds");

    const auto k = [](json::Kind kind) { return static_cast<int>(kind); };
    QTest::newRow("heartbeat") << QByteArray(R"([null,"12","phoenix","heartbeat",{}])") << true
                               << QByteArrayList{ "null", R"("12")", R"("phoenix")",
                                                  R"("heartbeat")", "{}" }
                               << QList<int>{ k(json::Kind::Null), k(json::Kind::String),
                                              k(json::Kind::String), k(json::Kind::String),
                                              k(json::Kind::Object) };
    QTest::newRow("all kinds spaced")
            << QByteArray(" [ 1.5 , true , false , [ 2 ] , \"s\" ] ") << true
            << QByteArrayList{ "1.5", "true", "false", "[ 2 ]", R"("s")" }
            << QList<int>{ k(json::Kind::Number), k(json::Kind::True), k(json::Kind::False),
                           k(json::Kind::Array), k(json::Kind::String) };
    QTest::newRow("empty") << QByteArray("[]") << true << QByteArrayList{} << QList<int>{};
    QTest::newRow("empty spaced") << QByteArray(" [ ] ") << true << QByteArrayList{}
                                  << QList<int>{};
    QTest::newRow("object is not array")
            << QByteArray("{}") << false << QByteArrayList{} << QList<int>{};
    QTest::newRow("scalar is not array")
            << QByteArray("1") << false << QByteArrayList{} << QList<int>{};
    QTest::newRow("invalid element")
            << QByteArray("[1,01]") << false << QByteArrayList{} << QList<int>{};
    QTest::newRow("trailing garbage")
            << QByteArray("[1] 1") << false << QByteArrayList{} << QList<int>{};
    QTest::newRow("unclosed") << QByteArray("[1,2") << false << QByteArrayList{} << QList<int>{};
}

void JsonScanTest::splitArray()
{
    QFETCH(QByteArray, text);
    QFETCH(bool, ok);
    QFETCH(QByteArrayList, elements);
    QFETCH(QList<int>, kinds);

    QList<json::Span> spans;
    QCOMPARE(json::splitArray(text, spans), ok);
    QCOMPARE(spans.size(), elements.size());
    for (qsizetype i = 0; i < spans.size(); ++i) {
        QCOMPARE(spanText(text, spans[i]).toByteArray(), elements[i]);
        QCOMPARE(static_cast<int>(spans[i].kind), kinds[i]);
    }
}

void JsonScanTest::splitArrayFixedCapacity()
{
    const QByteArray text = R"(["a", 1, {"x":[1]}, null, "e", 6, 7])";
    std::array<json::Span, 3> spans;
    qsizetype count = -1;
    QVERIFY(json::splitArray(text, spans.data(), spans.size(), count));
    QCOMPARE(count, 7); // counts all elements, stores the first three
    QCOMPARE(spanText(text, spans[0]), QByteArrayView(R"("a")"));
    QCOMPARE(spanText(text, spans[2]), QByteArrayView(R"({"x":[1]})"));
    QCOMPARE(spans[2].kind, json::Kind::Object);

    // Capacity zero still validates the whole array.
    QVERIFY(json::splitArray(text, nullptr, 0, count));
    QCOMPARE(count, 7);
    QVERIFY(!json::splitArray(QByteArray(R"(["a", 1, "\ud800"])"), spans.data(), 1, count));
    QCOMPARE(count, 0);
}

void JsonScanTest::splitObject_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<bool>("ok");
    QTest::addColumn<QByteArrayList>("keys");
    QTest::addColumn<QByteArrayList>("values");

    QTest::newRow("v1 heartbeat")
            << QByteArray(R"({"topic":"phoenix","event":"heartbeat","payload":{},"ref":"12"})")
            << true << QByteArrayList{ R"("topic")", R"("event")", R"("payload")", R"("ref")" }
            << QByteArrayList{ R"("phoenix")", R"("heartbeat")", "{}", R"("12")" };
    QTest::newRow("spaced, duplicate kept")
            << QByteArray(" { \"a\" : [ 1 ] , \"a\" : 2 , \"b\\n\":null } ") << true
            << QByteArrayList{ R"("a")", R"("a")", R"("b\n")" }
            << QByteArrayList{ "[ 1 ]", "2", "null" };
    QTest::newRow("empty") << QByteArray("{ }") << true << QByteArrayList{} << QByteArrayList{};
    QTest::newRow("array is not object")
            << QByteArray("[]") << false << QByteArrayList{} << QByteArrayList{};
    QTest::newRow("bad key") << QByteArray("{1:2}") << false << QByteArrayList{}
                             << QByteArrayList{};
    QTest::newRow("bad value") << QByteArray(R"({"a":tru})") << false << QByteArrayList{}
                               << QByteArrayList{};
    QTest::newRow("trailing comma")
            << QByteArray(R"({"a":1,})") << false << QByteArrayList{} << QByteArrayList{};
    QTest::newRow("comma then end")
            << QByteArray(R"({"a":1,)") << false << QByteArrayList{} << QByteArrayList{};
    QTest::newRow("missing colon")
            << QByteArray(R"({"a" 1})") << false << QByteArrayList{} << QByteArrayList{};
}

void JsonScanTest::splitObject()
{
    QFETCH(QByteArray, text);
    QFETCH(bool, ok);
    QFETCH(QByteArrayList, keys);
    QFETCH(QByteArrayList, values);

    QList<json::Member> members;
    QCOMPARE(json::splitObject(text, members), ok);
    QCOMPARE(members.size(), keys.size());
    for (qsizetype i = 0; i < members.size(); ++i) {
        QCOMPARE(spanText(text, members[i].key).toByteArray(), keys[i]);
        QCOMPARE(members[i].key.kind, json::Kind::String);
        QCOMPARE(spanText(text, members[i].value).toByteArray(), values[i]);
    }
}

void JsonScanTest::splitObjectFixedCapacity()
{
    const QByteArray text = R"({"a":1,"b":[true],"c":"x"})";
    std::array<json::Member, 2> members;
    qsizetype count = -1;
    QVERIFY(json::splitObject(text, members.data(), members.size(), count));
    QCOMPARE(count, 3);
    QCOMPARE(spanText(text, members[1].key), QByteArrayView(R"("b")"));
    QCOMPARE(spanText(text, members[1].value), QByteArrayView("[true]"));
    QCOMPARE(members[1].value.kind, json::Kind::Array);
    QVERIFY(!json::splitObject(QByteArray(R"({"a":1,"b":})"), members.data(), 2, count));
    QCOMPARE(count, 0);
}

void JsonScanTest::splitClearsOnFailure()
{
    QList<json::Span> elements{ json::Span{}, json::Span{} };
    QVERIFY(!json::splitArray(QByteArray("[1,2,"), elements));
    QVERIFY(elements.isEmpty());
    QList<json::Member> members{ json::Member{} };
    QVERIFY(!json::splitObject(QByteArray(R"({"a":1)"), members));
    QVERIFY(members.isEmpty());
    // A reused list is refilled, not appended to.
    QVERIFY(json::splitArray(QByteArray("[1]"), elements));
    QVERIFY(json::splitArray(QByteArray("[2,3]"), elements));
    QCOMPARE(elements.size(), 2);
}

void JsonScanTest::decodeString_data()
{
    QTest::addColumn<QByteArray>("literal");
    QTest::addColumn<bool>("ok");
    QTest::addColumn<QByteArray>("decoded");

    QTest::newRow("plain") << QByteArray(R"("realtime:room1")") << true
                           << QByteArray("realtime:room1");
    QTest::newRow("empty") << QByteArray(R"("")") << true << QByteArray();
    QTest::newRow("short escapes")
            << QByteArray(R"("\"\\\/\b\f\n\r\t")") << true << QByteArray("\"\\/\b\f\n\r\t");
    QTest::newRow("u escapes") << QByteArray(R"("\u0041\u00e9\u20AC")") << true
                               << QByteArray("A\xc3\xa9\xe2\x82\xac");
    QTest::newRow("u NUL") << QByteArray(R"("a\u0000b")") << true << QByteArray("a\0b", 3);
    QTest::newRow("surrogate pair")
            << QByteArray(R"("x\ud83d\ude00y")") << true << QByteArray("x\xf0\x9f\x98\x80y");
    QTest::newRow("max pair") << QByteArray(R"("\udbff\udfff")") << true
                              << QByteArray("\xf4\x8f\xbf\xbf");
    QTest::newRow("raw utf8 kept") << QByteArray("\"caf\xc3\xa9 \xf0\x9f\x98\x80\"") << true
                                   << QByteArray("caf\xc3\xa9 \xf0\x9f\x98\x80");
    QTest::newRow("long mixed") << QByteArray("\"" + QByteArray(40, 'a') + "\\n"
                                              + QByteArray(9, 'b') + "\"")
                                << true
                                << QByteArray(QByteArray(40, 'a') + "\n" + QByteArray(9, 'b'));

    QTest::newRow("no quotes") << QByteArray("abc") << false << QByteArray();
    QTest::newRow("one quote") << QByteArray("\"") << false << QByteArray();
    QTest::newRow("unterminated") << QByteArray(R"("abc)") << false << QByteArray();
    QTest::newRow("inner quote") << QByteArray(R"("a"b")") << false << QByteArray();
    QTest::newRow("surrounding space") << QByteArray(R"( "a")") << false << QByteArray();
    QTest::newRow("escaped final quote") << QByteArray(R"("a\")") << false << QByteArray();
    QTest::newRow("lone surrogate") << QByteArray(R"("\ud800")") << false << QByteArray();
    QTest::newRow("raw control") << QByteArray("\"\x01\"") << false << QByteArray();
    QTest::newRow("invalid utf8") << QByteArray("\"\xed\xa0\x80\"") << false << QByteArray();
    QTest::newRow("number") << QByteArray("12") << false << QByteArray();
}

void JsonScanTest::decodeString()
{
    QFETCH(QByteArray, literal);
    QFETCH(bool, ok);
    QFETCH(QByteArray, decoded);

    QByteArray out = "previous contents";
    QCOMPARE(json::decodeString(literal, out), ok);
    QCOMPARE(out, decoded);
}

void JsonScanTest::isValidUtf8_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<bool>("valid");
    QTest::newRow("empty") << QByteArray() << true;
    QTest::newRow("ascii") << QByteArray("realtime:room1") << true;
    QTest::newRow("long ascii then 2-byte") << QByteArray(QByteArray(33, 'a') + "\xc3\xa9") << true;
    QTest::newRow("NUL is valid utf8") << QByteArray("a\0b", 3) << true;
    QTest::newRow("all lengths") << QByteArray("a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80") << true;
    QTest::newRow("overlong slash") << QByteArray("\xc0\xaf") << false;
    QTest::newRow("surrogate") << QByteArray("\xed\xb0\x80") << false;
    QTest::newRow("above max") << QByteArray("\xf4\x90\x80\x80") << false;
    QTest::newRow("truncated at end") << QByteArray(QByteArray(16, 'a') + "\xf0\x9f\x98") << false;
    QTest::newRow("lone continuation") << QByteArray("ab\xbf") << false;
}

void JsonScanTest::isValidUtf8()
{
    QFETCH(QByteArray, bytes);
    QFETCH(bool, valid);
    QCOMPARE(json::isValidUtf8(bytes), valid);
    // Inside a JSON string the same rules apply.
    if (!bytes.contains('\0'))
        QCOMPARE(json::isValid(QByteArray("\"" + bytes + "\"")), valid);
}

// Every one- and two-byte sequence, every three-byte sequence, and every four-byte sequence
// over the interesting lead/second-byte combinations, checked against the naive decoder.
void JsonScanTest::utf8AgreesWithReferenceExhaustively()
{
    std::array<char, 4> buffer{};
    const auto check = [&buffer](int length) {
        const QByteArrayView bytes(buffer.data(), length);
        return json::isValidUtf8(bytes) == referenceUtf8(bytes);
    };
    for (int a = 0; a < 256; ++a) {
        buffer[0] = static_cast<char>(a);
        QVERIFY(check(1));
        for (int b = 0; b < 256; ++b) {
            buffer[1] = static_cast<char>(b);
            QVERIFY(check(2));
            if (a < 0xE0)
                continue;
            for (int c = 0; c < 256; ++c) {
                buffer[2] = static_cast<char>(c);
                if (!check(3))
                    QFAIL(qPrintable(QStringLiteral("3-byte %1 %2 %3").arg(a).arg(b).arg(c)));
                if (a < 0xF0)
                    continue;
                for (const int d : { 0x00, 0x7F, 0x80, 0xBF, 0xC0, 0xFF }) {
                    buffer[3] = static_cast<char>(d);
                    if (!check(4))
                        QFAIL(qPrintable(QStringLiteral("4-byte %1 %2 %3").arg(a).arg(b).arg(c)));
                }
            }
        }
    }
}

QTEST_GUILESS_MAIN(JsonScanTest)
#include "tst_json_scan.moc"
