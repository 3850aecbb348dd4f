#include "server/subscriptions/filter.h"

#include "server/subscriptions/elixir_inspect.h"
#include "server/subscriptions/pg_array.h"

#include <array>

namespace rt::subscriptions {

namespace {

constexpr std::array<const char *, 13> OpNames = { "eq",    "neq",    "lt",        "lte",   "gt",
                                                   "gte",   "in",     "like",      "ilike", "is",
                                                   "match", "imatch", "isdistinct" };

// Unicode White_Space, which Elixir's String.trim/1 removes.
bool isElixirWhitespace(QChar c)
{
    const char16_t u = c.unicode();
    return (u >= 0x09 && u <= 0x0D) || u == 0x20 || u == 0x85 || u == 0xA0 || u == 0x1680
            || (u >= 0x2000 && u <= 0x200A) || u == 0x2028 || u == 0x2029 || u == 0x202F
            || u == 0x205F || u == 0x3000;
}

QStringView elixirTrim(QStringView text)
{
    qsizetype begin = 0;
    qsizetype end = text.size();
    while (begin < end && isElixirWhitespace(text[begin])) {
        ++begin;
    }
    while (end > begin && isElixirWhitespace(text[end - 1])) {
        --end;
    }
    return text.mid(begin, end - begin);
}

// split_top_level: commas split conditions except inside parentheses or double quotes. A quote
// only opens right after '.', '(' or ','; inside quotes a backslash keeps the next character.
QList<QStringView> splitTopLevel(QStringView filter)
{
    QList<QStringView> segments;
    qsizetype start = 0;
    int depth = 0;
    bool quoted = false;
    QChar prev; // 0 at the start of every segment
    for (qsizetype i = 0; i < filter.size(); ++i) {
        const QChar c = filter[i];
        if (quoted) {
            if (c == u'\\' && i + 1 < filter.size()) {
                ++i;
                prev = filter[i];
            } else {
                if (c == u'"') {
                    quoted = false;
                }
                prev = c;
            }
            continue;
        }
        if (c == u'"' && (prev == u'.' || prev == u'(' || prev == u',')) {
            quoted = true;
        } else if (c == u'(') {
            ++depth;
        } else if (c == u')') {
            depth = depth > 0 ? depth - 1 : 0;
        } else if (c == u',' && depth == 0) {
            segments.append(filter.mid(start, i - start));
            start = i + 1;
            prev = QChar();
            continue;
        }
        prev = c;
    }
    segments.append(filter.mid(start));
    return segments;
}

// unquote_value: a value that is exactly one double-quoted string (backslash escapes the next
// character) is unwrapped; anything else is kept verbatim.
QString unquoteValue(QStringView value)
{
    if (!value.startsWith(u'"')) {
        return value.toString();
    }
    QString out;
    out.reserve(value.size());
    for (qsizetype i = 1; i < value.size(); ++i) {
        const QChar c = value[i];
        if (c == u'"') {
            return i == value.size() - 1 ? out : value.toString();
        }
        if (c == u'\\' && i + 1 < value.size()) {
            ++i;
            out.append(value[i]);
        } else {
            out.append(c);
        }
    }
    return value.toString(); // no closing quote
}

QString inspectParts(std::initializer_list<QStringView> parts)
{
    QList<ElixirTerm> items;
    for (QStringView part : parts) {
        items.append(ElixirTerm::string(part.toString()));
    }
    return inspect(ElixirTerm::list(std::move(items)));
}

Result<Filter, QString> parseSegment(QStringView segment)
{
    const QStringView trimmed = elixirTrim(segment);
    if (trimmed.isEmpty()) {
        return QStringLiteral("filter must not contain empty segments (check for extra commas)");
    }
    const qsizetype equals = trimmed.indexOf(u'=');
    if (equals < 0) {
        return inspectParts({ trimmed });
    }
    Filter filter;
    filter.column = trimmed.left(equals).toString();
    QStringView opValue = trimmed.mid(equals + 1);
    if (opValue.startsWith(QLatin1String("not."))) {
        filter.negate = true;
        opValue = opValue.mid(4);
    }
    const qsizetype dot = opValue.indexOf(u'.');
    if (dot < 0) {
        return inspectParts({ opValue });
    }
    const QStringView opText = opValue.left(dot);
    const QStringView value = opValue.mid(dot + 1);
    const std::optional<Op> op = opFromName(opText);
    if (!op) {
        return inspectParts({ opText, value });
    }
    filter.op = *op;
    if (*op == Op::In) {
        if (value.size() < 2 || !value.startsWith(u'(') || !value.endsWith(u')')) {
            return QStringLiteral("`in` filter value must be wrapped by parentheses");
        }
        filter.value = QString(u'{' + value.mid(1, value.size() - 2).toString() + u'}');
    } else {
        filter.value = unquoteValue(value);
    }
    return filter;
}

} // namespace

QLatin1String opName(Op op)
{
    const auto index = static_cast<std::size_t>(op);
    return index < OpNames.size() ? QLatin1String(OpNames[index]) : QLatin1String();
}

std::optional<Op> opFromName(QStringView name)
{
    for (std::size_t i = 0; i < OpNames.size(); ++i) {
        if (name == QLatin1String(OpNames[i])) {
            return static_cast<Op>(i);
        }
    }
    return std::nullopt;
}

Result<QList<Filter>, QString> parseFilterSyntax(QStringView filter)
{
    const QStringView trimmed = elixirTrim(filter);
    QList<Filter> filters;
    if (trimmed.isEmpty()) {
        return filters;
    }
    const QList<QStringView> segments = splitTopLevel(trimmed);
    filters.reserve(segments.size());
    for (QStringView segment : segments) {
        auto parsed = parseSegment(segment);
        if (!parsed.ok()) {
            return QString(QStringLiteral("Error parsing `filter` params: ") + parsed.error());
        }
        filters.append(std::move(parsed).value());
    }
    return filters;
}

Result<QList<Filter>, FilterError> parseFilter(QStringView filter)
{
    auto parsed = parseFilterSyntax(filter);
    if (!parsed.ok()) {
        return FilterError{ FilterError::Kind::Syntax, parsed.error() };
    }
    if (std::optional<QString> error = firstDatabaseFilterError(*parsed)) {
        return FilterError{ FilterError::Kind::Database, *error };
    }
    return std::move(parsed).value();
}

std::optional<QString> firstDatabaseFilterError(const QList<Filter> &filters)
{
    for (const Filter &filter : filters) {
        if (filter.op == Op::In) {
            // Counted like jsonb_array_length(realtime.cast(value, type[])): the first dimension.
            // A literal the database cannot read fails there with a cast error naming the column
            // type, which only the database can produce.
            const std::optional<PgArray> array = parsePgArray(filter.value);
            if (array && array->topLevelCount > 100) {
                return QStringLiteral("too many values for `in` filter. Maximum 100");
            }
        } else if (filter.op == Op::Is) {
            if (filter.value != QLatin1String("null") && filter.value != QLatin1String("true")
                && filter.value != QLatin1String("false")
                && filter.value != QLatin1String("unknown")) {
                return QStringLiteral(
                        "invalid value for is filter: must be null, true, false, or unknown");
            }
        }
    }
    return std::nullopt;
}

std::optional<QString> compileRegexFilters(QList<Filter> &filters)
{
    for (Filter &filter : filters) {
        if (filter.op != Op::Match && filter.op != Op::Imatch) {
            continue;
        }
        const bool caseInsensitive = filter.op == Op::Imatch;
        filter.regex = RegexPattern::compile(filter.value, caseInsensitive);
        if (!filter.regex) {
            return RegexPattern::refusal(filter.value, caseInsensitive);
        }
    }
    return std::nullopt;
}

QString raiseExceptionText(const QString &message)
{
    return QStringLiteral("ERROR P0001 (raise_exception) ") + message;
}

} // namespace rt::subscriptions
