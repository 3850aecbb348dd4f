// ReplicationStream against a real PostgreSQL 15 (the CTest fixture "postgres", pg-cluster.sh:
// wal_level=logical, role realtime with REPLICATION): pgoutput messages of a transaction in order,
// logical messages, publication names that need quoting, the confirmed position surviving a
// restart (confirmed changes are not sent again, unconfirmed ones are), reconnecting after the
// server ends the walsender, taking an active slot over only when asked, the idle position
// advancing through keepalives, a wrong password,
// invalid options, and the event loop turning while a connection hangs.
// Every test case uses a fresh database and drops the slots it created (they pin WAL, and the
// cluster has only 10).
#include "server/replication/copy_data.h"
#include "server/replication/replication_stream.h"
#include "tests/support/postgres/pg_env.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QSocketNotifier>
#include <QTcpServer>
#include <QTest>
#include <QTimer>

#include <algorithm>
#include <memory>

using rt::replication::ReplicationStream;
using rt::replication::StreamOptions;
using rt::replication::WalMessage;
using rt::testsupport::PgEnv;
using rt::testsupport::PgSession;
using rt::testsupport::ScratchDatabase;

namespace {

constexpr int TimeoutMs = 15000;

QString slotName()
{
    static int counter = 0;
    return QStringLiteral("rt_repl_test_%1_%2")
            .arg(QCoreApplication::applicationPid())
            .arg(++counter);
}

// Drops a replication slot when the test case ends (also when it fails): waits until no
// walsender holds it any more, since an active slot cannot be dropped.
class SlotGuard
{
public:
    SlotGuard(PgEnv env, QString database, QString slot)
        : m_env(std::move(env)),
          m_database(std::move(database)),
          m_slot(std::move(slot))
    { }
    ~SlotGuard()
    {
        PgSession super(m_env, m_database);
        const auto active = [&super, this] {
            return super.scalar(QStringLiteral("SELECT active FROM pg_replication_slots "
                                               "WHERE slot_name = ?"),
                                { m_slot });
        };
        if (!QTest::qWaitFor([&] { return !active().toBool(); }, TimeoutMs)) {
            qWarning("replication slot %s is still active", qPrintable(m_slot));
        }
        if (!super.exec(QStringLiteral("SELECT pg_drop_replication_slot(slot_name) FROM "
                                       "pg_replication_slots WHERE slot_name = ?"),
                        { m_slot })) {
            qWarning("cannot drop replication slot %s: %s", qPrintable(m_slot),
                     qPrintable(super.lastError()));
        }
    }
    SlotGuard(const SlotGuard &) = delete;
    SlotGuard &operator=(const SlotGuard &) = delete;

    QString name() const { return m_slot; }

private:
    PgEnv m_env;
    QString m_database;
    QString m_slot;
};

// Everything a stream delivered, in order.
struct Received
{
    explicit Received(ReplicationStream &stream)
    {
        QObject::connect(&stream, &ReplicationStream::messages, &stream,
                         [this](const QList<WalMessage> &batch) {
                             messages.append(batch);
                             ++batches;
                         });
    }
    // The pgoutput tags (first payload byte) of every message.
    QByteArray tags() const
    {
        QByteArray out;
        for (const WalMessage &message : messages) {
            out.append(message.payload.isEmpty() ? '?' : message.payload.front());
        }
        return out;
    }
    QList<WalMessage> withTag(char tag) const
    {
        QList<WalMessage> out;
        for (const WalMessage &message : messages) {
            if (message.payload.startsWith(tag)) {
                out.append(message);
            }
        }
        return out;
    }
    QList<WalMessage> messages;
    int batches = 0;
};

// Nothing of `stream` can fire any more: none of its timers runs and it watches no socket. What
// it already queued is flushed by the caller (sendPostedEvents) before counting signals.
bool nothingScheduled(const ReplicationStream &stream)
{
    const QList<QTimer *> timers = stream.findChildren<QTimer *>();
    const QList<QSocketNotifier *> notifiers = stream.findChildren<QSocketNotifier *>();
    return std::none_of(timers.cbegin(), timers.cend(),
                        [](const QTimer *t) { return t->isActive(); })
            && std::none_of(notifiers.cbegin(), notifiers.cend(),
                            [](const QSocketNotifier *n) { return n->isEnabled(); });
}
} // namespace

class ReplicationStreamTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void streamsChangesInOrder();
    void confirmedPositionSurvivesRestart();
    void reconnectsAfterWalsenderTerminated();
    void takesOverAnActiveSlotOnlyWhenAsked();
    void idleWalAdvancesConfirmedPosition();
    void smallBatchesKeepOrder();
    void wrongPasswordFails();
    void unresolvableHostFails();
    void invalidOptionsFailWithoutRetry();
    void eventLoopTurnsWhileConnecting();

private:
    StreamOptions options(const QString &slot, QList<QByteArray> publications) const;
    // A table `items` (id, name) in publication rt_pub, made by the realtime role.
    bool createPublishedTable();
    QString slotColumn(const QString &slot, const QString &column);

    PgEnv m_env;
    std::unique_ptr<ScratchDatabase> m_db;
    std::unique_ptr<PgSession> m_owner; // the realtime role, owner of the database
    std::unique_ptr<PgSession> m_super;
};

void ReplicationStreamTest::initTestCase()
{
    QString error;
    const auto env = PgEnv::fromEnvironment(&error);
    QVERIFY2(env.has_value(), qPrintable(error));
    m_env = *env;
}

void ReplicationStreamTest::init()
{
    m_db = std::make_unique<ScratchDatabase>(m_env, QStringLiteral("rt_repl"));
    QVERIFY2(m_db->isValid(), qPrintable(m_db->error()));
    m_owner = std::make_unique<PgSession>(m_env, m_db->name(), PgSession::Role::Realtime);
    QVERIFY2(m_owner->isOpen(), qPrintable(m_owner->lastError()));
    m_super = std::make_unique<PgSession>(m_env, m_db->name());
    QVERIFY2(m_super->isOpen(), qPrintable(m_super->lastError()));
}

void ReplicationStreamTest::cleanup()
{
    m_super.reset();
    m_owner.reset();
    m_db.reset();
}

StreamOptions ReplicationStreamTest::options(const QString &slot,
                                             QList<QByteArray> publications) const
{
    StreamOptions result;
    result.settings.host = m_env.host;
    result.settings.port = m_env.port;
    result.settings.database = m_db->name();
    result.settings.user = m_env.user;
    result.settings.password = m_env.password.toUtf8();
    result.settings.sslMode = QStringLiteral("disable");
    result.settings.applicationName = QStringLiteral("tst_replication_stream");
    result.slotName = slot.toUtf8();
    result.publications = std::move(publications);
    return result;
}

bool ReplicationStreamTest::createPublishedTable()
{
    const bool ok =
            m_owner->exec(QStringLiteral("CREATE TABLE items (id int PRIMARY KEY, name text)"))
            && m_owner->exec(QStringLiteral("CREATE PUBLICATION rt_pub FOR TABLE items"));
    if (!ok) {
        qWarning("setup: %s", qPrintable(m_owner->lastError()));
    }
    return ok;
}

QString ReplicationStreamTest::slotColumn(const QString &slot, const QString &column)
{
    return m_super
            ->scalar(QStringLiteral("SELECT %1::text FROM pg_replication_slots WHERE slot_name = ?")
                             .arg(column),
                     { slot })
            .toString();
}

