#include "server/pgoutput/values.h"

#include <QByteArray>
#include <QJsonArray>
#include <QJsonDocument>
#include <QString>

#include <cmath>

namespace rt::pgoutput {

namespace {

// PostgreSQL arrays have at most MAXDIM (6) dimensions; deeper nesting is malformed, and the
// bound keeps the recursive parser's stack small for hostile input.
constexpr int MaxArrayDimensions = 6;

QJsonValue textValue(QByteArrayView text)
{
    return { QString::fromUtf8(text) };
}

bool isDigit(char c)
{
    return c >= '0' && c <= '9';
}

// A JSON number for the text of int2/int4/int8/float4/float8/numeric, or the text when to_jsonb
// would give a string (NaN, ±Infinity) or the value has no finite double.
QJsonValue numberValue(QByteArrayView text)
{
    if (text == "NaN" || text == "Infinity" || text == "-Infinity") {
        return textValue(text);
    }
    // Only plain decimal syntax: QByteArray's converters would also take "inf", "nan", hex or
    // surrounding blanks, none of which PostgreSQL's output functions produce.
    for (const char c : text) {
        if (!isDigit(c) && c != '-' && c != '+' && c != '.' && c != 'e' && c != 'E') {
            return textValue(text);
        }
    }
    bool ok = false;
    const qlonglong integer = text.toLongLong(&ok);
    if (ok) {
        return { qint64(integer) };
    }
    const double number = text.toDouble(&ok);
    if (!ok || !std::isfinite(number)) {
        return textValue(text);
    }
    // to_jsonb goes through numeric, which has no negative zero.
    return { number == 0.0 ? 0.0 : number };
}

QJsonValue jsonDocumentValue(QByteArrayView text)
{
    // QJsonDocument only parses objects and arrays at the top level: wrap the value in an array
    // and insist on exactly one element, so "1,2" or "1],[2" cannot pass as a scalar.
    QByteArray wrapped;
    wrapped.reserve(text.size() + 2);
    wrapped += '[';
    wrapped += text;
    wrapped += ']';
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(wrapped, &error);
    if (error.error != QJsonParseError::NoError || !document.isArray()
        || document.array().size() != 1) {
        return textValue(text);
    }
    return document.array().at(0);
}

// Digits at text[pos..], at least minDigits (maxDigits < 0: unbounded); advances pos.
bool digits(QByteArrayView text, qsizetype &pos, int minDigits, int maxDigits)
{
    const qsizetype start = pos;
    while (pos < text.size() && isDigit(text[pos]) && (maxDigits < 0 || pos - start < maxDigits)) {
        ++pos;
    }
    return pos - start >= minDigits;
}

bool literal(QByteArrayView text, qsizetype &pos, char c)
{
    if (pos < text.size() && text[pos] == c) {
        ++pos;
        return true;
    }
    return false;
}

// ISO timestamp[tz] output ("YYYY-MM-DD HH:MM:SS[.ffffff][±HH[:MM[:SS]]][ BC]") in to_jsonb's
// form: 'T' between date and time, the offset always with minutes. Empty when the text does not
// have that shape (infinity, other DateStyles), which the caller then passes through unchanged.
QByteArray isoTimestamp(QByteArrayView text, bool withZone)
{
    const bool bc = text.endsWith(" BC");
    if (bc) {
        text.chop(3);
    }
    qsizetype pos = 0;
    if (!digits(text, pos, 4, -1) || !literal(text, pos, '-') || !digits(text, pos, 2, 2)
        || !literal(text, pos, '-') || !digits(text, pos, 2, 2)) {
        return {};
    }
    const QByteArrayView date = text.first(pos);
    if (!literal(text, pos, ' ')) {
        return {};
    }
    const qsizetype timeStart = pos;
    if (!digits(text, pos, 2, 2) || !literal(text, pos, ':') || !digits(text, pos, 2, 2)
        || !literal(text, pos, ':') || !digits(text, pos, 2, 2)) {
        return {};
    }
    if (literal(text, pos, '.') && !digits(text, pos, 1, -1)) {
        return {};
    }
    const QByteArrayView time = text.sliced(timeStart, pos - timeStart);

    QByteArray out;
    out.reserve(text.size() + 8);
    out += date;
    out += 'T';
    out += time;
    if (withZone) {
        if (pos >= text.size() || (text[pos] != '+' && text[pos] != '-')) {
            return {};
        }
        out += text[pos++];
        const qsizetype hours = pos;
        if (!digits(text, pos, 2, 2)) {
            return {};
        }
        out += text.sliced(hours, 2);
        out += ':';
        const qsizetype minutes = pos + 1;
        if (literal(text, pos, ':')) {
            if (!digits(text, pos, 2, 2)) {
                return {};
            }
            out += text.sliced(minutes, 2);
            const qsizetype seconds = pos + 1;
            if (literal(text, pos, ':')) {
                if (!digits(text, pos, 2, 2)) {
                    return {};
                }
                out += ':';
                out += text.sliced(seconds, 2);
            }
        } else {
            out += "00";
        }
    }
    if (pos != text.size()) {
        return {};
    }
    if (bc) {
        out += " BC";
    }
    return out;
}

QJsonValue timestampValue(QByteArrayView text, bool withZone)
{
    const QByteArray iso = isoTimestamp(text, withZone);
    return iso.isEmpty() ? textValue(text) : textValue(iso);
}

bool isArraySpace(char c)
{
    // array_in's array_isspace()
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// Parser of the array_out text form: "{a,b}", "{{1,2},{3,4}}", quoted elements with backslash
// escapes, unquoted NULL, optional "[lb:ub]...=" decoration. Produces nested QJsonArrays whose
// leaves are converted with the element type. Any syntax error fails the whole literal.
class ArrayParser
{
public:
    ArrayParser(QByteArrayView text, QByteArrayView elementType)
        : m_text(text),
          m_elementType(elementType),
          // box is the only built-in type whose typdelim is not ','.
          m_delimiter(elementType == "box" ? ';' : ',')
    { }

    bool parse(QJsonArray &out)
    {
        skipSpace();
        if (peek('[') && !skipDimensions()) {
            return false;
        }
        skipSpace();
        if (!parseArray(out, 1)) {
            return false;
        }
        skipSpace();
        return m_pos == m_text.size();
    }

private:
    bool atEnd() const { return m_pos >= m_text.size(); }
    bool peek(char c) const { return !atEnd() && m_text[m_pos] == c; }

    void skipSpace()
    {
        while (!atEnd() && isArraySpace(m_text[m_pos])) {
            ++m_pos;
        }
    }

    bool signedInteger()
    {
        if (!literal(m_text, m_pos, '-')) {
            literal(m_text, m_pos, '+');
        }
        return digits(m_text, m_pos, 1, -1);
    }

    // "[lb:ub][lb:ub]=" (lower bound optional): bounds do not change the JSON form.
    bool skipDimensions()
    {
        int dimensions = 0;
        while (literal(m_text, m_pos, '[')) {
            if (++dimensions > MaxArrayDimensions || !signedInteger()) {
                return false;
            }
            if (literal(m_text, m_pos, ':') && !signedInteger()) {
                return false;
            }
            if (!literal(m_text, m_pos, ']')) {
                return false;
            }
        }
        skipSpace();
        return literal(m_text, m_pos, '=');
    }

    bool parseArray(QJsonArray &out, int depth)
    {
        if (!literal(m_text, m_pos, '{')) {
            return false;
        }
        skipSpace();
        if (literal(m_text, m_pos, '}')) {
            return true;
        }
        bool sawNested = false;
        bool sawScalar = false;
        for (;;) {
            skipSpace();
            if (peek('{')) {
                if (depth >= MaxArrayDimensions) {
                    return false;
                }
                QJsonArray nested;
                if (!parseArray(nested, depth + 1)) {
                    return false;
                }
                out.append(nested);
                sawNested = true;
            } else {
                QJsonValue element;
                if (!parseElement(element)) {
                    return false;
                }
                out.append(element);
                sawScalar = true;
            }
            if (sawNested && sawScalar) {
                return false; // mixed dimensions
            }
            skipSpace();
            if (literal(m_text, m_pos, m_delimiter)) {
                continue;
            }
            return literal(m_text, m_pos, '}');
        }
    }

    bool parseElement(QJsonValue &out)
    {
        QByteArray element;
        if (literal(m_text, m_pos, '"')) {
            for (;;) {
                if (atEnd()) {
                    return false;
                }
                char c = m_text[m_pos++];
                if (c == '"') {
                    break;
                }
                if (c == '\\') {
                    if (atEnd()) {
                        return false;
                    }
                    c = m_text[m_pos++];
                }
                element += c;
            }
            out = convert(element);
            return true;
        }
        // Unquoted: up to the delimiter or '}', unescaped trailing blanks dropped.
        bool escaped = false;
        qsizetype keep = 0; // length without trailing unescaped blanks
        while (!atEnd()) {
            char c = m_text[m_pos];
            if (c == m_delimiter || c == '}') {
                break;
            }
            if (c == '{' || c == '"') {
                return false;
            }
            ++m_pos;
            if (c == '\\') {
                if (atEnd()) {
                    return false;
                }
                c = m_text[m_pos++];
                escaped = true;
                element += c;
                keep = element.size();
                continue;
            }
            element += c;
            if (!isArraySpace(c)) {
                keep = element.size();
            }
        }
        element.truncate(keep);
        if (element.isEmpty()) {
            return false;
        }
        if (!escaped && element.compare("NULL", Qt::CaseInsensitive) == 0) {
            out = QJsonValue(QJsonValue::Null);
            return true;
        }
        out = convert(element);
        return true;
    }

    QJsonValue convert(const QByteArray &element) const
    {
        // to_jsonb(bytea[]) keeps each element's "\x..." text; only top-level bytea values are
        // delivered as bare hex (the wal2json form).
        if (m_elementType == "bytea") {
            return textValue(element);
        }
        return jsonValue(m_elementType, element);
    }

    QByteArrayView m_text;
    QByteArrayView m_elementType;
    char m_delimiter;
    qsizetype m_pos = 0;
};

QJsonValue arrayValue(QByteArrayView elementType, QByteArrayView text)
{
    QJsonArray array;
    ArrayParser parser(text, elementType);
    if (!parser.parse(array)) {
        return textValue(text);
    }
    return array;
}

} // namespace

QJsonValue jsonValue(QByteArrayView typeName, QByteArrayView text)
{
    if (typeName.startsWith('_')) {
        return arrayValue(typeName.sliced(1), text);
    }
    if (typeName == "int2" || typeName == "int4" || typeName == "int8" || typeName == "float4"
        || typeName == "float8" || typeName == "numeric") {
        return numberValue(text);
    }
    if (typeName == "bool") {
        if (text == "t") {
            return { true };
        }
        if (text == "f") {
            return { false };
        }
        return textValue(text);
    }
    if (typeName == "json" || typeName == "jsonb") {
        return jsonDocumentValue(text);
    }
    if (typeName == "bytea") {
        return textValue(text.startsWith("\\x") ? text.sliced(2) : text);
    }
    if (typeName == "timestamptz") {
        return timestampValue(text, true);
    }
    if (typeName == "timestamp") {
        return timestampValue(text, false);
    }
    return textValue(text);
}

} // namespace rt::pgoutput
