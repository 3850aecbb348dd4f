#include "server/node/cluster_counters.h"

#include "server/cluster/counters/logging.h"
#include "server/cluster/links/node_links.h"
#include "server/limits/rate_counter_registry.h"
#include "server/node/cluster_node.h"
#include "server/tenants/tenant_directory.h"

namespace rt::node {

namespace counters = cluster::counters;

namespace {

// All counters frames to a peer share one ordering key, so a sync and the updates around it
// arrive in the order they were sent.
const QString OrderingKey = QStringLiteral("cluster-counters");

} // namespace

ClusterCounters::ClusterCounters(ClusterNode &node, Parts parts)
    : ClusterCounters(node, parts, Settings{})
{ }

ClusterCounters::ClusterCounters(ClusterNode &node, Parts parts, Settings settings)
    : QObject(&node),
      m_node(node),
      m_parts(parts),
      m_settings(settings),
      m_timer(this)
{
    m_timer.setInterval(m_settings.reportIntervalMs);
    connect(&m_timer, &QTimer::timeout, this, &ClusterCounters::report);
    // Same thread as the node once both have moved: these calls are direct.
    connect(&node, &ClusterNode::started, this, &ClusterCounters::onStarted);
    connect(&node, &ClusterNode::stopped, this, &ClusterCounters::onStopped);
    connect(&node, &ClusterNode::membersChanged, this, &ClusterCounters::onMembersChanged);
}

ClusterCounters::~ClusterCounters()
{
    m_parts.board.setCollecting(false);
}

void ClusterCounters::onStarted(const cluster::NodeInfo &self)
{
    m_selfId = self.id;
    m_links = m_node.links();
    if (m_links != nullptr) {
        connect(m_links, &cluster::links::NodeLinks::frameReceived, this,
                &ClusterCounters::onFrame);
        connect(m_links, &cluster::links::NodeLinks::peerConnected, this,
                &ClusterCounters::onPeerConnected);
        m_parts.board.setCollecting(true);
    }
    m_sinceSync.start();
    m_timer.start();
    report();
}

void ClusterCounters::onStopped()
{
    m_timer.stop();
    m_parts.board.setCollecting(false);
    if (m_links != nullptr) {
        disconnect(m_links, nullptr, this, nullptr);
        m_links = nullptr;
    }
}

void ClusterCounters::report()
{
    const counters::UsersByTenant local = localUsers();
    if (m_links != nullptr) {
        if (const auto update = m_report.update(local, m_parts.board.takeLocalRates())) {
            sendToPeers(counters::KindUpdate, *update);
        }
        if (m_sinceSync.hasExpired(m_settings.syncIntervalMs)) {
            m_sinceSync.restart();
            sendToPeers(counters::KindSync, m_report.sync());
        }
    }
    if (local != m_lastLocal || m_parts.board.usersView().isEmpty()) {
        m_lastLocal = local;
        publishView(local);
    }
}

void ClusterCounters::onPeerConnected(const QString &nodeId)
{
    if (m_links != nullptr) {
        m_links->send(nodeId, counters::KindSync, counters::encode(m_report.sync()), OrderingKey);
    }
}

void ClusterCounters::onFrame(const QString &fromNodeId, quint8 kind, const QByteArray &payload)
{
    if (!counters::isCountersKind(kind) || fromNodeId == m_selfId
        || m_departed.contains(fromNodeId)) {
        return;
    }
    const auto message = counters::decode(payload);
    if (!message) {
        qCWarning(counters::lcCounters).noquote()
                << "ignoring a counters frame from" << fromNodeId << ":" << message.error().message;
        return;
    }
    m_remote.apply(fromNodeId, *message, kind == counters::KindSync);
    for (const counters::TenantFigures &tenant : message->tenants) {
        for (const counters::RateFigure &rate : tenant.rates) {
            if (!counters::isClusterWide(rate.kind)) {
                continue;
            }
            // Only counters this node already has: one it creates later starts from its own
            // events and has the peers' from their next report on.
            const limits::RateCounterKey key{ QString::fromUtf8(tenant.tenantId), rate.kind };
            if (const auto counter = m_parts.rates.find(key)) {
                counter->addRemote(rate.count);
            }
        }
    }
    applyRemoteTotals();
}

void ClusterCounters::onMembersChanged(const QList<cluster::NodeInfo> &members)
{
    QSet<QString> now;
    for (const cluster::NodeInfo &node : members) {
        now.insert(node.id);
        m_departed.remove(node.id);
    }
    for (const QString &id : std::as_const(m_members)) {
        if (!now.contains(id) && id != m_selfId) {
            m_departed.insert(id);
            if (m_remote.dropPeer(id)) {
                qCDebug(counters::lcCounters).noquote()
                        << "dropped the figures of" << id << "(left)";
            }
        }
    }
    m_members = std::move(now);
    applyRemoteTotals();
}

void ClusterCounters::sendToPeers(quint8 kind, const counters::Message &message)
{
    const QStringList peers = m_links->connectedPeers();
    if (peers.isEmpty()) {
        return;
    }
    const QByteArray payload = counters::encode(message);
    for (const QString &peer : peers) {
        m_links->send(peer, kind, payload, OrderingKey);
    }
}

void ClusterCounters::applyRemoteTotals()
{
    const QHash<QByteArray, int> changed = m_remote.takeChangedTotals();
    if (changed.isEmpty()) {
        return;
    }
    for (auto it = changed.cbegin(); it != changed.cend(); ++it) {
        m_parts.usage.usage(it.key())->remoteUsers.store(it.value(), std::memory_order_relaxed);
    }
    publishView(m_lastLocal);
}

void ClusterCounters::publishView(const counters::UsersByTenant &local)
{
    m_parts.board.setUsersView(counters::usersView(m_selfId, local, m_remote.usersByNode()));
}

counters::UsersByTenant ClusterCounters::localUsers() const
{
    counters::UsersByTenant users;
    for (const auto &[tenant, count] : m_parts.usage.connectedUsers()) {
        users.insert(tenant, count);
    }
    return users;
}

} // namespace rt::node