void ReplicationStreamTest::streamsChangesInOrder()
{
    QVERIFY(createPublishedTable());
    // A second publication whose name needs quoting both as an identifier and in the literal.
    QVERIFY2(m_owner->exec(QStringLiteral("CREATE TABLE other_items (id int PRIMARY KEY)")),
             qPrintable(m_owner->lastError()));
    const QByteArray oddName = QByteArrayLiteral("Odd \"Pub\", 'q'");
    QVERIFY2(m_owner->exec(QStringLiteral("CREATE PUBLICATION \"Odd \"\"Pub\"\", 'q'\" FOR TABLE "
                                          "other_items")),
             qPrintable(m_owner->lastError()));

    SlotGuard slot(m_env, m_db->name(), slotName());
    ReplicationStream stream;
    Received received(stream);
    QSignalSpy streaming(&stream, &ReplicationStream::streaming);
    QSignalSpy failed(&stream, &ReplicationStream::failed);
    stream.start(options(slot.name(), { QByteArrayLiteral("rt_pub"), oddName }));
    QCOMPARE(stream.state(), ReplicationStream::State::Connecting);
    QVERIFY(streaming.wait(TimeoutMs));
    QCOMPARE(stream.state(), ReplicationStream::State::Streaming);
    QCOMPARE(failed.count(), 0);
    // A persistent slot was created.
    QCOMPARE(slotColumn(slot.name(), QStringLiteral("temporary")), QStringLiteral("false"));
    QCOMPARE(slotColumn(slot.name(), QStringLiteral("plugin")), QStringLiteral("pgoutput"));

    QVERIFY(m_owner->exec(QStringLiteral("BEGIN")));
    QVERIFY(m_owner->exec(QStringLiteral("INSERT INTO items VALUES (1, 'one')")));
    QVERIFY(m_owner->exec(QStringLiteral("UPDATE items SET name = 'uno' WHERE id = 1")));
    QVERIFY(m_owner->exec(QStringLiteral("DELETE FROM items WHERE id = 1")));
    QVERIFY(m_owner->exec(QStringLiteral("COMMIT")));
    QTRY_COMPARE_WITH_TIMEOUT(received.tags(), QByteArrayLiteral("BRIUDC"), TimeoutMs);
    QVERIFY(received.messages.at(2).payload.contains("one"));
    QVERIFY(received.messages.at(3).payload.contains("uno"));

    // Logical messages: transactional (inside B..C) and not.
    QVERIFY2(m_super->exec(QStringLiteral("SELECT pg_logical_emit_message(true, 'rt', 'hello')")),
             qPrintable(m_super->lastError()));
    QTRY_COMPARE_WITH_TIMEOUT(received.tags(), QByteArrayLiteral("BRIUDCBMC"), TimeoutMs);
    QVERIFY(received.messages.at(7).payload.contains("hello"));
    QVERIFY(m_super->exec(QStringLiteral("SELECT pg_logical_emit_message(false, 'rt', 'bye')")));
    QTRY_COMPARE_WITH_TIMEOUT(received.tags(), QByteArrayLiteral("BRIUDCBMCM"), TimeoutMs);
    QVERIFY(received.messages.last().payload.contains("bye"));

    // The table of the oddly named publication streams too.
    QVERIFY(m_owner->exec(QStringLiteral("INSERT INTO other_items VALUES (7)")));
    QTRY_COMPARE_WITH_TIMEOUT(received.tags(), QByteArrayLiteral("BRIUDCBMCMBRIC"), TimeoutMs);

    // Commits carry increasing positions (what a consumer confirms).
    const QList<WalMessage> commits = received.withTag('C');
    QCOMPARE(commits.size(), 3);
    QVERIFY(commits.at(0).walEnd > 0);
    QVERIFY(commits.at(0).walEnd < commits.at(1).walEnd);
    QVERIFY(commits.at(1).walEnd < commits.at(2).walEnd);
    QCOMPARE(failed.count(), 0);

    stream.stop();
    QCOMPARE(stream.state(), ReplicationStream::State::Stopped);
}

