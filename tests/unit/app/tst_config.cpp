#include "server/app/config.h"
#include "tests/support/tls/test_certificates.h"

#include <QDir>
#include <QFile>
#include <QHostAddress>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

using rt::app::ConfigRequest;
using rt::app::parseConfig;
using rt::app::ServerConfig;
using rt::tenants::ControlPlaneSettings;
using Environment = QHash<QString, QString>;

namespace {

const QString Program = QStringLiteral("realtime-server");
// Long enough for plaintext node links (32 bytes and more).
const QString LongSecret = QStringLiteral("a-cluster-secret-of-more-than-32-bytes");

// Every documented option: its environment variable and its flag (README, --help).
struct Documented
{
    const char *env;
    const char *flag;
};
const Documented DocumentedOptions[] = {
    { "PORT", "port" },
    { "LISTEN_ADDRESS", "listen-address" },
    { "TLS_CERT_FILE", "tls-cert-file" },
    { "TLS_KEY_FILE", "tls-key-file" },
    { "TLS_MIN_VERSION", "tls-min-version" },
    { "CLUSTER_TLS_CA_FILE", "cluster-tls-ca-file" },
    { "CLUSTER_TLS_CERT_FILE", "cluster-tls-cert-file" },
    { "CLUSTER_TLS_KEY_FILE", "cluster-tls-key-file" },
    { "CLUSTER_PLAINTEXT_LINKS", "cluster-plaintext-links" },
    { "API_JWT_SECRET", "api-jwt-secret" },
    { "API_JWT_JWKS", "api-jwt-jwks" },
    { "API_JWT_SECRET_NEXT", "api-jwt-secret-next" },
    { "API_TOKEN_BLOCKLIST", "api-token-blocklist" },
    { "API_JWT_OPERATOR_ROLES", "api-jwt-operator-roles" },
    { "METRICS_JWT_SECRET", "metrics-jwt-secret" },
    { "METRICS_TOKEN_BLOCKLIST", "metrics-token-blocklist" },
    { "TENANT_CACHE_EXPIRATION_IN_MS", "tenant-cache-expiration-in-ms" },
    { "REGION", "region" },
    { "NODE_NAME", "node-name" },
    { "SEED_SELF_HOST", "seed-self-host" },
    { "SELF_HOST_TENANT_NAME", "self-host-tenant-name" },
    { "SEED_TENANTS_FILE", "seed-tenants-file" },
    { "DB_HOST", "db-host" },
    { "DB_PORT", "db-port" },
    { "DB_NAME", "db-name" },
    { "DB_USER", "db-user" },
    { "DB_PASSWORD", "db-password" },
    { "DB_REPLICA_HOST", "db-replica-host" },
    { "DB_REPLICA_PORT", "db-replica-port" },
    { "DB_REPLICA_DELAY_MS", "db-replica-delay-ms" },
    { "DB_REPLICA_RETRY_MS", "db-replica-retry-ms" },
    { "DATA_DIR", "data-dir" },
    { "DB_ENC_KEY", "db-enc-key" },
    { "DB_ENC_KEY_GCM", "db-enc-key-gcm" },
    { "DB_ENC_WRITE_GCM", "db-enc-write-gcm" },
    { "TENANT_MAX_CONCURRENT_USERS", "tenant-max-concurrent-users" },
    { "TENANT_MAX_EVENTS_PER_SECOND", "tenant-max-events-per-second" },
    { "TENANT_MAX_BYTES_PER_SECOND", "tenant-max-bytes-per-second" },
    { "TENANT_MAX_CHANNELS_PER_CLIENT", "tenant-max-channels-per-client" },
    { "TENANT_MAX_JOINS_PER_SECOND", "tenant-max-joins-per-second" },
    { "TENANT_MAX_PRESENCE_EVENTS_PER_SECOND", "tenant-max-presence-events-per-second" },
    { "TENANT_MAX_PAYLOAD_SIZE_IN_KB", "tenant-max-payload-size-in-kb" },
    { "CLIENT_PRESENCE_MAX_CALLS", "client-presence-max-calls" },
    { "CLIENT_PRESENCE_WINDOW_MS", "client-presence-window-ms" },
    { "CONNECT_ERROR_BACKOFF_MS", "connect-error-backoff-ms" },
    { "CHANNEL_ERROR_BACKOFF_MS", "channel-error-backoff-ms" },
    { "NO_CHANNEL_TIMEOUT_IN_MS", "no-channel-timeout-in-ms" },
    { "JWT_CLAIM_VALIDATORS", "jwt-claim-validators" },
    { "WORKERS", "workers" },
    { "EVENT_DISPATCHER", "event-dispatcher" },
    { "LOG_LEVEL", "log-level" },
    { "TENANT_DB_IDLE_TIMEOUT_IN_MS", "tenant-db-idle-timeout-in-ms" },
    { "TENANT_DB_POOL_SIZE", "tenant-db-pool-size" },
    { "TENANT_DB_CONNECT_RETRY_MS", "tenant-db-connect-retry-ms" },
    { "SLOT_NAME_SUFFIX", "slot-name-suffix" },
    { "RLS_STRATEGY", "rls-strategy" },
    { "ETCD_ENDPOINTS", "etcd-endpoints" },
    { "ETCD_PREFIX", "etcd-prefix" },
    { "CLUSTER_LEASE_TTL_S", "cluster-lease-ttl-s" },
    { "CLUSTER_PORT", "cluster-port" },
    { "CLUSTER_LISTEN_ADDRESS", "cluster-listen-address" },
    { "MAX_CONNECTIONS", "max-connections" },
    { "MAX_PENDING_CONNECTIONS_PER_ADDRESS", "max-pending-connections-per-address" },
    { "CLUSTER_ADVERTISE_HOST", "cluster-advertise-host" },
    { "CLUSTER_SECRET", "cluster-secret" },
    { "CLUSTER_LINKS_PER_PEER", "cluster-links-per-peer" },
    { "CLUSTER_LOADAVG_FILE", "cluster-loadavg-file" },
    { "CLUSTER_LOAD_MIN_UPTIME_S", "cluster-load-min-uptime-s" },
    { "ETCD_CA_FILE", "etcd-ca-file" },
    { "ETCD_CERT_FILE", "etcd-cert-file" },
    { "ETCD_KEY_FILE", "etcd-key-file" },
    { "ETCD_USERNAME", "etcd-username" },
    { "ETCD_PASSWORD", "etcd-password" },
    { "DB_SSLMODE", "db-sslmode" },
    { "DB_SSLROOTCERT", "db-sslrootcert" },
    { "TENANT_DB_SSLROOTCERT", "tenant-db-sslrootcert" },
    { "CDC_MAX_INFLIGHT_BYTES", "cdc-max-inflight-bytes" },
    { "MAX_SEND_BUFFER_BYTES", "max-send-buffer-bytes" },
    { "SOCKET_HIGH_WATER_BYTES", "socket-high-water-bytes" },
    { "SLOW_CONSUMER_GRACE_MS", "slow-consumer-grace-ms" },
    { "WEBSOCKET_IDLE_TIMEOUT_MS", "websocket-idle-timeout-ms" },
};

QString flagOf(const QString &env)
{
    for (const Documented &option : DocumentedOptions) {
        if (env == QLatin1String(option.env)) {
            return QLatin1String("--") + QLatin1String(option.flag);
        }
    }
    return {};
}

// The configuration field an environment variable sets, rendered as text for comparison.
QString fieldOf(const ServerConfig &config, const QString &env)
{
    const auto number = [](qint64 value) { return QString::number(value); };
    const auto boolean = [](bool value) {
        return value ? QStringLiteral("true") : QStringLiteral("false");
    };
    if (env == QLatin1String("PORT"))
        return number(config.port);
    if (env == QLatin1String("LISTEN_ADDRESS"))
        return config.listenAddress.toString();
    if (env == QLatin1String("TLS_CERT_FILE"))
        return config.clientTls.certificateFile;
    if (env == QLatin1String("TLS_KEY_FILE"))
        return config.clientTls.keyFile;
    if (env == QLatin1String("TLS_MIN_VERSION"))
        return config.clientTls.minimumVersion == rt::tls::ProtocolVersion::Tls13
                ? QStringLiteral("1.3")
                : QStringLiteral("1.2");
    if (env == QLatin1String("CLUSTER_TLS_CA_FILE"))
        return config.cluster.linkTls.caFile;
    if (env == QLatin1String("CLUSTER_TLS_CERT_FILE"))
        return config.cluster.linkTls.certificateFile;
    if (env == QLatin1String("CLUSTER_TLS_KEY_FILE"))
        return config.cluster.linkTls.keyFile;
    if (env == QLatin1String("CLUSTER_PLAINTEXT_LINKS"))
        return boolean(config.cluster.plaintextLinks);
    if (env == QLatin1String("API_JWT_SECRET"))
        return QString::fromUtf8(config.apiJwtSecret);
    if (env == QLatin1String("API_JWT_JWKS"))
        return QString::fromUtf8(config.apiJwtJwks);
    if (env == QLatin1String("API_JWT_SECRET_NEXT"))
        return QString::fromUtf8(config.apiJwtSecretNext);
    if (env == QLatin1String("API_TOKEN_BLOCKLIST"))
        return QString::fromUtf8(config.apiTokenBlocklist);
    if (env == QLatin1String("API_JWT_OPERATOR_ROLES"))
        return config.operatorRoles.join(QLatin1Char(','));
    if (env == QLatin1String("METRICS_JWT_SECRET"))
        return QString::fromUtf8(config.metricsJwtSecret);
    if (env == QLatin1String("METRICS_TOKEN_BLOCKLIST"))
        return QString::fromUtf8(config.metricsTokenBlocklist);
    if (env == QLatin1String("TENANT_CACHE_EXPIRATION_IN_MS"))
        return number(config.tenantCacheExpirationMs);
    if (env == QLatin1String("REGION"))
        return config.region;
    if (env == QLatin1String("NODE_NAME"))
        return config.nodeName;
    if (env == QLatin1String("SEED_SELF_HOST"))
        return boolean(config.seedSelfHost);
    if (env == QLatin1String("SELF_HOST_TENANT_NAME"))
        return QString::fromUtf8(config.selfHostTenantName);
    if (env == QLatin1String("SEED_TENANTS_FILE")) {
        QStringList ids;
        for (const rt::tenants::TenantInput &tenant : config.seedTenants) {
            ids.append(QString::fromUtf8(tenant.externalId));
        }
        return ids.join(u',');
    }
    if (env == QLatin1String("DB_HOST"))
        return config.controlPlane.host;
    if (env == QLatin1String("DB_PORT"))
        return number(config.controlPlane.port);
    if (env == QLatin1String("DB_NAME"))
        return config.controlPlane.database;
    if (env == QLatin1String("DB_USER"))
        return config.controlPlane.user;
    if (env == QLatin1String("DB_PASSWORD"))
        return config.controlPlane.password;
    if (env == QLatin1String("DB_REPLICA_HOST"))
        return config.controlPlane.replicaHost;
    if (env == QLatin1String("DB_REPLICA_PORT"))
        return number(config.controlPlane.replicaPort);
    if (env == QLatin1String("DB_REPLICA_DELAY_MS"))
        return number(config.controlPlane.replicaDelayMs);
    if (env == QLatin1String("DB_REPLICA_RETRY_MS"))
        return number(config.controlPlane.replicaRetryMs);
    if (env == QLatin1String("DATA_DIR"))
        return QDir::cleanPath(config.dataDir);
    if (env == QLatin1String("DB_ENC_KEY"))
        return QString::fromUtf8(config.controlPlane.encryptionKey);
    if (env == QLatin1String("DB_ENC_KEY_GCM"))
        return QString::fromUtf8(config.controlPlane.encryptionKeyGcm);
    if (env == QLatin1String("DB_ENC_WRITE_GCM"))
        return boolean(config.controlPlane.writeGcm);
    if (env == QLatin1String("TENANT_MAX_CONCURRENT_USERS"))
        return number(config.tenantDefaults.maxConcurrentUsers);
    if (env == QLatin1String("TENANT_MAX_EVENTS_PER_SECOND"))
        return number(config.tenantDefaults.maxEventsPerSecond);
    if (env == QLatin1String("TENANT_MAX_BYTES_PER_SECOND"))
        return number(config.tenantDefaults.maxBytesPerSecond);
    if (env == QLatin1String("TENANT_MAX_CHANNELS_PER_CLIENT"))
        return number(config.tenantDefaults.maxChannelsPerClient);
    if (env == QLatin1String("TENANT_MAX_JOINS_PER_SECOND"))
        return number(config.tenantDefaults.maxJoinsPerSecond);
    if (env == QLatin1String("TENANT_MAX_PRESENCE_EVENTS_PER_SECOND"))
        return number(config.tenantDefaults.maxPresenceEventsPerSecond);
    if (env == QLatin1String("TENANT_MAX_PAYLOAD_SIZE_IN_KB"))
        return number(config.tenantDefaults.maxPayloadSizeInKb);
    if (env == QLatin1String("CLIENT_PRESENCE_MAX_CALLS"))
        return number(config.tenantDefaults.clientPresenceMaxCalls);
    if (env == QLatin1String("CLIENT_PRESENCE_WINDOW_MS"))
        return number(config.tenantDefaults.clientPresenceWindowMs);
    if (env == QLatin1String("CONNECT_ERROR_BACKOFF_MS"))
        return number(config.connectErrorBackoffMs);
    if (env == QLatin1String("CHANNEL_ERROR_BACKOFF_MS"))
        return number(config.channelErrorBackoffMs);
    if (env == QLatin1String("NO_CHANNEL_TIMEOUT_IN_MS"))
        return number(config.noChannelTimeoutMs);
    if (env == QLatin1String("JWT_CLAIM_VALIDATORS"))
        return QString::fromUtf8(
                QJsonDocument(config.jwtClaimValidators).toJson(QJsonDocument::Compact));
    if (env == QLatin1String("WORKERS"))
        return number(config.workers);
    if (env == QLatin1String("EVENT_DISPATCHER"))
        return config.epollDispatcher ? QStringLiteral("epoll") : QStringLiteral("qt");
    if (env == QLatin1String("LOG_LEVEL"))
        return config.logLevel;
    if (env == QLatin1String("TENANT_DB_IDLE_TIMEOUT_IN_MS"))
        return number(config.cdc.idleTimeoutMs);
    if (env == QLatin1String("TENANT_DB_POOL_SIZE"))
        return number(config.cdc.poolSize);
    if (env == QLatin1String("TENANT_DB_CONNECT_RETRY_MS"))
        return number(config.cdc.connectRetryMs);
    if (env == QLatin1String("SLOT_NAME_SUFFIX"))
        return QString::fromUtf8(config.cdc.slotNameSuffix);
    if (env == QLatin1String("RLS_STRATEGY"))
        return config.cdc.naiveRls ? QStringLiteral("naive") : QStringLiteral("batched");
    if (env == QLatin1String("ETCD_ENDPOINTS")) {
        QStringList urls;
        for (const QUrl &url : config.cluster.etcdEndpoints) {
            urls.append(url.toString());
        }
        return urls.join(u',');
    }
    if (env == QLatin1String("ETCD_PREFIX"))
        return config.cluster.etcdPrefix;
    if (env == QLatin1String("CLUSTER_LEASE_TTL_S"))
        return number(config.cluster.leaseTtlSeconds);
    if (env == QLatin1String("CLUSTER_PORT"))
        return number(config.cluster.linkPort);
    if (env == QLatin1String("CLUSTER_LISTEN_ADDRESS"))
        return config.clusterListenAddress.toString();
    if (env == QLatin1String("MAX_CONNECTIONS"))
        return number(config.maxConnections);
    if (env == QLatin1String("MAX_PENDING_CONNECTIONS_PER_ADDRESS"))
        return number(config.maxPendingConnectionsPerAddress);
    if (env == QLatin1String("CLUSTER_ADVERTISE_HOST"))
        return config.cluster.advertiseHost;
    if (env == QLatin1String("CLUSTER_SECRET"))
        return QString::fromUtf8(config.cluster.secret);
    if (env == QLatin1String("CLUSTER_LINKS_PER_PEER"))
        return number(config.cluster.linksPerPeer);
    if (env == QLatin1String("CLUSTER_LOADAVG_FILE"))
        return config.cluster.loadAverageFile;
    if (env == QLatin1String("CLUSTER_LOAD_MIN_UPTIME_S"))
        return number(config.cluster.loadMinUptimeSeconds);
    if (env == QLatin1String("ETCD_CA_FILE"))
        return config.cluster.etcdAccess.caFile;
    if (env == QLatin1String("ETCD_CERT_FILE"))
        return config.cluster.etcdAccess.certificateFile;
    if (env == QLatin1String("ETCD_KEY_FILE"))
        return config.cluster.etcdAccess.keyFile;
    if (env == QLatin1String("ETCD_USERNAME"))
        return config.cluster.etcdAccess.user;
    if (env == QLatin1String("ETCD_PASSWORD"))
        return config.cluster.etcdAccess.password;
    if (env == QLatin1String("DB_SSLMODE"))
        return config.controlPlane.sslMode;
    if (env == QLatin1String("DB_SSLROOTCERT"))
        return config.controlPlane.sslRootCert;
    if (env == QLatin1String("TENANT_DB_SSLROOTCERT"))
        return config.cdc.sslRootCert;
    if (env == QLatin1String("CDC_MAX_INFLIGHT_BYTES"))
        return number(config.cdc.maxInflightBytes);
    if (env == QLatin1String("MAX_SEND_BUFFER_BYTES"))
        return number(config.maxSendBufferBytes);
    if (env == QLatin1String("SOCKET_HIGH_WATER_BYTES"))
        return number(config.socketHighWaterBytes);
    if (env == QLatin1String("SLOW_CONSUMER_GRACE_MS"))
        return number(config.slowConsumerGraceMs);
    if (env == QLatin1String("WEBSOCKET_IDLE_TIMEOUT_MS"))
        return number(config.websocketIdleTimeoutMs);
    return QStringLiteral("<unknown %1>").arg(env);
}

Environment environmentFrom(const QStringList &pairs)
{
    Environment environment;
    for (const QString &pair : pairs) {
        const qsizetype equals = pair.indexOf(u'=');
        environment.insert(pair.left(equals), pair.mid(equals + 1));
    }
    return environment;
}

} // namespace

