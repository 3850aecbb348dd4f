// rt::postgres::Connection / Pool / MigrationRunner on the real PostgreSQL 15 of the fixture:
// non-blocking connect (good and bad password, refused port, a server that never answers while
// a timer keeps ticking), text parameters with NULL and unicode, segments queued together coming
// back in order and isolated from each other's errors, automatic ROLLBACK of transactions left
// open, transaction-local settings not leaking, scripts with $$ bodies, the pool spreading load,
// pg_terminate_backend failing pending work, and migrations (idempotent, failing, concurrent).
#include "server/postgres/connection.h"
#include "server/postgres/migrations.h"
#include "server/postgres/pool.h"
#include "server/postgres/sql_text.h"
#include "tests/support/postgres/pg_env.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTest>
#include <QTimer>

#include <memory>
#include <optional>

using rt::postgres::Connection;
using rt::postgres::ConnectionSettings;
using rt::postgres::Migration;
using rt::postgres::MigrationRunner;
using rt::postgres::PgError;
using rt::postgres::Pool;
using rt::postgres::QueryResult;
using rt::postgres::SegmentResult;
using rt::postgres::Statement;
using rt::postgres::StatementResult;
using rt::testsupport::PgEnv;
using rt::testsupport::PgSession;
using rt::testsupport::ScratchDatabase;

namespace {

constexpr int kWait = 15000;

Statement sql(const char *text, QList<std::optional<QByteArray>> params = {})
{
    return Statement{ QByteArray(text), std::move(params) };
}

// Records what callbacks receive, in the order they arrive.
struct Collector
{
    QList<SegmentResult> segments;
    QList<int> order;

    rt::postgres::SegmentCallback segment(int tag)
    {
        return [this, tag](SegmentResult result) {
            order.append(tag);
            segments.append(std::move(result));
        };
    }
};

// One StatementResult, filled by a callback.
struct Slot
{
    std::optional<StatementResult> result;
    rt::postgres::StatementCallback callback()
    {
        return [this](StatementResult r) { result = std::move(r); };
    }
    bool ok() const { return result && result->ok(); }
    QByteArray value(int row = 0, int column = 0) const
    {
        return result && result->ok() ? result->value().value(row, column) : QByteArray("<error>");
    }
    QString error() const { return result && !result->ok() ? result->error().text() : QString(); }
};

QString describe(const StatementResult &result)
{
    return result.ok() ? QStringLiteral("ok") : QStringLiteral("error: ") + result.error().text();
}

QString describe(const SegmentResult &segment)
{
    return segment.ok() ? QStringLiteral("ok") : segment.firstError()->text();
}

} // namespace

class TestPostgresConnection : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void connectsAndQueries();
    void badPasswordFailsWithServerMessage();
    void refusedPortFails();
    void silentServerTimesOutWithoutBlocking();
    void hostNameTriesEveryAddress();
    void largePayloadsFlowThroughNotifiers();
    void paramsNullAndUnicode();
    void quotingRoundTrips();
    void segmentsComeBackInOrder();
    void errorInOneSegmentDoesNotAffectOthers();
    void openTransactionIsRolledBack();
    void localSettingDoesNotLeak();
    void keptPlansArePreparedOncePerSession();
    void failedPreparationReportsItsError();
    void scriptWithDollarQuotedFunction();
    void invalidStatementIsRefusedWithoutReentry();
    void closeFailsPendingWork();
    void destructorDropsCallbacks();
    void poolSpreadsLoad();
    void poolFailsWhenEveryConnectionFails();
    void terminatedBackendFailsPendingWork();
    void terminatedIdleConnectionIsNoticed();
    void migrationsApplyOnce();
    void failingMigrationStopsAndNamesItself();
    void concurrentRunnersApplyEachMigrationOnce();

private:
    ConnectionSettings settings() const;
    bool openConnection(Connection &connection);
    bool exec(Connection &connection, const char *text);
    static QList<Migration> threeMigrations();
    bool waitUntilRunning(const char *query) const;

    PgEnv m_env;
    std::unique_ptr<ScratchDatabase> m_db;
};

// The server is executing `query` now (pg_stat_activity says so): the sentinel for "the work
// has reached the server", instead of a guess at how long that takes.
bool TestPostgresConnection::waitUntilRunning(const char *query) const
{
    PgSession super(m_env, m_db->name());
    return QTest::qWaitFor(
            [&] {
                return super.scalar(QStringLiteral("SELECT count(*) FROM pg_stat_activity "
                                                   "WHERE state = 'active' AND query = ?"),
                                    { QString::fromUtf8(query) })
                               .toInt()
                        == 1;
            },
            kWait);
}

void TestPostgresConnection::initTestCase()
{
    QString error;
    const auto env = PgEnv::fromEnvironment(&error);
    QVERIFY2(env.has_value(), qPrintable(error));
    m_env = *env;
}

void TestPostgresConnection::init()
{
    m_db = std::make_unique<ScratchDatabase>(m_env, QStringLiteral("rt_pgclient"));
    QVERIFY2(m_db->isValid(), qPrintable(m_db->error()));
}

