// The pgoutput decoder and value typing against a real PostgreSQL 15 server (CTest fixture
// "postgres"): the built-in type table equals pg_type, messages produced by the pgoutput plugin
// itself (read through pg_logical_slot_get_binary_changes, the same bytes a walsender streams
// after the XLogData header) decode, and jsonValue() of every decoded column text equals what
// to_jsonb gives for the stored row.
#include "server/pgoutput/decoder.h"
#include "server/pgoutput/types.h"
#include "server/pgoutput/values.h"
#include "tests/support/postgres/pg_env.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <cmath>
#include <memory>

using namespace rt::pgoutput;
using rt::testsupport::PgEnv;
using rt::testsupport::PgSession;
using rt::testsupport::ScratchDatabase;

namespace {

QJsonValue parseJson(const QByteArray &text)
{
    const QJsonDocument document = QJsonDocument::fromJson('[' + text + ']');
    return document.array().at(0);
}

// JSON equality with numbers compared as doubles (to_jsonb's 1.50 and our 1.5 are one value).
bool sameJson(const QJsonValue &a, const QJsonValue &b)
{
    if (a.isDouble() && b.isDouble()) {
        return a.toDouble() == b.toDouble();
    }
    if (a.isArray() && b.isArray()) {
        const QJsonArray x = a.toArray();
        const QJsonArray y = b.toArray();
        if (x.size() != y.size()) {
            return false;
        }
        for (qsizetype i = 0; i < x.size(); ++i) {
            if (!sameJson(x.at(i), y.at(i))) {
                return false;
            }
        }
        return true;
    }
    if (a.isObject() && b.isObject()) {
        const QJsonObject x = a.toObject();
        const QJsonObject y = b.toObject();
        if (x.keys() != y.keys()) {
            return false;
        }
        for (auto it = x.begin(); it != x.end(); ++it) {
            if (!sameJson(it.value(), y.value(it.key()))) {
                return false;
            }
        }
        return true;
    }
    return a == b;
}

QByteArray show(const QJsonValue &value)
{
    return QJsonDocument(QJsonArray{ value }).toJson(QJsonDocument::Compact);
}

} // namespace

class PgoutputPgTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void builtinTypesMatchPgType();
    void decodesPgoutputAndTypesValuesLikeToJsonb();

private:
    PgEnv m_env;
};

// After the class: moc mis-parses raw string literals that precede it.
namespace {

const char CreateSchema[] = R"sql(
create type mood as enum ('happy', 'sad');
create table items (
    id int8 primary key, small int2, regular int4, n numeric, n_big numeric, r float4,
    f float8, f_nan float8, flag bool, doc jsonb, doc_json json, raw bytea, at timestamptz,
    at_bc timestamptz, at_inf timestamptz, local timestamp, day date, clock time, clock_tz timetz,
    span interval, uid uuid, title text, code varchar(10), padded char(5), m mood, moods mood[],
    tags text[], grid int4[], docs jsonb[], ats timestamptz[], raws bytea[], ns numeric[],
    flags bool[], boxes box[], range int4range, pt point, cash money, addr inet, obj oid,
    bits bit(4), words tsvector, nothing text, big text);
create table full_items (id int4 primary key, v text);
alter table full_items replica identity full;
create publication rt_pgout_pub for all tables;
)sql";

const char InsertRow[] = R"sql(
insert into items values (
    1, -32768, 2147483647, 1.50, 123456789012345678901234567890, 1.1, 1.5e-7, 'NaN', true,
    '{"b": 1, "a": [1, 2.50, "x", null]}', '[1, {"k": "v"}]', '\x0001ff',
    '2024-05-01 10:00:00.123+00', '0044-03-15 10:00:00+00 BC', 'infinity',
    '2024-05-01 10:00:00.5', '2024-05-01', '10:00:00.5', '10:00:00+05:30', '1 day 02:00:00',
    '00000000-0000-0000-0000-000000000001', 'h"é\llo', 'abc', 'ab', 'happy', '{happy,sad}',
    '{"a\"b","c,d",NULL,"NULL"," x "}', '[0:1][1:2]={{1,2},{3,NULL}}', '{"{\"a\": 1}",NULL}',
    '{"2024-05-01 10:00:00+00"}', '{"\\x0102"}', '{NaN,Infinity,1.0}', '{t,f}',
    '{(1,1),(0,0);(2,2),(0,0)}', '[1,5)', '(1,2)', 12.34, '10.0.0.1/8', 5, B'1010',
    'a fat cat', NULL, (select string_agg(md5(i::text), '') from generate_series(1, 400) i)))sql";

} // namespace