// Tests realtime-server's configuration: defaults, every option from its environment variable
// and its flag (the flag wins), --help, and one clear message per invalid value.
class ConfigTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();

    void defaults();
    void replicaDefaults();
    void everyOption_data();
    void everyOption();
    void helpListsEveryOption_data();
    void helpListsEveryOption();
    void shortHelp();
    void versionRequest();
    void invalidValues_data();
    void invalidValues();
    void invalidFlagValueNamesTheEnvironmentVariable();
    void firstErrorOnly();
    void booleans_data();
    void booleans();
    void seedSelfHostNeedsASecret();
    void dbHostSelectsPostgres();
    void seedTenantsFile();
    void seedTenantsFileErrors_data();
    void seedTenantsFileErrors();
    void unknownOptionsAndArguments();
    void checkConfigParsesLikeAStart();
    void checkConfigReportsTheSameErrors();
    void checkConfigSummary_data();
    void checkConfigSummary();
    void helpListsCheckConfig();

private:
    QString writeFile(const QString &name, const QByteArray &contents);

    std::unique_ptr<QTemporaryDir> m_dir;
};

void ConfigTest::initTestCase()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
}

QString ConfigTest::writeFile(const QString &name, const QByteArray &contents)
{
    const QString path = m_dir->filePath(name);
    QFile file(path);
    if (file.open(QIODevice::WriteOnly)) {
        file.write(contents);
    }
    return path;
}

