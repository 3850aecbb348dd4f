// The cluster configuration admin API over real HTTP (an IoLoop, a Listener and the Router on
// this thread), against a fake ClusterConfigAccess that does compare-and-swap like the backends:
// authorisation, listing with problems, create/replace/delete with expected revisions, 409 with
// the current value, 422 before the backend, 503 when it is unreachable, TTL passed through, and
// answers that come from another thread.
#include "server/auth/jwt.h"
#include "server/http/admin_auth.h"
#include "server/http/cluster_config_routes.h"
#include "server/http/router.h"
#include "server/node/cluster_config.h"
#include "server/transport/http_connection.h"
#include "server/transport/io_loop.h"
#include "server/transport/listener.h"
#include "shared/core/clock.h"
#include "tests/support/server/raw_http.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMutex>
#include <QTest>

#include <thread>

using namespace rt;
using rt::testsupport::exchange;
using rt::testsupport::RawResponse;

namespace {

const QByteArray AdminSecret = QByteArrayLiteral("config-admin-secret-0123456789abcdef");

// Compare-and-swap over a map, like both ClusterBackends; thread-safe. Answers synchronously,
// from a separate thread, or as unavailable.
class FakeAccess final : public http::ClusterConfigAccess
{
public:
    enum class Answer { Inline, OtherThread, Unavailable };

    struct Call
    {
        QString op; // "put" / "remove"
        QString key;
        QByteArray value;
        qint64 expected = 0;
        int ttl = 0;
    };

    cluster::ConfigSnapshot snapshot() const override
    {
        const QMutexLocker lock(&m_mutex);
        return m_snapshot;
    }
    bool isAvailable() const override
    {
        const QMutexLocker lock(&m_mutex);
        return m_available;
    }
    void put(const QString &key, const QByteArray &value, qint64 expected, int ttl,
             Done done) override
    {
        cluster::ConfigWriteResult result =
                write(Call{ QStringLiteral("put"), key, value, expected, ttl });
        answer(std::move(result), std::move(done));
    }
    void remove(const QString &key, qint64 expected, Done done) override
    {
        cluster::ConfigWriteResult result =
                write(Call{ QStringLiteral("remove"), key, {}, expected, 0 });
        answer(std::move(result), std::move(done));
    }

    void setAvailable(bool available)
    {
        const QMutexLocker lock(&m_mutex);
        m_available = available;
    }
    void setAnswer(Answer answer)
    {
        const QMutexLocker lock(&m_mutex);
        m_answer = answer;
    }
    void store(const QString &key, const QByteArray &value)
    {
        const QMutexLocker lock(&m_mutex);
        ++m_snapshot.revision;
        m_snapshot.entries.insert(key, { key, value, m_snapshot.revision, false });
    }
    QList<Call> calls() const
    {
        const QMutexLocker lock(&m_mutex);
        return m_calls;
    }
    void joinThreads()
    {
        for (std::thread &thread : m_threads) {
            thread.join();
        }
        m_threads.clear();
    }

private:
    cluster::ConfigWriteResult write(const Call &call)
    {
        const QMutexLocker lock(&m_mutex);
        m_calls.append(call);
        if (m_answer == Answer::Unavailable) {
            return cluster::ConfigWriteError{ cluster::ConfigWriteError::Kind::Unavailable,
                                              std::nullopt, QStringLiteral("etcd timed out") };
        }
        const std::optional<cluster::ConfigEntry> current = m_snapshot.find(call.key);
        const bool matches = call.expected == 0
                ? (call.op == QLatin1String("remove") || !current)
                : (current && current->modRevision == call.expected);
        if (!matches) {
            return cluster::ConfigWriteError{ cluster::ConfigWriteError::Kind::Conflict, current,
                                              QStringLiteral("revision mismatch") };
        }
        ++m_snapshot.revision;
        if (call.op == QLatin1String("put")) {
            m_snapshot.entries.insert(call.key,
                                      { call.key, call.value, m_snapshot.revision, call.ttl > 0 });
        } else {
            m_snapshot.entries.remove(call.key);
        }
        return m_snapshot.revision;
    }
    void answer(cluster::ConfigWriteResult result, Done done)
    {
        Answer how;
        {
            const QMutexLocker lock(&m_mutex);
            how = m_answer;
        }
        if (how == Answer::OtherThread) {
            m_threads.emplace_back([result = std::move(result), done = std::move(done)] {
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
                done(result);
            });
        } else {
            done(std::move(result));
        }
    }

