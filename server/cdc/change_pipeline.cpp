#include "server/cdc/change_pipeline.h"

#include "server/cdc/logging.h"
#include "server/postgres/pool.h"
#include "server/postgres/sql_text.h"
#include "server/pubsub/pubsub.h"

#include <QDateTime>
#include <QLoggingCategory>
#include <QPointer>
#include <QTimer>

#include <limits>
#include <utility>

namespace rt::cdc {

namespace {

// How long a role's column privileges are trusted before they are read again.
constexpr qint64 PrivilegesTtlMs = 30'000;

qint64 nowMs()
{
    return QDateTime::currentMSecsSinceEpoch();
}

} // namespace

ChangePipeline::ChangePipeline(Parts parts, QObject *parent)
    : QObject(parent),
      m_parts(std::move(parts))
{
    constexpr int FanOutRetryMs = 5;
    m_fanOutRetry.setSingleShot(true);
    m_fanOutRetry.setInterval(FanOutRetryMs);
    QObject::connect(&m_fanOutRetry, &QTimer::timeout, this, &ChangePipeline::processNext);
}

void ChangePipeline::push(ChangeBatch batch)
{
    m_queuedBytes += batch.decodedBytes;
    m_queue.push_back(std::move(batch));
    processNext();
}

void ChangePipeline::clear()
{
    m_queue.clear();
    m_queuedBytes = m_inFlightBytes;
    Q_EMIT progressed();
}

void ChangePipeline::invalidatePrivileges()
{
    m_privilegesStale = true;
}

void ChangePipeline::processNext()
{
    if (m_processing || m_queue.empty() || m_fanOutRetry.isActive()) {
        return;
    }
    if (m_parts.fanOutReady && !m_parts.fanOutReady()) {
        // A subscriber reads slowly: the batch waits here (and the stream stops reading once
        // the budget is spent) instead of piling up in its socket.
        m_fanOutRetry.start();
        return;
    }
    m_processing = true;
    ChangeBatch batch = std::move(m_queue.front());
    m_queue.pop_front();
    // Transactions that queued up while the previous batch was evaluated are evaluated together:
    // the RLS queries per claims set stay one per batch however many transactions it holds.
    constexpr qsizetype MaxMergedChanges = 5'000;
    while (!m_queue.empty()
           && batch.changes.size() + m_queue.front().changes.size() <= MaxMergedChanges) {
        batch.append(std::move(m_queue.front()));
        m_queue.pop_front();
    }
    m_inFlightBytes = batch.decodedBytes;
    if (batch.changes.isEmpty() && batch.broadcasts.isEmpty()) {
        finishBatch(batch.endLsn);
        return;
    }
    completeCatalog(std::move(batch));
}

void ChangePipeline::completeCatalog(ChangeBatch batch)
{
    QList<QByteArray> unknown;
    for (const Change &change : std::as_const(batch.changes)) {
        if (!change.relation->catalogKnown) {
            const QByteArray oid = QByteArray::number(change.relation->oid);
            if (!unknown.contains(oid)) {
                unknown.append(oid);
            }
        }
    }
    if (unknown.isEmpty() || m_parts.pool() == nullptr) {
        awaitVisibility(std::move(batch), 0);
        return;
    }
    postgres::Statement statement;
    statement.sql = QByteArrayLiteral(
            "SELECT c.oid, c.relrowsecurity, a.attname, format_type(a.atttypid, a.atttypmod), "
            "coalesce(a.attnum = ANY(i.indkey), false) "
            "FROM pg_class c "
            "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped "
            "LEFT JOIN pg_index i ON i.indrelid = c.oid AND i.indisprimary "
            "WHERE c.oid = ANY($1::oid[])");
    statement.params = { "{" + unknown.join(',') + "}" };
    auto shared = std::make_shared<ChangeBatch>(std::move(batch));
    m_parts.pool()->run(statement,
                        [this, guard = QPointer<ChangePipeline>(this),
                         shared](rt::Result<postgres::QueryResult, postgres::PgError> result) {
                            if (!guard) {
                                return;
                            }
                            if (!result) {
                                qCWarning(lcCdc)
                                        << "reading the catalog failed:" << result.error().text();
                                awaitVisibility(std::move(*shared), 0);
                                return;
                            }
                            applyCatalog(shared->changes, *result);
                            awaitVisibility(std::move(*shared), 0);
                        });
}

void ChangePipeline::applyCatalog(QList<Change> &changes, const postgres::QueryResult &catalogRows)
{
    // oid -> (rls, column -> (sqlType, isPrimaryKey))
    QHash<quint32, std::pair<bool, QHash<QByteArray, std::pair<QByteArray, bool>>>> catalog;
    for (int row = 0; row < catalogRows.rowCount(); ++row) {
        auto &entry = catalog[catalogRows.value(row, 0).toUInt()];
        entry.first = catalogRows.value(row, 1) == "t";
        entry.second.insert(catalogRows.value(row, 2),
                            { catalogRows.value(row, 3), catalogRows.value(row, 4) == "t" });
    }
    QHash<quint32, RelationPtr> completed;
    for (Change &change : changes) {
        const quint32 oid = change.relation->oid;
        if (change.relation->catalogKnown || !catalog.contains(oid)) {
            continue;
        }
        auto done = completed.constFind(oid);
        if (done == completed.constEnd()) {
            auto relation = std::make_shared<RelationInfo>(*change.relation);
            const auto &entry = catalog.value(oid);
            relation->rlsEnabled = entry.first;
            for (ColumnInfo &column : relation->columns) {
                const auto info = entry.second.value(column.name);
                column.sqlType = info.first;
                column.isPrimaryKey = info.second;
            }
            relation->catalogKnown = true;
            // Later changes of the same description reuse it.
            m_parts.assembler.completeRelation(change.relation, relation);
            done = completed.insert(oid, relation);
        }
        change.relation = done.value();
    }
}

void ChangePipeline::awaitVisibility(ChangeBatch batch, int attempt)
{
    bool needsRls = false;
    for (const Change &change : std::as_const(batch.changes)) {
        if (change.relation->rlsEnabled && change.type != ChangeType::Delete) {
            needsRls = true;
            break;
        }
    }
    if (!needsRls || batch.xids.isEmpty() || m_parts.pool() == nullptr) {
        evaluate(std::move(batch));
        return;
    }
    // The 32-bit xids are widened with the epoch of the current snapshot's xmax (a transaction
    // we decoded is older than xmax, so at most one epoch back).
    postgres::Statement visible;
    visible.sql = QByteArrayLiteral(
            "SELECT coalesce(bool_and(pg_visible_in_snapshot((CASE WHEN (e << 32 | x) > m "
            "THEN (e << 32 | x) - 4294967296 ELSE (e << 32 | x) END)::text::xid8, s)), true) "
            "FROM pg_current_snapshot() s, "
            "LATERAL (SELECT pg_snapshot_xmax(s)::text::bigint) AS xm(m), "
            "LATERAL (SELECT m >> 32) AS ep(e), unnest($1::bigint[]) AS u(x)");
    QList<QByteArray> xids;
    for (const quint32 xid : std::as_const(batch.xids)) {
        xids.append(QByteArray::number(xid));
    }
    visible.params = { "{" + xids.join(',') + "}" };
    auto shared = std::make_shared<ChangeBatch>(std::move(batch));
    m_parts.pool()->run(
            visible,
            [this, guard = QPointer<ChangePipeline>(this), shared,
             attempt](rt::Result<postgres::QueryResult, postgres::PgError> result) {
                if (!guard) {
                    return;
                }
                constexpr int MaxAttempts =
                        500; // 5 s in 10 ms steps: then evaluate anyway (and log)
                if (result && result->value(0, 0) == "f" && attempt < MaxAttempts) {
                    QTimer::singleShot(attempt < 10 ? 1 : 10, this, [this, shared, attempt] {
                        awaitVisibility(std::move(*shared), attempt + 1);
                    });
                    return;
                }
                if (!result || attempt >= MaxAttempts) {
                    qCWarning(lcCdc)
                            << "tenant" << m_parts.tenantId
                            << "could not confirm that decoded transactions are visible:"
                            << (result ? QStringLiteral("timeout") : result.error().text());
                }
                evaluate(std::move(*shared));
            });
}

namespace {

// Whether two adjacent deliveries are one change's messages to one topic in one format.
bool sameEvent(const router::Delivery &a, const router::Delivery &b)
{
    return a.change == b.change && a.message->topic() == b.message->topic()
            && a.message->event() == b.message->event();
}

// key text -> indices of the changes with that key (single-column primary keys)
using KeyMap = QHash<QByteArray, QList<int>>;

// One relation's visibility query for some changes, and how its rows map back to them.
struct VisibilityLookup
{
    postgres::Statement statement;
    KeyMap keys; // empty: the query returns change indices
};

// (relation oid, change indices) -> its lookup (nullopt: no primary key, nothing to ask).
using LookupCache = QHash<QPair<quint32, QList<int>>, std::optional<VisibilityLookup>>;

// One key column: one index scan over the array of keys; rows come back as their key's text
// (the same output function pgoutput used), mapped back to the changes.
VisibilityLookup singleKeyLookup(const RelationInfo &info, int keyColumn, const QList<int> &indices,
                                 const QList<router::MatchedChange> &changes)
{
    const ColumnInfo &key = info.columns[keyColumn];
    const QByteArray name = postgres::quoteIdentifier(key.name);
    KeyMap map;
    QList<QByteArray> values;
    for (const int index : indices) {
        const Change &change = changes[index].change;
        const QByteArray text =
                keyColumn < change.newTuple.size() ? change.newTuple[keyColumn].text : QByteArray();
        QList<int> &withKey = map[text];
        if (withKey.isEmpty()) {
            values.append(text);
        }
        withKey.append(index);
    }
    postgres::Statement lookup;
    lookup.sql = "SELECT t." + name + "::text FROM " + info.qualifiedName() + " t WHERE t." + name
            + " = ANY($1::" + key.sqlType + "[])";
    lookup.params = { postgres::textArrayLiteral(values) };
    lookup.keepPlan = true;
    return VisibilityLookup{ lookup, map };
}

// Several key columns: the changes' indices and keys as parallel arrays, each of the key's own
// type (not cast per element, not cast from text[]), so that the comparison stays on that type
// and PostgreSQL can use the primary key index under any policy, also in a generic plan. Rows
// come back as change indices.
VisibilityLookup compositeKeyLookup(const RelationInfo &info, const QList<int> &keyColumns,
                                    const QList<int> &indices,
                                    const QList<router::MatchedChange> &changes)
{
    QByteArray sql = "SELECT c.k FROM unnest($1::int4[]";
    QByteArray columns = "k";
    QByteArray condition;
    for (qsizetype n = 0; n < keyColumns.size(); ++n) {
        const ColumnInfo &column = info.columns[keyColumns[n]];
        const QByteArray number = QByteArray::number(n);
        sql += ", $" + QByteArray::number(n + 2) + "::" + column.sqlType + "[]";
        columns += ", p" + number;
        condition += (n > 0 ? " AND t." : "t.") + postgres::quoteIdentifier(column.name) + " = c.p"
                + number;
    }
    sql += ") AS c(" + columns + ") WHERE EXISTS (SELECT 1 FROM " + info.qualifiedName()
            + " t WHERE " + condition + ")";
    QList<QByteArray> indexTexts;
    QList<QList<QByteArray>> keys(keyColumns.size());
    for (const int index : indices) {
        const Change &change = changes[index].change;
        indexTexts.append(QByteArray::number(index));
        for (qsizetype k = 0; k < keyColumns.size(); ++k) {
            const int column = keyColumns[k];
            keys[k].append(column < change.newTuple.size() ? change.newTuple[column].text
                                                           : QByteArray());
        }
    }
    postgres::Statement query;
    query.sql = sql;
    query.keepPlan = true;
    query.params.append("{" + indexTexts.join(',') + "}");
    for (const QList<QByteArray> &values : keys) {
        query.params.append(postgres::textArrayLiteral(values));
    }
    return VisibilityLookup{ query, KeyMap() };
}

// The query that tells which of a relation's changed rows a role can SELECT now (nullopt: no
// primary key, so the router reports Error 400 without asking).
std::optional<VisibilityLookup> visibilityLookup(const QList<int> &indices,
                                                 const QList<router::MatchedChange> &changes)
{
    const RelationInfo &info = *changes[indices.first()].change.relation;
    QList<int> keyColumns;
    for (qsizetype i = 0; i < info.columns.size(); ++i) {
        if (info.columns[i].isPrimaryKey) {
            keyColumns.append(static_cast<int>(i));
        }
    }
    if (keyColumns.isEmpty()) {
        return std::nullopt;
    }
    if (keyColumns.size() == 1) {
        return singleKeyLookup(info, keyColumns[0], indices, changes);
    }
    return compositeKeyLookup(info, keyColumns, indices, changes);
}

// The RLS segment of one claims set for the changes in `changesByRelation`; keyMaps gets one
// entry per visibility query.
QList<postgres::Statement> visibilitySegment(const router::VisibilityCheck &check,
                                             const QHash<quint32, QList<int>> &changesByRelation,
                                             const QList<router::MatchedChange> &changes,
                                             LookupCache &cache, QList<KeyMap> &keyMaps)
{
    // As the subscriber: its role and claims for this transaction only (set_config(..., true)),
    // then per table one query that returns which of the changed rows it can SELECT now.
    QList<postgres::Statement> segment;
    postgres::Statement identity;
    // Key lookups, never a scan of the table: with many keys the planner would hash-join a scan
    // and evaluate the table's policy on every row of it (the policy's own cost, e.g. parsing the
    // claims, then dominates); through the primary key index it runs for the changed rows only.
    identity.sql = QByteArrayLiteral("SELECT set_config('role', $1, true), "
                                     "set_config('request.jwt.claims', $2, true), "
                                     "set_config('request.jwt.claim.sub', $3, true), "
                                     "set_config('request.jwt.claim.role', $1, true), "
                                     "set_config('enable_hashjoin', 'off', true), "
                                     "set_config('enable_mergejoin', 'off', true), "
                                     "set_config('enable_seqscan', 'off', true), "
                                     "set_config('plan_cache_mode', 'force_generic_plan', true)");
    identity.params = { check.role, check.claimsJson, check.sub };
    // Every claims set asks the same questions: parse and plan them once per connection. The
    // key arrays are typed parameters, so the generic plan still looks keys up in the primary
    // key index (the policy runs for the changed rows only).
    identity.keepPlan = true;
    segment.append(identity);
    for (auto relation = changesByRelation.cbegin(); relation != changesByRelation.cend();
         ++relation) {
        // Claims sets are mostly candidates for the same changes (every subscriber without a
        // filter is one for all of them): build each distinct lookup once per batch.
        const auto key = qMakePair(relation.key(), relation.value());
        auto cached = cache.constFind(key);
        if (cached == cache.constEnd()) {
            cached = cache.insert(key, visibilityLookup(relation.value(), changes));
        }
        if (cached.value().has_value()) {
            segment.append(cached.value()->statement);
            keyMaps.append(cached.value()->keys);
        }
    }
    return segment;
}

// One claims set's answer: the changes its segment found visible, or (this claims set only;
// its subscribers see it) the error that stopped it.
void recordVisibility(router::Visibility &answer, const postgres::SegmentResult &result,
                      const QList<KeyMap> &keyMaps)
{
    if (std::holds_alternative<std::monostate>(answer)) {
        answer = QSet<int>(); // answered: nothing visible yet
    }
    if (const postgres::PgError *error = result.firstError()) {
        answer = error->text();
        return;
    }
    QSet<int> *visible = std::get_if<QSet<int>>(&answer);
    if (visible == nullptr) {
        return; // an earlier segment of this claims set failed
    }
    for (qsizetype s = 1; s < result.results.size(); ++s) {
        const postgres::QueryResult &rows = result.results[s].value();
        const KeyMap &keys = keyMaps.value(s - 1);
        for (int row = 0; row < rows.rowCount(); ++row) {
            if (keys.isEmpty()) {
                visible->insert(rows.value(row, 0).toInt());
            } else {
                for (const int index : keys.value(rows.value(row, 0))) {
                    visible->insert(index);
                }
            }
        }
    }
}

} // namespace

void ChangePipeline::evaluate(ChangeBatch batch)
{
    auto shared = std::make_shared<ChangeBatch>(std::move(batch));
    auto matched =
            std::make_shared<router::Matched>(router::match(shared->changes, m_parts.registry));
    auto visibility = std::make_shared<router::Visibilities>(matched->checks.size());
    auto outstanding = std::make_shared<int>(1); // released at the end of this function
    const std::function<void()> finishOne = [this, guard = QPointer<ChangePipeline>(this), shared,
                                             matched, visibility, outstanding] {
        if (!guard || --*outstanding > 0) {
            return;
        }
        publish(*shared, *matched, *visibility);
    };
    const auto started = [outstanding] { ++*outstanding; };
    if (m_parts.pool() != nullptr) {
        readPrivileges(*matched, started, finishOne);
        askVisibility(matched, visibility, started, finishOne);
    }
    finishOne();
}

void ChangePipeline::readPrivileges(const router::Matched &matched,
                                    const std::function<void()> &started,
                                    const std::function<void()> &finished)
{
    // Column privileges of each role on each table, read once and kept a while.
    if (m_privilegesStale || nowMs() - m_privilegesReadAtMs > PrivilegesTtlMs) {
        m_privilegesStale = false;
        m_privileges.clear();
        m_privilegesReadAtMs = nowMs();
    }
    for (const auto &needed : std::as_const(matched.privilegesNeeded)) {
        if (m_privileges.contains(needed)) {
            continue;
        }
        m_privileges.insert(needed, {}); // until answered: nothing selectable
        started();
        postgres::Statement statement;
        statement.sql = QByteArrayLiteral(
                "SELECT a.attname FROM pg_attribute a WHERE a.attrelid = $2::oid "
                "AND a.attnum > 0 AND NOT a.attisdropped "
                "AND has_column_privilege($1::text, a.attrelid, a.attname::text, 'SELECT')");
        statement.params = { needed.first, QByteArray::number(needed.second) };
        m_parts.pool()->run(statement,
                            [this, guard = QPointer<ChangePipeline>(this), needed, finished](
                                    rt::Result<postgres::QueryResult, postgres::PgError> result) {
                                if (!guard) {
                                    return;
                                }
                                QSet<QByteArray> columns;
                                if (result) {
                                    for (int row = 0; row < result->rowCount(); ++row) {
                                        columns.insert(result->value(row, 0));
                                    }
                                } else {
                                    // An unknown role: it may select nothing (401 for its subscribers).
                                    qCInfo(lcCdc) << "column privileges of role" << needed.first
                                                  << "unavailable:" << result.error().text();
                                }
                                m_privileges.insert(needed, columns);
                                finished();
                            });
    }
}

void ChangePipeline::askVisibility(const std::shared_ptr<router::Matched> &matched,
                                   const std::shared_ptr<router::Visibilities> &visibility,
                                   const std::function<void()> &started,
                                   const std::function<void()> &finished)
{
    // Row level security: one segment per distinct claims set, covering every change of the
    // batch those subscribers are candidates for. (The naive strategy, for the benchmark only,
    // asks once per subscriber per change, as upstream does.)
    LookupCache lookups; // for this batch
    const auto ask = [&](const router::VisibilityCheck &check,
                         const QHash<quint32, QList<int>> &changesByRelation) {
        auto keyMaps = std::make_shared<QList<KeyMap>>();
        QList<postgres::Statement> segment =
                visibilitySegment(check, changesByRelation, matched->changes, lookups, *keyMaps);
        started();
        const auto claimsSet = static_cast<size_t>(check.claimsSet);
        m_parts.pool()->run(segment,
                            [guard = QPointer<ChangePipeline>(this), claimsSet, visibility, keyMaps,
                             finished](const postgres::SegmentResult &result) {
                                if (guard) {
                                    recordVisibility((*visibility)[claimsSet], result, *keyMaps);
                                    finished();
                                }
                            });
    };
    if (m_parts.rlsStrategy == RlsStrategy::Batched) {
        for (const router::VisibilityCheck &check : std::as_const(matched->checks)) {
            if (check.claimsSet >= 0) {
                ask(check, check.changesByRelation);
            }
        }
        return;
    }
    for (int index = 0; index < matched->changes.size(); ++index) {
        const Change &change = matched->changes[index].change;
        if (!change.relation->rlsEnabled || change.type == ChangeType::Delete) {
            continue;
        }
        for (const router::Candidate &candidate : matched->changes[index].candidates) {
            ask(matched->checks[static_cast<size_t>(candidate.claimsSet)],
                { { change.relation->oid, { index } } });
        }
    }
}

void ChangePipeline::publish(ChangeBatch &batch, const router::Matched &matched,
                             const router::Visibilities &visibility)
{
    const std::vector<router::Delivery> deliveries =
            router::render(matched, visibility, m_privileges, m_parts.counting);
    // In WAL order: each database broadcast after the changes that came before it, and one
    // change's messages to one topic as one event of that topic (one position).
    qsizetype nextBroadcast = 0;
    const auto broadcastsBefore = [&](qsizetype changeIndex) {
        for (; nextBroadcast < batch.broadcasts.size()
             && batch.broadcasts[nextBroadcast].changesBefore <= changeIndex;
             ++nextBroadcast) {
            publishBroadcast(batch.broadcasts[nextBroadcast]);
        }
    };
    std::vector<pubsub::OutboundMessagePtr> event;
    for (size_t index = 0; index < deliveries.size(); ++index) {
        const router::Delivery &delivery = deliveries[index];
        broadcastsBefore(delivery.change);
        event.push_back(delivery.message);
        const bool last = index + 1 == deliveries.size();
        if (last || !sameEvent(delivery, deliveries[index + 1])) {
            m_parts.pubsub.publishGroup(std::exchange(event, {}));
        }
    }
    broadcastsBefore(std::numeric_limits<qsizetype>::max());
    finishBatch(batch.endLsn);
}

void ChangePipeline::publishBroadcast(const DatabaseBroadcast &broadcast)
{
    const QByteArray metadata = R"({"id":")" + broadcast.id + "\"}";
    m_parts.pubsub.publish(pubsub::OutboundMessage::userBroadcast(
            pubsub::TopicKey(m_parts.tenantId, broadcast.isPrivate, broadcast.topic),
            broadcast.event, broadcast.payload, !broadcast.isBinary, metadata, 0,
            m_parts.counting));
}

void ChangePipeline::finishBatch(quint64 endLsn)
{
    // Everything up to endLsn is with fan-out now: PostgreSQL may forget it.
    if (endLsn != 0) {
        Q_EMIT published(endLsn);
    }
    m_queuedBytes -= std::exchange(m_inFlightBytes, 0);
    m_processing = false;
    Q_EMIT progressed();
    processNext();
}

} // namespace rt::cdc
