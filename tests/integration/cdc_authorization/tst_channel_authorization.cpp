// Private-channel authorization (spec §7.1–§7.3) and replay (§4.7) on a real PostgreSQL 15 (the
// CTest fixture "postgres"): the tenant migrations applied by MigrationRunner as the realtime role
// (so it owns realtime.messages, as the server's own connection would), RLS policies like the
// spec's examples created by the superuser, then rt::cdc::checkRead / checkWrite / replay over a
// two-connection rt::postgres::Pool.
//
// The scratch database's TimeZone is Pacific/Kiritimati (UTC+14): inserted_at is `timestamp
// without time zone` holding UTC, so any comparison made in session-local time shows up as rows
// shifted by 14 hours.
#include "server/cdc/channel_authorization.h"
#include "server/postgres/connection.h"
#include "server/postgres/migrations.h"
#include "server/postgres/pool.h"
#include "tests/support/postgres/pg_env.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <QSignalSpy>
#include <QTest>

#include <memory>
#include <optional>

using rt::cdc::AuthorizationError;
using rt::cdc::AuthorizationFailure;
using rt::cdc::AuthorizationRequest;
using rt::cdc::Permissions;
using rt::cdc::StoredMessage;
using rt::testsupport::PgEnv;
using rt::testsupport::PgSession;
using rt::testsupport::ScratchDatabase;

namespace {

using ReadResult = rt::Result<Permissions, AuthorizationError>;
using WriteResult = rt::Result<bool, AuthorizationError>;
using ReplayResult = rt::Result<QList<StoredMessage>, AuthorizationError>;

constexpr int WaitMs = 10000;

// Policies in the spirit of the spec's examples (§7.5), one topic family per behaviour.
// Outside the test class: moc mis-parses raw string literals inside it.
const char *const kPolicies = R"sql(
CREATE FUNCTION public.authz_boom() RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    RAISE EXCEPTION 'policy exploded';
END $$;
CREATE FUNCTION public.authz_cancel() RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    RAISE EXCEPTION 'canceling statement due to user request' USING ERRCODE = 'query_canceled';
END $$;

CREATE FUNCTION public.authz_check_violation() RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    RAISE EXCEPTION 'policy says no' USING ERRCODE = 'check_violation';
END $$;

CREATE POLICY "authenticated receive on topic" ON realtime.messages FOR SELECT TO authenticated
    USING (realtime.topic() LIKE 'topic:%');
CREATE POLICY "authenticated broadcast on topic" ON realtime.messages FOR INSERT TO authenticated
    WITH CHECK (realtime.topic() LIKE 'topic:%');

CREATE POLICY "presence only read" ON realtime.messages FOR SELECT TO authenticated
    USING (realtime.topic() = 'presence-only' AND realtime.messages.extension IN ('presence'));
CREATE POLICY "presence only write" ON realtime.messages FOR INSERT TO authenticated
    WITH CHECK (realtime.topic() = 'presence-only' AND realtime.messages.extension = 'presence');

CREATE POLICY "own user topic" ON realtime.messages FOR SELECT TO authenticated
    USING (realtime.topic() = 'user:' || (current_setting('request.jwt.claims', true)::jsonb ->> 'sub')
           AND current_setting('request.jwt.claim.sub', true) = current_setting('request.jwt.claims', true)::jsonb ->> 'sub'
           AND current_setting('request.jwt.claim.role', true) = 'authenticated');

CREATE POLICY "header gated" ON realtime.messages FOR SELECT TO anon
    USING (realtime.topic() = 'hdr'
           AND current_setting('request.headers', true)::jsonb ->> 'x-secret' = 'open-sesame');

CREATE POLICY "exploding read" ON realtime.messages FOR SELECT TO authenticated
    USING (CASE WHEN realtime.topic() = 'boom' THEN public.authz_boom()
                WHEN realtime.topic() = 'cancel' THEN public.authz_cancel()
                WHEN realtime.topic() = 'check' THEN public.authz_check_violation()
                ELSE false END);
CREATE POLICY "exploding write" ON realtime.messages FOR INSERT TO authenticated
    WITH CHECK (CASE WHEN realtime.topic() = 'boom' THEN public.authz_boom()
                     WHEN realtime.topic() = 'cancel' THEN public.authz_cancel()
                     WHEN realtime.topic() = 'check' THEN public.authz_check_violation()
                     ELSE false END);

-- A write-only topic: insert allowed, nothing readable (write must not need read).
CREATE POLICY "write only" ON realtime.messages FOR INSERT TO authenticated
    WITH CHECK (realtime.topic() = 'write-only');
)sql";

AuthorizationRequest request(const QByteArray &topic, const QByteArray &role = "authenticated",
                             const QByteArray &sub = "user-1",
                             const QByteArray &headers = QByteArrayLiteral("{}"))
{
    QJsonObject claims{ { QStringLiteral("role"), QString::fromUtf8(role) },
                        { QStringLiteral("sub"), QString::fromUtf8(sub) },
                        { QStringLiteral("exp"), qint64(4102444800) } };
    AuthorizationRequest r;
    r.topic = topic;
    r.role = role;
    r.claimsJson = QJsonDocument(claims).toJson(QJsonDocument::Compact);
    r.sub = sub;
    r.headersJson = headers;
    return r;
}

QString describe(const AuthorizationError &error)
{
    return QStringLiteral("kind %1 sqlstate %2: %3")
            .arg(int(error.kind))
            .arg(QString::fromLatin1(error.sqlState), error.detail);
}

// The error of a result as text, or "" when it succeeded (QVERIFY2 evaluates its message
// eagerly, so it must not touch error() of a success).
template <typename T>
QString failureText(const rt::Result<T, AuthorizationError> &result)
{
    return result.ok() ? QString() : describe(result.error());
}

} // namespace

class TestChannelAuthorization : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();

    void readPerTopic();
    void readWithoutPresence();
    void presenceOnlyRead();
    void readBySubClaim();
    void headersReachPolicies();
    void writePerTopicAndExtension();
    void writeDoesNotNeedRead();
    void unknownExtensionRefused();
    void nonexistentRoleIsPolicyError();
    void roleNoneIsRefused();
    void policyErrorIsPolicyError();
    void queryCanceled();
    void serviceRoleBypassesRls();
    void roleWithoutPoliciesDenied();
    void concurrentChecksDoNotInterfere();
    void nothingPersists();
    void databaseUnavailable();

    void replayNewestLimitOldestFirst();
    void replaySince();
    void replayLimitClamped();
    void replayEmptyTopic();

    void missingPartition();

    void parseReplayParams_data();
    void parseReplayParams();
    void persistStoresAllowedMessages();
    void persistRefusedStoresNothing();
    void persistFromMetadata_data();
    void persistFromMetadata();
    void persistFromQuery();
    void joinReasons();
    void refreshShutdownMessages();
    void httpFailures();