    mutable QMutex m_mutex;
    cluster::ConfigSnapshot m_snapshot; // guarded by m_mutex
    bool m_available = true;
    Answer m_answer = Answer::Inline;
    QList<Call> m_calls;
    std::vector<std::thread> m_threads; // test thread only
};

QByteArray bearer()
{
    return "Bearer "
            + auth::signHmac(
                    QJsonObject{ { QStringLiteral("role"), QStringLiteral("service_role") } },
                    AdminSecret);
}

QJsonObject bodyOf(const RawResponse &response)
{
    return QJsonDocument::fromJson(response.body).object();
}

} // namespace

class ClusterConfigRoutesTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void init();
    void cleanup();
    void refusesWithoutToken();
    void listsEntriesAndProblems();
    void createReplaceAndConflict();
    void invalidWritesNeverReachTheBackend_data();
    void invalidWritesNeverReachTheBackend();
    void unavailableIs503();
    void ttlIsPassedThrough();
    void deleteIsCompareAndSwap();
    void answersFromAnotherThread();

private:
    RawResponse request(const QByteArray &method, const QByteArray &target,
                        const QByteArray &body = {}, bool authorised = true)
    {
        QByteArray text = method + ' ' + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
        if (authorised) {
            text += "Authorization: " + bearer() + "\r\n";
        }
        if (!body.isNull()) {
            text += "Content-Type: application/json\r\nContent-Length: "
                    + QByteArray::number(body.size()) + "\r\n";
        }
        return exchange(m_listener->serverPort(), text + "\r\n" + body);
    }
    RawResponse put(const QByteArray &key, const QJsonObject &body)
    {
        return request("PUT", "/api/cluster/config/" + key,
                       QJsonDocument(body).toJson(QJsonDocument::Compact));
    }

    ManualClock m_clock;
    std::unique_ptr<http::AdminAuth> m_auth;
    FakeAccess m_access;
    std::unique_ptr<http::ClusterConfigRoutes> m_routes;
    http::Router m_router;
    transport::IoLoop *m_loop = nullptr;
    std::unique_ptr<transport::Listener> m_listener;
};

void ClusterConfigRoutesTest::initTestCase()
{
    m_auth = std::make_unique<http::AdminAuth>(
            QList<QByteArray>{ AdminSecret }, QList<QByteArray>{}, QJsonObject{},
            QStringList{ QStringLiteral("service_role") }, m_clock);
    m_routes = std::make_unique<http::ClusterConfigRoutes>(
            *m_auth, m_access, &node::validateConfigEntry, &node::validateConfigKeyName);
    m_routes->registerOn(m_router);
    m_loop = new transport::IoLoop( // NOLINT: deleted in cleanupTestCase()
            [this](transport::TcpConnection &connection) {
                connection.setHandler(std::make_unique<transport::HttpConnection>(
                        connection, m_router, transport::HttpConnection::Limits{}));
            },
            transport::IoLoop::Limits{}, this);
    m_listener = std::make_unique<transport::Listener>(std::vector<transport::IoLoop *>{ m_loop });
    QVERIFY(m_listener->listen(QHostAddress::LocalHost, 0));
}

void ClusterConfigRoutesTest::cleanupTestCase()
{
    // Connections go before the router they use.
    m_listener.reset();
    delete m_loop;
    m_loop = nullptr;
}

