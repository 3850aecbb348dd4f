#include "server/subscriptions/pg_scalar.h"

#include "server/subscriptions/pg_array.h"
#include "server/subscriptions/pg_input.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonValue>
#include <QString>

#include <charconv>
#include <cmath>
#include <limits>

namespace rt::subscriptions::pg {

namespace {

TypeClass classifyScalar(QByteArrayView name)
{
    struct Alias
    {
        const char *name;
        TypeClass type;
    };
    static constexpr Alias Aliases[] = {
        { "int2", TypeClass::Int2 },
        { "smallint", TypeClass::Int2 },
        { "int4", TypeClass::Int4 },
        { "integer", TypeClass::Int4 },
        { "int", TypeClass::Int4 },
        { "int8", TypeClass::Int8 },
        { "bigint", TypeClass::Int8 },
        { "oid", TypeClass::Oid },
        { "float4", TypeClass::Float4 },
        { "real", TypeClass::Float4 },
        { "float8", TypeClass::Float8 },
        { "double precision", TypeClass::Float8 },
        { "numeric", TypeClass::Numeric },
        { "decimal", TypeClass::Numeric },
        { "bool", TypeClass::Bool },
        { "boolean", TypeClass::Bool },
        { "uuid", TypeClass::Uuid },
        { "date", TypeClass::Date },
        { "timestamp", TypeClass::Timestamp },
        { "timestamp without time zone", TypeClass::Timestamp },
        { "timestamptz", TypeClass::TimestampTz },
        { "timestamp with time zone", TypeClass::TimestampTz },
        { "time", TypeClass::Time },
        { "time without time zone", TypeClass::Time },
        { "bpchar", TypeClass::Bpchar },
        { "character", TypeClass::Bpchar },
        { "citext", TypeClass::Citext },
        { "jsonb", TypeClass::Jsonb },
        { "json", TypeClass::Json },
    };
    for (const Alias &alias : Aliases) {
        if (name == QByteArrayView(alias.name)) {
            return alias.type;
        }
    }
    return TypeClass::Text;
}

// ---- Integers (int2in/int4in/int8in, oidin)

std::optional<qint64> parseInteger(QByteArrayView text, qint64 min, qint64 max)
{
    text = trimmed(text);
    bool negative = false;
    if (!text.isEmpty() && (text[0] == '+' || text[0] == '-')) {
        negative = text[0] == '-';
        text = text.sliced(1);
    }
    if (text.isEmpty()) {
        return std::nullopt;
    }
    quint64 magnitude = 0;
    for (char c : text) {
        if (c < '0' || c > '9') {
            return std::nullopt;
        }
        if (magnitude > (std::numeric_limits<quint64>::max() - 9) / 10) {
            return std::nullopt;
        }
        magnitude = magnitude * 10 + quint64(c - '0');
    }
    if (negative) {
        if (magnitude > quint64(std::numeric_limits<qint64>::max()) + 1) {
            return std::nullopt;
        }
        const qint64 value = magnitude == quint64(std::numeric_limits<qint64>::max()) + 1
                ? std::numeric_limits<qint64>::min()
                : -qint64(magnitude);
        if (value < min) {
            return std::nullopt;
        }
        return value;
    }
    if (magnitude > quint64(max)) {
        return std::nullopt;
    }
    return qint64(magnitude);
}

std::optional<qint64> parseOid(QByteArrayView text)
{
    // oidin accepts -2147483648..4294967295 and wraps negative values.
    const std::optional<qint64> value = parseInteger(text, -2147483648LL, 4294967295LL);
    if (!value) {
        return std::nullopt;
    }
    return *value < 0 ? *value + 4294967296LL : *value;
}

// ---- Floating point (float4in/float8in)

std::optional<double> parseDouble(QByteArrayView text)
{
    text = trimmed(text);
    if (equalsIgnoreCase(text, "nan")) {
        return std::numeric_limits<double>::quiet_NaN();
    }
    bool negative = false;
    QByteArrayView rest = text;
    if (!rest.isEmpty() && (rest[0] == '+' || rest[0] == '-')) {
        negative = rest[0] == '-';
        rest = rest.sliced(1);
    }
    if (equalsIgnoreCase(rest, "infinity") || equalsIgnoreCase(rest, "inf")) {
        return negative ? -std::numeric_limits<double>::infinity()
                        : std::numeric_limits<double>::infinity();
    }
    if (rest.isEmpty() || rest[0] == '+' || rest[0] == '-') {
        return std::nullopt;
    }
    double value = 0;
    const char *begin = rest.data();
    const char *end = begin + rest.size();
    const auto result = std::from_chars(begin, end, value, std::chars_format::general);
    if (result.ec != std::errc() || result.ptr != end || !std::isfinite(value)) {
        return std::nullopt; // junk, or out of range (PostgreSQL refuses overflow)
    }
    return negative ? -value : value;
}

// float4/float8 ordering: NaN equals NaN and sorts above every other value.
int compareFloat(double a, double b)
{
    const bool aNan = std::isnan(a);
    const bool bNan = std::isnan(b);
    if (aNan || bNan) {
        return aNan == bNan ? 0 : (aNan ? 1 : -1);
    }
    return threeWay(a, b);
}

// ---- numeric

struct Decimal
{
    enum class Kind { Finite, NegInfinity, PosInfinity, NaN } kind = Kind::Finite;
    bool negative = false;
    QByteArray digits; // significant digits, no leading/trailing zeros; empty = zero
    qint64 exponent = 0; // value = 0.d1d2d3... × 10^exponent
};

std::optional<Decimal> parseNumeric(QByteArrayView text)
{
    text = trimmed(text);
    Decimal out;
    if (equalsIgnoreCase(text, "nan")) {
        out.kind = Decimal::Kind::NaN;
        return out;
    }
    QByteArrayView rest = text;
    bool negative = false;
    if (!rest.isEmpty() && (rest[0] == '+' || rest[0] == '-')) {
        negative = rest[0] == '-';
        rest = rest.sliced(1);
    }
    if (equalsIgnoreCase(rest, "infinity") || equalsIgnoreCase(rest, "inf")) {
        out.kind = negative ? Decimal::Kind::NegInfinity : Decimal::Kind::PosInfinity;
        return out;
    }
    QByteArray digits;
    qint64 pointPosition = -1; // digits before the decimal point
    bool sawDigit = false;
    qsizetype i = 0;
    for (; i < rest.size(); ++i) {
        const char c = rest[i];
        if (c >= '0' && c <= '9') {
            sawDigit = true;
            digits.append(c);
        } else if (c == '.' && pointPosition < 0) {
            pointPosition = digits.size();
        } else {
            break;
        }
    }
    if (!sawDigit) {
        return std::nullopt;
    }
    if (pointPosition < 0) {
        pointPosition = digits.size();
    }
    qint64 exponent = 0;
    if (i < rest.size()) {
        if (rest[i] != 'e' && rest[i] != 'E') {
            return std::nullopt;
        }
        const std::optional<qint64> parsed =
                parseInteger(rest.sliced(i + 1), -1'000'000, 1'000'000);
        if (!parsed || rest.sliced(i + 1).isEmpty() || isSpace(rest[i + 1])) {
            return std::nullopt;
        }
        exponent = *parsed;
    }
    // Normalise: drop leading zeros (moving the point) and trailing zeros.
    qsizetype lead = 0;
    while (lead < digits.size() && digits[lead] == '0') {
        ++lead;
    }
    qsizetype end = digits.size();
    while (end > lead && digits[end - 1] == '0') {
        --end;
    }
    out.negative = negative;
    out.digits = digits.sliced(lead, end - lead);
    out.exponent = pointPosition - lead + exponent;
    if (out.digits.isEmpty()) {
        out.negative = false;
        out.exponent = 0;
    }
    return out;
}

int compareDecimal(const Decimal &a, const Decimal &b)
{
    const auto rank = [](const Decimal &d) {
        switch (d.kind) {
        case Decimal::Kind::NegInfinity:
            return 0;
        case Decimal::Kind::Finite:
            return 1;
        case Decimal::Kind::PosInfinity:
            return 2;
        case Decimal::Kind::NaN:
            return 3; // NaN equals NaN and sorts above everything
        }
        return 3;
    };
    if (rank(a) != rank(b) || a.kind != Decimal::Kind::Finite) {
        return threeWay(rank(a), rank(b));
    }
    const auto sign = [](const Decimal &d) {
        return d.digits.isEmpty() ? 0 : (d.negative ? -1 : 1);
    };
    if (sign(a) != sign(b)) {
        return threeWay(sign(a), sign(b));
    }
    if (sign(a) == 0) {
        return 0;
    }
    int magnitude = threeWay(a.exponent, b.exponent);
    if (magnitude == 0) {
        magnitude = threeWay(a.digits, b.digits); // same exponent: lexicographic = numeric
    }
    return sign(a) < 0 ? -magnitude : magnitude;
}

// ---- bool (boolin / parse_bool_with_len)

// ---- uuid (uuid_in: optional braces, a hyphen allowed after any group of four digits)

std::optional<QByteArray> parseUuid(QByteArrayView text)
{
    if (text.startsWith('{')) {
        if (text.size() < 2 || !text.endsWith('}')) {
            return std::nullopt;
        }
        text = text.sliced(1, text.size() - 2);
    }
    QByteArray out;
    out.reserve(32);
    for (qsizetype i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '-') {
            if (out.isEmpty() || out.size() % 4 != 0 || out.size() == 32 || text[i - 1] == '-') {
                return std::nullopt;
            }
            continue;
        }
        const bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
        if (!hex || out.size() == 32) {
            return std::nullopt;
        }
        out.append((c >= 'A' && c <= 'F') ? char(c - 'A' + 'a') : c);
    }
    if (out.size() != 32) {
        return std::nullopt;
    }
    return out;
}

// ---- jsonb

std::optional<QJsonValue> parseJson(QByteArrayView text)
{
    // QJsonDocument wants a container at the top: wrap the value in an array.
    QByteArray wrapped;
    wrapped.reserve(text.size() + 2);
    wrapped.append('[').append(text.data(), text.size()).append(']');
    QJsonParseError error{};
    const QJsonDocument document = QJsonDocument::fromJson(wrapped, &error);
    if (error.error != QJsonParseError::NoError || !document.isArray()
        || document.array().size() != 1) {
        return std::nullopt;
    }
    return document.array().at(0);
}

// ---- Typed comparison of two texts

QByteArrayView rtrimSpaces(QByteArrayView text)
{
    while (!text.isEmpty() && text.back() == ' ') {
        text.chop(1);
    }
    return text;
}

std::optional<int> compareArrays(TypeClass element, QByteArrayView a, QByteArrayView b);

// Both sides read with `parse`, then ordered with `order`; nullopt when a side does not cast.
template <typename Parse, typename Order>
std::optional<int> compareParsed(QByteArrayView a, QByteArrayView b, Parse parse, Order order)
{
    const auto x = parse(a);
    const auto y = parse(b);
    if (!x || !y) {
        return std::nullopt;
    }
    return order(*x, *y);
}

const auto Ordered = [](const auto &x, const auto &y) { return threeWay(x, y); };

std::optional<int> compareIntegers(TypeClass type, QByteArrayView a, QByteArrayView b)
{
    const qint64 min = type == TypeClass::Int2 ? -32768
            : type == TypeClass::Int4          ? qint64(std::numeric_limits<qint32>::min())
                                               : std::numeric_limits<qint64>::min();
    const qint64 max = type == TypeClass::Int2 ? 32767
            : type == TypeClass::Int4          ? qint64(std::numeric_limits<qint32>::max())
                                               : std::numeric_limits<qint64>::max();
    return compareParsed(
            a, b, [min, max](QByteArrayView text) { return parseInteger(text, min, max); },
            Ordered);
}

std::optional<int> compareFloats(TypeClass type, QByteArrayView a, QByteArrayView b)
{
    // float4in refuses what is out of its range and rounds the rest to single precision.
    const auto parse = [type](QByteArrayView text) -> std::optional<double> {
        const std::optional<double> value = parseDouble(text);
        if (!value || type != TypeClass::Float4) {
            return value;
        }
        if (std::isfinite(*value)
            && std::fabs(*value) > double(std::numeric_limits<float>::max())) {
            return std::nullopt;
        }
        return double(static_cast<float>(*value));
    };
    return compareParsed(a, b, parse, compareFloat);
}

std::optional<int> compareDateTimes(TypeClass type, QByteArrayView a, QByteArrayView b)
{
    const DateTimeKind kind = type == TypeClass::Date ? DateTimeKind::Date
            : type == TypeClass::Timestamp            ? DateTimeKind::Timestamp
                                                      : DateTimeKind::TimestampTz;
    return compareParsed(
            a, b, [kind](QByteArrayView text) { return parseDateTime(text, kind); }, Ordered);
}

// nullopt: a side does not cast to the type, or the type has no ordering (json; jsonb outside
// equality). With `equalityOnly`, any non-zero value just means "different".
std::optional<int> compareScalar(TypeClass type, QByteArrayView a, QByteArrayView b,
                                 bool equalityOnly)
{
    switch (type) {
    case TypeClass::Int2:
    case TypeClass::Int4:
    case TypeClass::Int8:
        return compareIntegers(type, a, b);
    case TypeClass::Oid:
        return compareParsed(a, b, parseOid, Ordered);
    case TypeClass::Float4:
    case TypeClass::Float8:
        return compareFloats(type, a, b);
    case TypeClass::Numeric:
        return compareParsed(a, b, parseNumeric, compareDecimal);
    case TypeClass::Bool:
        return compareParsed(a, b, parseBool, Ordered);
    case TypeClass::Uuid:
        return compareParsed(a, b, parseUuid, Ordered);
    case TypeClass::Date:
    case TypeClass::Timestamp:
    case TypeClass::TimestampTz:
        return compareDateTimes(type, a, b);
    case TypeClass::Time:
        return compareParsed(a, b, parseTimeOfDay, Ordered);
    case TypeClass::Bpchar:
        return threeWay(rtrimSpaces(a), rtrimSpaces(b));
    case TypeClass::Citext:
        return threeWay(QString::fromUtf8(a).toLower().toUtf8(),
                        QString::fromUtf8(b).toLower().toUtf8());
    case TypeClass::Jsonb:
        if (!equalityOnly) {
            return std::nullopt;
        }
        return compareParsed(a, b, parseJson, [](const QJsonValue &x, const QJsonValue &y) {
            return x == y ? 0 : 1;
        });
    case TypeClass::Json:
        return std::nullopt; // json has no equality or ordering operators
    case TypeClass::Text:
        return threeWay(a, b);
    }
    return std::nullopt;
}

// btarraycmp: element by element (NULL equals NULL and sorts after values), then by length.
std::optional<int> compareArrays(TypeClass element, QByteArrayView a, QByteArrayView b)
{
    const auto x = parsePgArray(QString::fromUtf8(a));
    const auto y = parsePgArray(QString::fromUtf8(b));
    if (!x || !y) {
        return std::nullopt;
    }
    const qsizetype common = std::min(x->elements.size(), y->elements.size());
    for (qsizetype i = 0; i < common; ++i) {
        const auto &p = x->elements.at(i);
        const auto &q = y->elements.at(i);
        if (!p || !q) {
            if (p.has_value() != q.has_value()) {
                return p ? -1 : 1;
            }
            continue;
        }
        const auto result = compareScalar(element, p->toUtf8(), q->toUtf8(), false);
        if (!result) {
            return std::nullopt;
        }
        if (*result != 0) {
            return result;
        }
    }
    return threeWay(x->elements.size(), y->elements.size());
}

} // namespace