private:
    std::optional<ReadResult> read(const AuthorizationRequest &r, bool presence = true);
    std::optional<WriteResult> write(const AuthorizationRequest &r, const QByteArray &extension);
    std::optional<ReplayResult> replay(const QByteArray &topic, qint64 sinceMs, int limit);
    qint64 databaseNowMs();
    rt::postgres::ConnectionSettings settings() const;

    std::optional<PgEnv> m_env;
    std::unique_ptr<ScratchDatabase> m_db;
    std::unique_ptr<PgSession> m_super;
    std::unique_ptr<rt::postgres::Pool> m_pool;
    QHash<QString, QByteArray> m_replayIds; // label -> id of the replay fixture rows
};

rt::postgres::ConnectionSettings TestChannelAuthorization::settings() const
{
    rt::postgres::ConnectionSettings s;
    s.host = m_env->host;
    s.port = m_env->port;
    s.database = m_db->name();
    s.user = m_env->user;
    s.password = m_env->password.toUtf8();
    s.sslMode = QStringLiteral("disable");
    s.applicationName = QStringLiteral("tst_channel_authorization");
    return s;
}

void TestChannelAuthorization::initTestCase()
{
    QString error;
    m_env = PgEnv::fromEnvironment(&error);
    QVERIFY2(m_env, qPrintable(error));
    m_db = std::make_unique<ScratchDatabase>(*m_env, QStringLiteral("rt_authz"));
    QVERIFY2(m_db->isValid(), qPrintable(m_db->error()));

    m_super = std::make_unique<PgSession>(*m_env, m_db->name(), PgSession::Role::Super);
    QVERIFY2(m_super->isOpen(), qPrintable(m_super->lastError()));
    // Every later session of this database (the pool's, the migrations') runs at UTC+14.
    QVERIFY2(m_super->exec(QStringLiteral("ALTER DATABASE %1 SET timezone TO 'Pacific/Kiritimati'")
                                   .arg(m_db->name())),
             qPrintable(m_super->lastError()));

    // The tenant migrations, as the server applies them: MigrationRunner over a Connection of the
    // realtime role, which so becomes the owner of realtime.messages.
    rt::postgres::Connection connection;
    rt::postgres::MigrationRunner runner;
    QSignalSpy done(&runner, &rt::postgres::MigrationRunner::done);
    QSignalSpy failed(&runner, &rt::postgres::MigrationRunner::failed);
    QSignalSpy connectFailed(&connection, &rt::postgres::Connection::failed);
    connection.open(settings());
    runner.start(&connection, rt::postgres::tenantMigrations());
    QTRY_VERIFY_WITH_TIMEOUT(!done.isEmpty() || !failed.isEmpty() || !connectFailed.isEmpty(),
                             60000);
    if (!failed.isEmpty()) {
        QFAIL(qPrintable(failed.first().first().value<rt::postgres::PgError>().text()));
    }
    if (!connectFailed.isEmpty()) {
        QFAIL(qPrintable(connectFailed.first().first().value<rt::postgres::PgError>().text()));
    }
    QVERIFY(done.first().first().toInt() > 0);
    connection.close();

    QCOMPARE(m_super->scalar(QStringLiteral("SELECT pg_get_userbyid(relowner) FROM pg_class "
                                            "WHERE oid = 'realtime.messages'::regclass"))
                     .toString(),
             m_env->user);
    QVERIFY2(m_super->exec(QString::fromUtf8(kPolicies)), qPrintable(m_super->lastError()));

    m_pool = std::make_unique<rt::postgres::Pool>();
    QSignalSpy ready(m_pool.get(), &rt::postgres::Pool::ready);
    m_pool->open(settings(), 2);
    QTRY_VERIFY_WITH_TIMEOUT(!ready.isEmpty(), WaitMs);
    QTRY_COMPARE_WITH_TIMEOUT(m_pool->readyCount(), 2, WaitMs);
}

void TestChannelAuthorization::cleanupTestCase()
{
    m_pool.reset();
    m_super.reset();
    m_db.reset();
}

std::optional<ReadResult> TestChannelAuthorization::read(const AuthorizationRequest &r,
                                                         bool presence)
{
    std::optional<ReadResult> result;
    rt::cdc::checkRead(*m_pool, r, presence,
                       [&result](ReadResult answer) { result.emplace(std::move(answer)); });
    if (!QTest::qWaitFor([&result] { return result.has_value(); }, WaitMs)) {
        return std::nullopt;
    }
    return result;
}

std::optional<WriteResult> TestChannelAuthorization::write(const AuthorizationRequest &r,
                                                           const QByteArray &extension)
{
    std::optional<WriteResult> result;
    rt::cdc::checkWrite(*m_pool, r, extension,
                        [&result](WriteResult answer) { result.emplace(std::move(answer)); });
    if (!QTest::qWaitFor([&result] { return result.has_value(); }, WaitMs)) {
        return std::nullopt;
    }
    return result;
}

std::optional<ReplayResult> TestChannelAuthorization::replay(const QByteArray &topic,
                                                             qint64 sinceMs, int limit)
{
    std::optional<ReplayResult> result;
    rt::cdc::replay(*m_pool, topic, sinceMs, limit,
                    [&result](ReplayResult answer) { result.emplace(std::move(answer)); });
    if (!QTest::qWaitFor([&result] { return result.has_value(); }, WaitMs)) {
        return std::nullopt;
    }
    return result;
}

qint64 TestChannelAuthorization::databaseNowMs()
{
    return m_super->scalar(QStringLiteral("SELECT (extract(epoch FROM now()) * 1000)::bigint"))
            .toLongLong();
}

#define VERIFY_PERMISSIONS(result, broadcast, presence)                      \
  do {                                                                       \
    QVERIFY(result);                                                         \
    QVERIFY2(result->ok(), qPrintable(failureText(*result)));                \
    QCOMPARE(result->value().broadcastRead, std::optional<bool>(broadcast)); \
    QCOMPARE(result->value().presenceRead, std::optional<bool>(presence));   \
    QCOMPARE(result->value().broadcastWrite, std::optional<bool>());         \
    QCOMPARE(result->value().presenceWrite, std::optional<bool>());          \
  } while (false)