void ClusterConfigRoutesTest::init()
{
    m_access.setAvailable(true);
    m_access.setAnswer(FakeAccess::Answer::Inline);
}

void ClusterConfigRoutesTest::cleanup()
{
    m_access.joinThreads();
}

void ClusterConfigRoutesTest::refusesWithoutToken()
{
    const qsizetype callsBefore = m_access.calls().size();
    RawResponse response = request("GET", "/api/cluster/config", {}, false);
    QCOMPARE(response.status, 403);
    response = request("PUT", "/api/cluster/config/region_mapping", "{\"value\":{}}", false);
    QCOMPARE(response.status, 403);
    response = request("DELETE", "/api/cluster/config/region_mapping", {}, false);
    QCOMPARE(response.status, 403);
    QCOMPARE(m_access.calls().size(), callsBefore);
    // A token signed with another secret is no better.
    QByteArray text = "GET /api/cluster/config HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
            + auth::signHmac(QJsonObject{}, "other-secret-0123456789abcdefghijk") + "\r\n\r\n";
    QCOMPARE(exchange(m_listener->serverPort(), text).status, 403);
    // Nor is the right secret with a client's role (the self-host tenant's anon key).
    text = "PUT /api/cluster/config/region_mapping HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
            + auth::signHmac(QJsonObject{ { QStringLiteral("role"), QStringLiteral("anon") } },
                             AdminSecret)
            + "\r\nContent-Length: 12\r\n\r\n{\"value\":{}}";
    QCOMPARE(exchange(m_listener->serverPort(), text).status, 403);
    QCOMPARE(m_access.calls().size(), callsBefore);
}

void ClusterConfigRoutesTest::listsEntriesAndProblems()
{
    m_access.store(QStringLiteral("list.junk"), "this is not json");
    m_access.store(QStringLiteral("tenant_limits.listed"), R"({"max_events_per_second": 0})");
    m_access.store(QStringLiteral("tenant_flags.listed"), R"({"suspend":true})");
    const RawResponse response = request("GET", "/api/cluster/config");
    QCOMPARE(response.status, 200);
    QVERIFY(response.header("content-type").startsWith("application/json"));
    const QJsonObject body = bodyOf(response);
    QCOMPARE(body.value(QLatin1String("revision")).toInteger(), m_access.snapshot().revision);
    QCOMPARE(body.value(QLatin1String("available")).toBool(), true);
    QHash<QString, QJsonObject> entries;
    for (const QJsonValue &entry : body.value(QLatin1String("entries")).toArray()) {
        entries.insert(entry[QLatin1String("key")].toString(), entry.toObject());
    }
    const QJsonObject flags = entries.value(QStringLiteral("tenant_flags.listed"));
    // The value is the JSON value itself, not its text.
    QCOMPARE(flags.value(QLatin1String("value")).toObject(),
             (QJsonObject{ { QStringLiteral("suspend"), true } }));
    QCOMPARE(flags.value(QLatin1String("mod_revision")).toInteger(),
             m_access.snapshot().find(QStringLiteral("tenant_flags.listed"))->modRevision);
    QCOMPARE(flags.value(QLatin1String("temporary")).toBool(true), false);
    // Text that is not JSON is shown as a string.
    QCOMPARE(entries.value(QStringLiteral("list.junk")).value(QLatin1String("value")).toString(),
             QStringLiteral("this is not json"));

    QHash<QString, QString> problems;
    for (const QJsonValue &problem : body.value(QLatin1String("problems")).toArray()) {
        problems.insert(problem[QLatin1String("key")].toString(),
                        problem[QLatin1String("message")].toString());
    }
    QVERIFY(problems.value(QStringLiteral("list.junk")).startsWith(QLatin1String("unknown key")));
    QVERIFY(problems.value(QStringLiteral("tenant_limits.listed"))
                    .contains(QLatin1String("max_events_per_second must be a positive integer")));
    QVERIFY(!problems.contains(QStringLiteral("tenant_flags.listed")));

    m_access.setAvailable(false);
    QCOMPARE(bodyOf(request("GET", "/api/cluster/config")).value(QLatin1String("available")),
             QJsonValue(false));
}

