#include "server/app/server.h"

#include "server/app/logging.h"
#include "server/app/worker_node.h"
#include "server/cluster/etcd/etcd_cluster_backend.h"
#include "server/cluster/in_process/in_process_cluster.h"
#include "server/gateway/connect_gate.h"
#include "server/http/admin_auth.h"
#include "server/http/admin_routes.h"
#include "server/http/api_auth.h"
#include "server/http/broadcast_routes.h"
#include "server/http/cluster_config_routes.h"
#include "server/http/cluster_routes.h"
#include "server/http/health_routes.h"
#include "server/http/metrics_routes.h"
#include "server/http/tenant_routes.h"
#include "server/node/cluster_config.h"
#include "server/node/cluster_counters.h"
#include "server/node/cluster_node.h"
#include "server/node/cluster_stats.h"
#include "server/node/node_config_access.h"
#include "server/node/tenant_change_relay.h"
#include "server/pubsub/cluster_pubsub.h"
#include "server/runtime/post.h"
#include "server/runtime/process_figures.h"
#include "server/runtime/worker_pool.h"
#include "server/tenants/control_plane.h"
#include "server/tls/tls_context.h"
#include "server/transport/io_loop.h"
#include "server/transport/listener.h"
#include "shared/core/clock.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QRegularExpression>
#include <QSysInfo>
#include <QTimer>

#include <sys/resource.h>

#include <algorithm>

namespace rt::app {

using node::applyTenantOverrides;
using node::ClusterCounters;
using node::ClusterNode;
using node::ClusterSettings;
using node::ClusterStats;
using node::ConfigProblem;
using node::loadSnapshot;
using node::LocalActivity;
using node::NodeConfigAccess;
using node::parseClusterSettings;
using node::saveSnapshot;
using node::SnapshotFileError;
using node::TenantChangeRelay;
using node::validateConfigEntry;
using node::validateConfigKeyName;

namespace {

// The one place that chooses the cluster backend: etcd when endpoints are configured, else the
// embedded in-process cluster of this one node. The factory runs on the cluster thread.
std::function<std::unique_ptr<cluster::ClusterBackend>()>
clusterBackendFactory(const node::ClusterConfig &config)
{
    if (!config.usesEtcd()) {
        return [] {
            auto *inProcess = new cluster::InProcessCluster; // owned by the backend
            auto backend = std::make_unique<cluster::InProcessClusterBackend>(*inProcess);
            // Deleted after the backend's own destructor ran, which still unregisters from it.
            inProcess->setParent(backend.get());
            return std::unique_ptr<cluster::ClusterBackend>(std::move(backend));
        };
    }
    cluster::EtcdBackendSettings etcd;
    etcd.endpoints = config.etcdEndpoints;
    etcd.prefix = config.etcdPrefix;
    etcd.leaseTtlSeconds = config.leaseTtlSeconds;
    // Loadable: the configuration was checked with the same files.
    if (Result<std::optional<QSslConfiguration>> tls = etcdTlsConfiguration(config.etcdAccess)) {
        etcd.security.tls = tls.value();
    }
    etcd.security.user = config.etcdAccess.user;
    etcd.security.password = config.etcdAccess.password;
    return [etcd] {
        return std::unique_ptr<cluster::ClusterBackend>(
                std::make_unique<cluster::EtcdClusterBackend>(etcd));
    };
}

// Raises RLIMIT_NOFILE's soft limit to the hard one (a node holds a descriptor per client) and
// returns how many client sockets fit: MAX_CONNECTIONS, or with 0 all that the limit allows
// less a reserve for database connections, node links, etcd and files.
qsizetype connectionBudget(qsizetype configured)
{
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) {
        return configured;
    }
    if (limit.rlim_cur < limit.rlim_max) {
        const rlim_t before = limit.rlim_cur;
        limit.rlim_cur = limit.rlim_max;
        if (::setrlimit(RLIMIT_NOFILE, &limit) == 0) {
            qCInfo(lcApp) << "raised the open-file limit (RLIMIT_NOFILE) from" << before << "to"
                          << limit.rlim_cur;
        } else {
            ::getrlimit(RLIMIT_NOFILE, &limit);
        }
    }
    const auto descriptors =
            static_cast<qsizetype>(std::min<rlim_t>(limit.rlim_cur, rlim_t{ 100'000'000 }));
    const qsizetype reserve = std::min<qsizetype>(1024, descriptors / 4);
    const qsizetype fits = std::max<qsizetype>(1, descriptors - reserve);
    if (configured > fits) {
        qCWarning(lcApp) << "MAX_CONNECTIONS" << configured << "exceeds what RLIMIT_NOFILE"
                         << descriptors << "allows; accepting at most" << fits;
    }
    const qsizetype budget = configured > 0 ? std::min(configured, fits) : fits;
    qCInfo(lcApp) << "accepting at most" << budget << "client connections";
    return budget;
}

} // namespace

