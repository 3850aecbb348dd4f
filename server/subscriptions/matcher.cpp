#include "server/subscriptions/matcher.h"

#include "server/subscriptions/logging.h"
#include "server/subscriptions/pg_array.h"
#include "server/subscriptions/pg_scalar.h"

#include <QHash>

namespace rt::subscriptions {

namespace {

using pg::classify;
using pg::compareTyped;
using pg::parseBool;
using pg::TypeClass;
using pg::TypeInfo;

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

// A pattern compiled for this evaluation: filters built without compileRegexFilters(), and
// `match` on a citext column (case-insensitive, unlike the filter's own compiled pattern).
// Kept per thread, bounded, so that a pattern repeating for every change compiles once.
std::shared_ptr<const RegexPattern> patternFor(const QString &pattern, bool caseInsensitive)
{
    thread_local QHash<QString, std::shared_ptr<const RegexPattern>> cache[2];
    QHash<QString, std::shared_ptr<const RegexPattern>> &compiled = cache[caseInsensitive ? 1 : 0];
    auto it = compiled.find(pattern);
    if (it == compiled.end()) {
        if (compiled.size() >= 256) {
            compiled.clear();
        }
        it = compiled.insert(pattern, RegexPattern::compile(pattern, caseInsensitive));
        if (!*it) {
            qCDebug(lcSubscriptions)
                    << "match filter pattern refused:"
                    << RegexPattern::refusal(pattern, caseInsensitive).value_or(QString());
        }
    }
    return *it;
}

std::optional<bool> applyNegate(std::optional<bool> result, bool negate)
{
    if (!result) {
        return std::nullopt; // NOT NULL is NULL
    }
    return negate ? !*result : *result;
}

} // namespace

namespace {

// `val IS [NOT] NULL|TRUE|FALSE|UNKNOWN` never yields NULL.
std::optional<bool> checkIs(const Filter &filter, const TypeInfo &type, const ColumnValue &column)
{
    const bool isNull = !column.text.has_value();
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

std::optional<bool> checkIsDistinct(const Filter &filter, const TypeInfo &type,
                                    const ColumnValue &column)
{
    const QByteArray value = filter.value.toUtf8();
    bool distinct = true;
    if (!column.text) {
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

std::optional<bool> checkIn(const Filter &filter, const TypeInfo &type, const ColumnValue &column)
{
    if (!column.text || type.isArray) {
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

std::optional<bool> checkLike(const Filter &filter, const TypeInfo &type, const ColumnValue &column)
{
    if (!column.text) {
        return std::nullopt;
    }
    QString pattern = filter.value;
    if (!type.isArray && type.element == TypeClass::Bpchar) {
        // `%L::bpchar` reaches the text operator through bpchar -> text, which drops trailing
        // spaces; the column keeps its padding.
        while (pattern.endsWith(u' ')) {
            pattern.chop(1);
        }
    }
    const bool foldCase =
            filter.op == Op::Ilike || (!type.isArray && type.element == TypeClass::Citext);
    return applyNegate(likeMatch(QString::fromUtf8(*column.text), pattern, foldCase),
                       filter.negate);
}

std::optional<bool> checkMatch(const Filter &filter, const TypeInfo &type,
                               const ColumnValue &column)
{
    if (!column.text) {
        return std::nullopt;
    }
    const bool caseInsensitive =
            filter.op == Op::Imatch || (!type.isArray && type.element == TypeClass::Citext);
    std::shared_ptr<const RegexPattern> pattern = filter.regex;
    if (!pattern || caseInsensitive != (filter.op == Op::Imatch)) {
        pattern = patternFor(filter.value, caseInsensitive);
    }
    if (!pattern) {
        return std::nullopt; // refused when subscribing; never visible here
    }
    return applyNegate(pattern->matches(*column.text), filter.negate);
}

// eq, neq, lt, lte, gt, gte: the column's value against the filter's, cast to the column type.
std::optional<bool> checkComparison(const Filter &filter, const TypeInfo &type,
                                    const ColumnValue &column)
{
    if (!column.text) {
        return std::nullopt;
    }
    const bool equalityOnly = filter.op == Op::Eq || filter.op == Op::Neq;
    const auto compared = compareTyped(type, *column.text, filter.value.toUtf8(), equalityOnly);
    if (!compared) {
        return std::nullopt;
    }
    const int order = *compared;
    const bool result = filter.op == Op::Eq ? order == 0
            : filter.op == Op::Neq          ? order != 0
            : filter.op == Op::Lt           ? order < 0
            : filter.op == Op::Lte          ? order <= 0
            : filter.op == Op::Gt           ? order > 0
                                            : order >= 0;
    return applyNegate(result, filter.negate);
}

} // namespace

std::optional<bool> checkFilter(const Filter &filter, const ColumnValue &column)
{
    const TypeInfo type = classify(column.typeName);
    switch (filter.op) {
    case Op::Is:
        return checkIs(filter, type, column);
    case Op::IsDistinct:
        return checkIsDistinct(filter, type, column);
    case Op::In:
        return checkIn(filter, type, column);
    case Op::Like:
    case Op::Ilike:
        return checkLike(filter, type, column);
    case Op::Match:
    case Op::Imatch:
        return checkMatch(filter, type, column);
    case Op::Eq:
    case Op::Neq:
    case Op::Lt:
    case Op::Lte:
    case Op::Gt:
    case Op::Gte:
        return checkComparison(filter, type, column);
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
