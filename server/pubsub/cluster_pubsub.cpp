#include "server/pubsub/cluster_pubsub.h"

#include "server/cluster/links/node_links.h"
#include "server/pubsub/local_pubsub.h"
#include "server/pubsub/logging.h"
#include "server/runtime/post.h"

#include <QMutexLocker>
#include <QRandomGenerator>
#include <QTimer>

#include <vector>

namespace rt::pubsub {

namespace {

// Interest frames share one ordering key, so a peer sees our updates and syncs in the order
// we numbered them (the links keep order per key).
const QString InterestOrderingKey = QStringLiteral("\x1finterest");

quint64 newEpoch()
{
    quint64 epoch = 0;
    while (epoch == 0) {
        epoch = QRandomGenerator::system()->generate64();
    }
    return epoch;
}

} // namespace

// The hand-off from publishers (any thread) to the cluster thread: a mutex-guarded batch and
// at most one posted drain at a time, so a burst of publishes costs one event on the cluster
// thread, not one per message. Lives on the cluster thread (a child of ClusterPubSub); its
// post methods are called from any thread.
class ClusterPubSub::Outbox : public QObject
{
public:
    Outbox(const ClusterPubSubSettings &settings, std::function<void()> drain, QObject *parent)
        : QObject(parent),
          m_maxEnvelopes(settings.maxPendingEnvelopes),
          m_maxBytes(settings.maxPendingBytes),
          m_drain(std::move(drain))
    { }

    void postEnvelope(Pending pending)
    {
        const QMutexLocker lock(&m_mutex);
        if (m_stopped) {
            return;
        }
        const qint64 size = pending.envelope.size();
        if (static_cast<qsizetype>(m_envelopes.size()) >= m_maxEnvelopes
            || m_bytes + size > m_maxBytes) {
            ++m_dropped;
            return;
        }
        m_bytes += size;
        m_envelopes.push_back(std::move(pending));
        scheduleLocked();
    }

    void postTenant(const QByteArray &tenant, bool present)
    {
        const QMutexLocker lock(&m_mutex);
        if (m_stopped) {
            return;
        }
        m_tenants.emplace_back(tenant, present);
        scheduleLocked();
    }

    void stop()
    {
        const QMutexLocker lock(&m_mutex);
        m_stopped = true;
        m_envelopes.clear();
        m_tenants.clear();
        m_bytes = 0;
    }

    // Cluster thread: what was posted since the last take.
    void take(std::vector<Pending> &envelopes, std::vector<std::pair<QByteArray, bool>> &tenants)
    {
        const QMutexLocker lock(&m_mutex);
        envelopes.swap(m_envelopes);
        tenants.swap(m_tenants);
        m_bytes = 0;
        m_scheduled = false;
    }

    quint64 dropped() const
    {
        const QMutexLocker lock(&m_mutex);
        return m_dropped;
    }

private:
    void scheduleLocked()
    {
        if (m_scheduled) {
            return;
        }
        m_scheduled = true;
        runtime::post(this, m_drain);
    }