#define VERIFY_WRITE(result, expected)                        \
  do {                                                        \
    QVERIFY(result);                                          \
    QVERIFY2(result->ok(), qPrintable(failureText(*result))); \
    QCOMPARE(result->value(), expected);                      \
  } while (false)

#define VERIFY_FAILURE(result, expectedKind)                                               \
  do {                                                                                     \
    QVERIFY(result);                                                                       \
    QVERIFY2(!result->ok(), "the check succeeded");                                        \
    QVERIFY2(result->error().kind == expectedKind, qPrintable(describe(result->error()))); \
  } while (false)

void TestChannelAuthorization::readPerTopic()
{
    auto allowed = read(request("topic:room1"));
    VERIFY_PERMISSIONS(allowed, true, true);
    auto denied = read(request("room1"));
    VERIFY_PERMISSIONS(denied, false, false);
    // realtime.topic() is the sub-topic exactly: no prefix matching by accident.
    auto prefixed = read(request("realtime:topic:room1"));
    VERIFY_PERMISSIONS(prefixed, false, false);
}

void TestChannelAuthorization::readWithoutPresence()
{
    auto allowed = read(request("topic:room1"), false);
    VERIFY_PERMISSIONS(allowed, true, std::optional<bool>());
    auto presenceOnly = read(request("presence-only"), false);
    VERIFY_PERMISSIONS(presenceOnly, false, std::optional<bool>());
}

void TestChannelAuthorization::presenceOnlyRead()
{
    auto result = read(request("presence-only"));
    VERIFY_PERMISSIONS(result, false, true);
}

void TestChannelAuthorization::readBySubClaim()
{
    auto own = read(request("user:alice", "authenticated", "alice"));
    VERIFY_PERMISSIONS(own, true, true);
    auto other = read(request("user:alice", "authenticated", "bob"));
    VERIFY_PERMISSIONS(other, false, false);
}

void TestChannelAuthorization::headersReachPolicies()
{
    auto open = read(request("hdr", "anon", "", R"({"x-secret":"open-sesame","x-other":"1"})"));
    VERIFY_PERMISSIONS(open, true, true);
    auto wrong = read(request("hdr", "anon", "", R"({"x-secret":"guess"})"));
    VERIFY_PERMISSIONS(wrong, false, false);
    auto none = read(request("hdr", "anon", "", QByteArray()));
    VERIFY_PERMISSIONS(none, false, false);
}

void TestChannelAuthorization::writePerTopicAndExtension()
{
    auto broadcast = write(request("topic:room1"), "broadcast");
    VERIFY_WRITE(broadcast, true);
    auto presence = write(request("topic:room1"), "presence");
    VERIFY_WRITE(presence, true);
    auto denied = write(request("room1"), "broadcast");
    VERIFY_WRITE(denied, false);
    auto presenceOnlyPresence = write(request("presence-only"), "presence");
    VERIFY_WRITE(presenceOnlyPresence, true);
    auto presenceOnlyBroadcast = write(request("presence-only"), "broadcast");
    VERIFY_WRITE(presenceOnlyBroadcast, false);
    // anon has INSERT privilege but no INSERT policy: RLS refuses (42501) = false, no error.
    auto anon = write(request("topic:room1", "anon"), "broadcast");
    VERIFY_WRITE(anon, false);
}

void TestChannelAuthorization::writeDoesNotNeedRead()
{
    auto readResult = read(request("write-only"));
    VERIFY_PERMISSIONS(readResult, false, false);
    auto writeResult = write(request("write-only"), "broadcast");
    VERIFY_WRITE(writeResult, true);
}

void TestChannelAuthorization::unknownExtensionRefused()
{
    auto result = write(request("topic:room1"), "postgres_changes");
    VERIFY_FAILURE(result, AuthorizationFailure::RlsPolicyError);
}

void TestChannelAuthorization::nonexistentRoleIsPolicyError()
{
    auto readResult = read(request("topic:room1", "no_such_role_xyz"));
    VERIFY_FAILURE(readResult, AuthorizationFailure::RlsPolicyError);
    QCOMPARE(readResult->error().sqlState, QByteArray("22023"));
    QVERIFY2(readResult->error().detail.contains(QLatin1String("no_such_role_xyz")),
             qPrintable(readResult->error().detail));
    auto writeResult = write(request("topic:room1", "no_such_role_xyz"), "broadcast");
    VERIFY_FAILURE(writeResult, AuthorizationFailure::RlsPolicyError);
    QCOMPARE(rt::cdc::joinErrorReason(readResult->error(), "topic:room1"),
             QStringLiteral("Unauthorized: You do not have permissions to read from this Channel "
                            "topic: topic:room1"));
}

void TestChannelAuthorization::roleNoneIsRefused()
{
    // "none" would reset to the session user, the table's owner, and pass every policy.
    auto readResult = read(request("secret", "none"));
    VERIFY_FAILURE(readResult, AuthorizationFailure::RlsPolicyError);
    auto writeResult = write(request("secret", "none"), "broadcast");
    VERIFY_FAILURE(writeResult, AuthorizationFailure::RlsPolicyError);
}

void TestChannelAuthorization::policyErrorIsPolicyError()
{
    auto readResult = read(request("boom"));
    VERIFY_FAILURE(readResult, AuthorizationFailure::RlsPolicyError);
    QCOMPARE(readResult->error().sqlState, QByteArray("P0001"));
    QVERIFY2(readResult->error().detail.contains(QLatin1String("policy exploded")),
             qPrintable(readResult->error().detail));
    auto writeResult = write(request("boom"), "broadcast");
    VERIFY_FAILURE(writeResult, AuthorizationFailure::RlsPolicyError);
    // A policy raising check_violation is a policy error, not a missing partition.
    auto readCheck = read(request("check"));
    VERIFY_FAILURE(readCheck, AuthorizationFailure::RlsPolicyError);
    QCOMPARE(readCheck->error().sqlState, QByteArray("23514"));
    auto writeCheck = write(request("check"), "broadcast");
    VERIFY_FAILURE(writeCheck, AuthorizationFailure::RlsPolicyError);
    QCOMPARE(writeCheck->error().sqlState, QByteArray("23514"));
    // The connections stay usable after the failed transactions.
    auto after = read(request("topic:after-boom"));
    VERIFY_PERMISSIONS(after, true, true);
}