void ReplicationStreamTest::confirmedPositionSurvivesRestart()
{
    QVERIFY(createPublishedTable());
    SlotGuard slot(m_env, m_db->name(), slotName());
    quint64 firstCommit = 0;
    quint64 secondCommit = 0;
    {
        ReplicationStream stream;
        Received received(stream);
        QSignalSpy streaming(&stream, &ReplicationStream::streaming);
        stream.start(options(slot.name(), { QByteArrayLiteral("rt_pub") }));
        QVERIFY(streaming.wait(TimeoutMs));
        QVERIFY(m_owner->exec(QStringLiteral("INSERT INTO items VALUES (1, 'first')")));
        QVERIFY(m_owner->exec(QStringLiteral("INSERT INTO items VALUES (2, 'second')")));
        QTRY_COMPARE_WITH_TIMEOUT(received.tags(), QByteArrayLiteral("BRICBIC"), TimeoutMs);
        firstCommit = received.withTag('C').at(0).walEnd;
        secondCommit = received.withTag('C').at(1).walEnd;
        QVERIFY(firstCommit < secondCommit);

        stream.confirm(firstCommit);
        QCOMPARE(stream.confirmedLsn(), firstCommit);
        stream.confirm(firstCommit - 1); // lower values are ignored
        QCOMPARE(stream.confirmedLsn(), firstCommit);
        stream.stop();
        QCOMPARE(stream.confirmedLsn(), firstCommit); // kept for a restart
    }
    // The server took the confirmation (sent before the connection closed).
    QTRY_COMPARE_WITH_TIMEOUT(slotColumn(slot.name(), QStringLiteral("active")),
                              QStringLiteral("false"), TimeoutMs);
    QCOMPARE(slotColumn(slot.name(), QStringLiteral("confirmed_flush_lsn")),
             QString::fromLatin1(rt::replication::formatLsn(firstCommit)));

    // A new stream (a restarted server) on the same slot, from 0/0: only the unconfirmed
    // transaction arrives again.
    ReplicationStream restarted;
    Received again(restarted);
    QSignalSpy streaming(&restarted, &ReplicationStream::streaming);
    restarted.start(options(slot.name(), { QByteArrayLiteral("rt_pub") }));
    QCOMPARE(restarted.confirmedLsn(), quint64(0));
    QVERIFY(streaming.wait(TimeoutMs));
    QTRY_COMPARE_WITH_TIMEOUT(again.tags(), QByteArrayLiteral("BRIC"), TimeoutMs);
    QVERIFY(again.messages.at(2).payload.contains("second"));
    QCOMPARE(again.messages.at(3).walEnd, secondCommit);
    // (The 'B' of the second transaction may sit exactly at the first commit's end.)
    for (const WalMessage &message : std::as_const(again.messages)) {
        QVERIFY2(message.walEnd == 0 || message.walEnd >= firstCommit,
                 qPrintable(QString::fromLatin1(rt::replication::formatLsn(message.walEnd) + ' '
                                                + message.payload.left(1))));
        QVERIFY(!message.payload.contains("first"));
    }
    // Later changes follow.
    QVERIFY(m_owner->exec(QStringLiteral("INSERT INTO items VALUES (3, 'third')")));
    QTRY_COMPARE_WITH_TIMEOUT(again.tags(), QByteArrayLiteral("BRICBIC"), TimeoutMs);
    QVERIFY(again.messages.at(5).payload.contains("third"));
}

void ReplicationStreamTest::reconnectsAfterWalsenderTerminated()
{
    QVERIFY(createPublishedTable());
    SlotGuard slot(m_env, m_db->name(), slotName());
    ReplicationStream stream;
    Received received(stream);
    QSignalSpy streaming(&stream, &ReplicationStream::streaming);
    QSignalSpy failed(&stream, &ReplicationStream::failed);
    // By name: resolved with QHostInfo first (libpq's own lookup would block); "localhost"
    // may also yield ::1, where nothing listens, and libpq moves on to the next address.
    StreamOptions byName = options(slot.name(), { QByteArrayLiteral("rt_pub") });
    byName.settings.host = QStringLiteral("localhost");
    stream.start(byName);
    QVERIFY(streaming.wait(TimeoutMs));
    QVERIFY(m_owner->exec(QStringLiteral("INSERT INTO items VALUES (1, 'before')")));
    QTRY_COMPARE_WITH_TIMEOUT(received.tags(), QByteArrayLiteral("BRIC"), TimeoutMs);
    stream.confirm(received.messages.last().walEnd);

    const QString pid = slotColumn(slot.name(), QStringLiteral("active_pid"));
    QVERIFY(!pid.isEmpty());
    QVERIFY2(m_super->exec(QStringLiteral("SELECT pg_terminate_backend(%1)").arg(pid)),
             qPrintable(m_super->lastError()));

    QVERIFY(failed.wait(TimeoutMs));
    const QString reason = failed.at(0).at(0).toString();
    QVERIFY(!reason.isEmpty());
    QCOMPARE(failed.at(0).at(1).toBool(), true);
    QCOMPARE(stream.state(), ReplicationStream::State::Backoff);
    qInfo("failure reported: %s", qPrintable(reason));

    // Back after the first backoff (1 s), from the confirmed position: nothing is repeated.
    QTRY_COMPARE_WITH_TIMEOUT(streaming.count(), 2, TimeoutMs);
    QCOMPARE(stream.state(), ReplicationStream::State::Streaming);
    QVERIFY(m_owner->exec(QStringLiteral("INSERT INTO items VALUES (2, 'after')")));
    QTRY_COMPARE_WITH_TIMEOUT(received.tags(), QByteArrayLiteral("BRICBRIC"), TimeoutMs);
    QVERIFY(received.messages.at(6).payload.contains("after"));
    QVERIFY(slotColumn(slot.name(), QStringLiteral("active_pid")) != pid);
}