void ClusterConfigRoutesTest::createReplaceAndConflict()
{
    const QJsonObject first{ { QStringLiteral("max_concurrent_users"), 500 } };
    RawResponse response = put("tenant_limits.acme", { { QStringLiteral("value"), first } });
    QCOMPARE(response.status, 200);
    const qint64 created = bodyOf(response).value(QLatin1String("revision")).toInteger();
    QVERIFY(created > 0);
    QCOMPARE(m_access.calls().last().value, QByteArray(R"({"max_concurrent_users":500})"));
    QCOMPARE(m_access.calls().last().expected, 0);

    // Creating it again (no expected_revision) conflicts: 409 with what is stored.
    const QJsonObject second{ { QStringLiteral("max_concurrent_users"), 900 } };
    response = put("tenant_limits.acme", { { QStringLiteral("value"), second } });
    QCOMPARE(response.status, 409);
    QJsonObject body = bodyOf(response);
    QVERIFY2(
            body.value(QLatin1String("error")).toString().contains(QLatin1String("already exists")),
            response.body.constData());
    QCOMPARE(body.value(QLatin1String("current"))[QLatin1String("value")].toObject(), first);
    QCOMPARE(body.value(QLatin1String("current"))[QLatin1String("mod_revision")].toInteger(),
             created);

    // Replacing with a stale revision conflicts too, and nothing is overwritten.
    response = put("tenant_limits.acme",
                   { { QStringLiteral("value"), second },
                     { QStringLiteral("expected_revision"), created - 1 } });
    QCOMPARE(response.status, 409);
    QCOMPARE(bodyOf(response)
                     .value(QLatin1String("current"))[QLatin1String("mod_revision")]
                     .toInteger(),
             created);
    QCOMPARE(m_access.snapshot().find(QStringLiteral("tenant_limits.acme"))->value,
             QByteArray(R"({"max_concurrent_users":500})"));

    // With the current revision it replaces.
    response = put("tenant_limits.acme",
                   { { QStringLiteral("value"), second },
                     { QStringLiteral("expected_revision"), created } });
    QCOMPARE(response.status, 200);
    QVERIFY(bodyOf(response).value(QLatin1String("revision")).toInteger() > created);
    QCOMPARE(m_access.snapshot().find(QStringLiteral("tenant_limits.acme"))->value,
             QByteArray(R"({"max_concurrent_users":900})"));

    // Expecting a key that does not exist: 409 with current null.
    response =
            put("tenant_limits.ghost",
                { { QStringLiteral("value"), first }, { QStringLiteral("expected_revision"), 3 } });
    QCOMPARE(response.status, 409);
    QVERIFY(bodyOf(response).value(QLatin1String("current")).isNull());
}