void ConfigTest::defaults()
{
    const auto parsed = parseConfig({ Program }, {});
    QVERIFY2(parsed.ok(), parsed.ok() ? "" : qPrintable(parsed.error().message));
    QCOMPARE(parsed->action, ConfigRequest::Action::Run);
    const ServerConfig &config = parsed->config;
    QCOMPARE(config.port, quint16(4000));
    QCOMPARE(config.listenAddress, QHostAddress(QHostAddress::AnyIPv4));
    QVERIFY(config.apiJwtSecret.isEmpty());
    QVERIFY(config.apiJwtJwks.isEmpty());
    QCOMPARE(config.seedSelfHost, false);
    QCOMPARE(config.operatorRoles,
             QStringList({ QStringLiteral("service_role"), QStringLiteral("supabase_admin") }));
    QCOMPARE(config.selfHostTenantName, QByteArray("realtime-dev"));
    QVERIFY(config.seedTenantsFile.isEmpty());
    QVERIFY(config.seedTenants.isEmpty());
    QCOMPARE(QDir::cleanPath(config.dataDir),
             QDir::current().absoluteFilePath(QStringLiteral("realtime-data")));
    QCOMPARE(config.controlPlane.backend, ControlPlaneSettings::Backend::Sqlite);
    QCOMPARE(QDir::cleanPath(config.controlPlane.sqlitePath),
             QDir::current().absoluteFilePath(
                     QStringLiteral("realtime-data/control-plane.sqlite3")));
    // spec/server-protocol.md §8 defaults.
    QCOMPARE(config.tenantDefaults.maxConcurrentUsers, 200);
    QCOMPARE(config.tenantDefaults.maxEventsPerSecond, 100);
    QCOMPARE(config.tenantDefaults.maxBytesPerSecond, 100000);
    QCOMPARE(config.tenantDefaults.maxChannelsPerClient, 100);
    QCOMPARE(config.tenantDefaults.maxJoinsPerSecond, 100);
    QCOMPARE(config.tenantDefaults.maxPresenceEventsPerSecond, 1000);
    QCOMPARE(config.tenantDefaults.maxPayloadSizeInKb, 3000);
    QCOMPARE(config.tenantDefaults.clientPresenceMaxCalls, 5);
    QCOMPARE(config.tenantDefaults.clientPresenceWindowMs, 30000);
    QCOMPARE(config.connectErrorBackoffMs, 2000);
    QCOMPARE(config.channelErrorBackoffMs, 5000);
    QCOMPARE(config.jwtClaimValidators, QJsonObject());
    QCOMPARE(config.workers, 0);
    QCOMPARE(config.epollDispatcher, true);
    QCOMPARE(config.logLevel, QStringLiteral("info"));
    QCOMPARE(config.tenantCacheExpirationMs, 30000);
    QCOMPARE(config.region, QStringLiteral("local"));
    QVERIFY(config.metricsJwtSecret.isEmpty());
    QVERIFY(config.apiJwtSecretNext.isEmpty());
}

// No replica unless DB_REPLICA_HOST is set; its port is DB_PORT's unless DB_REPLICA_PORT says.
void ConfigTest::replicaDefaults()
{
    const auto plain = parseConfig({ Program }, {});
    QVERIFY(plain.ok());
    QVERIFY(!plain->config.controlPlane.hasReplica());
    QCOMPARE(plain->config.controlPlane.replicaDelayMs, 2000);
    QCOMPARE(plain->config.controlPlane.replicaRetryMs, 5000);

    const auto replica = parseConfig(
            { Program, QStringLiteral("--db-replica-host=standby") },
            environmentFrom({ QStringLiteral("DB_HOST=primary"), QStringLiteral("DB_PORT=6000"),
                              QStringLiteral("DB_ENC_KEY=0123456789abcdef") }));
    QVERIFY2(replica.ok(), replica.ok() ? "" : qPrintable(replica.error().message));
    const ControlPlaneSettings &settings = replica->config.controlPlane;
    QVERIFY(settings.hasReplica());
    QCOMPARE(settings.replicaHost, QStringLiteral("standby"));
    QCOMPARE(settings.replicaPort, 6000);
    QVERIFY(rt::app::configSummary(replica->config)
                    .contains(QLatin1String("reads from replica standby:6000, delay 2000 ms")));
}