void TestPostgresConnection::cleanup()
{
    m_db.reset();
}
void TestPostgresConnection::keptPlansArePreparedOncePerSession()
{
    Connection connection;
    QVERIFY(openConnection(connection));
    QVERIFY(exec(connection, "CREATE TABLE kept (id bigint PRIMARY KEY, label text)"));
    QVERIFY(exec(connection,
                 "INSERT INTO kept SELECT g, 'row ' || g FROM generate_series(1, 50) g"));
    auto lookup = [](const QByteArray &keys) {
        Statement statement =
                sql("SELECT label FROM kept WHERE id = ANY($1::bigint[]) ORDER BY id", { keys });
        statement.keepPlan = true;
        return statement;
    };
    const Statement count = sql("SELECT count(*) FROM pg_prepared_statements");
    Collector collector;
    // Twice in one segment, then in later segments: prepared once, answers follow the params.
    connection.run({ lookup("{1,2}"), lookup("{3}"), count }, collector.segment(1));
    connection.run({ lookup("{4,5,6}"), count }, collector.segment(2));
    connection.run({ lookup("{}") }, collector.segment(3));
    QTRY_COMPARE_WITH_TIMEOUT(collector.order.size(), 3, kWait);
    const SegmentResult &first = collector.segments.at(0);
    QVERIFY(first.ok());
    QCOMPARE(first.results.at(0)->rowCount(), 2);
    QCOMPARE(first.results.at(0)->value(1, 0), QByteArray("row 2"));
    QCOMPARE(first.results.at(1)->value(0, 0), QByteArray("row 3"));
    QCOMPARE(first.results.at(2)->value(0, 0), QByteArray("1"));
    const SegmentResult &second = collector.segments.at(1);
    QVERIFY(second.ok());
    QCOMPARE(second.results.at(0)->rowCount(), 3);
    QCOMPARE(second.results.at(1)->value(0, 0), QByteArray("1"));
    QVERIFY(collector.segments.at(2).ok());
    QCOMPARE(collector.segments.at(2).results.at(0)->rowCount(), 0);

    // A lost session takes its statements along: a new one prepares afresh.
    connection.close();
    QVERIFY(openConnection(connection));
    Collector after;
    connection.run({ lookup("{7}"), count }, after.segment(1));
    QTRY_COMPARE_WITH_TIMEOUT(after.order.size(), 1, kWait);
    QVERIFY(after.segments.at(0).ok());
    QCOMPARE(after.segments.at(0).results.at(0)->value(0, 0), QByteArray("row 7"));
    QCOMPARE(after.segments.at(0).results.at(1)->value(0, 0), QByteArray("1"));
}

void TestPostgresConnection::failedPreparationReportsItsError()
{
    Connection connection;
    QVERIFY(openConnection(connection));
    Statement broken = sql("SELECT * FROM no_such_table WHERE id = $1::int", { QByteArray("1") });
    broken.keepPlan = true;
    Statement fine = sql("SELECT $1::int + 1", { QByteArray("1") });
    fine.keepPlan = true;
    Collector collector;
    connection.run({ fine, broken, fine }, collector.segment(1));
    // Not remembered as prepared: once the table exists, the same text works.
    connection.run(sql("CREATE TABLE no_such_table (id int)"), [](StatementResult) {});
    connection.run({ broken, fine }, collector.segment(2));
    QTRY_COMPARE_WITH_TIMEOUT(collector.order.size(), 2, kWait);
    const SegmentResult &failed = collector.segments.at(0);
    QCOMPARE(failed.results.size(), 3);
    QVERIFY(failed.results.at(0).ok());
    QCOMPARE(failed.results.at(0)->value(0, 0), QByteArray("2"));
    QVERIFY(!failed.results.at(1).ok());
    QCOMPARE(failed.results.at(1).error().sqlState, QByteArray("42P01"));
    QVERIFY2(failed.results.at(1).error().message.contains(QLatin1String("no_such_table")),
             qPrintable(failed.results.at(1).error().text()));
    QCOMPARE(failed.results.at(2).error().message, PgError::skipped().message);
    const SegmentResult &later = collector.segments.at(1);
    QVERIFY(later.ok());
    QCOMPARE(later.results.at(0)->rowCount(), 0);
    QCOMPARE(later.results.at(1)->value(0, 0), QByteArray("2"));
}

ConnectionSettings TestPostgresConnection::settings() const
{
    ConnectionSettings s;
    s.host = m_env.host;
    s.port = m_env.port;
    s.database = m_db->name();
    s.user = m_env.user;
    s.password = m_env.password.toUtf8();
    s.applicationName = QStringLiteral("tst_postgres_connection");
    return s;
}

bool TestPostgresConnection::openConnection(Connection &connection)
{
    QSignalSpy ready(&connection, &Connection::ready);
    QSignalSpy failed(&connection, &Connection::failed);
    connection.open(settings());
    if (!ready.wait(kWait)) {
        qWarning("connect failed: %s",
                 failed.isEmpty() ? "timeout"
                                  : qPrintable(failed.first().first().value<PgError>().text()));
        return false;
    }
    return connection.state() == Connection::State::Ready;
}

bool TestPostgresConnection::exec(Connection &connection, const char *text)
{
    Slot slot;
    connection.run(sql(text), slot.callback());
    if (!QTest::qWaitFor([&] { return slot.result.has_value(); }, kWait)) {
        qWarning("no result for %s", text);
        return false;
    }
    if (!slot.ok()) {
        qWarning("%s failed: %s", text, qPrintable(slot.error()));
    }
    return slot.ok();
}

QList<Migration> TestPostgresConnection::threeMigrations()
{
    return {
        Migration{ 1, QStringLiteral("0001_table.sql"),
                   "CREATE TABLE public.items (id int PRIMARY KEY, label text);\n"
                   "-- a trailing comment without a newline" },
        Migration{ 2, QStringLiteral("0002_function.sql"),
                   "CREATE FUNCTION public.double_it(x int) RETURNS int LANGUAGE plpgsql AS $$\n"
                   "BEGIN\n  RETURN x * 2; -- a semicolon inside the body\nEND\n$$;\n"
                   "CREATE INDEX items_label ON public.items (label);" },
        Migration{ 3, QStringLiteral("0003_rows.sql"),
                   "INSERT INTO public.items VALUES (1, 'one'), (2, public.double_it(21)::text);" },
    };
}

