#include "server/cdc/transaction_assembler.h"

#include "server/cdc/logging.h"
#include "server/pgoutput/decoder.h"
#include "server/pgoutput/types.h"

#include <QLoggingCategory>

#include <type_traits>
#include <utility>

namespace rt::cdc {

namespace {

QList<TupleValue> tupleValues(const pgoutput::TupleData &tuple)
{
    QList<TupleValue> values;
    values.reserve(tuple.values.size());
    for (const pgoutput::Value &value : tuple.values) {
        switch (value.kind) {
        case pgoutput::Value::Kind::Null:
            values.append(TupleValue{ TupleValue::Kind::Null, {} });
            break;
        case pgoutput::Value::Kind::UnchangedToast:
            values.append(TupleValue{ TupleValue::Kind::UnchangedToast, {} });
            break;
        case pgoutput::Value::Kind::Text:
        case pgoutput::Value::Kind::Binary:
            values.append(TupleValue{ TupleValue::Kind::Text, value.bytes });
            break;
        }
    }
    return values;
}

// A realtime.messages row inserted by realtime.send(), a trigger or a plain insert: a broadcast
// when it has everything the spec requires (§4.6), else nothing.
std::optional<DatabaseBroadcast> broadcastFromRow(const RelationInfo &relation,
                                                  const QList<TupleValue> &row)
{
    QHash<QByteArray, const TupleValue *> byName;
    for (qsizetype i = 0; i < relation.columns.size() && i < row.size(); ++i) {
        byName.insert(relation.columns[i].name, &row[i]);
    }
    const auto text = [&byName](const char *name) -> std::optional<QByteArray> {
        const TupleValue *value = byName.value(QByteArray(name));
        if (value == nullptr || value->kind != TupleValue::Kind::Text) {
            return std::nullopt;
        }
        return value->text;
    };
    const auto id = text("id");
    const auto topic = text("topic");
    const auto event = text("event");
    const auto isPrivate = text("private");
    const auto insertedAt = text("inserted_at");
    const auto extension = text("extension");
    // A persisted broadcast: the server broadcast it before it stored it.
    const auto skipBroadcast = text("skip_broadcast");
    if (!id || !topic || !event || !isPrivate || !insertedAt
        || (extension && *extension != "broadcast") || (skipBroadcast && *skipBroadcast == "t")) {
        return std::nullopt;
    }
    DatabaseBroadcast broadcast{ *id, *topic, *event, *isPrivate == "t", {}, false };
    if (const auto payload = text("payload")) {
        broadcast.payload = *payload;
    } else if (const auto binary = text("binary_payload")) {
        // bytea in hex output form: \x0102...
        broadcast.payload = QByteArray::fromHex(binary->mid(binary->startsWith("\\x") ? 2 : 0));
        broadcast.isBinary = true;
    } else {
        return std::nullopt;
    }
    return broadcast;
}

// What a change's values weigh in memory (text plus a per-value and per-change overhead).
qsizetype decodedSize(const Change &change)
{
    constexpr qsizetype PerValue = 16;
    constexpr qsizetype PerChange = 96;
    qsizetype bytes = PerChange;
    for (const QList<TupleValue> *tuple : { &change.newTuple, &change.oldTuple }) {
        for (const TupleValue &value : *tuple) {
            bytes += value.text.size() + PerValue;
        }
    }
    return bytes;
}

// The old row of an update or delete: the full row (REPLICA IDENTITY FULL) or the key.
template <typename RowMessage>
void setOldTuple(Change &change, const RowMessage &message)
{
    if (message.old) {
        change.oldTuple = tupleValues(*message.old);
        change.oldIsFullRow = true;
    } else if (message.key) {
        change.oldTuple = tupleValues(*message.key);
    }
}

} // namespace

void ChangeBatch::append(ChangeBatch &&later)
{
    for (DatabaseBroadcast &broadcast : later.broadcasts) {
        broadcast.changesBefore += changes.size();
    }
    changes.append(std::move(later.changes));
    broadcasts.append(std::move(later.broadcasts));
    for (const quint32 xid : std::as_const(later.xids)) {
        if (xids.isEmpty() || xids.constLast() != xid) {
            xids.append(xid); // chunks of one transaction name it once
        }
    }
    if (later.endLsn != 0) {
        endLsn = later.endLsn;
    }
    decodedBytes += later.decodedBytes;
}

TransactionAssembler::TransactionAssembler(Listens listens) : m_listens(std::move(listens)) { }

void TransactionAssembler::add(const pgoutput::Message &message)
{
    std::visit(
            [this](const auto &m) {
                using T = std::decay_t<decltype(m)>;
                if constexpr (std::is_same_v<T, pgoutput::Begin>) {
                    m_open = ChangeBatch{};
                    m_openXid = m.xid;
                    m_openCommitTimestamp = pgoutput::commitTimestampText(m.commitTime);
                } else if constexpr (std::is_same_v<T, pgoutput::Commit>) {
                    onCommit(m);
                } else if constexpr (std::is_same_v<T, pgoutput::Type>) {
                    m_typeNames.insert(m.oid, m.name);
                } else if constexpr (std::is_same_v<T, pgoutput::Relation>) {
                    onRelation(m);
                } else if constexpr (
                        std::is_same_v<
                                T,
                                pgoutput::
                                        Insert> || std::is_same_v<T, pgoutput::Update> || std::is_same_v<T, pgoutput::Delete>) {
                    onRow(m);
                }
                // Origin, Truncate (never delivered, spec §6.4), LogicalMessage: nothing.
            },
            message);
}

void TransactionAssembler::onCommit(const pgoutput::Commit &commit)
{
    if (!m_open) {
        return;
    }
    m_open->endLsn = commit.endLsn;
    handOutOpenChunk();
    m_open.reset();
}

void TransactionAssembler::handOutOpenChunk()
{
    if (!m_open->changes.isEmpty() && m_open->xids.isEmpty()) {
        m_open->xids.append(m_openXid);
    }
    ChangeBatch chunk = std::exchange(*m_open, ChangeBatch{});
    if (m_committed) {
        m_committed->append(std::move(chunk));
    } else {
        m_committed = std::move(chunk);
    }
}

void TransactionAssembler::onRelation(const pgoutput::Relation &message)
{
    auto relation = std::make_shared<RelationInfo>();
    relation->oid = message.oid;
    relation->schema = message.nspname.isEmpty() ? QByteArray("pg_catalog") : message.nspname;
    relation->table = message.relname;
    relation->replicaIdentity = message.replicaIdentity;
    for (const pgoutput::Column &column : message.columns) {
        ColumnInfo info;
        info.name = column.name;
        info.typeOid = column.typeOid;
        info.typeName = pgoutput::builtinTypeName(column.typeOid);
        if (info.typeName.isEmpty()) {
            info.typeName = m_typeNames.value(column.typeOid, "unknown");
        }
        relation->columns.append(info);
    }
    m_relations.insert(message.oid, relation);
    // A new description may come with new grants: privileges are read again.
    m_relationsDescribed = true;
}

template <typename RowMessage>
void TransactionAssembler::onRow(const RowMessage &message)
{
    if (!m_open) {
        return;
    }
    const RelationPtr relation = m_relations.value(message.relOid);
    if (!relation) {
        qCWarning(lcCdc) << "change of an undescribed relation" << message.relOid;
        return;
    }
    if (relation->schema == "realtime" && relation->table == "messages") {
        if constexpr (std::is_same_v<RowMessage, pgoutput::Insert>) {
            if (auto broadcast = broadcastFromRow(*relation, tupleValues(message.newTuple))) {
                m_open->decodedBytes += broadcast->payload.size() + broadcast->topic.size();
                broadcast->changesBefore = m_open->changes.size();
                m_open->broadcasts.append(std::move(*broadcast));
            }
        }
        return;
    }
    if (!m_listens(relation->schema, relation->table)) {
        return; // nobody listens: nothing to keep
    }
    Change change;
    change.relation = relation;
    change.commitTimestamp = m_openCommitTimestamp;
    if constexpr (std::is_same_v<RowMessage, pgoutput::Insert>) {
        change.type = ChangeType::Insert;
        change.newTuple = tupleValues(message.newTuple);
    } else if constexpr (std::is_same_v<RowMessage, pgoutput::Update>) {
        change.type = ChangeType::Update;
        change.newTuple = tupleValues(message.newTuple);
        setOldTuple(change, message);
    } else {
        change.type = ChangeType::Delete;
        setOldTuple(change, message);
    }
    m_open->decodedBytes += decodedSize(change);
    m_open->changes.append(std::move(change));
    if (m_open->changes.size() >= MaxChunkChanges || m_open->decodedBytes >= MaxChunkBytes) {
        handOutOpenChunk();
    }
}

std::optional<ChangeBatch> TransactionAssembler::takeCommitted()
{
    std::optional<ChangeBatch> committed = std::move(m_committed);
    m_committed.reset();
    return committed;
}

void TransactionAssembler::completeRelation(const RelationPtr &described,
                                            const RelationPtr &completed)
{
    if (m_relations.value(described->oid) == described) {
        m_relations.insert(described->oid, completed);
    }
}

void TransactionAssembler::abandonOpenTransaction()
{
    m_open.reset();
}

bool TransactionAssembler::takeRelationsDescribed()
{
    return std::exchange(m_relationsDescribed, false);
}

} // namespace rt::cdc