Server::Server(ServerConfig config, QObject *parent) : QObject(parent), m_config(std::move(config))
{
    // First: the gate, the routes and the workers hold references to the metrics.
    m_metricsRegistry = std::make_unique<metrics::Registry>(
            metrics::LabelPairs{ { QByteArrayLiteral("host"), nodeName().toUtf8() },
                                 { QByteArrayLiteral("region"), m_config.region.toUtf8() } });
    m_metrics = std::make_unique<metrics::ServerMetrics>(*m_metricsRegistry);
    m_presence = std::make_unique<presence::PresenceStore>(m_pubsub);
    m_cdc = std::make_unique<cdc::CdcService>(m_config.cdc, m_pubsub, m_sequencer, m_usage, m_rates,
                                              *m_metrics);
    if (m_config.cluster.usesEtcd()) {
        m_cdc->setClusterMode();
    }
    m_cdc->start();
    gateway::ConnectSettings connect;
    connect.selfHostTenant = m_config.selfHostTenantName;
    connect.connectErrorBackoffMs = m_config.connectErrorBackoffMs;
    connect.claimValidators = m_config.jwtClaimValidators;
    m_gate = std::make_unique<gateway::ConnectGate>(connect, m_tenants, m_usage, m_rates,
                                                    *m_metrics, SystemClock::instance());
    m_apiAuth = std::make_unique<http::TenantApiAuth>(
            m_tenants, m_rates, *m_metrics, m_config.selfHostTenantName,
            m_config.jwtClaimValidators, SystemClock::instance());
    m_broadcastRoutes =
            std::make_unique<http::BroadcastRoutes>(*m_apiAuth, m_rates, m_sequencer, m_cdc.get());
    m_metricsAdmin = std::make_unique<http::AdminAuth>(
            QList<QByteArray>{ m_config.metricsJwtSecret },
            http::AdminAuth::parseBlocklist(m_config.metricsTokenBlocklist), QJsonObject(),
            QStringList(), SystemClock::instance());
    if (!m_metricsAdmin->isConfigured()) {
        qCInfo(lcApp) << "METRICS_JWT_SECRET is not set: GET /metrics refuses every request";
    }
    m_tenantApiAdmin = std::make_unique<http::AdminAuth>(
            QList<QByteArray>{ m_config.apiJwtSecret, m_config.apiJwtSecretNext },
            http::AdminAuth::parseBlocklist(m_config.apiTokenBlocklist),
            m_config.jwtClaimValidators, m_config.operatorRoles, SystemClock::instance());
    if (!m_tenantApiAdmin->isConfigured()) {
        qCInfo(lcApp)
                << "API_JWT_SECRET is not set: the tenant management API refuses every request";
    }
    m_configAccess = std::make_unique<NodeConfigAccess>(
            [this] { return m_clusterNode != nullptr && m_clusterNode->isAvailable(); });
    m_configRoutes = std::make_unique<http::ClusterConfigRoutes>(
            *m_tenantApiAdmin, *m_configAccess, &validateConfigEntry, &validateConfigKeyName);
    m_dbThread.setObjectName(QStringLiteral("db"));
    m_clusterThread.setObjectName(QStringLiteral("cluster"));
    // Rate counters tick on the main thread, which is otherwise nearly idle.
    m_rateTicker = std::make_unique<limits::RateCounterTicker>(m_rateCounters);
    m_rateTicker->setObserver([this](const limits::RateCounterRegistry::TickPass &pass) {
        recordRateTicks(pass);
        m_counterBoard.noteTicks(pass); // the local counts other nodes add to theirs
    });
    m_rateTicker->start();
    auto *historySweep = new QTimer(this); // every topic's ttl, and the node's byte bound
    QObject::connect(historySweep, &QTimer::timeout, this, [this] { m_history.sweep(); });
    historySweep->start(1000);
}

Server::~Server()
{
    stop();
    if (m_controlPlaneMailbox) {
        m_controlPlaneMailbox->close();
    }
    m_dbThread.quit();
    m_dbThread.wait();
    // stop() asked the cluster node to leave (revoking its lease takes one request to etcd);
    // the thread ends when it has, or after a grace period.
    if (m_clusterThread.isRunning() && !m_clusterThread.wait(5000)) {
        m_clusterThread.quit();
        m_clusterThread.wait();
    }
}

quint16 Server::port() const
{
    return m_listener ? m_listener->serverPort() : 0;
}

