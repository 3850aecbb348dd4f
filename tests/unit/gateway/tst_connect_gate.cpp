// Connect-time checks of a socket upgrade (spec server §1.4): statuses, exact JSON bodies, the
// connect-error backoff, token from x-api-key or the apikey query, tenant from Host, and the
// REST routes on the same port.
#include "server/auth/jwt.h"
#include "tests/support/server/raw_http.h"
#include "tests/support/server/test_server.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonObject>
#include <QTest>

using rt::testsupport::TestServer;

namespace {

using rt::testsupport::exchange;
using rt::testsupport::RawResponse;

QByteArray upgradeRequest(const QByteArray &target, const QByteArray &host,
                          const QByteArray &extraHeaders = {})
{
    return "GET " + target + " HTTP/1.1\r\nHost: " + host
            + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
              "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            + extraHeaders + "\r\n";
}

} // namespace

class ConnectGateTest : public QObject
{
    Q_OBJECT

private:
    TestServer::Options options()
    {
        TestServer::Options options;
        options.connectErrorBackoffMs = 150;
        options.extraTenants = {
            QJsonObject{ { QStringLiteral("external_id"), QStringLiteral("paused") },
                         { QStringLiteral("jwt_secret"), QStringLiteral("paused-secret") },
                         { QStringLiteral("suspend"), true } },
            QJsonObject{ { QStringLiteral("external_id"), QStringLiteral("other") },
                         { QStringLiteral("jwt_secret"), QStringLiteral("other-secret") } },
        };
        return options;
    }
    TestServer m_server{ options() };
    QByteArray host() const { return "127.0.0.1:" + QByteArray::number(m_server.port()); }

private Q_SLOTS:
    void initTestCase() { QVERIFY2(m_server.start(), qPrintable(m_server.failure())); }

    void refusals_data()
    {
        QTest::addColumn<QByteArray>("target");
        QTest::addColumn<QByteArray>("hostHeader");
        QTest::addColumn<QByteArray>("extraHeaders");
        QTest::addColumn<int>("status");
        QTest::addColumn<QByteArray>("body");

        QTest::newRow("unknown tenant") << QByteArray("/socket/websocket?apikey=x&vsn=2.0.0")
                                        << QByteArray("nobody.localhost") << QByteArray() << 404
                                        << QByteArray("{\"error\":\"Tenant not found\"}");
        QTest::newRow("suspended tenant")
                << QByteArray("/socket/websocket?apikey=x&vsn=2.0.0")
                << QByteArray("paused.localhost") << QByteArray() << 403
                << QByteArray("{\"error\":\"Realtime was disabled for this tenant\"}");
        QTest::newRow("missing token")
                << QByteArray("/socket/websocket?vsn=2.0.0") << QByteArray() << QByteArray() << 401
                << QByteArray("{\"error\":\"API key is missing\"}");
        QTest::newRow("malformed token")
                << QByteArray("/socket/websocket?apikey=abc&vsn=2.0.0") << QByteArray()
                << QByteArray() << 401
                << QByteArray("{\"error\":\"The token provided is not a valid JWT\"}");
        QTest::newRow("new-style api key")
                << QByteArray("/realtime/v1/websocket?apikey=sb_publishable_x&vsn=2.0.0")
                << QByteArray() << QByteArray() << 401
                << QByteArray("{\"error\":\"The token provided is not a valid JWT\"}");
    }
    void refusals()
    {
        QFETCH(QByteArray, target);
        QFETCH(QByteArray, hostHeader);
        QFETCH(QByteArray, extraHeaders);
        QFETCH(int, status);
        QFETCH(QByteArray, body);
        QElapsedTimer timer;
        timer.start();
        const RawResponse response = exchange(
                m_server.port(),
                upgradeRequest(target, hostHeader.isEmpty() ? host() : hostHeader, extraHeaders));
        QCOMPARE(response.status, status);
        QCOMPARE(response.body, body);
        QVERIFY(response.head.toLower().contains("content-type: application/json"));
        // Every connect error waits for the configured backoff (150 ms here).
        QVERIFY2(timer.elapsed() >= 140, QByteArray::number(timer.elapsed()).constData());
    }

