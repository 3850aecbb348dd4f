#include "server/cdc/tenant_database.h"

#include "server/cdc/logging.h"
#include "server/cdc/subscription_store.h"
#include "server/cdc/transaction_assembler.h"
#include "server/pgoutput/decoder.h"
#include "server/pgoutput/types.h"
#include "server/postgres/connection.h"
#include "server/postgres/migrations.h"
#include "server/postgres/pool.h"
#include "server/postgres/sql_text.h"
#include "server/pubsub/pubsub.h"
#include "server/replication/replication_stream.h"
#include "server/subscriptions/params.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QTimer>

namespace rt::cdc {

namespace {

const QByteArray MessagesPublication = QByteArrayLiteral("supabase_realtime_messages_publication");
const QString UnableToConnect = QStringLiteral(
        "UnableToConnectToProject: Realtime was unable to connect to the project database");
const QString LackOfConnections = QStringLiteral(
        "DatabaseLackOfConnections: Database can't accept more connections, Realtime won't "
        "connect");
// Without subscribers, the change stream starts this long after connecting (database broadcasts
// need it; postgres_changes subscribers start it at once).
constexpr int StreamGraceMs = 5000;
// How long a role's column privileges are trusted before they are read again.
constexpr qint64 PrivilegesTtlMs = 30'000;

qint64 nowMs()
{
    return QDateTime::currentMSecsSinceEpoch();
}

} // namespace

TenantDatabase::TenantDatabase(TenantDatabaseOptions options, const pubsub::PubSub &pubsub,
                               pubsub::DeliveryCounting counting, QObject *parent)
    : QObject(parent),
      m_options(std::move(options)),
      m_pubsub(pubsub),
      m_counting(counting),
      m_assembler([this](const QByteArray &schema, const QByteArray &table) {
          return m_registry.snapshot()->bindingsOn(schema, table) != nullptr;
      }),
      m_store(new SubscriptionStore(
              m_options.publication, [this] { return m_pool; }, this))
{ }

TenantDatabase::~TenantDatabase()
{
    // Children (pool, stream) close their connections; the persistent slot stays, so a later
    // start resumes where this one confirmed. Joins still waiting get their answer.
    finishConnect(UnableToConnect);
}

void TenantDatabase::connect(std::function<void(ConnectOutcome)> done)
{
    switch (m_state) {
    case State::Ready:
        done(std::nullopt);
        return;
    case State::Connecting:
    case State::Migrating:
        m_connectWaiters.push_back(std::move(done));
        return;
    case State::Failed:
        if (nowMs() - m_failedAtMs < m_options.connectRetryMs) {
            done(m_failure);
            return;
        }
        break;
    case State::Idle:
        break;
    }
    m_connectWaiters.push_back(std::move(done));
    m_state = State::Connecting;
    qCInfo(lcCdc) << "connecting to the database of tenant" << m_options.tenantId << "at"
                  << m_options.settings.describe();

    // Migrations first, on a connection of their own, then the pool.
    auto *migrationConnection = new postgres::Connection(this);
    QObject::connect(migrationConnection, &postgres::Connection::failed, this,
                     [this, migrationConnection](const postgres::PgError &error) {
                         migrationConnection->deleteLater();
                         fail(error.text(), error.sqlState);
                     });
    QObject::connect(
            migrationConnection, &postgres::Connection::ready, this, [this, migrationConnection] {
                m_state = State::Migrating;
                auto *runner = new postgres::MigrationRunner(this);
                QObject::connect(runner, &postgres::MigrationRunner::done, this,
                                 [this, runner, migrationConnection](int applied) {
                                     runner->deleteLater();
                                     migrationConnection->deleteLater();
                                     qCInfo(lcCdc) << "tenant" << m_options.tenantId
                                                   << "migrations applied:" << applied;
                                     m_pool = new postgres::Pool(this);
                                     QObject::connect(m_pool, &postgres::Pool::ready, this, [this] {
                                         if (m_state == State::Migrating) {
                                             m_state = State::Ready;
                                             m_reconnectDelayMs = 0;
                                             Q_EMIT connectionReady();
                                             maintainPartitions();
                                             finishConnect(std::nullopt);
                                             // The stream waits for its first subscriber (or a
                                             // short grace period): changes a restart left in
                                             // the slot are then matched, not confirmed unseen.
                                             if (!m_registry.isEmpty()) {
                                                 ensureStream();
                                             } else {
                                                 QTimer::singleShot(StreamGraceMs, this,
                                                                    [this] { ensureStream(); });
                                             }
                                         }
                                     });
                                     QObject::connect(m_pool, &postgres::Pool::failed, this,
                                                      [this](const postgres::PgError &error) {
                                                          fail(error.text(), error.sqlState);
                                                      });
                                     m_pool->open(m_options.settings, m_options.poolSize);
                                 });
                QObject::connect(
                        runner, &postgres::MigrationRunner::failed, this,
                        [this, runner, migrationConnection](const postgres::PgError &error) {
                            runner->deleteLater();
                            migrationConnection->deleteLater();
                            qCWarning(lcCdc) << "tenant" << m_options.tenantId
                                             << "migrations failed:" << error.text();
                            fail(error.text(), error.sqlState);
                        });
                runner->start(migrationConnection, postgres::tenantMigrations());
            });
    migrationConnection->open(m_options.settings);
}

void TenantDatabase::maintainPartitions()
{
    // realtime.messages has one partition per UTC day: keep yesterday .. today + 3 and drop
    // those older than 72 hours (spec §7.5), at connect and every few hours after.
    if (!m_partitionTimer.isActive()) {
        m_partitionTimer.setInterval(6 * 3600 * 1000);
        QObject::connect(&m_partitionTimer, &QTimer::timeout, this,
                         &TenantDatabase::maintainPartitions);
        m_partitionTimer.start();
    }
    if (m_pool == nullptr) {
        return;
    }
    postgres::Statement create;
    create.sql = QByteArrayLiteral(
            "SELECT realtime.create_messages_partitions((now() AT TIME ZONE 'utc')::date - 1, "
            "(now() AT TIME ZONE 'utc')::date + 3)");
    postgres::Statement drop;
    drop.sql = QByteArrayLiteral("SELECT realtime.drop_messages_partitions('72 hours')");
    for (const postgres::Statement &statement : { create, drop }) {
        m_pool->run(statement,
                    [tenant = m_options.tenantId](
                            rt::Result<postgres::QueryResult, postgres::PgError> result) {
                        if (!result) {
                            qCWarning(lcCdc) << "tenant" << tenant
                                             << "realtime.messages partition upkeep failed:"
                                             << result.error().text();
                        }
                    });
    }
}

void TenantDatabase::fail(const QString &reason, const QByteArray &sqlState)
{
    if (m_state == State::Failed) {
        return;
    }
    qCWarning(lcCdc) << "database of tenant" << m_options.tenantId << "unavailable:" << reason;
    m_state = State::Failed;
    m_failedAtMs = nowMs();
    // 53300 too_many_connections
    m_failure = sqlState == "53300" ? LackOfConnections : UnableToConnect;
    if (m_stream != nullptr) {
        m_stream->stop();
        m_stream->deleteLater();
        m_stream = nullptr;
    }
    if (m_pool != nullptr) {
        m_pool->close();
        m_pool->deleteLater();
        m_pool = nullptr;
    }
    m_streaming = false;
    finishConnect(m_failure);
    Q_EMIT connectionLost(reason);
    if (!m_registry.isEmpty()) {
        // Subscribers are waiting for changes (the database restarted, the network dropped):
        // reconnect by ourselves, with a growing pause. The persistent slot re-sends everything
        // after the last confirmed position, so nothing committed meanwhile is lost.
        m_reconnectDelayMs = qBound(m_options.connectRetryMs, m_reconnectDelayMs * 2, 30'000);
        qCInfo(lcCdc) << "reconnecting to the database of tenant" << m_options.tenantId << "in"
                      << m_reconnectDelayMs << "ms";
        QTimer::singleShot(m_reconnectDelayMs, this, [this] {
            if (m_state == State::Failed && !m_registry.isEmpty()) {
                m_failedAtMs = 0; // retry now, whatever connectRetryMs says
                connect([](const ConnectOutcome &) {});
            }
        });
    }
}

void TenantDatabase::finishConnect(const ConnectOutcome &outcome)
{
    auto waiters = std::move(m_connectWaiters);
    m_connectWaiters.clear();
    for (auto &waiter : waiters) {
        waiter(outcome);
    }
}

void TenantDatabase::startStream()
{
    replication::StreamOptions options;
    options.settings = m_options.settings;
    options.settings.replication = true;
    options.slotName = m_options.slotName;
    options.publications = { m_options.publication, MessagesPublication };
    m_stream = new replication::ReplicationStream(this);
    QObject::connect(m_stream, &replication::ReplicationStream::streaming, this, [this] {
        qCInfo(lcCdc) << "tenant" << m_options.tenantId << "change stream running";
        m_streaming = true;
        auto waiters = std::move(m_streamWaiters);
        m_streamWaiters.clear();
        for (auto &waiter : waiters) {
            waiter();
        }
    });
    QObject::connect(m_stream, &replication::ReplicationStream::messages, this,
                     &TenantDatabase::onWalMessages);
    QObject::connect(m_stream, &replication::ReplicationStream::failed, this,
                     [this](const QString &reason, bool willRetry) {
                         qCWarning(lcCdc) << "tenant" << m_options.tenantId
                                          << "change stream failed:" << reason
                                          << (willRetry ? "(retrying)" : "");
                         m_streaming = false;
                         // A half-read transaction is sent again from the confirmed position.
                         m_assembler.abandonOpenTransaction();
                         if (!willRetry) {
                             fail(reason, QByteArray());
                         }
                     });
    m_stream->start(options);
}

void TenantDatabase::ensureStream()
{
    if (m_stream != nullptr || m_state != State::Ready || !m_streamAllowed) {
        return;
    }
    const qint64 waitMs = m_streamAllowedAtMs - nowMs();
    if (waitMs > 0) {
        QTimer::singleShot(waitMs, this, [this] { ensureStream(); });
        return;
    }
    startStream();
}

void TenantDatabase::setStreamAllowed(bool allowed, int graceMs)
{
    if (allowed == m_streamAllowed) {
        return;
    }
    m_streamAllowed = allowed;
    if (allowed) {
        m_streamAllowedAtMs = nowMs() + qMax(0, graceMs);
        if (!m_streamWaiters.empty() || !m_registry.isEmpty()) {
            ensureStream();
        } else {
            // As after a connect: the stream also carries database broadcasts.
            QTimer::singleShot(qMax(0, graceMs), this, [this] { ensureStream(); });
        }
        return;
    }
    if (m_stream != nullptr) {
        qCInfo(lcCdc) << "tenant" << m_options.tenantId << "change stream stopped here";
        m_stream->stop();
        m_stream->deleteLater();
        m_stream = nullptr;
    }
    m_streaming = false;
    m_assembler.abandonOpenTransaction();
    // Decoded but unpublished: never confirmed, so the next reader of the slot gets them.
    m_queue.clear();
}

void TenantDatabase::whenStreaming(std::function<void()> done)
{
    if (m_streaming) {
        done();
        return;
    }
    m_streamWaiters.push_back(std::move(done));
    ensureStream();
}

void TenantDatabase::onWalMessages(const QList<replication::WalMessage> &batch)
{
    for (const replication::WalMessage &wal : batch) {
        rt::Result<pgoutput::Message, pgoutput::DecodeError> decoded =
                pgoutput::decode(wal.payload);
        if (!decoded) {
            // Never silently: the message is logged with its position. It cannot be decoded
            // again either, so skipping is the only way forward.
            qCCritical(lcCdc) << "tenant" << m_options.tenantId << "undecodable WAL message at"
                              << pgoutput::formatLsn(wal.walStart) << ":"
                              << decoded.error().message;
            continue;
        }
        m_assembler.add(decoded.value());
    }
    if (m_assembler.takeRelationsDescribed()) {
        m_privilegesStale = true; // a new description may come with new grants
    }
    if (std::optional<ChangeBatch> committed = m_assembler.takeCommitted()) {
        m_queue.push_back(std::move(*committed));
        processNext();
    }
}

void TenantDatabase::processNext()
{
    if (m_processing || m_queue.empty()) {
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
    if (batch.changes.isEmpty() && batch.broadcasts.isEmpty()) {
        finishBatch(batch.endLsn);
        return;
    }
    completeCatalog(std::move(batch));
}

void TenantDatabase::completeCatalog(ChangeBatch batch)
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
    if (unknown.isEmpty() || m_pool == nullptr) {
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
    m_pool->run(statement,
                [this, guard = QPointer<TenantDatabase>(this),
                 shared](rt::Result<postgres::QueryResult, postgres::PgError> result) {
                    if (!guard) {
                        return;
                    }
                    if (!result) {
                        qCWarning(lcCdc) << "reading the catalog failed:" << result.error().text();
                        awaitVisibility(std::move(*shared), 0);
                        return;
                    }
                    // oid -> (rls, column -> (sqlType, isPrimaryKey))
                    QHash<quint32, std::pair<bool, QHash<QByteArray, std::pair<QByteArray, bool>>>>
                            catalog;
                    for (int row = 0; row < result->rowCount(); ++row) {
                        auto &entry = catalog[result->value(row, 0).toUInt()];
                        entry.first = result->value(row, 1) == "t";
                        entry.second.insert(
                                result->value(row, 2),
                                { result->value(row, 3), result->value(row, 4) == "t" });
                    }
                    QHash<quint32, RelationPtr> completed;
                    for (Change &change : shared->changes) {
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
                            m_assembler.completeRelation(change.relation, relation);
                            done = completed.insert(oid, relation);
                        }
                        change.relation = done.value();
                    }
                    awaitVisibility(std::move(*shared), 0);
                });
}

void TenantDatabase::awaitVisibility(ChangeBatch batch, int attempt)
{
    bool needsRls = false;
    for (const Change &change : std::as_const(batch.changes)) {
        if (change.relation->rlsEnabled && change.type != ChangeType::Delete) {
            needsRls = true;
            break;
        }
    }
    if (!needsRls || batch.xids.isEmpty() || m_pool == nullptr) {
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
    m_pool->run(visible,
                [this, guard = QPointer<TenantDatabase>(this), shared,
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
                                << "tenant" << m_options.tenantId
                                << "could not confirm that decoded transactions are visible:"
                                << (result ? QStringLiteral("timeout") : result.error().text());
                    }
                    evaluate(std::move(*shared));
                });
}

namespace {

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

std::optional<VisibilityLookup> visibilityLookup(const QList<int> &indices,
                                                 const QList<router::MatchedChange> &changes)
{
    const RelationInfo &info = *changes[indices.first()].change.relation;
    QByteArray sql = "SELECT c.k FROM unnest($1::int4[]";
    QByteArray columns = "k";
    QByteArray condition;
    QList<int> keyColumns;
    for (qsizetype i = 0; i < info.columns.size(); ++i) {
        if (!info.columns[i].isPrimaryKey) {
            continue;
        }
        const int n = static_cast<int>(keyColumns.size());
        keyColumns.append(static_cast<int>(i));
        // Arrays of the key's own type (not cast per element, not cast from text[]): the
        // comparison stays on that type, so PostgreSQL can use the primary key index under
        // any policy, also in a generic plan.
        sql += ", $" + QByteArray::number(n + 2) + "::" + info.columns[i].sqlType + "[]";
        columns += ", p" + QByteArray::number(n);
        if (!condition.isEmpty()) {
            condition += " AND ";
        }
        condition += "t." + postgres::quoteIdentifier(info.columns[i].name) + " = c.p"
                + QByteArray::number(n);
    }
    if (keyColumns.isEmpty()) {
        return std::nullopt; // no primary key: the router reports Error 400 without asking
    }
    if (keyColumns.size() == 1) {
        // One key column: one index scan over the array of keys; rows come back as their
        // key's text (the same output function pgoutput used), mapped back to the changes.
        const ColumnInfo &key = info.columns[keyColumns[0]];
        const QByteArray name = postgres::quoteIdentifier(key.name);
        KeyMap map;
        QList<QByteArray> values;
        for (const int index : indices) {
            const Change &change = changes[index].change;
            const QByteArray text = keyColumns[0] < change.newTuple.size()
                    ? change.newTuple[keyColumns[0]].text
                    : QByteArray();
            QList<int> &withKey = map[text];
            if (withKey.isEmpty()) {
                values.append(text);
            }
            withKey.append(index);
        }
        postgres::Statement lookup;
        lookup.sql = "SELECT t." + name + "::text FROM " + info.qualifiedName() + " t WHERE t."
                + name + " = ANY($1::" + key.sqlType + "[])";
        lookup.params = { postgres::textArrayLiteral(values) };
        lookup.keepPlan = true;
        return VisibilityLookup{ lookup, map };
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
    return VisibilityLookup{ query, KeyMap() }; // rows carry the change index
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

} // namespace

void TenantDatabase::evaluate(ChangeBatch batch)
{
    auto shared = std::make_shared<ChangeBatch>(std::move(batch));
    auto matched = std::make_shared<router::Matched>(router::match(shared->changes, m_registry));
    auto visibility = std::make_shared<router::Visibilities>(matched->checks.size());
    auto outstanding = std::make_shared<int>(1); // released at the end of this function

    const auto finishOne = [this, guard = QPointer<TenantDatabase>(this), shared, matched,
                            visibility, outstanding] {
        if (!guard || --*outstanding > 0) {
            return;
        }
        publish(*shared, *matched, *visibility);
    };

    if (m_pool != nullptr) {
        // Column privileges of each role on each table, read once and kept a while.
        if (m_privilegesStale || nowMs() - m_privilegesReadAtMs > PrivilegesTtlMs) {
            m_privilegesStale = false;
            m_privileges.clear();
            m_privilegesReadAtMs = nowMs();
        }
        for (const auto &needed : std::as_const(matched->privilegesNeeded)) {
            if (m_privileges.contains(needed)) {
                continue;
            }
            m_privileges.insert(needed, {}); // until answered: nothing selectable
            ++*outstanding;
            postgres::Statement statement;
            statement.sql = QByteArrayLiteral(
                    "SELECT a.attname FROM pg_attribute a WHERE a.attrelid = $2::oid "
                    "AND a.attnum > 0 AND NOT a.attisdropped "
                    "AND has_column_privilege($1::text, a.attrelid, a.attname::text, 'SELECT')");
            statement.params = { needed.first, QByteArray::number(needed.second) };
            m_pool->run(statement,
                        [this, guard = QPointer<TenantDatabase>(this), needed,
                         finishOne](rt::Result<postgres::QueryResult, postgres::PgError> result) {
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
                            finishOne();
                        });
        }
        // Row level security: one segment per distinct claims set, covering every change of the
        // batch those subscribers are candidates for. (The naive strategy, for the benchmark
        // only, asks once per subscriber per change, as upstream does.)
        LookupCache lookups; // for this batch
        const auto ask = [&](const router::VisibilityCheck &check,
                             const QHash<quint32, QList<int>> &changesByRelation) {
            auto keyMaps = std::make_shared<QList<KeyMap>>();
            QList<postgres::Statement> segment = visibilitySegment(
                    check, changesByRelation, matched->changes, lookups, *keyMaps);
            ++*outstanding;
            const size_t claimsSet = static_cast<size_t>(check.claimsSet);
            m_pool->run(segment,
                        [guard = QPointer<TenantDatabase>(this), claimsSet, visibility, keyMaps,
                         finishOne](postgres::SegmentResult result) {
                            if (!guard) {
                                return;
                            }
                            router::Visibility &answer = (*visibility)[claimsSet];
                            if (std::holds_alternative<std::monostate>(answer)) {
                                answer = QSet<int>(); // answered: nothing visible yet
                            }
                            if (const postgres::PgError *error = result.firstError()) {
                                // This claims set only: its subscribers see the error.
                                answer = error->text();
                            } else if (QSet<int> *visible = std::get_if<QSet<int>>(&answer)) {
                                for (qsizetype s = 1; s < result.results.size(); ++s) {
                                    const postgres::QueryResult &rows = result.results[s].value();
                                    const KeyMap &keys = keyMaps->value(s - 1);
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
                            finishOne();
                        });
        };
        if (m_options.rlsStrategy == RlsStrategy::Batched) {
            for (const router::VisibilityCheck &check : std::as_const(matched->checks)) {
                if (check.claimsSet >= 0) {
                    ask(check, check.changesByRelation);
                }
            }
        } else {
            for (int index = 0; index < matched->changes.size(); ++index) {
                const Change &change = matched->changes[index].change;
                if (!change.relation->rlsEnabled || change.type == ChangeType::Delete) {
                    continue;
                }
                for (const router::Candidate &candidate : matched->changes[index].candidates) {
                    const router::VisibilityCheck &check =
                            matched->checks[static_cast<size_t>(candidate.claimsSet)];
                    ask(check, { { change.relation->oid, { index } } });
                }
            }
        }
    }
    finishOne();
}

void TenantDatabase::publish(ChangeBatch &batch, const router::Matched &matched,
                             const router::Visibilities &visibility)
{
    for (const router::Delivery &delivery :
         router::render(matched, visibility, m_privileges, m_counting)) {
        m_pubsub.publish(delivery.message);
    }
    for (const DatabaseBroadcast &broadcast : std::as_const(batch.broadcasts)) {
        const QByteArray metadata = "{\"id\":\"" + broadcast.id + "\"}";
        m_pubsub.publish(pubsub::OutboundMessage::userBroadcast(
                pubsub::TopicKey(m_options.tenantId, broadcast.isPrivate, broadcast.topic),
                broadcast.event, broadcast.payload, !broadcast.isBinary, metadata, 0, m_counting));
    }
    finishBatch(batch.endLsn);
}

void TenantDatabase::finishBatch(quint64 endLsn)
{
    // Everything up to endLsn is with fan-out now: PostgreSQL may forget it.
    if (m_stream != nullptr && endLsn != 0) {
        m_stream->confirm(endLsn);
    }
    m_processing = false;
    processNext();
}

void TenantDatabase::subscribe(SubscribeRequest request, std::function<void(SubscribeOutcome)> done)
{
    connect([this, guard = QPointer<TenantDatabase>(this), request = std::move(request),
             done = std::move(done)](const ConnectOutcome &outcome) mutable {
        if (!guard) {
            return;
        }
        if (outcome) {
            done(SubscribeOutcome{ false, *outcome });
            return;
        }
        subscribeNow(std::move(request), std::move(done));
    });
}

void TenantDatabase::subscribeNow(SubscribeRequest request,
                                  std::function<void(SubscribeOutcome)> done)
{
    const Subscriber *replaced = m_registry.find(request.memberId);
    m_store->store(
            std::move(request), replaced,
            [this, guard = QPointer<TenantDatabase>(this),
             done = std::move(done)](Result<Subscriber, QString> stored) mutable {
                if (!guard) {
                    return;
                }
                if (!stored) {
                    done(SubscribeOutcome{ false, stored.error() });
                    return;
                }
                // Registered now, answered once the stream runs: every change decoded
                // after the client reads "Subscribed to PostgreSQL" is matched (and after
                // a restart, those still in the slot too).
                m_registry.add(std::move(stored).value());
                whenStreaming([guard, done = std::move(done)]() mutable {
                    if (guard) {
                        done(SubscribeOutcome{ true, QStringLiteral("Subscribed to PostgreSQL") });
                    }
                });
            });
}

void TenantDatabase::unsubscribe(quint64 memberId)
{
    m_store->remove(m_registry.remove(memberId));
}

} // namespace rt::cdc