namespace {

// The seed tenants of this start: the self-host tenant first (SEED_SELF_HOST; with a PostgreSQL
// control plane its database is that database, as upstream seeds it), then SEED_TENANTS_FILE's.
QList<tenants::TenantInput> seedTenants(const ServerConfig &config)
{
    QList<tenants::TenantInput> seeds = config.seedTenants;
    if (!config.seedSelfHost) {
        return seeds;
    }
    tenants::TenantInput self;
    self.externalId = config.selfHostTenantName;
    self.jwtSecret = config.apiJwtSecret;
    self.jwtJwks = config.apiJwtJwks;
    if (config.controlPlane.backend == tenants::ControlPlaneSettings::Backend::Postgres) {
        const tenants::ControlPlaneSettings &db = config.controlPlane;
        self.extensions.append(
                tenants::Extension{ QStringLiteral("postgres_cdc_rls"),
                                    QJsonObject{
                                            { QStringLiteral("db_host"), db.host },
                                            { QStringLiteral("db_port"), QString::number(db.port) },
                                            { QStringLiteral("db_name"), db.database },
                                            { QStringLiteral("db_user"), db.user },
                                            { QStringLiteral("db_password"), db.password },
                                            { QStringLiteral("region"), QStringLiteral("local") },
                                            { QStringLiteral("ssl_enforced"), false },
                                    },
                                    {},
                                    {},
                                    {} });
    }
    seeds.prepend(self);
    return seeds;
}

} // namespace

void Server::start()
{
    if (!loadClientTls()) {
        return;
    }
    m_controlPlane =
            new tenants::ControlPlane(m_config.controlPlane, m_config.tenantDefaults, m_tenants);
    m_controlPlane->setRoutingCounters(&m_metrics->controlPlaneRouting);
    m_controlPlane->moveToThread(&m_dbThread);
    m_controlPlaneMailbox = std::make_shared<runtime::Mailbox>(m_controlPlane);
    connect(&m_dbThread, &QThread::finished, m_controlPlane, &QObject::deleteLater);
    connect(m_controlPlane, &tenants::ControlPlane::ready, this, &Server::onControlPlaneReady);
    connect(m_controlPlane, &tenants::ControlPlane::failed, this, &Server::failed);
    // Runs on the db thread, where the change was made; the reactions are thread-safe.
    connect(
            m_controlPlane, &tenants::ControlPlane::tenantChanged, m_controlPlane,
            [this](const QByteArray &externalId, bool disconnectSockets) {
                onTenantChanged(externalId, disconnectSockets);
            },
            Qt::DirectConnection);
    m_tenantRoutes = std::make_unique<http::TenantRoutes>(
            *m_tenantApiAdmin, *m_controlPlane, m_tenants, m_usage,
            http::TenantRoutes::NodeInfo{ m_config.region, nodeName() },
            [this](const QByteArray &externalId) { disconnectTenant(externalId); },
            http::TenantRoutes::TenantDatabases{
                    [this](const QByteArray &externalId) { return m_cdc->isConnected(externalId); },
                    [this](const QByteArray &externalId) { m_cdc->dropTenant(externalId); } });
    m_dbThread.start();

    tenants::ControlPlane *controlPlane = m_controlPlane;
    const int cacheExpirationMs = m_config.tenantCacheExpirationMs;
    runtime::post(controlPlane, [controlPlane, seeds = seedTenants(m_config), cacheExpirationMs] {
        controlPlane->start(seeds);
        // The tenant cache's TTL: changes other nodes (or other tools) made to the control plane
        // become visible within one interval; writes through any node's tenant API apply at once
        // (TenantChangeRelay).
        auto *refresh = new QTimer(controlPlane); // owned by the control plane
        refresh->setInterval(cacheExpirationMs);
        QObject::connect(refresh, &QTimer::timeout, controlPlane,
                         [controlPlane] { controlPlane->refresh(); });
        refresh->start();
    });
}

void Server::onTenantChanged(const QByteArray &externalId, bool disconnectSockets)
{
    if (disconnectSockets) {
        disconnectTenant(externalId);
        // Its database settings or credentials may have changed: connect afresh.
        m_cdc->dropTenant(externalId);
    }
    // The directory already holds the tenant as written (or not at all).
    const tenants::TenantPtr current = m_tenants.find(externalId);
    m_rates.applyTenantChange(externalId, current);
    if (!current) {
        m_metricsRegistry->removeSeries("tenant", externalId);
    }
}

bool Server::loadClientTls()
{
    if (!m_config.clientPortUsesTls()) {
        return true;
    }
    Result<std::shared_ptr<tls::ReloadableServerContext>> loaded =
            tls::ReloadableServerContext::load(m_config.clientTls);
    if (!loaded) {
        // Emitted after start() returns, like every other failure of the start.
        QMetaObject::invokeMethod(
                this, [this, message = loaded.error().message] { Q_EMIT failed(message); },
                Qt::QueuedConnection);
        return false;
    }
    m_clientTls = std::move(loaded).value();
    qCInfo(lcApp).noquote() << "TLS on the client port with"
                            << m_clientTls->current()->certificateSummary();
    return true;
}

