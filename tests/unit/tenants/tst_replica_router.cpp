#include "server/tenants/replica_router.h"

#include <QTest>

#include <limits>

using rt::ManualClock;
using rt::tenants::ApiSession;
using rt::tenants::ReplicaRouter;
using rt::tenants::RouteDecision;
using rt::tenants::RouteReason;
using rt::tenants::RouteTarget;

namespace {

constexpr RouteDecision primary(RouteReason reason)
{
    return { RouteTarget::Primary, reason };
}

constexpr RouteDecision replica(RouteReason reason)
{
    return { RouteTarget::Replica, reason };
}

char *describe(const RouteDecision &decision)
{
    const QByteArray text = rt::tenants::targetLabel(decision.target).toByteArray() + '/'
            + rt::tenants::reasonLabel(decision.reason).toByteArray();
    return qstrdup(text.constData());
}

} // namespace

namespace rt::tenants {
// QCOMPARE prints decisions as "target/reason".
char *toString(const RouteDecision &decision)
{
    return describe(decision);
}
} // namespace rt::tenants

// Tests the read/write splitting of the control plane (seed 002): writes on the primary, reads
// on the replica unless the session wrote within the delay, fallback while the replica is down,
// internal reads only from a caught-up replica, and the session's cookie and header codec.
class ReplicaRouterTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void withoutReplicaEverythingIsPrimary();
    void writesAlwaysGoToThePrimary();
    void readWithoutSessionGoesToTheReplica();
    void readYourWritesWithinTheDelay();
    void slightlyFutureWriteCountsAsRecent();
    void farFutureSessionIsNotBelieved();
    void zeroDelayNeverPinsToThePrimary();
    void replicaDownFallsBackUntilTheRetry();
    void internalReadsNeedACaughtUpReplica();
    void labels();
    void cookieParsing_data();
    void cookieParsing();
    void headerParsing_data();
    void headerParsing();
    void latestOfCookieAndHeader();
    void setCookieExpiresWithTheDelay();
};

void ReplicaRouterTest::withoutReplicaEverythingIsPrimary()
{
    ManualClock clock;
    const ReplicaRouter router({ false, 2000, 5000 }, clock);
    QCOMPARE(router.forApiRead(ApiSession::read(std::nullopt)), primary(RouteReason::NoReplica));
    QCOMPARE(router.forApiRead(ApiSession::read(clock.epochMs())), primary(RouteReason::NoReplica));
    QCOMPARE(router.forApiRead(ApiSession::write()), primary(RouteReason::Write));
    QVERIFY(!router.replicaUsable());
    QCOMPARE(router.forInternalRead(true), primary(RouteReason::NoReplica));
}