void TestPostgresConnection::connectsAndQueries()
{
    Connection connection;
    QCOMPARE(connection.state(), Connection::State::Idle);
    // Work queued before the connection is ready waits for it.
    Slot early;
    connection.run(sql("SELECT current_user, current_database()"), early.callback());
    QVERIFY(openConnection(connection));
    QVERIFY(connection.backendPid() > 0);
    QTRY_VERIFY_WITH_TIMEOUT(early.result.has_value(), kWait);
    QVERIFY2(early.ok(), qPrintable(early.error()));
    QCOMPARE(early.value(0, 0), m_env.user.toUtf8());
    QCOMPARE(early.value(0, 1), m_db->name().toUtf8());
    QCOMPARE(early.result->value().columnName(1), QByteArray("current_database"));
    QCOMPARE(connection.pendingSegments(), 0);
}

void TestPostgresConnection::badPasswordFailsWithServerMessage()
{
    Connection connection;
    QSignalSpy ready(&connection, &Connection::ready);
    QSignalSpy failed(&connection, &Connection::failed);
    Slot pending;
    connection.run(sql("SELECT 1"), pending.callback());
    ConnectionSettings s = settings();
    s.password = "definitely-wrong";
    connection.open(s);
    QCOMPARE(connection.state(), Connection::State::Connecting);
    QVERIFY(failed.wait(kWait));
    QCOMPARE(ready.count(), 0);
    const PgError error = failed.first().first().value<PgError>();
    QVERIFY2(error.message.contains(QLatin1String("password authentication failed")),
             qPrintable(error.message));
    QVERIFY(error.connectionLost);
    QCOMPARE(connection.state(), Connection::State::Closed);
    // The queued work failed before failed() was emitted.
    QVERIFY(pending.result.has_value());
    QVERIFY(!pending.ok());
    QVERIFY(pending.result->error().connectionLost);
}

void TestPostgresConnection::refusedPortFails()
{
    QTcpServer probe;
    QVERIFY(probe.listen(QHostAddress::LocalHost));
    const quint16 port = probe.serverPort();
    probe.close(); // nothing listens there now

    Connection connection;
    QSignalSpy failed(&connection, &Connection::failed);
    ConnectionSettings s = settings();
    s.port = port;
    QElapsedTimer clock;
    clock.start();
    connection.open(s);
    QVERIFY2(clock.elapsed() < 500, "open() must return at once");
    QVERIFY(failed.wait(kWait));
    const PgError error = failed.first().first().value<PgError>();
    QVERIFY2(error.message.contains(QLatin1String("refused")), qPrintable(error.message));
    QCOMPARE(connection.state(), Connection::State::Closed);
}

void TestPostgresConnection::silentServerTimesOutWithoutBlocking()
{
    // A server that accepts TCP connections and never says a word: libpq waits for its answer,
    // which must not stall this thread. A timer keeps ticking meanwhile; our own connect timeout
    // (libpq ignores connect_timeout in asynchronous mode) ends the attempt.
    QTcpServer silent;
    QVERIFY(silent.listen(QHostAddress::LocalHost));
    Connection connection;
    QSignalSpy failed(&connection, &Connection::failed);
    ConnectionSettings s = settings();
    s.host = QStringLiteral("localhost"); // through the asynchronous host lookup
    s.port = silent.serverPort();
    s.connectTimeoutSeconds = 2;
    int ticks = 0;
    QTimer ticker;
    ticker.setInterval(50);
    connect(&ticker, &QTimer::timeout, this, [&ticks] { ++ticks; });
    ticker.start();
    QElapsedTimer clock;
    clock.start();
    connection.open(s);
    QVERIFY2(clock.elapsed() < 500, "open() must return at once");
    QVERIFY(failed.wait(kWait));
    const qint64 elapsed = clock.elapsed();
    // The connect timeout is a precise timer: it never gives up early.
    QVERIFY2(elapsed >= 2000 && elapsed < 6000, qPrintable(QString::number(elapsed)));
    QVERIFY2(ticks >= 20, qPrintable(QStringLiteral("only %1 ticks").arg(ticks)));
    const PgError error = failed.first().first().value<PgError>();
    QVERIFY2(error.message.contains(QLatin1String("timeout")), qPrintable(error.message));
    QCOMPARE(connection.state(), Connection::State::Closed);
}

void TestPostgresConnection::hostNameTriesEveryAddress()
{
    // "localhost" is looked up asynchronously; it usually resolves to ::1 as well as 127.0.0.1
    // while the cluster listens on 127.0.0.1 only, so libpq moves on to a new socket mid-connect.
    Connection connection;
    QSignalSpy ready(&connection, &Connection::ready);
    QSignalSpy failed(&connection, &Connection::failed);
    ConnectionSettings s = settings();
    s.host = QStringLiteral("localhost");
    connection.open(s);
    QVERIFY2(ready.wait(kWait),
             failed.isEmpty() ? "timeout"
                              : qPrintable(failed.first().first().value<PgError>().text()));
    QVERIFY(exec(connection, "SELECT 1"));
    Slot host;
    connection.run(sql("SELECT inet_client_addr()::text"), host.callback());
    QTRY_VERIFY_WITH_TIMEOUT(host.result.has_value(), kWait);
    QCOMPARE(host.value(), QByteArray("127.0.0.1/32"));
}

