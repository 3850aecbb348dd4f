#include "server/cdc/transaction_assembler.h"
#include "server/pgoutput/decoder.h"

#include <QFile>
#include <QTest>

using namespace rt::cdc;
namespace pgoutput = rt::pgoutput;

namespace {

// A pgoutput message recorded from PostgreSQL 15 (tests/fuzz/pgoutput/corpus), decoded.
pgoutput::Message recorded(const char *name)
{
    QFile file(QStringLiteral(RT_PGOUTPUT_CORPUS "/") + QLatin1String(name));
    if (!file.open(QIODevice::ReadOnly)) {
        qFatal("missing recording %s", name);
    }
    auto decoded = pgoutput::decode(file.readAll());
    if (!decoded) {
        qFatal("recording %s does not decode", name);
    }
    return std::move(decoded).value();
}

pgoutput::Begin begin(quint32 xid)
{
    pgoutput::Begin message;
    message.xid = xid;
    message.commitTime = 768'225'600'123'000; // 2024-05-05T12:00:00.123Z (from 2000-01-01)
    return message;
}

pgoutput::Commit commit(quint64 endLsn)
{
    pgoutput::Commit message;
    message.endLsn = endLsn;
    return message;
}

pgoutput::Value text(const char *bytes)
{
    return pgoutput::Value{ pgoutput::Value::Kind::Text, QByteArray(bytes) };
}

// realtime.messages as the stream describes it, and an insert of one row into it.
pgoutput::Relation messagesRelation()
{
    pgoutput::Relation relation;
    relation.oid = 9000;
    relation.nspname = "realtime";
    relation.relname = "messages";
    for (const char *name : { "id", "topic", "event", "private", "inserted_at", "payload" }) {
        relation.columns.append(pgoutput::Column{ false, name, 25, -1 });
    }
    return relation;
}

pgoutput::Insert messagesInsert(const char *topic)
{
    pgoutput::Insert insert;
    insert.relOid = 9000;
    insert.newTuple.values = {
        text("m1"),        text(topic), text("chat"), text("f"), text("2024-05-06 12:00:00"),
        text(R"({"a":1})")
    };
    return insert;
}

} // namespace

// The pure half of the change stream: recorded pgoutput messages in, committed transactions out
// (what TenantDatabase then matches, checks and publishes), with no database.
class TransactionAssemblerTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init() { m_asked.clear(); }
    void aCommittedInsertIsOneChange();
    void updatesAndDeletesKeepTheirOldRows();
    void transactionsCommittedMeanwhileFormOneBatch();
    void changesNobodyListensToAreDroppedButTheirCommitCounts();
    void rowsOutsideATransactionOrOfUnknownRelationsAreIgnored();
    void databaseBroadcastsComeFromRealtimeMessages();
    void databaseBroadcastsKnowTheirPlaceAmongTheChanges();
    void persistedBroadcastsAreNotBroadcastAgain();
    void anAbandonedTransactionLeavesNothing();
    void relationsTellWhenDescribedAndKeepTheirCatalog();
    void aHugeTransactionComesOutInChunks();
    void largeValuesMakeSmallerChunks();

private:
    QList<QByteArray> m_asked; // schema.table of every "anyone listening?"
    TransactionAssembler assembler(bool listening = true)
    {
        return TransactionAssembler(
                [this, listening](const QByteArray &schema, const QByteArray &table) {
                    m_asked.append(schema + '.' + table);
                    return listening;
                });
    }
};

void TransactionAssemblerTest::aCommittedInsertIsOneChange()
{
    TransactionAssembler stream = assembler();
    stream.add(begin(731));
    stream.add(recorded("relation"));
    stream.add(recorded("insert"));
    QVERIFY(!stream.takeCommitted()); // not before the commit
    stream.add(commit(0x16B3748));
    const std::optional<ChangeBatch> batch = stream.takeCommitted();
    QVERIFY(batch);
    QCOMPARE(batch->endLsn, quint64(0x16B3748));
    QCOMPARE(batch->xids, QList<quint32>{ 731 });
    QCOMPARE(batch->changes.size(), 1);
    const Change &change = batch->changes.at(0);
    QCOMPARE(change.type, ChangeType::Insert);
    QCOMPARE(change.relation->schema, QByteArray("public"));
    QCOMPARE(change.relation->table, QByteArray("todos"));
    QCOMPARE(change.relation->columns.size(), 3);
    QCOMPARE(change.relation->columns.at(0).name, QByteArray("id"));
    QCOMPARE(change.relation->columns.at(0).typeName, QByteArray("int8"));
    QCOMPARE(change.newTuple.at(0).text, QByteArray("1"));
    QCOMPARE(change.commitTimestamp, QByteArray("2024-05-05T12:00:00.123Z"));
    QVERIFY(change.oldTuple.isEmpty());
    QCOMPARE(m_asked, QList<QByteArray>{ "public.todos" });
    QVERIFY(!stream.takeCommitted()); // handed out once
}

