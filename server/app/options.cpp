#include "server/app/options.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>

namespace rt::app::options {

namespace {

constexpr int Huge = 1'000'000'000;

void readEtcdEndpoints(Reader &read, const OptionSpec &option, ServerConfig &config)
{
    const QString endpoints = read.text(option).trimmed();
    for (const QString &part : endpoints.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        const QUrl url(part.trimmed(), QUrl::StrictMode);
        if (!url.isValid() || url.host().isEmpty()
            || (url.scheme() != QLatin1String("http") && url.scheme() != QLatin1String("https"))) {
            read.fail(option, endpoints,
                      QStringLiteral("comma-separated http(s)://host:port URLs"));
            return;
        }
        config.cluster.etcdEndpoints.append(url);
    }
}

// A CA file for libpq: readable, and free of the characters QPSQL's option string cannot carry.
QString readCaFile(Reader &read, const OptionSpec &option)
{
    QString path = read.text(option).trimmed();
    if (path.isEmpty()) {
        return path;
    }
    if (path.contains(QLatin1Char(';')) || path.contains(QLatin1Char(' '))
        || path.contains(QLatin1Char('\'')) || path.contains(QLatin1Char('\\'))) {
        read.fail(option, path, QStringLiteral("a file path without blanks, quotes or ';'"));
        return {};
    }
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        read.fail(option, path, QStringLiteral("a readable PEM file (%1)").arg(file.errorString()));
        return {};
    }
    return path;
}

void readJwks(Reader &read, const OptionSpec &option, ServerConfig &config)
{
    config.apiJwtJwks = read.text(option).toUtf8();
    if (config.apiJwtJwks.isEmpty()) {
        return;
    }
    const QJsonDocument jwks = QJsonDocument::fromJson(config.apiJwtJwks);
    if (!jwks.isObject() || !jwks.object().value(QLatin1String("keys")).isArray()) {
        read.fail(option, read.text(option), QStringLiteral("a JSON object with a \"keys\" array"));
    }
}

void readSeedTenants(Reader &read, const OptionSpec &option, ServerConfig &config)
{
    config.seedTenantsFile = read.text(option).trimmed();
    if (config.seedTenantsFile.isEmpty()) {
        return;
    }
    QFile file(config.seedTenantsFile);
    if (!file.open(QIODevice::ReadOnly)) {
        read.fail(option, config.seedTenantsFile,
                  QStringLiteral("a readable file (%1)").arg(file.errorString()));
        return;
    }
    QJsonParseError parseError{};
    const QJsonDocument document = QJsonDocument::fromJson(file.readAll(), &parseError);
    const QJsonValue list = document.object().value(QLatin1String("tenants"));
    if (parseError.error != QJsonParseError::NoError || !list.isArray()) {
        read.fail(option, config.seedTenantsFile,
                  QStringLiteral("a JSON object with a \"tenants\" array"));
        return;
    }
    int index = 0;
    for (const QJsonValue entry : list.toArray()) {
        tenants::TenantInputResult parsed = tenants::tenantInputFromJson(entry.toObject());
        if (!parsed.input) {
            read.fail(
                    option, config.seedTenantsFile,
                    QStringLiteral("valid tenants; tenant #%1 has errors %2")
                            .arg(index)
                            .arg(QString::fromUtf8(
                                    QJsonDocument(parsed.errors).toJson(QJsonDocument::Compact))));
            return;
        }
        config.seedTenants.append(*parsed.input);
        ++index;
    }
}

void readClaimValidators(Reader &read, const OptionSpec &option, ServerConfig &config)
{
    const QString validators = read.text(option).trimmed();
    if (validators.isEmpty()) {
        return;
    }
    const QJsonDocument document = QJsonDocument::fromJson(validators.toUtf8());
    if (!document.isObject()) {
        read.fail(option, validators, QStringLiteral("a JSON object"));
    }
    config.jwtClaimValidators = document.object();
}

void checkKeySize(Reader &read, const OptionSpec &option, const QByteArray &key, int bytes)
{
    if (!key.isEmpty() && key.size() != bytes) {
        read.fail(option, QStringLiteral("<%1 bytes>").arg(key.size()),
                  QStringLiteral("exactly %1 bytes").arg(bytes));
    }
}

const OptionSpec Options[] = {
    { "port", "PORT", "port",
      "Port for WebSocket and REST (one port for both); 0 picks a free one.", "4000",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.port = static_cast<quint16>(r.integer(o, 0, 65535));
      } },
    { "listen-address", "LISTEN_ADDRESS", "address", "Address to listen on.", "0.0.0.0",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) { c.listenAddress = r.address(o); } },
    { "tls-cert-file", "TLS_CERT_FILE", "file",
      "PEM certificate of PORT, followed by its chain. With TLS_KEY_FILE, PORT speaks only "
      "https and wss; SIGHUP reloads both files without dropping connections.",
      "",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.clientTls.certificateFile = r.text(o).trimmed();
      } },
    { "tls-key-file", "TLS_KEY_FILE", "file",
      "PEM private key of TLS_CERT_FILE (not passphrase-protected; keep it mode 0600).", "",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.clientTls.keyFile = r.text(o).trimmed();
      } },
    { "tls-min-version", "TLS_MIN_VERSION", "version",
      "Oldest TLS version PORT accepts: 1.2 or 1.3.", "1.2",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          const std::optional<tls::ProtocolVersion> version = tls::parseProtocolVersion(r.text(o));
          if (!version) {
              r.fail(o, r.text(o), QStringLiteral("1.2 or 1.3"));
              return;
          }
          c.clientTls.minimumVersion = *version;
      } },
    { "node-name", "NODE_NAME", "name", "Unique name of this node; derived from host and port.", "",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) { c.nodeName = r.text(o).trimmed(); } },
    { "region", "REGION", "name", "Region of this node (tenant health, placement).", "local",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.region = r.text(o).trimmed();
          if (c.region.isEmpty()) {
              r.fail(o, c.region, QStringLiteral("a region name"));
          }
      } },
    { "etcd-endpoints", "ETCD_ENDPOINTS", "urls",
      "Comma-separated etcd 3.4 URLs (http://host:2379). Set: this node joins the cluster kept in "
      "etcd. Unset: a single node on the embedded in-process cluster backend.",
      "", [](Reader &r, const OptionSpec &o, ServerConfig &c) { readEtcdEndpoints(r, o, c); } },
    { "etcd-prefix", "ETCD_PREFIX", "prefix", "Key prefix of this cluster in etcd.", "/qtrealtime",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.cluster.etcdPrefix = r.text(o).trimmed();
          if (!c.cluster.etcdPrefix.startsWith(QLatin1Char('/'))
              || c.cluster.etcdPrefix.endsWith(QLatin1Char('/'))) {
              r.fail(o, c.cluster.etcdPrefix,
                     QStringLiteral("a key prefix starting with / and not ending with /"));
          }
      } },
    { "etcd-ca-file", "ETCD_CA_FILE", "file",
      "PEM CA that etcd's certificate is verified against (https:// endpoints); empty: the "
      "system's CAs.",
      "",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.cluster.etcdAccess.caFile = r.text(o).trimmed();
      } },
    { "etcd-cert-file", "ETCD_CERT_FILE", "file",
      "PEM client certificate for etcd's --client-cert-auth (with ETCD_KEY_FILE).", "",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.cluster.etcdAccess.certificateFile = r.text(o).trimmed();
      } },
    { "etcd-key-file", "ETCD_KEY_FILE", "file",
      "PEM private key of ETCD_CERT_FILE (not passphrase-protected).", "",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.cluster.etcdAccess.keyFile = r.text(o).trimmed();
      } },
    { "etcd-username", "ETCD_USERNAME", "user",
      "etcd v3 user (with ETCD_PASSWORD): the node authenticates, sends the token with every call "
      "and watch, and authenticates again when it expires. Its role needs read and write on "
      "ETCD_PREFIX only.",
      "",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.cluster.etcdAccess.user = r.text(o).trimmed();
      } },
    { "etcd-password", "ETCD_PASSWORD", "password", "Password of ETCD_USERNAME.", "",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.cluster.etcdAccess.password = r.text(o);
      } },
    { "cluster-lease-ttl-s", "CLUSTER_LEASE_TTL_S", "s",
      "A node that stops renewing its etcd lease leaves the cluster (its records, claims and "
      "presences go) this many seconds later.",
      "10",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.cluster.leaseTtlSeconds = r.integer(o, 2, 300);
      } },
    { "cluster-port", "CLUSTER_PORT", "port",
      "Port of the node-link listener (other nodes connect to it); 0 picks a free one.", "0",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.cluster.linkPort = static_cast<quint16>(r.integer(o, 0, 65535));
      } },
    { "cluster-listen-address", "CLUSTER_LISTEN_ADDRESS", "address",
      "Address the node-link listener binds (e.g. a private interface); empty: LISTEN_ADDRESS.", "",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.clusterListenAddress = r.address(o, true);
      } },
    { "cluster-advertise-host", "CLUSTER_ADVERTISE_HOST", "host",
      "Host name or address other nodes use to reach this node's links and clients; the host "
      "name by default.",
      "",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.cluster.advertiseHost = r.text(o).trimmed();
      } },
    { "cluster-tls-ca-file", "CLUSTER_TLS_CA_FILE", "file",
      "PEM CA of the node links (mutual TLS, with CLUSTER_TLS_CERT_FILE and CLUSTER_TLS_KEY_FILE): "
      "a peer must present a certificate it issued that names the peer's NODE_NAME.",
      "",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.cluster.linkTls.caFile = r.text(o).trimmed();
      } },
    { "cluster-tls-cert-file", "CLUSTER_TLS_CERT_FILE", "file",
      "PEM certificate of this node on the links (then its chain); it must name NODE_NAME "
      "(subjectAltName DNS or common name).",
      "",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.cluster.linkTls.certificateFile = r.text(o).trimmed();
      } },
    { "cluster-tls-key-file", "CLUSTER_TLS_KEY_FILE", "file",
      "PEM private key of CLUSTER_TLS_CERT_FILE (not passphrase-protected).", "",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.cluster.linkTls.keyFile = r.text(o).trimmed();
      } },
    { "cluster-plaintext-links", "CLUSTER_PLAINTEXT_LINKS", "bool",
      "Run the node links without TLS, authenticated by CLUSTER_SECRET alone (then at least 32 "
      "bytes): only on a network no one else can reach.",
      "false",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.cluster.plaintextLinks = r.boolean(o);
      } },
    { "cluster-secret", "CLUSTER_SECRET", "secret",
      "Shared secret of the node links' handshake: required (at least 32 bytes) with "
      "CLUSTER_PLAINTEXT_LINKS, optional with CLUSTER_TLS_* (then checked as well).",
      "",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.cluster.secret = r.text(o).toUtf8();
      } },
    { "cluster-links-per-peer", "CLUSTER_LINKS_PER_PEER", "n",
      "TCP connections this node keeps to each other node.", "2",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.cluster.linksPerPeer = r.integer(o, 1, 16);
      } },
    { "cluster-loadavg-file", "CLUSTER_LOADAVG_FILE", "file",
      "Where this node reads the 5-minute load average it publishes for placement (the format "
      "of /proc/loadavg; e.g. a container's own figure).",
      "/proc/loadavg",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.cluster.loadAverageFile = r.text(o).trimmed();
      } },
    { "cluster-load-min-uptime-s", "CLUSTER_LOAD_MIN_UPTIME_S", "s",
      "Uptime before this node publishes its load: a younger node reports \"not enough data\" "
      "and placement falls back to consistent hashing for it.",
      "300",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.cluster.loadMinUptimeSeconds = r.integer(o, 0, 86'400);
      } },
    { "api-jwt-secret", "API_JWT_SECRET", "secret",
      "Secret of the tenant management API; also the JWT secret of the seeded self-host tenant.",
      "",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.apiJwtSecret = r.text(o).toUtf8();
      } },
    { "api-jwt-secret-next", "API_JWT_SECRET_NEXT", "secret",
      "Second secret accepted by the tenant management API (for rotating API_JWT_SECRET).", "",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.apiJwtSecretNext = r.text(o).toUtf8();
      } },
    { "api-jwt-operator-roles", "API_JWT_OPERATOR_ROLES", "roles",
      "Comma-separated `role` claims the operator API (tenants, cluster configuration, admin "
      "snapshot and feed) accepts; a client token (anon, authenticated) is refused with 403.",
      "service_role,supabase_admin",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.operatorRoles.clear();
          for (const QString &role : r.text(o).split(QLatin1Char(','))) {
              if (!role.trimmed().isEmpty()) {
                  c.operatorRoles.append(role.trimmed());
              }
          }
          if (c.operatorRoles.isEmpty()) {
              r.fail(o, r.text(o), QStringLiteral("at least one role, comma-separated"));
          }
      } },
    { "api-token-blocklist", "API_TOKEN_BLOCKLIST", "tokens",
      "Comma-separated tokens the tenant management API refuses.", "",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.apiTokenBlocklist = r.text(o).toUtf8();
      } },
    { "metrics-jwt-secret", "METRICS_JWT_SECRET", "secret",
      "Secret of the Bearer JWT that GET /metrics requires; without it /metrics answers 403.", "",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.metricsJwtSecret = r.text(o).toUtf8();
      } },
    { "metrics-token-blocklist", "METRICS_TOKEN_BLOCKLIST", "tokens",
      "Comma-separated tokens GET /metrics refuses.", "",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.metricsTokenBlocklist = r.text(o).toUtf8();
      } },
    { "seed-self-host", "SEED_SELF_HOST", "bool",
      "Create (or reset) the self-host tenant at start.", "false",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) { c.seedSelfHost = r.boolean(o); } },
    { "self-host-tenant-name", "SELF_HOST_TENANT_NAME", "name",
      "External id of the self-host tenant; hosts that are IP literals or localhost address it.",
      "realtime-dev",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.selfHostTenantName = r.text(o).trimmed().toLower().toUtf8();
          if (c.selfHostTenantName.isEmpty() || c.selfHostTenantName.contains('.')) {
              r.fail(o, r.text(o),
                     QStringLiteral("a non-empty name without dots (it is a DNS label)"));
          }
      } },
    { "api-jwt-jwks", "API_JWT_JWKS", "json",
      "JWKS ({\"keys\":[...]}) of the seeded self-host tenant.", "",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) { readJwks(r, o, c); } },
    { "seed-tenants-file", "SEED_TENANTS_FILE", "file",
      "JSON file {\"tenants\":[{\"external_id\":...,\"jwt_secret\":...,...}]} of tenants created "
      "(or reset) at start, in the tenant API's format.",
      "", [](Reader &r, const OptionSpec &o, ServerConfig &c) { readSeedTenants(r, o, c); } },
    { "data-dir", "DATA_DIR", "dir",
      "Directory for the embedded SQLite control plane and its generated key (kept at mode 0700, "
      "its files 0600).",
      "./realtime-data",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.dataDir = QDir(r.text(o)).absolutePath();
      } },
    { "db-host", "DB_HOST", "host",
      "PostgreSQL control plane host (tables in schema _realtime). Without it the control plane is "
      "an SQLite file in the data directory.",
      "", nullptr /* read with DB_HOST: see readControlPlane */ },
    { "db-port", "DB_PORT", "port", "PostgreSQL control plane port.", "5432",
      nullptr /* read with DB_HOST: see readControlPlane */ },
    { "db-name", "DB_NAME", "name", "PostgreSQL control plane database.", "postgres",
      nullptr /* read with DB_HOST: see readControlPlane */ },
    { "db-user", "DB_USER", "user", "PostgreSQL control plane user.", "postgres",
      nullptr /* read with DB_HOST: see readControlPlane */ },
    { "db-password", "DB_PASSWORD", "password", "PostgreSQL control plane password.", "",
      nullptr /* read with DB_HOST: see readControlPlane */ },
    { "db-sslmode", "DB_SSLMODE", "mode",
      "TLS to the PostgreSQL control plane (libpq sslmode): disable, allow, prefer, require, "
      "verify-ca or verify-full (the last two need DB_SSLROOTCERT).",
      "prefer",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.controlPlane.sslMode =
                  r.choice(o,
                           { QStringLiteral("disable"), QStringLiteral("allow"),
                             QStringLiteral("prefer"), QStringLiteral("require"),
                             QStringLiteral("verify-ca"), QStringLiteral("verify-full") });
      } },
    { "db-sslrootcert", "DB_SSLROOTCERT", "file",
      "PEM CA file the control plane's server certificate is verified against.", "",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.controlPlane.sslRootCert = readCaFile(r, o);
      } },
    { "db-replica-host", "DB_REPLICA_HOST", "host",
      "Host of a streaming replica of the PostgreSQL control plane (same database, user and "
      "password; needs DB_HOST). Set: tenant API reads (GET) use it unless the client's session "
      "wrote within DB_REPLICA_DELAY_MS; writes always use DB_HOST.",
      "", nullptr /* read with DB_HOST: see readControlPlane */ },
    { "db-replica-port", "DB_REPLICA_PORT", "port",
      "Port of the control-plane replica; DB_PORT when unset.", "",
      nullptr /* read with DB_HOST: see readControlPlane */ },
    { "db-replica-delay-ms", "DB_REPLICA_DELAY_MS", "ms",
      "Read-your-writes window: after a tenant API write, the same session (cookie "
      "realtime_last_write or header X-Realtime-Last-Write) reads from the primary this long.",
      "2000",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.controlPlane.replicaDelayMs = r.integer(o, 0, 3'600'000);
      } },
    { "db-replica-retry-ms", "DB_REPLICA_RETRY_MS", "ms",
      "After the replica failed (unreachable, broken connection), reads use the primary this long "
      "before it is tried again.",
      "5000",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.controlPlane.replicaRetryMs = r.integer(o, 100, 600'000);
      } },
    { "db-enc-key", "DB_ENC_KEY", "key",
      "Key (exactly 16 bytes) that encrypts tenant secrets at rest with AES-128-ECB, as Supabase "
      "Realtime does. Required with DB_HOST; the embedded default generates one in DATA_DIR.",
      "",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.controlPlane.encryptionKey = r.text(o).toUtf8();
          checkKeySize(r, o, c.controlPlane.encryptionKey, 16);
      } },
    { "db-enc-key-gcm", "DB_ENC_KEY_GCM", "key",
      "Key (exactly 32 bytes) for AES-256-GCM encryption of tenant secrets (\"g1:\" values).", "",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.controlPlane.encryptionKeyGcm = r.text(o).toUtf8();
          checkKeySize(r, o, c.controlPlane.encryptionKeyGcm, 32);
      } },
    { "db-enc-write-gcm", "DB_ENC_WRITE_GCM", "bool",
      "Encrypt new secrets with AES-256-GCM (needs DB_ENC_KEY_GCM).", "false",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.controlPlane.writeGcm = r.boolean(o);
      } },
    { "tenant-cache-expiration-in-ms", "TENANT_CACHE_EXPIRATION_IN_MS", "ms",
      "How long this node serves a tenant from its cache before re-reading the control plane "
      "(changes made through the tenant API of any node of the cluster apply at once).",
      "30000",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.tenantCacheExpirationMs = r.integer(o, 100, 86'400'000);
      } },
    { "tenant-max-concurrent-users", "TENANT_MAX_CONCURRENT_USERS", "n",
      "Default max_concurrent_users of new tenants.", "200",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.tenantDefaults.maxConcurrentUsers = r.integer(o, 1, Huge);
      } },
    { "tenant-max-events-per-second", "TENANT_MAX_EVENTS_PER_SECOND", "n",
      "Default max_events_per_second of new tenants.", "100",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.tenantDefaults.maxEventsPerSecond = r.integer(o, 1, Huge);
      } },
    { "tenant-max-bytes-per-second", "TENANT_MAX_BYTES_PER_SECOND", "n",
      "Default max_bytes_per_second of new tenants.", "100000",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.tenantDefaults.maxBytesPerSecond = r.integer(o, 1, Huge);
      } },
    { "tenant-max-channels-per-client", "TENANT_MAX_CHANNELS_PER_CLIENT", "n",
      "Default max_channels_per_client of new tenants.", "100",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.tenantDefaults.maxChannelsPerClient = r.integer(o, 1, Huge);
      } },
    { "tenant-max-joins-per-second", "TENANT_MAX_JOINS_PER_SECOND", "n",
      "Default max_joins_per_second of new tenants.", "100",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.tenantDefaults.maxJoinsPerSecond = r.integer(o, 1, Huge);
      } },
    { "tenant-max-presence-events-per-second", "TENANT_MAX_PRESENCE_EVENTS_PER_SECOND", "n",
      "Default max_presence_events_per_second of new tenants.", "1000",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.tenantDefaults.maxPresenceEventsPerSecond = r.integer(o, 1, Huge);
      } },
    { "tenant-max-payload-size-in-kb", "TENANT_MAX_PAYLOAD_SIZE_IN_KB", "n",
      "Default max_payload_size_in_kb of new tenants.", "3000",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.tenantDefaults.maxPayloadSizeInKb = r.integer(o, 1, 1'000'000);
      } },
    { "tenant-history-size", "TENANT_HISTORY_SIZE", "n",
      "Default history_size of new tenants: broadcasts each topic keeps for recovery on rejoin "
      "(0: no history and no positions).",
      "100",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.tenantDefaults.historySize = r.integer(o, 0, tenants::MaxHistorySize);
      } },
    { "tenant-history-ttl-seconds", "TENANT_HISTORY_TTL_SECONDS", "s",
      "Default history_ttl_seconds of new tenants: how long a topic keeps a broadcast.", "120",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.tenantDefaults.historyTtlSeconds = r.integer(o, 0, tenants::MaxHistoryTtlSeconds);
      } },
    { "client-presence-max-calls", "CLIENT_PRESENCE_MAX_CALLS", "n",
      "Presence pushes allowed per channel per window.", "5",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.tenantDefaults.clientPresenceMaxCalls = r.integer(o, 1, Huge);
      } },
    { "client-presence-window-ms", "CLIENT_PRESENCE_WINDOW_MS", "ms",
      "Window of the per-channel presence limit.", "30000",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.tenantDefaults.clientPresenceWindowMs = r.integer(o, 1, Huge);
      } },
    { "connect-error-backoff-ms", "CONNECT_ERROR_BACKOFF_MS", "ms",
      "Delay before a refused socket connect is answered.", "2000",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.connectErrorBackoffMs = r.integer(o, 0, 600'000);
      } },
    { "no-channel-timeout-in-ms", "NO_CHANNEL_TIMEOUT_IN_MS", "ms",
      "A socket that had channels and has had none for this long is dropped (checked every "
      "second).",
      "600000",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.noChannelTimeoutMs = r.integer(o, 1, 86'400'000);
      } },
    { "tenant-db-idle-timeout-in-ms", "TENANT_DB_IDLE_TIMEOUT_IN_MS", "ms",
      "A tenant database connection with no connected users and no postgres_changes subscribers "
      "for this long is closed (its replication slot stays).",
      "60000",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.cdc.idleTimeoutMs = r.integer(o, 1000, 86'400'000);
      } },
    { "tenant-db-sslrootcert", "TENANT_DB_SSLROOTCERT", "file",
      "PEM CA file that tenant databases with ssl_enforced are verified against (verify-full: "
      "the certificate must also name db_host); empty: the system's CAs.",
      "",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.cdc.sslRootCert = readCaFile(r, o);
      } },
    { "tenant-db-pool-size", "TENANT_DB_POOL_SIZE", "n",
      "Query connections per tenant database (subscriptions, RLS checks, authorization).", "3",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.cdc.poolSize = r.integer(o, 1, 64);
      } },
    { "tenant-db-connect-retry-ms", "TENANT_DB_CONNECT_RETRY_MS", "ms",
      "After a failed connect, joins of that tenant fail at once for this long.", "2000",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.cdc.connectRetryMs = r.integer(o, 0, 600'000);
      } },
    { "cdc-max-inflight-bytes", "CDC_MAX_INFLIGHT_BYTES", "bytes",
      "Per tenant: database changes decoded and not yet written to the subscribers' sockets; "
      "beyond it the change stream stops reading (the slot keeps the WAL) until half of it is "
      "gone.",
      "67108864",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.cdc.maxInflightBytes = r.integer(o, 1024 * 1024, 2'000'000'000);
      } },
    { "slot-name-suffix", "SLOT_NAME_SUFFIX", "text",
      "Appended to replication slot names (\"<slot>_<suffix>\"), so that several servers can "
      "stream one database.",
      "",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.cdc.slotNameSuffix = r.text(o).trimmed().toUtf8();
      } },
    { "rls-strategy", "RLS_STRATEGY", "batched|naive",
      "How postgres_changes ask row level security: batched (one query per distinct claims set "
      "per batch) or naive (one per subscriber per change; for benchmarks only).",
      "batched",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.cdc.naiveRls = r.choice(o, { QStringLiteral("batched"), QStringLiteral("naive") })
                  == QLatin1String("naive");
      } },
    { "channel-error-backoff-ms", "CHANNEL_ERROR_BACKOFF_MS", "ms",
      "Delay before a join error is answered.", "5000",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.channelErrorBackoffMs = r.integer(o, 0, 600'000);
      } },
    { "jwt-claim-validators", "JWT_CLAIM_VALIDATORS", "json",
      R"(JSON object of claims that must have the given values when present, e.g. {"iss":"x"}.)",
      "", [](Reader &r, const OptionSpec &o, ServerConfig &c) { readClaimValidators(r, o, c); } },
    { "workers", "WORKERS", "n", "Worker threads for connections; 0 means one per available CPU.",
      "0",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) { c.workers = r.integer(o, 0, 256); } },
    { "event-dispatcher", "EVENT_DISPATCHER", "kind",
      "Event loop of the worker threads: epoll, or qt (Qt's default).", "epoll",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.epollDispatcher = r.choice(o, { QStringLiteral("epoll"), QStringLiteral("qt") })
                  == QLatin1String("epoll");
      } },
    { "max-connections", "MAX_CONNECTIONS", "n",
      "Open sockets this node accepts; more are answered 503 before any HTTP or WebSocket work. "
      "0: as many as RLIMIT_NOFILE allows (raised to its hard limit at start), less a reserve "
      "for databases, links and files.",
      "0",
      [](Reader &r, const OptionSpec &o,
         ServerConfig &c) { c.maxConnections = r.integer(o, 0, 100'000'000); } },
    { "max-pending-connections-per-address", "MAX_PENDING_CONNECTIONS_PER_ADDRESS", "n",
      "Sockets from one remote address that are not yet WebSockets (HTTP requests, handshakes in "
      "progress); more are answered 429. 0: no limit.",
      "1024",
      [](Reader &r, const OptionSpec &o,
         ServerConfig &c) { c.maxPendingConnectionsPerAddress = r.integer(o, 0, 100'000'000); } },
    { "max-send-buffer-bytes", "MAX_SEND_BUFFER_BYTES", "bytes",
      "Hard cap on the output a client may leave unread: beyond it the client is cut off as a "
      "slow consumer at once.",
      "16777216",
      [](Reader &r, const OptionSpec &o,
         ServerConfig &c) { c.maxSendBufferBytes = r.integer(o, 64 * 1024, 1'000'000'000); } },
    { "history-max-bytes", "HISTORY_MAX_BYTES", "bytes",
      "Memory for the broadcasts the topics' histories keep for recovery, on this node in all "
      "(each tenant's history_size and history_ttl_seconds bound each topic): beyond it the "
      "oldest go first.",
      "67108864",
      [](Reader &r, const OptionSpec &o,
         ServerConfig &c) { c.historyMaxBytes = r.integer(o, 0, 1'000'000'000); } },
    { "socket-high-water-bytes", "SOCKET_HIGH_WATER_BYTES", "bytes",
      "Unread output above which a client counts as slow: its tenant's change stream waits for "
      "it to drain (other tenants do not).",
      "1048576",
      [](Reader &r, const OptionSpec &o,
         ServerConfig &c) { c.socketHighWaterBytes = r.integer(o, 16 * 1024, 1'000'000'000); } },
    { "slow-consumer-grace-ms", "SLOW_CONSUMER_GRACE_MS", "ms",
      "A client that stays above SOCKET_HIGH_WATER_BYTES this long is cut off as a slow "
      "consumer (each of its channels is told how many messages it lost).",
      "10000",
      [](Reader &r, const OptionSpec &o,
         ServerConfig &c) { c.slowConsumerGraceMs = r.integer(o, 100, 3'600'000); } },
    { "websocket-idle-timeout-ms", "WEBSOCKET_IDLE_TIMEOUT_MS", "ms",
      "A socket that sends no frame (not even a heartbeat) for this long is closed.", "60000",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.websocketIdleTimeoutMs = r.integer(o, 1000, 86'400'000);
      } },
    { "log-level", "LOG_LEVEL", "level", "debug, info, warning or error.", "info",
      [](Reader &r, const OptionSpec &o, ServerConfig &c) {
          c.logLevel = r.choice(o,
                                { QStringLiteral("debug"), QStringLiteral("info"),
                                  QStringLiteral("warning"), QStringLiteral("error") });
      } },
};

const OptionSection Sections[] = {
    { "Listening", "port" },
    { "Cluster (etcd membership, node links)", "etcd-endpoints" },
    { "Tenant management API and metrics", "api-jwt-secret" },
    { "Tenants created at start", "seed-self-host" },
    { "Control plane: embedded SQLite in DATA_DIR, or PostgreSQL with DB_HOST", "data-dir" },
    { "Defaults of new tenants, and limits", "tenant-max-concurrent-users" },
    { "Connections, threads and logging", "workers" },
};

} // namespace

std::span<const OptionSpec> all()
{
    return Options;
}

const char *sectionStartingAt(const OptionSpec &option)
{
    for (const OptionSection &section : Sections) {
        if (qstrcmp(section.firstFlag, option.flag) == 0) {
            return section.title;
        }
    }
    return nullptr;
}

const OptionSpec &spec(const char *flag)
{
    for (const OptionSpec &option : Options) {
        if (qstrcmp(option.flag, flag) == 0) {
            return option;
        }
    }
    Q_UNREACHABLE();
}

} // namespace rt::app::options