void ConfigTest::everyOption_data()
{
    QTest::addColumn<QString>("env");
    QTest::addColumn<QString>("envValue");
    QTest::addColumn<QString>("envExpected");
    QTest::addColumn<QString>("flagValue");
    QTest::addColumn<QString>("flagExpected");
    QTest::addColumn<QStringList>("extraEnvironment");

    const QString seedsA = writeFile(QStringLiteral("seeds-a.json"),
                                     R"({"tenants":[{"external_id":"a","jwt_secret":"s"}]})");
    const QString seedsB = writeFile(QStringLiteral("seeds-b.json"),
                                     R"({"tenants":[{"external_id":"b1","jwt_secret":"s"},)"
                                     R"({"external_id":"b2","jwt_jwks":{"keys":[]}}]})");
    const QString dirA = m_dir->filePath(QStringLiteral("data-a"));
    const QString dirB = m_dir->filePath(QStringLiteral("data-b"));
    const QStringList none;
    const QStringList withKey{ QStringLiteral("DB_ENC_KEY=0123456789abcdef") };
    const QStringList withDb{ QStringLiteral("DB_HOST=db.local"),
                              QStringLiteral("DB_ENC_KEY=0123456789abcdef") };
    const QStringList withGcmKey{ QStringLiteral(
            "DB_ENC_KEY_GCM=0123456789abcdef0123456789abcdef") };

    const auto row = [](const char *env, const QString &envValue, const QString &envExpected,
                        const QString &flagValue, const QString &flagExpected,
                        const QStringList &extra) {
        QTest::newRow(env) << QString::fromLatin1(env) << envValue << envExpected << flagValue
                           << flagExpected << extra;
    };
    const auto same = [&row](const char *env, const char *a, const char *b,
                             const QStringList &extra) {
        row(env, QString::fromUtf8(a), QString::fromUtf8(a), QString::fromUtf8(b),
            QString::fromUtf8(b), extra);
    };
    same("PORT", "4100", "0", none);
    same("LISTEN_ADDRESS", "127.0.0.1", "::1", none);
    same("API_JWT_SECRET", "env-secret", "flag-secret", none);
    same("API_JWT_JWKS", R"({"keys":[]})", R"({"keys":[{"kty":"oct"}]})", none);
    row("SEED_SELF_HOST", QStringLiteral("true"), QStringLiteral("true"), QStringLiteral("0"),
        QStringLiteral("false"), { QStringLiteral("API_JWT_SECRET=x") });
    row("SELF_HOST_TENANT_NAME", QStringLiteral("Dev-Tenant"), QStringLiteral("dev-tenant"),
        QStringLiteral("other"), QStringLiteral("other"), none);
    row("SEED_TENANTS_FILE", seedsA, QStringLiteral("a"), seedsB, QStringLiteral("b1,b2"), none);
    same("DB_HOST", "db.env", "db.flag", withKey);
    same("API_JWT_SECRET_NEXT", "next-env", "next-flag", none);
    same("API_TOKEN_BLOCKLIST", "a,b", "c", none);
    row("API_JWT_OPERATOR_ROLES", QStringLiteral(" ops , service_role,"),
        QStringLiteral("ops,service_role"), QStringLiteral("admin"), QStringLiteral("admin"), none);
    same("METRICS_JWT_SECRET", "metrics-env", "metrics-flag", none);
    same("METRICS_TOKEN_BLOCKLIST", "m1", "m2,m3", none);
    same("TENANT_CACHE_EXPIRATION_IN_MS", "1000", "2500", none);
    same("REGION", "eu-west-1", "us-east-1", none);
    same("NODE_NAME", "node-a", "node-b", none);
    same("DB_PORT", "6543", "5433", withDb);
    same("DB_NAME", "envdb", "flagdb", withDb);
    same("DB_USER", "envuser", "flaguser", withDb);
    same("DB_PASSWORD", "envpass", "flagpass", withDb);
    same("DB_REPLICA_HOST", "replica.env", "replica.flag", withDb);
    same("DB_REPLICA_PORT", "6544", "5434", withDb);
    same("DB_REPLICA_DELAY_MS", "0", "500", none);
    same("DB_REPLICA_RETRY_MS", "100", "60000", none);
    row("DATA_DIR", dirA, dirA, dirB, dirB, none);
    same("DB_ENC_KEY", "0123456789abcdef", "fedcba9876543210", withDb);
    same("DB_ENC_KEY_GCM", "0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210",
         none);
    same("DB_ENC_WRITE_GCM", "true", "true", withGcmKey);
    same("TENANT_MAX_CONCURRENT_USERS", "7", "8", none);
    same("TENANT_MAX_EVENTS_PER_SECOND", "9", "10", none);
    same("TENANT_MAX_BYTES_PER_SECOND", "11", "12", none);
    same("TENANT_MAX_CHANNELS_PER_CLIENT", "13", "14", none);
    same("TENANT_MAX_JOINS_PER_SECOND", "15", "16", none);
    same("TENANT_MAX_PRESENCE_EVENTS_PER_SECOND", "17", "18", none);
    same("TENANT_MAX_PAYLOAD_SIZE_IN_KB", "19", "20", none);
    same("CLIENT_PRESENCE_MAX_CALLS", "21", "22", none);
    same("CLIENT_PRESENCE_WINDOW_MS", "23", "24", none);
    same("CONNECT_ERROR_BACKOFF_MS", "100", "0", none);
    same("CHANNEL_ERROR_BACKOFF_MS", "100", "0", none);
    same("NO_CHANNEL_TIMEOUT_IN_MS", "1000", "250", none);
    same("JWT_CLAIM_VALIDATORS", R"({"iss":"env"})", R"({"iss":"flag"})", none);
    same("WORKERS", "3", "1", none);
    same("EVENT_DISPATCHER", "qt", "epoll", none);
    same("LOG_LEVEL", "debug", "warning", none);
    same("TENANT_DB_IDLE_TIMEOUT_IN_MS", "5000", "7000", none);
    same("TENANT_DB_POOL_SIZE", "1", "8", none);
    same("TENANT_DB_CONNECT_RETRY_MS", "0", "100", none);
    same("SLOT_NAME_SUFFIX", "blue", "green", none);
    same("RLS_STRATEGY", "naive", "naive", none);
    const QStringList withSecret{ QStringLiteral("CLUSTER_PLAINTEXT_LINKS=true"),
                                  QStringLiteral("CLUSTER_SECRET=") + LongSecret };
    // A certificate and key for the TLS options, from a throwaway CA.
    const rt::testing::TestCertificateAuthority authority;
    const rt::testing::IssuedCertificate leaf = authority.issue({ QStringLiteral("node-a") });
    const QString ca = writeFile(QStringLiteral("ca.crt"), authority.certificatePem());
    const QString cert = writeFile(QStringLiteral("node.crt"), leaf.certificatePem);
    const QString key = writeFile(QStringLiteral("node.key"), leaf.keyPem);
    const QString etcd = QStringLiteral("ETCD_ENDPOINTS=http://127.0.0.1:2379");
    row("TLS_CERT_FILE", cert, cert, cert, cert, { QStringLiteral("TLS_KEY_FILE=") + key });
    row("TLS_KEY_FILE", key, key, key, key, { QStringLiteral("TLS_CERT_FILE=") + cert });
    row("TLS_MIN_VERSION", QStringLiteral("1.3"), QStringLiteral("1.3"), QStringLiteral("TLSv1.3"),
        QStringLiteral("1.3"), none);
    row("CLUSTER_TLS_CA_FILE", ca, ca, ca, ca,
        { etcd, QStringLiteral("NODE_NAME=node-a"), QStringLiteral("CLUSTER_TLS_CERT_FILE=") + cert,
          QStringLiteral("CLUSTER_TLS_KEY_FILE=") + key });
    row("CLUSTER_TLS_CERT_FILE", cert, cert, cert, cert,
        { etcd, QStringLiteral("NODE_NAME=node-a"), QStringLiteral("CLUSTER_TLS_CA_FILE=") + ca,
          QStringLiteral("CLUSTER_TLS_KEY_FILE=") + key });
    row("CLUSTER_TLS_KEY_FILE", key, key, key, key,
        { etcd, QStringLiteral("NODE_NAME=node-a"), QStringLiteral("CLUSTER_TLS_CA_FILE=") + ca,
          QStringLiteral("CLUSTER_TLS_CERT_FILE=") + cert });
    row("CLUSTER_PLAINTEXT_LINKS", QStringLiteral("yes"), QStringLiteral("true"),
        QStringLiteral("1"), QStringLiteral("true"),
        { QStringLiteral("CLUSTER_SECRET=") + LongSecret });
    row("ETCD_ENDPOINTS", QStringLiteral("http://127.0.0.1:2379"),
        QStringLiteral("http://127.0.0.1:2379"), QStringLiteral("http://a:1, https://b:2"),
        QStringLiteral("http://a:1,https://b:2"), withSecret);
    same("ETCD_PREFIX", "/env", "/flag/x", none);
    same("CLUSTER_LEASE_TTL_S", "3", "60", none);
    same("CLUSTER_PORT", "7000", "7001", none);
    same("CLUSTER_LISTEN_ADDRESS", "10.0.0.5", "::1", none);
    same("MAX_CONNECTIONS", "5000", "0", none);
    same("MAX_PENDING_CONNECTIONS_PER_ADDRESS", "16", "0", none);
    same("CLUSTER_ADVERTISE_HOST", "10.0.0.5", "node-b.internal", none);
    same("CLUSTER_SECRET", "env-secret", "flag-secret", none);
    same("CLUSTER_LINKS_PER_PEER", "1", "4", none);
    same("CLUSTER_LOADAVG_FILE", "/run/load-a", "/run/load-b", none);
    same("CLUSTER_LOAD_MIN_UPTIME_S", "0", "60", none);
    // etcd over TLS with a client certificate and a v3 user (https endpoints; pairs go together).
    const QStringList etcdTls =
            withSecret + QStringList{ QStringLiteral("ETCD_ENDPOINTS=https://etcd.internal:2379") };
    const auto etcdTlsWith = [&etcdTls](const QString &extra) {
        return etcdTls + QStringList{ extra };
    };
    row("ETCD_CA_FILE", ca, ca, cert, cert, etcdTls);
    row("ETCD_CERT_FILE", cert, cert, cert, cert,
        etcdTlsWith(QStringLiteral("ETCD_KEY_FILE=") + key));
    row("ETCD_KEY_FILE", key, key, key, key, etcdTlsWith(QStringLiteral("ETCD_CERT_FILE=") + cert));
    same("ETCD_USERNAME", "realtime", "operator",
         etcdTlsWith(QStringLiteral("ETCD_PASSWORD=secret")));
    same("ETCD_PASSWORD", "env-password", "flag-password",
         etcdTlsWith(QStringLiteral("ETCD_USERNAME=realtime")));
    same("DB_SSLMODE", "require", "disable", withDb);
    row("DB_SSLROOTCERT", ca, ca, cert, cert, withDb);
    row("TENANT_DB_SSLROOTCERT", ca, ca, cert, cert, none);
    same("CDC_MAX_INFLIGHT_BYTES", "1048576", "2000000", none);
    same("MAX_SEND_BUFFER_BYTES", "65536", "1000000", none);
    same("SOCKET_HIGH_WATER_BYTES", "16384", "200000", none);
    same("SLOW_CONSUMER_GRACE_MS", "100", "2500", none);
    same("WEBSOCKET_IDLE_TIMEOUT_MS", "1000", "90000", none);
}

