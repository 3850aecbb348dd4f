#pragma once

#include "server/cdc/cdc_settings.h"
#include "server/node/cluster_node.h"
#include "server/tenants/control_plane.h"
#include "server/tenants/tenant.h"
#include "server/tenants/tenant_input.h"
#include "server/tls/tls_context.h"
#include "shared/core/result.h"

#include <QHash>
#include <QHostAddress>
#include <QJsonObject>
#include <QSslConfiguration>
#include <QString>
#include <QStringList>
#include <QUrl>

#include <optional>

namespace rt::app {

// Everything realtime-server is configured with. Each option is a command-line flag and an
// environment variable (Supabase Realtime's name where one exists); the flag wins. The option
// table in config.cpp is the one place that names each option's default: a configuration with
// the defaults is defaultServerConfig(), not a default-constructed ServerConfig (whose fields
// are zero or empty).
struct ServerConfig
{
    bool clientPortUsesTls() const { return !clientTls.certificateFile.isEmpty(); }

    QHostAddress listenAddress;
    quint16 port = 0; // 0: any free port (printed at start)
    tls::ServerCredentials clientTls; // TLS_CERT_FILE, TLS_KEY_FILE: PORT speaks TLS when set
    QByteArray apiJwtSecret;
    QByteArray apiJwtJwks;
    QByteArray apiJwtSecretNext; // accepted by the tenant API besides apiJwtSecret
    QByteArray apiTokenBlocklist; // comma-separated
    QStringList operatorRoles; // API_JWT_OPERATOR_ROLES: `role` claims the operator API accepts
    QByteArray metricsJwtSecret; // empty: /metrics refuses every request
    QByteArray metricsTokenBlocklist;
    int tenantCacheExpirationMs = 0;
    QString region;
    QString nodeName; // empty: derived from the host name and port
    node::ClusterConfig cluster;
    bool seedSelfHost = false;
    QByteArray selfHostTenantName;
    QString seedTenantsFile; // SEED_TENANTS_FILE: {"tenants":[...]} upserted at start
    QList<tenants::TenantInput> seedTenants; // read from seedTenantsFile
    tenants::ControlPlaneSettings controlPlane; // SQLite under dataDir unless DB_HOST is set
    QString dataDir;
    tenants::TenantDefaults tenantDefaults;
    int connectErrorBackoffMs = 0;
    int channelErrorBackoffMs = 0;
    int noChannelTimeoutMs = 0; // NO_CHANNEL_TIMEOUT_IN_MS
    cdc::CdcSettings cdc; // tenant databases: TENANT_DB_*, SLOT_NAME_SUFFIX
    QJsonObject jwtClaimValidators;
    int workers = 0; // 0: one per available CPU
    bool epollDispatcher = false; // EVENT_DISPATCHER=epoll or qt
    qsizetype maxSendBufferBytes = 0; // per connection; slow consumers beyond
    qsizetype socketHighWaterBytes = qsizetype{ 1 } * 1024 * 1024; // SOCKET_HIGH_WATER_BYTES
    int slowConsumerGraceMs = 10'000; // SLOW_CONSUMER_GRACE_MS: above the high-water mark
    qint64 historyMaxBytes = qint64{ 64 } * 1024 * 1024; // HISTORY_MAX_BYTES: all topics' histories
    qsizetype maxConnections = 0; // MAX_CONNECTIONS; 0: from RLIMIT_NOFILE
    qsizetype maxPendingConnectionsPerAddress = 0; // not yet WebSockets; 0: no limit
    QHostAddress clusterListenAddress; // CLUSTER_LISTEN_ADDRESS; null: listenAddress
    int websocketIdleTimeoutMs = 0; // no frame from a client for this long: closed
    QString logLevel;
};

// The outcome of reading the command line and environment.
struct ConfigRequest
{
    // CheckConfig: parse exactly as for Run, then report instead of starting (no port is
    // bound and no database opened); see configSummary().
    enum class Action { Run, ShowHelp, ShowVersion, CheckConfig };
    Action action = Action::Run;
    ServerConfig config;
    QString helpText;
};

// The TLS configuration of the etcd client from ETCD_CA_FILE, ETCD_CERT_FILE and ETCD_KEY_FILE:
// etcd verified against the CA (or the system's), TLS 1.2 or later, the client certificate
// presented when given; nothing when no file is set (Qt's defaults serve https:// then).
Result<std::optional<QSslConfiguration>> etcdTlsConfiguration(const node::EtcdAccess &access);

// Parses `arguments` (argv, program name first) and `environment`. Invalid values fail with one
// clear message naming the option, its environment variable and what is expected.
Result<ConfigRequest> parseConfig(const QStringList &arguments,
                                  const QHash<QString, QString> &environment);

// The configuration of a start with no flags and an empty environment: every option's default.
ServerConfig defaultServerConfig();

// The options as a Markdown table (variable, flag, default, meaning): README.md's configuration
// section is exactly this text (a test compares them; scripts/update-options-docs.sh rewrites it).
QString optionsMarkdown();
// The packaged environment file (packaging/realtime-server.env): every option, commented out,
// with its default, grouped by section (kept in step the same way).
QString environmentTemplate();

// One line describing a parsed configuration, for --check-config: where it listens, which
// control plane it uses, which tenants it seeds and whether the tenant API has a secret.
// Never contains a secret.
QString configSummary(const ServerConfig &config);

// The process environment as a map (read once at start-up).
QHash<QString, QString> processEnvironment();

} // namespace rt::app
