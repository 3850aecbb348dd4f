#include "server/app/config.h"

#include "server/app/options.h"
#include "server/cluster/links/link_settings.h"
#include "server/cluster/links/link_tls.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcessEnvironment>
#include <QSslSocket>

namespace rt::app {

namespace {

using options::OptionSpec;
using options::Reader;
using options::sectionStartingAt;
using options::spec;

// DB_HOST and the options that only mean something with it, read together; then the key
// rules that span options. Runs after every option of the table was read.
void readControlPlane(Reader &read, ServerConfig &config)
{
    tenants::ControlPlaneSettings &plane = config.controlPlane;
    if (plane.writeGcm && plane.encryptionKeyGcm.isEmpty()) {
        read.fail(spec("db-enc-write-gcm"), QStringLiteral("true"),
                  QStringLiteral("false unless DB_ENC_KEY_GCM is set"));
    }
    if (!read.isGiven(spec("db-host"))) {
        if (read.isGiven(spec("db-replica-host")) && !read.error) {
            read.error = QStringLiteral("DB_REPLICA_HOST (--db-replica-host) needs DB_HOST "
                                        "(--db-host): it names a replica of the PostgreSQL "
                                        "control plane");
        }
        plane.backend = tenants::ControlPlaneSettings::Backend::Sqlite;
        plane.sqlitePath = config.dataDir + QStringLiteral("/control-plane.sqlite3");
        plane.keyFile = config.dataDir + QStringLiteral("/db_enc_key");
        return;
    }
    plane.backend = tenants::ControlPlaneSettings::Backend::Postgres;
    plane.host = read.text(spec("db-host"));
    plane.port = read.integer(spec("db-port"), 1, 65535);
    plane.database = read.text(spec("db-name"));
    plane.user = read.text(spec("db-user"));
    plane.password = read.text(spec("db-password"));
    if (plane.encryptionKey.isEmpty() && plane.encryptionKeyGcm.isEmpty()) {
        read.fail(spec("db-enc-key"), QString(),
                  QStringLiteral("a 16-byte key: tenant secrets in a PostgreSQL control plane "
                                 "are encrypted with it"));
    }
    plane.replicaHost = read.text(spec("db-replica-host")).trimmed();
    plane.replicaPort = read.isGiven(spec("db-replica-port"))
            ? read.integer(spec("db-replica-port"), 1, 65535)
            : plane.port;
}

// TLS_CERT_FILE and TLS_KEY_FILE: both or neither, and loadable (so that a wrong file fails the
// start, and --check-config, at once).
std::optional<QString> clientTlsProblem(const ServerConfig &config)
{
    if (config.clientTls.certificateFile.isEmpty() != config.clientTls.keyFile.isEmpty()) {
        return QStringLiteral("TLS_CERT_FILE (--tls-cert-file) and TLS_KEY_FILE "
                              "(--tls-key-file) go together: set both or neither");
    }
    if (config.clientPortUsesTls()) {
        const Result<tls::TlsContextPtr> context = tls::TlsContext::forServer(config.clientTls);
        if (!context) {
            return QStringLiteral("TLS_CERT_FILE / TLS_KEY_FILE: ") + context.error().message;
        }
    }
    return std::nullopt;
}

// With link TLS a node's certificate is its identity: NODE_NAME must be set, and named by it.
std::optional<QString> nodeNameProblem(const ServerConfig &config, const QSslConfiguration &tls)
{
    if (config.nodeName.isEmpty()) {
        return QStringLiteral("CLUSTER_TLS_* needs NODE_NAME (--node-name): peers check that the "
                              "link certificate names it");
    }
    const QSslCertificate own = tls.localCertificate();
    if (!cluster::links::certificateNamesNode(own, config.nodeName)) {
        return QStringLiteral("CLUSTER_TLS_CERT_FILE names %1, not this node's name %2 "
                              "(NODE_NAME): peers would refuse this node")
                .arg(cluster::links::certificateNames(own).join(QStringLiteral(", ")),
                     config.nodeName);
    }
    return std::nullopt;
}

// How the node links are secured: mutual TLS with loadable files, or plaintext chosen
// explicitly with a long secret.
std::optional<QString> linkSecurityProblem(const ServerConfig &config)
{
    const node::ClusterConfig &cluster = config.cluster;
    const cluster::links::LinkTlsFiles &files = cluster.linkTls;
    const int tlsFiles = int{ !files.caFile.isEmpty() } + int{ !files.certificateFile.isEmpty() }
            + int{ !files.keyFile.isEmpty() };
    if (tlsFiles != 0 && tlsFiles != 3) {
        return QStringLiteral("CLUSTER_TLS_CA_FILE, CLUSTER_TLS_CERT_FILE and CLUSTER_TLS_KEY_FILE "
                              "go together: set all three or none");
    }
    if (tlsFiles == 3 && cluster.plaintextLinks) {
        return QStringLiteral("CLUSTER_PLAINTEXT_LINKS (--cluster-plaintext-links) contradicts "
                              "CLUSTER_TLS_*: choose one");
    }
    if (tlsFiles == 0 && !cluster.plaintextLinks) {
        return QStringLiteral("ETCD_ENDPOINTS (--etcd-endpoints) needs secured node links: mutual "
                              "TLS (CLUSTER_TLS_CA_FILE, CLUSTER_TLS_CERT_FILE, "
                              "CLUSTER_TLS_KEY_FILE) or, on a private network, "
                              "CLUSTER_PLAINTEXT_LINKS=true with a CLUSTER_SECRET of at least 32 "
                              "bytes");
    }
    if (cluster.plaintextLinks && cluster.secret.size() < cluster::links::MinPlaintextSecretBytes) {
        return QStringLiteral("CLUSTER_PLAINTEXT_LINKS (--cluster-plaintext-links) needs a "
                              "CLUSTER_SECRET (--cluster-secret) of at least 32 bytes: it alone "
                              "authenticates the links");
    }
    if (tlsFiles == 3) {
        const Result<QSslConfiguration> tls = cluster::links::loadLinkTls(files);
        if (!tls) {
            return QStringLiteral("CLUSTER_TLS_*: ") + tls.error().message;
        }
        if (std::optional<QString> problem = nodeNameProblem(config, tls.value())) {
            return problem;
        }
        // The same pair through OpenSSL: a key that does not belong to the certificate.
        tls::ServerCredentials pair;
        pair.certificateFile = files.certificateFile;
        pair.keyFile = files.keyFile;
        pair.clientCaFile = files.caFile;
        if (const Result<tls::TlsContextPtr> context = tls::TlsContext::forServer(pair); !context) {
            return QStringLiteral("CLUSTER_TLS_*: ") + context.error().message;
        }
    }
    return std::nullopt;
}

// ETCD_*: files that load, pairs that go together, and no password in clear over a network.
std::optional<QString> etcdAccessProblem(const node::ClusterConfig &cluster)
{
    const node::EtcdAccess &access = cluster.etcdAccess;
    if (access.certificateFile.isEmpty() != access.keyFile.isEmpty()) {
        return QStringLiteral("ETCD_CERT_FILE (--etcd-cert-file) and ETCD_KEY_FILE "
                              "(--etcd-key-file) go together: set both or neither");
    }
    if (access.user.isEmpty() != access.password.isEmpty()) {
        return QStringLiteral("ETCD_USERNAME (--etcd-username) and ETCD_PASSWORD "
                              "(--etcd-password) go together: set both or neither");
    }
    for (const QUrl &endpoint : cluster.etcdEndpoints) {
        if (endpoint.scheme() == QLatin1String("https")) {
            continue;
        }
        if (access.usesTlsFiles()) {
            return QStringLiteral("ETCD_CA_FILE, ETCD_CERT_FILE and ETCD_KEY_FILE need https:// "
                                  "endpoints; %1 is not one")
                    .arg(endpoint.toString());
        }
        if (!access.user.isEmpty() && !QHostAddress(endpoint.host()).isLoopback()
            && endpoint.host() != QLatin1String("localhost")) {
            return QStringLiteral("ETCD_PASSWORD would cross the network in clear to %1: use "
                                  "https:// endpoints")
                    .arg(endpoint.toString());
        }
    }
    if (Result<std::optional<QSslConfiguration>> tls = etcdTlsConfiguration(access); !tls) {
        return tls.error().message;
    }
    return std::nullopt;
}

// Rules between options that the table's rows cannot check alone.
void checkCombinations(Reader &read, const ServerConfig &config)
{
    if (read.error) {
        return;
    }
    read.error = clientTlsProblem(config);
    if (!read.error && config.cluster.usesEtcd()) {
        read.error = linkSecurityProblem(config);
    }
    if (!read.error && config.cluster.usesEtcd()) {
        read.error = etcdAccessProblem(config.cluster);
    }
    const tenants::ControlPlaneSettings &plane = config.controlPlane;
    if (!read.error && plane.backend == tenants::ControlPlaneSettings::Backend::Postgres
        && plane.sslMode.startsWith(QLatin1String("verify")) && plane.sslRootCert.isEmpty()) {
        read.error = QStringLiteral("DB_SSLMODE=%1 (--db-sslmode) needs DB_SSLROOTCERT "
                                    "(--db-sslrootcert): the CA the server's certificate is "
                                    "checked against")
                             .arg(plane.sslMode);
    }
    if (read.error) {
        return;
    }
    if (config.seedSelfHost && config.apiJwtSecret.isEmpty() && config.apiJwtJwks.isEmpty()) {
        read.error = QStringLiteral("SEED_SELF_HOST (--seed-self-host) needs API_JWT_SECRET "
                                    "(--api-jwt-secret) or API_JWT_JWKS: the seeded tenant "
                                    "verifies client tokens with it");
    }
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
    for (const OptionSpec &option : options::all()) {
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

QString optionsMarkdown()
{
    QString text =
            QStringLiteral("| Variable | Flag | Default | Meaning |\n| --- | --- | --- | --- |\n");
    for (const OptionSpec &option : options::all()) {
        if (const char *title = sectionStartingAt(option)) {
            text += QStringLiteral("| **%1** | | | |\n").arg(QLatin1String(title));
        }
        const QString defaultText = *option.defaultText == '\0'
                ? QString()
                : u'`' + QString::fromLatin1(option.defaultText) + u'`';
        QString meaning = QString::fromLatin1(option.description);
        meaning.replace(u'|', QStringLiteral("\\|"));
        text += QStringLiteral("| `%1` | `--%2` | %3 | %4 |\n")
                        .arg(QLatin1String(option.env), QLatin1String(option.flag), defaultText,
                             meaning);
    }
    return text;
}

namespace {

// Where the packaged service runs with another value than the binary's default (the systemd
// unit's Environment=), the environment file shows the service's value and says why.
struct PackagedValue
{
    const char *flag;
    const char *value;
    const char *note;
};

const PackagedValue PackagedValues[] = {
    { "data-dir", "/var/lib/realtime-server",
      "The unit sets /var/lib/realtime-server, its StateDirectory and the only place the service "
      "may write." },
};

const PackagedValue *packagedValue(const OptionSpec &option)
{
    for (const PackagedValue &packaged : PackagedValues) {
        if (qstrcmp(packaged.flag, option.flag) == 0) {
            return &packaged;
        }
    }
    return nullptr;
}

} // namespace

QString environmentTemplate()
{
    QString text = QStringLiteral(
            "# Configuration of the realtime-server service (systemd EnvironmentFile= of\n"
            "# realtime-server.service). One variable per line, without \"export\". Quote as in a "
            "shell:\n"
            "# JSON goes in single quotes, e.g. "
            "JWT_CLAIM_VALIDATORS='{\"iss\":\"https://example.com\"}'.\n"
            "#\n"
            "# Every option of `realtime-server --help` is listed below, commented out, with its "
            "default\n"
            "# (generated from the option table in server/app/config.cpp, as --help is). Uncomment "
            "what you\n"
            "# need, then restart; the unit runs `realtime-server --check-config` first and an "
            "invalid\n"
            "# value stops the start with one message in `journalctl -u realtime-server`.\n"
            "#\n"
            "#   systemctl enable --now realtime-server     (first start)\n"
            "#   systemctl restart realtime-server          (after a change)\n"
            "#\n"
            "# This file holds secrets: keep it readable by root only (mode 0600). The Debian "
            "package does not\n"
            "# enable or start a new installation unless API_JWT_SECRET (or API_JWT_JWKS) is set "
            "here.\n\n");
    for (const OptionSpec &option : options::all()) {
        if (const char *title = sectionStartingAt(option)) {
            text += QStringLiteral("## ---- %1\n\n").arg(QLatin1String(title));
        }
        const PackagedValue *packaged = packagedValue(option);
        QString meaning = QString::fromLatin1(option.description);
        if (packaged != nullptr) {
            meaning += u' ' + QString::fromLatin1(packaged->note);
        }
        meaning += QStringLiteral(" (--") + QLatin1String(option.flag) + u')';
        QString comment = wrapped(meaning, 94, 0);
        comment.replace(u'\n', QStringLiteral("\n## "));
        text += QStringLiteral("## ") + comment.chopped(3);
        text += QStringLiteral("#%1=%2\n\n")
                        .arg(QLatin1String(option.env),
                             QLatin1String(packaged ? packaged->value : option.defaultText));
    }
    text.chop(1); // one newline at the end of the file
    return text;
}

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
        cluster = QStringLiteral("etcd %1 under %2, node links on port %3 (%4)")
                          .arg(endpoints.join(QLatin1Char(',')), config.cluster.etcdPrefix,
                               config.cluster.linkPort == 0
                                       ? QStringLiteral("(any)")
                                       : QString::number(config.cluster.linkPort),
                               config.cluster.usesLinkTls() ? QStringLiteral("mutual TLS")
                                                            : QStringLiteral("plaintext"));
    }
    // With TLS: "port 4000 (TLS 1.2+) on ...".
    const QString port = config.clientPortUsesTls()
            ? QStringLiteral("%1 (TLS %2+)")
                      .arg(QString::number(config.port),
                           config.clientTls.minimumVersion == tls::ProtocolVersion::Tls13
                                   ? QStringLiteral("1.3")
                                   : QStringLiteral("1.2"))
            : QString::number(config.port);
    return QStringLiteral("configuration ok: port %1 on %2, control plane %3, seeded tenants: %4, "
                          "tenant API secret %5, cluster %6")
            .arg(port, address, controlPlane,
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

Result<std::optional<QSslConfiguration>> etcdTlsConfiguration(const node::EtcdAccess &access)
{
    if (!access.usesTlsFiles()) {
        return std::optional<QSslConfiguration>();
    }
    QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
    tls.setProtocol(QSsl::TlsV1_2OrLater);
    tls.setPeerVerifyMode(QSslSocket::VerifyPeer);
    if (!access.caFile.isEmpty()) {
        auto authorities = cluster::links::readPemCertificates("ETCD_CA_FILE", access.caFile);
        if (!authorities) {
            return authorities.error();
        }
        tls.setCaCertificates(authorities.value());
    }
    if (!access.certificateFile.isEmpty()) {
        auto chain = cluster::links::readPemCertificates("ETCD_CERT_FILE", access.certificateFile);
        if (!chain) {
            return chain.error();
        }
        auto key = cluster::links::readPemPrivateKey(access.keyFile);
        if (!key) {
            return Error{ QStringLiteral("ETCD_KEY_FILE: ") + key.error().message };
        }
        tls.setLocalCertificateChain(chain.value());
        tls.setPrivateKey(key.value());
    }
    return std::optional<QSslConfiguration>(tls);
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
    for (const OptionSpec &option : options::all()) {
        parser.addOption(QCommandLineOption(QString::fromLatin1(option.flag),
                                            QString::fromLatin1(option.description),
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
    for (const OptionSpec &option : options::all()) {
        if (option.apply != nullptr) {
            option.apply(read, option, request.config);
        }
    }
    readControlPlane(read, request.config);
    checkCombinations(read, request.config);
    if (read.error) {
        return Error{ *read.error };
    }
    return request;
}

ServerConfig defaultServerConfig()
{
    return parseConfig({ QStringLiteral("realtime-server") }, {})->config;
}

} // namespace rt::app