void TestChannelAuthorization::queryCanceled()
{
    auto readResult = read(request("cancel"));
    VERIFY_FAILURE(readResult, AuthorizationFailure::QueryCanceled);
    QCOMPARE(rt::cdc::joinErrorReason(readResult->error(), "cancel"),
             QStringLiteral("QueryCanceled: canceling statement due to user request"));
    auto writeResult = write(request("cancel"), "presence");
    VERIFY_FAILURE(writeResult, AuthorizationFailure::QueryCanceled);
}

void TestChannelAuthorization::serviceRoleBypassesRls()
{
    auto readResult = read(request("anything-at-all", "service_role"));
    VERIFY_PERMISSIONS(readResult, true, true);
    auto writeResult = write(request("anything-at-all", "service_role"), "broadcast");
    VERIFY_WRITE(writeResult, true);
    // Even where a policy would raise: BYPASSRLS does not evaluate policies.
    auto boom = read(request("boom", "service_role"));
    VERIFY_PERMISSIONS(boom, true, true);
}

void TestChannelAuthorization::roleWithoutPoliciesDenied()
{
    // anon has SELECT on the table but no policy on these topics.
    auto result = read(request("topic:room1", "anon"));
    VERIFY_PERMISSIONS(result, false, false);
}

void TestChannelAuthorization::concurrentChecksDoNotInterfere()
{
    // Sixteen checks in flight on two connections: settings, roles and probes of one must not
    // leak into another (each runs in its own transaction), and failures in between must not
    // leave a connection in a failed transaction.
    struct Case
    {
        AuthorizationRequest request;
        bool write = false;
        std::optional<bool> expected; // std::nullopt: an RlsPolicyError
    };
    QList<Case> cases;
    for (int round = 0; round < 4; ++round) {
        const QByteArray n = QByteArray::number(round);
        cases.append({ request("topic:c" + n), false, true });
        cases.append({ request("c" + n), true, false });
        cases.append({ request("boom"), round % 2 == 0, std::nullopt });
        cases.append({ request("topic:c" + n, "service_role"), true, true });
    }
    cases.append({ request("topic:x", "no_such_role_xyz"), false, std::nullopt });
    cases.append({ request("user:carol", "authenticated", "carol"), false, true });

    QList<std::optional<rt::Result<bool, AuthorizationError>>> results(cases.size());
    int answered = 0;
    for (qsizetype i = 0; i < cases.size(); ++i) {
        if (cases[i].write) {
            rt::cdc::checkWrite(*m_pool, cases[i].request, "broadcast",
                                [&results, &answered, i](WriteResult r) {
                                    results[i].emplace(std::move(r));
                                    ++answered;
                                });
        } else {
            rt::cdc::checkRead(
                    *m_pool, cases[i].request, true, [&results, &answered, i](ReadResult r) {
                        if (r.ok()) {
                            // Both extensions agree for these policies; a
                            // disagreement is recorded as an error to fail below.
                            if (r.value().broadcastRead != r.value().presenceRead) {
                                results[i].emplace(AuthorizationError{
                                        AuthorizationFailure::DatabaseUnavailable,
                                        QStringLiteral("extensions disagree"),
                                        {} });
                            } else {
                                results[i].emplace(r.value().broadcastRead.value_or(false));
                            }
                        } else {
                            results[i].emplace(r.error());
                        }
                        ++answered;
                    });
        }
    }
    QCOMPARE(answered, 0); // never answered from inside the call
    QTRY_COMPARE_WITH_TIMEOUT(answered, int(cases.size()), WaitMs);
    for (qsizetype i = 0; i < cases.size(); ++i) {
        const auto &result = results[i];
        QVERIFY(result);
        const QString label = QStringLiteral("case %1 (%2)")
                                      .arg(i)
                                      .arg(QString::fromUtf8(cases[i].request.topic));
        if (cases[i].expected) {
            QVERIFY2(result->ok(), qPrintable(label + QLatin1Char(' ') + failureText(*result)));
            QVERIFY2(result->value() == *cases[i].expected, qPrintable(label));
        } else {
            QVERIFY2(!result->ok(), qPrintable(label));
            QVERIFY2(result->error().kind == AuthorizationFailure::RlsPolicyError,
                     qPrintable(label + QLatin1Char(' ') + describe(result->error())));
        }
    }
}

void TestChannelAuthorization::nothingPersists()
{
    // Every check above rolled back: no probe row, no written row...
    QCOMPARE(m_super->scalar(QStringLiteral("SELECT count(*) FROM realtime.messages")).toInt(), 0);
    // ...and no role or setting left on either pool connection (two statements at once go to
    // the two connections).
    QList<std::optional<rt::postgres::StatementResult>> sessions(2);
    for (auto &session : sessions) {
        m_pool->run(
                rt::postgres::Statement{
                        "SELECT current_user || '|' || coalesce(current_setting('realtime.topic', "
                        "true), '') || '|' || coalesce(current_setting('request.jwt.claims', "
                        "true), '') || '|' || pg_backend_pid()",
                        {} },
                [&session](rt::postgres::StatementResult r) { session.emplace(std::move(r)); });
    }
    QTRY_VERIFY_WITH_TIMEOUT(sessions[0] && sessions[1], WaitMs);
    QSet<QByteArray> pids;
    for (const auto &session : sessions) {
        QVERIFY2(session->ok(), session->ok() ? "" : qPrintable(session->error().text()));
        const QList<QByteArray> parts = session->value().value(0, 0).split('|');
        QCOMPARE(parts.size(), 4);
        QCOMPARE(QString::fromUtf8(parts[0]), m_env->user);
        QCOMPARE(parts[1], QByteArray());
        QCOMPARE(parts[2], QByteArray());
        pids.insert(parts[3]);
    }
    QCOMPARE(pids.size(), 2);
}