void ConfigTest::everyOption()
{
    QFETCH(QString, env);
    QFETCH(QString, envValue);
    QFETCH(QString, envExpected);
    QFETCH(QString, flagValue);
    QFETCH(QString, flagExpected);
    QFETCH(QStringList, extraEnvironment);

    const QString flag = flagOf(env);
    QVERIFY(!flag.isEmpty());
    Environment base = environmentFrom(extraEnvironment);

    // From the environment.
    Environment withEnv = base;
    withEnv.insert(env, envValue);
    const auto fromEnv = parseConfig({ Program }, withEnv);
    QVERIFY2(fromEnv.ok(), fromEnv.ok() ? "" : qPrintable(fromEnv.error().message));
    QCOMPARE(fieldOf(fromEnv->config, env), envExpected);

    // From the flag, both spellings.
    const auto fromFlag = parseConfig({ Program, flag, flagValue }, base);
    QVERIFY2(fromFlag.ok(), fromFlag.ok() ? "" : qPrintable(fromFlag.error().message));
    QCOMPARE(fieldOf(fromFlag->config, env), flagExpected);
    const auto fromFlagEquals = parseConfig({ Program, flag + u'=' + flagValue }, base);
    QVERIFY(fromFlagEquals.ok());
    QCOMPARE(fieldOf(fromFlagEquals->config, env), flagExpected);

    // Both: the flag wins.
    const auto both = parseConfig({ Program, flag, flagValue }, withEnv);
    QVERIFY2(both.ok(), both.ok() ? "" : qPrintable(both.error().message));
    QCOMPARE(fieldOf(both->config, env), flagExpected);

    // And the option is really read: the result differs from the default (for an option that
    // goes with others, its partners alone are refused, naming it).
    const auto defaults = parseConfig({ Program }, base);
    if (!defaults.ok()) {
        QVERIFY2(defaults.error().message.contains(env), qPrintable(defaults.error().message));
        return;
    }
    QVERIFY(fieldOf(defaults->config, env) != envExpected
            || fieldOf(defaults->config, env) != flagExpected);
}

void ConfigTest::helpListsEveryOption_data()
{
    QTest::addColumn<QString>("env");
    QTest::addColumn<QString>("flag");
    for (const Documented &option : DocumentedOptions) {
        QTest::newRow(option.env) << QString::fromLatin1(option.env)
                                  << QLatin1String("--") + QLatin1String(option.flag);
    }
}

void ConfigTest::helpListsEveryOption()
{
    QFETCH(QString, env);
    QFETCH(QString, flag);

    const auto parsed = parseConfig({ Program, QStringLiteral("--help") }, {});
    QVERIFY(parsed.ok());
    QCOMPARE(parsed->action, ConfigRequest::Action::ShowHelp);
    const QString help = parsed->helpText;
    QVERIFY2(help.contains(flag + u' '), qPrintable(flag + QLatin1String(" missing in:\n") + help));
    // The variable's name must appear whole (an operator greps or copies it).
    const QString bracketed = u'[' + env + u']';
    QVERIFY2(help.contains(bracketed),
             qPrintable(bracketed + QLatin1String(" missing in:\n") + help));
}

void ConfigTest::shortHelp()
{
    const auto parsed = parseConfig({ Program, QStringLiteral("-h") }, {});
    QVERIFY(parsed.ok());
    QCOMPARE(parsed->action, ConfigRequest::Action::ShowHelp);
    QVERIFY(parsed->helpText.contains(QLatin1String("--port")));
}

void ConfigTest::versionRequest()
{
    const auto parsed = parseConfig({ Program, QStringLiteral("--version") }, {});
    QVERIFY(parsed.ok());
    QCOMPARE(parsed->action, ConfigRequest::Action::ShowVersion);
}