// A claimed stream (takeOverActiveSlot) ends the walsender of whoever still reads the slot (a
// former owner cut off from the cluster); an unclaimed one only retries.
void ReplicationStreamTest::takesOverAnActiveSlotOnlyWhenAsked()
{
    QVERIFY(createPublishedTable());
    SlotGuard slot(m_env, m_db->name(), slotName());
    const StreamOptions plain = options(slot.name(), { QByteArrayLiteral("rt_pub") });
    ReplicationStream former;
    QSignalSpy formerStreaming(&former, &ReplicationStream::streaming);
    QSignalSpy formerFailed(&former, &ReplicationStream::failed);
    former.start(plain);
    QVERIFY(formerStreaming.wait(TimeoutMs));
    const QString formerPid = slotColumn(slot.name(), QStringLiteral("active_pid"));
    QVERIFY(!formerPid.isEmpty());

    ReplicationStream unclaimed;
    QSignalSpy unclaimedFailed(&unclaimed, &ReplicationStream::failed);
    unclaimed.start(plain);
    QVERIFY(unclaimedFailed.wait(TimeoutMs));
    QVERIFY2(unclaimedFailed.at(0).at(0).toString().contains(QLatin1String("is active")),
             qPrintable(unclaimedFailed.at(0).at(0).toString()));
    unclaimed.stop();
    QCOMPARE(slotColumn(slot.name(), QStringLiteral("active_pid")), formerPid);
    QCOMPARE(formerFailed.count(), 0);

    ReplicationStream owner;
    Received received(owner);
    QSignalSpy ownerStreaming(&owner, &ReplicationStream::streaming);
    StreamOptions claimed = plain;
    claimed.takeOverActiveSlot = true;
    owner.start(claimed);
    QVERIFY(formerFailed.wait(TimeoutMs)); // its walsender was ended
    former.stop(); // as a former owner does once it learns that its claim is gone
    QTRY_COMPARE_WITH_TIMEOUT(ownerStreaming.count(), 1, TimeoutMs);
    QVERIFY(slotColumn(slot.name(), QStringLiteral("active_pid")) != formerPid);
    QVERIFY(m_owner->exec(QStringLiteral("INSERT INTO items VALUES (1, 'taken over')")));
    QTRY_COMPARE_WITH_TIMEOUT(received.tags(), QByteArrayLiteral("BRIC"), TimeoutMs);
    QVERIFY(received.messages.at(2).payload.contains("taken over"));
}

