#include "server/subscriptions/params.h"

#include "server/subscriptions/elixir_inspect.h"

#include <QJsonArray>

namespace rt::subscriptions {

namespace {

QString actionFilter(const QJsonObject &params)
{
    const QJsonValue event = params.value(QLatin1String("event"));
    if (!event.isString()) {
        return QStringLiteral("*");
    }
    QString upper = event.toString().toUpper();
    if (upper == QLatin1String("INSERT") || upper == QLatin1String("UPDATE")
        || upper == QLatin1String("DELETE")) {
        return upper;
    }
    return QStringLiteral("*");
}

Result<std::optional<QStringList>, QString> parseSelect(const QJsonObject &params)
{
    const QJsonValue select = params.value(QLatin1String("select"));
    if (select.isString()) {
        return QStringLiteral("Error parsing `select` params: expected a list of column name "
                              "strings, e.g. select: [\"col1\", \"col2\"]");
    }
    if (!select.isArray()) {
        return std::optional<QStringList>();
    }
    QStringList columns;
    const QJsonArray array = select.toArray();
    for (const auto &item : array) {
        if (item.isString()) {
            columns.append(item.toString());
        }
    }
    if (columns.isEmpty()) {
        return std::optional<QStringList>();
    }
    return std::optional<QStringList>(std::move(columns));
}

Result<SubscriptionParams, QString> okParams(SubscriptionParams params)
{
    if (params.select
        && (params.schema == QLatin1String("*") || params.table == QLatin1String("*"))) {
        return QStringLiteral("Column selection is not supported for wildcard subscriptions. "
                              "Provide an explicit schema and table name.");
    }
    return params;
}

const QString NoParamsPrefix = QStringLiteral(
        "No subscription params provided. Please provide at least a `schema` or `table` to "
        "subscribe to: ");

ElixirTerm filtersTerm(const QList<Filter> &filters)
{
    QList<ElixirTerm> items;
    items.reserve(filters.size());
    for (const Filter &filter : filters) {
        items.append(ElixirTerm::tuple(
                { ElixirTerm::string(filter.column), ElixirTerm::string(QString(opName(filter.op))),
                  ElixirTerm::string(filter.value), ElixirTerm::boolean(filter.negate) }));
    }
    return ElixirTerm::list(std::move(items));
}

ElixirTerm selectTerm(const std::optional<QStringList> &select)
{
    if (!select) {
        return ElixirTerm::nil();
    }
    QList<ElixirTerm> items;
    items.reserve(select->size());
    for (const QString &column : *select) {
        items.append(ElixirTerm::string(column));
    }
    return ElixirTerm::list(std::move(items));
}

} // namespace

Result<SubscriptionParams, QString> parseParams(const QJsonObject &params)
{
    SubscriptionParams out;
    out.event = actionFilter(params);
    auto select = parseSelect(params);
    if (!select.ok()) {
        return select.error();
    }
    out.select = std::move(select).value();

    const QJsonValue schema = params.value(QLatin1String("schema"));
    const QJsonValue table = params.value(QLatin1String("table"));
    const QJsonValue filter = params.value(QLatin1String("filter"));
    const bool hasTable = params.contains(QLatin1String("table"));
    const bool hasSchema = params.contains(QLatin1String("schema"));
    const bool hasFilter = params.contains(QLatin1String("filter"));

    if (schema.isString() && table.isString() && filter.isString()) {
        auto filters = parseFilterSyntax(filter.toString());
        if (!filters.ok()) {
            return filters.error();
        }
        out.schema = schema.toString();
        out.table = table.toString();
        out.filters = std::move(filters).value();
        return okParams(std::move(out));
    }
    if (schema.isString() && table.isString() && !hasFilter) {
        out.schema = schema.toString();
        out.table = table.toString();
        return okParams(std::move(out));
    }
    if (schema.isString() && !hasTable && !hasFilter) {
        out.schema = schema.toString();
        out.table = QStringLiteral("*");
        return okParams(std::move(out));
    }
    if (table.isString() && !hasSchema && !hasFilter) {
        out.schema = QStringLiteral("public");
        out.table = table.toString();
        return okParams(std::move(out));
    }
    if (params.contains(QLatin1String("user_token"))
        || params.contains(QLatin1String("auth_token"))) {
        return QString(NoParamsPrefix + QLatin1String("<redacted>"));
    }
    return QString(NoParamsPrefix + elixirInspect(params));
}

Result<SubscriptionParams, QString> parseParams(const QJsonValue &params)
{
    if (params.isObject()) {
        return parseParams(params.toObject());
    }
    return QString(NoParamsPrefix + elixirInspect(params));
}

QString describeForError(const SubscriptionParams &params)
{
    InspectOptions pretty;
    pretty.pretty = true;
    return u'[' + QStringLiteral("event: ") + params.event + QStringLiteral(", schema: ")
            + params.schema + QStringLiteral(", table: ") + params.table
            + QStringLiteral(", filters: ") + inspect(filtersTerm(params.filters), pretty)
            + QStringLiteral(", select: ") + inspect(selectTerm(params.select), pretty) + u']';
}

QString notInPublicationMessage(const SubscriptionParams &params)
{
    return QStringLiteral("Unable to subscribe to changes with given parameters. Please check "
                          "Realtime is enabled for the given connect parameters: ")
            + describeForError(params);
}

QString exceptionMessage(const SubscriptionParams &params, const QString &exceptionText)
{
    return QStringLiteral("Unable to subscribe to changes with given parameters. An exception "
                          "happened so please check your connect parameters: ")
            + describeForError(params) + QStringLiteral(". Exception: ") + exceptionText;
}

} // namespace rt::subscriptions