void TransactionAssemblerTest::updatesAndDeletesKeepTheirOldRows()
{
    TransactionAssembler stream = assembler();
    stream.add(recorded("relation"));
    stream.add(begin(7));
    for (const char *name : { "update", "update_key", "update_old", "delete_key", "delete_old" }) {
        stream.add(recorded(name));
    }
    stream.add(commit(100));
    const std::optional<ChangeBatch> batch = stream.takeCommitted();
    QVERIFY(batch);
    QCOMPARE(batch->changes.size(), 5);
    const QList<Change> &c = batch->changes;
    QCOMPARE(c.at(0).type, ChangeType::Update);
    QVERIFY(c.at(0).oldTuple.isEmpty()); // the key did not change: no old row
    QVERIFY(!c.at(1).oldTuple.isEmpty() && !c.at(1).oldIsFullRow); // 'K'
    QVERIFY(!c.at(2).oldTuple.isEmpty() && c.at(2).oldIsFullRow); // 'O'
    QCOMPARE(c.at(3).type, ChangeType::Delete);
    QVERIFY(!c.at(3).oldTuple.isEmpty() && !c.at(3).oldIsFullRow);
    QVERIFY(c.at(3).newTuple.isEmpty());
    QVERIFY(c.at(4).oldIsFullRow);
}

void TransactionAssemblerTest::transactionsCommittedMeanwhileFormOneBatch()
{
    TransactionAssembler stream = assembler();
    stream.add(recorded("relation"));
    stream.add(begin(1));
    stream.add(recorded("insert"));
    stream.add(commit(10));
    stream.add(begin(2));
    stream.add(recorded("delete_key"));
    stream.add(commit(20));
    const std::optional<ChangeBatch> batch = stream.takeCommitted();
    QVERIFY(batch);
    QCOMPARE(batch->xids, (QList<quint32>{ 1, 2 }));
    QCOMPARE(batch->endLsn, quint64(20)); // where the last one ends
    QCOMPARE(batch->changes.size(), 2);
    QCOMPARE(batch->changes.at(0).type, ChangeType::Insert); // commit order
    QCOMPARE(batch->changes.at(1).type, ChangeType::Delete);
}

void TransactionAssemblerTest::aHugeTransactionComesOutInChunks()
{
    // pgoutput sends a transaction only once it committed: it need not sit whole in memory.
    // Every MaxChunkChanges changes go out before the Commit; only the last chunk may be
    // confirmed, and an earlier complete transaction keeps its end.
    TransactionAssembler stream = assembler();
    stream.add(recorded("relation"));
    stream.add(begin(1));
    stream.add(recorded("insert"));
    stream.add(commit(10));
    stream.add(begin(2));
    const qsizetype rows = 2 * TransactionAssembler::MaxChunkChanges + 5;
    qsizetype taken = 0;
    QList<ChangeBatch> chunks;
    for (qsizetype i = 0; i < rows; ++i) {
        stream.add(recorded("insert"));
        // Taken first once the first chunk is out: it joins transaction 1 in one batch.
        if (i + 1 < TransactionAssembler::MaxChunkChanges) {
            continue;
        }
        if (std::optional<ChangeBatch> chunk = stream.takeCommitted()) {
            taken += chunk->changes.size();
            chunks.append(std::move(*chunk));
        }
    }
    QCOMPARE(chunks.size(), 2);
    QCOMPARE(chunks[0].changes.size(), TransactionAssembler::MaxChunkChanges + 1);
    QCOMPARE(chunks[0].endLsn, quint64(10)); // transaction 1, complete, may be confirmed
    QCOMPARE(chunks[0].xids, (QList<quint32>{ 1, 2 }));
    QCOMPARE(chunks[1].changes.size(), TransactionAssembler::MaxChunkChanges);
    QCOMPARE(chunks[1].endLsn, quint64(0)); // a chunk of transaction 2 only: not yet
    QCOMPARE(chunks[1].xids, QList<quint32>{ 2 });
    QVERIFY(chunks[1].decodedBytes > 0);
    stream.add(commit(20));
    const std::optional<ChangeBatch> last = stream.takeCommitted();
    QVERIFY(last);
    QCOMPARE(last->changes.size(), qsizetype(5));
    QCOMPARE(last->endLsn, quint64(20));
    QCOMPARE(taken + last->changes.size(), rows + 1);
    // Merged again (as the pipeline merges queued batches), one transaction is named once.
    ChangeBatch merged = std::move(chunks[1]);
    merged.append(ChangeBatch(*last));
    QCOMPARE(merged.xids, QList<quint32>{ 2 });
    QCOMPARE(merged.endLsn, quint64(20));
}

