#pragma once

#include "server/cdc/change.h"
#include "server/pgoutput/messages.h"

#include <QByteArray>
#include <QHash>
#include <QList>

#include <functional>
#include <optional>

namespace rt::cdc {

// Committed transactions, in commit order, ready for matching: their row changes (only of
// tables someone listens to), their database broadcasts (realtime.messages inserts) and the
// position the last complete one ends at (what may be confirmed once they were published; 0:
// the batch holds only a chunk of a transaction whose commit has not been read yet).
struct ChangeBatch
{
    QList<Change> changes;
    QList<DatabaseBroadcast> broadcasts;
    quint64 endLsn = 0;
    // The transactions' ids (32-bit, as pgoutput sends them) with changes to check.
    QList<quint32> xids;
    // What the decoded values weigh (for the stream's in-flight budget).
    qsizetype decodedBytes = 0;

    // Appends `later`'s transactions (which committed after this batch's). A later chunk
    // without an end keeps this batch's end.
    void append(ChangeBatch &&later);
};

// Turns the replication stream's decoded pgoutput messages into committed transactions: it
// keeps the relations and types the stream describes, collects each transaction's changes and
// broadcasts between Begin and Commit, drops changes nobody listens to, and hands out what
// committed. A transaction never sits whole in memory: pgoutput sends a transaction only once
// it committed, so every MaxChunkChanges changes (or MaxChunkBytes of values) of the open one
// are handed out as a chunk before its Commit arrives; only the last chunk carries the
// position to confirm. Pure: no I/O and no event loop; messages must arrive in stream order.
// Owned by TenantDatabase on the cdc thread.
class TransactionAssembler
{
public:
    static constexpr qsizetype MaxChunkChanges = 1000;
    static constexpr qsizetype MaxChunkBytes = qsizetype{ 1024 } * 1024;

    // Whether anyone listens to changes of schema.table (asked per change, at decode time).
    using Listens = std::function<bool(const QByteArray &schema, const QByteArray &table)>;

    explicit TransactionAssembler(Listens listens);

    void add(const pgoutput::Message &message);
    // The transactions committed since the last call, and the chunks of the open one that
    // filled up, as one batch (nullopt: none).
    std::optional<ChangeBatch> takeCommitted();
    // Whether a relation was (re)described since the last call: its grants may have changed.
    bool takeRelationsDescribed();

    RelationPtr relation(quint32 oid) const { return m_relations.value(oid); }
    // The catalog completed `described` (primary key, row level security): later changes use
    // `completed`, unless the stream has described the relation again meanwhile.
    void completeRelation(const RelationPtr &described, const RelationPtr &completed);
    // The stream broke or stopped: the open transaction is sent again from the confirmed
    // position, so what was collected of it goes.
    void abandonOpenTransaction();

private:
    void onRelation(const pgoutput::Relation &message);
    void onCommit(const pgoutput::Commit &commit);
    template <typename RowMessage>
    void onRow(const RowMessage &message);
    // Moves what the open transaction collected so far into the committed batch.
    void handOutOpenChunk();

    Listens m_listens;
    QHash<quint32, RelationPtr> m_relations; // by oid, as last described by the stream
    QHash<quint32, QByteArray> m_typeNames; // non-built-in types ('Y' messages)
    std::optional<ChangeBatch> m_open; // the transaction between Begin and Commit
    quint32 m_openXid = 0;
    QByteArray m_openCommitTimestamp;
    std::optional<ChangeBatch> m_committed;
    bool m_relationsDescribed = false;
};

} // namespace rt::cdc
