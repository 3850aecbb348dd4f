#include "tests/support/server/test_server.h"

#include "server/auth/jwt.h"

#include <QDateTime>
#include <QSignalSpy>
#include <QTest>

namespace rt::testsupport {

TestServer::TestServer() : TestServer(Options{}) { }

TestServer::TestServer(Options options) : m_options(std::move(options)) { }

TestServer::~TestServer()
{
    if (m_server) {
        m_server->stop();
    }
}

bool TestServer::start(int timeoutMs)
{
    app::ServerConfig config = app::defaultServerConfig();
    config.listenAddress = QHostAddress::LocalHost;
    config.port = 0;
    config.apiJwtSecret = m_options.secret;
    config.seedSelfHost = true;
    config.dataDir = m_dataDir.path();
    if (m_options.controlPlane) {
        config.controlPlane = *m_options.controlPlane;
    } else {
        config.controlPlane.sqlitePath =
                m_dataDir.filePath(QStringLiteral("control-plane.sqlite3"));
        config.controlPlane.keyFile = m_dataDir.filePath(QStringLiteral("db_enc_key"));
    }
    config.metricsJwtSecret = m_options.metricsJwtSecret;
    config.clientTls = m_options.clientTls;
    config.workers = m_options.workers;
    config.connectErrorBackoffMs = m_options.connectErrorBackoffMs;
    config.channelErrorBackoffMs = m_options.channelErrorBackoffMs;
    config.noChannelTimeoutMs = m_options.noChannelTimeoutMs;
    config.maxSendBufferBytes = m_options.maxSendBufferBytes;
    config.socketHighWaterBytes = m_options.socketHighWaterBytes;
    config.slowConsumerGraceMs = m_options.slowConsumerGraceMs;
    config.websocketIdleTimeoutMs = m_options.websocketIdleTimeoutMs;
    for (const QJsonObject &tenant : std::as_const(m_options.extraTenants)) {
        tenants::TenantInputResult parsed = tenants::tenantInputFromJson(tenant);
        if (!parsed.input) {
            m_failure = QStringLiteral("invalid test tenant");
            return false;
        }
        config.seedTenants.append(*parsed.input);
    }
    m_server = std::make_unique<app::Server>(config);
    QSignalSpy started(m_server.get(), &app::Server::started);
    QSignalSpy failed(m_server.get(), &app::Server::failed);
    m_server->start();
    (void)QTest::qWaitFor([&] { return !started.isEmpty() || !failed.isEmpty(); }, timeoutMs);
    if (!failed.isEmpty()) {
        m_failure = failed.constFirst().constFirst().toString();
        return false;
    }
    if (started.isEmpty()) {
        m_failure = QStringLiteral("server did not start in time");
        return false;
    }
    m_port = m_server->port();
    return true;
}

QUrl TestServer::socketUrl(const char *vsn) const
{
    return QUrl(QStringLiteral("ws://127.0.0.1:%1/socket/websocket?vsn=%2&apikey=%3")
                        .arg(m_port)
                        .arg(QLatin1String(vsn), QString::fromLatin1(token())));
}

QByteArray TestServer::token(QJsonObject claims) const
{
    if (claims.isEmpty()) {
        claims.insert(QStringLiteral("role"), QStringLiteral("anon"));
        claims.insert(QStringLiteral("exp"), QDateTime::currentSecsSinceEpoch() + 3600);
    }
    return auth::signHmac(claims, m_options.secret);
}

QByteArray TestServer::operatorToken() const
{
    return token({ { QStringLiteral("role"), QStringLiteral("service_role") },
                   { QStringLiteral("exp"), QDateTime::currentSecsSinceEpoch() + 3600 } });
}

} // namespace rt::testsupport