void TestChannelAuthorization::databaseUnavailable()
{
    rt::postgres::ConnectionSettings s = settings();
    s.database = QStringLiteral("rt_authz_no_such_database");
    rt::postgres::Pool pool;
    QSignalSpy failed(&pool, &rt::postgres::Pool::failed);
    pool.open(s, 1);
    std::optional<ReadResult> result;
    rt::cdc::checkRead(pool, request("topic:room1"), true,
                       [&result](ReadResult r) { result.emplace(std::move(r)); });
    QTRY_VERIFY_WITH_TIMEOUT(result.has_value(), WaitMs);
    VERIFY_FAILURE(result, AuthorizationFailure::DatabaseUnavailable);
    QCOMPARE(rt::cdc::joinErrorReason(result->error(), "topic:room1"),
             QStringLiteral("UnableToConnectToProject: Realtime was unable to connect to the "
                            "project database"));

    std::optional<ReplayResult> replayed;
    rt::cdc::replay(pool, "t", 0, 5,
                    [&replayed](ReplayResult r) { replayed.emplace(std::move(r)); });
    QTRY_VERIFY_WITH_TIMEOUT(replayed.has_value(), WaitMs);
    VERIFY_FAILURE(replayed, AuthorizationFailure::DatabaseUnavailable);
}

void TestChannelAuthorization::replayNewestLimitOldestFirst()
{
    // Rows at UTC wall time now + offset, inserted as the superuser (the realtime.send path would
    // stamp session-local time, which the fixture deliberately makes UTC+14).
    struct Row
    {
        const char *label;
        const char *topic;
        bool isPrivate;
        const char *extension;
        int offsetSeconds;
        const char *payload; // jsonb, or nullptr
        const char *binaryHex; // bytea hex, or nullptr
    };
    const Row rows[] = {
        { "old", "replay:1", true, "broadcast", -3 * 3600, R"({"n":0})", nullptr },
        { "r1", "replay:1", true, "broadcast", -50, R"({"n":1})", nullptr },
        { "r2", "replay:1", true, "broadcast", -40, R"({"n":2,"s":"two"})", nullptr },
        { "r3", "replay:1", true, "broadcast", -30, nullptr, nullptr },
        { "r4", "replay:1", true, "broadcast", -20, R"({"n":4})", nullptr },
        { "r5", "replay:1", true, "broadcast", -10, R"({"n":5})", nullptr },
        { "bin", "replay:1", true, "broadcast", -5, nullptr, "00ff10" },
        { "public", "replay:1", false, "broadcast", -3, R"({"public":true})", nullptr },
        { "other", "replay:2", true, "broadcast", -2, R"({"other":true})", nullptr },
        { "presence", "replay:1", true, "presence", -1, R"({"presence":true})", nullptr },
        { "future", "replay:1", true, "broadcast", 600, R"({"future":true})", nullptr },
    };
    for (const Row &row : rows) {
        const QVariant id = m_super->scalar(
                QStringLiteral(
                        "INSERT INTO realtime.messages (topic, private, extension, event, payload, "
                        "binary_payload, inserted_at, updated_at) VALUES (?, ?, ?, ?, ?::jsonb, "
                        "decode(?, 'hex'), timezone('utc', now()) + make_interval(secs => "
                        "?::double precision), "
                        "timezone('utc', now())) RETURNING id::text"),
                QVariantList{ QString::fromLatin1(row.topic), row.isPrivate,
                              QString::fromLatin1(row.extension),
                              QString(QStringLiteral("ev-") + QString::fromLatin1(row.label)),
                              row.payload ? QVariant(QString::fromLatin1(row.payload))
                                          : QVariant(QMetaType::fromType<QString>()),
                              row.binaryHex ? QVariant(QString::fromLatin1(row.binaryHex))
                                            : QVariant(QMetaType::fromType<QString>()),
                              row.offsetSeconds });
        QVERIFY2(id.isValid(), qPrintable(m_super->lastError()));
        m_replayIds.insert(QString::fromLatin1(row.label), id.toString().toLatin1());
    }

    const qint64 now = databaseNowMs();
    auto all = replay("replay:1", now - 60000, 25);
    QVERIFY(all);
    QVERIFY2(all->ok(), qPrintable(failureText(*all)));
    const QList<StoredMessage> &messages = all->value();
    QStringList labels;
    for (const StoredMessage &m : messages) {
        labels.append(m_replayIds.key(m.id, QStringLiteral("?")));
    }
    QCOMPARE(labels,
             (QStringList{ QStringLiteral("r1"), QStringLiteral("r2"), QStringLiteral("r3"),
                           QStringLiteral("r4"), QStringLiteral("r5"), QStringLiteral("bin") }));
    QCOMPARE(messages[0].event, QByteArray("ev-r1"));
    QCOMPARE(messages[0].payload, QByteArray(R"({"n": 1})"));
    QVERIFY(!messages[0].isBinary);
    QCOMPARE(messages[1].payload, QByteArray(R"({"n": 2, "s": "two"})"));
    QCOMPARE(messages[2].payload, QByteArray("null")); // NULL payload
    QVERIFY(messages[5].isBinary);
    QCOMPARE(messages[5].payload, QByteArray("\x00\xff\x10", 3));
    QCOMPARE(messages[5].event, QByteArray("ev-bin"));

    // limit: the newest three, still oldest first.
    auto three = replay("replay:1", now - 60000, 3);
    QVERIFY(three && three->ok());
    QCOMPARE(three->value().size(), 3);
    QCOMPARE(three->value()[0].id, m_replayIds.value(QStringLiteral("r4")));
    QCOMPARE(three->value()[1].id, m_replayIds.value(QStringLiteral("r5")));
    QCOMPARE(three->value()[2].id, m_replayIds.value(QStringLiteral("bin")));
}

void TestChannelAuthorization::replaySince()
{
    QVERIFY(!m_replayIds.isEmpty());
    const qint64 now = databaseNowMs();
    auto recent = replay("replay:1", now - 25000, 25);
    QVERIFY(recent && recent->ok());
    QCOMPARE(recent->value().size(), 3); // r4, r5, bin
    QCOMPARE(recent->value()[0].id, m_replayIds.value(QStringLiteral("r4")));

    // Far enough back for the three-hour-old row. Had `since` or the upper bound been taken in
    // session-local time (UTC+14), this would return nothing, or the future row too.
    auto hours = replay("replay:1", now - 4 * 3600 * 1000, 25);
    QVERIFY(hours && hours->ok());
    QCOMPARE(hours->value().size(), 7);
    QCOMPARE(hours->value()[0].id, m_replayIds.value(QStringLiteral("old")));

    // since in the future: nothing (the +10 min row is beyond now + 1 minute anyway).
    auto future = replay("replay:1", now + 5000, 25);
    QVERIFY(future && future->ok());
    QVERIFY(future->value().isEmpty());

    // since = 0 and a negative since work (whole range), the future row stays out.
    auto epoch = replay("replay:1", 0, 25);
    QVERIFY(epoch && epoch->ok());
    QCOMPARE(epoch->value().size(), 7);
    auto negative = replay("replay:1", -377705116800000, 25);
    QVERIFY2(negative && negative->ok(),
             negative ? qPrintable(failureText(*negative)) : "no answer");
    QCOMPARE(negative->value().size(), 7);
}