void ClusterConfigRoutesTest::invalidWritesNeverReachTheBackend_data()
{
    QTest::addColumn<QByteArray>("key");
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("error");
    QTest::newRow("bad limit") << QByteArray("tenant_limits.acme")
                               << QByteArray(R"({"value": {"max_events_per_second": -3}})") << 422
                               << QStringLiteral(
                                          "max_events_per_second must be a positive integer");
    QTest::newRow("unknown limit")
            << QByteArray("tenant_limits.acme") << QByteArray(R"({"value": {"max_users": 3}})")
            << 422 << QStringLiteral("unknown field \"max_users\"");
    QTest::newRow("unknown key") << QByteArray("feature_x") << QByteArray(R"({"value": {}})") << 422
                                 << QStringLiteral("unknown key");
    QTest::newRow("bad mapping") << QByteArray("region_mapping")
                                 << QByteArray(R"({"value": {"eu": 5}})") << 422
                                 << QStringLiteral("must be a string");
    QTest::newRow("scalar value") << QByteArray("tenant_flags.acme")
                                  << QByteArray(R"({"value": true})") << 422
                                  << QStringLiteral("JSON");
    QTest::newRow("no value") << QByteArray("tenant_flags.acme")
                              << QByteArray(R"({"expected_revision": 0})") << 422
                              << QStringLiteral("\"value\" is required");
    QTest::newRow("typo field") << QByteArray("tenant_flags.acme")
                                << QByteArray(R"({"value": {}, "ttl": 5})") << 422
                                << QStringLiteral("unknown field \"ttl\"");
    QTest::newRow("negative revision")
            << QByteArray("tenant_flags.acme")
            << QByteArray(R"({"value": {}, "expected_revision": -1})") << 422
            << QStringLiteral("expected_revision must be a non-negative integer");
    QTest::newRow("string revision") << QByteArray("tenant_flags.acme")
                                     << QByteArray(R"({"value": {}, "expected_revision": "4"})")
                                     << 422 << QStringLiteral("expected_revision");
    QTest::newRow("fractional ttl")
            << QByteArray("tenant_flags.acme") << QByteArray(R"({"value": {}, "ttl_seconds": 1.5})")
            << 422 << QStringLiteral("ttl_seconds must be an integer");
    QTest::newRow("huge ttl") << QByteArray("tenant_flags.acme")
                              << QByteArray(R"({"value": {}, "ttl_seconds": 1e12})") << 422
                              << QStringLiteral("ttl_seconds must be an integer");
    QTest::newRow("array body") << QByteArray("tenant_flags.acme") << QByteArray("[1]") << 422
                                << QStringLiteral("must be a JSON object");
    QTest::newRow("slash in key") << QByteArray("tenant_limits%2Facme")
                                  << QByteArray(R"({"value": {}})") << 422
                                  << QStringLiteral("printable ASCII");
    QTest::newRow("not json") << QByteArray("tenant_flags.acme") << QByteArray("{value") << 400
                              << QString();
}

void ClusterConfigRoutesTest::invalidWritesNeverReachTheBackend()
{
    QFETCH(QByteArray, key);
    QFETCH(QByteArray, body);
    QFETCH(int, status);
    QFETCH(QString, error);
    const qsizetype callsBefore = m_access.calls().size();
    const RawResponse response = request("PUT", "/api/cluster/config/" + key, body);
    QCOMPARE(response.status, status);
    if (!error.isEmpty()) {
        QVERIFY2(bodyOf(response).value(QLatin1String("error")).toString().contains(error),
                 response.body.constData());
    }
    QCOMPARE(m_access.calls().size(), callsBefore);
}

void ClusterConfigRoutesTest::unavailableIs503()
{
    // Known unreachable: refused at once, the backend is not asked.
    m_access.setAvailable(false);
    const qsizetype callsBefore = m_access.calls().size();
    RawResponse response = put("tenant_flags.down", { { QStringLiteral("value"), QJsonObject{} } });
    QCOMPARE(response.status, 503);
    QVERIFY(bodyOf(response)
                    .value(QLatin1String("error"))
                    .toString()
                    .contains(QLatin1String("unavailable")));
    response = request("DELETE", "/api/cluster/config/tenant_flags.down");
    QCOMPARE(response.status, 503);
    QCOMPARE(m_access.calls().size(), callsBefore);
    // Invalid still wins over unavailable: the caller learns what to fix first.
    response = put("tenant_flags.down", { { QStringLiteral("value"), 3 } });
    QCOMPARE(response.status, 422);

    // The backend failing the write itself.
    m_access.setAvailable(true);
    m_access.setAnswer(FakeAccess::Answer::Unavailable);
    response = put("tenant_flags.down", { { QStringLiteral("value"), QJsonObject{} } });
    QCOMPARE(response.status, 503);
    QVERIFY(bodyOf(response)
                    .value(QLatin1String("error"))
                    .toString()
                    .contains(QLatin1String("etcd timed out")));
    QVERIFY(!m_access.snapshot().find(QStringLiteral("tenant_flags.down")));
}