void PgoutputPgTest::initTestCase()
{
    QString error;
    const std::optional<PgEnv> env = PgEnv::fromEnvironment(&error);
    QVERIFY2(env, qPrintable(error));
    m_env = *env;
}

void PgoutputPgTest::builtinTypesMatchPgType()
{
    PgSession session(m_env, QStringLiteral("postgres"));
    QVERIFY2(session.isOpen(), qPrintable(session.lastError()));
    QCOMPARE(session.scalar(QStringLiteral("SHOW server_version_num")).toInt() / 10000, 15);
    const auto rows = session.rows(
            QStringLiteral("SELECT oid::int8, typname::text FROM pg_type WHERE oid < 16384"));
    QVERIFY2(rows, qPrintable(session.lastError()));
    QHash<quint32, QByteArray> server;
    for (const QVariantList &row : *rows) {
        server.insert(quint32(row.at(0).toLongLong()), row.at(1).toString().toUtf8());
    }
    // Every hand-assigned OID is known with the server's name; initdb-assigned ones are not.
    int known = 0;
    for (quint32 oid = 0; oid < 16384; ++oid) {
        const QByteArray name = builtinTypeName(oid);
        if (oid < 10000) {
            QCOMPARE(name, server.value(oid));
            known += name.isEmpty() ? 0 : 1;
        } else {
            QVERIFY2(name.isEmpty(), qPrintable(QString::number(oid)));
        }
    }
    QCOMPARE(known, 198);
}