void Server::reloadCertificates()
{
    if (!m_clientTls) {
        qCInfo(lcApp) << "SIGHUP: no TLS certificate to reload (TLS_CERT_FILE is not set)";
        return;
    }
    const Result<QString> reloaded = m_clientTls->reload();
    if (!reloaded) {
        qCWarning(lcApp).noquote() << "SIGHUP: the certificate was not reloaded, the old one "
                                      "stays in use:"
                                   << reloaded.error().message;
        return;
    }
    qCInfo(lcApp).noquote() << "SIGHUP: reloaded the TLS certificate:" << reloaded.value();
}

void Server::onControlPlaneReady()
{
    const int count = m_config.workers > 0 ? m_config.workers : runtime::availableCpuCount();
    m_workers = std::make_unique<runtime::WorkerPool>(
            count,
            m_config.epollDispatcher ? runtime::WorkerPool::Dispatcher::Epoll
                                     : runtime::WorkerPool::Dispatcher::Qt);
    m_workers->start();
    m_workerNodes.assign(static_cast<std::size_t>(count), nullptr);
    m_workersPending.store(count);

    channels::ChannelSettings settings;
    settings.channelErrorBackoffMs = m_config.channelErrorBackoffMs;
    settings.noChannelTimeoutMs = m_config.noChannelTimeoutMs;
    settings.claimValidators = m_config.jwtClaimValidators;
    settings.clientPresenceMaxCalls = m_config.tenantDefaults.clientPresenceMaxCalls;
    settings.clientPresenceWindowMs = m_config.tenantDefaults.clientPresenceWindowMs;
    const WorkerNode::Shared shared{
        m_tenants,
        m_usage,
        m_rates,
        *m_metrics,
        m_sequencer,
        *m_presence,
        SystemClock::instance(),
        m_shuttingDown,
        settings,
        *m_gate,
        transport::IoLoop::Limits{ m_config.maxSendBufferBytes, m_config.socketHighWaterBytes,
                                   m_config.slowConsumerGraceMs },
        m_config.websocketIdleTimeoutMs,
        [this](http::Router &router) {
            m_broadcastRoutes->registerOn(router);
            m_tenantRoutes->registerOn(router);
            http::registerMetricsRoutes(router, *m_metricsAdmin,
                                        [this] { return renderMetrics(); });
            http::registerHealthRoutes(router, *m_apiAuth);
            http::registerClusterRoutes(router, *m_tenantApiAdmin,
                                        [this] { return clusterView(); });
            http::registerAdminRoutes(
                    router, *m_tenantApiAdmin,
                    [this](const std::function<void(QByteArray)> &done) {
                        requestAdminSnapshot(done);
                    },
                    [this](const std::function<void(QByteArray)> &done) {
                        requestAdminHistory(done);
                    });
            m_configRoutes->registerOn(router);
        },
        m_cdc.get(),
        gateway::AdminFeedEndpoint::Parts{
                [this](const wire::HttpRequest &request) {
                    return m_tenantApiAdmin->authorisesUpgrade(request);
                },
                [this](const std::function<void(QByteArray)> &done) { requestAdminSnapshot(done); },
                1000 },
        [this](const wire::HttpRequest &head) {
            return m_tenantApiAdmin->authorises(head) || m_apiAuth->carriesValidToken(head);
        },
        m_clientTls,
        &m_sequencer,
    };
    for (int i = 0; i < count; ++i) {
        QObject *context = m_workers->context(i);
        runtime::post(context, [this, context, i, shared] {
            // Built on the worker thread, so every QObject inside belongs to it.
            m_workerNodes[static_cast<std::size_t>(i)] = new WorkerNode(shared, context);
            runtime::post(this, [this] { onWorkerReady(); });
        });
    }
}

void Server::onWorkerReady()
{
    if (m_workersPending.fetch_sub(1) != 1) {
        return;
    }
    {
        const QMutexLocker lock(&m_workerMailboxesMutex);
        for (WorkerNode *node : m_workerNodes) {
            m_pubsub.addHub(node->hub());
            m_workerMailboxes.emplace_back(node->loop()->mailbox(), node);
            m_workerFigures.push_back(std::make_shared<WorkerFigures>());
            m_workerFigures.back()->startedNs = runtime::monotonicNs();
        }
    }
    startListening();
}