void ConfigTest::invalidValues_data()
{
    QTest::addColumn<QStringList>("environment");
    QTest::addColumn<QString>("expected");

    const auto row = [](const char *name, const QStringList &environment, const char *expected) {
        QTest::newRow(name) << environment << QString::fromUtf8(expected);
    };
    row("API_JWT_OPERATOR_ROLES empty", { QStringLiteral("API_JWT_OPERATOR_ROLES= , ") },
        R"(invalid API_JWT_OPERATOR_ROLES (--api-jwt-operator-roles): " , "; expected at least one role, comma-separated)");
    row("PORT not a number", { QStringLiteral("PORT=abc") },
        R"(invalid PORT (--port): "abc"; expected an integer from 0 to 65535)");
    row("PORT too big", { QStringLiteral("PORT=65536") },
        R"(invalid PORT (--port): "65536"; expected an integer from 0 to 65535)");
    row("PORT negative", { QStringLiteral("PORT=-1") },
        R"(invalid PORT (--port): "-1"; expected an integer from 0 to 65535)");
    row("PORT fractional", { QStringLiteral("PORT=80.5") },
        R"(invalid PORT (--port): "80.5"; expected an integer from 0 to 65535)");
    row("LISTEN_ADDRESS", { QStringLiteral("LISTEN_ADDRESS=example.com") },
        R"(invalid LISTEN_ADDRESS (--listen-address): "example.com"; expected an IPv4 or IPv6 address)");
    row("API_JWT_JWKS", { QStringLiteral("API_JWT_JWKS={}") },
        R"(invalid API_JWT_JWKS (--api-jwt-jwks): "{}"; expected a JSON object with a "keys" array)");
    row("SEED_SELF_HOST", { QStringLiteral("SEED_SELF_HOST=maybe") },
        R"(invalid SEED_SELF_HOST (--seed-self-host): "maybe"; expected true or false)");
    row("SELF_HOST_TENANT_NAME", { QStringLiteral("SELF_HOST_TENANT_NAME=a.b") },
        R"(invalid SELF_HOST_TENANT_NAME (--self-host-tenant-name): "a.b"; expected a non-empty name without dots (it is a DNS label))");
    row("DB_PORT", { QStringLiteral("DB_HOST=db"), QStringLiteral("DB_PORT=0") },
        R"(invalid DB_PORT (--db-port): "0"; expected an integer from 1 to 65535)");
    row("DB_REPLICA_PORT",
        { QStringLiteral("DB_HOST=db"), QStringLiteral("DB_ENC_KEY=0123456789abcdef"),
          QStringLiteral("DB_REPLICA_HOST=replica"), QStringLiteral("DB_REPLICA_PORT=65536") },
        R"(invalid DB_REPLICA_PORT (--db-replica-port): "65536"; expected an integer from 1 to 65535)");
    row("DB_REPLICA_DELAY_MS", { QStringLiteral("DB_REPLICA_DELAY_MS=-1") },
        R"(invalid DB_REPLICA_DELAY_MS (--db-replica-delay-ms): "-1"; expected an integer from 0 to 3600000)");
    row("DB_REPLICA_RETRY_MS", { QStringLiteral("DB_REPLICA_RETRY_MS=50") },
        R"(invalid DB_REPLICA_RETRY_MS (--db-replica-retry-ms): "50"; expected an integer from 100 to 600000)");
    row("DB_REPLICA_HOST without DB_HOST", { QStringLiteral("DB_REPLICA_HOST=replica") },
        "DB_REPLICA_HOST (--db-replica-host) needs DB_HOST (--db-host): it names a replica of the "
        "PostgreSQL control plane");
    row("TENANT_MAX_CONCURRENT_USERS", { QStringLiteral("TENANT_MAX_CONCURRENT_USERS=0") },
        R"(invalid TENANT_MAX_CONCURRENT_USERS (--tenant-max-concurrent-users): "0"; expected an integer from 1 to 1000000000)");
    row("TENANT_MAX_PAYLOAD_SIZE_IN_KB", { QStringLiteral("TENANT_MAX_PAYLOAD_SIZE_IN_KB=lots") },
        R"(invalid TENANT_MAX_PAYLOAD_SIZE_IN_KB (--tenant-max-payload-size-in-kb): "lots"; expected an integer from 1 to 1000000)");
    row("CONNECT_ERROR_BACKOFF_MS", { QStringLiteral("CONNECT_ERROR_BACKOFF_MS=-5") },
        R"(invalid CONNECT_ERROR_BACKOFF_MS (--connect-error-backoff-ms): "-5"; expected an integer from 0 to 600000)");
    row("JWT_CLAIM_VALIDATORS", { QStringLiteral("JWT_CLAIM_VALIDATORS=[1]") },
        R"(invalid JWT_CLAIM_VALIDATORS (--jwt-claim-validators): "[1]"; expected a JSON object)");
    row("WORKERS", { QStringLiteral("WORKERS=many") },
        R"(invalid WORKERS (--workers): "many"; expected an integer from 0 to 256)");
    row("EVENT_DISPATCHER", { QStringLiteral("EVENT_DISPATCHER=glib") },
        R"(invalid EVENT_DISPATCHER (--event-dispatcher): "glib"; expected epoll or qt)");
    row("LOG_LEVEL", { QStringLiteral("LOG_LEVEL=loud") },
        R"(invalid LOG_LEVEL (--log-level): "loud"; expected debug, info, warning or error)");
    row("RLS_STRATEGY", { QStringLiteral("RLS_STRATEGY=smart") },
        R"(invalid RLS_STRATEGY (--rls-strategy): "smart"; expected batched or naive)");
    row("ETCD_ENDPOINTS without scheme",
        { QStringLiteral("ETCD_ENDPOINTS=127.0.0.1:2379"), QStringLiteral("CLUSTER_SECRET=s") },
        R"(invalid ETCD_ENDPOINTS (--etcd-endpoints): "127.0.0.1:2379"; expected comma-separated http(s)://host:port URLs)");
    row("ETCD_PREFIX", { QStringLiteral("ETCD_PREFIX=qtrealtime/") },
        R"(invalid ETCD_PREFIX (--etcd-prefix): "qtrealtime/"; expected a key prefix starting with / and not ending with /)");
    row("CLUSTER_LEASE_TTL_S", { QStringLiteral("CLUSTER_LEASE_TTL_S=1") },
        R"(invalid CLUSTER_LEASE_TTL_S (--cluster-lease-ttl-s): "1"; expected an integer from 2 to 300)");
    row("CLUSTER_LISTEN_ADDRESS", { QStringLiteral("CLUSTER_LISTEN_ADDRESS=eth0") },
        R"(invalid CLUSTER_LISTEN_ADDRESS (--cluster-listen-address): "eth0"; expected an IPv4 or IPv6 address)");
    row("MAX_CONNECTIONS", { QStringLiteral("MAX_CONNECTIONS=-1") },
        R"(invalid MAX_CONNECTIONS (--max-connections): "-1"; expected an integer from 0 to 100000000)");
    row("CLUSTER_PORT", { QStringLiteral("CLUSTER_PORT=70000") },
        R"(invalid CLUSTER_PORT (--cluster-port): "70000"; expected an integer from 0 to 65535)");
    row("CLUSTER_LINKS_PER_PEER", { QStringLiteral("CLUSTER_LINKS_PER_PEER=0") },
        R"(invalid CLUSTER_LINKS_PER_PEER (--cluster-links-per-peer): "0"; expected an integer from 1 to 16)");
    row("CLUSTER_LOAD_MIN_UPTIME_S", { QStringLiteral("CLUSTER_LOAD_MIN_UPTIME_S=-1") },
        R"(invalid CLUSTER_LOAD_MIN_UPTIME_S (--cluster-load-min-uptime-s): "-1"; expected an integer from 0 to 86400)");
    const QString etcd = QStringLiteral("ETCD_ENDPOINTS=http://127.0.0.1:2379");
    row("ETCD_ENDPOINTS without link security",
        { etcd, QStringLiteral("CLUSTER_SECRET=") + LongSecret },
        "ETCD_ENDPOINTS (--etcd-endpoints) needs secured node links: mutual TLS "
        "(CLUSTER_TLS_CA_FILE, CLUSTER_TLS_CERT_FILE, CLUSTER_TLS_KEY_FILE) or, on a private "
        "network, CLUSTER_PLAINTEXT_LINKS=true with a CLUSTER_SECRET of at least 32 bytes");
    row("plaintext links with a short secret",
        { etcd, QStringLiteral("CLUSTER_PLAINTEXT_LINKS=true"),
          QStringLiteral("CLUSTER_SECRET=0123456789012345678901234567890") },
        "CLUSTER_PLAINTEXT_LINKS (--cluster-plaintext-links) needs a CLUSTER_SECRET "
        "(--cluster-secret) of at least 32 bytes: it alone authenticates the links");
    row("part of the link TLS files", { etcd, QStringLiteral("CLUSTER_TLS_CA_FILE=/a.crt") },
        "CLUSTER_TLS_CA_FILE, CLUSTER_TLS_CERT_FILE and CLUSTER_TLS_KEY_FILE go together: set all "
        "three or none");
    row("link TLS files that are missing",
        { etcd, QStringLiteral("CLUSTER_TLS_CA_FILE=/nonexistent/ca.crt"),
          QStringLiteral("CLUSTER_TLS_CERT_FILE=/nonexistent/node.crt"),
          QStringLiteral("CLUSTER_TLS_KEY_FILE=/nonexistent/node.key") },
        "CLUSTER_TLS_*: cannot read the CA file /nonexistent/ca.crt: No such file or directory");
    row("a certificate without its key", { QStringLiteral("TLS_CERT_FILE=/a.crt") },
        "TLS_CERT_FILE (--tls-cert-file) and TLS_KEY_FILE (--tls-key-file) go together: set both "
        "or neither");
    row("a missing certificate file",
        { QStringLiteral("TLS_CERT_FILE=/nonexistent/a.crt"),
          QStringLiteral("TLS_KEY_FILE=/nonexistent/a.key") },
        "TLS_CERT_FILE / TLS_KEY_FILE: cannot read the certificate file /nonexistent/a.crt: No "
        "such file or directory");
    row("TLS_MIN_VERSION 1.1", { QStringLiteral("TLS_MIN_VERSION=1.1") },
        R"(invalid TLS_MIN_VERSION (--tls-min-version): "1.1"; expected 1.2 or 1.3)");
}

void ConfigTest::invalidValues()
{
    QFETCH(QStringList, environment);
    QFETCH(QString, expected);

    const auto parsed = parseConfig({ Program }, environmentFrom(environment));
    QVERIFY(!parsed.ok());
    QCOMPARE(parsed.error().message, expected);
}

void ConfigTest::invalidFlagValueNamesTheEnvironmentVariable()
{
    const auto parsed =
            parseConfig({ Program, QStringLiteral("--port"), QStringLiteral("abc") }, {});
    QVERIFY(!parsed.ok());
    QCOMPARE(
            parsed.error().message,
            QStringLiteral(R"(invalid PORT (--port): "abc"; expected an integer from 0 to 65535)"));
}

void ConfigTest::firstErrorOnly()
{
    const auto parsed =
            parseConfig({ Program },
                        environmentFrom({ QStringLiteral("PORT=x"), QStringLiteral("WORKERS=y") }));
    QVERIFY(!parsed.ok());
    // One clear message, not a list.
    QVERIFY(parsed.error().message.startsWith(QLatin1String("invalid PORT (--port)")));
    QVERIFY(!parsed.error().message.contains(QLatin1String("WORKERS")));
    QVERIFY(!parsed.error().message.contains(u'\n'));
}

