#pragma once

#include "server/subscriptions/filter.h"
#include "shared/core/result.h"

#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

// One element of a join's `config.postgres_changes` (spec/server-protocol.md §6.1) turned into
// what a realtime.subscription row needs, with upstream's error texts (§3.5, §6.2) for the
// `postgres_changes` system message. Pure functions, callable from any thread.
namespace rt::subscriptions {

struct SubscriptionParams
{
    QString event = QStringLiteral("*"); // "*", "INSERT", "UPDATE" or "DELETE" (action_filter)
    QString schema; // "*" = every schema of the publication
    QString table; // "*" = every table of the publication
    QList<Filter> filters; // AND-ed; empty = every row
    std::optional<QStringList> select; // nullopt = all columns (also for an empty list)

    friend bool operator==(const SubscriptionParams &, const SubscriptionParams &) = default;
};

// Upstream's parse_subscription_params. `event` is matched case-insensitively, anything else → "*".
// Accepted shapes: schema+table+filter (all strings), schema+table (no `filter` key), schema only
// (no `table`/`filter` keys; table "*"), table only (no `schema`/`filter` keys; schema "public").
// Errors are the complete system-message texts:
//  - "Error parsing `select` params: expected a list of column name strings, e.g. select: [\"col1\", \"col2\"]"
//    (a string `select`; checked first),
//  - "Error parsing `filter` params: ..." (see parseFilterSyntax),
//  - "Column selection is not supported for wildcard subscriptions. Provide an explicit schema and table name.",
//  - "No subscription params provided. Please provide at least a `schema` or `table` to subscribe to: <inspect>"
//    where <inspect> is elixirInspect(params), or "<redacted>" if a `user_token` or `auth_token`
//    key is present.
// The trigger-side filter checks are not made here (upstream makes them in the database, after
// matching tables): see firstDatabaseFilterError.
Result<SubscriptionParams, QString> parseParams(const QJsonObject &params);
// Same for an element that may not be an object (upstream answers the "No subscription params"
// text with the inspected value, e.g. `"x"` or `[1, 2]`).
Result<SubscriptionParams, QString> parseParams(const QJsonValue &params);

// The bracketed parameter list of the "Unable to subscribe" texts, as upstream's params_to_log
// prints it: `[event: INSERT, schema: public, table: *, filters: [{"id", "eq", "1", false}], select: nil]`.
// Strings are printed raw; `filters` and `select` with inspect(…, pretty: true) (so a long filter
// list is laid out over several lines, as upstream does).
QString describeForError(const SubscriptionParams &params);

// "Unable to subscribe to changes with given parameters. Please check Realtime is enabled for
// the given connect parameters: [...]": no table of the publication matched.
QString notInPublicationMessage(const SubscriptionParams &params);

// "Unable to subscribe to changes with given parameters. An exception happened so please check
// your connect parameters: [...]. Exception: <exceptionText>": inserting the subscription
// failed. Upstream's exceptionText is Postgrex's rendering, e.g.
// "ERROR P0001 (raise_exception) invalid column for filter x" (see raiseExceptionText).
QString exceptionMessage(const SubscriptionParams &params, const QString &exceptionText);

} // namespace rt::subscriptions