    const qsizetype m_maxEnvelopes;
    const qint64 m_maxBytes;
    const std::function<void()> m_drain;
    mutable QMutex m_mutex;
    std::vector<Pending> m_envelopes; // guarded by m_mutex
    std::vector<std::pair<QByteArray, bool>> m_tenants; // guarded by m_mutex
    qint64 m_bytes = 0; // guarded by m_mutex
    quint64 m_dropped = 0; // guarded by m_mutex
    bool m_scheduled = false; // a drain is posted and has not taken the batch yet
    bool m_stopped = false;
};

ClusterPubSub::ClusterPubSub(ClusterPubSubSettings settings, LocalPubSub &local,
                             cluster::links::NodeLinks &links, CountingResolver resolver,
                             QObject *parent)
    : QObject(parent),
      m_settings(std::move(settings)),
      m_local(local),
      m_links(links),
      m_resolver(std::move(resolver)),
      m_outbox(new Outbox(
              m_settings, [this] { drain(); }, this)),
      m_checkTimer(new QTimer(this)),
      m_interest(m_settings.nodeId),
      m_localInterest(newEpoch())
{
    m_clock.start();
    connect(&m_links, &cluster::links::NodeLinks::frameReceived, this, &ClusterPubSub::onFrame);
    connect(&m_links, &cluster::links::NodeLinks::peerConnected, this,
            &ClusterPubSub::onPeerConnected);
    connect(m_checkTimer, &QTimer::timeout, this, &ClusterPubSub::onInterestCheck);
    m_checkTimer->start(m_settings.interestCheckInterval);
}

ClusterPubSub::~ClusterPubSub() = default;

void ClusterPubSub::publish(const OutboundMessagePtr &message) const
{
    m_published.fetch_add(1, std::memory_order_relaxed);
    m_local.publish(message);
    if (message->audience() == Audience::Members) {
        // Member ids are this node's: the message has no meaning elsewhere.
        m_keptLocal.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    if (m_peerCount.load(std::memory_order_relaxed) == 0) {
        return; // a cluster of one (or no members known yet): nothing to encode
    }
    auto envelope = encodeEnvelope(*message);
    if (!envelope.ok()) {
        return; // only Members messages are not forwardable, handled above
    }
    const TopicKey &topic = message->topic();
    // Encoded here, once, on the publisher's thread: the cluster thread only routes bytes.
    m_outbox->postEnvelope(
            Pending{ topic.tenant(), QString::fromUtf8(topic.id()), std::move(envelope).value() });
}

void ClusterPubSub::publishLocal(const OutboundMessagePtr &message) const
{
    m_local.publish(message);
}

void ClusterPubSub::noteLocalTenant(const QByteArray &tenantId, bool present)
{
    m_outbox->postTenant(tenantId, present);
}

void ClusterPubSub::stop()
{
    m_outbox->stop();
}

void ClusterPubSub::setPeers(const QList<ClusterPeer> &peers)
{
    const QStringList added = m_interest.setPeers(peers);
    m_peerCount.store(static_cast<int>(m_interest.peerIds().size()), std::memory_order_relaxed);
    {
        const QMutexLocker lock(&m_statsMutex);
        for (auto it = m_stats.peers.begin(); it != m_stats.peers.end();) {
            if (m_interest.contains(it.key())) {
                ++it;
            } else {
                it = m_stats.peers.erase(it);
            }
        }
        for (const QString &nodeId : m_interest.peerIds()) {
            refreshPeerFigures(nodeId);
        }
    }
    // A peer whose links were up before it became a member here missed its peerConnected.
    for (const QString &nodeId : added) {
        if (m_links.isConnected(nodeId)) {
            onPeerConnected(nodeId);
        }
    }
}

ClusterPubSubStats ClusterPubSub::stats() const
{
    ClusterPubSubStats stats;
    {
        const QMutexLocker lock(&m_statsMutex);
        stats = m_stats;
    }
    stats.published = m_published.load(std::memory_order_relaxed);
    stats.keptLocal = m_keptLocal.load(std::memory_order_relaxed);
    stats.handoffDropped = m_outbox->dropped();
    return stats;
}

void ClusterPubSub::drain()
{
    std::vector<Pending> envelopes;
    std::vector<std::pair<QByteArray, bool>> tenants;
    m_outbox->take(envelopes, tenants);
    if (!tenants.empty()) {
        for (const auto &[tenant, present] : tenants) {
            m_localInterest.note(tenant, present);
        }
        flushLocalInterest();
        const QMutexLocker lock(&m_statsMutex);
        m_stats.localTenants = m_localInterest.tenants().size();
    }
    for (const Pending &pending : envelopes) {
        sendEnvelope(pending);
    }
}

void ClusterPubSub::sendEnvelope(const Pending &pending)
{
    const InterestMap::Targets targets =
            m_interest.targets(pending.tenant, m_settings.region, m_settings.floodScope);
    if (targets.nodes.isEmpty()) {
        return;
    }
    const quint64 size = static_cast<quint64>(pending.envelope.size());
    QStringList sent;
    QStringList dropped;
    for (const QString &nodeId : targets.nodes) {
        if (m_links.send(nodeId, cluster_frame::Envelope, pending.envelope, pending.orderingKey)) {
            sent.append(nodeId);
        } else {
            dropped.append(nodeId);
        }
    }
    const QMutexLocker lock(&m_statsMutex);
    for (const QString &nodeId : std::as_const(sent)) {
        ClusterPeerFigures &peer = m_stats.peers[nodeId];
        ++peer.envelopesOut;
        peer.bytesOut += size;
        if (!peer.interestKnown) {
            ++peer.floodedOut;
        }
    }
    for (const QString &nodeId : std::as_const(dropped)) {
        ++m_stats.peers[nodeId].envelopesDropped;
    }
    if (!sent.isEmpty()) {
        ClusterTenantFigures &tenant = m_stats.tenants[pending.tenant];
        tenant.envelopesOut += static_cast<quint64>(sent.size());
        tenant.bytesOut += size * static_cast<quint64>(sent.size());
    }
}

void ClusterPubSub::flushLocalInterest()
{
    const std::optional<InterestUpdate> update = m_localInterest.takeUpdate();
    if (!update) {
        return;
    }
    qCDebug(lcPubsub) << "announcing" << update->changes.size() << "tenant change(s) at seq"
                      << update->seq;
    const QByteArray bytes = encodeInterestUpdate(*update);
    for (const QString &nodeId : m_interest.peerIds()) {
        sendInterest(nodeId, cluster_frame::InterestUpdate, bytes);
    }
}

void ClusterPubSub::sendInterest(const QString &nodeId, quint8 kind, const QByteArray &payload)
{
    // A refused interest frame is repaired by the periodic check (the peer sees a numbering
    // it does not hold and asks for a sync).
    if (m_links.send(nodeId, kind, payload, InterestOrderingKey)) {
        const QMutexLocker lock(&m_statsMutex);
        auto it = m_stats.peers.find(nodeId);
        if (it != m_stats.peers.end()) {
            ++it->interestFramesOut;
        }
    }
}

void ClusterPubSub::sendSync(const QString &nodeId)
{
    sendInterest(nodeId, cluster_frame::InterestSync, encodeInterestSync(m_localInterest.sync()));
}

void ClusterPubSub::requestSync(const QString &nodeId, bool force)
{
    if (force) {
        m_interest.resetSyncRequest(nodeId);
    }
    if (m_interest.takeSyncRequest(nodeId, m_clock.elapsed(),
                                   m_settings.syncRequestMinInterval.count())) {
        sendInterest(nodeId, cluster_frame::InterestSyncRequest, encodeInterestSyncRequest());
    }
}

void ClusterPubSub::onPeerConnected(const QString &nodeId)
{
    if (!m_interest.contains(nodeId)) {
        return; // setPeers() will handle it when it becomes a member here
    }
    // The link came up (again): the peer may have restarted and lost what we told it, and we
    // may have missed its updates. Both sides start over with a full sync.
    m_interest.markUnknown(nodeId);
    {
        const QMutexLocker lock(&m_statsMutex);
        refreshPeerFigures(nodeId);
    }
    flushLocalInterest();
    sendSync(nodeId);
    requestSync(nodeId, true);
}

void ClusterPubSub::onInterestCheck()
{
    flushLocalInterest();
    const QByteArray check = encodeInterestUpdate(m_localInterest.check());
    for (const QString &nodeId : m_interest.peerIds()) {
        if (!m_links.isConnected(nodeId)) {
            continue;
        }
        sendInterest(nodeId, cluster_frame::InterestUpdate, check);
        requestSync(nodeId, false); // no-op unless its interest is unknown
    }
}

void ClusterPubSub::onFrame(const QString &fromNodeId, quint8 kind, const QByteArray &payload)
{
    switch (kind) {
    case cluster_frame::Envelope:
        onEnvelope(fromNodeId, payload);
        return;
    case cluster_frame::InterestUpdate:
        onInterestUpdate(fromNodeId, payload);
        break;
    case cluster_frame::InterestSyncRequest: {
        const auto request = decodeInterestSyncRequest(payload);
        if (!request.ok()) {
            countBadFrame(fromNodeId, kind, request.error().message);
            return;
        }
        flushLocalInterest();
        sendSync(fromNodeId);
        break;
    }
    case cluster_frame::InterestSync:
        onInterestSync(fromNodeId, payload);
        break;
    default:
        return; // another module's frame (presence, remote calls, ...)
    }
    const QMutexLocker lock(&m_statsMutex);
    auto it = m_stats.peers.find(fromNodeId);
    if (it != m_stats.peers.end()) {
        ++it->interestFramesIn;
    }
}

void ClusterPubSub::onEnvelope(const QString &fromNodeId, const QByteArray &payload)
{
    auto envelope = decodeEnvelope(payload);
    if (!envelope.ok()) {
        countBadFrame(fromNodeId, cluster_frame::Envelope, envelope.error().message);
        return;
    }
    DeliveryCounting counting;
    if (m_resolver) {
        counting = m_resolver(envelope->topic, envelope->countsAsBroadcast);
    }
    // Local fan-out only: a received envelope is never sent on (no loops, one hop at most).
    m_local.publish(envelope->toMessage(std::move(counting)));

    const quint64 size = static_cast<quint64>(payload.size());
    const QMutexLocker lock(&m_statsMutex);
    auto peer = m_stats.peers.find(fromNodeId);
    if (peer != m_stats.peers.end()) {
        ++peer->envelopesIn;
        peer->bytesIn += size;
    }
    ClusterTenantFigures &tenant = m_stats.tenants[envelope->topic.tenant()];
    ++tenant.envelopesIn;
    tenant.bytesIn += size;
}

void ClusterPubSub::onInterestUpdate(const QString &fromNodeId, const QByteArray &payload)
{
    const auto update = decodeInterestUpdate(payload);
    if (!update.ok()) {
        countBadFrame(fromNodeId, cluster_frame::InterestUpdate, update.error().message);
        return;
    }
    switch (m_interest.applyUpdate(fromNodeId, *update)) {
    case InterestMap::UpdateOutcome::Applied:
        break;
    case InterestMap::UpdateOutcome::InSync:
    case InterestMap::UpdateOutcome::Duplicate:
    case InterestMap::UpdateOutcome::NotAPeer:
        return;
    case InterestMap::UpdateOutcome::NeedSync:
        qCDebug(lcPubsub) << "interest of" << fromNodeId << "out of step at seq" << update->seq
                          << "; asking for a sync";
        requestSync(fromNodeId, false);
        break;
    }
    const QMutexLocker lock(&m_statsMutex);
    refreshPeerFigures(fromNodeId);
}

void ClusterPubSub::onInterestSync(const QString &fromNodeId, const QByteArray &payload)
{
    const auto sync = decodeInterestSync(payload);
    if (!sync.ok()) {
        countBadFrame(fromNodeId, cluster_frame::InterestSync, sync.error().message);
        return;
    }
    if (m_interest.applySync(fromNodeId, *sync)) {
        qCDebug(lcPubsub) << "interest of" << fromNodeId << "synced:" << sync->tenants.size()
                          << "tenant(s) at seq" << sync->seq;
        const QMutexLocker lock(&m_statsMutex);
        refreshPeerFigures(fromNodeId);
    }
}

void ClusterPubSub::refreshPeerFigures(const QString &nodeId)
{
    const std::optional<InterestMap::PeerState> state = m_interest.state(nodeId);
    if (!state) {
        return;
    }
    ClusterPeerFigures &figures = m_stats.peers[nodeId];
    figures.interestKnown = *state == InterestMap::PeerState::Known;
    figures.tenants = figures.interestKnown ? m_interest.tenantCount(nodeId) : 0;
}

void ClusterPubSub::countBadFrame(const QString &fromNodeId, quint8 kind, const QString &reason)
{
    qCWarning(lcPubsub) << "dropping a malformed cluster frame of kind" << kind << "from"
                        << fromNodeId << ":" << reason;
    const QMutexLocker lock(&m_statsMutex);
    ++m_stats.badFrames;
}

} // namespace rt::pubsub
