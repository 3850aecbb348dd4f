#include "server/app/config.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcessEnvironment>

namespace rt::app {

namespace {

// One option: its flag, its environment variable, what it means and its default.
struct OptionSpec
{
    const char *flag;
    const char *env;
    const char *valueName;
    const char *description;
    const char *defaultText;
};

const OptionSpec Options[] = {
    { "port", "PORT", "port",
      "Port for WebSocket and REST (one port for both); 0 picks a free one.", "4000" },
    { "listen-address", "LISTEN_ADDRESS", "address", "Address to listen on.", "0.0.0.0" },
    { "api-jwt-secret", "API_JWT_SECRET", "secret",
      "Secret of the tenant management API; also the JWT secret of the seeded self-host tenant.",
      "" },
    { "api-jwt-secret-next", "API_JWT_SECRET_NEXT", "secret",
      "Second secret accepted by the tenant management API (for rotating API_JWT_SECRET).", "" },
    { "api-token-blocklist", "API_TOKEN_BLOCKLIST", "tokens",
      "Comma-separated tokens the tenant management API refuses.", "" },
    { "metrics-jwt-secret", "METRICS_JWT_SECRET", "secret",
      "Secret of the Bearer JWT that GET /metrics requires; without it /metrics answers 403.", "" },
    { "metrics-token-blocklist", "METRICS_TOKEN_BLOCKLIST", "tokens",
      "Comma-separated tokens GET /metrics refuses.", "" },
    { "tenant-cache-expiration-in-ms", "TENANT_CACHE_EXPIRATION_IN_MS", "ms",
      "How long this node serves a tenant from its cache before re-reading the control plane "
      "(changes made through the tenant API of any node of the cluster apply at once).",
      "30000" },
    { "region", "REGION", "name", "Region of this node (tenant health, placement).", "local" },
    { "node-name", "NODE_NAME", "name", "Unique name of this node; derived from host and port.",
      "" },
    { "etcd-endpoints", "ETCD_ENDPOINTS", "urls",
      "Comma-separated etcd 3.4 URLs (http://host:2379). Set: this node joins the cluster kept in "
      "etcd. Unset: a single node on the embedded in-process cluster backend.",
      "" },
    { "etcd-prefix", "ETCD_PREFIX", "prefix", "Key prefix of this cluster in etcd.",
      "/qtrealtime" },
    { "cluster-lease-ttl-s", "CLUSTER_LEASE_TTL_S", "s",
      "A node that stops renewing its etcd lease leaves the cluster (its records, claims and "
      "presences go) this many seconds later.",
      "10" },
    { "cluster-port", "CLUSTER_PORT", "port",
      "Port of the node-link listener (other nodes connect to it); 0 picks a free one.", "0" },
    { "cluster-advertise-host", "CLUSTER_ADVERTISE_HOST", "host",
      "Host name or address other nodes use to reach this node's links and clients; the host "
      "name by default.",
      "" },
    { "cluster-secret", "CLUSTER_SECRET", "secret",
      "Shared secret that authenticates node links (required with ETCD_ENDPOINTS).", "" },
    { "cluster-links-per-peer", "CLUSTER_LINKS_PER_PEER", "n",
      "TCP connections this node keeps to each other node.", "2" },
    { "cluster-loadavg-file", "CLUSTER_LOADAVG_FILE", "file",
      "Where this node reads the 5-minute load average it publishes for placement (the format "
      "of /proc/loadavg; e.g. a container's own figure).",
      "/proc/loadavg" },
    { "cluster-load-min-uptime-s", "CLUSTER_LOAD_MIN_UPTIME_S", "s",
      "Uptime before this node publishes its load: a younger node reports \"not enough data\" "
      "and placement falls back to consistent hashing for it.",
      "300" },
    { "api-jwt-jwks", "API_JWT_JWKS", "json",
      "JWKS ({\"keys\":[...]}) of the seeded self-host tenant.", "" },
    { "seed-self-host", "SEED_SELF_HOST", "bool",
      "Create (or reset) the self-host tenant at start.", "false" },
    { "self-host-tenant-name", "SELF_HOST_TENANT_NAME", "name",
      "External id of the self-host tenant; hosts that are IP literals or localhost address it.",
      "realtime-dev" },
    { "seed-tenants-file", "SEED_TENANTS_FILE", "file",
      "JSON file {\"tenants\":[{\"external_id\":...,\"jwt_secret\":...,...}]} of tenants created "
      "(or reset) at start, in the tenant API's format.",
      "" },
    { "db-host", "DB_HOST", "host",
      "PostgreSQL control plane host (tables in schema _realtime). Without it the control plane is "
      "an SQLite file in the data directory.",
      "" },
    { "db-port", "DB_PORT", "port", "PostgreSQL control plane port.", "5432" },
    { "db-name", "DB_NAME", "name", "PostgreSQL control plane database.", "postgres" },
    { "db-user", "DB_USER", "user", "PostgreSQL control plane user.", "postgres" },
    { "db-password", "DB_PASSWORD", "password", "PostgreSQL control plane password.", "" },
    { "db-replica-host", "DB_REPLICA_HOST", "host",
      "Host of a streaming replica of the PostgreSQL control plane (same database, user and "
      "password; needs DB_HOST). Set: tenant API reads (GET) use it unless the client's session "
      "wrote within DB_REPLICA_DELAY_MS; writes always use DB_HOST.",
      "" },
    { "db-replica-port", "DB_REPLICA_PORT", "port",
      "Port of the control-plane replica; DB_PORT when unset.", "" },
    { "db-replica-delay-ms", "DB_REPLICA_DELAY_MS", "ms",
      "Read-your-writes window: after a tenant API write, the same session (cookie "
      "realtime_last_write or header X-Realtime-Last-Write) reads from the primary this long.",
      "2000" },
    { "db-replica-retry-ms", "DB_REPLICA_RETRY_MS", "ms",
      "After the replica failed (unreachable, broken connection), reads use the primary this long "
      "before it is tried again.",
      "5000" },
    { "db-enc-key", "DB_ENC_KEY", "key",
      "Key (exactly 16 bytes) that encrypts tenant secrets at rest with AES-128-ECB, as Supabase "
      "Realtime does. Required with DB_HOST; the embedded default generates one in DATA_DIR.",
      "" },
    { "db-enc-key-gcm", "DB_ENC_KEY_GCM", "key",
      "Key (exactly 32 bytes) for AES-256-GCM encryption of tenant secrets (\"g1:\" values).", "" },
    { "db-enc-write-gcm", "DB_ENC_WRITE_GCM", "bool",
      "Encrypt new secrets with AES-256-GCM (needs DB_ENC_KEY_GCM).", "false" },
    { "data-dir", "DATA_DIR", "dir", "Directory for the embedded SQLite control plane.",
      "./realtime-data" },
    { "tenant-max-concurrent-users", "TENANT_MAX_CONCURRENT_USERS", "n",
      "Default max_concurrent_users of new tenants.", "200" },
    { "tenant-max-events-per-second", "TENANT_MAX_EVENTS_PER_SECOND", "n",
      "Default max_events_per_second of new tenants.", "100" },
    { "tenant-max-bytes-per-second", "TENANT_MAX_BYTES_PER_SECOND", "n",
      "Default max_bytes_per_second of new tenants.", "100000" },
    { "tenant-max-channels-per-client", "TENANT_MAX_CHANNELS_PER_CLIENT", "n",
      "Default max_channels_per_client of new tenants.", "100" },
    { "tenant-max-joins-per-second", "TENANT_MAX_JOINS_PER_SECOND", "n",
      "Default max_joins_per_second of new tenants.", "100" },
    { "tenant-max-presence-events-per-second", "TENANT_MAX_PRESENCE_EVENTS_PER_SECOND", "n",
      "Default max_presence_events_per_second of new tenants.", "1000" },
    { "tenant-max-payload-size-in-kb", "TENANT_MAX_PAYLOAD_SIZE_IN_KB", "n",
      "Default max_payload_size_in_kb of new tenants.", "3000" },
    { "client-presence-max-calls", "CLIENT_PRESENCE_MAX_CALLS", "n",
      "Presence pushes allowed per channel per window.", "5" },
    { "client-presence-window-ms", "CLIENT_PRESENCE_WINDOW_MS", "ms",
      "Window of the per-channel presence limit.", "30000" },
    { "connect-error-backoff-ms", "CONNECT_ERROR_BACKOFF_MS", "ms",
      "Delay before a refused socket connect is answered.", "2000" },
    { "no-channel-timeout-in-ms", "NO_CHANNEL_TIMEOUT_IN_MS", "ms",
      "A socket that had channels and has had none for this long is dropped (checked every "
      "second).",
      "600000" },
    { "tenant-db-idle-timeout-in-ms", "TENANT_DB_IDLE_TIMEOUT_IN_MS", "ms",
      "A tenant database connection with no connected users and no postgres_changes subscribers "
      "for this long is closed (its replication slot stays).",
      "60000" },
    { "tenant-db-pool-size", "TENANT_DB_POOL_SIZE", "n",
      "Query connections per tenant database (subscriptions, RLS checks, authorization).", "3" },
    { "tenant-db-connect-retry-ms", "TENANT_DB_CONNECT_RETRY_MS", "ms",
      "After a failed connect, joins of that tenant fail at once for this long.", "2000" },
    { "slot-name-suffix", "SLOT_NAME_SUFFIX", "text",
      "Appended to replication slot names (\"<slot>_<suffix>\"), so that several servers can "
      "stream one database.",
      "" },
    { "rls-strategy", "RLS_STRATEGY", "batched|naive",
      "How postgres_changes ask row level security: batched (one query per distinct claims set "
      "per batch) or naive (one per subscriber per change; for benchmarks only).",
      "batched" },
    { "channel-error-backoff-ms", "CHANNEL_ERROR_BACKOFF_MS", "ms",
      "Delay before a join error is answered.", "5000" },
    { "jwt-claim-validators", "JWT_CLAIM_VALIDATORS", "json",
      "JSON object of claims that must have the given values when present, e.g. {\"iss\":\"x\"}.",
      "" },
    { "workers", "WORKERS", "n", "Worker threads for connections; 0 means one per available CPU.",
      "0" },
    { "max-send-buffer-bytes", "MAX_SEND_BUFFER_BYTES", "bytes",
      "Output a client may leave unread before it is disconnected as a slow consumer.",
      "16777216" },
    { "websocket-idle-timeout-ms", "WEBSOCKET_IDLE_TIMEOUT_MS", "ms",
      "A socket that sends no frame (not even a heartbeat) for this long is closed.", "60000" },
    { "event-dispatcher", "EVENT_DISPATCHER", "kind",
      "Event loop of the worker threads: epoll, or qt (Qt's default).", "epoll" },
    { "log-level", "LOG_LEVEL", "level", "debug, info, warning or error.", "info" },
};

class Reader
{
public:
    Reader(const QCommandLineParser &parser, const QHash<QString, QString> &environment)
        : m_parser(parser),
          m_environment(environment)
    { }