void TransactionAssemblerTest::largeValuesMakeSmallerChunks()
{
    TransactionAssembler stream = assembler();
    stream.add(recorded("relation"));
    stream.add(begin(7));
    pgoutput::Insert big = std::get<pgoutput::Insert>(recorded("insert"));
    for (pgoutput::Value &value : big.newTuple.values) {
        if (value.kind == pgoutput::Value::Kind::Text) {
            value.bytes = QByteArray(256 * 1024, 'v');
        }
    }
    int chunks = 0;
    for (int i = 0; i < 20; ++i) {
        stream.add(big);
        if (const std::optional<ChangeBatch> chunk = stream.takeCommitted()) {
            ++chunks;
            QVERIFY(chunk->changes.size() < TransactionAssembler::MaxChunkChanges);
            QVERIFY(chunk->decodedBytes >= TransactionAssembler::MaxChunkBytes);
            QVERIFY(chunk->decodedBytes < TransactionAssembler::MaxChunkBytes
                            + 2 * big.newTuple.values.size() * 256 * 1024);
        }
    }
    QVERIFY(chunks >= 3);
}

void TransactionAssemblerTest::changesNobodyListensToAreDroppedButTheirCommitCounts()
{
    TransactionAssembler stream = assembler(false);
    stream.add(recorded("relation"));
    stream.add(begin(5));
    stream.add(recorded("insert"));
    stream.add(commit(55));
    const std::optional<ChangeBatch> batch = stream.takeCommitted();
    QVERIFY(batch); // its position must still be confirmed
    QVERIFY(batch->changes.isEmpty());
    QVERIFY(batch->xids.isEmpty()); // nothing to wait for before RLS checks
    QCOMPARE(batch->endLsn, quint64(55));
}

void TransactionAssemblerTest::rowsOutsideATransactionOrOfUnknownRelationsAreIgnored()
{
    TransactionAssembler stream = assembler();
    stream.add(recorded("relation"));
    stream.add(recorded("insert")); // no Begin
    stream.add(commit(1)); // no Begin either
    QVERIFY(!stream.takeCommitted());
    stream.add(begin(3));
    pgoutput::Insert unknown;
    unknown.relOid = 4242;
    stream.add(unknown);
    stream.add(recorded("truncate")); // never delivered (spec §6.4)
    stream.add(commit(30));
    const std::optional<ChangeBatch> batch = stream.takeCommitted();
    QVERIFY(batch);
    QVERIFY(batch->changes.isEmpty());
}

void TransactionAssemblerTest::databaseBroadcastsComeFromRealtimeMessages()
{
    TransactionAssembler stream = assembler();
    stream.add(messagesRelation());
    stream.add(begin(9));
    stream.add(messagesInsert("room1"));
    pgoutput::Insert incomplete = messagesInsert("room2");
    incomplete.newTuple.values[1] = pgoutput::Value{}; // topic NULL: not a broadcast
    stream.add(incomplete);
    stream.add(commit(90));
    const std::optional<ChangeBatch> batch = stream.takeCommitted();
    QVERIFY(batch);
    QVERIFY(batch->changes.isEmpty()); // realtime.messages is never a postgres_change
    QCOMPARE(batch->broadcasts.size(), 1);
    const DatabaseBroadcast &broadcast = batch->broadcasts.at(0);
    QCOMPARE(broadcast.id, QByteArray("m1"));
    QCOMPARE(broadcast.topic, QByteArray("room1"));
    QCOMPARE(broadcast.event, QByteArray("chat"));
    QCOMPARE(broadcast.isPrivate, false);
    QCOMPARE(broadcast.payload, QByteArray(R"({"a":1})"));
    QVERIFY(m_asked.isEmpty()); // nobody is asked about realtime.messages
}

