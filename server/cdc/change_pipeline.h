#pragma once

#include "server/cdc/change_router.h"
#include "server/cdc/subscription_registry.h"
#include "server/cdc/tenant_database.h"
#include "server/cdc/transaction_assembler.h"
#include "server/pubsub/outbound_message.h"

#include <QByteArray>
#include <QObject>
#include <QTimer>

#include <deque>
#include <functional>
#include <memory>

namespace rt::postgres {
class Pool;
class QueryResult;
} // namespace rt::postgres
namespace rt::pubsub {
class PubSub;
}

namespace rt::cdc {

// What a committed batch goes through between the WAL and fan-out, one batch at a time and in
// commit order (batches that queued meanwhile are merged, so RLS is asked once per claims set
// however many transactions they hold): the relations' catalog (primary key, RLS), a wait until
// the transactions are visible to new snapshots, column privileges and row level security per
// distinct claims set in the tenant's database, then rendering and publishing. published(lsn)
// says when everything up to a position is with fan-out: only then may it be confirmed.
// Lives on the cdc thread, a child of its TenantDatabase; the pool may come and go.
class ChangePipeline : public QObject
{
    Q_OBJECT
public:
    struct Parts
    {
        QByteArray tenantId;
        RlsStrategy rlsStrategy = RlsStrategy::Batched;
        const SubscriptionRegistry &registry;
        TransactionAssembler &assembler; // keeps the relations the catalog completes
        const pubsub::PubSub &pubsub;
        pubsub::DeliveryCounting counting;
        std::function<postgres::Pool *()> pool; // null while disconnected
        // Whether fan-out may take the next batch (no subscriber socket of the tenant above its
        // high-water mark, little published and undelivered); null: always. Asked again every
        // few milliseconds while it says no.
        std::function<bool()> fanOutReady;
    };

    ChangePipeline(Parts parts, QObject *parent = nullptr);

    void push(ChangeBatch batch);
    // The stream stopped: the queued batches are dropped unconfirmed (the next reader of the
    // slot receives them again); one in flight still finishes.
    void clear();
    // A relation was described again: column privileges are read again by the next batch.
    void invalidatePrivileges();
    // The decoded bytes waiting here or in evaluation (the stream's in-flight budget).
    qsizetype queuedBytes() const { return m_queuedBytes; }

Q_SIGNALS:
    void published(quint64 endLsn);
    // A batch left the pipeline (published, or dropped by clear()): queuedBytes() went down.
    void progressed();

private:
    void processNext();
    // Relations not yet seen in this session get their primary key and RLS flag from the catalog.
    void completeCatalog(ChangeBatch batch);
    void applyCatalog(QList<Change> &changes, const postgres::QueryResult &catalogRows);
    // RLS checks must see the batch's rows: waits until its transactions are visible to new
    // snapshots (the WAL sender can decode a commit a moment before that), then evaluates.
    void awaitVisibility(ChangeBatch batch, int attempt);
    void evaluate(ChangeBatch batch);
    void readPrivileges(const router::Matched &matched, const std::function<void()> &started,
                        const std::function<void()> &finished);
    void askVisibility(const std::shared_ptr<router::Matched> &matched,
                       const std::shared_ptr<router::Visibilities> &visibility,
                       const std::function<void()> &started, const std::function<void()> &finished);
    void publish(ChangeBatch &batch, const router::Matched &matched,
                 const router::Visibilities &visibility);
    void publishBroadcast(const DatabaseBroadcast &broadcast);
    void finishBatch(quint64 endLsn);

    Parts m_parts;
    std::deque<ChangeBatch> m_queue; // waiting for their turn
    bool m_processing = false;
    qsizetype m_queuedBytes = 0; // of m_queue and the batch in evaluation
    qsizetype m_inFlightBytes = 0; // of the batch in evaluation
    router::Privileges m_privileges; // (role, relation) -> selectable columns
    qint64 m_privilegesReadAtMs = 0; // when m_privileges was last emptied
    // A new relation description came: privileges are read again by the next batch (never
    // cleared under a batch in flight, which reads them when it publishes).
    bool m_privilegesStale = false;
    QTimer m_fanOutRetry; // single shot: asks fanOutReady again
};

} // namespace rt::cdc
