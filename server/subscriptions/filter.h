#pragma once

#include "server/subscriptions/regex_pattern.h"
#include "shared/core/result.h"

#include <QLatin1String>
#include <QList>
#include <QString>
#include <QStringView>

#include <memory>
#include <optional>

// The `filter` string of a postgres_changes binding (spec/server-protocol.md §6.2):
// `col=[not.]op.value[,col=op.value...]`, conditions AND-ed. Parsing follows upstream's
// Subscriptions.parse_subscription_params byte for byte (same splitting, unquoting and error
// texts); the checks the tenant database's trigger (realtime.subscription_check_filters) makes
// without knowing the table are offered separately, with the database's texts. Pure functions,
// callable from any thread; the input is untrusted and never crashes the parser.
namespace rt::subscriptions {

// The labels of the realtime.equality_op enum, in its order.
enum class Op { Eq, Neq, Lt, Lte, Gt, Gte, In, Like, Ilike, Is, Match, Imatch, IsDistinct };

// "eq", "neq", ..., "isdistinct": the enum label stored in realtime.subscription.filters and
// printed in error texts.
QLatin1String opName(Op op);
std::optional<Op> opFromName(QStringView name);

struct Filter
{
    QString column;
    Op op = Op::Eq;
    // Unquoted value; for `in` the PostgreSQL array literal built from the parentheses, e.g.
    // `in.(a,b,"c,d")` → `{a,b,"c,d"}`.
    QString value;
    bool negate = false; // `not.` prefix
    // For match/imatch once compileRegexFilters() accepted the pattern (derived from op and
    // value, so not part of equality); without it the matcher compiles the pattern itself.
    std::shared_ptr<const RegexPattern> regex;

    friend bool operator==(const Filter &a, const Filter &b)
    {
        return a.column == b.column && a.op == b.op && a.value == b.value && a.negate == b.negate;
    }
};

// Compiles the match/imatch patterns of `filters` in place (RegexPattern): nullopt when all
// are accepted, else the refusal of the first that is not (a pattern too long, or one that
// RE2 cannot match as PostgreSQL would).
std::optional<QString> compileRegexFilters(QList<Filter> &filters);

struct FilterError
{
    enum class Kind {
        // Rejected by the parser: `message` is the complete system-message text, e.g.
        // "Error parsing `filter` params: [\"foo\", \"hey\"]".
        Syntax,
        // Parsed, but the database trigger would refuse it: `message` is the PostgreSQL error
        // text (e.g. "too many values for `in` filter. Maximum 100"); render it with
        // exceptionMessage(params, raiseExceptionText(message)).
        Database,
    };
    Kind kind = Kind::Syntax;
    QString message;
};

// Exactly upstream's parser: Ok(filters) or the system-message text
// ("Error parsing `filter` params: ..."). An empty or white-space-only string gives no filters.
Result<QList<Filter>, QString> parseFilterSyntax(QStringView filter);

// parseFilterSyntax, then firstDatabaseFilterError: the error says which of the two it is.
Result<QList<Filter>, FilterError> parseFilter(QStringView filter);

// The trigger-side checks that need no table information, with the trigger's texts, for the
// first filter (in order) that fails them:
//  - `in` with more than 100 values: "too many values for `in` filter. Maximum 100"
//  - `is` with a value other than null/true/false/unknown (case-sensitive):
//    "invalid value for is filter: must be null, true, false, or unknown"
// Checks that need the table (column exists and is SELECT-able, value casts to the column type,
// `is true` needs a boolean column, like/match need a text column, regex validity) stay with the
// database. The trigger checks a filter's column before its value, so when a filter has both
// problems upstream reports the column.
std::optional<QString> firstDatabaseFilterError(const QList<Filter> &filters);

// Postgrex's Exception.message for an error raised by plpgsql `raise exception`, which is how the
// texts above appear after "Exception: " upstream: "ERROR P0001 (raise_exception) <message>".
QString raiseExceptionText(const QString &message);

} // namespace rt::subscriptions