void ReplicationStreamTest::idleWalAdvancesConfirmedPosition()
{
    QVERIFY(createPublishedTable());
    QVERIFY(m_owner->exec(QStringLiteral("CREATE TABLE unpublished (id int)")));
    SlotGuard slot(m_env, m_db->name(), slotName());
    ReplicationStream stream;
    Received received(stream);
    QSignalSpy streaming(&stream, &ReplicationStream::streaming);
    stream.start(options(slot.name(), { QByteArrayLiteral("rt_pub") }));
    QVERIFY(streaming.wait(TimeoutMs));
    QVERIFY(m_owner->exec(QStringLiteral("INSERT INTO items VALUES (1, 'x')")));
    QTRY_COMPARE_WITH_TIMEOUT(received.tags(), QByteArrayLiteral("BRIC"), TimeoutMs);
    const quint64 commit = received.messages.last().walEnd;

    // While a delivered transaction is unconfirmed, keepalives do not move the position: the
    // sentinel is a keepalive reporting WAL beyond the commit (the unpublished insert).
    QVERIFY(m_owner->exec(QStringLiteral("INSERT INTO unpublished VALUES (1)")));
    QTRY_VERIFY_WITH_TIMEOUT(stream.serverWalEnd() > commit, TimeoutMs);
    QVERIFY(stream.confirmedLsn() < commit);

    stream.confirm(commit);
    QVERIFY(m_owner->exec(
            QStringLiteral("INSERT INTO unpublished SELECT generate_series(1, 100)")));
    QTRY_VERIFY_WITH_TIMEOUT(stream.confirmedLsn() > commit, TimeoutMs);
    // ... and the server's slot follows, so WAL of unpublished tables is not pinned.
    QTRY_VERIFY_WITH_TIMEOUT(
            rt::replication::parseLsn(
                    slotColumn(slot.name(), QStringLiteral("confirmed_flush_lsn")).toLatin1())
                            .value_or(0)
                    > commit,
            TimeoutMs);
    QCOMPARE(received.tags(), QByteArrayLiteral("BRIC"));
}

void ReplicationStreamTest::smallBatchesKeepOrder()
{
    QVERIFY(createPublishedTable());
    SlotGuard slot(m_env, m_db->name(), slotName());
    ReplicationStream stream;
    Received received(stream);
    QSignalSpy streaming(&stream, &ReplicationStream::streaming);
    StreamOptions small = options(slot.name(), { QByteArrayLiteral("rt_pub") });
    small.maxBatchMessages = 3;
    int largest = 0;
    connect(&stream, &ReplicationStream::messages, this,
            [&largest](const QList<WalMessage> &batch) {
                largest = std::max(largest, static_cast<int>(batch.size()));
            });
    stream.start(small);
    QVERIFY(streaming.wait(TimeoutMs));
    // One transaction of 200 inserts: B R I*200 C, read in batches of at most 3.
    QVERIFY(m_owner->exec(QStringLiteral(
            "INSERT INTO items SELECT i, 'n' || i FROM generate_series(1, 200) AS i")));
    QTRY_COMPARE_WITH_TIMEOUT(received.messages.size(), 203, TimeoutMs);
    QCOMPARE(largest, 3);
    QVERIFY(received.batches >= 68);
    const QByteArray expected = "BR" + QByteArray(200, 'I') + 'C';
    QCOMPARE(received.tags(), expected);
}

void ReplicationStreamTest::wrongPasswordFails()
{
    SlotGuard slot(m_env, m_db->name(), slotName());
    ReplicationStream stream;
    QSignalSpy streaming(&stream, &ReplicationStream::streaming);
    QSignalSpy failed(&stream, &ReplicationStream::failed);
    StreamOptions wrong = options(slot.name(), { QByteArrayLiteral("rt_pub") });
    wrong.settings.password = QByteArrayLiteral("not-the-password");
    stream.start(wrong);
    QVERIFY(failed.wait(TimeoutMs));
    const QString reason = failed.at(0).at(0).toString();
    QVERIFY2(reason.contains(QLatin1String("password authentication failed")), qPrintable(reason));
    QVERIFY2(!reason.contains(QLatin1String("not-the-password")), qPrintable(reason));
    QCOMPARE(failed.at(0).at(1).toBool(), true);
    QCOMPARE(stream.state(), ReplicationStream::State::Backoff);

    // stop() ends the retries: no further signals after it.
    stream.stop();
    QCOMPARE(stream.state(), ReplicationStream::State::Stopped);
    QVERIFY(nothingScheduled(stream));
    QCoreApplication::sendPostedEvents();
    QCOMPARE(failed.count(), 1);
    QCOMPARE(streaming.count(), 0);
    QCOMPARE(slotColumn(slot.name(), QStringLiteral("slot_name")), QString());
}