void TestChannelAuthorization::replayLimitClamped()
{
    QVERIFY(!m_replayIds.isEmpty());
    const qint64 now = databaseNowMs();
    auto zero = replay("replay:1", now - 60000, 0);
    QVERIFY(zero && zero->ok());
    QCOMPARE(zero->value().size(), 1);
    QCOMPARE(zero->value()[0].id, m_replayIds.value(QStringLiteral("bin")));

    // 40 private rows more: at most 25 come back, the newest.
    QVERIFY2(m_super->exec(QStringLiteral(
                     "INSERT INTO realtime.messages (topic, private, extension, event, payload, "
                     "inserted_at) SELECT 'replay:many', true, 'broadcast', 'e' || i, "
                     "jsonb_build_object('i', i), timezone('utc', now()) - make_interval(secs => "
                     "100 - i) FROM generate_series(1, 40) AS i")),
             qPrintable(m_super->lastError()));
    auto many = replay("replay:many", now - 3600000, 1000);
    QVERIFY(many && many->ok());
    QCOMPARE(many->value().size(), 25);
    QCOMPARE(many->value().first().event, QByteArray("e16"));
    QCOMPARE(many->value().last().event, QByteArray("e40"));
}

void TestChannelAuthorization::replayEmptyTopic()
{
    auto none = replay("replay:nothing-here", 0, 25);
    QVERIFY(none && none->ok());
    QVERIFY(none->value().isEmpty());
}

void TestChannelAuthorization::missingPartition()
{
    // Today's (UTC) partition detached: the probe insert and the write check find no partition.
    const QString partition =
            m_super->scalar(QStringLiteral("SELECT 'messages_' || to_char(timezone('utc', "
                                           "now()), 'YYYY_MM_DD')"))
                    .toString();
    QVERIFY(!partition.isEmpty());
    QVERIFY2(m_super->exec(
                     QStringLiteral("ALTER TABLE realtime.messages DETACH PARTITION realtime.%1")
                             .arg(partition)),
             qPrintable(m_super->lastError()));

    auto readResult = read(request("topic:room1"));
    VERIFY_FAILURE(readResult, AuthorizationFailure::MissingPartition);
    QCOMPARE(readResult->error().sqlState, QByteArray("23514"));
    auto writeResult = write(request("topic:room1"), "broadcast");
    VERIFY_FAILURE(writeResult, AuthorizationFailure::MissingPartition);
    QCOMPARE(rt::cdc::joinErrorReason(readResult->error(), "topic:room1"),
             QStringLiteral("MissingPartition: Realtime was unable to find the expected messages "
                            "partition"));

    QVERIFY2(m_super->exec(QStringLiteral(
                                   "ALTER TABLE realtime.messages ATTACH PARTITION realtime.%1 FOR "
                                   "VALUES FROM (date_trunc('day', timezone('utc', now()))) TO "
                                   "(date_trunc('day', timezone('utc', now())) + interval '1 day')")
                                   .arg(partition)),
             qPrintable(m_super->lastError()));
    auto again = read(request("topic:room1"));
    VERIFY_PERMISSIONS(again, true, true);
}

void TestChannelAuthorization::parseReplayParams_data()
{
    QTest::addColumn<QByteArray>("json"); // the value of config.broadcast.replay
    QTest::addColumn<bool>("valid");
    QTest::addColumn<qint64>("since");
    QTest::addColumn<int>("limit");

    QTest::newRow("since and limit") << QByteArray(R"({"since":1700000000000,"limit":10})") << true
                                     << qint64(1700000000000) << 10;
    QTest::newRow("limit absent") << QByteArray(R"({"since":1700000000000})") << true
                                  << qint64(1700000000000) << 25;
    QTest::newRow("limit null") << QByteArray(R"({"since":5,"limit":null})") << true << qint64(5)
                                << 25;
    QTest::newRow("limit false") << QByteArray(R"({"since":5,"limit":false})") << true << qint64(5)
                                 << 25;
    QTest::newRow("limit 0 -> 1") << QByteArray(R"({"since":5,"limit":0})") << true << qint64(5)
                                  << 1;
    QTest::newRow("limit negative -> 1")
            << QByteArray(R"({"since":5,"limit":-3})") << true << qint64(5) << 1;
    QTest::newRow("limit 26 -> 25")
            << QByteArray(R"({"since":5,"limit":26})") << true << qint64(5) << 25;
    QTest::newRow("limit huge -> 25")
            << QByteArray(R"({"since":5,"limit":99999999999999999999})") << true << qint64(5) << 25;
    QTest::newRow("since 0") << QByteArray(R"({"since":0})") << true << qint64(0) << 25;
    QTest::newRow("since negative")
            << QByteArray(R"({"since":-1000})") << true << qint64(-1000) << 25;
    QTest::newRow("since at Elixir max")
            << QByteArray(R"({"since":253402300799999})") << true << qint64(253402300799999) << 25;
    QTest::newRow("extra keys") << QByteArray(R"({"since":7,"limit":2,"x":1})") << true << qint64(7)
                                << 2;

    QTest::newRow("empty object") << QByteArray("{}") << false << qint64(0) << 0;
    QTest::newRow("since missing") << QByteArray(R"({"limit":3})") << false << qint64(0) << 0;
    QTest::newRow("since null") << QByteArray(R"({"since":null})") << false << qint64(0) << 0;
    QTest::newRow("since string") << QByteArray(R"({"since":"not a number","limit":1})") << false
                                  << qint64(0) << 0;
    QTest::newRow("since numeric string")
            << QByteArray(R"({"since":"1700000000000"})") << false << qint64(0) << 0;
    QTest::newRow("since fraction") << QByteArray(R"({"since":1.5})") << false << qint64(0) << 0;
    QTest::newRow("since bool") << QByteArray(R"({"since":true})") << false << qint64(0) << 0;
    QTest::newRow("since beyond year 9999")
            << QByteArray(R"({"since":253402300800000})") << false << qint64(0) << 0;
    QTest::newRow("since before year -9999")
            << QByteArray(R"({"since":-377705116800001})") << false << qint64(0) << 0;
    QTest::newRow("limit string") << QByteArray(R"({"since":5,"limit":"not a number"})") << false
                                  << qint64(0) << 0;
    QTest::newRow("limit true") << QByteArray(R"({"since":5,"limit":true})") << false << qint64(0)
                                << 0;
    QTest::newRow("limit fraction")
            << QByteArray(R"({"since":5,"limit":2.5})") << false << qint64(0) << 0;
    QTest::newRow("limit object") << QByteArray(R"({"since":5,"limit":{}})") << false << qint64(0)
                                  << 0;
    QTest::newRow("replay array") << QByteArray("[1,2]") << false << qint64(0) << 0;
    QTest::newRow("replay string") << QByteArray(R"("yes")") << false << qint64(0) << 0;
    QTest::newRow("replay number") << QByteArray("1700000000000") << false << qint64(0) << 0;
    QTest::newRow("replay null") << QByteArray("null") << false << qint64(0) << 0;
}

