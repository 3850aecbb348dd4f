#include "server/subscriptions/matcher.h"

#include "server/subscriptions/logging.h"
#include "server/subscriptions/pg_array.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonValue>
#include <QRegularExpression>

#include <charconv>
#include <cmath>
#include <limits>

namespace rt::subscriptions {

namespace {

// ---- Column types

enum class TypeClass {
    Int2,
    Int4,
    Int8,
    Oid,
    Float4,
    Float8,
    Numeric,
    Bool,
    Uuid,
    Date,
    Timestamp,
    TimestampTz,
    Time,
    Bpchar,
    Citext,
    Jsonb,
    Json,
    Text,
};

struct TypeInfo
{
    TypeClass element = TypeClass::Text;
    bool isArray = false;
};

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

// ---- Small text helpers (PostgreSQL's input functions skip this white space)

bool isSpace(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

QByteArrayView trimmed(QByteArrayView text)
{
    qsizetype begin = 0;
    qsizetype end = text.size();
    while (begin < end && isSpace(text[begin])) {
        ++begin;
    }
    while (end > begin && isSpace(text[end - 1])) {
        --end;
    }
    return text.sliced(begin, end - begin);
}

bool equalsIgnoreCase(QByteArrayView a, const char *b)
{
    const QByteArrayView other(b);
    if (a.size() != other.size()) {
        return false;
    }
    for (qsizetype i = 0; i < a.size(); ++i) {
        const char x = a[i];
        const char lower = (x >= 'A' && x <= 'Z') ? char(x - 'A' + 'a') : x;
        if (lower != other[i]) {
            return false;
        }
    }
    return true;
}

template <typename T>
int threeWay(const T &a, const T &b)
{
    return a < b ? -1 : (b < a ? 1 : 0);
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

// ---- date / time / timestamp / timestamptz

constexpr qint64 MicrosPerSecond = 1'000'000;
constexpr qint64 MicrosPerDay = 86'400 * MicrosPerSecond;
constexpr qint64 PlusInfinity = std::numeric_limits<qint64>::max();
constexpr qint64 MinusInfinity = std::numeric_limits<qint64>::min();

// Days since 1970-01-01 of a proleptic Gregorian date (year 0 = 1 BC).
qint64 daysFromCivil(qint64 year, int month, int day)
{
    year -= month <= 2 ? 1 : 0;
    const qint64 era = (year >= 0 ? year : year - 399) / 400;
    const qint64 yearOfEra = year - era * 400;
    const qint64 dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
    const qint64 dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear;
    return era * 146097 + dayOfEra - 719468;
}

bool isLeap(qint64 year)
{
    return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
}

int daysInMonth(qint64 year, int month)
{
    static constexpr int Days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    return month == 2 && isLeap(year) ? 29 : Days[month - 1];
}

class Scanner
{
public:
    explicit Scanner(QByteArrayView text) : m_text(text) { }
    bool atEnd() const { return m_pos >= m_text.size(); }
    char peek() const { return atEnd() ? '\0' : m_text[m_pos]; }
    bool take(char c)
    {
        if (peek() == c) {
            ++m_pos;
            return true;
        }
        return false;
    }
    // Up to maxDigits decimal digits; nullopt if there is none.
    std::optional<qint64> number(int minDigits, int maxDigits, int *count = nullptr)
    {
        qint64 value = 0;
        int digits = 0;
        while (digits < maxDigits && !atEnd() && peek() >= '0' && peek() <= '9') {
            value = value * 10 + (peek() - '0');
            ++m_pos;
            ++digits;
        }
        if (count) {
            *count = digits;
        }
        if (digits < minDigits) {
            return std::nullopt;
        }
        return value;
    }
    void skipSpace()
    {
        while (!atEnd() && isSpace(peek())) {
            ++m_pos;
        }
    }
    QByteArrayView rest() const { return m_text.sliced(m_pos); }

private:
    QByteArrayView m_text;
    qsizetype m_pos = 0;
};

// HH:MM[:SS[.ffffff]] → microseconds since midnight (24:00:00 allowed, as in PostgreSQL).
std::optional<qint64> scanTime(Scanner &scan)
{
    const auto hour = scan.number(1, 2);
    if (!hour || !scan.take(':')) {
        return std::nullopt;
    }
    const auto minute = scan.number(2, 2);
    if (!minute) {
        return std::nullopt;
    }
    qint64 second = 0;
    qint64 micros = 0;
    if (scan.take(':')) {
        const auto parsed = scan.number(2, 2);
        if (!parsed) {
            return std::nullopt;
        }
        second = *parsed;
        if (scan.take('.')) {
            int digits = 0;
            qint64 fraction = 0;
            while (!scan.atEnd() && scan.peek() >= '0' && scan.peek() <= '9') {
                if (digits < 7) {
                    fraction = fraction * 10 + (scan.peek() - '0');
                }
                ++digits;
                scan.take(scan.peek());
            }
            if (digits == 0) {
                return std::nullopt;
            }
            // Round to microseconds like PostgreSQL (half away from zero on the 7th digit).
            for (int d = std::min(digits, 7); d < 7; ++d) {
                fraction *= 10;
            }
            micros = (fraction + 5) / 10;
        }
    }
    if (*hour > 24 || *minute > 59 || second > 60
        || (*hour == 24 && (*minute != 0 || second != 0 || micros != 0))) {
        return std::nullopt;
    }
    return ((*hour * 60 + *minute) * 60 + second) * MicrosPerSecond + micros;
}

// Z | +HH | +HH:MM | +HHMM | +HH:MM:SS → seconds east of UTC.
std::optional<qint64> scanOffset(Scanner &scan)
{
    if (scan.take('Z') || scan.take('z')) {
        return 0;
    }
    const char sign = scan.peek();
    if (sign != '+' && sign != '-') {
        return std::nullopt;
    }
    scan.take(sign);
    int digits = 0;
    const auto first = scan.number(1, 4, &digits);
    if (!first) {
        return std::nullopt;
    }
    qint64 hours = *first;
    qint64 minutes = 0;
    qint64 seconds = 0;
    if (digits > 2) {
        hours = *first / 100;
        minutes = *first % 100;
    } else if (scan.take(':')) {
        const auto m = scan.number(2, 2);
        if (!m) {
            return std::nullopt;
        }
        minutes = *m;
        if (scan.take(':')) {
            const auto s = scan.number(2, 2);
            if (!s) {
                return std::nullopt;
            }
            seconds = *s;
        }
    }
    if (hours > 15 || minutes > 59 || seconds > 59) {
        return std::nullopt;
    }
    const qint64 offset = (hours * 60 + minutes) * 60 + seconds;
    return sign == '-' ? -offset : offset;
}

enum class DateTimeKind { Date, Timestamp, TimestampTz };

// → microseconds since 1970-01-01 (UTC for timestamptz, wall clock otherwise); dates → midnight.
std::optional<qint64> parseDateTime(QByteArrayView text, DateTimeKind kind)
{
    text = trimmed(text);
    if (equalsIgnoreCase(text, "infinity") || equalsIgnoreCase(text, "+infinity")) {
        return PlusInfinity;
    }
    if (equalsIgnoreCase(text, "-infinity")) {
        return MinusInfinity;
    }
    if (equalsIgnoreCase(text, "epoch")) {
        return 0;
    }
    Scanner scan(text);
    int yearDigits = 0;
    const auto year = scan.number(1, 7, &yearDigits);
    if (!year || yearDigits < 4 || !scan.take('-')) {
        return std::nullopt;
    }
    const auto month = scan.number(1, 2);
    if (!month || !scan.take('-')) {
        return std::nullopt;
    }
    const auto day = scan.number(1, 2);
    if (!day) {
        return std::nullopt;
    }
    qint64 timeOfDay = 0;
    std::optional<qint64> offset;
    if (scan.take('T') || scan.take('t') || (scan.peek() == ' ')) {
        scan.skipSpace();
        if (!scan.atEnd() && scan.peek() >= '0' && scan.peek() <= '9') {
            const auto time = scanTime(scan);
            if (!time) {
                return std::nullopt;
            }
            timeOfDay = *time;
            scan.skipSpace();
            if (scan.peek() == '+' || scan.peek() == '-' || scan.peek() == 'Z'
                || scan.peek() == 'z') {
                offset = scanOffset(scan);
                if (!offset) {
                    return std::nullopt;
                }
            }
        }
    }
    scan.skipSpace();
    qint64 fullYear = *year;
    if (equalsIgnoreCase(scan.rest(), "bc")) {
        fullYear = 1 - fullYear;
    } else if (!scan.atEnd()) {
        return std::nullopt;
    }
    if (*year == 0 || *month < 1 || *month > 12 || *day < 1
        || *day > daysInMonth(fullYear, int(*month))) {
        return std::nullopt;
    }
    // Seven-digit years reach past what microseconds in 64 bits hold (about 292,000 years from
    // 1970; PostgreSQL's timestamps end in 294276): such a value is out of range, not a wrap.
    qint64 micros = 0;
    if (__builtin_mul_overflow(daysFromCivil(fullYear, int(*month), int(*day)), MicrosPerDay,
                               &micros)) {
        return std::nullopt;
    }
    if (kind == DateTimeKind::Date) {
        return micros; // the time of day and zone are ignored by date_in
    }
    const qint64 zone = kind == DateTimeKind::TimestampTz && offset ? *offset * MicrosPerSecond : 0;
    if (__builtin_add_overflow(micros, timeOfDay, &micros)
        || __builtin_sub_overflow(micros, zone, &micros)) {
        return std::nullopt;
    }
    return micros;
}

std::optional<qint64> parseTimeOfDay(QByteArrayView text)
{
    Scanner scan(trimmed(text));
    const auto time = scanTime(scan);
    if (!time || !scan.atEnd()) {
        return std::nullopt;
    }
    return time;
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

// nullopt: a side does not cast to the type, or the type has no ordering (json; jsonb outside
// equality). With `equalityOnly`, any non-zero value just means "different".
std::optional<int> compareScalar(TypeClass type, QByteArrayView a, QByteArrayView b,
                                 bool equalityOnly)
{
    switch (type) {
    case TypeClass::Int2:
    case TypeClass::Int4:
    case TypeClass::Int8: {
        const qint64 min = type == TypeClass::Int2 ? -32768
                : type == TypeClass::Int4          ? qint64(std::numeric_limits<qint32>::min())
                                                   : std::numeric_limits<qint64>::min();
        const qint64 max = type == TypeClass::Int2 ? 32767
                : type == TypeClass::Int4          ? qint64(std::numeric_limits<qint32>::max())
                                                   : std::numeric_limits<qint64>::max();
        const auto x = parseInteger(a, min, max);
        const auto y = parseInteger(b, min, max);
        if (!x || !y) {
            return std::nullopt;
        }
        return threeWay(*x, *y);
    }
    case TypeClass::Oid: {
        const auto x = parseOid(a);
        const auto y = parseOid(b);
        if (!x || !y) {
            return std::nullopt;
        }
        return threeWay(*x, *y);
    }
    case TypeClass::Float4:
    case TypeClass::Float8: {
        auto x = parseDouble(a);
        auto y = parseDouble(b);
        if (!x || !y) {
            return std::nullopt;
        }
        if (type == TypeClass::Float4) {
            const auto toFloat = [](double v) -> std::optional<double> {
                if (std::isfinite(v) && std::fabs(v) > double(std::numeric_limits<float>::max())) {
                    return std::nullopt; // float4in: out of range
                }
                return double(static_cast<float>(v));
            };
            x = toFloat(*x);
            y = toFloat(*y);
            if (!x || !y) {
                return std::nullopt;
            }
        }
        return compareFloat(*x, *y);
    }
    case TypeClass::Numeric: {
        const auto x = parseNumeric(a);
        const auto y = parseNumeric(b);
        if (!x || !y) {
            return std::nullopt;
        }
        return compareDecimal(*x, *y);
    }
    case TypeClass::Bool: {
        const auto x = parseBool(a);
        const auto y = parseBool(b);
        if (!x || !y) {
            return std::nullopt;
        }
        return threeWay(int(*x), int(*y));
    }
    case TypeClass::Uuid: {
        const auto x = parseUuid(a);
        const auto y = parseUuid(b);
        if (!x || !y) {
            return std::nullopt;
        }
        return threeWay(*x, *y);
    }
    case TypeClass::Date:
    case TypeClass::Timestamp:
    case TypeClass::TimestampTz: {
        const DateTimeKind kind = type == TypeClass::Date ? DateTimeKind::Date
                : type == TypeClass::Timestamp            ? DateTimeKind::Timestamp
                                                          : DateTimeKind::TimestampTz;
        const auto x = parseDateTime(a, kind);
        const auto y = parseDateTime(b, kind);
        if (!x || !y) {
            return std::nullopt;
        }
        return threeWay(*x, *y);
    }
    case TypeClass::Time: {
        const auto x = parseTimeOfDay(a);
        const auto y = parseTimeOfDay(b);
        if (!x || !y) {
            return std::nullopt;
        }
        return threeWay(*x, *y);
    }
    case TypeClass::Bpchar:
        return threeWay(rtrimSpaces(a), rtrimSpaces(b));
    case TypeClass::Citext: {
        const QString x = QString::fromUtf8(a).toLower();
        const QString y = QString::fromUtf8(b).toLower();
        return threeWay(x.toUtf8(), y.toUtf8());
    }
    case TypeClass::Jsonb: {
        if (!equalityOnly) {
            return std::nullopt;
        }
        const auto x = parseJson(a);
        const auto y = parseJson(b);
        if (!x || !y) {
            return std::nullopt;
        }
        return *x == *y ? 0 : 1;
    }
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

// ---- LIKE / ILIKE

struct LikeToken
{
    enum class Kind { AnySequence, AnyOne, Literal } kind;
    char32_t literal = 0;
};

std::optional<QList<LikeToken>> tokenizeLike(const QList<uint> &pattern, bool foldCase)
{
    QList<LikeToken> tokens;
    tokens.reserve(pattern.size());
    for (qsizetype i = 0; i < pattern.size(); ++i) {
        const uint c = pattern.at(i);
        if (c == '\\') {
            if (i + 1 == pattern.size()) {
                return std::nullopt; // "LIKE pattern must not end with escape character"
            }
            ++i;
            const uint escaped = pattern.at(i);
            tokens.append({ LikeToken::Kind::Literal,
                            foldCase ? QChar::toCaseFolded(escaped) : escaped });
        } else if (c == '%') {
            if (tokens.isEmpty() || tokens.back().kind != LikeToken::Kind::AnySequence) {
                tokens.append({ LikeToken::Kind::AnySequence, 0 });
            }
        } else if (c == '_') {
            tokens.append({ LikeToken::Kind::AnyOne, 0 });
        } else {
            tokens.append({ LikeToken::Kind::Literal, foldCase ? QChar::toCaseFolded(c) : c });
        }
    }
    return tokens;
}

std::optional<bool> likeMatch(const QString &value, const QString &pattern, bool foldCase)
{
    QList<uint> text = value.toUcs4();
    const auto tokens = tokenizeLike(pattern.toUcs4(), foldCase);
    if (!tokens) {
        return std::nullopt;
    }
    if (foldCase) {
        for (uint &c : text) {
            c = QChar::toCaseFolded(c);
        }
    }
    // Wildcard matching with backtracking to the last '%' (linear in practice, O(n·m) worst).
    qsizetype t = 0;
    qsizetype p = 0;
    qsizetype starToken = -1;
    qsizetype starText = 0;
    while (t < text.size()) {
        if (p < tokens->size()) {
            const LikeToken &token = tokens->at(p);
            if (token.kind == LikeToken::Kind::AnySequence) {
                starToken = p++;
                starText = t;
                continue;
            }
            if (token.kind == LikeToken::Kind::AnyOne || token.literal == text.at(t)) {
                ++p;
                ++t;
                continue;
            }
        }
        if (starToken < 0) {
            return false;
        }
        p = starToken + 1;
        t = ++starText;
    }
    while (p < tokens->size() && tokens->at(p).kind == LikeToken::Kind::AnySequence) {
        ++p;
    }
    return p == tokens->size();
}

// ---- match / imatch

std::optional<bool> regexMatch(const QString &value, const QString &pattern, bool caseInsensitive)
{
    // Compiling is the expensive part and a subscription's pattern repeats for every change:
    // keep the compiled expressions per thread, bounded.
    thread_local QHash<QString, QRegularExpression> cache[2];
    QHash<QString, QRegularExpression> &compiled = cache[caseInsensitive ? 1 : 0];
    auto it = compiled.find(pattern);
    if (it == compiled.end()) {
        if (compiled.size() >= 256) {
            compiled.clear();
        }
        // POSIX AREs let '.' match a newline by default; PCRE needs DotMatchesEverything.
        QRegularExpression::PatternOptions options = QRegularExpression::DotMatchesEverythingOption;
        if (caseInsensitive) {
            options |= QRegularExpression::CaseInsensitiveOption;
        }
        it = compiled.insert(pattern, QRegularExpression(pattern, options));
        if (!it->isValid()) {
            qCDebug(lcSubscriptions)
                    << "match filter pattern does not compile:" << it->errorString();
        }
    }
    if (!it->isValid()) {
        return std::nullopt;
    }
    return it->match(value).hasMatch();
}

std::optional<bool> applyNegate(std::optional<bool> result, bool negate)
{
    if (!result) {
        return std::nullopt; // NOT NULL is NULL
    }
    return negate ? !*result : *result;
}

} // namespace

std::optional<bool> checkFilter(const Filter &filter, const ColumnValue &column)
{
    const TypeInfo type = classify(column.typeName);
    const bool isNull = !column.text.has_value();

    switch (filter.op) {
    case Op::Is: {
        // `val IS [NOT] NULL|TRUE|FALSE|UNKNOWN` never yields NULL.
        bool result = false;
        if (filter.value == QLatin1String("null")) {
            result = isNull;
        } else {
            if (type.isArray || type.element != TypeClass::Bool) {
                return std::nullopt; // refused when subscribing; never visible here
            }
            std::optional<bool> value;
            if (!isNull) {
                value = parseBool(*column.text);
                if (!value) {
                    return std::nullopt;
                }
            }
            if (filter.value == QLatin1String("true")) {
                result = value.has_value() && *value;
            } else if (filter.value == QLatin1String("false")) {
                result = value.has_value() && !*value;
            } else if (filter.value == QLatin1String("unknown")) {
                result = !value.has_value();
            } else {
                return std::nullopt; // invalid `is` value: an exception upstream
            }
        }
        return filter.negate ? !result : result;
    }
    case Op::IsDistinct: {
        const QByteArray value = filter.value.toUtf8();
        bool distinct = true;
        if (isNull) {
            // The filter value is never NULL, but it must still cast to the column type.
            if (!compareTyped(type, value, value, true)) {
                return std::nullopt;
            }
        } else {
            const auto compared = compareTyped(type, *column.text, value, true);
            if (!compared) {
                return std::nullopt;
            }
            distinct = *compared != 0;
        }
        return filter.negate ? !distinct : distinct;
    }
    case Op::In: {
        if (isNull || type.isArray) {
            return std::nullopt; // NULL = ANY(...) is NULL; arrays of arrays are not supported
        }
        const auto array = parsePgArray(filter.value);
        if (!array) {
            return std::nullopt;
        }
        // The whole array is cast before comparing, so every element must cast.
        bool sawNull = false;
        bool found = false;
        for (const std::optional<QString> &element : array->elements) {
            if (!element) {
                sawNull = true;
                continue;
            }
            const auto compared = compareTyped(type, *column.text, element->toUtf8(), true);
            if (!compared) {
                return std::nullopt;
            }
            found = found || *compared == 0;
        }
        if (found) {
            return applyNegate(true, filter.negate);
        }
        return applyNegate(sawNull ? std::nullopt : std::optional<bool>(false), filter.negate);
    }
    case Op::Like:
    case Op::Ilike: {
        if (isNull) {
            return std::nullopt;
        }
        QString pattern = filter.value;
        if (!type.isArray && type.element == TypeClass::Bpchar) {
            // `%L::bpchar` reaches the text operator through bpchar → text, which drops
            // trailing spaces; the column keeps its padding.
            while (pattern.endsWith(u' ')) {
                pattern.chop(1);
            }
        }
        const bool foldCase =
                filter.op == Op::Ilike || (!type.isArray && type.element == TypeClass::Citext);
        return applyNegate(likeMatch(QString::fromUtf8(*column.text), pattern, foldCase),
                           filter.negate);
    }
    case Op::Match:
    case Op::Imatch: {
        if (isNull) {
            return std::nullopt;
        }
        const bool caseInsensitive =
                filter.op == Op::Imatch || (!type.isArray && type.element == TypeClass::Citext);
        return applyNegate(
                regexMatch(QString::fromUtf8(*column.text), filter.value, caseInsensitive),
                filter.negate);
    }
    case Op::Eq:
    case Op::Neq:
    case Op::Lt:
    case Op::Lte:
    case Op::Gt:
    case Op::Gte: {
        if (isNull) {
            return std::nullopt;
        }
        const bool equalityOnly = filter.op == Op::Eq || filter.op == Op::Neq;
        const auto compared = compareTyped(type, *column.text, filter.value.toUtf8(), equalityOnly);
        if (!compared) {
            return std::nullopt;
        }
        bool result = false;
        switch (filter.op) {
        case Op::Eq:
            result = *compared == 0;
            break;
        case Op::Neq:
            result = *compared != 0;
            break;
        case Op::Lt:
            result = *compared < 0;
            break;
        case Op::Lte:
            result = *compared <= 0;
            break;
        case Op::Gt:
            result = *compared > 0;
            break;
        case Op::Gte:
            result = *compared >= 0;
            break;
        default:
            break;
        }
        return applyNegate(result, filter.negate);
    }
    }
    return std::nullopt;
}

bool visibleThroughFilters(const QList<Filter> &filters, RowView row)
{
    for (const Filter &filter : filters) {
        const ColumnValue *column = row.find(filter.column);
        if (!column) {
            return false;
        }
        const std::optional<bool> result = checkFilter(filter, *column);
        if (!result || !*result) {
            return false;
        }
    }
    return true;
}

} // namespace rt::subscriptions