    // The raw value: flag, then environment, then default.
    QString text(const OptionSpec &spec) const
    {
        const QString flag = QString::fromLatin1(spec.flag);
        if (m_parser.isSet(flag)) {
            return m_parser.value(flag);
        }
        const auto it = m_environment.constFind(QString::fromLatin1(spec.env));
        if (it != m_environment.constEnd() && !it->isEmpty()) {
            return *it;
        }
        return QString::fromLatin1(spec.defaultText);
    }

    bool isGiven(const OptionSpec &spec) const
    {
        const auto it = m_environment.constFind(QString::fromLatin1(spec.env));
        return m_parser.isSet(QString::fromLatin1(spec.flag))
                || (it != m_environment.constEnd() && !it->isEmpty());
    }

    std::optional<QString> error;

    int integer(const OptionSpec &spec, int minimum, int maximum)
    {
        const QString value = text(spec);
        bool ok = false;
        const int number = value.trimmed().toInt(&ok);
        if (!ok || number < minimum || number > maximum) {
            fail(spec, value, QStringLiteral("an integer from %1 to %2").arg(minimum).arg(maximum));
            return minimum;
        }
        return number;
    }

    bool boolean(const OptionSpec &spec)
    {
        const QString value = text(spec).trimmed().toLower();
        if (value == QLatin1String("true") || value == QLatin1String("1")
            || value == QLatin1String("yes") || value == QLatin1String("on")) {
            return true;
        }
        if (value == QLatin1String("false") || value == QLatin1String("0")
            || value == QLatin1String("no") || value == QLatin1String("off") || value.isEmpty()) {
            return false;
        }
        fail(spec, text(spec), QStringLiteral("true or false"));
        return false;
    }