void TestPostgresConnection::largePayloadsFlowThroughNotifiers()
{
    // Bigger than the socket buffers both ways: PQflush() returns 1 and the write notifier has
    // to finish the send; the answer arrives over many reads.
    Connection connection;
    QVERIFY(openConnection(connection));
    QByteArray big(24 * 1024 * 1024, 'x');
    for (qsizetype index = 0; index < big.size(); index += 4096) {
        big[index] = char('a' + (index / 4096) % 26);
    }
    int ticks = 0;
    QTimer ticker;
    ticker.setInterval(10);
    connect(&ticker, &QTimer::timeout, this, [&ticks] { ++ticks; });
    ticker.start();
    Collector collector;
    connection.run({ sql("SELECT length($1::text), md5($1::text)", { big }),
                     sql("SELECT repeat('ab', 8 * 1024 * 1024)") },
                   collector.segment(1));
    QTRY_COMPARE_WITH_TIMEOUT(collector.order.size(), 1, 60000);
    const SegmentResult &segment = collector.segments.first();
    QVERIFY2(segment.ok(), qPrintable(describe(segment)));
    QCOMPARE(segment.results.at(0)->value(0, 0), QByteArray::number(big.size()));
    QCOMPARE(segment.results.at(0)->value(0, 1),
             QCryptographicHash::hash(big, QCryptographicHash::Md5).toHex());
    const QByteArray echoed = segment.results.at(1)->value(0, 0);
    QCOMPARE(echoed.size(), 16 * 1024 * 1024);
    QVERIFY(echoed.startsWith("abab") && echoed.endsWith("abab"));
    QVERIFY2(ticks > 0, "the event loop kept running");
}

void TestPostgresConnection::paramsNullAndUnicode()
{
    Connection connection;
    QVERIFY(openConnection(connection));
    const QByteArray unicode = QStringLiteral("h\u00e9llo \u2713 \U0001F600 'quoted' \\").toUtf8();
    Slot slot;
    connection.run(sql("SELECT $1::text AS t, $2::text IS NULL AS n, $3::int + 1 AS i, "
                       "length($1::text) AS len, $2::text AS nul",
                       { unicode, std::nullopt, QByteArray("41") }),
                   slot.callback());
    QTRY_VERIFY_WITH_TIMEOUT(slot.result.has_value(), kWait);
    QVERIFY2(slot.ok(), qPrintable(slot.error()));
    const QueryResult &result = slot.result->value();
    QCOMPARE(result.rowCount(), 1);
    QCOMPARE(result.columnCount(), 5);
    QCOMPARE(result.columnName(0), QByteArray("t"));
    QCOMPARE(result.columnIndex("len"), 3);
    QCOMPARE(result.value(0, 0), unicode);
    QCOMPARE(result.columnType(0), 25u); // text
    QCOMPARE(result.value(0, 1), QByteArray("t"));
    QCOMPARE(result.columnType(1), 16u); // bool
    QCOMPARE(result.value(0, 2), QByteArray("42"));
    QCOMPARE(result.columnType(2), 23u); // int4
    QCOMPARE(result.value(0, 3), QByteArray("20")); // characters, not bytes
    QVERIFY(result.isNull(0, 4));
    QVERIFY(!result.isNull(0, 0));
    QCOMPARE(result.affectedRows(), 1);
    QCOMPARE(result.commandTag(), QByteArray("SELECT 1"));
    // Out of range reads are NULL, not a crash.
    QVERIFY(result.isNull(1, 0));
    QVERIFY(result.isNull(0, 5));
}

void TestPostgresConnection::quotingRoundTrips()
{
    Connection connection;
    QVERIFY(openConnection(connection));
    const QList<QByteArray> tricky = { QByteArray("plain"),
                                       QByteArray("it's"),
                                       QByteArray("back\\slash"),
                                       QByteArray("\\'; SELECT 1; --"),
                                       QByteArray("\"quoted\""),
                                       QStringLiteral("\u00fcnic\u00f6de").toUtf8(),
                                       QByteArray("") };
    for (const QByteArray &text : tricky) {
        Slot literal;
        connection.run(Statement{ "SELECT " + rt::postgres::quoteLiteral(text), {} },
                       literal.callback());
        QTRY_VERIFY_WITH_TIMEOUT(literal.result.has_value(), kWait);
        QVERIFY2(literal.ok(), qPrintable(literal.error()));
        QCOMPARE(literal.value(), text);
        if (text.isEmpty()) {
            continue; // a zero-length identifier is not allowed
        }
        Slot identifier;
        connection.run(Statement{ "CREATE TABLE " + rt::postgres::quoteIdentifier(text)
                                          + " (x int); SELECT 1",
                                  {} },
                       identifier.callback());
        // Two statements in one extended-protocol message are refused: nothing was injected.
        QTRY_VERIFY_WITH_TIMEOUT(identifier.result.has_value(), kWait);
        QVERIFY(!identifier.ok());
        Slot created;
        connection.run(
                Statement{ "CREATE TABLE " + rt::postgres::quoteIdentifier(text) + " (x int)", {} },
                created.callback());
        Slot name;
        connection.run(sql("SELECT relname FROM pg_class WHERE relname = $1", { text }),
                       name.callback());
        QTRY_VERIFY_WITH_TIMEOUT(name.result.has_value(), kWait);
        QVERIFY2(created.ok(), qPrintable(created.error()));
        QCOMPARE(name.value(), text);
    }
}