void Server::startListening()
{
    std::vector<transport::IoLoop *> loops;
    for (WorkerNode *node : m_workerNodes) {
        loops.push_back(node->loop());
    }
    transport::ConnectionAdmission::Limits admission;
    admission.maxConnections = connectionBudget(m_config.maxConnections);
    admission.maxPendingPerAddress = m_config.maxPendingConnectionsPerAddress;
    m_admission = std::make_unique<transport::ConnectionAdmission>(admission);
    m_listener = std::make_unique<transport::Listener>(std::move(loops), m_admission.get());
    if (!m_listener->listen(m_config.listenAddress, m_config.port)) {
        Q_EMIT failed(QStringLiteral("cannot listen on %1:%2: %3")
                              .arg(m_config.listenAddress.toString())
                              .arg(m_config.port)
                              .arg(m_listener->errorString()));
        return;
    }
    qCInfo(lcApp).noquote() << "listening on" << m_config.listenAddress.toString() << "port"
                            << m_listener->serverPort()
                            << (m_clientTls ? "(https, wss)" : "(http, ws)") << "with"
                            << m_workerNodes.size() << "worker(s);" << m_tenants.size()
                            << "tenant(s)";
    startCluster(m_listener->serverPort());
    Q_EMIT started(m_listener->serverPort());
}

void Server::startCluster(quint16 clientPort)
{
    ClusterNode::Settings settings;
    settings.cluster = m_config.cluster;
    settings.nodeId = nodeName();
    settings.region = m_config.region;
    settings.listenAddress = m_config.clusterListenAddress.isNull() ? m_config.listenAddress
                                                                    : m_config.clusterListenAddress;
    settings.clientPort = clientPort;
    settings.clientUsesTls = m_clientTls != nullptr;
    // Diffs of other nodes' presences count against the tenant here, like local ones.
    m_presence->setRemoteCounting([this](const pubsub::TopicKey &topic) {
        pubsub::DeliveryCounting counting;
        if (const tenants::TenantPtr tenant = m_tenants.find(topic.tenant())) {
            counting.counter = m_rates.presenceEvents(*tenant);
            counting.delivered = m_metrics->messagesOut.labels({ topic.tenant() });
        }
        return counting;
    });
    applySavedClusterConfig();
    // Runs on the control plane's thread, `done` after it; nothing once the control plane is
    // going away (the cluster thread outlives the database thread at shutdown).
    tenants::ControlPlane *controlPlane = m_controlPlane;
    const auto refreshTenant = [controlPlane, mailbox = m_controlPlaneMailbox](
                                       const QByteArray &tenantId, std::function<void()> done) {
        mailbox->post([controlPlane, tenantId, done = std::move(done)] {
            (void)controlPlane->refreshTenant(tenantId); // a failure is logged there
            done();
        });
    };
    m_clusterNode = new ClusterNode( // deleted on its thread when it ends
            settings,
            ClusterNode::Parts{
                    m_pubsub, *m_presence, m_usage, remoteCountingFunction(), *m_configAccess,
                    m_cdc.get(), &m_tenants, clusterBackendFactory(m_config.cluster), refreshTenant,
                    m_metrics.get(), &m_homes, &m_history,
                    [this](const QByteArray &tenantId) { return historySettingsFor(tenantId); },
                    [this](const pubsub::OutboundMessagePtr &message) {
                        m_sequencer.publishAsHome(message);
                    } });
    addClusterParts(refreshTenant);
    connectClusterNode();
    m_clusterThread.start();
    ClusterNode *node = m_clusterNode;
    runtime::post(node, [node] { node->start(); });
}

std::function<pubsub::DeliveryCounting(const pubsub::TopicKey &, bool)>
Server::remoteCountingFunction()
{
    // A broadcast from another node counts here as it would had it been sent here.
    return [this](const pubsub::TopicKey &topic, bool isBroadcast) {
        pubsub::DeliveryCounting counting;
        const tenants::TenantPtr tenant = m_tenants.find(topic.tenant());
        if (!tenant) {
            return counting;
        }
        counting.counter = isBroadcast ? m_rates.events(*tenant) : nullptr;
        counting.shutsDownReceivers = isBroadcast;
        counting.delivered = m_metrics->messagesOut.labels({ topic.tenant() });
        return counting;
    };
}

void Server::applySavedClusterConfig()
{
    // The configuration this node last applied, until the cluster answers (etcd may be down).
    const auto saved = loadSnapshot(clusterConfigFile());
    if (saved) {
        qCInfo(lcApp).noquote() << "applying the last known cluster configuration (revision"
                                << saved->revision << ") from" << clusterConfigFile();
        applyClusterConfig(*saved, false);
    } else if (saved.error().kind != SnapshotFileError::Kind::Missing) {
        qCWarning(lcApp).noquote()
                << "ignoring the saved cluster configuration:" << saved.error().message;
    }
}

// The cluster node's children: cluster-wide limits, tenant-change notices, the admin view.
void Server::addClusterParts(
        const std::function<void(const QByteArray &, std::function<void()>)> &refreshTenant)
{
    new ClusterCounters(*m_clusterNode, { m_usage, m_rateCounters, m_counterBoard });
    auto *relay = new TenantChangeRelay(*m_clusterNode, refreshTenant); // owned by it
    connect(m_controlPlane, &tenants::ControlPlane::tenantWritten, relay,
            &TenantChangeRelay::announce);
    auto *stats = new ClusterStats( // owned by the node
            *m_clusterNode,
            ClusterStats::Parts{ m_counterBoard, *m_configAccess,
                                 [this] { return localActivity(); }, m_cdc.get(), &m_tenants });
    const QMutexLocker lock(&m_statsMutex);
    m_statsMailbox = stats->mailbox();
    m_clusterStats = stats;
}