    void fail(const OptionSpec &spec, const QString &value, const QString &expected)
    {
        if (!error) {
            error = QStringLiteral("invalid %1 (--%2): \"%3\"; expected %4")
                            .arg(QString::fromLatin1(spec.env), QString::fromLatin1(spec.flag),
                                 value, expected);
        }
    }

private:
    const QCommandLineParser &m_parser;
    const QHash<QString, QString> &m_environment;
};

const OptionSpec &spec(const char *flag)
{
    for (const OptionSpec &option : Options) {
        if (qstrcmp(option.flag, flag) == 0) {
            return option;
        }
    }
    Q_UNREACHABLE();
}

// Word-wraps `text` to `width` columns, every line indented by `indent` spaces.
QString wrapped(const QString &text, int width, int indent)
{
    QString out;
    QString line;
    const QStringList words = text.split(u' ', Qt::SkipEmptyParts);
    for (const QString &word : words) {
        if (!line.isEmpty() && line.size() + 1 + word.size() > width - indent) {
            out += QString(indent, u' ') + line + u'\n';
            line.clear();
        }
        line += (line.isEmpty() ? QString() : QStringLiteral(" ")) + word;
    }
    if (!line.isEmpty()) {
        out += QString(indent, u' ') + line + u'\n';
    }
    return out;
}

// Our own help layout: QCommandLineParser wraps at 79 columns and splits long environment
// variable names. Each option: the flag, then its variable and default, then what it does.
QString helpText()
{
    QString text = QStringLiteral(
            "Usage: realtime-server [options]\n"
            "qtrealtime: a Supabase-Realtime-compatible realtime server node.\n\n"
            "Every option is also read from the environment variable named below it; the command "
            "line wins.\n\n"
            "  -h, --help\n      Show this help and exit.\n"
            "  -v, --version\n      Show the version and exit.\n"
            "  --check-config\n");
    text += wrapped(QStringLiteral("Read the configuration exactly as a start would, print a "
                                   "one-line summary and exit: 0 if it is valid, 2 with the first "
                                   "error otherwise. Binds no port and opens no database."),
                    100, 6);
    for (const OptionSpec &option : Options) {
        text += QStringLiteral("  --%1 <%2>\n")
                        .arg(QLatin1String(option.flag), QLatin1String(option.valueName));
        QString source = u'[' + QString::fromLatin1(option.env) + u']';
        if (*option.defaultText != '\0') {
            source += QStringLiteral(" default: ") + QString::fromLatin1(option.defaultText);
        }
        text += QStringLiteral("      ") + source + u'\n';
        text += wrapped(QString::fromLatin1(option.description), 100, 6);
    }
    return text;
}

} // namespace

QString configSummary(const ServerConfig &config)
{
    const QString address = config.listenAddress.protocol() == QAbstractSocket::IPv6Protocol
            ? u'[' + config.listenAddress.toString() + u']'
            : config.listenAddress.toString();
    const tenants::ControlPlaneSettings &plane = config.controlPlane;
    const QString controlPlane = plane.backend == tenants::ControlPlaneSettings::Backend::Postgres
            ? QStringLiteral("postgres %1@%2:%3/%4")
                            .arg(plane.user, plane.host, QString::number(plane.port),
                                 plane.database)
                    + (plane.hasReplica()
                               ? QStringLiteral(" (reads from replica %1:%2, delay %3 ms)")
                                         .arg(plane.replicaHost, QString::number(plane.replicaPort),
                                              QString::number(plane.replicaDelayMs))
                               : QString())
            : QStringLiteral("sqlite %1").arg(QDir::cleanPath(plane.sqlitePath));
    QStringList seeds;
    if (config.seedSelfHost) {
        seeds.append(QString::fromUtf8(config.selfHostTenantName) + QStringLiteral(" (self-host)"));
    }
    for (const tenants::TenantInput &tenant : config.seedTenants) {
        seeds.append(QString::fromUtf8(tenant.externalId));
    }
    const bool apiSecret = !config.apiJwtSecret.isEmpty() || !config.apiJwtJwks.isEmpty();
    QString cluster = QStringLiteral("single node");
    if (config.cluster.usesEtcd()) {
        QStringList endpoints;
        for (const QUrl &url : config.cluster.etcdEndpoints) {
            endpoints.append(url.toString(QUrl::RemoveUserInfo));
        }
        cluster = QStringLiteral("etcd %1 under %2, node links on port %3")
                          .arg(endpoints.join(QLatin1Char(',')), config.cluster.etcdPrefix,
                               config.cluster.linkPort == 0
                                       ? QStringLiteral("(any)")
                                       : QString::number(config.cluster.linkPort));
    }
    return QStringLiteral("configuration ok: port %1 on %2, control plane %3, seeded tenants: %4, "
                          "tenant API secret %5, cluster %6")
            .arg(QString::number(config.port), address, controlPlane,
                 seeds.isEmpty() ? QStringLiteral("none") : seeds.join(QStringLiteral(", ")),
                 apiSecret ? QStringLiteral("set") : QStringLiteral("not set"), cluster);
}

QHash<QString, QString> processEnvironment()
{
    QHash<QString, QString> environment;
    const QProcessEnvironment process = QProcessEnvironment::systemEnvironment();
    const QStringList keys = process.keys();
    for (const QString &key : keys) {
        environment.insert(key, process.value(key));
    }
    return environment;
}

Result<ConfigRequest> parseConfig(const QStringList &arguments,
                                  const QHash<QString, QString> &environment)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
            QStringLiteral("qtrealtime: a Supabase-Realtime-compatible realtime server node.\n"
                           "Every option can also be set with the environment variable named "
                           "in brackets; the command line wins."));
    const QCommandLineOption help = parser.addHelpOption();
    const QCommandLineOption version = parser.addVersionOption();
    const QCommandLineOption checkConfig(
            QStringLiteral("check-config"),
            QStringLiteral("Validate the configuration, print a summary and exit."));
    parser.addOption(checkConfig);
    for (const OptionSpec &option : Options) {
        QString description = QString::fromLatin1(option.description) + QStringLiteral(" [")
                + QString::fromLatin1(option.env) + u']';
        if (*option.defaultText != '\0') {
            description +=
                    QStringLiteral(" (default: ") + QString::fromLatin1(option.defaultText) + u')';
        }
        parser.addOption(QCommandLineOption(QString::fromLatin1(option.flag), description,
                                            QString::fromLatin1(option.valueName)));
    }
    if (!parser.parse(arguments)) {
        return Error{ parser.errorText() };
    }
    if (!parser.positionalArguments().isEmpty()) {
        return Error{ QStringLiteral("unexpected argument \"%1\" (see --help)")
                              .arg(parser.positionalArguments().constFirst()) };
    }
    ConfigRequest request;
    if (parser.isSet(help)) {
        request.action = ConfigRequest::Action::ShowHelp;
        request.helpText = helpText();
        return request;
    }
    if (parser.isSet(version)) {
        request.action = ConfigRequest::Action::ShowVersion;
        return request;
    }

    if (parser.isSet(checkConfig)) {
        request.action = ConfigRequest::Action::CheckConfig;
    }

    Reader read(parser, environment);
    ServerConfig &config = request.config;
    config.port = static_cast<quint16>(read.integer(spec("port"), 0, 65535));
    const QString address = read.text(spec("listen-address")).trimmed();
    if (!config.listenAddress.setAddress(address)) {
        read.fail(spec("listen-address"), address, QStringLiteral("an IPv4 or IPv6 address"));
    }
    config.apiJwtSecret = read.text(spec("api-jwt-secret")).toUtf8();
    config.apiJwtJwks = read.text(spec("api-jwt-jwks")).toUtf8();
    if (!config.apiJwtJwks.isEmpty()) {
        const QJsonDocument jwks = QJsonDocument::fromJson(config.apiJwtJwks);
        if (!jwks.isObject() || !jwks.object().value(QLatin1String("keys")).isArray()) {
            read.fail(spec("api-jwt-jwks"), read.text(spec("api-jwt-jwks")),
                      QStringLiteral("a JSON object with a \"keys\" array"));
        }
    }
    config.seedSelfHost = read.boolean(spec("seed-self-host"));
    config.selfHostTenantName =
            read.text(spec("self-host-tenant-name")).trimmed().toLower().toUtf8();
    if (config.selfHostTenantName.isEmpty() || config.selfHostTenantName.contains('.')) {
        read.fail(spec("self-host-tenant-name"), read.text(spec("self-host-tenant-name")),
                  QStringLiteral("a non-empty name without dots (it is a DNS label)"));
    }

    config.seedTenantsFile = read.text(spec("seed-tenants-file")).trimmed();
    if (!config.seedTenantsFile.isEmpty()) {
        QFile file(config.seedTenantsFile);
        if (!file.open(QIODevice::ReadOnly)) {
            read.fail(spec("seed-tenants-file"), config.seedTenantsFile,
                      QStringLiteral("a readable file (%1)").arg(file.errorString()));
        } else {
            QJsonParseError parseError{};
            const QJsonDocument document = QJsonDocument::fromJson(file.readAll(), &parseError);
            const QJsonValue list = document.object().value(QLatin1String("tenants"));
            if (parseError.error != QJsonParseError::NoError || !list.isArray()) {
                read.fail(spec("seed-tenants-file"), config.seedTenantsFile,
                          QStringLiteral("a JSON object with a \"tenants\" array"));
            } else {
                int index = 0;
                for (const QJsonValue &entry : list.toArray()) {
                    tenants::TenantInputResult parsed =
                            tenants::tenantInputFromJson(entry.toObject());
                    if (!parsed.input) {
                        read.fail(spec("seed-tenants-file"), config.seedTenantsFile,
                                  QStringLiteral("valid tenants; tenant #%1 has errors %2")
                                          .arg(index)
                                          .arg(QString::fromUtf8(
                                                  QJsonDocument(parsed.errors)
                                                          .toJson(QJsonDocument::Compact))));
                        break;
                    }
                    config.seedTenants.append(*parsed.input);
                    ++index;
                }
            }
        }
    }
    config.dataDir = QDir(read.text(spec("data-dir"))).absolutePath();
    config.controlPlane.encryptionKey = read.text(spec("db-enc-key")).toUtf8();
    config.controlPlane.encryptionKeyGcm = read.text(spec("db-enc-key-gcm")).toUtf8();
    config.controlPlane.writeGcm = read.boolean(spec("db-enc-write-gcm"));
    if (!config.controlPlane.encryptionKey.isEmpty()
        && config.controlPlane.encryptionKey.size() != 16) {
        read.fail(spec("db-enc-key"),
                  QStringLiteral("<%1 bytes>").arg(config.controlPlane.encryptionKey.size()),
                  QStringLiteral("exactly 16 bytes"));
    }
    if (!config.controlPlane.encryptionKeyGcm.isEmpty()
        && config.controlPlane.encryptionKeyGcm.size() != 32) {
        read.fail(spec("db-enc-key-gcm"),
                  QStringLiteral("<%1 bytes>").arg(config.controlPlane.encryptionKeyGcm.size()),
                  QStringLiteral("exactly 32 bytes"));
    }
    if (config.controlPlane.writeGcm && config.controlPlane.encryptionKeyGcm.isEmpty()) {
        read.fail(spec("db-enc-write-gcm"), QStringLiteral("true"),
                  QStringLiteral("false unless DB_ENC_KEY_GCM is set"));
    }
    if (read.isGiven(spec("db-host"))) {
        config.controlPlane.backend = tenants::ControlPlaneSettings::Backend::Postgres;
        config.controlPlane.host = read.text(spec("db-host"));
        config.controlPlane.port = read.integer(spec("db-port"), 1, 65535);
        config.controlPlane.database = read.text(spec("db-name"));
        config.controlPlane.user = read.text(spec("db-user"));
        config.controlPlane.password = read.text(spec("db-password"));
        if (config.controlPlane.encryptionKey.isEmpty()
            && config.controlPlane.encryptionKeyGcm.isEmpty()) {
            read.fail(spec("db-enc-key"), QString(),
                      QStringLiteral("a 16-byte key: tenant secrets in a PostgreSQL control plane "
                                     "are encrypted with it"));
        }
        config.controlPlane.replicaHost = read.text(spec("db-replica-host")).trimmed();
        config.controlPlane.replicaPort = read.isGiven(spec("db-replica-port"))
                ? read.integer(spec("db-replica-port"), 1, 65535)
                : config.controlPlane.port;
    } else {
        if (read.isGiven(spec("db-replica-host")) && !read.error) {
            read.error = QStringLiteral("DB_REPLICA_HOST (--db-replica-host) needs DB_HOST "
                                        "(--db-host): it names a replica of the PostgreSQL "
                                        "control plane");
        }
        config.controlPlane.backend = tenants::ControlPlaneSettings::Backend::Sqlite;
        config.controlPlane.sqlitePath = config.dataDir + QStringLiteral("/control-plane.sqlite3");
        config.controlPlane.keyFile = config.dataDir + QStringLiteral("/db_enc_key");
    }

    config.controlPlane.replicaDelayMs = read.integer(spec("db-replica-delay-ms"), 0, 3'600'000);
    config.controlPlane.replicaRetryMs = read.integer(spec("db-replica-retry-ms"), 100, 600'000);

    tenants::TenantDefaults &defaults = config.tenantDefaults;
    constexpr int Huge = 1'000'000'000;
    defaults.maxConcurrentUsers = read.integer(spec("tenant-max-concurrent-users"), 1, Huge);
    defaults.maxEventsPerSecond = read.integer(spec("tenant-max-events-per-second"), 1, Huge);
    defaults.maxBytesPerSecond = read.integer(spec("tenant-max-bytes-per-second"), 1, Huge);
    defaults.maxChannelsPerClient = read.integer(spec("tenant-max-channels-per-client"), 1, Huge);
    defaults.maxJoinsPerSecond = read.integer(spec("tenant-max-joins-per-second"), 1, Huge);
    defaults.maxPresenceEventsPerSecond =
            read.integer(spec("tenant-max-presence-events-per-second"), 1, Huge);
    defaults.maxPayloadSizeInKb = read.integer(spec("tenant-max-payload-size-in-kb"), 1, 1'000'000);
    defaults.clientPresenceMaxCalls = read.integer(spec("client-presence-max-calls"), 1, Huge);
    defaults.clientPresenceWindowMs = read.integer(spec("client-presence-window-ms"), 1, Huge);
    config.connectErrorBackoffMs = read.integer(spec("connect-error-backoff-ms"), 0, 600'000);
    config.channelErrorBackoffMs = read.integer(spec("channel-error-backoff-ms"), 0, 600'000);
    config.noChannelTimeoutMs = read.integer(spec("no-channel-timeout-in-ms"), 1, 86'400'000);
    config.cdc.idleTimeoutMs = read.integer(spec("tenant-db-idle-timeout-in-ms"), 1000, 86'400'000);
    config.cdc.poolSize = read.integer(spec("tenant-db-pool-size"), 1, 64);
    config.cdc.connectRetryMs = read.integer(spec("tenant-db-connect-retry-ms"), 0, 600'000);
    config.cdc.slotNameSuffix = read.text(spec("slot-name-suffix")).trimmed().toUtf8();
    const QString rlsStrategy = read.text(spec("rls-strategy")).trimmed().toLower();
    if (rlsStrategy != QLatin1String("batched") && rlsStrategy != QLatin1String("naive")) {
        read.fail(spec("rls-strategy"), rlsStrategy, QStringLiteral("batched or naive"));
    }
    config.cdc.naiveRls = rlsStrategy == QLatin1String("naive");

    const QString validators = read.text(spec("jwt-claim-validators")).trimmed();
    if (!validators.isEmpty()) {
        const QJsonDocument document = QJsonDocument::fromJson(validators.toUtf8());
        if (!document.isObject()) {
            read.fail(spec("jwt-claim-validators"), validators, QStringLiteral("a JSON object"));
        }
        config.jwtClaimValidators = document.object();
    }
    config.apiJwtSecretNext = read.text(spec("api-jwt-secret-next")).toUtf8();
    config.apiTokenBlocklist = read.text(spec("api-token-blocklist")).toUtf8();
    config.metricsJwtSecret = read.text(spec("metrics-jwt-secret")).toUtf8();
    config.metricsTokenBlocklist = read.text(spec("metrics-token-blocklist")).toUtf8();
    config.tenantCacheExpirationMs =
            read.integer(spec("tenant-cache-expiration-in-ms"), 100, 86'400'000);
    config.region = read.text(spec("region")).trimmed();
    if (config.region.isEmpty()) {
        read.fail(spec("region"), config.region, QStringLiteral("a region name"));
    }
    config.nodeName = read.text(spec("node-name")).trimmed();
    const QString endpoints = read.text(spec("etcd-endpoints")).trimmed();
    if (!endpoints.isEmpty()) {
        for (const QString &part : endpoints.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
            const QUrl url(part.trimmed(), QUrl::StrictMode);
            if (!url.isValid() || url.host().isEmpty()
                || (url.scheme() != QLatin1String("http")
                    && url.scheme() != QLatin1String("https"))) {
                read.fail(spec("etcd-endpoints"), endpoints,
                          QStringLiteral("comma-separated http(s)://host:port URLs"));
                break;
            }
            config.cluster.etcdEndpoints.append(url);
        }
    }
    config.cluster.etcdPrefix = read.text(spec("etcd-prefix")).trimmed();
    if (!config.cluster.etcdPrefix.startsWith(QLatin1Char('/'))
        || config.cluster.etcdPrefix.endsWith(QLatin1Char('/'))) {
        read.fail(spec("etcd-prefix"), config.cluster.etcdPrefix,
                  QStringLiteral("a key prefix starting with / and not ending with /"));
    }
    config.cluster.leaseTtlSeconds = read.integer(spec("cluster-lease-ttl-s"), 2, 300);
    config.cluster.linkPort = static_cast<quint16>(read.integer(spec("cluster-port"), 0, 65535));
    config.cluster.advertiseHost = read.text(spec("cluster-advertise-host")).trimmed();
    config.cluster.secret = read.text(spec("cluster-secret")).toUtf8();
    config.cluster.linksPerPeer = read.integer(spec("cluster-links-per-peer"), 1, 16);
    config.cluster.loadAverageFile = read.text(spec("cluster-loadavg-file")).trimmed();
    config.cluster.loadMinUptimeSeconds =
            read.integer(spec("cluster-load-min-uptime-s"), 0, 86'400);
    if (!config.cluster.etcdEndpoints.isEmpty() && config.cluster.secret.isEmpty() && !read.error) {
        read.error = QStringLiteral("ETCD_ENDPOINTS (--etcd-endpoints) needs CLUSTER_SECRET "
                                    "(--cluster-secret): node links are authenticated with it");
    }
    config.workers = read.integer(spec("workers"), 0, 256);
    config.maxSendBufferBytes =
            read.integer(spec("max-send-buffer-bytes"), 64 * 1024, 1'000'000'000);
    config.websocketIdleTimeoutMs =
            read.integer(spec("websocket-idle-timeout-ms"), 1000, 86'400'000);
    const QString dispatcher = read.text(spec("event-dispatcher")).trimmed().toLower();
    if (dispatcher != QLatin1String("epoll") && dispatcher != QLatin1String("qt")) {
        read.fail(spec("event-dispatcher"), dispatcher, QStringLiteral("epoll or qt"));
    }
    config.epollDispatcher = dispatcher == QLatin1String("epoll");
    config.logLevel = read.text(spec("log-level")).trimmed().toLower();
    if (!QStringList{ QStringLiteral("debug"), QStringLiteral("info"), QStringLiteral("warning"),
                      QStringLiteral("error") }
                 .contains(config.logLevel)) {
        read.fail(spec("log-level"), config.logLevel,
                  QStringLiteral("debug, info, warning or error"));
    }

    if (!read.error && config.seedSelfHost && config.apiJwtSecret.isEmpty()
        && config.apiJwtJwks.isEmpty()) {
        read.error = QStringLiteral("SEED_SELF_HOST (--seed-self-host) needs API_JWT_SECRET "
                                    "(--api-jwt-secret) or API_JWT_JWKS: the seeded tenant "
                                    "verifies client tokens with it");
    }
    if (read.error) {
        return Error{ *read.error };
    }
    return request;
}

} // namespace rt::app