void TestPostgresConnection::segmentsComeBackInOrder()
{
    Connection connection;
    QVERIFY(openConnection(connection));
    Collector collector;
    // Queued all at once, before any has run; the first is the slowest.
    connection.run({ sql("SELECT pg_sleep(0.3), 1") }, collector.segment(1));
    for (int tag = 2; tag <= 6; ++tag) {
        connection.run({ sql("SELECT $1::int", { QByteArray::number(tag) }),
                         sql("SELECT $1::int * 10", { QByteArray::number(tag) }) },
                       collector.segment(tag));
    }
    QCOMPARE(connection.pendingSegments(), 6);
    QVERIFY(collector.order.isEmpty()); // never called from inside run()
    QTRY_COMPARE_WITH_TIMEOUT(collector.order.size(), 6, kWait);
    QCOMPARE(collector.order, (QList<int>{ 1, 2, 3, 4, 5, 6 }));
    for (int index = 1; index < 6; ++index) {
        const SegmentResult &segment = collector.segments.at(index);
        QVERIFY(segment.ok());
        QCOMPARE(segment.results.size(), 2);
        QCOMPARE(segment.results.at(0)->value(0, 0), QByteArray::number(index + 1));
        QCOMPARE(segment.results.at(1)->value(0, 0), QByteArray::number((index + 1) * 10));
    }
    QCOMPARE(connection.pendingSegments(), 0);
}

void TestPostgresConnection::errorInOneSegmentDoesNotAffectOthers()
{
    Connection connection;
    QVERIFY(openConnection(connection));
    QVERIFY(exec(connection, "CREATE TABLE t (id int PRIMARY KEY)"));
    Collector collector;
    connection.run({ sql("INSERT INTO t VALUES (1)") }, collector.segment(1));
    connection.run({ sql("INSERT INTO t VALUES (2)"), sql("INSERT INTO t VALUES (1)"),
                     sql("INSERT INTO t VALUES (3)") },
                   collector.segment(2));
    connection.run({ sql("INSERT INTO t VALUES (4), (5)") }, collector.segment(3));
    QTRY_COMPARE_WITH_TIMEOUT(collector.order.size(), 3, kWait);
    QCOMPARE(collector.order, (QList<int>{ 1, 2, 3 }));

    QVERIFY(collector.segments.at(0).ok());
    QCOMPARE(collector.segments.at(0).results.at(0)->affectedRows(), 1);

    const SegmentResult &failed = collector.segments.at(1);
    QVERIFY(!failed.ok());
    QCOMPARE(failed.results.size(), 3);
    QVERIFY2(failed.results.at(0).ok(), qPrintable(describe(failed.results.at(0))));
    QVERIFY(!failed.results.at(1).ok());
    QCOMPARE(failed.results.at(1).error().sqlState, QByteArray("23505"));
    QVERIFY(failed.results.at(1).error().detail.contains(QLatin1String("(id)=(1)")));
    QVERIFY(!failed.results.at(1).error().connectionLost);
    QVERIFY(!failed.results.at(2).ok());
    QCOMPARE(failed.results.at(2).error().message, PgError::skipped().message);
    QVERIFY(failed.results.at(2).error().sqlState.isEmpty());
    QCOMPARE(failed.firstError()->sqlState, QByteArray("23505"));

    QVERIFY(collector.segments.at(2).ok());
    QCOMPARE(collector.segments.at(2).results.at(0)->affectedRows(), 2);

    // The failed segment's implicit transaction was rolled back as a whole: 2 is absent.
    PgSession check(m_env, m_db->name());
    QCOMPARE(check.column(QStringLiteral("SELECT id FROM t ORDER BY id")),
             (QStringList{ QStringLiteral("1"), QStringLiteral("4"), QStringLiteral("5") }));
}

void TestPostgresConnection::openTransactionIsRolledBack()
{
    Connection connection;
    QVERIFY(openConnection(connection));
    QVERIFY(exec(connection, "CREATE TABLE t (id int PRIMARY KEY)"));
    Collector collector;
    // An explicit BEGIN that is never committed...
    connection.run({ sql("BEGIN"), sql("INSERT INTO t VALUES (7)") }, collector.segment(1));
    // ...is rolled back before the next segment, which sees neither the row nor a transaction.
    connection.run({ sql("SELECT count(*) FROM t"),
                     sql("SELECT pg_current_xact_id_if_assigned() IS NULL") },
                   collector.segment(2));
    // A failure inside an explicit transaction leaves it aborted: also cleaned up.
    connection.run({ sql("BEGIN"), sql("SELECT 1/0") }, collector.segment(3));
    connection.run({ sql("SELECT 'usable'") }, collector.segment(4));
    // A script that opens a transaction is cleaned up the same way.
    Slot script;
    connection.runScript("BEGIN; INSERT INTO t VALUES (8);", script.callback());
    connection.run({ sql("SELECT count(*) FROM t") }, collector.segment(5));
    QTRY_COMPARE_WITH_TIMEOUT(collector.order.size(), 5, kWait);
    QVERIFY(collector.segments.at(0).ok());
    QVERIFY(collector.segments.at(1).ok());
    QCOMPARE(collector.segments.at(1).results.at(0)->value(0, 0), QByteArray("0"));
    // Inside the left-over transaction the row would be visible and an xid assigned.
    QCOMPARE(collector.segments.at(1).results.at(1)->value(0, 0), QByteArray("t"));
    QCOMPARE(collector.segments.at(2).firstError()->sqlState, QByteArray("22012"));
    QVERIFY2(collector.segments.at(3).ok(),
             qPrintable(describe(collector.segments.at(3).results.at(0))));
    QCOMPARE(collector.segments.at(3).results.at(0)->value(0, 0), QByteArray("usable"));
    QVERIFY(script.ok());
    QCOMPARE(collector.segments.at(4).results.at(0)->value(0, 0), QByteArray("0"));
    PgSession check(m_env, m_db->name());
    QCOMPARE(check.scalar(QStringLiteral("SELECT count(*) FROM t")).toInt(), 0);
}