void PgoutputPgTest::decodesPgoutputAndTypesValuesLikeToJsonb()
{
    ScratchDatabase database(m_env, QStringLiteral("rt_pgout"));
    QVERIFY2(database.isValid(), qPrintable(database.error()));
    PgSession session(m_env, database.name());
    QVERIFY2(session.isOpen(), qPrintable(session.lastError()));
    // A zone with a half-hour offset, so that the offset form of timestamptz is exercised.
    // QPSQL switches bytea_output to escape; a replication connection has the default, hex.
    QVERIFY2(session.exec(QStringLiteral("SET bytea_output = 'hex'")),
             qPrintable(session.lastError()));
    QVERIFY2(session.exec(QStringLiteral("SET TimeZone = 'Asia/Kolkata'")),
             qPrintable(session.lastError()));
    for (const QString &statement : QString::fromUtf8(CreateSchema).split(QLatin1Char(';'))) {
        if (!statement.trimmed().isEmpty()) {
            QVERIFY2(session.exec(statement), qPrintable(session.lastError()));
        }
    }
    // Temporary: dropped with the session, so the scratch database can be dropped after.
    QVERIFY2(session.exec(
                     QStringLiteral("SELECT pg_create_logical_replication_slot('rt_pgout_slot', "
                                    "'pgoutput', true)")),
             qPrintable(session.lastError()));

    QVERIFY2(session.exec(QString::fromUtf8(InsertRow)), qPrintable(session.lastError()));
    const QByteArray expectedRow =
            session.scalar(QStringLiteral("SELECT to_jsonb(t)::text FROM items t WHERE id = 1"))
                    .toString()
                    .toUtf8();
    QVERIFY(!expectedRow.isEmpty());
    const QStringList statements = {
        QStringLiteral("UPDATE items SET title = 'changed' WHERE id = 1"), // big: unchanged TOAST
        QStringLiteral("UPDATE items SET id = 2 WHERE id = 1"), // key changed: 'K'
        QStringLiteral("DELETE FROM items WHERE id = 2"), // 'K'
        QStringLiteral("INSERT INTO full_items VALUES (1, 'a')"),
        QStringLiteral("UPDATE full_items SET v = 'b'"), // identity full: 'O'
        QStringLiteral("DELETE FROM full_items"), // 'O'
        QStringLiteral("TRUNCATE items, full_items RESTART IDENTITY"),
        QStringLiteral("SELECT pg_logical_emit_message(true, 'rt', 'in tx')"),
        QStringLiteral("SELECT pg_logical_emit_message(false, 'rt', 'plain')"),
    };
    for (const QString &statement : statements) {
        QVERIFY2(session.exec(statement), qPrintable(session.lastError()));
    }
    // The SQL decoding functions read only up to the flushed WAL, and the cluster runs with
    // synchronous_commit off: a checkpoint flushes everything written above.
    QVERIFY2(session.exec(QStringLiteral("CHECKPOINT")), qPrintable(session.lastError()));
    const auto changes = session.rows(QStringLiteral(
            "SELECT data FROM pg_logical_slot_get_binary_changes('rt_pgout_slot', NULL, NULL, "
            "'proto_version', '1', 'publication_names', 'rt_pgout_pub', 'messages', 'true')"));
    QVERIFY2(changes, qPrintable(session.lastError()));

    QList<Message> messages;
    QByteArray tags; // one tag per message, shown when a count below is off
    for (const QVariantList &row : *changes) {
        const QByteArray bytes = row.at(0).toByteArray();
        const auto decoded = decode(bytes);
        QVERIFY2(decoded.ok(),
                 qPrintable(QStringLiteral("%1 (offset %2) in %3")
                                    .arg(decoded.ok() ? QString() : decoded.error().message)
                                    .arg(decoded.ok() ? 0 : decoded.error().offset)
                                    .arg(QString::fromLatin1(bytes.toHex()))));
        messages.append(*decoded);
        tags += bytes.left(1);
    }

    // Transactions pair up: every Begin's final LSN and time are its Commit's.
    QHash<quint32, Relation> relations;
    QHash<quint32, QByteArray> typeNames;
    QList<Insert> inserts;
    QList<Update> updates;
    QList<Delete> deletes;
    QList<Truncate> truncates;
    QList<LogicalMessage> logical;
    std::optional<Begin> open;
    int transactions = 0;
    for (const Message &message : messages) {
        if (const auto *begin = std::get_if<Begin>(&message)) {
            QVERIFY(!open);
            open = *begin;
        } else if (const auto *commit = std::get_if<Commit>(&message)) {
            QVERIFY(open);
            QCOMPARE(commit->commitLsn, open->finalLsn);
            QCOMPARE(commit->commitTime, open->commitTime);
            QVERIFY(commit->endLsn > commit->commitLsn);
            QVERIFY(parseLsn(formatLsn(commit->endLsn).toLatin1()) == commit->endLsn);
            open.reset();
            ++transactions;
        } else if (const auto *relation = std::get_if<Relation>(&message)) {
            relations.insert(relation->oid, *relation);
        } else if (const auto *type = std::get_if<Type>(&message)) {
            typeNames.insert(type->oid, type->name);
        } else if (const auto *insert = std::get_if<Insert>(&message)) {
            inserts.append(*insert);
        } else if (const auto *update = std::get_if<Update>(&message)) {
            updates.append(*update);
        } else if (const auto *del = std::get_if<Delete>(&message)) {
            deletes.append(*del);
        } else if (const auto *truncate = std::get_if<Truncate>(&message)) {
            truncates.append(*truncate);
        } else if (const auto *emitted = std::get_if<LogicalMessage>(&message)) {
            logical.append(*emitted);
            QCOMPARE(open.has_value(), emitted->transactional);
        }
    }
    QVERIFY(!open);
    // The insert and 8 statements; the plain message has none.
    QVERIFY2(transactions == 9, tags.constData());
    const quint32 itemsOid =
            session.scalar(QStringLiteral("SELECT 'items'::regclass::oid::int8")).toUInt();
    const quint32 fullOid =
            session.scalar(QStringLiteral("SELECT 'full_items'::regclass::oid::int8")).toUInt();
    QVERIFY(relations.contains(itemsOid));
    QVERIFY(relations.contains(fullOid));
    const Relation items = relations.value(itemsOid);
    QCOMPARE(items.nspname, QByteArrayLiteral("public"));
    QCOMPARE(items.relname, QByteArrayLiteral("items"));
    QCOMPARE(items.replicaIdentity, 'd');
    QCOMPARE(relations.value(fullOid).replicaIdentity, 'f');
    const auto attributes = session.rows(
            QStringLiteral("SELECT attname::text, atttypid::int8, atttypmod FROM pg_attribute "
                           "WHERE attrelid = 'items'::regclass AND attnum > 0 AND NOT attisdropped "
                           "ORDER BY attnum"));
    QVERIFY(attributes);
    QCOMPARE(items.columns.size(), attributes->size());
    for (qsizetype i = 0; i < items.columns.size(); ++i) {
        const Column &column = items.columns.at(i);
        QCOMPARE(QString::fromUtf8(column.name), attributes->at(i).at(0).toString());
        QCOMPARE(column.typeOid, quint32(attributes->at(i).at(1).toLongLong()));
        QCOMPARE(column.typmod, attributes->at(i).at(2).toInt());
        QCOMPARE(column.isKey, column.name == "id");
    }
    const quint32 moodOid =
            session.scalar(QStringLiteral("SELECT 'mood'::regtype::oid::int8")).toUInt();
    const quint32 moodsOid =
            session.scalar(QStringLiteral("SELECT '_mood'::regtype::oid::int8")).toUInt();
    QCOMPARE(typeNames.value(moodOid), QByteArrayLiteral("mood"));
    QCOMPARE(typeNames.value(moodsOid), QByteArrayLiteral("_mood"));

    // The inserted row, typed by us, equals to_jsonb(row) (bytea: the bare hex, see values.h).
    QCOMPARE(inserts.size(), 2);
    QCOMPARE(inserts.at(0).relOid, itemsOid);
    const QJsonObject expected = parseJson(expectedRow).toObject();
    QCOMPARE(expected.size(), items.columns.size());
    const TupleData &tuple = inserts.at(0).newTuple;
    QCOMPARE(tuple.values.size(), items.columns.size());
    for (qsizetype i = 0; i < items.columns.size(); ++i) {
        const Column &column = items.columns.at(i);
        QByteArray typeName = builtinTypeName(column.typeOid);
        if (typeName.isEmpty()) {
            typeName = typeNames.value(column.typeOid);
        }
        QVERIFY2(!typeName.isEmpty(), column.name.constData());
        const Value &value = tuple.values.at(i);
        const QJsonValue ours = value.kind == Value::Kind::Null ? QJsonValue(QJsonValue::Null)
                                                                : jsonValue(typeName, value.bytes);
        QJsonValue theirs = expected.value(QString::fromUtf8(column.name));
        if (typeName == "bytea") {
            theirs = theirs.toString().mid(2);
        }
        QVERIFY2(value.kind != Value::Kind::Text || sameJson(ours, theirs),
                 qPrintable(
                         QStringLiteral("%1 (%2) text %3: ours %4, to_jsonb %5")
                                 .arg(QString::fromUtf8(column.name), QString::fromUtf8(typeName),
                                      QString::fromUtf8(value.bytes), QString::fromUtf8(show(ours)),
                                      QString::fromUtf8(show(theirs)))));
        QVERIFY(value.kind == Value::Kind::Text || value.kind == Value::Kind::Null);
    }
    QCOMPARE(tuple.values.at(items.columns.size() - 2).kind, Value::Kind::Null); // nothing

    // Update 1: key unchanged, the TOASTed column unchanged; update 2: key changed.
    QCOMPARE(updates.size(), 3);
    QVERIFY(!updates.at(0).key && !updates.at(0).old);
    QCOMPARE(updates.at(0).newTuple.values.last().kind, Value::Kind::UnchangedToast);
    QVERIFY(updates.at(1).key && !updates.at(1).old);
    QCOMPARE(updates.at(1).key->values.at(0), (Value{ Value::Kind::Text, QByteArrayLiteral("1") }));
    QCOMPARE(updates.at(1).key->values.at(1).kind, Value::Kind::Null); // non-key columns
    QCOMPARE(updates.at(1).newTuple.values.at(0).bytes, QByteArrayLiteral("2"));
    QCOMPARE(updates.at(2).relOid, fullOid);
    QVERIFY(!updates.at(2).key && updates.at(2).old);
    QCOMPARE(updates.at(2).old->values.at(1).bytes, QByteArrayLiteral("a"));
    QCOMPARE(updates.at(2).newTuple.values.at(1).bytes, QByteArrayLiteral("b"));

    QCOMPARE(deletes.size(), 2);
    QVERIFY(deletes.at(0).key && !deletes.at(0).old);
    QCOMPARE(deletes.at(0).key->values.at(0).bytes, QByteArrayLiteral("2"));
    QVERIFY(!deletes.at(1).key && deletes.at(1).old);
    QCOMPARE(deletes.at(1).old->values.at(1).bytes, QByteArrayLiteral("b"));

    QCOMPARE(truncates.size(), 1);
    QCOMPARE(truncates.at(0).options, quint8(Truncate::RestartIdentity));
    QCOMPARE(QSet<quint32>(truncates.at(0).relOids.begin(), truncates.at(0).relOids.end()),
             (QSet<quint32>{ itemsOid, fullOid }));

    QCOMPARE(logical.size(), 2);
    QCOMPARE(logical.at(0).prefix, QByteArrayLiteral("rt"));
    QCOMPARE(logical.at(0).content, QByteArrayLiteral("in tx"));
    QVERIFY(logical.at(0).transactional);
    QCOMPARE(logical.at(1).content, QByteArrayLiteral("plain"));
    QVERIFY(!logical.at(1).transactional);
}

QTEST_GUILESS_MAIN(PgoutputPgTest)
#include "tst_pgoutput_pg.moc"