void TestChannelAuthorization::parseReplayParams()
{
    QFETCH(QByteArray, json);
    QFETCH(bool, valid);
    QFETCH(qint64, since);
    QFETCH(int, limit);

    // Wrapped in an array so that scalars parse too.
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson("[" + json + "]", &parseError);
    QVERIFY2(parseError.error == QJsonParseError::NoError, qPrintable(parseError.errorString()));
    const auto result = rt::cdc::parseReplayParams(doc.array().at(0));
    QCOMPARE(result.ok(), valid);
    if (valid) {
        QCOMPARE(result.value().first, since);
        QCOMPARE(result.value().second, limit);
    } else {
        QCOMPARE(result.error(),
                 QStringLiteral("UnableToReplayMessages: Replay params are not valid"));
    }
}

void TestChannelAuthorization::joinReasons()
{
    const QByteArray topic = "room:ü";
    auto reason = [&topic](AuthorizationFailure kind, const QString &detail = {}) {
        return rt::cdc::joinErrorReason(AuthorizationError{ kind, detail, {} }, topic);
    };
    QCOMPARE(reason(AuthorizationFailure::RlsPolicyError, QStringLiteral("boom")),
             QStringLiteral("Unauthorized: You do not have permissions to read from this Channel "
                            "topic: room:ü"));
    QCOMPARE(rt::cdc::unauthorizedReason(topic), reason(AuthorizationFailure::RlsPolicyError));
    QCOMPARE(reason(AuthorizationFailure::QueryCanceled,
                    QStringLiteral("canceling statement due to statement timeout")),
             QStringLiteral("QueryCanceled: canceling statement due to statement timeout"));
    QCOMPARE(reason(AuthorizationFailure::MissingPartition),
             QStringLiteral("MissingPartition: Realtime was unable to find the expected messages "
                            "partition"));
    QCOMPARE(reason(AuthorizationFailure::DatabaseUnavailable),
             QStringLiteral("UnableToConnectToProject: Realtime was unable to connect to the "
                            "project database"));
    QCOMPARE(reason(AuthorizationFailure::ConnectionPoolExhausted),
             QStringLiteral("IncreaseConnectionPool: Please increase your connection pool size"));
    QCOMPARE(rt::cdc::replayFailedReason(),
             QStringLiteral("UnableToReplayMessages: Realtime was unable to replay messages"));
    QCOMPARE(rt::cdc::replayOnPublicChannelReason(),
             QStringLiteral("UnableToReplayMessages: Replay is not allowed for public channels"));
}

void TestChannelAuthorization::refreshShutdownMessages()
{
    auto message = [](AuthorizationFailure kind) {
        return rt::cdc::refreshShutdownMessage(AuthorizationError{ kind, {}, {} }, "room1");
    };
    QCOMPARE(message(AuthorizationFailure::RlsPolicyError),
             QStringLiteral("You do not have permissions to read from this Channel topic: room1"));
    QCOMPARE(message(AuthorizationFailure::QueryCanceled),
             QStringLiteral("Query was cancelled, please try again"));
    QCOMPARE(message(AuthorizationFailure::MissingPartition),
             QStringLiteral("Realtime was unable to connect to the project database"));
    QCOMPARE(message(AuthorizationFailure::DatabaseUnavailable),
             QStringLiteral("Realtime was unable to connect to the project database"));
    QCOMPARE(message(AuthorizationFailure::ConnectionPoolExhausted),
             QStringLiteral(":increase_connection_pool"));
}

void TestChannelAuthorization::httpFailures()
{
    auto failure = [](AuthorizationFailure kind) {
        return rt::cdc::httpFailure(AuthorizationError{ kind, {}, {} });
    };
    QCOMPARE(failure(AuthorizationFailure::RlsPolicyError).status, 422);
    QCOMPARE(failure(AuthorizationFailure::RlsPolicyError).body,
             QByteArray(R"({"message":"RLS policy error"})"));
    QCOMPARE(failure(AuthorizationFailure::QueryCanceled).status, 422);
    QCOMPARE(failure(AuthorizationFailure::QueryCanceled).body,
             QByteArray(R"({"message":"Query canceled"})"));
    QCOMPARE(failure(AuthorizationFailure::MissingPartition).status, 422);
    QCOMPARE(failure(AuthorizationFailure::MissingPartition).body,
             QByteArray(R"({"message":"Missing messages partition"})"));
    QCOMPARE(failure(AuthorizationFailure::DatabaseUnavailable).status, 422);
    QCOMPARE(failure(AuthorizationFailure::DatabaseUnavailable).body,
             QByteArray(R"({"message":"Tenant database unavailable"})"));
    QCOMPARE(failure(AuthorizationFailure::ConnectionPoolExhausted).status, 429);
    QCOMPARE(failure(AuthorizationFailure::ConnectionPoolExhausted).body,
             QByteArray(R"({"message":"Connection pool exhausted"})"));
}

namespace {

using PersistResult = rt::Result<rt::cdc::PersistOutcome, AuthorizationError>;

std::optional<PersistResult> persistOn(rt::postgres::Pool &pool,
                                       const rt::cdc::PersistRequest &request)
{
    std::optional<PersistResult> result;
    rt::cdc::persist(pool, request,
                     [&result](PersistResult answer) { result.emplace(std::move(answer)); });
    if (!QTest::qWaitFor([&result] { return result.has_value(); }, WaitMs)) {
        return std::nullopt;
    }
    return result;
}

} // namespace