void TestPostgresConnection::localSettingDoesNotLeak()
{
    Connection connection;
    QVERIFY(openConnection(connection));
    Collector collector;
    connection.run({ sql("SELECT set_config('request.jwt.claims', $1, true)", { QByteArray("{}") }),
                     sql("SELECT current_setting('request.jwt.claims')"),
                     sql("SELECT set_config('role', 'none', true)") },
                   collector.segment(1));
    connection.run(
            { sql("SELECT coalesce(current_setting('request.jwt.claims', true), '<null>')") },
            collector.segment(2));
    QTRY_COMPARE_WITH_TIMEOUT(collector.order.size(), 2, kWait);
    QVERIFY(collector.segments.at(0).ok());
    QCOMPARE(collector.segments.at(0).results.at(1)->value(0, 0), QByteArray("{}"));
    QVERIFY(collector.segments.at(1).ok());
    const QByteArray after = collector.segments.at(1).results.at(0)->value(0, 0);
    QVERIFY2(after == "" || after == "<null>", after.constData());
}

void TestPostgresConnection::scriptWithDollarQuotedFunction()
{
    Connection connection;
    QVERIFY(openConnection(connection));
    Slot script;
    connection.runScript("CREATE FUNCTION answer() RETURNS int LANGUAGE plpgsql AS $$\n"
                         "BEGIN\n  PERFORM 1; RETURN 42;\nEND\n$$;\n"
                         "CREATE TABLE s (x int); INSERT INTO s VALUES (1);\n"
                         "SELECT answer(), 'last';",
                         script.callback());
    QTRY_VERIFY_WITH_TIMEOUT(script.result.has_value(), kWait);
    QVERIFY2(script.ok(), qPrintable(script.error()));
    QCOMPARE(script.value(0, 0), QByteArray("42"));
    QCOMPARE(script.value(0, 1), QByteArray("last"));

    // The first error wins; the script's implicit transaction is rolled back.
    Slot failing;
    connection.runScript("INSERT INTO s VALUES (2); SELECT * FROM missing_table; SELECT 1/0;",
                         failing.callback());
    // Pipeline mode is back afterwards.
    Collector collector;
    connection.run({ sql("SELECT count(*) FROM s"), sql("SELECT answer()") }, collector.segment(1));
    QTRY_COMPARE_WITH_TIMEOUT(collector.order.size(), 1, kWait);
    QVERIFY(failing.result.has_value());
    QVERIFY(!failing.ok());
    QCOMPARE(failing.result->error().sqlState, QByteArray("42P01"));
    QVERIFY(collector.segments.at(0).ok());
    QCOMPARE(collector.segments.at(0).results.at(0)->value(0, 0), QByteArray("1"));
    QCOMPARE(collector.segments.at(0).results.at(1)->value(0, 0), QByteArray("42"));
}

void TestPostgresConnection::invalidStatementIsRefusedWithoutReentry()
{
    Connection connection;
    QVERIFY(openConnection(connection));
    Collector collector;
    connection.run({ sql("SELECT 1"), Statement{ QByteArray("SELECT 1\0; DROP TABLE x", 23), {} } },
                   collector.segment(1));
    connection.run({ sql("SELECT $1::text", { QByteArray("a\0b", 3) }) }, collector.segment(2));
    connection.run({}, collector.segment(3));
    connection.run({ sql("SELECT 'fine'") }, collector.segment(4));
    QVERIFY(collector.order.isEmpty());
    QTRY_COMPARE_WITH_TIMEOUT(collector.order.size(), 4, kWait);
    QVERIFY(!collector.segments.at(0).ok());
    QCOMPARE(collector.segments.at(0).results.size(), 2);
    QVERIFY(collector.segments.at(0).firstError()->message.contains(QLatin1String("NUL")));
    QVERIFY(!collector.segments.at(1).ok());
    QVERIFY(collector.segments.at(2).ok());
    QVERIFY(collector.segments.at(2).results.isEmpty());
    QVERIFY(collector.segments.at(3).ok());
}

void TestPostgresConnection::closeFailsPendingWork()
{
    Connection connection;
    QVERIFY(openConnection(connection));
    QSignalSpy failed(&connection, &Connection::failed);
    Collector collector;
    connection.run({ sql("SELECT pg_sleep(5)") }, collector.segment(1));
    connection.run({ sql("SELECT 2") }, collector.segment(2));
    connection.close();
    QCOMPARE(connection.state(), Connection::State::Closed);
    QVERIFY(collector.order.isEmpty()); // queued, not re-entrant
    QTRY_COMPARE_WITH_TIMEOUT(collector.order.size(), 2, kWait);
    for (const SegmentResult &segment : std::as_const(collector.segments)) {
        QVERIFY(!segment.ok());
        QVERIFY(segment.firstError()->connectionLost);
    }
    QCOMPARE(failed.count(), 0);
    // Work given to a closed connection fails too; open() works again.
    Slot late;
    connection.run(sql("SELECT 1"), late.callback());
    QTRY_VERIFY_WITH_TIMEOUT(late.result.has_value(), kWait);
    QVERIFY(late.result->error().connectionLost);
    QVERIFY(openConnection(connection));
    QVERIFY(exec(connection, "SELECT 1"));
}