void ReplicationStreamTest::unresolvableHostFails()
{
    ReplicationStream stream;
    QSignalSpy failed(&stream, &ReplicationStream::failed);
    StreamOptions nowhere = options(slotName(), { QByteArrayLiteral("rt_pub") });
    nowhere.settings.host = QStringLiteral("no-such-host.invalid");
    stream.start(nowhere);
    QCOMPARE(stream.state(), ReplicationStream::State::Connecting);
    QVERIFY(failed.wait(TimeoutMs));
    QVERIFY2(failed.at(0).at(0).toString().contains(QLatin1String("could not resolve host")),
             qPrintable(failed.at(0).at(0).toString()));
    QCOMPARE(failed.at(0).at(1).toBool(), true);
    QCOMPARE(stream.state(), ReplicationStream::State::Backoff);
    stream.stop();
}

void ReplicationStreamTest::invalidOptionsFailWithoutRetry()
{
    ReplicationStream stream;
    QSignalSpy failed(&stream, &ReplicationStream::failed);
    stream.start(options(QStringLiteral("Bad-Slot"), { QByteArrayLiteral("rt_pub") }));
    QCOMPARE(failed.count(), 0); // reported from the event loop, not from inside start()
    QVERIFY(failed.wait(TimeoutMs));
    QVERIFY2(failed.at(0).at(0).toString().contains(QLatin1String("Bad-Slot")),
             qPrintable(failed.at(0).at(0).toString()));
    QCOMPARE(failed.at(0).at(1).toBool(), false);
    QCOMPARE(stream.state(), ReplicationStream::State::Stopped);

    stream.start(options(QStringLiteral("good_slot"), {}));
    QVERIFY(failed.wait(TimeoutMs));
    QCOMPARE(failed.at(1).at(1).toBool(), false);
    QCOMPARE(stream.state(), ReplicationStream::State::Stopped);

    // A stop() before the event loop runs cancels the report.
    stream.start(options(QString(64, QLatin1Char('x')), { QByteArrayLiteral("rt_pub") }));
    stream.stop();
    QVERIFY(nothingScheduled(stream));
    QCoreApplication::sendPostedEvents();
    QCOMPARE(failed.count(), 2);
}

void ReplicationStreamTest::eventLoopTurnsWhileConnecting()
{
    // A server that accepts TCP connections (the kernel does, from the backlog) and never
    // answers: libpq waits for the reply to its first message.
    QTcpServer silent;
    QVERIFY(silent.listen(QHostAddress::LocalHost));
    StreamOptions hanging = options(slotName(), { QByteArrayLiteral("rt_pub") });
    hanging.settings.host = QStringLiteral("127.0.0.1");
    hanging.settings.port = silent.serverPort();
    hanging.settings.sslMode = QStringLiteral("prefer");
    hanging.settings.connectTimeoutSeconds = 2;

    int ticks = 0;
    QTimer ticker;
    connect(&ticker, &QTimer::timeout, this, [&ticks] { ++ticks; });
    ticker.start(10);

    ReplicationStream stream;
    QSignalSpy failed(&stream, &ReplicationStream::failed);
    QElapsedTimer clock;
    clock.start();
    stream.start(hanging);
    QVERIFY2(clock.elapsed() < 500, qPrintable(QString::number(clock.elapsed())));
    QTRY_VERIFY_WITH_TIMEOUT(ticks >= 50, 1800);
    QCOMPARE(stream.state(), ReplicationStream::State::Connecting);
    QCOMPARE(failed.count(), 0);

    QVERIFY(failed.wait(TimeoutMs));
    // The timeout is precise: a coarse timer would be allowed to give up 5 % early.
    QVERIFY2(clock.elapsed() >= 2000, qPrintable(QString::number(clock.elapsed())));
    QVERIFY2(failed.at(0).at(0).toString().contains(QLatin1String("within 2 s")),
             qPrintable(failed.at(0).at(0).toString()));
    QCOMPARE(failed.at(0).at(1).toBool(), true);
    stream.stop();
}

QTEST_GUILESS_MAIN(ReplicationStreamTest)
#include "tst_replication_stream.moc"
