#include "server/subscriptions/pg_array.h"

namespace rt::subscriptions {

namespace {

// array_in's notion of white space (scanner_isspace).
bool isPgSpace(QChar c)
{
    return c == u' ' || c == u'\t' || c == u'\n' || c == u'\r' || c == u'\v' || c == u'\f';
}

constexpr int MaxDimensions = 6; // PostgreSQL's MAXDIM; also bounds the recursion

class ArrayReader
{
public:
    ArrayReader(QStringView text, QChar delimiter) : m_text(text), m_delimiter(delimiter) { }

    std::optional<PgArray> read()
    {
        skipSpace();
        if (at() == u'[') {
            // Dimension decoration "[lo:hi][lo:hi]=": the bounds are not needed here.
            while (at() == u'[') {
                const qsizetype close = m_text.indexOf(u']', m_pos);
                if (close < 0) {
                    return std::nullopt;
                }
                m_pos = close + 1;
                skipSpace();
            }
            if (at() != u'=') {
                return std::nullopt;
            }
            ++m_pos;
            skipSpace();
        }
        if (at() != u'{') {
            return std::nullopt;
        }
        PgArray result;
        QList<qsizetype> shape;
        if (!readLevel(1, &result, &shape)) {
            return std::nullopt;
        }
        skipSpace();
        if (m_pos != m_text.size()) {
            return std::nullopt;
        }
        result.topLevelCount = shape.isEmpty() ? 0 : shape.first();
        return result;
    }

private:
    QChar at() const { return m_pos < m_text.size() ? m_text[m_pos] : QChar(); }
    bool atEnd() const { return m_pos >= m_text.size(); }
    void skipSpace()
    {
        while (!atEnd() && isPgSpace(m_text[m_pos])) {
            ++m_pos;
        }
    }

    // Reads "{...}" at m_pos. `shape` receives the dimension lengths of this level and below,
    // so sibling sub-arrays can be checked for the same shape.
    bool readLevel(int depth, PgArray *out, QList<qsizetype> *shape)
    {
        if (depth > MaxDimensions) {
            return false;
        }
        ++m_pos; // '{'
        skipSpace();
        if (at() == u'}') {
            ++m_pos;
            shape->clear();
            // An empty array is only valid at the outermost level.
            return depth == 1;
        }
        qsizetype count = 0;
        bool hasSubArrays = false;
        bool hasScalars = false;
        std::optional<QList<qsizetype>> childShape;
        while (true) {
            skipSpace();
            if (at() == u'{') {
                hasSubArrays = true;
                QList<qsizetype> inner;
                if (!readLevel(depth + 1, out, &inner)) {
                    return false;
                }
                if (childShape && *childShape != inner) {
                    return false;
                }
                childShape = inner;
            } else {
                hasScalars = true;
                std::optional<QString> element;
                if (!readElement(&element)) {
                    return false;
                }
                out->elements.append(std::move(element));
            }
            if (hasSubArrays && hasScalars) {
                return false;
            }
            ++count;
            skipSpace();
            if (atEnd()) {
                return false;
            }
            if (m_text[m_pos] == m_delimiter) {
                ++m_pos;
                continue;
            }
            if (m_text[m_pos] == u'}') {
                ++m_pos;
                break;
            }
            return false;
        }
        shape->clear();
        shape->append(count);
        if (childShape) {
            shape->append(*childShape);
        }
        return true;
    }

    bool readElement(std::optional<QString> *element)
    {
        QString value;
        if (at() == u'"') {
            ++m_pos;
            while (true) {
                if (atEnd()) {
                    return false;
                }
                const QChar c = m_text[m_pos++];
                if (c == u'\\') {
                    if (atEnd()) {
                        return false;
                    }
                    value.append(m_text[m_pos++]);
                } else if (c == u'"') {
                    break;
                } else {
                    value.append(c);
                }
            }
            *element = std::move(value);
            return true;
        }
        // Unquoted: up to the delimiter or '}', trailing white space dropped unless escaped.
        qsizetype keep = 0; // length of `value` that must survive trimming
        bool escaped = false;
        while (true) {
            if (atEnd()) {
                return false;
            }
            const QChar c = m_text[m_pos];
            if (c == m_delimiter || c == u'}') {
                break;
            }
            if (c == u'{' || c == u'"') {
                return false;
            }
            ++m_pos;
            if (c == u'\\') {
                if (atEnd()) {
                    return false;
                }
                value.append(m_text[m_pos++]);
                keep = value.size();
                escaped = true;
            } else {
                value.append(c);
                if (!isPgSpace(c)) {
                    keep = value.size();
                }
            }
        }
        value.truncate(keep);
        if (value.isEmpty()) {
            return false;
        }
        if (!escaped && value.compare(QLatin1String("NULL"), Qt::CaseInsensitive) == 0) {
            *element = std::nullopt;
        } else {
            *element = std::move(value);
        }
        return true;
    }

    QStringView m_text;
    QChar m_delimiter;
    qsizetype m_pos = 0;
};

} // namespace

std::optional<PgArray> parsePgArray(QStringView literal, QChar delimiter)
{
    return ArrayReader(literal, delimiter).read();
}

} // namespace rt::subscriptions