void TestPostgresConnection::destructorDropsCallbacks()
{
    bool called = false;
    {
        Connection connection;
        QVERIFY(openConnection(connection));
        connection.run(sql("SELECT pg_sleep(2)"), [&called](StatementResult) { called = true; });
        QVERIFY(waitUntilRunning("SELECT pg_sleep(2)"));
    }
    // Gone with the connection: nothing left that could call it, nothing queued that does.
    QCoreApplication::sendPostedEvents();
    QVERIFY(!called);
}

void TestPostgresConnection::poolSpreadsLoad()
{
    Pool pool;
    QSignalSpy ready(&pool, &Pool::ready);
    pool.open(settings(), 2);
    QVERIFY(ready.wait(kWait));
    QTRY_COMPARE_WITH_TIMEOUT(pool.readyCount(), 2, kWait);
    Slot slow;
    Slot fast;
    QElapsedTimer clock;
    clock.start();
    pool.run(sql("SELECT pg_backend_pid(), pg_sleep(3)"), slow.callback());
    pool.run(sql("SELECT pg_backend_pid()"), fast.callback());
    QTRY_VERIFY_WITH_TIMEOUT(fast.result.has_value(), kWait);
    QVERIFY2(clock.elapsed() < 2000, qPrintable(QString::number(clock.elapsed())));
    QVERIFY(!slow.result.has_value());
    QTRY_VERIFY_WITH_TIMEOUT(slow.result.has_value(), kWait);
    QVERIFY(slow.ok() && fast.ok());
    QVERIFY(slow.value() != fast.value()); // two different backends

    Slot script;
    pool.runScript("CREATE TABLE p (x int); INSERT INTO p VALUES (1); SELECT count(*) FROM p",
                   script.callback());
    QTRY_VERIFY_WITH_TIMEOUT(script.result.has_value(), kWait);
    QCOMPARE(script.value(), QByteArray("1"));

    pool.close();
    QVERIFY(!pool.isReady());
    Slot closed;
    pool.run(sql("SELECT 1"), closed.callback());
    QTRY_VERIFY_WITH_TIMEOUT(closed.result.has_value(), kWait);
    QVERIFY(closed.result->error().connectionLost);
}

void TestPostgresConnection::poolFailsWhenEveryConnectionFails()
{
    Pool pool;
    QSignalSpy ready(&pool, &Pool::ready);
    QSignalSpy failed(&pool, &Pool::failed);
    ConnectionSettings s = settings();
    s.password = "wrong";
    Slot backlog; // given before any connection is ready: waits in the pool, then fails
    pool.open(s, 3);
    pool.run(sql("SELECT 1"), backlog.callback());
    QVERIFY(failed.wait(kWait));
    // failed() comes once every connection has failed, so none is left to report again;
    // what was already queued is delivered before counting.
    QCoreApplication::sendPostedEvents();
    QCOMPARE(failed.count(), 1);
    QCOMPARE(ready.count(), 0);
    QVERIFY(!pool.isReady());
    const PgError error = failed.first().first().value<PgError>();
    QVERIFY2(error.message.contains(QLatin1String("password authentication failed")),
             qPrintable(error.message));
    QTRY_VERIFY_WITH_TIMEOUT(backlog.result.has_value(), kWait);
    QVERIFY(backlog.result->error().connectionLost);
}

void TestPostgresConnection::terminatedBackendFailsPendingWork()
{
    Connection connection;
    QVERIFY(openConnection(connection));
    const int pid = connection.backendPid();
    QSignalSpy failed(&connection, &Connection::failed);
    Collector collector;
    int failedSeenByCallbacks = -1;
    connection.run({ sql("SELECT pg_sleep(30)") }, collector.segment(1));
    connection.run({ sql("SELECT 2") }, [&](SegmentResult result) {
        failedSeenByCallbacks = int(failed.count());
        collector.segment(2)(std::move(result));
    });
    QVERIFY(waitUntilRunning("SELECT pg_sleep(30)"));
    PgSession super(m_env, m_db->name());
    QVERIFY2(super.scalar(QStringLiteral("SELECT pg_terminate_backend(%1)").arg(pid)).toBool(),
             qPrintable(super.lastError()));
    QVERIFY(failed.wait(kWait));
    QCOMPARE(collector.order, (QList<int>{ 1, 2 }));
    QCOMPARE(failedSeenByCallbacks, 0); // callbacks ran before failed()
    for (const SegmentResult &segment : std::as_const(collector.segments)) {
        QVERIFY(!segment.ok());
        QVERIFY(segment.firstError()->connectionLost);
    }
    const PgError error = failed.first().first().value<PgError>();
    QVERIFY(error.connectionLost);
    QCOMPARE(error.sqlState, QByteArray("57P01")); // admin_shutdown: the server's own reason
    QVERIFY2(error.message.contains(QLatin1String("terminating connection")),
             qPrintable(error.message));
    QCOMPARE(connection.state(), Connection::State::Closed);
}

void TestPostgresConnection::terminatedIdleConnectionIsNoticed()
{
    Connection connection;
    QVERIFY(openConnection(connection));
    QSignalSpy failed(&connection, &Connection::failed);
    PgSession super(m_env, m_db->name());
    QVERIFY(super.scalar(QStringLiteral("SELECT pg_terminate_backend(%1)")
                                 .arg(connection.backendPid()))
                    .toBool());
    QVERIFY(failed.wait(kWait));
    QCOMPARE(connection.state(), Connection::State::Closed);
    // The server's reason (sent just before it closed the idle session) is reported.
    const PgError error = failed.first().first().value<PgError>();
    QCOMPARE(error.sqlState, QByteArray("57P01"));
    QVERIFY2(error.message.contains(QLatin1String("terminating connection")),
             qPrintable(error.message));
    QVERIFY(error.connectionLost);
}

