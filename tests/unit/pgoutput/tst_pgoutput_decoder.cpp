// Tests of the pgoutput decoder on hand-built messages (layouts from PostgreSQL 15's "Logical
// Replication Message Formats"), of its rejection of damaged input, and of the LSN and commit
// timestamp helpers.
#include "server/pgoutput/decoder.h"

#include <QTest>

#include <limits>

using namespace rt::pgoutput;

namespace {

// Big-endian message builder, the way the walsender writes them (pq_sendint*, pq_sendstring).
class Bytes
{
public:
    explicit Bytes(char tag) { m_bytes += tag; }

    Bytes &u8(quint8 v)
    {
        m_bytes += char(v);
        return *this;
    }
    Bytes &i16(qint16 v) { return be(quint16(v), 2); }
    Bytes &u32(quint32 v) { return be(v, 4); }
    Bytes &i32(qint32 v) { return be(quint32(v), 4); }
    Bytes &u64(quint64 v) { return be(v, 8); }
    Bytes &str(QByteArrayView s)
    {
        m_bytes += s;
        m_bytes += '\0';
        return *this;
    }
    Bytes &raw(QByteArrayView s)
    {
        m_bytes += s;
        return *this;
    }
    // A tuple: 'n', 'u', or text ('t') / binary ('b') values with their Int32 length.
    Bytes &tuple(const QList<Value> &values)
    {
        i16(qint16(values.size()));
        for (const Value &value : values) {
            u8(quint8(value.kind));
            if (value.kind == Value::Kind::Text || value.kind == Value::Kind::Binary) {
                i32(qint32(value.bytes.size()));
                raw(value.bytes);
            }
        }
        return *this;
    }
    QByteArray bytes() const { return m_bytes; }

private:
    Bytes &be(quint64 v, int n)
    {
        for (int i = n - 1; i >= 0; --i) {
            m_bytes += char((v >> (8 * i)) & 0xff);
        }
        return *this;
    }