void ConfigTest::booleans_data()
{
    QTest::addColumn<QString>("value");
    QTest::addColumn<bool>("expected");

    const std::pair<const char *, bool> cases[] = {
        { "true", true },   { "TRUE", true }, { "True", true },   { "1", true },
        { "yes", true },    { "YES", true },  { " true ", true }, { "false", false },
        { "FALSE", false }, { "0", false },   { "no", false },    { "No", false },
    };
    for (const auto &[value, expected] : cases) {
        QTest::newRow(value) << QString::fromLatin1(value) << expected;
    }
}

void ConfigTest::booleans()
{
    QFETCH(QString, value);
    QFETCH(bool, expected);

    Environment environment{ { QStringLiteral("API_JWT_SECRET"), QStringLiteral("x") },
                             { QStringLiteral("SEED_SELF_HOST"), value } };
    const auto fromEnv = parseConfig({ Program }, environment);
    QVERIFY2(fromEnv.ok(), fromEnv.ok() ? "" : qPrintable(fromEnv.error().message));
    QCOMPARE(fromEnv->config.seedSelfHost, expected);

    environment.remove(QStringLiteral("SEED_SELF_HOST"));
    const auto fromFlag =
            parseConfig({ Program, QStringLiteral("--seed-self-host"), value }, environment);
    QVERIFY(fromFlag.ok());
    QCOMPARE(fromFlag->config.seedSelfHost, expected);
}

void ConfigTest::seedSelfHostNeedsASecret()
{
    const auto missing = parseConfig(
            { Program }, { { QStringLiteral("SEED_SELF_HOST"), QStringLiteral("true") } });
    QVERIFY(!missing.ok());
    QVERIFY2(missing.error().message.contains(QLatin1String("SEED_SELF_HOST"))
                     && missing.error().message.contains(QLatin1String("API_JWT_SECRET")),
             qPrintable(missing.error().message));

    const auto withSecret = parseConfig({ Program, QStringLiteral("--seed-self-host=true"),
                                          QStringLiteral("--api-jwt-secret=s3cret") },
                                        {});
    QVERIFY(withSecret.ok());
    QVERIFY(withSecret->config.seedSelfHost);
    QCOMPARE(withSecret->config.apiJwtSecret, QByteArray("s3cret"));

    // Not seeding: no secret needed.
    QVERIFY(parseConfig({ Program },
                        { { QStringLiteral("SEED_SELF_HOST"), QStringLiteral("false") } })
                    .ok());
}

void ConfigTest::dbHostSelectsPostgres()
{
    // A PostgreSQL control plane needs the key that encrypts tenant secrets at rest.
    const auto withoutKey =
            parseConfig({ Program }, { { QStringLiteral("DB_HOST"), QStringLiteral("db.local") } });
    QVERIFY(!withoutKey.ok());
    QVERIFY2(withoutKey.error().message.contains(QLatin1String("DB_ENC_KEY")),
             qPrintable(withoutKey.error().message));

    const auto postgres =
            parseConfig({ Program },
                        { { QStringLiteral("DB_HOST"), QStringLiteral("db.local") },
                          { QStringLiteral("DB_ENC_KEY"), QStringLiteral("0123456789abcdef") } });
    QVERIFY(postgres.ok());
    const ControlPlaneSettings &settings = postgres->config.controlPlane;
    QCOMPARE(settings.backend, ControlPlaneSettings::Backend::Postgres);
    QCOMPARE(settings.host, QStringLiteral("db.local"));
    QCOMPARE(settings.port, 5432);
    QCOMPARE(settings.database, QStringLiteral("postgres"));
    QCOMPARE(settings.user, QStringLiteral("postgres"));
    QCOMPARE(settings.password, QString());

    const auto viaFlag = parseConfig({ Program, QStringLiteral("--db-host"), QStringLiteral("h"),
                                       QStringLiteral("--db-enc-key=0123456789abcdef") },
                                     {});
    QVERIFY(viaFlag.ok());
    QCOMPARE(viaFlag->config.controlPlane.backend, ControlPlaneSettings::Backend::Postgres);

    // Without DB_HOST: SQLite in the data directory, whatever the other DB_* say.
    const QString data = m_dir->filePath(QStringLiteral("data"));
    const auto sqlite = parseConfig({ Program },
                                    { { QStringLiteral("DATA_DIR"), data },
                                      { QStringLiteral("DB_NAME"), QStringLiteral("x") } });
    QVERIFY(sqlite.ok());
    QCOMPARE(sqlite->config.controlPlane.backend, ControlPlaneSettings::Backend::Sqlite);
    QCOMPARE(QDir::cleanPath(sqlite->config.controlPlane.sqlitePath),
             QDir::cleanPath(data + QStringLiteral("/control-plane.sqlite3")));
}

void ConfigTest::seedTenantsFile()
{
    const QString path = writeFile(
            QStringLiteral("tenants.json"),
            R"({"tenants":[{"external_id":"one","jwt_secret":"s1","max_concurrent_users":3},)"
            R"({"external_id":"two","jwt_secret":"s2","private_only":true,)"
            R"("extensions":[{"type":"postgres_cdc_rls","settings":{"db_host":"h","db_port":"5432",)"
            R"("db_name":"postgres","db_user":"u","db_password":"p","region":"local"}}]}]})");
    const auto parsed = parseConfig({ Program }, { { QStringLiteral("SEED_TENANTS_FILE"), path } });
    QVERIFY2(parsed.ok(), parsed.ok() ? "" : qPrintable(parsed.error().message));
    const QList<rt::tenants::TenantInput> &seeds = parsed->config.seedTenants;
    QCOMPARE(parsed->config.seedTenantsFile, path);
    QCOMPARE(seeds.size(), 2);
    QCOMPARE(seeds.at(0).externalId, QByteArray("one"));
    QCOMPARE(seeds.at(0).maxConcurrentUsers, std::optional<int>(3));
    QCOMPARE(seeds.at(1).externalId, QByteArray("two"));
    QVERIFY(seeds.at(1).privateOnly);
    QCOMPARE(seeds.at(1).extensions.size(), 1);
    QCOMPARE(seeds.at(1).extensions.at(0).settings.value(QStringLiteral("db_password")),
             QJsonValue(QStringLiteral("p")));
}

void ConfigTest::seedTenantsFileErrors_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("expectedStart");
    QTest::addColumn<QString>("expectedPart");

    const QString missing = m_dir->filePath(QStringLiteral("missing.json"));
    QTest::newRow("missing file")
            << missing
            << QStringLiteral(R"(invalid SEED_TENANTS_FILE (--seed-tenants-file): "%1"; )"
                              R"(expected a readable file)")
                       .arg(missing)
            << QString();
    const QString notJson = writeFile(QStringLiteral("not-json.json"), "{tenants:");
    QTest::newRow("not JSON")
            << notJson
            << QStringLiteral(R"(invalid SEED_TENANTS_FILE (--seed-tenants-file): "%1"; )"
                              R"(expected a JSON object with a "tenants" array)")
                       .arg(notJson)
            << QString();
    const QString noList = writeFile(QStringLiteral("no-list.json"), R"({"tenants":{}})");
    QTest::newRow("tenants not a list")
            << noList
            << QStringLiteral(R"(invalid SEED_TENANTS_FILE (--seed-tenants-file): "%1"; )"
                              R"(expected a JSON object with a "tenants" array)")
                       .arg(noList)
            << QString();
    const QString array = writeFile(QStringLiteral("array.json"), R"([{"external_id":"a"}])");
    QTest::newRow("top-level array")
            << array
            << QStringLiteral(R"(invalid SEED_TENANTS_FILE (--seed-tenants-file): "%1"; )"
                              R"(expected a JSON object with a "tenants" array)")
                       .arg(array)
            << QString();
    const QString badTenant =
            writeFile(QStringLiteral("bad-tenant.json"),
                      R"({"tenants":[{"external_id":"ok","jwt_secret":"s"},{"jwt_secret":"s"}]})");
    QTest::newRow("invalid tenant")
            << badTenant
            << QStringLiteral(R"(invalid SEED_TENANTS_FILE (--seed-tenants-file): "%1"; )")
                       .arg(badTenant)
            << QString::fromUtf8(R"(tenant #1 has errors {"external_id":["can't be blank"]})");
}

