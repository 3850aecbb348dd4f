#include "server/node/cluster_stats.h"

#include "server/cdc/cdc_service.h"
#include "server/cdc/stream_coordinator.h"
#include "server/cluster/cluster_backend.h"
#include "server/cluster/counters/counters_state.h"
#include "server/cluster/links/node_links.h"
#include "server/node/cluster_node.h"
#include "server/node/logging.h"
#include "server/node/node_config_access.h"
#include "server/pubsub/cluster_pubsub.h"
#include "server/runtime/worker_pool.h"
#include "server/tenants/tenant_directory.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>

#include <algorithm>

namespace rt::node {

namespace stats = cluster::stats;

namespace {

// All node-stats frames to a peer share one ordering key: a newer report never overtakes an older one.
const QString OrderingKey = QStringLiteral("cluster-stats");

QString streamState(const QByteArray &metadata)
{
    const QString state =
            QJsonDocument::fromJson(metadata).object().value(QLatin1String("state")).toString();
    return state == QLatin1String("ready") ? state : QStringLiteral("starting");
}

} // namespace

ClusterStats::ClusterStats(ClusterNode &node, Parts parts)
    : ClusterStats(node, std::move(parts), Settings{})
{ }

ClusterStats::ClusterStats(ClusterNode &node, Parts parts, Settings settings)
    : QObject(&node),
      m_node(node),
      m_parts(std::move(parts)),
      m_settings(settings),
      m_mailbox(std::make_shared<runtime::Mailbox>(this)),
      m_reportTimer(this),
      m_loadTimer(this),
      m_loadHistory(settings.loadHistorySamples),
      m_memberHistory(settings.historySamples)
{
    m_clock.start();
    m_reportTimer.setInterval(m_settings.reportIntervalMs);
    connect(&m_reportTimer, &QTimer::timeout, this, &ClusterStats::report);
    m_loadTimer.setInterval(m_settings.loadSampleIntervalMs);
    connect(&m_loadTimer, &QTimer::timeout, this, &ClusterStats::sampleLoad);
    // Same thread as the node once both have moved: these calls are direct.
    connect(&node, &ClusterNode::started, this, &ClusterStats::onStarted);
    connect(&node, &ClusterNode::stopped, this, &ClusterStats::onStopped);
    connect(&node, &ClusterNode::membersChanged, this, &ClusterStats::onMembersChanged);
}

ClusterStats::~ClusterStats()
{
    m_mailbox->close();
}

void ClusterStats::onStarted(const cluster::NodeInfo &self)
{
    m_selfId = self.id;
    m_links = m_node.links();
    if (m_links != nullptr) {
        connect(m_links, &cluster::links::NodeLinks::frameReceived, this, &ClusterStats::onFrame);
        connect(m_links, &cluster::links::NodeLinks::peerConnected, this,
                &ClusterStats::sendHistory);
    }
    m_reportTimer.start();
    m_loadTimer.start();
    report();
    sampleLoad();
}

void ClusterStats::onStopped()
{
    m_reportTimer.stop();
    m_loadTimer.stop();
    if (m_links != nullptr) {
        disconnect(m_links, nullptr, this, nullptr);
        m_links = nullptr;
    }
}

void ClusterStats::onFrame(const QString &fromNodeId, quint8 kind, const QByteArray &payload)
{
    if ((kind != stats::KindNodeStats && kind != stats::KindNodeHistory)
        || fromNodeId == m_selfId) {
        return;
    }
    // A peer's hour comes when the link comes up, which can be before this node has read the
    // membership that names the peer: it is kept until a membership without the peer (links
    // only carry frames of authenticated cluster nodes).
    if (kind == stats::KindNodeHistory) {
        Result<QList<api::NodeSample>> samples = stats::decodeHistory(payload);
        if (!samples) {
            qCWarning(lcNode).noquote() << "ignoring a node history frame from" << fromNodeId << ":"
                                        << samples.error().message;
            return;
        }
        m_memberHistory.merge(fromNodeId, *samples);
        return;
    }
    if (!m_members.contains(fromNodeId)) {
        return;
    }
    Result<stats::NodeStats> figures = stats::decode(payload);
    if (!figures) {
        qCWarning(lcNode).noquote() << "ignoring a node stats frame from" << fromNodeId << ":"
                                    << figures.error().message;
        return;
    }
    m_remote.insert(fromNodeId, *figures);
}

void ClusterStats::onMembersChanged(const QList<cluster::NodeInfo> &members)
{
    QSet<QString> now;
    for (const cluster::NodeInfo &node : members) {
        now.insert(node.id);
    }
    for (auto it = m_remote.begin(); it != m_remote.end();) {
        it = now.contains(it.key()) ? std::next(it) : m_remote.erase(it);
    }
    // A peer whose link came up before it was a member on either side may have dropped the hour
    // sent then: it gets it again now (merging what it already holds changes nothing).
    if (m_links != nullptr) {
        for (const QString &id : std::as_const(now)) {
            if (!m_members.contains(id) && id != m_selfId && m_links->isConnected(id)) {
                sendHistory(id);
            }
        }
    }
    m_members = std::move(now);
    QSet<QString> kept = m_members;
    kept.insert(m_selfId);
    if (m_links != nullptr) {
        for (const QString &peer : m_links->connectedPeers()) {
            kept.insert(peer);
        }
    }
    m_memberHistory.retainOnly(kept);
    // A member that just joined shows its load at once, not at the next sample.
    const qint64 nowMs = QDateTime::currentMSecsSinceEpoch();
    for (const cluster::NodeInfo &node : members) {
        m_loadHistory.start(nowMs, node);
    }
}

void ClusterStats::report()
{
    const qint64 nowMs = m_clock.elapsed();
    const LocalActivity activity = m_parts.localActivity();
    stats::NodeStats local;
    local.available = m_node.isAvailable();
    local.connections = activity.connections;
    local.channels = activity.channels;
    measureProcess(activity, local);
    measureTenantRates(nowMs, activity, local);
    measureLinkRates(nowMs, local);
    m_local = local;
    sendLocalStats();
}

void ClusterStats::measureTenantRates(qint64 nowMs, const LocalActivity &activity,
                                      stats::NodeStats &local)
{
    const QHash<QByteArray, double> in = m_messagesIn.update(nowMs, activity.messagesIn);
    const QHash<QByteArray, double> out = m_messagesOut.update(nowMs, activity.messagesOut);
    QSet<QByteArray> tenants;
    for (auto it = in.cbegin(); it != in.cend(); ++it) {
        local.messagesInPerSecond += it.value();
        if (it.value() > 0) {
            tenants.insert(it.key());
        }
    }
    for (auto it = out.cbegin(); it != out.cend(); ++it) {
        local.messagesOutPerSecond += it.value();
        if (it.value() > 0) {
            tenants.insert(it.key());
        }
    }
    for (const QByteArray &tenant : std::as_const(tenants)) {
        local.tenants.append(stats::TenantRate{ tenant, in.value(tenant), out.value(tenant) });
    }
    std::sort(local.tenants.begin(), local.tenants.end(),
              [](const stats::TenantRate &a, const stats::TenantRate &b) {
                  return a.tenant < b.tenant;
              });
}

void ClusterStats::measureLinkRates(qint64 nowMs, stats::NodeStats &local)
{
    const pubsub::ClusterPubSub *clusterPubSub = m_node.clusterPubSub();
    if (clusterPubSub == nullptr) {
        return;
    }
    const pubsub::ClusterPubSubStats figures = clusterPubSub->stats();
    stats::RateMeter::Totals messages;
    stats::RateMeter::Totals bytes;
    for (auto it = figures.peers.cbegin(); it != figures.peers.cend(); ++it) {
        messages.insert(it.key().toUtf8(), it.value().envelopesOut);
        bytes.insert(it.key().toUtf8(), it.value().bytesOut);
    }
    const QHash<QByteArray, double> messageRates = m_linkMessages.update(nowMs, messages);
    const QHash<QByteArray, double> byteRates = m_linkBytes.update(nowMs, bytes);
    for (auto it = messageRates.cbegin(); it != messageRates.cend(); ++it) {
        local.links.append(stats::LinkRate{ QString::fromUtf8(it.key()), it.value(),
                                            byteRates.value(it.key()) });
    }
    std::sort(local.links.begin(), local.links.end(),
              [](const stats::LinkRate &a, const stats::LinkRate &b) { return a.peer < b.peer; });
}

void ClusterStats::measureProcess(const LocalActivity &activity, stats::NodeStats &local)
{
    const qint64 wallNs = runtime::monotonicNs();
    local.cpuCores = m_processCpu.update(wallNs, activity.processCpuNs);
    local.cpuCount = runtime::availableCpuCount();
    local.residentBytes = activity.residentBytes;
    for (std::size_t i = 0; i < std::size_t(activity.workers.size()); ++i) {
        const WorkerActivity &worker = activity.workers[qsizetype(i)];
        if (i == m_workerCpu.size()) {
            m_workerCpu.emplace_back(worker.startedNs);
        }
        local.workers.append(stats::WorkerLoad{ m_workerCpu[i].update(wallNs, worker.cpuNs),
                                                double(worker.loopLagNs) / 1e6 });
    }
}

void ClusterStats::sendHistory(const QString &peer)
{
    // Its own hour only: what this node holds of others, they send themselves.
    m_links->send(peer, stats::KindNodeHistory,
                  stats::encodeHistory(m_memberHistory.samples(m_selfId)), OrderingKey);
}

void ClusterStats::sendLocalStats()
{
    if (m_links == nullptr) {
        return;
    }
    const QStringList peers = m_links->connectedPeers();
    if (!peers.isEmpty()) {
        const QByteArray payload = stats::encode(m_local);
        for (const QString &peer : peers) {
            m_links->send(peer, stats::KindNodeStats, payload, OrderingKey);
        }
    }
}

void ClusterStats::sampleLoad()
{
    const qint64 nowMs = QDateTime::currentMSecsSinceEpoch();
    const QList<cluster::NodeInfo> current = members();
    m_loadHistory.record(nowMs, current);
    sampleHistory(nowMs, current);
}

void ClusterStats::sampleHistory(qint64 atMs, const QList<cluster::NodeInfo> &members)
{
    for (const cluster::NodeInfo &member : members) {
        if (member.id == m_selfId) {
            m_memberHistory.record(member.id, stats::sampleOf(atMs, m_local, member.load));
        } else if (const auto it = m_remote.constFind(member.id); it != m_remote.constEnd()) {
            m_memberHistory.record(member.id, stats::sampleOf(atMs, *it, member.load));
        }
    }
}

QByteArray ClusterStats::historyJson() const
{
    return QJsonDocument(m_memberHistory
                                 .history(QDateTime::currentMSecsSinceEpoch(), m_selfId,
                                          m_settings.loadSampleIntervalMs)
                                 .toJson())
            .toJson(QJsonDocument::Compact);
}

QList<cluster::NodeInfo> ClusterStats::members() const
{
    QList<cluster::NodeInfo> members;
    if (const cluster::ClusterBackend *backend = m_node.backend()) {
        members = backend->members();
    }
    // This node's own record as it publishes it (also before the backend lists it).
    const cluster::NodeInfo &self = m_node.self();
    const auto it = std::find_if(members.begin(), members.end(),
                                 [&](const cluster::NodeInfo &node) { return node.id == self.id; });
    if (it == members.end()) {
        if (!self.id.isEmpty()) {
            members.append(self);
        }
    } else {
        *it = self;
    }
    return members;
}

QHash<QByteArray, stats::StreamPlacement> ClusterStats::streams() const
{
    QHash<QByteArray, stats::StreamPlacement> streams;
    const cluster::ClusterBackend *backend = m_node.backend();
    if (m_links != nullptr && backend != nullptr && m_parts.tenants != nullptr) {
        // Every node sees every claim: look up each known tenant's.
        for (const tenants::TenantPtr &tenant : m_parts.tenants->all()) {
            if (const std::optional<cluster::Claim> claim =
                        backend->claimOf(cdc::StreamCoordinator::resourceOf(tenant->externalId))) {
                streams.insert(
                        tenant->externalId,
                        stats::StreamPlacement{ claim->owner, streamState(claim->metadata) });
            }
        }
    } else if (m_parts.cdc != nullptr) {
        for (const QByteArray &tenant : m_parts.cdc->ownedStreams()) {
            streams.insert(tenant,
                           stats::StreamPlacement{ m_selfId,
                                                   m_parts.cdc->isConnected(tenant)
                                                           ? QStringLiteral("ready")
                                                           : QStringLiteral("starting") });
        }
    }
    return streams;
}

QHash<QByteArray, QHash<QString, int>> ClusterStats::users() const
{
    QHash<QByteArray, QHash<QString, int>> users;
    const QJsonObject view = m_parts.counters.usersView();
    for (auto tenant = view.constBegin(); tenant != view.constEnd(); ++tenant) {
        QHash<QString, int> &byNode = users[tenant.key().toUtf8()];
        const QJsonObject nodes = tenant.value().toObject();
        for (auto node = nodes.constBegin(); node != nodes.constEnd(); ++node) {
            byNode.insert(node.key(), node.value().toInt());
        }
    }
    return users;
}

QByteArray ClusterStats::snapshotJson()
{
    const qint64 nowMs = m_clock.elapsed();
    if (m_jsonBuiltMs >= 0 && nowMs - m_jsonBuiltMs < m_settings.snapshotReuseMs) {
        return m_json;
    }
    stats::SnapshotInputs inputs;
    inputs.takenAtMs = QDateTime::currentMSecsSinceEpoch();
    inputs.self = m_node.self();
    inputs.available = m_node.isAvailable();
    inputs.members = members();
    inputs.stats = m_remote;
    inputs.stats.insert(inputs.self.id, m_local);
    inputs.users = users();
    inputs.streams = streams();
    inputs.config = m_parts.config.snapshot();
    inputs.configExpiries = m_parts.config.expiries();
    m_json = QJsonDocument(stats::buildSnapshot(inputs, m_loadHistory).toJson())
                     .toJson(QJsonDocument::Compact);
    m_jsonBuiltMs = nowMs;
    return m_json;
}

} // namespace rt::node