    void nonGetUpgradesAreBadRequests()
    {
        // Phoenix answers anything but GET on the socket path with 400 and no body (§1.1).
        const RawResponse response = exchange(
                m_server.port(),
                "POST /socket/websocket?vsn=2.0.0&apikey=" + m_server.token()
                        + " HTTP/1.1\r\nHost: " + host()
                        + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: "
                          "dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                          "Content-Length: 0\r\n\r\n");
        QCOMPARE(response.status, 400);
        QVERIFY(response.body.isEmpty());
    }

    void tokenErrorsUseUpstreamTexts()
    {
        QJsonObject noRole;
        noRole.insert(QStringLiteral("exp"), QDateTime::currentSecsSinceEpoch() + 60);
        RawResponse response = exchange(
                m_server.port(),
                upgradeRequest("/socket/websocket?vsn=2.0.0&apikey=" + m_server.token(noRole),
                               host()));
        QCOMPARE(response.status, 401);
        QCOMPARE(response.body,
                 QByteArray("{\"error\":\"Fields `role` and `exp` are required in JWT\"}"));

        QJsonObject expired;
        expired.insert(QStringLiteral("role"), QStringLiteral("anon"));
        expired.insert(QStringLiteral("exp"), QDateTime::currentSecsSinceEpoch() - 60);
        response = exchange(
                m_server.port(),
                upgradeRequest("/socket/websocket?apikey=" + m_server.token(expired), host()));
        QCOMPARE(response.status, 401);
        QCOMPARE(response.body, QByteArray("{\"error\":\"Token has expired\"}"));

        QByteArray forged = m_server.token();
        forged[forged.size() - 2] = forged.at(forged.size() - 2) == 'A' ? 'B' : 'A';
        response = exchange(m_server.port(),
                            upgradeRequest("/socket/websocket?apikey=" + forged, host()));
        QCOMPARE(response.status, 401);
        QCOMPARE(response.body, QByteArray("{\"error\":\"Failed to validate JWT signature\"}"));
    }

    void unsupportedVersionIsRefusedAtOnceWithoutBody()
    {
        QElapsedTimer timer;
        timer.start();
        const RawResponse response = exchange(
                m_server.port(),
                upgradeRequest("/socket/websocket?vsn=3.0.0&apikey=" + m_server.token(), host()));
        QCOMPARE(response.status, 403);
        QVERIFY(response.body.isEmpty());
        QVERIFY(timer.elapsed() < 140);
    }

    void validSocketsUpgrade_data()
    {
        QTest::addColumn<QByteArray>("target");
        QTest::addColumn<bool>("tokenInHeader");
        QTest::newRow("socket path, query token")
                << QByteArray("/socket/websocket?vsn=2.0.0") << false;
        QTest::newRow("realtime/v1 path")
                << QByteArray("/realtime/v1/websocket?vsn=1.0.0") << false;
        QTest::newRow("no vsn means 1.0.0") << QByteArray("/socket/websocket") << false;
        QTest::newRow("x-api-key header") << QByteArray("/socket/websocket?vsn=2.0.0") << true;
    }
    void validSocketsUpgrade()
    {
        QFETCH(QByteArray, target);
        QFETCH(bool, tokenInHeader);
        const QByteArray token = m_server.token();
        const QByteArray request = tokenInHeader
                ? upgradeRequest(target + "&apikey=ignored-because-header-wins", host(),
                                 "x-api-key: " + token + "\r\n")
                : upgradeRequest(target + (target.contains('?') ? "&" : "?") + "apikey=" + token,
                                 host());
        const RawResponse response = exchange(m_server.port(), request);
        QCOMPARE(response.status, 101);
        QVERIFY(response.head.contains("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="));
    }

    void tenantsAreAddressedByTheirHost()
    {
        const QByteArray otherToken = rt::auth::signHmac(
                QJsonObject{ { QStringLiteral("role"), QStringLiteral("anon") },
                             { QStringLiteral("exp"), QDateTime::currentSecsSinceEpoch() + 60 } },
                "other-secret");
        const QByteArray otherHost =
                "other.realtime.example.com:" + QByteArray::number(m_server.port());
        QCOMPARE(exchange(m_server.port(),
                          upgradeRequest("/socket/websocket?apikey=" + otherToken, otherHost))
                         .status,
                 101);
        // The self-host tenant's token is not valid for tenant "other".
        const RawResponse wrong =
                exchange(m_server.port(),
                         upgradeRequest("/socket/websocket?apikey=" + m_server.token(), otherHost));
        QCOMPARE(wrong.status, 401);
        QCOMPARE(wrong.body, QByteArray("{\"error\":\"Failed to validate JWT signature\"}"));
    }

    void restRoutesShareThePort()
    {
        RawResponse response = exchange(
                m_server.port(), "GET /healthcheck HTTP/1.1\r\nHost: " + host() + "\r\n\r\n");
        QCOMPARE(response.status, 200);
        QCOMPARE(response.body, QByteArray("ok"));
        response = exchange(m_server.port(),
                            "GET /realtime/v1/api/ping HTTP/1.1\r\nHost: " + host() + "\r\n\r\n");
        QCOMPARE(response.status, 200);
        QCOMPARE(response.body, QByteArray("{\"message\":\"Success\"}"));
        response = exchange(m_server.port(),
                            "GET /api/ping HTTP/1.1\r\nHost: ghost.localhost\r\n\r\n");
        QCOMPARE(response.status, 401);
        QCOMPARE(response.body, QByteArray("{\"message\":\"Tenant not found in database\"}"));
        response = exchange(m_server.port(), "GET /nope HTTP/1.1\r\nHost: " + host() + "\r\n\r\n");
        QCOMPARE(response.status, 404);
        response = exchange(m_server.port(),
                            "DELETE /api/broadcast HTTP/1.1\r\nHost: " + host()
                                    + "\r\nContent-Length: 0\r\n\r\n");
        QCOMPARE(response.status, 405);
    }

    void broadcastApiAuthAndValidation()
    {
        const auto post = [this](const QByteArray &path, const QByteArray &headers,
                                 const QByteArray &body) {
            return exchange(m_server.port(),
                            "POST " + path + " HTTP/1.1\r\nHost: " + host() + "\r\n" + headers
                                    + "Content-Length: " + QByteArray::number(body.size())
                                    + "\r\n\r\n" + body);
        };
        const QByteArray auth = "Authorization: Bearer " + m_server.token() + "\r\n";
        RawResponse response = post("/api/broadcast", {}, "{\"messages\":[]}");
        QCOMPARE(response.status, 401);
        QCOMPARE(response.body, QByteArray("{\"message\":\"Unauthorized\"}"));
        response = post("/api/broadcast", auth, "{\"nothing\":1}");
        QCOMPARE(response.status, 422);
        QCOMPARE(response.body, QByteArray("{\"errors\":{\"messages\":[\"can't be blank\"]}}"));
        response = post("/api/broadcast", auth,
                        "{\"messages\":[{\"topic\":\"a\",\"event\":\"e\",\"payload\":{}},{"
                        "\"payload\":{}}]}");
        QCOMPARE(response.status, 422);
        QCOMPARE(response.body,
                 QByteArray("{\"errors\":{\"messages\":[{},{\"event\":[\"can't be "
                            "blank\"],\"topic\":[\"can't be blank\"]}]}}"));
        response = post("/realtime/v1/api/broadcast", "apikey: " + m_server.token() + "\r\n",
                        "{\"messages\":[{\"topic\":\"a\",\"event\":\"e\",\"payload\":{\"x\":1}}]}");
        QCOMPARE(response.status, 202);
        QVERIFY(response.body.isEmpty());
        response = post("/api/broadcast/room/events/ping", auth + "Content-Type: text/plain\r\n",
                        "hi");
        QCOMPARE(response.status, 415);
        QCOMPARE(response.body,
                 QByteArray("{\"error\":\"Unsupported Media Type. Use application/json or "
                            "application/octet-stream\"}"));
        response = post("/api/broadcast/room/events/ping",
                        auth + "Content-Type: application/json\r\n", "{\"a\":1}");
        QCOMPARE(response.status, 202);
    }
};

QTEST_GUILESS_MAIN(ConnectGateTest)
#include "tst_connect_gate.moc"