void ConfigTest::seedTenantsFileErrors()
{
    QFETCH(QString, file);
    QFETCH(QString, expectedStart);
    QFETCH(QString, expectedPart);

    const auto parsed = parseConfig({ Program, QStringLiteral("--seed-tenants-file"), file }, {});
    QVERIFY(!parsed.ok());
    const QString message = parsed.error().message;
    QVERIFY2(message.startsWith(expectedStart), qPrintable(message));
    QVERIFY2(message.contains(expectedPart), qPrintable(message));
    QVERIFY(!message.contains(u'\n'));
}

void ConfigTest::unknownOptionsAndArguments()
{
    const auto unknown = parseConfig({ Program, QStringLiteral("--bogus") }, {});
    QVERIFY(!unknown.ok());
    QVERIFY2(unknown.error().message.contains(QLatin1String("bogus")),
             qPrintable(unknown.error().message));
    const auto positional = parseConfig({ Program, QStringLiteral("extra") }, {});
    QVERIFY(!positional.ok());
    QVERIFY2(positional.error().message.contains(QLatin1String("extra")),
             qPrintable(positional.error().message));
    const auto missingValue = parseConfig({ Program, QStringLiteral("--port") }, {});
    QVERIFY(!missingValue.ok());
}

void ConfigTest::checkConfigParsesLikeAStart()
{
    const QString data = m_dir->filePath(QStringLiteral("check-data"));
    const Environment environment = environmentFrom(
            { QStringLiteral("PORT=4321"), QStringLiteral("DATA_DIR=") + data,
              QStringLiteral("WORKERS=3"), QStringLiteral("API_JWT_SECRET=s3cret") });
    const auto run = parseConfig({ Program }, environment);
    const auto check = parseConfig({ Program, QStringLiteral("--check-config") }, environment);
    QVERIFY2(check.ok(), check.ok() ? "" : qPrintable(check.error().message));
    QCOMPARE(run->action, ConfigRequest::Action::Run);
    QCOMPARE(check->action, ConfigRequest::Action::CheckConfig);
    // The same configuration as a start: every option compares equal.
    for (const Documented &option : DocumentedOptions) {
        const QString env = QString::fromLatin1(option.env);
        QCOMPARE(fieldOf(check->config, env), fieldOf(run->config, env));
    }
    QCOMPARE(check->config.controlPlane.sqlitePath, run->config.controlPlane.sqlitePath);

    // Flags count too, and the position of --check-config does not matter.
    const auto withFlags =
            parseConfig({ Program, QStringLiteral("--port=1234"), QStringLiteral("--check-config"),
                          QStringLiteral("--workers"), QStringLiteral("2") },
                        environment);
    QVERIFY(withFlags.ok());
    QCOMPARE(withFlags->action, ConfigRequest::Action::CheckConfig);
    QCOMPARE(withFlags->config.port, quint16(1234));
    QCOMPARE(withFlags->config.workers, 2);

    // --help and --version still win.
    const auto help = parseConfig(
            { Program, QStringLiteral("--check-config"), QStringLiteral("--help") }, {});
    QVERIFY(help.ok());
    QCOMPARE(help->action, ConfigRequest::Action::ShowHelp);
}

void ConfigTest::checkConfigReportsTheSameErrors()
{
    const QStringList bad[] = {
        { QStringLiteral("PORT=abc") },
        { QStringLiteral("DB_HOST=db.local") },
        { QStringLiteral("SEED_SELF_HOST=true") },
        { QStringLiteral("LOG_LEVEL=loud"), QStringLiteral("WORKERS=many") },
    };
    for (const QStringList &pairs : bad) {
        const Environment environment = environmentFrom(pairs);
        const auto run = parseConfig({ Program }, environment);
        const auto check = parseConfig({ Program, QStringLiteral("--check-config") }, environment);
        QVERIFY(!run.ok());
        QVERIFY2(!check.ok(), qPrintable(pairs.join(u' ')));
        QCOMPARE(check.error().message, run.error().message);
    }
    const auto unknown = parseConfig({ Program, QStringLiteral("--check-config=yes") }, {});
    QVERIFY(!unknown.ok());
}

void ConfigTest::checkConfigSummary_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QStringList>("environment");
    QTest::addColumn<QString>("expected");

    const QString data = QDir::cleanPath(m_dir->filePath(QStringLiteral("summary-data")));
    const QString seeds = writeFile(QStringLiteral("summary-seeds.json"),
                                    R"({"tenants":[{"external_id":"one","jwt_secret":"s"},)"
                                    R"({"external_id":"two","jwt_secret":"s"}]})");
    QTest::newRow("defaults")
            << QStringList() << QStringList{ QStringLiteral("DATA_DIR=") + data }
            << QStringLiteral("configuration ok: port 4000 on 0.0.0.0, control plane sqlite "
                              "%1/control-plane.sqlite3, seeded tenants: none, tenant API secret "
                              "not set, cluster single node")
                       .arg(data);
    QTest::newRow("self-host and seeds file")
            << QStringList{ QStringLiteral("--seed-tenants-file"), seeds }
            << QStringList{ QStringLiteral("DATA_DIR=") + data, QStringLiteral("PORT=4100"),
                            QStringLiteral("LISTEN_ADDRESS=::1"),
                            QStringLiteral("SEED_SELF_HOST=true"),
                            QStringLiteral("API_JWT_SECRET=top-secret") }
            << QStringLiteral("configuration ok: port 4100 on [::1], control plane sqlite "
                              "%1/control-plane.sqlite3, seeded tenants: realtime-dev "
                              "(self-host), one, two, tenant API secret set, cluster single node")
                       .arg(data);
    QTest::newRow("postgres")
            << QStringList{ QStringLiteral("--db-host=db.local") }
            << QStringList{ QStringLiteral("DB_ENC_KEY=0123456789abcdef"),
                            QStringLiteral("DB_USER=rt"), QStringLiteral("DB_PASSWORD=hunter2"),
                            QStringLiteral("DB_NAME=control"), QStringLiteral("DB_PORT=6543") }
            << QStringLiteral("configuration ok: port 4000 on 0.0.0.0, control plane postgres "
                              "rt@db.local:6543/control, seeded tenants: none, tenant API secret "
                              "not set, cluster single node");
    QTest::newRow("etcd cluster")
            << QStringList{ QStringLiteral("--cluster-port=7100") }
            << QStringList{ QStringLiteral("DATA_DIR=") + data,
                            QStringLiteral(
                                    "ETCD_ENDPOINTS=http://10.0.0.1:2379, http://10.0.0.2:2379"),
                            QStringLiteral("ETCD_PREFIX=/rt/prod"),
                            QStringLiteral("CLUSTER_PLAINTEXT_LINKS=true"),
                            QStringLiteral("CLUSTER_SECRET=") + LongSecret }
            << QStringLiteral("configuration ok: port 4000 on 0.0.0.0, control plane sqlite "
                              "%1/control-plane.sqlite3, seeded tenants: none, tenant API secret "
                              "not set, cluster etcd http://10.0.0.1:2379,http://10.0.0.2:2379 "
                              "under /rt/prod, node links on port 7100 (plaintext)")
                       .arg(data);
}

void ConfigTest::checkConfigSummary()
{
    QFETCH(QStringList, arguments);
    QFETCH(QStringList, environment);
    QFETCH(QString, expected);

    const auto parsed =
            parseConfig(QStringList{ Program, QStringLiteral("--check-config") } + arguments,
                        environmentFrom(environment));
    QVERIFY2(parsed.ok(), parsed.ok() ? "" : qPrintable(parsed.error().message));
    QCOMPARE(parsed->action, ConfigRequest::Action::CheckConfig);
    const QString summary = rt::app::configSummary(parsed->config);
    QCOMPARE(summary, expected);
    QVERIFY(!summary.contains(u'\n'));
    // Secrets never appear in the summary (it ends up in the journal).
    QVERIFY(!summary.contains(QLatin1String("top-secret")));
    QVERIFY(!summary.contains(QLatin1String("hunter2")));
    QVERIFY(!summary.contains(QLatin1String("0123456789abcdef")));
}

void ConfigTest::helpListsCheckConfig()
{
    const auto parsed = parseConfig({ Program, QStringLiteral("--help") }, {});
    QVERIFY(parsed.ok());
    QVERIFY(parsed->helpText.contains(QLatin1String("  --check-config\n")));
}

QTEST_GUILESS_MAIN(ConfigTest)
#include "tst_config.moc"