TypeInfo classify(QByteArrayView name)
{
    TypeInfo info;
    if (name.startsWith('_')) {
        info.isArray = true;
        name = name.sliced(1);
    } else if (name.endsWith("[]")) {
        info.isArray = true;
        name = name.first(name.size() - 2);
    }
    // regtype spellings may carry a type modifier: "character varying(10)", "numeric(10,2)".
    const qsizetype paren = name.indexOf('(');
    if (paren > 0) {
        name = name.first(paren);
    }
    info.element = classifyScalar(name);
    return info;
}

std::optional<bool> parseBool(QByteArrayView text)
{
    text = trimmed(text);
    if (text.isEmpty()) {
        return std::nullopt;
    }
    const auto prefixOf = [&](const char *word, qsizetype minimum) {
        return text.size() >= minimum && text.size() <= qsizetype(qstrlen(word))
                && equalsIgnoreCase(text, QByteArray(word, text.size()).constData());
    };
    switch (text[0]) {
    case 't':
    case 'T':
        if (prefixOf("true", 1)) {
            return true;
        }
        break;
    case 'f':
    case 'F':
        if (prefixOf("false", 1)) {
            return false;
        }
        break;
    case 'y':
    case 'Y':
        if (prefixOf("yes", 1)) {
            return true;
        }
        break;
    case 'n':
    case 'N':
        if (prefixOf("no", 1)) {
            return false;
        }
        break;
    case 'o':
    case 'O':
        if (prefixOf("on", 2)) {
            return true;
        }
        if (prefixOf("off", 2)) {
            return false;
        }
        break;
    case '1':
        if (text.size() == 1) {
            return true;
        }
        break;
    case '0':
        if (text.size() == 1) {
            return false;
        }
        break;
    default:
        break;
    }
    return std::nullopt;
}

std::optional<int> compareTyped(const TypeInfo &type, QByteArrayView a, QByteArrayView b,
                                bool equalityOnly)
{
    if (type.isArray) {
        if (type.element == TypeClass::Json
            || (type.element == TypeClass::Jsonb && !equalityOnly)) {
            return std::nullopt;
        }
        return compareArrays(type.element, a, b);
    }
    return compareScalar(type.element, a, b, equalityOnly);
}

} // namespace rt::subscriptions::pg
