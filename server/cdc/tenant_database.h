#pragma once

#include "server/cdc/change.h"
#include "server/cdc/change_router.h"
#include "server/cdc/subscription_registry.h"
#include "server/cdc/transaction_assembler.h"
#include "server/postgres/connection_settings.h"
#include "server/pubsub/outbound_message.h"

#include <QByteArray>
#include <QHash>
#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QTimer>

#include <deque>
#include <functional>
#include <memory>
#include <optional>

namespace rt::postgres {
class Connection;
class Pool;
struct PgError;
struct Statement;
} // namespace rt::postgres
namespace rt::replication {
class ReplicationStream;
struct WalMessage;
} // namespace rt::replication
namespace rt::pubsub {
class PubSub;
}

namespace rt::cdc {

class ChangePipeline;
class SubscriptionStore;

// How row level security is asked: Batched (one query per distinct claims set per batch of
// changes) is the product; Naive (one query per subscriber per change, upstream's strategy)
// exists only so that the benchmark can compare the two (RLS_STRATEGY=naive).
enum class RlsStrategy { Batched, Naive };

// How a tenant database is reached and streamed (from the tenant's postgres_cdc_rls extension
// and the node's configuration).
struct TenantDatabaseOptions
{
    QByteArray tenantId;
    postgres::ConnectionSettings settings;
    QByteArray publication = QByteArrayLiteral("supabase_realtime");
    QByteArray slotName = QByteArrayLiteral("supabase_realtime_replication_slot");
    int poolSize = 3;
    int connectRetryMs = 2000; // after a failed connect, joins fail fast for this long
    RlsStrategy rlsStrategy = RlsStrategy::Batched;
    // CDC_MAX_INFLIGHT_BYTES: the stream stops reading while more than this is decoded and
    // not yet written to the subscribers' sockets; it reads again once that fell below half.
    // A sixteenth of it bounds what is published and not yet delivered to the sockets.
    qsizetype maxInflightBytes = qsizetype{ 64 } * 1024 * 1024;
};

// The outcome of "obtain the tenant database" (join step 9): empty = ready, else the join
// error reason (spec §3.4).
using ConnectOutcome = std::optional<QString>;

// One subscribe request: the postgres_changes bindings of one channel.
struct SubscribeRequest
{
    quint64 memberId = 0;
    pubsub::TopicKey topic;
    bool legacy = false;
    QJsonObject claims;
    struct Element
    {
        qint64 id = 0;
        QJsonObject params; // the client's element, verbatim
    };
    QList<Element> elements;
};

// The system message to push after a subscribe request: status "ok"/"error" and text.
struct SubscribeOutcome
{
    bool ok = false;
    QString message;
};

// A tenant's database as this node uses it (upstream's Tenants.Connect plus its replication and
// postgres_changes machinery): a small pool of query connections (migrations, subscription rows,
// RLS, authorization), and one logical replication stream that carries both the published
// tables' changes and the inserts into realtime.messages (broadcast from the database).
//
// Delivery guarantee: changes are published to fan-out in commit order, and the stream's
// position is confirmed to PostgreSQL only after the transaction that ends there was published
// and every message published so far is in its recipients' socket queues (the flow ledger),
// so a crash or a database restart re-sends, never loses (at-least-once).
//
// Lives on the cdc thread; every method is called there, every callback runs there.
class TenantDatabase : public QObject
{
    Q_OBJECT
public:
    TenantDatabase(TenantDatabaseOptions options, const pubsub::PubSub &pubsub,
                   pubsub::DeliveryCounting counting, QObject *parent = nullptr);
    ~TenantDatabase() override;

    const TenantDatabaseOptions &options() const { return m_options; }

    // Connects (once; again after a failure once connectRetryMs passed) and runs the tenant
    // migrations; `done` gets the outcome when known.
    void connect(std::function<void(ConnectOutcome)> done);
    bool isReady() const { return m_state == State::Ready; }
    // Connecting or migrating: joins are waiting for it.
    bool isConnecting() const
    {
        return m_state == State::Connecting || m_state == State::Migrating;
    }
    bool isStreaming() const { return m_streaming; }