void Server::connectClusterNode()
{
    m_clusterNode->moveToThread(&m_clusterThread);
    connect(&m_clusterThread, &QThread::finished, m_clusterNode, &QObject::deleteLater);
    connect(m_clusterNode, &ClusterNode::failed, this, &Server::failed);
    connect(m_clusterNode, &ClusterNode::configChanged, this,
            [this](const cluster::ConfigSnapshot &snapshot) {
                if (!m_stopped) {
                    applyClusterConfig(snapshot, true);
                }
            });
    // Queued: started() comes from the cluster thread; publishers switch over from here on.
    connect(m_clusterNode, &ClusterNode::started, this, [this] {
        if (!m_stopped && m_clusterNode != nullptr && m_clusterNode->clusterPubSub() != nullptr) {
            m_nodePubSub.attach(m_clusterNode->clusterPubSub());
        }
    });
}

pubsub::SequencingPubSub::Routing Server::sequencerRouting()
{
    if (!m_config.cluster.usesEtcd()) {
        return {};
    }
    pubsub::SequencingPubSub::Routing routing;
    routing.homes = &m_homes;
    routing.forward = [this](const QString &home, const pubsub::OutboundMessagePtr &message) {
        return m_nodePubSub.forwardToHome(home, message);
    };
    routing.ask = [this](const QString &home, pubsub::history_wire::Request question,
                         QObject *receiver,
                         std::function<void(pubsub::TopicHistory::Recovery)> answered) {
        m_nodePubSub.askHome(home, std::move(question), receiver, std::move(answered));
    };
    return routing;
}

pubsub::HistorySettings Server::historySettingsFor(const QByteArray &tenantId) const
{
    const tenants::TenantPtr tenant = m_tenants.find(tenantId);
    if (!tenant) {
        return pubsub::HistorySettings{ 0, 0 };
    }
    return pubsub::HistorySettings{ tenant->historySize, tenant->historyTtlSeconds };
}

QString Server::clusterConfigFile() const
{
    // One file per node: several nodes on one machine may share a data directory.
    QString name = nodeName();
    name.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9._-]")), QStringLiteral("_"));
    return m_config.dataDir + QStringLiteral("/cluster-config-") + name + QStringLiteral(".json");
}

void Server::applyClusterConfig(const cluster::ConfigSnapshot &snapshot, bool save)
{
    const ClusterSettings settings = parseClusterSettings(snapshot);
    for (const ConfigProblem &problem : settings.problems) {
        qCWarning(lcApp).noquote()
                << "cluster configuration" << problem.key << "does not apply:" << problem.message;
    }
    const QList<QByteArray> changed = applyTenantOverrides(
            settings, m_tenants, m_rates,
            [this](const QByteArray &externalId) { disconnectTenant(externalId); });
    if (!changed.isEmpty()) {
        qCInfo(lcApp).noquote() << "cluster configuration revision" << settings.revision
                                << "changed the settings of" << changed.size() << "tenant(s)";
    }
    m_configAccess->setSnapshot(snapshot);
    if (save) {
        if (const std::optional<QString> error = saveSnapshot(clusterConfigFile(), snapshot)) {
            qCWarning(lcApp).noquote() << "cannot save the cluster configuration:" << *error;
        }
    }
}

