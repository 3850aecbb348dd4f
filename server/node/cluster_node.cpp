#include "server/node/cluster_node.h"

#include "server/cdc/cdc_service.h"
#include "server/cdc/stream_coordinator.h"
#include "server/cluster/cluster_backend.h"
#include "server/cluster/links/node_links.h"
#include "server/cluster/placement/load_average.h"
#include "server/cluster/placement/placement.h"
#include "server/node/cluster_config.h"
#include "server/node/logging.h"
#include "server/node/node_config_access.h"
#include "server/presence/presence_replicator.h"
#include "server/presence/presence_store.h"
#include "server/pubsub/cluster_pubsub.h"
#include "server/pubsub/history_exchange.h"
#include "server/pubsub/tenant_homes.h"
#include "server/runtime/post.h"
#include "server/tenants/tenant_directory.h"

#include <QDateTime>
#include <QHostInfo>
#include <QMutexLocker>
#include <QSet>

namespace rt::node {

namespace {

// "host:port" -> (host, port); IPv6 literals may be bracketed. Port 0 or garbage: nullopt.
std::optional<cluster::links::PeerAddress> peerAddress(const cluster::NodeInfo &node)
{
    const qsizetype colon = node.linkAddress.lastIndexOf(QLatin1Char(':'));
    if (colon <= 0) {
        return std::nullopt;
    }
    bool ok = false;
    const uint port = node.linkAddress.mid(colon + 1).toUInt(&ok);
    if (!ok || port == 0 || port > 65535) {
        return std::nullopt;
    }
    QString host = node.linkAddress.left(colon);
    if (host.startsWith(QLatin1Char('[')) && host.endsWith(QLatin1Char(']'))) {
        host = host.mid(1, host.size() - 2);
    }
    return cluster::links::PeerAddress{ node.id, host, static_cast<quint16>(port) };
}

QString hostPort(const QString &host, quint16 port)
{
    return (host.contains(QLatin1Char(':')) ? u'[' + host + u']' : host) + u':'
            + QString::number(port);
}

} // namespace

ClusterNode::ClusterNode(Settings settings, Parts parts, QObject *parent)
    : QObject(parent),
      m_settings(std::move(settings)),
      m_parts(std::move(parts)),
      m_localTenantsTimer(this),
      m_graceTimer(this),
      m_loadTimer(this)
{
    m_graceTimer.setSingleShot(true);
    connect(&m_graceTimer, &QTimer::timeout, this, &ClusterNode::applyDataPlaneMembers);
    m_loadTimer.setInterval(m_settings.loadPublishIntervalMs);
    connect(&m_loadTimer, &QTimer::timeout, this, &ClusterNode::publishLoad);
    m_localTenantsTimer.setInterval(m_settings.localTenantsIntervalMs);
    connect(&m_localTenantsTimer, &QTimer::timeout, this, &ClusterNode::reconcileLocalTenants);
}

ClusterNode::~ClusterNode()
{
    // Before the links they send on (children are deleted in creation order: links first).
    delete m_streams;
    delete m_presenceReplicator;
    delete m_pubsub;
}

void ClusterNode::start()
{
    const ClusterConfig &config = m_settings.cluster;
    const QString advertiseHost =
            config.advertiseHost.isEmpty() ? QHostInfo::localHostName() : config.advertiseHost;
    m_self.id = m_settings.nodeId;
    m_self.region = m_settings.region;
    // Plaintext nodes keep the bare host:port older dashboards expect; TLS ones say so.
    m_self.clientAddress = (m_settings.clientUsesTls ? QStringLiteral("https://") : QString())
            + hostPort(advertiseHost, m_settings.clientPort);
    m_self.startedAtMs = QDateTime::currentMSecsSinceEpoch();
    m_uptime.start();
    m_self.load = currentLoad(); // known at once when no minimum uptime is asked for
    if (config.usesEtcd()) {
        if (const std::optional<QString> problem = startLinks(advertiseHost)) {
            Q_EMIT failed(*problem);
            return;
        }
        startDataPlane();
        qCInfo(lcNode).noquote() << QStringLiteral(
                                            "joining the cluster in etcd %1 as %2 (region %3), "
                                            "node links on %4")
                                            .arg(config.etcdPrefix, m_self.id, m_self.region,
                                                 m_self.linkAddress);
    }
    m_backend = m_parts.makeBackend();
    connectBackend();
    startHomes();
    if (m_links != nullptr && m_parts.cdc != nullptr && m_parts.tenants != nullptr) {
        m_streams = new cdc::StreamCoordinator(
                m_self,
                cdc::StreamCoordinator::Parts{ *m_backend, *m_links, *m_pubsub, *m_parts.cdc,
                                               *m_parts.tenants, m_parts.refreshTenant,
                                               m_parts.metrics },
                this);
        connect(this, &ClusterNode::configChanged, m_streams,
                [this](const cluster::ConfigSnapshot &snapshot) {
                    m_streams->setRegionMapping(parseClusterSettings(snapshot).regionMapping);
                });
        m_parts.cdc->attachCluster(m_streams, m_self.id);
    }
    m_backend->start(m_self);
    m_loadTimer.start();
    Q_EMIT started(m_self);
}

std::optional<QString> ClusterNode::startLinks(const QString &advertiseHost)
{
    const ClusterConfig &config = m_settings.cluster;
    cluster::links::LinkSettings linkSettings;
    linkSettings.nodeId = m_self.id;
    linkSettings.secret = config.secret;
    linkSettings.linksPerPeer = config.linksPerPeer;
    if (config.usesLinkTls()) {
        Result<QSslConfiguration> tls = cluster::links::loadLinkTls(config.linkTls);
        if (!tls) {
            return QStringLiteral("node links: %1").arg(tls.error().message);
        }
        const QSslCertificate own = tls.value().localCertificate();
        if (!cluster::links::certificateNamesNode(own, m_self.id)) {
            return QStringLiteral("node links: CLUSTER_TLS_CERT_FILE names %1, not this node's "
                                  "name %2 (NODE_NAME): peers would refuse this node")
                    .arg(cluster::links::certificateNames(own).join(QStringLiteral(", ")),
                         m_self.id);
        }
        linkSettings.tls = std::move(tls).value();
    }
    if (const std::optional<QString> problem = cluster::links::validateLinkSettings(linkSettings)) {
        return QStringLiteral("node links: %1").arg(*problem);
    }
    m_links = new cluster::links::NodeLinks(linkSettings, this);
    const Result<quint16> port = m_links->listen(m_settings.listenAddress, config.linkPort);
    if (!port) {
        return QStringLiteral("node links cannot listen on port %1: %2")
                .arg(config.linkPort)
                .arg(port.error().message);
    }
    m_self.linkAddress = hostPort(advertiseHost, *port);
    return std::nullopt;
}

void ClusterNode::connectBackend()
{
    connect(m_backend.get(), &cluster::ClusterBackend::membersChanged, this,
            &ClusterNode::onMembersChanged);
    connect(m_backend.get(), &cluster::ClusterBackend::stopped, this, &ClusterNode::stopped);
    connect(m_backend.get(), &cluster::ClusterBackend::configChanged, this,
            &ClusterNode::configChanged);
    m_parts.configAccess.setBackend(m_backend.get());
    connect(m_backend.get(), &cluster::ClusterBackend::backendAvailable, this, [this] {
        {
            const QMutexLocker lock(&m_snapshotMutex);
            // The analyzer loses the captured `this` here (false positive).
            // NOLINTNEXTLINE(clang-analyzer-core.NullDereference)
            m_available = true;
        }
        // Keys deleted while this node could not see them are gone from this snapshot.
        Q_EMIT configChanged(m_backend->configSnapshot());
        if (m_settings.cluster.usesEtcd()) {
            qCInfo(lcNode) << "cluster backend available";
        }
    });
    connect(m_backend.get(), &cluster::ClusterBackend::backendUnavailable, this,
            [this](const QString &reason) {
                {
                    const QMutexLocker lock(&m_snapshotMutex);
                    // NOLINTNEXTLINE(clang-analyzer-core.NullDereference): as above
                    m_available = false;
                }
                // Degraded, not down: clients stay connected, configuration stays as last known.
                qCWarning(lcNode).noquote()
                        << "cluster backend unavailable, serving on with the last known state:"
                        << reason;
            });
}

void ClusterNode::startHomes()
{
    if (m_pubsub == nullptr || m_parts.homes == nullptr || m_parts.history == nullptr) {
        return;
    }
    pubsub::TenantHomes *homes = m_parts.homes;
    homes->setSelf(m_self.id);
    const QString prefix = cdc::StreamCoordinator::resourceOf({});
    const auto tenantOf = [prefix](const QString &resource) {
        return resource.mid(prefix.size()).toUtf8();
    };
    connect(m_backend.get(), &cluster::ClusterBackend::claimChanged, this,
            [homes, prefix, tenantOf](const QString &resource,
                                      const std::optional<cluster::Claim> &claim) {
                if (resource.startsWith(prefix)) {
                    homes->setHome(tenantOf(resource), claim ? claim->owner : QString());
                }
            });
    // Cut off past the lease: another node may be the home already; stop numbering here.
    connect(m_backend.get(), &cluster::ClusterBackend::claimLost, this,
            [homes, prefix, tenantOf](const QString &resource) {
                if (resource.startsWith(prefix)) {
                    homes->setHome(tenantOf(resource), QString());
                }
            });
    connect(m_links, &cluster::links::NodeLinks::peerConnected, this,
            [homes](const QString &nodeId) { homes->setConnected(nodeId, true); });
    connect(m_links, &cluster::links::NodeLinks::peerDisconnected, this,
            [homes](const QString &nodeId) { homes->setConnected(nodeId, false); });
    m_historyExchange = new pubsub::HistoryExchange(
            m_self.id, *m_links, *m_parts.history, m_parts.historySettings, m_parts.counting, this);
    m_pubsub->setHistoryExchange(m_historyExchange);
    m_pubsub->setHomes(homes);
    m_pubsub->setHomePublisher(m_parts.publishAsHome);
}

void ClusterNode::startDataPlane()
{
    pubsub::ClusterPubSubSettings pubsubSettings;
    pubsubSettings.nodeId = m_self.id;
    pubsubSettings.region = m_self.region;
    m_pubsub = new pubsub::ClusterPubSub(pubsubSettings, m_parts.localPubSub, *m_links,
                                         m_parts.counting, this);
    m_presenceReplicator = new presence::PresenceReplicator(*m_links, {}, this);
    // The store lives on the main thread: wire it from there (it reads the store's state).
    presence::PresenceStore *store = &m_parts.presence;
    presence::PresenceReplicator *replicator = m_presenceReplicator;
    runtime::post(store,
                  [store, replicator] { presence::connectReplication(*store, *replicator); });
    m_localTenantsTimer.start();
    reconcileLocalTenants();
}

void ClusterNode::reconcileLocalTenants()
{
    // Arrivals are announced at once by the joins (NodePubSub::awaitTenantReachable); this
    // comparison catches departures, and corrects an arrival announced just as the user left.
    const tenants::TenantUsageRegistry &usage = m_parts.usage;
    const auto present = [&usage] {
        QSet<QByteArray> now;
        for (const auto &[tenant, users] : usage.connectedUsers()) {
            if (users > 0) {
                now.insert(tenant);
            }
        }
        return now;
    };
    m_pubsub->reconcileLocalTenants(present);
    if (m_streams != nullptr) {
        m_streams->setLocalTenants(present()); // the homes of tenants without a database
    }
}

void ClusterNode::stop()
{
    m_loadTimer.stop();
    m_localTenantsTimer.stop();
    if (m_parts.homes != nullptr) {
        m_parts.homes->clear();
    }
    if (m_pubsub != nullptr) {
        m_pubsub->stop();
    }
    if (m_links != nullptr) {
        m_links->setPeers({});
    }
    m_parts.configAccess.setBackend(nullptr);
    if (m_backend) {
        m_backend->stop();
    } else {
        Q_EMIT stopped();
    }
}

QList<cluster::NodeInfo> ClusterNode::membersSnapshot() const
{
    const QMutexLocker lock(&m_snapshotMutex);
    return m_membersSnapshot;
}

bool ClusterNode::isAvailable() const
{
    const QMutexLocker lock(&m_snapshotMutex);
    return m_available;
}

void ClusterNode::onMembersChanged(const QList<cluster::NodeInfo> &members)
{
    QSet<QString> before;
    QList<cluster::NodeInfo> previous;
    {
        const QMutexLocker lock(&m_snapshotMutex);
        previous = m_membersSnapshot;
        m_membersSnapshot = members;
    }
    for (const cluster::NodeInfo &node : std::as_const(previous)) {
        before.insert(node.id);
    }
    QSet<QString> now;
    for (const cluster::NodeInfo &node : members) {
        now.insert(node.id);
        if (!before.contains(node.id) && node.id != m_self.id) {
            qCInfo(lcNode).noquote() << QStringLiteral("node %1 joined (region %2, links %3)")
                                                .arg(node.id, node.region, node.linkAddress);
        }
    }
    for (const QString &id : std::as_const(before)) {
        if (!now.contains(id)) {
            qCInfo(lcNode).noquote() << "node" << id << "left the cluster";
        }
    }
    m_backendMembers = members;
    applyDataPlaneMembers();
}

void ClusterNode::applyDataPlaneMembers()
{
    QList<cluster::NodeInfo> effective = effectiveMembers();
    std::sort(effective.begin(), effective.end(),
              [](const cluster::NodeInfo &a, const cluster::NodeInfo &b) { return a.id < b.id; });
    m_dataPlaneMembers = effective;
    if (m_links != nullptr) {
        followMembers(effective);
    }
    Q_EMIT membersChanged(effective);
}

QList<cluster::NodeInfo> ClusterNode::effectiveMembers()
{
    // The data plane (links, fan-out, presence, streams, counters) follows the membership, with
    // one exception: a node whose record vanished while its links are still up is kept for a
    // grace period. That is what an etcd outage looks like when it ends: the watch replays the
    // deletions of the records whose leases expired meanwhile a moment before their nodes
    // register again, and dropping them would make their clients' presences leave and rejoin
    // and the stream owners forget their subscribers. A node that died has no links up: it goes
    // at once.
    QList<cluster::NodeInfo> effective = m_backendMembers;
    QSet<QString> ids;
    for (const cluster::NodeInfo &node : std::as_const(effective)) {
        ids.insert(node.id);
    }
    if (!ids.contains(m_self.id)) {
        effective.append(m_self); // this node is alive, whatever its record says right now
        ids.insert(m_self.id);
    }
    const qint64 nowMs = m_uptime.elapsed();
    const qint64 graceMs = qMax<qint64>(3000, qint64(m_settings.cluster.leaseTtlSeconds) * 1000);
    bool holding = false;
    for (const cluster::NodeInfo &node : std::as_const(m_dataPlaneMembers)) {
        if (ids.contains(node.id)) {
            continue;
        }
        if (m_links != nullptr && m_links->isConnected(node.id)) {
            const qint64 since = m_departedAtMs.value(node.id, -1);
            if (since < 0) {
                m_departedAtMs.insert(node.id, nowMs);
                qCInfo(lcNode).noquote()
                        << "node" << node.id << "is gone from the membership but its links are up:"
                        << "keeping it for up to" << graceMs << "ms";
            }
            if (since < 0 || nowMs - since < graceMs) {
                effective.append(node);
                ids.insert(node.id);
                holding = true;
                continue;
            }
        }
        m_departedAtMs.remove(node.id);
    }
    for (const cluster::NodeInfo &node : std::as_const(m_backendMembers)) {
        m_departedAtMs.remove(node.id); // back in the membership (or never gone)
    }
    if (holding) {
        m_graceTimer.start(500);
    }
    return effective;
}

void ClusterNode::followMembers(const QList<cluster::NodeInfo> &members)
{
    QList<cluster::links::PeerAddress> peers;
    QList<pubsub::ClusterPeer> pubsubPeers;
    QStringList memberIds;
    for (const cluster::NodeInfo &node : members) {
        memberIds.append(node.id);
        if (node.id == m_self.id) {
            continue;
        }
        pubsubPeers.append(pubsub::ClusterPeer{ node.id, node.region });
        if (const auto address = peerAddress(node)) {
            peers.append(*address);
        } else {
            qCWarning(lcNode).noquote()
                    << "node" << node.id << "publishes no usable link address:" << node.linkAddress;
        }
    }
    m_links->setPeers(peers);
    m_pubsub->setPeers(pubsubPeers);
    m_presenceReplicator->setMembers(memberIds);
    if (m_streams != nullptr) {
        m_streams->setMembers(members);
    }
}

std::optional<double> ClusterNode::currentLoad() const
{
    const qint64 uptimeMs = m_uptime.isValid() ? m_uptime.elapsed() : 0;
    cluster::placement::PlacementSettings placement;
    placement.uptimeThreshold = std::chrono::seconds(m_settings.cluster.loadMinUptimeSeconds);
    return cluster::placement::reportedLoad(
            uptimeMs, cluster::placement::readLoadAverage5(m_settings.cluster.loadAverageFile),
            placement);
}

void ClusterNode::publishLoad()
{
    // A young node has no meaningful 5-minute average yet: it reports "not enough data" and
    // the placement falls back to consistent hashing for candidate pairs that include it.
    const std::optional<double> load = currentLoad();
    if (load == m_self.load) {
        return;
    }
    m_self.load = load;
    if (m_backend) {
        m_backend->updateSelf(m_self);
    }
}

} // namespace rt::node