void ReplicaRouterTest::writesAlwaysGoToThePrimary()
{
    ManualClock clock;
    ReplicaRouter router({ true, 2000, 5000 }, clock);
    QCOMPARE(router.forWrite(), primary(RouteReason::Write));
    // A read inside a write request (reload, shutdown, a 422 that lists stored extensions).
    QCOMPARE(router.forApiRead(ApiSession::write()), primary(RouteReason::Write));
    // Even an old session does not move a write request's reads to the replica.
    QCOMPARE(router.forApiRead(ApiSession{ true, clock.epochMs() - 60'000 }),
             primary(RouteReason::Write));
    router.replicaFailed();
    QCOMPARE(router.forWrite(), primary(RouteReason::Write));
}

void ReplicaRouterTest::readWithoutSessionGoesToTheReplica()
{
    ManualClock clock;
    const ReplicaRouter router({ true, 2000, 5000 }, clock);
    QCOMPARE(router.forApiRead(ApiSession::read(std::nullopt)), replica(RouteReason::NoSession));
}

void ReplicaRouterTest::readYourWritesWithinTheDelay()
{
    ManualClock clock;
    const ReplicaRouter router({ true, 2000, 5000 }, clock);
    const qint64 wroteAt = clock.epochMs();
    const ApiSession session = ApiSession::read(wroteAt);
    QCOMPARE(router.forApiRead(session), primary(RouteReason::RecentWrite));
    clock.advance(1999);
    QCOMPARE(router.forApiRead(session), primary(RouteReason::RecentWrite));
    // Rails: Time.now - last_write >= delay reads the replica again.
    clock.advance(1);
    QCOMPARE(router.forApiRead(session), replica(RouteReason::DelayElapsed));
    clock.advance(3'600'000);
    QCOMPARE(router.forApiRead(session), replica(RouteReason::DelayElapsed));
    // Another session (no write of its own) was never pinned.
    QCOMPARE(router.forApiRead(ApiSession::read(std::nullopt)), replica(RouteReason::NoSession));
}

void ReplicaRouterTest::slightlyFutureWriteCountsAsRecent()
{
    // The write was stamped by a node whose clock is ahead of ours.
    ManualClock clock;
    const ReplicaRouter router({ true, 2000, 5000 }, clock);
    QCOMPARE(router.forApiRead(ApiSession::read(clock.epochMs() + 1500)),
             primary(RouteReason::RecentWrite));
    QCOMPARE(
            router.forApiRead(ApiSession::read(clock.epochMs() + ReplicaRouter::FutureToleranceMs)),
            primary(RouteReason::RecentWrite));
}

void ReplicaRouterTest::farFutureSessionIsNotBelieved()
{
    ManualClock clock;
    const ReplicaRouter router({ true, 2000, 5000 }, clock);
    const qint64 forged = clock.epochMs() + ReplicaRouter::FutureToleranceMs + 1;
    QCOMPARE(router.forApiRead(ApiSession::read(forged)), replica(RouteReason::InvalidSession));
    QCOMPARE(router.forApiRead(ApiSession::read(std::numeric_limits<qint64>::max() / 2)),
             replica(RouteReason::InvalidSession));
}

void ReplicaRouterTest::zeroDelayNeverPinsToThePrimary()
{
    ManualClock clock;
    const ReplicaRouter router({ true, 0, 5000 }, clock);
    QCOMPARE(router.forApiRead(ApiSession::read(clock.epochMs())),
             replica(RouteReason::DelayElapsed));
}

void ReplicaRouterTest::replicaDownFallsBackUntilTheRetry()
{
    ManualClock clock;
    ReplicaRouter router({ true, 2000, 5000 }, clock);
    QVERIFY(!router.replicaDown());
    QVERIFY(router.replicaUsable());
    router.replicaFailed();
    QVERIFY(router.replicaDown());
    QVERIFY(!router.replicaUsable());
    QCOMPARE(router.forApiRead(ApiSession::read(std::nullopt)), primary(RouteReason::ReplicaDown));
    QCOMPARE(router.forApiRead(ApiSession::read(clock.epochMs() - 10'000)),
             primary(RouteReason::ReplicaDown));
    // A recent write says more about why the primary is read than the replica's state.
    QCOMPARE(router.forApiRead(ApiSession::read(clock.epochMs())),
             primary(RouteReason::RecentWrite));
    QCOMPARE(router.forInternalRead(true), primary(RouteReason::ReplicaDown));
    clock.advance(4999);
    QCOMPARE(router.forApiRead(ApiSession::read(std::nullopt)), primary(RouteReason::ReplicaDown));
    clock.advance(1);
    QVERIFY(!router.replicaDown());
    QCOMPARE(router.forApiRead(ApiSession::read(std::nullopt)), replica(RouteReason::NoSession));
    // A second failure starts a new interval from its own time.
    clock.advance(10'000);
    router.replicaFailed();
    clock.advance(4999);
    QVERIFY(router.replicaDown());
    clock.advance(1);
    QVERIFY(!router.replicaDown());
}

void ReplicaRouterTest::internalReadsNeedACaughtUpReplica()
{
    ManualClock clock;
    const ReplicaRouter router({ true, 2000, 5000 }, clock);
    QVERIFY(router.replicaUsable());
    QCOMPARE(router.forInternalRead(true), replica(RouteReason::CaughtUp));
    QCOMPARE(router.forInternalRead(false), primary(RouteReason::ReplicaBehind));
}

void ReplicaRouterTest::labels()
{
    using rt::tenants::reasonLabel;
    using rt::tenants::targetLabel;
    QCOMPARE(targetLabel(RouteTarget::Primary), QByteArrayView("primary"));
    QCOMPARE(targetLabel(RouteTarget::Replica), QByteArrayView("replica"));
    const std::pair<RouteReason, const char *> reasons[] = {
        { RouteReason::Write, "write" },
        { RouteReason::NoReplica, "no_replica" },
        { RouteReason::RecentWrite, "recent_write" },
        { RouteReason::ReplicaDown, "replica_down" },
        { RouteReason::ReplicaError, "replica_error" },
        { RouteReason::ReplicaBehind, "replica_behind" },
        { RouteReason::NoSession, "no_session" },
        { RouteReason::DelayElapsed, "delay_elapsed" },
        { RouteReason::InvalidSession, "invalid_session" },
        { RouteReason::CaughtUp, "caught_up" },
    };
    for (const auto &[reason, label] : reasons) {
        QCOMPARE(reasonLabel(reason), QByteArrayView(label));
    }
}

void ReplicaRouterTest::cookieParsing_data()
{
    QTest::addColumn<QByteArray>("header");
    QTest::addColumn<qint64>("expected"); // -1: none
    QTest::newRow("absent") << QByteArray() << qint64(-1);
    QTest::newRow("alone") << QByteArray("realtime_last_write=1700000000123")
                           << qint64(1700000000123);
    QTest::newRow("among others") << QByteArray("a=b; realtime_last_write=42; c=d") << qint64(42);
    QTest::newRow("no space") << QByteArray("a=b;realtime_last_write=43") << qint64(43);
    QTest::newRow("quoted") << QByteArray("realtime_last_write=\"44\"") << qint64(44);
    QTest::newRow("last readable wins")
            << QByteArray("realtime_last_write=1; realtime_last_write=2") << qint64(2);
    QTest::newRow("garbage ignored")
            << QByteArray("realtime_last_write=5; realtime_last_write=x") << qint64(5);
    QTest::newRow("other cookie only") << QByteArray("realtime_last_writes=5") << qint64(-1);
    QTest::newRow("prefix name") << QByteArray("x_realtime_last_write=5") << qint64(-1);
    QTest::newRow("empty value") << QByteArray("realtime_last_write=") << qint64(-1);
    QTest::newRow("negative") << QByteArray("realtime_last_write=-5") << qint64(-1);
    QTest::newRow("too long") << QByteArray("realtime_last_write=1234567890123456") << qint64(-1);
    QTest::newRow("lone quote") << QByteArray("realtime_last_write=\"") << qint64(-1);
    QTest::newRow("separators only") << QByteArray(";;; ;=;") << qint64(-1);
    QTest::newRow("no equals") << QByteArray("realtime_last_write") << qint64(-1);
    QTest::newRow("binary") << QByteArray("realtime_last_write=1\0002", 23) << qint64(-1);
}

void ReplicaRouterTest::cookieParsing()
{
    QFETCH(QByteArray, header);
    QFETCH(qint64, expected);
    const std::optional<qint64> parsed = rt::tenants::parseSessionCookie(header);
    QCOMPARE(parsed.value_or(-1), expected);
}

void ReplicaRouterTest::headerParsing_data()
{
    QTest::addColumn<QByteArray>("value");
    QTest::addColumn<qint64>("expected");
    QTest::newRow("plain") << QByteArray("1700000000000") << qint64(1700000000000);
    QTest::newRow("spaces") << QByteArray("  7 ") << qint64(7);
    QTest::newRow("zero") << QByteArray("0") << qint64(0);
    QTest::newRow("empty") << QByteArray("") << qint64(-1);
    QTest::newRow("null") << QByteArray() << qint64(-1);
    QTest::newRow("sign") << QByteArray("+7") << qint64(-1);
    QTest::newRow("fraction") << QByteArray("7.5") << qint64(-1);
    QTest::newRow("inner space") << QByteArray("7 5") << qint64(-1);
    QTest::newRow("15 digits") << QByteArray("999999999999999") << qint64(999999999999999);
    QTest::newRow("16 digits") << QByteArray("1000000000000000") << qint64(-1);
}

void ReplicaRouterTest::headerParsing()
{
    QFETCH(QByteArray, value);
    QFETCH(qint64, expected);
    QCOMPARE(rt::tenants::parseSessionTimestamp(value).value_or(-1), expected);
}

void ReplicaRouterTest::latestOfCookieAndHeader()
{
    using rt::tenants::latestSession;
    QCOMPARE(latestSession(std::nullopt, std::nullopt), std::optional<qint64>());
    QCOMPARE(latestSession(5, std::nullopt), std::optional<qint64>(5));
    QCOMPARE(latestSession(std::nullopt, 6), std::optional<qint64>(6));
    QCOMPARE(latestSession(5, 6), std::optional<qint64>(6));
    QCOMPARE(latestSession(9, 6), std::optional<qint64>(9));
}

void ReplicaRouterTest::setCookieExpiresWithTheDelay()
{
    QCOMPARE(rt::tenants::sessionSetCookie(1700000000123, 2000),
             QByteArray("realtime_last_write=1700000000123; Max-Age=2; Path=/api/tenants; "
                        "HttpOnly; SameSite=Strict"));
    // Rounded up: a cookie must not expire before the delay does.
    QVERIFY(rt::tenants::sessionSetCookie(1, 2001).contains("Max-Age=3;"));
    QVERIFY(rt::tenants::sessionSetCookie(1, 1).contains("Max-Age=1;"));
    // What the server sets, the server reads back.
    const QByteArray cookie = rt::tenants::sessionSetCookie(1700000000999, 2000);
    QCOMPARE(rt::tenants::parseSessionCookie(cookie.left(cookie.indexOf(';'))),
             std::optional<qint64>(1700000000999));
}

QTEST_GUILESS_MAIN(ReplicaRouterTest)
#include "tst_replica_router.moc"