QJsonObject Server::clusterView() const
{
    QJsonArray nodes;
    if (m_clusterNode != nullptr) {
        for (const cluster::NodeInfo &node : m_clusterNode->membersSnapshot()) {
            nodes.append(node.toJson());
        }
    }
    // Running totals of the broadcasts this node sent to and received from each peer (rates are
    // the differences between two reads).
    QJsonObject links;
    if (m_clusterNode != nullptr && m_clusterNode->clusterPubSub() != nullptr) {
        const pubsub::ClusterPubSubStats stats = m_clusterNode->clusterPubSub()->stats();
        for (auto it = stats.peers.cbegin(); it != stats.peers.cend(); ++it) {
            const pubsub::ClusterPeerFigures &peer = it.value();
            links.insert(it.key(),
                         QJsonObject{
                                 { QStringLiteral("messages_out"), qint64(peer.envelopesOut) },
                                 { QStringLiteral("bytes_out"), qint64(peer.bytesOut) },
                                 { QStringLiteral("flooded_out"), qint64(peer.floodedOut) },
                                 { QStringLiteral("dropped_out"), qint64(peer.envelopesDropped) },
                                 { QStringLiteral("messages_in"), qint64(peer.envelopesIn) },
                                 { QStringLiteral("bytes_in"), qint64(peer.bytesIn) },
                                 { QStringLiteral("interest_known"), peer.interestKnown },
                                 { QStringLiteral("tenants"), qint64(peer.tenants) },
                         });
        }
    }
    // The tenant change streams (per-tenant singletons) this node runs.
    QJsonArray streams;
    for (const QByteArray &tenant : m_cdc->ownedStreams()) {
        streams.append(QString::fromUtf8(tenant));
    }
    // The tenants whose topics this node numbers (their homes: the stream claims it holds).
    QJsonArray homes;
    for (const QByteArray &tenant : m_homes.homesHere()) {
        homes.append(QString::fromUtf8(tenant));
    }
    return QJsonObject{
        { QStringLiteral("node"), nodeName() },
        { QStringLiteral("links"), links },
        { QStringLiteral("streams_owned"), streams },
        { QStringLiteral("homes"), homes },
        { QStringLiteral("backend"),
          m_config.cluster.usesEtcd() ? QStringLiteral("etcd") : QStringLiteral("in_process") },
        { QStringLiteral("available"), m_clusterNode != nullptr && m_clusterNode->isAvailable() },
        { QStringLiteral("nodes"), nodes },
        { QStringLiteral("users"), m_counterBoard.usersView() }, // tenant -> node -> users
    };
}

void Server::requestAdminSnapshot(const std::function<void(QByteArray)> &done) const
{
    askClusterStats([](ClusterStats &stats) { return stats.snapshotJson(); }, done);
}

void Server::requestAdminHistory(const std::function<void(QByteArray)> &done) const
{
    askClusterStats([](ClusterStats &stats) { return stats.historyJson(); }, done);
}

void Server::askClusterStats(const std::function<QByteArray(ClusterStats &)> &build,
                             const std::function<void(QByteArray)> &done) const
{
    runtime::MailboxPtr mailbox;
    ClusterStats *stats = nullptr;
    {
        const QMutexLocker lock(&m_statsMutex);
        mailbox = m_statsMailbox;
        stats = m_clusterStats;
    }
    // The mailbox drops the post once the stats object is gone; then nobody answers but us.
    if (!mailbox || !mailbox->post([stats, build, done] { done(build(*stats)); })) {
        done(QByteArray());
    }
}

LocalActivity Server::localActivity() const
{
    LocalActivity activity;
    {
        const QMutexLocker lock(&m_workerMailboxesMutex);
        for (std::size_t i = 0; i < m_workerMailboxes.size() && i < m_workerFigures.size(); ++i) {
            const std::shared_ptr<WorkerFigures> &figures = m_workerFigures[i];
            activity.connections += figures->sockets.load(std::memory_order_relaxed);
            activity.channels += figures->channels.load(std::memory_order_relaxed);
            activity.workers.append(node::WorkerActivity{
                    figures->cpuNs.load(std::memory_order_relaxed), figures->startedNs,
                    figures->loopLagNs.load(std::memory_order_relaxed) });
            // The next read sees what the worker counts now, on its own thread, and how long
            // this post waited in its event loop (the loop's lag).
            WorkerNode *node = m_workerMailboxes[i].second;
            const qint64 postedNs = runtime::monotonicNs();
            m_workerMailboxes[i].first->post([node, figures, postedNs] {
                figures->loopLagNs.store(runtime::monotonicNs() - postedNs,
                                         std::memory_order_relaxed);
                figures->cpuNs.store(runtime::threadCpuNs(), std::memory_order_relaxed);
                figures->sockets.store(node->socketCount(), std::memory_order_relaxed);
                figures->channels.store(node->channelCount(), std::memory_order_relaxed);
            });
        }
    }
    activity.processCpuNs = runtime::processCpuNs();
    activity.residentBytes = runtime::residentBytes();
    for (const auto &[labels, counter] : m_metrics->messagesIn.series()) {
        activity.messagesIn[labels.front()] += counter->value();
    }
    for (const auto &[labels, counter] : m_metrics->messagesOut.series()) {
        activity.messagesOut[labels.front()] += counter->value();
    }
    return activity;
}