    QByteArray m_bytes;
};

Value text(QByteArray bytes)
{
    return Value{ Value::Kind::Text, std::move(bytes) };
}
Value binary(QByteArray bytes)
{
    return Value{ Value::Kind::Binary, std::move(bytes) };
}
Value null()
{
    return Value{ Value::Kind::Null, {} };
}
Value toast()
{
    return Value{ Value::Kind::UnchangedToast, {} };
}

const QList<Value> SampleTuple = {
    text("1"),           null(), toast(), text(""), binary(QByteArray("\x00\x01\xff", 3)),
    text("h\xc3\xa9llo")
};
const QList<Value> KeyTuple = { text("1"), null(), null() };

QByteArray beginBytes()
{
    return Bytes('B').u64(0x16'B374D848).u64(767'872'800'123'456).u32(4242).bytes();
}
QByteArray commitBytes()
{
    return Bytes('C').u8(0).u64(0x16'B374D848).u64(0x16'B374D878).u64(767'872'800'123'456).bytes();
}
QByteArray originBytes()
{
    return Bytes('O').u64(0x1'00000002).str("node_a").bytes();
}
QByteArray relationBytes()
{
    return Bytes('R')
            .u32(16'385)
            .str("public")
            .str("todos")
            .u8('d')
            .i16(3)
            .u8(1)
            .str("id")
            .u32(20)
            .i32(-1)
            .u8(0)
            .str("title")
            .u32(1043)
            .i32(104)
            .u8(0)
            .str("tags")
            .u32(1009)
            .i32(-1)
            .bytes();
}
QByteArray typeBytes()
{
    return Bytes('Y').u32(16'400).str("public").str("mood").bytes();
}
QByteArray insertBytes()
{
    return Bytes('I').u32(16'385).u8('N').tuple(SampleTuple).bytes();
}
QByteArray updateBytes(char identity)
{
    Bytes bytes('U');
    bytes.u32(16'385);
    if (identity != 0) {
        bytes.u8(quint8(identity)).tuple(KeyTuple);
    }
    return bytes.u8('N').tuple(SampleTuple).bytes();
}
QByteArray deleteBytes(char identity)
{
    return Bytes('D').u32(16'385).u8(quint8(identity)).tuple(KeyTuple).bytes();
}
QByteArray truncateBytes()
{
    return Bytes('T')
            .i32(2)
            .u8(Truncate::Cascade | Truncate::RestartIdentity)
            .u32(16'385)
            .u32(16'390)
            .bytes();
}
QByteArray messageBytes(bool transactional)
{
    return Bytes('M')
            .u8(transactional ? 1 : 0)
            .u64(0x2'00000010)
            .str("realtime:broadcast")
            .i32(5)
            .raw(QByteArrayView("a\0b\xff}", 5))
            .bytes();
}

// Every valid message of the tests, for the truncation and trailing-byte sweeps.
QList<QPair<const char *, QByteArray>> validMessages()
{
    return {
        { "begin", beginBytes() },         { "commit", commitBytes() },
        { "origin", originBytes() },       { "relation", relationBytes() },
        { "type", typeBytes() },           { "insert", insertBytes() },
        { "update", updateBytes(0) },      { "update K", updateBytes('K') },
        { "update O", updateBytes('O') },  { "delete K", deleteBytes('K') },
        { "delete O", deleteBytes('O') },  { "truncate", truncateBytes() },
        { "message", messageBytes(true) },
    };
}

template <typename T>
T decodeAs(const QByteArray &bytes)
{
    const auto result = decode(bytes);
    if (!result.ok()) {
        qWarning("decode failed: %s at %lld", qPrintable(result.error().message),
                 static_cast<long long>(result.error().offset));
        return T{};
    }
    if (!std::holds_alternative<T>(*result)) {
        qWarning("decoded to variant index %zu", result->index());
        return T{};
    }
    return std::get<T>(*result);
}

} // namespace

class PgoutputDecoderTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void begin();
    void commit();
    void origin();
    void relation();
    void relationReplicaIdentities();
    void typeInPgCatalog();
    void type();
    void insert();
    void updateWithoutIdentity();
    void updateWithKey();
    void updateWithOld();
    void deleteWithKey();
    void deleteWithOld();
    void truncate();
    void logicalMessage();
    void emptyTupleAndEmptyStrings();
    void rejectsEveryTruncation();
    void rejectsTrailingBytes();
    void rejects_data();
    void rejects();
    void formatsLsn_data();
    void formatsLsn();
    void parsesLsn_data();
    void parsesLsn();
    void commitTimestampText_data();
    void commitTimestampText();
    void commitDateTime();
};

void PgoutputDecoderTest::begin()
{
    const Begin expected{ 0x16'B374D848, 767'872'800'123'456, 4242 };
    QCOMPARE(decodeAs<Begin>(beginBytes()), expected);
}

void PgoutputDecoderTest::commit()
{
    const Commit expected{ 0, 0x16'B374D848, 0x16'B374D878, 767'872'800'123'456 };
    QCOMPARE(decodeAs<Commit>(commitBytes()), expected);
}

void PgoutputDecoderTest::origin()
{
    const Origin expected{ 0x1'00000002, QByteArrayLiteral("node_a") };
    QCOMPARE(decodeAs<Origin>(originBytes()), expected);
}

void PgoutputDecoderTest::relation()
{
    const Relation expected{ 16'385,
                             QByteArrayLiteral("public"),
                             QByteArrayLiteral("todos"),
                             'd',
                             { Column{ true, QByteArrayLiteral("id"), 20, -1 },
                               Column{ false, QByteArrayLiteral("title"), 1043, 104 },
                               Column{ false, QByteArrayLiteral("tags"), 1009, -1 } } };
    QCOMPARE(decodeAs<Relation>(relationBytes()), expected);
}

void PgoutputDecoderTest::relationReplicaIdentities()
{
    for (const char identity : { 'd', 'n', 'f', 'i' }) {
        const QByteArray bytes =
                Bytes('R').u32(1).str("s").str("t").u8(quint8(identity)).i16(0).bytes();
        const Relation decoded = decodeAs<Relation>(bytes);
        QCOMPARE(decoded.replicaIdentity, identity);
        QVERIFY(decoded.columns.isEmpty());
    }
    const auto bad = decode(Bytes('R').u32(1).str("s").str("t").u8('x').i16(0).bytes());
    QVERIFY(!bad.ok());
    QCOMPARE(bad.error().offset, 10); // just after the identity byte
    // Column flags other than bit 0 do not make a key.
    const Relation flags = decodeAs<Relation>(Bytes('R')
                                                      .u32(1)
                                                      .str("")
                                                      .str("t")
                                                      .u8('f')
                                                      .i16(1)
                                                      .u8(2)
                                                      .str("c")
                                                      .u32(25)
                                                      .i32(-1)
                                                      .bytes());
    QCOMPARE(flags.columns.size(), 1);
    QVERIFY(!flags.columns.at(0).isKey);
    QVERIFY(flags.nspname.isEmpty());
}

void PgoutputDecoderTest::typeInPgCatalog()
{
    // The namespace is sent empty for pg_catalog; the decoder keeps it as sent.
    const Type decoded = decodeAs<Type>(Bytes('Y').u32(16).str("").str("bool").bytes());
    QCOMPARE(decoded, (Type{ 16, QByteArray(), QByteArrayLiteral("bool") }));
}

void PgoutputDecoderTest::type()
{
    const Type expected{ 16'400, QByteArrayLiteral("public"), QByteArrayLiteral("mood") };
    QCOMPARE(decodeAs<Type>(typeBytes()), expected);
}

void PgoutputDecoderTest::insert()
{
    const Insert decoded = decodeAs<Insert>(insertBytes());
    QCOMPARE(decoded.relOid, 16'385u);
    QCOMPARE(decoded.newTuple.values, SampleTuple);
    QCOMPARE(decoded.newTuple.values.at(4).bytes, QByteArray("\x00\x01\xff", 3));
    QCOMPARE(decoded.newTuple.values.at(2).kind, Value::Kind::UnchangedToast);
}

void PgoutputDecoderTest::updateWithoutIdentity()
{
    const Update decoded = decodeAs<Update>(updateBytes(0));
    QCOMPARE(decoded.relOid, 16'385u);
    QVERIFY(!decoded.key);
    QVERIFY(!decoded.old);
    QCOMPARE(decoded.newTuple.values, SampleTuple);
}

void PgoutputDecoderTest::updateWithKey()
{
    const Update decoded = decodeAs<Update>(updateBytes('K'));
    QVERIFY(decoded.key);
    QVERIFY(!decoded.old);
    QCOMPARE(decoded.key->values, KeyTuple);
    QCOMPARE(decoded.newTuple.values, SampleTuple);
}

void PgoutputDecoderTest::updateWithOld()
{
    const Update decoded = decodeAs<Update>(updateBytes('O'));
    QVERIFY(!decoded.key);
    QVERIFY(decoded.old);
    QCOMPARE(decoded.old->values, KeyTuple);
    QCOMPARE(decoded.newTuple.values, SampleTuple);
}

void PgoutputDecoderTest::deleteWithKey()
{
    const Delete decoded = decodeAs<Delete>(deleteBytes('K'));
    QCOMPARE(decoded.relOid, 16'385u);
    QVERIFY(decoded.key);
    QVERIFY(!decoded.old);
    QCOMPARE(decoded.key->values, KeyTuple);
}

void PgoutputDecoderTest::deleteWithOld()
{
    const Delete decoded = decodeAs<Delete>(deleteBytes('O'));
    QVERIFY(!decoded.key);
    QVERIFY(decoded.old);
    QCOMPARE(decoded.old->values, KeyTuple);
}

void PgoutputDecoderTest::truncate()
{
    const Truncate decoded = decodeAs<Truncate>(truncateBytes());
    QCOMPARE(decoded.options, quint8(3));
    QCOMPARE(decoded.relOids, (QList<quint32>{ 16'385, 16'390 }));
    const Truncate none = decodeAs<Truncate>(Bytes('T').i32(0).u8(0).bytes());
    QVERIFY(none.relOids.isEmpty());
}

void PgoutputDecoderTest::logicalMessage()
{
    const LogicalMessage transactional = decodeAs<LogicalMessage>(messageBytes(true));
    QVERIFY(transactional.transactional);
    QCOMPARE(transactional.lsn, 0x2'00000010u);
    QCOMPARE(transactional.prefix, QByteArrayLiteral("realtime:broadcast"));
    QCOMPARE(transactional.content, QByteArray("a\0b\xff}", 5));
    const LogicalMessage plain = decodeAs<LogicalMessage>(messageBytes(false));
    QVERIFY(!plain.transactional);
    QCOMPARE(plain.content, transactional.content);
}

void PgoutputDecoderTest::emptyTupleAndEmptyStrings()
{
    const Insert empty = decodeAs<Insert>(Bytes('I').u32(7).u8('N').i16(0).bytes());
    QCOMPARE(empty.relOid, 7u);
    QVERIFY(empty.newTuple.values.isEmpty());
    const LogicalMessage message =
            decodeAs<LogicalMessage>(Bytes('M').u8(0).u64(1).str("").i32(0).bytes());
    QVERIFY(message.prefix.isEmpty());
    QVERIFY(message.content.isEmpty());
    const Origin origin = decodeAs<Origin>(Bytes('O').u64(0).str("").bytes());
    QVERIFY(origin.name.isEmpty());
}

void PgoutputDecoderTest::rejectsEveryTruncation()
{
    for (const auto &[name, bytes] : validMessages()) {
        QVERIFY2(decode(bytes).ok(), name);
        for (qsizetype length = 0; length < bytes.size(); ++length) {
            const auto result = decode(QByteArrayView(bytes).first(length));
            QVERIFY2(!result.ok(),
                     qPrintable(
                             QStringLiteral("%1 cut at %2").arg(QLatin1String(name)).arg(length)));
            QVERIFY(result.error().offset >= 0);
            QVERIFY(result.error().offset <= length);
            QVERIFY(!result.error().message.isEmpty());
        }
    }
}

void PgoutputDecoderTest::rejectsTrailingBytes()
{
    for (const auto &[name, bytes] : validMessages()) {
        const auto result = decode(QByteArray(bytes + QByteArrayLiteral("\0")));
        QVERIFY2(!result.ok(), name);
        QCOMPARE(result.error().offset, bytes.size());
        QVERIFY2(result.error().message.contains(QLatin1String("trailing")),
                 qPrintable(result.error().message));
    }
}

void PgoutputDecoderTest::rejects_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<qsizetype>("offset");
    QTest::addColumn<QString>("fragment");

    QTest::newRow("empty") << QByteArray() << qsizetype(0) << QStringLiteral("empty");
    // Protocol 2+ stream and two-phase messages, keepalive-like bytes, garbage tags.
    for (const char tag : { 'S', 'E', 'c', 'A', 'K', 'P', 'r', 'w', 'k', '\0', '\xff' }) {
        QTest::addRow("tag 0x%02x", quint8(tag)) << Bytes(tag).u64(0).bytes() << qsizetype(0)
                                                 << QStringLiteral("unknown message tag");
    }
    QTest::newRow("relation column count beyond message")
            << Bytes('R')
                       .u32(1)
                       .str("s")
                       .str("t")
                       .u8('d')
                       .i16(0x7fff)
                       .u8(0)
                       .str("c")
                       .u32(25)
                       .i32(-1)
                       .bytes()
            << qsizetype(12) << QStringLiteral("exceeds");
    QTest::newRow("relation negative column count")
            << Bytes('R').u32(1).str("s").str("t").u8('d').i16(-1).bytes() << qsizetype(12)
            << QStringLiteral("negative");
    QTest::newRow("relation unterminated name")
            << Bytes('R').u32(1).str("s").raw("todos").bytes() << qsizetype(7)
            << QStringLiteral("unterminated relation name");
    QTest::newRow("tuple column count beyond message")
            << Bytes('I').u32(1).u8('N').i16(3).u8('n').u8('n').bytes() << qsizetype(8)
            << QStringLiteral("exceeds");
    QTest::newRow("tuple negative column count") << Bytes('I').u32(1).u8('N').i16(-2).bytes()
                                                 << qsizetype(8) << QStringLiteral("negative");
    QTest::newRow("tuple unknown value kind")
            << Bytes('I').u32(1).u8('N').i16(2).u8('n').u8('x').bytes() << qsizetype(10)
            << QStringLiteral("value kind");
    QTest::newRow("tuple negative value length")
            << Bytes('I').u32(1).u8('N').i16(1).u8('t').i32(-1).bytes() << qsizetype(13)
            << QStringLiteral("negative length");
    QTest::newRow("tuple value longer than message")
            << Bytes('I').u32(1).u8('N').i16(1).u8('t').i32(0x7fffffff).raw("abc").bytes()
            << qsizetype(13) << QStringLiteral("truncated tuple value");
    QTest::newRow("insert without N")
            << Bytes('I').u32(1).u8('K').i16(0).bytes() << qsizetype(6) << QStringLiteral("'N'");
    QTest::newRow("update with K twice") << Bytes('U').u32(1).u8('K').i16(0).u8('K').i16(0).bytes()
                                         << qsizetype(9) << QStringLiteral("'N'");
    QTest::newRow("update with unknown marker")
            << Bytes('U').u32(1).u8('X').i16(0).bytes() << qsizetype(6) << QStringLiteral("marker");
    QTest::newRow("delete with N") << Bytes('D').u32(1).u8('N').i16(0).bytes() << qsizetype(6)
                                   << QStringLiteral("'K' or 'O'");
    QTest::newRow("truncate count beyond message")
            << Bytes('T').i32(0x7fffffff).u8(0).u32(1).bytes() << qsizetype(6)
            << QStringLiteral("exceeds");
    QTest::newRow("truncate negative count")
            << Bytes('T').i32(-1).u8(0).bytes() << qsizetype(6) << QStringLiteral("negative");
    QTest::newRow("message unknown flags") << Bytes('M').u8(2).u64(1).str("p").i32(0).bytes()
                                           << qsizetype(2) << QStringLiteral("flags");
    QTest::newRow("message negative content length")
            << Bytes('M').u8(0).u64(1).str("p").i32(-5).bytes() << qsizetype(16)
            << QStringLiteral("negative length");
    QTest::newRow("origin unterminated name") << Bytes('O').u64(1).raw("node").bytes()
                                              << qsizetype(9) << QStringLiteral("unterminated");
}

void PgoutputDecoderTest::rejects()
{
    QFETCH(QByteArray, bytes);
    QFETCH(qsizetype, offset);
    QFETCH(QString, fragment);
    const auto result = decode(bytes);
    QVERIFY(!result.ok());
    QVERIFY2(result.error().message.contains(fragment), qPrintable(result.error().message));
    QCOMPARE(result.error().offset, offset);
}

void PgoutputDecoderTest::formatsLsn_data()
{
    QTest::addColumn<quint64>("lsn");
    QTest::addColumn<QString>("text");
    QTest::newRow("zero") << quint64(0) << QStringLiteral("0/0");
    QTest::newRow("typical") << quint64(0x16'B374D848) << QStringLiteral("16/B374D848");
    QTest::newRow("low only") << quint64(0x0100'0028) << QStringLiteral("0/1000028");
    QTest::newRow("max") << std::numeric_limits<quint64>::max()
                         << QStringLiteral("FFFFFFFF/FFFFFFFF");
}

void PgoutputDecoderTest::formatsLsn()
{
    QFETCH(quint64, lsn);
    QFETCH(QString, text);
    QCOMPARE(formatLsn(lsn), text);
    QCOMPARE(parseLsn(text.toLatin1()), std::optional<quint64>(lsn));
}

void PgoutputDecoderTest::parsesLsn_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<bool>("valid");
    QTest::addColumn<quint64>("lsn");
    QTest::newRow("lower case") << QByteArray("16/b374d848") << true << quint64(0x16'B374D848);
    QTest::newRow("leading zeros")
            << QByteArray("00000016/0000000A") << true << quint64(0x16'0000000A);
    QTest::newRow("empty") << QByteArray() << false << quint64(0);
    QTest::newRow("no slash") << QByteArray("16B374D848") << false << quint64(0);
    QTest::newRow("slash only") << QByteArray("/") << false << quint64(0);
    QTest::newRow("no low") << QByteArray("16/") << false << quint64(0);
    QTest::newRow("no high") << QByteArray("/16") << false << quint64(0);
    QTest::newRow("two slashes") << QByteArray("1/2/3") << false << quint64(0);
    QTest::newRow("nine digits") << QByteArray("123456789/0") << false << quint64(0);
    QTest::newRow("not hex") << QByteArray("1g/0") << false << quint64(0);
    QTest::newRow("blank") << QByteArray(" 1/0") << false << quint64(0);
    QTest::newRow("sign") << QByteArray("+1/0") << false << quint64(0);
}

void PgoutputDecoderTest::parsesLsn()
{
    QFETCH(QByteArray, text);
    QFETCH(bool, valid);
    QFETCH(quint64, lsn);
    const std::optional<quint64> parsed = parseLsn(text);
    QCOMPARE(parsed.has_value(), valid);
    if (valid) {
        QCOMPARE(*parsed, lsn);
    }
}

void PgoutputDecoderTest::commitTimestampText_data()
{
    QTest::addColumn<qint64>("micros");
    QTest::addColumn<QByteArray>("text");
    // Expected values computed with Python's datetime (UTC, microseconds truncated to millis).
    QTest::newRow("epoch") << qint64(0) << QByteArray("2000-01-01T00:00:00.000Z");
    QTest::newRow("one microsecond") << qint64(1) << QByteArray("2000-01-01T00:00:00.000Z");
    QTest::newRow("999 microseconds") << qint64(999) << QByteArray("2000-01-01T00:00:00.000Z");
    QTest::newRow("one millisecond") << qint64(1000) << QByteArray("2000-01-01T00:00:00.001Z");
    QTest::newRow("just before epoch") << qint64(-1) << QByteArray("1999-12-31T23:59:59.999Z");
    QTest::newRow("-1000") << qint64(-1000) << QByteArray("1999-12-31T23:59:59.999Z");
    QTest::newRow("-1001") << qint64(-1001) << QByteArray("1999-12-31T23:59:59.998Z");
    QTest::newRow("spec example") << qint64(767'872'800'123'456)
                                  << QByteArray("2024-05-01T10:00:00.123Z");
    QTest::newRow("2100 is not leap")
            << qint64(3'160'771'200'000'000) << QByteArray("2100-02-28T00:00:00.000Z");
    QTest::newRow("end of first day")
            << qint64(86'399'999'999) << QByteArray("2000-01-01T23:59:59.999Z");
    QTest::newRow("unix epoch") << qint64(-946'684'800'000'000)
                                << QByteArray("1970-01-01T00:00:00.000Z");
    QTest::newRow("last of 9999") << qint64(252'455'615'999'999'999)
                                  << QByteArray("9999-12-31T23:59:59.999Z");
    QTest::newRow("year 10000") << qint64(252'455'616'000'000'000)
                                << QByteArray("10000-01-01T00:00:00.000Z");
    QTest::newRow("year 1") << qint64(-63'082'281'600'000'000)
                            << QByteArray("0001-01-01T00:00:00.000Z");
    QTest::newRow("year 0") << qint64(-63'082'368'000'000'000)
                            << QByteArray("0000-12-31T00:00:00.000Z");
    // Postgres never sends these, but a WAL byte stream may: no overflow at the range's ends.
    QTest::newRow("one after -infinity")
            << std::numeric_limits<qint64>::min() + 1 << QByteArray("-290278-12-22T19:59:05.224Z");
    QTest::newRow("one before infinity")
            << std::numeric_limits<qint64>::max() - 1 << QByteArray("294277-01-09T04:00:54.775Z");
    QTest::newRow("-infinity") << std::numeric_limits<qint64>::min() << QByteArray("-infinity");
    QTest::newRow("infinity") << std::numeric_limits<qint64>::max() << QByteArray("infinity");
}

void PgoutputDecoderTest::commitTimestampText()
{
    QFETCH(qint64, micros);
    QFETCH(QByteArray, text);
    QCOMPARE(rt::pgoutput::commitTimestampText(micros), text);
}

void PgoutputDecoderTest::commitDateTime()
{
    const QDateTime at = rt::pgoutput::commitDateTime(767'872'800'123'456);
    QCOMPARE(at.timeSpec(), Qt::UTC);
    QCOMPARE(at, QDateTime(QDate(2024, 5, 1), QTime(10, 0, 0, 123), Qt::UTC));
    QCOMPARE(rt::pgoutput::commitDateTime(-1),
             QDateTime(QDate(1999, 12, 31), QTime(23, 59, 59, 999), Qt::UTC));
    // Every millisecond-aligned time agrees with the text form.
    for (const qint64 micros : { qint64(0), qint64(-5'000), qint64(767'872'800'123'000) }) {
        const QByteArray expected = rt::pgoutput::commitDateTime(micros)
                                            .toString(QStringLiteral("yyyy-MM-ddTHH:mm:ss.zzzZ"))
                                            .toLatin1();
        QCOMPARE(rt::pgoutput::commitTimestampText(micros), expected);
    }
}

QTEST_GUILESS_MAIN(PgoutputDecoderTest)
#include "tst_pgoutput_decoder.moc"