void TransactionAssemblerTest::databaseBroadcastsKnowTheirPlaceAmongTheChanges()
{
    // WAL order: insert, send, insert, send, send; one topic numbers them in this order.
    TransactionAssembler stream = assembler();
    stream.add(recorded("relation"));
    stream.add(messagesRelation());
    stream.add(begin(9));
    stream.add(recorded("insert"));
    stream.add(messagesInsert("a"));
    stream.add(recorded("insert"));
    stream.add(messagesInsert("b"));
    stream.add(messagesInsert("c"));
    stream.add(commit(90));
    std::optional<ChangeBatch> batch = stream.takeCommitted();
    QVERIFY(batch);
    QCOMPARE(batch->changes.size(), 2);
    QCOMPARE(batch->broadcasts.size(), 3);
    QCOMPARE(batch->broadcasts[0].changesBefore, 1);
    QCOMPARE(batch->broadcasts[1].changesBefore, 2);
    QCOMPARE(batch->broadcasts[2].changesBefore, 2);
    // A later batch merged behind it counts this one's changes too.
    stream.add(begin(10));
    stream.add(messagesInsert("d"));
    stream.add(recorded("insert"));
    stream.add(commit(100));
    std::optional<ChangeBatch> later = stream.takeCommitted();
    QVERIFY(later);
    QCOMPARE(later->broadcasts[0].changesBefore, 0);
    batch->append(std::move(*later));
    QCOMPARE(batch->broadcasts.size(), 4);
    QCOMPARE(batch->broadcasts[3].topic, QByteArray("d"));
    QCOMPARE(batch->broadcasts[3].changesBefore, 2);
    QCOMPARE(batch->changes.size(), 3);
}

void TransactionAssemblerTest::persistedBroadcastsAreNotBroadcastAgain()
{
    // A row the server stored itself (skip_broadcast) was broadcast before it was stored.
    TransactionAssembler stream = assembler();
    pgoutput::Relation relation = messagesRelation();
    relation.columns.append(pgoutput::Column{ false, "skip_broadcast", 16, -1 });
    stream.add(relation);
    stream.add(begin(9));
    pgoutput::Insert persisted = messagesInsert("saved");
    persisted.newTuple.values.append(text("t"));
    stream.add(persisted);
    pgoutput::Insert sent = messagesInsert("sent");
    sent.newTuple.values.append(text("f"));
    stream.add(sent);
    stream.add(commit(90));
    const std::optional<ChangeBatch> batch = stream.takeCommitted();
    QVERIFY(batch);
    QCOMPARE(batch->broadcasts.size(), 1);
    QCOMPARE(batch->broadcasts[0].topic, QByteArray("sent"));
}

void TransactionAssemblerTest::anAbandonedTransactionLeavesNothing()
{
    TransactionAssembler stream = assembler();
    stream.add(recorded("relation"));
    stream.add(begin(1));
    stream.add(recorded("insert"));
    stream.abandonOpenTransaction(); // the stream broke; it resends from the confirmed position
    stream.add(commit(10));
    QVERIFY(!stream.takeCommitted());
}

void TransactionAssemblerTest::relationsTellWhenDescribedAndKeepTheirCatalog()
{
    TransactionAssembler stream = assembler();
    QVERIFY(!stream.takeRelationsDescribed());
    stream.add(recorded("relation"));
    QVERIFY(stream.takeRelationsDescribed());
    QVERIFY(!stream.takeRelationsDescribed());
    const RelationPtr described = stream.relation(16385);
    QVERIFY(described);
    auto completed = std::make_shared<RelationInfo>(*described);
    completed->catalogKnown = true;
    stream.completeRelation(described, completed);
    QCOMPARE(stream.relation(16385), RelationPtr(completed));
    // Described again meanwhile: the newer description stays.
    stream.add(recorded("relation"));
    const RelationPtr again = stream.relation(16385);
    stream.completeRelation(described, std::make_shared<RelationInfo>(*described));
    QCOMPARE(stream.relation(16385), again);
}

QTEST_GUILESS_MAIN(TransactionAssemblerTest)
#include "tst_transaction_assembler.moc"