    // Validates and stores one channel's bindings; `done` runs once the change stream that will
    // deliver them is running (or with the error to report).
    void subscribe(SubscribeRequest request, std::function<void(SubscribeOutcome)> done);
    void unsubscribe(quint64 memberId);
    // Runs `done` once the replication stream is streaming (broadcast.replication_ready).
    void whenStreaming(std::function<void()> done);

    // Whether this node may run the tenant's replication stream. In a cluster only the owner of
    // the tenant's stream claim may (the slot admits one reader, and two readers would deliver
    // everything twice); elsewhere the object serves queries only. Allowing starts the stream
    // `graceMs` later if the database is ready (other nodes re-register their subscribers with
    // a new owner meanwhile, so the changes left in the slot are matched for them too).
    // Forbidding stops a running stream: what it decoded but did not publish is not confirmed,
    // so the next owner receives it again.
    void setStreamAllowed(bool allowed, int graceMs = 0);
    bool isStreamAllowed() const { return m_streamAllowed; }

    // The query pool, for the authorization checks of private channels (nullptr until ready).
    postgres::Pool *pool() const { return m_pool; }

    qsizetype subscriberCount() const { return m_registry.subscriberCount(); }

Q_SIGNALS:
    // The connection failed or was lost; the owner may drop this object.
    void connectionLost(const QString &reason);
    // Connected and migrated (first time or after a reconnect).
    void connectionReady();

private:
    enum class State { Idle, Connecting, Migrating, Ready, Failed };

    void fail(const QString &reason, const QByteArray &sqlState);
    void finishConnect(const ConnectOutcome &outcome);
    // connect()'s steps: the migrations on a connection of their own, then the pool.
    void openMigrationConnection();
    void runMigrations(postgres::Connection *migrationConnection);
    void openPool();
    void onPoolReady();
    void startStream();
    void ensureStream();
    void onWalMessages(const QList<replication::WalMessage> &batch);
    // Pauses the stream while too much is in flight (decoded in the pipeline, published and
    // undelivered, queued in sockets), resumes it below half the budget.
    void regulateStream();
    // Whether the pipeline may hand fan-out its next batch.
    bool fanOutReady() const;
    // Confirms the last published position once every published message is in its
    // recipients' sockets (retried every few milliseconds until then).
    void confirmHandedOver();
    void subscribeNow(SubscribeRequest request, std::function<void(SubscribeOutcome)> done);
    void maintainPartitions();

    TenantDatabaseOptions m_options;
    // What this stream handed to fan-out and sockets hold (shared with the workers).
    FlowLedgerPtr m_ledger = std::make_shared<FlowLedger>();
    State m_state = State::Idle;
    qint64 m_failedAtMs = 0;
    int m_reconnectDelayMs = 0; // grows while reconnects fail; 0 once connected
    QString m_failure; // join error reason while Failed
    std::vector<std::function<void(ConnectOutcome)>> m_connectWaiters;
    postgres::Pool *m_pool = nullptr; // child
    replication::ReplicationStream *m_stream = nullptr; // child
    bool m_streaming = false;
    bool m_streamAllowed = true;
    // Allowed by a cluster claim (setStreamAllowed), not by default: the stream may take the slot
    // from a former owner's walsender (StreamOptions::takeOverActiveSlot).
    bool m_streamClaimed = false;
    qint64 m_streamAllowedAtMs = 0; // wall clock before which the stream must not start
    std::vector<std::function<void()>> m_streamWaiters;

    // Decoding state of the stream: relations, types, the open transaction.
    TransactionAssembler m_assembler;

    SubscriptionRegistry m_registry;
    SubscriptionStore *m_store; // child: the rows of realtime.subscription
    ChangePipeline *m_pipeline; // child: committed batches to fan-out
    QTimer m_partitionTimer; // realtime.messages partition upkeep
    QTimer m_regulateTimer; // while paused: sockets drain on other threads, so look again
    QTimer m_confirmTimer; // single shot: confirmHandedOver() again
    quint64 m_publishedLsn = 0; // published, not yet confirmed (0: nothing pending)
};

} // namespace rt::cdc
