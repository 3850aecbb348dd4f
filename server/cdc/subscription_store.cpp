#include "server/cdc/subscription_store.h"

#include "server/cdc/logging.h"
#include "server/postgres/pool.h"
#include "server/postgres/sql_text.h"
#include "server/subscriptions/params.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QPointer>
#include <QTimer>

namespace rt::cdc {

namespace {

// One subscription row per (binding, published table); the trigger checks it.
const QByteArray InsertSql = QByteArrayLiteral(
        "INSERT INTO realtime.subscription (subscription_id, entity, filters, claims, "
        "action_filter, selected_columns) VALUES ($1::uuid, $2::regclass, "
        "coalesce((SELECT array_agg(ROW(f->>'column_name', (f->>'op')::realtime.equality_op, "
        "f->>'value', (f->>'negate')::boolean)::realtime.user_defined_filter) FROM "
        "jsonb_array_elements($3::jsonb) f), '{}'), $4::jsonb, $5, $6::text[])");
const QByteArray DeleteSql = QByteArrayLiteral(
        "DELETE FROM realtime.subscription WHERE subscription_id = ANY($1::uuid[])");

// Who the subscriber is for RLS: role, all claims, and `sub` as request.jwt.claim.sub gets it.
Subscriber subscriberFor(const SubscribeRequest &request)
{
    Subscriber subscriber;
    subscriber.memberId = request.memberId;
    subscriber.topic = request.topic;
    subscriber.legacy = request.legacy;
    subscriber.role = request.claims.value(QLatin1String("role")).toString().toUtf8();
    subscriber.claimsJson = QJsonDocument(request.claims).toJson(QJsonDocument::Compact);
    const QJsonValue sub = request.claims.value(QLatin1String("sub"));
    subscriber.sub = sub.isString()
            ? sub.toString().toUtf8()
            : QJsonDocument(QJsonArray{ sub }).toJson(QJsonDocument::Compact).mid(1).chopped(1);
    return subscriber;
}

QByteArray filtersJson(const QList<subscriptions::Filter> &filters)
{
    QJsonArray array;
    for (const subscriptions::Filter &filter : filters) {
        QJsonObject object;
        object.insert(QLatin1String("column_name"), filter.column);
        object.insert(QLatin1String("op"), QLatin1String(subscriptions::opName(filter.op)));
        object.insert(QLatin1String("value"), filter.value);
        object.insert(QLatin1String("negate"), filter.negate);
        array.append(object);
    }
    return QJsonDocument(array).toJson(QJsonDocument::Compact);
}

postgres::Statement insertFor(const Binding &binding, const QByteArray &claimsJson)
{
    std::optional<QByteArray> selected;
    if (binding.select) {
        QList<QByteArray> columns;
        for (const QString &column : *binding.select) {
            columns.append(column.toUtf8());
        }
        selected = postgres::textArrayLiteral(columns);
    }
    postgres::Statement insert;
    insert.sql = InsertSql;
    insert.params = {
        binding.subscriptionId.toByteArray(QUuid::WithoutBraces),
        postgres::quoteIdentifier(binding.schema) + '.' + postgres::quoteIdentifier(binding.table),
        filtersJson(binding.filters),
        claimsJson,
        binding.action,
        selected,
    };
    return insert;
}

bool matchesTable(const subscriptions::SubscriptionParams &param, const QByteArray &schema,
                  const QByteArray &table)
{
    return (param.schema == QLatin1String("*") || param.schema.toUtf8() == schema)
            && (param.table == QLatin1String("*") || param.table.toUtf8() == table);
}

// The rows to write for `params` among the published tables: the subscriber's bindings and, per
// statement, which params element it came from (its errors name that element).
struct Rows
{
    QList<postgres::Statement> statements;
    QList<int> elementOf;
};

Result<Rows, QString> rowsFor(const SubscribeRequest &request,
                              const QList<subscriptions::SubscriptionParams> &params,
                              const postgres::QueryResult &tables, Subscriber &subscriber)
{
    Rows rows;
    for (qsizetype p = 0; p < params.size(); ++p) {
        const subscriptions::SubscriptionParams &param = params[p];
        bool any = false;
        for (int row = 0; row < tables.rowCount(); ++row) {
            if (!matchesTable(param, tables.value(row, 0), tables.value(row, 1))) {
                continue;
            }
            any = true;
            Binding binding{ QUuid::createUuid(),  request.elements[p].id, tables.value(row, 0),
                             tables.value(row, 1), param.event.toUtf8(),   param.filters,
                             param.select };
            rows.statements.append(insertFor(binding, subscriber.claimsJson));
            rows.elementOf.append(static_cast<int>(p));
            subscriber.bindings.append(std::move(binding));
        }
        if (!any) {
            return subscriptions::notInPublicationMessage(param);
        }
    }
    return rows;
}

postgres::Statement deleteFor(const QList<QUuid> &ids)
{
    QList<QByteArray> texts;
    for (const QUuid &id : ids) {
        texts.append(id.toByteArray(QUuid::WithoutBraces));
    }
    postgres::Statement remove;
    remove.sql = DeleteSql;
    remove.params = { "{" + texts.join(',') + "}" };
    return remove;
}

// Every element's params, or the error of the first invalid one.
Result<QList<subscriptions::SubscriptionParams>, QString>
parseElements(const SubscribeRequest &request)
{
    QList<subscriptions::SubscriptionParams> params;
    for (const SubscribeRequest::Element &element : request.elements) {
        auto parsed = subscriptions::parseParams(element.params);
        if (!parsed) {
            return parsed.error();
        }
        // Patterns are compiled (and refused) here, before anything is written to the
        // tenant's database: the stream evaluates them, not the database.
        if (std::optional<QString> refused = subscriptions::compileRegexFilters(parsed->filters)) {
            return subscriptions::exceptionMessage(*parsed, *refused);
        }
        params.append(std::move(parsed).value());
    }
    return params;
}

// The subscription ids of `subscriber`'s rows (none for null).
QList<QUuid> bindingIds(const Subscriber *subscriber)
{
    QList<QUuid> ids;
    if (subscriber != nullptr) {
        for (const Binding &binding : subscriber->bindings) {
            ids.append(binding.subscriptionId);
        }
    }
    return ids;
}

postgres::Statement publishedTablesQuery(const QByteArray &publication)
{
    postgres::Statement published;
    published.sql = QByteArrayLiteral(
            "SELECT schemaname, tablename FROM pg_publication_tables WHERE pubname = $1");
    published.params = { publication };
    return published;
}

// The error of the first statement of a store that failed, in the words of its params element.
std::optional<QString> firstFailure(const postgres::SegmentResult &result,
                                    const QList<subscriptions::SubscriptionParams> &params,
                                    const QList<int> &elementOf)
{
    for (qsizetype i = 0; i < result.results.size(); ++i) {
        if (!result.results[i].ok()) {
            return subscriptions::exceptionMessage(params.value(qMax(0, elementOf.value(i))),
                                                   result.results[i].error().message);
        }
    }
    return std::nullopt;
}

} // namespace

SubscriptionStore::SubscriptionStore(QByteArray publication, PoolAccess pool, QObject *parent)
    : QObject(parent),
      m_publication(std::move(publication)),
      m_pool(std::move(pool))
{ }

void SubscriptionStore::store(SubscribeRequest request, const Subscriber *replaced,
                              std::function<void(Result<Subscriber, QString>)> done)
{
    Result<QList<subscriptions::SubscriptionParams>, QString> parsed = parseElements(request);
    if (!parsed) {
        done(parsed.error());
        return;
    }
    const QList<QUuid> replacedIds = bindingIds(replaced);
    m_pool()->run(
            publishedTablesQuery(m_publication),
            [this, guard = QPointer<SubscriptionStore>(this), request = std::move(request),
             params = std::move(parsed).value(), replacedIds, done = std::move(done)](
                    rt::Result<postgres::QueryResult, postgres::PgError> tables) mutable {
                if (!guard) {
                    return;
                }
                if (!tables) {
                    done(subscriptions::exceptionMessage(params.value(0), tables.error().message));
                    return;
                }
                Subscriber subscriber = subscriberFor(request);
                Result<Rows, QString> rows = rowsFor(request, params, *tables, subscriber);
                if (!rows) {
                    done(rows.error());
                    return;
                }
                // A token refresh replaces the channel's rows in the same transaction.
                if (!replacedIds.isEmpty()) {
                    rows->statements.prepend(deleteFor(replacedIds));
                    rows->elementOf.prepend(-1);
                }
                const QList<postgres::Statement> statements = rows->statements;
                m_pool()->run(statements,
                              [guard, subscriber = std::move(subscriber), params,
                               elementOf = rows->elementOf, done = std::move(done)](
                                      const postgres::SegmentResult &result) mutable {
                                  if (!guard) {
                                      return;
                                  }
                                  if (std::optional<QString> failure =
                                              firstFailure(result, params, elementOf)) {
                                      done(std::move(*failure));
                                      return;
                                  }
                                  done(std::move(subscriber));
                              });
            });
}

void SubscriptionStore::remove(const QList<QUuid> &ids)
{
    if (ids.isEmpty()) {
        return;
    }
    const bool scheduled = !m_pendingRemovals.isEmpty();
    m_pendingRemovals.append(ids);
    if (!scheduled) {
        QTimer::singleShot(100, this, &SubscriptionStore::flushRemovals);
    }
}

void SubscriptionStore::flushRemovals()
{
    postgres::Pool *pool = m_pool();
    const QList<QUuid> ids = std::exchange(m_pendingRemovals, {});
    if (ids.isEmpty() || pool == nullptr) {
        return;
    }
    pool->run(deleteFor(ids),
              [](const rt::Result<postgres::QueryResult, postgres::PgError> &result) {
                  if (!result) {
                      qCWarning(lcCdc)
                              << "removing subscription rows failed:" << result.error().text();
                  }
              });
}

} // namespace rt::cdc