void TestChannelAuthorization::persistStoresAllowedMessages()
{
    rt::cdc::PersistRequest json;
    json.authorization = request("topic:saved");
    json.event = "note";
    json.payload = R"({"n":1})";
    json.ttlSeconds = 60;
    const auto stored = persistOn(*m_pool, json);
    QVERIFY(stored);
    QVERIFY2(stored->ok(), qPrintable(failureText(*stored)));
    QVERIFY(stored->value().stored);
    const QString id = QString::fromLatin1(stored->value().id);
    QCOMPARE(id.size(), 36);
    // Stored as a private broadcast the WAL must not broadcast again, expiring after its ttl.
    QCOMPARE(m_super->scalar(QStringLiteral("SELECT format('%s|%s|%s|%s|%s|%s', topic, extension, "
                                            "event, private, payload, skip_broadcast) FROM "
                                            "realtime.messages WHERE id = ?::uuid"),
                             { id })
                     .toString(),
             QStringLiteral(R"(topic:saved|broadcast|note|t|{"n": 1}|t)"));
    QCOMPARE(m_super->scalar(QStringLiteral(
                                     "SELECT extract(epoch FROM expires_at - inserted_at)::int "
                                     "FROM realtime.messages WHERE id = ?::uuid"),
                             { id })
                     .toInt(),
             60);
    // The probe row of the check is gone; binary payloads go to binary_payload.
    QCOMPARE(m_super->scalar(QStringLiteral("SELECT count(*) FROM realtime.messages WHERE "
                                            "extension = 'persistence'"))
                     .toInt(),
             0);
    rt::cdc::PersistRequest binary = json;
    binary.payload = QByteArray("\x00\xff", 2);
    binary.isBinary = true;
    binary.ttlSeconds.reset();
    const auto raw = persistOn(*m_pool, binary);
    QVERIFY(raw && raw->ok() && raw->value().stored);
    QCOMPARE(m_super->scalar(QStringLiteral("SELECT format('%s|%s', encode(binary_payload, 'hex'), "
                                            "expires_at IS NULL) FROM realtime.messages WHERE "
                                            "id = ?::uuid"),
                             { QString::fromLatin1(raw->value().id) })
                     .toString(),
             QStringLiteral("00ff|t"));
}

void TestChannelAuthorization::persistRefusedStoresNothing()
{
    const int before =
            m_super->scalar(QStringLiteral("SELECT count(*) FROM realtime.messages")).toInt();
    // presence-only may write presence, not persistence.
    rt::cdc::PersistRequest refused;
    refused.authorization = request("presence-only");
    refused.event = "note";
    refused.payload = R"({"n":2})";
    const auto outcome = persistOn(*m_pool, refused);
    QVERIFY(outcome);
    QVERIFY2(outcome->ok(), qPrintable(failureText(*outcome)));
    QVERIFY(!outcome->value().stored);
    refused.authorization = request("topic:saved", "none");
    const auto none = persistOn(*m_pool, refused);
    QVERIFY(none && !none->ok());
    QCOMPARE(m_super->scalar(QStringLiteral("SELECT count(*) FROM realtime.messages")).toInt(),
             before);
}

void TestChannelAuthorization::persistFromMetadata_data()
{
    QTest::addColumn<QByteArray>("metadata");
    QTest::addColumn<bool>("asked");
    QTest::addColumn<bool>("valid");
    QTest::addColumn<int>("ttl"); // 0: none
    QTest::newRow("no metadata") << QByteArray() << false << true << 0;
    QTest::newRow("other keys") << QByteArray(R"({"x":1})") << false << true << 0;
    QTest::newRow("persist false") << QByteArray(R"({"persist":false})") << false << true << 0;
    QTest::newRow("persist null") << QByteArray(R"({"persist":null})") << false << true << 0;
    QTest::newRow("persist true") << QByteArray(R"({"persist":true})") << true << true << 0;
    QTest::newRow("ttl") << QByteArray(R"({"persist":{"ttl":60}})") << true << true << 60;
    QTest::newRow("ttl at the cap")
            << QByteArray(R"({"persist":{"ttl":259200}})") << true << true << 259200;
    QTest::newRow("ttl over the cap")
            << QByteArray(R"({"persist":{"ttl":259201}})") << true << false << 0;
    QTest::newRow("ttl zero") << QByteArray(R"({"persist":{"ttl":0}})") << true << false << 0;
    QTest::newRow("ttl negative") << QByteArray(R"({"persist":{"ttl":-1}})") << true << false << 0;
    QTest::newRow("ttl fraction") << QByteArray(R"({"persist":{"ttl":1.5}})") << true << false << 0;
    QTest::newRow("ttl string") << QByteArray(R"({"persist":{"ttl":"60"}})") << true << false << 0;
    QTest::newRow("empty object") << QByteArray(R"({"persist":{}})") << true << false << 0;
    QTest::newRow("a string") << QByteArray(R"({"persist":"yes"})") << true << false << 0;
}

void TestChannelAuthorization::persistFromMetadata()
{
    QFETCH(QByteArray, metadata);
    QFETCH(bool, asked);
    QFETCH(bool, valid);
    QFETCH(int, ttl);
    const rt::cdc::PersistOption option = rt::cdc::persistFromMetadata(metadata);
    QCOMPARE(option.asked, asked);
    QCOMPARE(option.valid, valid);
    QCOMPARE(option.ttlSeconds.value_or(0), ttl);
}

void TestChannelAuthorization::persistFromQuery()
{
    using rt::cdc::persistFromQuery;
    QVERIFY(!persistFromQuery({}, {}, false, false).asked);
    QVERIFY(!persistFromQuery("false", {}, true, false).asked);
    QVERIFY(persistFromQuery("true", {}, true, false).asked);
    QVERIFY(!persistFromQuery("true", {}, true, false).ttlSeconds);
    const rt::cdc::PersistOption ttl = persistFromQuery({}, "60", false, true);
    QVERIFY(ttl.asked && ttl.valid);
    QCOMPARE(ttl.ttlSeconds.value_or(0), 60);
    for (const char *bad : { "0", "-1", "x", "60s", " 60", "259201", "" }) {
        const rt::cdc::PersistOption option = persistFromQuery({}, bad, false, true);
        QVERIFY2(option.asked && !option.valid, bad);
    }
}

QTEST_GUILESS_MAIN(TestChannelAuthorization)
#include "tst_channel_authorization.moc"