void ClusterConfigRoutesTest::ttlIsPassedThrough()
{
    const RawResponse response =
            put("tenant_limits.boost",
                { { QStringLiteral("value"),
                    QJsonObject{ { QStringLiteral("max_events_per_second"), 5000 } } },
                  { QStringLiteral("ttl_seconds"), 21600 } });
    QCOMPARE(response.status, 200);
    QCOMPARE(m_access.calls().last().op, QStringLiteral("put"));
    QCOMPARE(m_access.calls().last().key, QStringLiteral("tenant_limits.boost"));
    QCOMPARE(m_access.calls().last().ttl, 21600);
    // Listed as temporary.
    for (const QJsonValue &entry :
         bodyOf(request("GET", "/api/cluster/config")).value(QLatin1String("entries")).toArray()) {
        if (entry[QLatin1String("key")].toString() == QLatin1String("tenant_limits.boost")) {
            QCOMPARE(entry[QLatin1String("temporary")].toBool(), true);
            return;
        }
    }
    QFAIL("the temporary entry is not listed");
}

void ClusterConfigRoutesTest::deleteIsCompareAndSwap()
{
    m_access.store(QStringLiteral("tenant_flags.gone"), R"({"suspend":true})");
    const qint64 revision =
            m_access.snapshot().find(QStringLiteral("tenant_flags.gone"))->modRevision;

    RawResponse response = request("DELETE",
                                   "/api/cluster/config/tenant_flags.gone?expected_revision="
                                           + QByteArray::number(revision + 100));
    QCOMPARE(response.status, 409);
    QCOMPARE(bodyOf(response).value(QLatin1String("current"))[QLatin1String("value")].toObject(),
             (QJsonObject{ { QStringLiteral("suspend"), true } }));
    QVERIFY(m_access.snapshot().find(QStringLiteral("tenant_flags.gone")));

    response = request("DELETE", "/api/cluster/config/tenant_flags.gone?expected_revision=abc");
    QCOMPARE(response.status, 422);

    response = request("DELETE",
                       "/api/cluster/config/tenant_flags.gone?expected_revision="
                               + QByteArray::number(revision));
    QCOMPARE(response.status, 200);
    QVERIFY(bodyOf(response).value(QLatin1String("revision")).toInteger() > revision);
    QVERIFY(!m_access.snapshot().find(QStringLiteral("tenant_flags.gone")));
    QCOMPARE(m_access.calls().last().op, QStringLiteral("remove"));
    QCOMPARE(m_access.calls().last().expected, revision);

    // Any well-formed key can be deleted, even of an unknown kind (a stray entry).
    m_access.store(QStringLiteral("stray"), "x");
    response = request("DELETE", "/api/cluster/config/stray");
    QCOMPARE(response.status, 200);
    QCOMPARE(m_access.calls().last().expected, 0);
}

void ClusterConfigRoutesTest::answersFromAnotherThread()
{
    m_access.setAnswer(FakeAccess::Answer::OtherThread);
    RawResponse response = put("region_mapping",
                               { { QStringLiteral("value"),
                                   QJsonObject{ { QStringLiteral("ap-northeast-2"),
                                                  QStringLiteral("ap-northeast-1") } } } });
    QCOMPARE(response.status, 200);
    response = put("region_mapping", { { QStringLiteral("value"), QJsonObject{} } });
    QCOMPARE(response.status, 409);
    QCOMPARE(bodyOf(response).value(QLatin1String("current"))[QLatin1String("value")].toObject(),
             (QJsonObject{
                     { QStringLiteral("ap-northeast-2"), QStringLiteral("ap-northeast-1") } }));
}

QTEST_GUILESS_MAIN(ClusterConfigRoutesTest)
#include "tst_cluster_config_routes.moc"