void Server::recordRateTicks(const limits::RateCounterRegistry::TickPass &pass)
{
    for (const limits::TickedCounter &ticked : pass.ticked) {
        const qint64 count = ticked.tick.state.lastLocalCount;
        if (count <= 0) {
            continue;
        }
        const QByteArray tenant = ticked.key.tenantId.toUtf8();
        const auto delta = static_cast<quint64>(count);
        switch (ticked.key.kind) {
        case limits::RateCounterKind::Events:
            m_metrics->channelEvents.labels({ tenant })->inc(delta);
            m_metrics->channelGlobalEvents.inc(delta);
            break;
        case limits::RateCounterKind::PresenceEvents:
            m_metrics->channelPresenceEvents.labels({ tenant })->inc(delta);
            m_metrics->channelGlobalPresenceEvents.inc(delta);
            break;
        case limits::RateCounterKind::Joins:
            m_metrics->channelJoins.labels({ tenant })->inc(delta);
            m_metrics->channelGlobalJoins.inc(delta);
            break;
        case limits::RateCounterKind::DbEvents:
            m_metrics->channelDbEvents.labels({ tenant })->inc(delta);
            m_metrics->channelGlobalDbEvents.inc(delta);
            break;
        default:
            break;
        }
    }
}

QByteArray Server::renderMetrics() const
{
    // Connection gauges are sampled at scrape time from the users counters; tenants without
    // users drop out.
    // The *_cluster series add the other nodes' users as they last reported them.
    const QList<QPair<QByteArray, int>> users = m_usage.connectedUsers();
    const QList<QPair<QByteArray, int>> clusterUsers = m_usage.clusterConnectedUsers();
    qint64 total = 0;
    qint64 clusterTotal = 0;
    m_metrics->connectionsConnected.clear();
    m_metrics->connectionsConnectedCluster.clear();
    for (const auto &[tenant, count] : users) {
        m_metrics->connectionsConnected.labels({ tenant })->set(count);
        total += count;
    }
    for (const auto &[tenant, count] : clusterUsers) {
        m_metrics->connectionsConnectedCluster.labels({ tenant })->set(count);
        clusterTotal += count;
    }
    m_metrics->connectionsGlobalConnected.set(static_cast<double>(total));
    m_metrics->connectionsGlobalConnectedCluster.set(static_cast<double>(clusterTotal));
    m_metrics->tenantsConnected.set(static_cast<double>(users.size()));
    return m_metricsRegistry->render();
}

QString Server::nodeName() const
{
    if (!m_config.nodeName.isEmpty()) {
        return m_config.nodeName;
    }
    // The bound port, not PORT: with PORT=0 several nodes on one machine stay distinct.
    return QSysInfo::machineHostName() + u':'
            + QString::number(port() != 0 ? port() : m_config.port);
}

void Server::disconnectTenant(const QByteArray &externalId)
{
    const QMutexLocker lock(&m_workerMailboxesMutex);
    for (const auto &worker : m_workerMailboxes) {
        // The mailbox belongs to the node's I/O loop: a post never outlives the node.
        WorkerNode *node = worker.second;
        worker.first->post([node, externalId] { node->disconnectTenant(externalId); });
    }
}

void Server::stop()
{
    if (m_stopped) {
        return;
    }
    m_stopped = true;
    m_shuttingDown.store(true);
    if (m_listener) {
        m_listener->close();
    }
    if (m_workers) {
        for (std::size_t i = 0; i < m_workerNodes.size(); ++i) {
            WorkerNode *node = m_workerNodes[i];
            QObject *context = m_workers->context(static_cast<int>(i));
            if (node != nullptr) {
                // Goodbyes are written before the worker's loop ends.
                runtime::post(context, [node] { node->shutdown(); });
            }
        }
    }
    // Sessions closing on the workers post presence leaves here; nobody needs them any more,
    // and nothing may be posted to the workers' hubs once they start to go away.
    m_presence->stop();
    // Before the hubs go: the change streams publish to them.
    m_cdc->stop();
    m_nodePubSub.detach(); // the cluster's pubsub goes with the cluster thread
    m_pubsub.stop();
    if (m_workers) {
        for (int i = 0; i < m_workers->size(); ++i) {
            QObject *context = m_workers->context(i);
            runtime::post(context, [] { QThread::currentThread()->quit(); });
        }
        // Not stop(): its QThread::quit() could end a loop before the goodbyes posted above.
        m_workers->join();
    }
    m_workerNodes.clear();
    {
        const QMutexLocker lock(&m_workerMailboxesMutex);
        m_workerMailboxes.clear();
        m_workerFigures.clear();
    }
    {
        const QMutexLocker lock(&m_statsMutex);
        m_statsMailbox.reset();
        m_clusterStats = nullptr;
    }
    if (m_clusterNode != nullptr) {
        // Last, once no worker can read the cluster view any more: leave the cluster (peers see
        // it at once, not at lease expiry). The thread ends when the backend confirms, or after
        // a grace period if etcd does not answer; the node is deleted when it ends.
        ClusterNode *node = m_clusterNode;
        QThread *thread = &m_clusterThread;
        m_clusterNode = nullptr;
        runtime::post(node, [node, thread] {
            QObject::connect(node, &ClusterNode::stopped, node, [thread] { thread->quit(); });
            QTimer::singleShot(3000, node, [thread] { thread->quit(); });
            node->stop();
        });
    }
}

} // namespace rt::app
