// libFuzzer target for postgres_changes filters: the `filter` string comes straight from a
// client's join payload (spec/server-protocol.md §6.2). The input (as UTF-8) is parsed with
// parseFilter; the error texts are rendered the way the channel would send them; a parsed filter
// list is evaluated against a fixed row holding one column of every type family the matcher
// knows, and every single filter is also checked against every column regardless of its name,
// so the typed comparisons see fuzzed values. Besides crashes, the target aborts when a result
// breaks a documented promise: `not.` flips a known result and keeps an unknown one unknown,
// and evaluating twice gives the same answer; match/imatch patterns compile (RE2) or are
// refused with a join error, and compiled filters evaluate as the plain ones.
#include "server/subscriptions/elixir_inspect.h"
#include "server/subscriptions/filter.h"
#include "server/subscriptions/matcher.h"
#include "server/subscriptions/params.h"
#include "server/subscriptions/pg_array.h"

#include <QJsonObject>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

namespace {

using rt::subscriptions::ColumnValue;
using rt::subscriptions::Filter;
using rt::subscriptions::NamedColumn;

void require(bool condition)
{
    if (!condition) {
        std::abort();
    }
}

NamedColumn column(const char *name, const char *type, const char *value)
{
    return NamedColumn{ QString::fromUtf8(name),
                        ColumnValue{ QByteArray(type),
                                     value ? std::optional<QByteArray>(QByteArray(value))
                                           : std::nullopt } };
}

const QList<NamedColumn> &fixedRow()
{
    static const QList<NamedColumn> row = {
        column("id", "int8", "42"),
        column("small", "int2", "-7"),
        column("n", "int4", "5"),
        column("oid", "oid", "4294967295"),
        column("ratio", "float8", "1.5"),
        column("f4", "float4", "0.1"),
        column("nan", "float8", "NaN"),
        column("price", "numeric", "123.4500"),
        column("done", "bool", "t"),
        column("title", "text", "hello world"),
        column("name", "varchar", "Alice"),
        column("code", "bpchar", "ab  "),
        column("email", "citext", "Bob@Example.com"),
        column("uid", "uuid", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
        column("at", "timestamptz", "2024-05-01 12:00:00.123+00"),
        column("local", "timestamp", "2024-05-01 12:00:00"),
        column("day", "date", "2024-05-01"),
        column("clock", "time", "10:00:00"),
        column("meta", "jsonb", "{\"a\": 1, \"b\": [true, null]}"),
        column("raw", "json", "{\"a\":1}"),
        column("tags", "_text", "{a,\"b c\",NULL}"),
        column("nums", "_int4", "{1,2,3}"),
        column("mood", "mood", "happy"),
        column("missing", "text", nullptr),
        column("flag", "bool", nullptr),
    };
    return row;
}

void checkNegation(const Filter &filter, const ColumnValue &value)
{
    const std::optional<bool> plain = rt::subscriptions::checkFilter(filter, value);
    Filter negated = filter;
    negated.negate = !filter.negate;
    const std::optional<bool> flipped = rt::subscriptions::checkFilter(negated, value);
    require(plain.has_value() == flipped.has_value());
    if (plain) {
        require(*plain != *flipped);
    }
    require(rt::subscriptions::checkFilter(filter, value) == plain);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 8192) {
        return 0; // filters are short; long inputs only slow the search down
    }
    const QString input =
            QString::fromUtf8(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));

    (void)rt::subscriptions::parsePgArray(input);
    require(!rt::subscriptions::elixirInspect(input).isEmpty());

    const auto parsed = rt::subscriptions::parseFilter(input);
    const auto syntax = rt::subscriptions::parseFilterSyntax(input);
    require(parsed.ok() == (syntax.ok() && !rt::subscriptions::firstDatabaseFilterError(*syntax)));
    if (!syntax.ok()) {
        require(syntax.error().startsWith(QLatin1String("Error parsing `filter` params: ")));
        require(!parsed.ok()
                && parsed.error().kind == rt::subscriptions::FilterError::Kind::Syntax);
        return 0;
    }

    // The texts the channel would send for these parameters.
    const QJsonObject params{ { QStringLiteral("event"), QStringLiteral("INSERT") },
                              { QStringLiteral("schema"), QStringLiteral("public") },
                              { QStringLiteral("table"), QStringLiteral("t") },
                              { QStringLiteral("filter"), input } };
    const auto subscription = rt::subscriptions::parseParams(params);
    require(subscription.ok());
    require(subscription->filters == *syntax);
    require(rt::subscriptions::notInPublicationMessage(*subscription)
                    .contains(QLatin1String("filters: [")));
    if (!parsed.ok()) {
        require(parsed.error().kind == rt::subscriptions::FilterError::Kind::Database);
        require(!rt::subscriptions::exceptionMessage(
                         *subscription,
                         rt::subscriptions::raiseExceptionText(parsed.error().message))
                         .isEmpty());
    }

    const QList<NamedColumn> &row = fixedRow();
    const rt::subscriptions::ColumnList lookup(row);
    const bool visible = rt::subscriptions::visibleThroughFilters(*syntax, lookup);
    require(rt::subscriptions::visibleThroughFilters(*syntax, lookup) == visible);

    // match/imatch patterns as the join compiles them (RE2 and the divergence scanner): either
    // all compile, or the refusal names a pattern; a compiled list evaluates as the plain one.
    QList<Filter> compiled = *syntax;
    const std::optional<QString> refusal = rt::subscriptions::compileRegexFilters(compiled);
    if (refusal) {
        require(refusal->startsWith(QLatin1String("match filter pattern is ")));
    } else {
        require(compiled == *syntax);
        require(rt::subscriptions::visibleThroughFilters(compiled, lookup) == visible);
        for (const Filter &filter : std::as_const(compiled)) {
            if (filter.regex) {
                (void)filter.regex->matches(filter.value.toUtf8());
            }
        }
    }

    // Every filter against every column, so the typed comparisons see the fuzzed values.
    qsizetype checks = 0;
    for (const Filter &filter : *syntax) {
        for (const NamedColumn &named : row) {
            checkNegation(filter, named.value);
            if (++checks > 400) {
                return 0;
            }
        }
    }
    return 0;
}
