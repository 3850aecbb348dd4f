#include "server/metrics/text_format.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <system_error>

namespace rt::metrics {

namespace {

// Doubles of magnitude below this are exactly representable as qint64 when integral.
constexpr double IntegerLimit = 9223372036854775808.0; // 2^63

void appendChars(QByteArray &out, const char *first, const char *last)
{
    out.append(first, last - first);
}

bool isNameStart(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

bool isDigit(char c)
{
    return c >= '0' && c <= '9';
}

// Erlang's io_lib_format:insert_decimal/2. `digits` are the shortest round-trip digits without
// trailing zeros; the value is 0.<digits> * 10^place.
QByteArray insertDecimal(int place, const QByteArray &digits)
{
    const int length = int(digits.size());
    QByteArray text;
    if (place == 0) {
        text.append("0.");
        text.append(digits);
        return text;
    }
    if (place > 0 && place < length) {
        text.append(QByteArrayView(digits).first(place));
        text.append('.');
        text.append(QByteArrayView(digits).sliced(place));
        return text;
    }

    const QByteArray exponent = QByteArray::number(place - 1);
    const int exponentDot = length == 1 ? 2 : 1;
    const int exponentCost = int(exponent.size()) + 1 + exponentDot;
    const auto exponentForm = [&] {
        text.append(digits.front());
        text.append('.');
        if (length == 1) {
            text.append('0');
        } else {
            text.append(QByteArrayView(digits).sliced(1));
        }
        text.append('e');
        text.append(exponent);
        return text;
    };
    if (place < 0) {
        if (2 - place <= exponentCost) {
            text.append("0.");
            text.append(QByteArray(-place, '0'));
            text.append(digits);
            return text;
        }
        return exponentForm();
    }
    // place >= length
    if (place - length + 2 <= exponentCost) {
        text.append(digits);
        text.append(QByteArray(place - length, '0'));
        text.append(".0");
        return text;
    }
    return exponentForm();
}

} // namespace

void appendValue(QByteArray &out, quint64 value)
{
    char buffer[24];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
    appendChars(out, buffer, result.ptr);
}

void appendValue(QByteArray &out, double value)
{
    if (std::isnan(value)) {
        out.append("NaN");
        return;
    }
    if (std::isinf(value)) {
        out.append(value > 0 ? "+Inf" : "-Inf");
        return;
    }
    char buffer[32];
    std::to_chars_result result{};
    if (std::fabs(value) < IntegerLimit && value == std::trunc(value)) {
        result = std::to_chars(buffer, buffer + sizeof buffer, static_cast<qint64>(value));
    } else {
        result = std::to_chars(buffer, buffer + sizeof buffer, value); // shortest round trip
    }
    appendChars(out, buffer, result.ptr);
}

QByteArray formatValue(double value)
{
    QByteArray out;
    appendValue(out, value);
    return out;
}

QByteArray formatBucketBound(double bound)
{
    if (std::isnan(bound)) {
        return QByteArrayLiteral("NaN");
    }
    if (std::isinf(bound)) {
        return bound > 0 ? QByteArrayLiteral("+Inf") : QByteArrayLiteral("-Inf");
    }
    if (bound == 0) {
        return std::signbit(bound) ? QByteArrayLiteral("-0.0") : QByteArrayLiteral("0.0");
    }

    // Shortest round-trip digits in scientific form: "d[.ddd]e[+-]xx".
    char buffer[32];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, std::fabs(bound),
                                      std::chars_format::scientific);
    const QByteArrayView text(buffer, result.ptr - buffer);
    const qsizetype e = text.indexOf('e');
    QByteArray digits;
    for (const char c : text.first(e)) {
        if (c != '.') {
            digits.append(c);
        }
    }
    while (digits.size() > 1 && digits.endsWith('0')) {
        digits.chop(1);
    }
    int exponent = 0;
    const QByteArrayView exponentText = text.sliced(e + 1);
    const char *exponentBegin = exponentText.data() + (exponentText.front() == '+' ? 1 : 0);
    std::from_chars(exponentBegin, exponentText.data() + exponentText.size(), exponent);

    QByteArray formatted = insertDecimal(exponent + 1, digits);
    if (bound < 0) {
        formatted.prepend('-');
    }
    return formatted;
}

void appendEscapedHelp(QByteArray &out, QByteArrayView help)
{
    for (const char c : help) {
        if (c == '\\') {
            out.append("\\\\");
        } else if (c == '\n') {
            out.append("\\n");
        } else {
            out.append(c);
        }
    }
}

void appendEscapedLabelValue(QByteArray &out, QByteArrayView value)
{
    for (const char c : value) {
        if (c == '\\') {
            out.append("\\\\");
        } else if (c == '"') {
            out.append("\\\"");
        } else if (c == '\n') {
            out.append("\\n");
        } else {
            out.append(c);
        }
    }
}

bool isValidMetricName(QByteArrayView name)
{
    if (name.isEmpty() || !(isNameStart(name.front()) || name.front() == ':')) {
        return false;
    }
    for (const char c : name) {
        if (!(isNameStart(c) || isDigit(c) || c == ':')) {
            return false;
        }
    }
    return true;
}

bool isValidLabelName(QByteArrayView name)
{
    if (name.isEmpty() || !isNameStart(name.front()) || name.startsWith("__")) {
        return false;
    }
    for (const char c : name) {
        if (!(isNameStart(c) || isDigit(c))) {
            return false;
        }
    }
    return true;
}

} // namespace rt::metrics