void TestPostgresConnection::migrationsApplyOnce()
{
    Connection connection;
    QVERIFY(openConnection(connection));
    {
        MigrationRunner runner;
        QSignalSpy done(&runner, &MigrationRunner::done);
        QSignalSpy failed(&runner, &MigrationRunner::failed);
        // Given out of order: applied by version.
        QList<Migration> migrations = threeMigrations();
        std::swap(migrations[0], migrations[2]);
        runner.start(&connection, migrations);
        QVERIFY2(done.wait(kWait),
                 failed.isEmpty() ? "timeout"
                                  : qPrintable(failed.first().first().value<PgError>().text()));
        QCOMPARE(done.first().first().toInt(), 3);
    }
    PgSession check(m_env, m_db->name());
    QCOMPARE(
            check.column(QStringLiteral(
                    "SELECT version || ':' || name FROM realtime.qtrealtime_migrations "
                    "WHERE applied_at <= now() ORDER BY version")),
            (QStringList{ QStringLiteral("1:0001_table.sql"), QStringLiteral("2:0002_function.sql"),
                          QStringLiteral("3:0003_rows.sql") }));
    QCOMPARE(check.column(QStringLiteral("SELECT label FROM items ORDER BY id")),
             (QStringList{ QStringLiteral("one"), QStringLiteral("42") }));
    {
        MigrationRunner again;
        QSignalSpy done(&again, &MigrationRunner::done);
        again.start(&connection, threeMigrations());
        QVERIFY(done.wait(kWait));
        QCOMPARE(done.first().first().toInt(), 0);
    }
    QCOMPARE(check.scalar(QStringLiteral("SELECT count(*) FROM items")).toInt(), 2);
}

void TestPostgresConnection::failingMigrationStopsAndNamesItself()
{
    Connection connection;
    QVERIFY(openConnection(connection));
    QList<Migration> migrations = threeMigrations();
    migrations[2] = Migration{ 3, QStringLiteral("0003_broken.sql"),
                               "CREATE TABLE public.half (x int);\nSELECT 1/0;" };
    migrations.append(
            Migration{ 4, QStringLiteral("0004_after.sql"), "CREATE TABLE public.after (x int);" });
    MigrationRunner runner;
    QSignalSpy done(&runner, &MigrationRunner::done);
    QSignalSpy failed(&runner, &MigrationRunner::failed);
    runner.start(&connection, migrations);
    QVERIFY(failed.wait(kWait));
    QCOMPARE(done.count(), 0);
    const PgError error = failed.first().first().value<PgError>();
    QVERIFY2(error.message.contains(QLatin1String("0003_broken.sql")), qPrintable(error.message));
    QCOMPARE(error.sqlState, QByteArray("22012"));
    PgSession check(m_env, m_db->name());
    QCOMPARE(check.column(QStringLiteral(
                     "SELECT version FROM realtime.qtrealtime_migrations ORDER BY version")),
             (QStringList{ QStringLiteral("1"), QStringLiteral("2") }));
    QCOMPARE(check.scalar(QStringLiteral("SELECT to_regclass('public.half') IS NULL")).toBool(),
             true);
    QCOMPARE(check.scalar(QStringLiteral("SELECT to_regclass('public.after') IS NULL")).toBool(),
             true);
    QCOMPARE(check.scalar(QStringLiteral("SELECT public.double_it(4)")).toInt(), 8);
    // The connection is still usable.
    QVERIFY(exec(connection, "SELECT 1"));
}

void TestPostgresConnection::concurrentRunnersApplyEachMigrationOnce()
{
    // Each migration appends to a log, so a migration applied twice would show.
    const QList<Migration> migrations = {
        Migration{ 1, QStringLiteral("0001_log.sql"),
                   "CREATE TABLE public.log (v int); SELECT pg_sleep(0.3);" },
        Migration{ 2, QStringLiteral("0002_two.sql"),
                   "INSERT INTO public.log VALUES (2); SELECT pg_sleep(0.2);" },
        Migration{ 3, QStringLiteral("0003_three.sql"), "INSERT INTO public.log VALUES (3);" },
    };
    Connection first;
    Connection second;
    QVERIFY(openConnection(first));
    QVERIFY(openConnection(second));
    MigrationRunner a;
    MigrationRunner b;
    QSignalSpy doneA(&a, &MigrationRunner::done);
    QSignalSpy doneB(&b, &MigrationRunner::done);
    QSignalSpy failedA(&a, &MigrationRunner::failed);
    QSignalSpy failedB(&b, &MigrationRunner::failed);
    a.start(&first, migrations);
    b.start(&second, migrations);
    QTRY_VERIFY_WITH_TIMEOUT(
            doneA.count() + failedA.count() == 1 && doneB.count() + failedB.count() == 1, kWait);
    QVERIFY2(failedA.isEmpty(), qPrintable(failedA.value(0).value(0).value<PgError>().text()));
    QVERIFY2(failedB.isEmpty(), qPrintable(failedB.value(0).value(0).value<PgError>().text()));
    QCOMPARE(doneA.first().first().toInt() + doneB.first().first().toInt(), 3);
    PgSession check(m_env, m_db->name());
    QCOMPARE(check.column(QStringLiteral("SELECT v FROM public.log ORDER BY v")),
             (QStringList{ QStringLiteral("2"), QStringLiteral("3") }));
    QCOMPARE(check.scalar(QStringLiteral("SELECT count(*) FROM realtime.qtrealtime_migrations"))
                     .toInt(),
             3);
}

QTEST_GUILESS_MAIN(TestPostgresConnection)
#include "tst_postgres_connection.moc"
