#pragma once

#include "server/app/server.h"
#include "server/tls/tls_context.h"

#include <QJsonObject>
#include <QTemporaryDir>
#include <QUrl>

#include <memory>
#include <optional>

namespace rt::testsupport {

// A realtime-server node in the test process: SQLite control plane in a temporary directory
// (unless Options::controlPlane names another), a free loopback port, the self-host tenant
// "realtime-dev" and optional extra tenants.
// Lives on the test's main thread (its workers run their own threads).
class TestServer
{
public:
    struct Options
    {
        QByteArray secret = QByteArrayLiteral("test-secret-test-secret-test-secret");
        QList<QJsonObject> extraTenants; // tenant API input objects
        int workers = 2;
        int connectErrorBackoffMs = 0;
        int channelErrorBackoffMs = 0;
        int noChannelTimeoutMs = 600'000;
        qsizetype maxSendBufferBytes = 16 * 1024 * 1024;
        qsizetype socketHighWaterBytes = 1024 * 1024;
        int slowConsumerGraceMs = 10'000;
        int websocketIdleTimeoutMs = 60'000;
        // The control plane to use instead of the SQLite file in the temporary directory, e.g.
        // PostgreSQL settings from rt::testsupport::PgEnv (integration tests).
        std::optional<tenants::ControlPlaneSettings> controlPlane;
        QByteArray metricsJwtSecret; // METRICS_JWT_SECRET; empty: /metrics refuses everything
        // TLS_CERT_FILE, TLS_KEY_FILE: set, the port speaks https/wss only.
        tls::ServerCredentials clientTls;
    };

    TestServer();
    explicit TestServer(Options options);
    ~TestServer();

    // Starts and waits (spinning the event loop) until the node listens. False on failure;
    // failure() then says why.
    bool start(int timeoutMs = 10'000);
    quint16 port() const { return m_port; }
    QString failure() const { return m_failure; }
    app::Server &server() { return *m_server; }

    // ws://127.0.0.1:<port>/socket/websocket?vsn=<vsn>&apikey=<token()> for the self-host tenant.
    QUrl socketUrl(const char *vsn = "2.0.0") const;

    // An HS256 token for the self-host tenant; default claims {"role":"anon","exp":now+3600}.
    QByteArray token(QJsonObject claims = {}) const;
    // A token of the operator API (role service_role, one of API_JWT_OPERATOR_ROLES).
    QByteArray operatorToken() const;
    const QByteArray &secret() const { return m_options.secret; }

private:
    Options m_options;
    QTemporaryDir m_dataDir;
    std::unique_ptr<app::Server> m_server;
    quint16 m_port = 0;
    QString m_failure;
};

} // namespace rt::testsupport
