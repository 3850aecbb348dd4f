#include "server/pubsub/cluster_pubsub.h"

#include "server/cluster/links/node_links.h"
#include "server/pubsub/history_exchange.h"
#include "server/pubsub/local_pubsub.h"
#include "server/pubsub/logging.h"
#include "server/pubsub/tenant_homes.h"
#include "server/runtime/post.h"

#include <QRandomGenerator>
#include <QTimer>

#include <algorithm>
#include <mutex>
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
        const std::lock_guard lock(m_mutex);
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
        const std::lock_guard lock(m_mutex);
        if (m_stopped) {
            return;
        }
        m_tenants.emplace_back(tenant, present);
        scheduleLocked();
    }

    // False once stopped: nobody would answer.
    bool postReachable(ReachableRequest request)
    {
        const std::lock_guard lock(m_mutex);
        if (m_stopped) {
            return false;
        }
        m_reachable.push_back(std::move(request));
        scheduleLocked();
        return true;
    }

    void stop()
    {
        const std::lock_guard lock(m_mutex);
        m_stopped = true;
        m_envelopes.clear();
        m_tenants.clear();
        m_reachable.clear();
        m_bytes = 0;
    }

    // Cluster thread: what was posted since the last take.
    void take(std::vector<Pending> &envelopes, std::vector<std::pair<QByteArray, bool>> &tenants,
              std::vector<ReachableRequest> &reachable)
    {
        const std::lock_guard lock(m_mutex);
        envelopes.swap(m_envelopes);
        tenants.swap(m_tenants);
        reachable.swap(m_reachable);
        m_bytes = 0;
        m_scheduled = false;
    }

    quint64 dropped() const
    {
        const std::lock_guard lock(m_mutex);
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
    mutable std::mutex m_mutex;
    std::vector<Pending> m_envelopes; // guarded by m_mutex
    std::vector<std::pair<QByteArray, bool>> m_tenants; // guarded by m_mutex
    std::vector<ReachableRequest> m_reachable; // guarded by m_mutex
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
      m_waitTimer(new QTimer(this)),
      m_forwardTimer(new QTimer(this)),
      m_interest(m_settings.nodeId),
      m_localInterest(newEpoch())
{
    m_clock.start();
    connect(&m_links, &cluster::links::NodeLinks::frameReceived, this, &ClusterPubSub::onFrame);
    connect(&m_links, &cluster::links::NodeLinks::peerConnected, this,
            &ClusterPubSub::onPeerConnected);
    connect(&m_links, &cluster::links::NodeLinks::peerDisconnected, this,
            &ClusterPubSub::stopWaitingFor);
    connect(m_checkTimer, &QTimer::timeout, this, &ClusterPubSub::onInterestCheck);
    m_checkTimer->start(m_settings.interestCheckInterval);
    m_forwardTimer->setInterval(100);
    connect(m_forwardTimer, &QTimer::timeout, this, &ClusterPubSub::expireForwards);
    m_waitTimer->setSingleShot(true);
    connect(m_waitTimer, &QTimer::timeout, this, &ClusterPubSub::onWaitDeadline);
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
    // The home's numbered copy of another node's broadcast names that sender (its own node
    // excludes it); this node's own senders need no naming, their copies stay here.
    auto envelope = encodeEnvelope(*message);
    if (!envelope.ok()) {
        return; // only Members messages are not forwardable, handled above
    }
    const TopicKey &topic = message->topic();
    // Encoded here, once, on the publisher's thread: the cluster thread only routes bytes.
    m_outbox->postEnvelope(Pending{ topic.tenant(),
                                    QString::fromUtf8(topic.id()),
                                    std::move(envelope).value(),
                                    {},
                                    nullptr });
}

void ClusterPubSub::publishLocal(const OutboundMessagePtr &message) const
{
    m_local.publish(message);
}

void ClusterPubSub::forwardToHome(const QString &home, const OutboundMessagePtr &message) const
{
    // The sender's member id travels with it: the message comes back to this node from the
    // home, and only here does that id mean the sender (broadcast.self: false).
    auto envelope = envelopeOf(*message, m_settings.nodeId);
    if (!envelope.ok()) {
        m_local.publish(message); // not forwardable (never: the sequencer checks the audience)
        return;
    }
    envelope->senderNode = m_settings.nodeId; // also without a member (the HTTP API)
    envelope->forwardId = m_nextForwardId.fetch_add(1, std::memory_order_relaxed);
    m_forwarded.fetch_add(1, std::memory_order_relaxed);
    const TopicKey &topic = message->topic();
    m_outbox->postEnvelope(
            Pending{ topic.tenant(), QString::fromUtf8(topic.id()), encodeEnvelope(*envelope), home,
                     OutboundMessage::arrived(*message, {}, m_settings.nodeId, m_settings.nodeId,
                                              message->excludedMember(), envelope->forwardId) });
}

void ClusterPubSub::setHomePublisher(std::function<void(const OutboundMessagePtr &)> publisher)
{
    m_homePublisher = std::move(publisher);
}

void ClusterPubSub::sendToHome(const Pending &pending)
{
    const bool bounded = static_cast<qsizetype>(m_forwards.size()) < m_settings.maxPendingEnvelopes;
    if (bounded
        && m_links.send(pending.home, cluster_frame::SequenceRequest, pending.envelope,
                        pending.orderingKey)) {
        m_forwards.push_back(Forward{ pending.message->forwardId(), pending.message,
                                      m_clock.elapsed() + ForwardEchoTimeout.count() });
        m_awaitedEchoes.insert(pending.message->forwardId());
        if (!m_forwardTimer->isActive()) {
            m_forwardTimer->start();
        }
        // Link traffic like any broadcast's (the dashboard's flows between nodes).
        const auto size = static_cast<quint64>(pending.envelope.size());
        const std::lock_guard lock(m_statsMutex);
        ClusterPeerFigures &peer = m_stats.peers[pending.home];
        ++peer.envelopesOut;
        peer.bytesOut += size;
        ClusterTenantFigures &tenant = m_stats.tenants[pending.tenant];
        ++tenant.envelopesOut;
        tenant.bytesOut += size;
        return;
    }
    // The home's queue is full or the home is gone: this node's members still get it, and
    // the peers too, unnumbered (as without a home).
    {
        const std::lock_guard lock(m_statsMutex);
        ++m_stats.forwardFallbacks;
    }
    m_local.publish(pending.message);
    auto plain = encodeEnvelope(*pending.message);
    if (plain.ok()) {
        sendEnvelope(Pending{
                pending.tenant, pending.orderingKey, std::move(plain).value(), {}, nullptr });
    }
}

bool ClusterPubSub::takeEcho(quint64 forwardId)
{
    return m_awaitedEchoes.remove(forwardId);
}

void ClusterPubSub::expireForwards()
{
    const qint64 nowMs = m_clock.elapsed();
    quint64 expired = 0;
    while (!m_forwards.empty() && m_forwards.front().deadlineMs <= nowMs) {
        const Forward forward = std::move(m_forwards.front());
        m_forwards.pop_front();
        if (m_awaitedEchoes.remove(forward.id)) {
            // The home did not answer in time: this node's members get it now, unnumbered.
            m_local.publish(forward.message);
            ++expired;
        }
    }
    while (!m_forwards.empty() && !m_awaitedEchoes.contains(m_forwards.front().id)) {
        m_forwards.pop_front(); // echoed: nothing left to do
    }
    if (m_forwards.empty()) {
        m_forwardTimer->stop();
    }
    if (expired > 0) {
        qCWarning(lcPubsub).noquote() << expired
                                      << "broadcast(s) sent to their home came not back numbered "
                                         "in time: delivered here unnumbered";
        const std::lock_guard lock(m_statsMutex);
        m_stats.forwardTimeouts += expired;
    }
}

void ClusterPubSub::onSequenceRequest(const QString &fromNodeId, const QByteArray &payload)
{
    auto envelope = decodeEnvelope(payload);
    if (!envelope.ok() || envelope->position.isSet()) {
        countBadFrame(fromNodeId, cluster_frame::SequenceRequest,
                      envelope.ok() ? QStringLiteral("a numbered message to number again")
                                    : envelope.error().message);
        return;
    }
    DeliveryCounting counting;
    if (m_resolver) {
        counting = m_resolver(envelope->topic, envelope->countsAsBroadcast);
    }
    const OutboundMessagePtr message = envelope->toMessage(std::move(counting), m_settings.nodeId);
    {
        const auto size = static_cast<quint64>(payload.size());
        const std::lock_guard lock(m_statsMutex);
        ++m_stats.numberedForPeers;
        if (auto peer = m_stats.peers.find(fromNodeId); peer != m_stats.peers.end()) {
            ++peer->envelopesIn;
            peer->bytesIn += size;
        }
        ClusterTenantFigures &tenant = m_stats.tenants[envelope->topic.tenant()];
        ++tenant.envelopesIn;
        tenant.bytesIn += size;
    }
    if (m_homePublisher) {
        m_homePublisher(message);
    } else {
        publish(message);
    }
}

bool ClusterPubSub::awaitTenantReachable(const QByteArray &tenantId, QObject *receiver,
                                         std::function<void()> reachable) const
{
    {
        const std::lock_guard lock(m_reachableMutex);
        if (m_reachable.contains(tenantId)) {
            return true;
        }
    }
    if (m_peerCount.load(std::memory_order_relaxed) == 0) {
        // Nobody to wait for; the periodic comparison announces the tenant to later members
        // (they get a full sync when their links come up).
        return true;
    }
    return !m_outbox->postReachable(ReachableRequest{ tenantId, receiver, std::move(reachable) });
}

void ClusterPubSub::noteLocalTenant(const QByteArray &tenantId, bool present)
{
    m_outbox->postTenant(tenantId, present);
}

void ClusterPubSub::reconcileLocalTenants(const std::function<QSet<QByteArray>()> &presentNow)
{
    drain();
    const QSet<QByteArray> now = presentNow();
    const QSet<QByteArray> announced = m_localInterest.tenants();
    for (const QByteArray &tenant : now) {
        if (!announced.contains(tenant)) {
            applyLocalChange(tenant, true);
        }
    }
    for (const QByteArray &tenant : announced) {
        if (!now.contains(tenant)) {
            applyLocalChange(tenant, false);
        }
    }
    flushLocalInterest();
    const std::lock_guard lock(m_statsMutex);
    m_stats.localTenants = m_localInterest.tenants().size();
}

void ClusterPubSub::stop()
{
    m_outbox->stop();
}

void ClusterPubSub::setPeers(const QList<ClusterPeer> &peers)
{
    const QStringList added = m_interest.setPeers(peers);
    m_peerCount.store(static_cast<int>(m_interest.peerIds().size()), std::memory_order_relaxed);
    forgetDepartedPeers();
    {
        const std::lock_guard lock(m_statsMutex);
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
        const std::lock_guard lock(m_statsMutex);
        stats = m_stats;
    }
    stats.published = m_published.load(std::memory_order_relaxed);
    stats.keptLocal = m_keptLocal.load(std::memory_order_relaxed);
    stats.forwardedToHome = m_forwarded.load(std::memory_order_relaxed);
    stats.handoffDropped = m_outbox->dropped();
    return stats;
}

void ClusterPubSub::drain()
{
    std::vector<Pending> envelopes;
    std::vector<std::pair<QByteArray, bool>> tenants;
    std::vector<ReachableRequest> reachable;
    m_outbox->take(envelopes, tenants, reachable);
    if (!tenants.empty() || !reachable.empty()) {
        for (const auto &[tenant, present] : tenants) {
            applyLocalChange(tenant, present);
        }
        for (const ReachableRequest &request : reachable) {
            applyLocalChange(request.tenant, true);
        }
        flushLocalInterest();
        const std::lock_guard lock(m_statsMutex);
        m_stats.localTenants = m_localInterest.tenants().size();
    }
    for (ReachableRequest &request : reachable) {
        startWaiting(std::move(request));
    }
    for (const Pending &pending : envelopes) {
        if (pending.home.isEmpty()) {
            sendEnvelope(pending);
        } else {
            sendToHome(pending);
        }
    }
}

void ClusterPubSub::sendEnvelope(const Pending &pending)
{
    const InterestMap::Targets targets =
            m_interest.targets(pending.tenant, m_settings.region, m_settings.floodScope);
    if (targets.nodes.isEmpty()) {
        return;
    }
    const auto size = static_cast<quint64>(pending.envelope.size());
    QStringList sent;
    QStringList dropped;
    for (const QString &nodeId : targets.nodes) {
        if (m_links.send(nodeId, cluster_frame::Envelope, pending.envelope, pending.orderingKey)) {
            sent.append(nodeId);
        } else {
            dropped.append(nodeId);
        }
    }
    const std::lock_guard lock(m_statsMutex);
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

void ClusterPubSub::applyLocalChange(const QByteArray &tenant, bool present)
{
    m_localInterest.note(tenant, present);
    if (!present) {
        m_sequences.forgetTenant(tenant);
        // Its next first join waits for the peers again (they will have dropped it).
        const std::lock_guard lock(m_reachableMutex);
        m_reachable.remove(tenant);
    }
}

void ClusterPubSub::startWaiting(ReachableRequest request)
{
    ReachableWaiter waiter;
    waiter.seq = m_localInterest.seq(); // the tenant is announced at or before this number
    for (const QString &nodeId : m_interest.peerIds()) {
        if (m_links.isConnected(nodeId) && m_ackedSeq.value(nodeId) < waiter.seq) {
            waiter.peers.insert(nodeId);
        }
    }
    waiter.deadlineMs = m_clock.elapsed() + m_settings.reachableWait.count();
    waiter.request = std::move(request);
    {
        const std::lock_guard lock(m_statsMutex);
        ++m_stats.reachableWaits;
    }
    if (waiter.peers.isEmpty()) {
        completeWaiter(waiter, false);
        return;
    }
    m_waiters.push_back(std::move(waiter));
    armWaitTimer();
}

void ClusterPubSub::onInterestAck(const QString &fromNodeId, const QByteArray &payload)
{
    const auto ack = decodeInterestAck(payload);
    if (!ack.ok()) {
        countBadFrame(fromNodeId, cluster_frame::InterestAck, ack.error().message);
        return;
    }
    if (ack->epoch != m_localInterest.epoch() || !m_interest.contains(fromNodeId)) {
        return; // about an earlier run of this node, or from a node that is no member here
    }
    quint64 &acked = m_ackedSeq[fromNodeId];
    acked = std::max(acked, ack->seq);
    for (ReachableWaiter &waiter : m_waiters) {
        if (waiter.seq <= acked) {
            waiter.peers.remove(fromNodeId);
        }
    }
    finishReachedWaiters();
}

void ClusterPubSub::sendAck(const QString &toNodeId)
{
    if (const std::optional<InterestAck> held = m_interest.heldNumbering(toNodeId)) {
        sendInterest(toNodeId, cluster_frame::InterestAck, encodeInterestAck(*held));
    }
}

void ClusterPubSub::stopWaitingFor(const QString &nodeId)
{
    m_ackedSeq.remove(nodeId); // whatever it held, it must confirm again after a reconnect
    for (ReachableWaiter &waiter : m_waiters) {
        waiter.peers.remove(nodeId);
    }
    finishReachedWaiters();
}

void ClusterPubSub::forgetDepartedPeers()
{
    for (auto it = m_ackedSeq.begin(); it != m_ackedSeq.end();) {
        it = m_interest.contains(it.key()) ? std::next(it) : m_ackedSeq.erase(it);
    }
    for (ReachableWaiter &waiter : m_waiters) {
        for (auto it = waiter.peers.begin(); it != waiter.peers.end();) {
            it = m_interest.contains(*it) ? std::next(it) : waiter.peers.erase(it);
        }
    }
    finishReachedWaiters();
}

void ClusterPubSub::finishReachedWaiters()
{
    for (auto it = m_waiters.begin(); it != m_waiters.end();) {
        if (it->peers.isEmpty()) {
            ReachableWaiter done = std::move(*it);
            it = m_waiters.erase(it);
            completeWaiter(done, false);
        } else {
            ++it;
        }
    }
    armWaitTimer();
}

void ClusterPubSub::onWaitDeadline()
{
    const qint64 now = m_clock.elapsed();
    for (auto it = m_waiters.begin(); it != m_waiters.end();) {
        if (it->deadlineMs <= now) {
            ReachableWaiter late = std::move(*it);
            it = m_waiters.erase(it);
            completeWaiter(late, true);
        } else {
            ++it;
        }
    }
    armWaitTimer();
}

void ClusterPubSub::armWaitTimer()
{
    if (m_waiters.empty()) {
        m_waitTimer->stop();
        return;
    }
    qint64 earliest = m_waiters.front().deadlineMs;
    for (const ReachableWaiter &waiter : m_waiters) {
        earliest = std::min(earliest, waiter.deadlineMs);
    }
    m_waitTimer->start(static_cast<int>(std::max<qint64>(0, earliest - m_clock.elapsed())));
}

void ClusterPubSub::completeWaiter(ReachableWaiter &waiter, bool timedOut)
{
    if (timedOut) {
        QStringList silent(waiter.peers.cbegin(), waiter.peers.cend());
        silent.sort();
        qCWarning(lcPubsub) << "peers" << silent << "did not confirm tenant"
                            << waiter.request.tenant << "within" << m_settings.reachableWait.count()
                            << "ms; answering the join anyway";
        const std::lock_guard lock(m_statsMutex);
        ++m_stats.reachableTimeouts;
    }
    if (m_localInterest.tenants().contains(waiter.request.tenant)) {
        // Confirmed (or given up on a silent peer, which is then as good as unreachable):
        // later joins of the tenant go ahead at once.
        const std::lock_guard lock(m_reachableMutex);
        m_reachable.insert(waiter.request.tenant);
    }
    runtime::post(waiter.request.receiver, std::move(waiter.request.reachable));
}

void ClusterPubSub::sendInterest(const QString &nodeId, quint8 kind, const QByteArray &payload)
{
    // A refused interest frame is repaired by the periodic check (the peer sees a numbering
    // it does not hold and asks for a sync).
    if (m_links.send(nodeId, kind, payload, InterestOrderingKey)) {
        const std::lock_guard lock(m_statsMutex);
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
    m_ackedSeq.remove(nodeId); // it may have restarted: it confirms again after our sync
    {
        const std::lock_guard lock(m_statsMutex);
        refreshPeerFigures(nodeId);
    }
    flushLocalInterest();
    sendSync(nodeId);
    requestSync(nodeId, true); // its answer starts the catch-up (onInterestSync)
}

void ClusterPubSub::onInterestCheck()
{
    m_sequences.sweep(m_clock.elapsed());
    {
        const std::lock_guard lock(m_statsMutex);
        m_stats.sequences = m_sequences.figures();
    }
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
    case cluster_frame::SequenceRequest:
        onSequenceRequest(fromNodeId, payload);
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
    case cluster_frame::InterestAck:
        onInterestAck(fromNodeId, payload);
        break;
    default:
        return; // another module's frame (presence, remote calls, ...)
    }
    const std::lock_guard lock(m_statsMutex);
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
    OutboundMessagePtr message = envelope->toMessage(std::move(counting), m_settings.nodeId);
    if (envelope->forwardId != 0 && envelope->senderNode == m_settings.nodeId
        && !takeEcho(envelope->forwardId)) {
        // Ours, delivered here unnumbered when the home was late; the sequence still moves on.
        if (message->position().isSet() && m_historyExchange != nullptr) {
            (void)m_sequences.received(message, m_clock.elapsed());
        }
        return;
    }
    if (message->position().isSet() && m_historyExchange != nullptr) {
        receiveNumbered(fromNodeId, message);
    } else {
        m_local.publish(message);
    }

    const auto size = static_cast<quint64>(payload.size());
    const std::lock_guard lock(m_statsMutex);
    auto peer = m_stats.peers.find(fromNodeId);
    if (peer != m_stats.peers.end()) {
        ++peer->envelopesIn;
        peer->bytesIn += size;
    }
    ClusterTenantFigures &tenant = m_stats.tenants[envelope->topic.tenant()];
    ++tenant.envelopesIn;
    tenant.bytesIn += size;
}

void ClusterPubSub::receiveNumbered(const QString &fromNodeId, const OutboundMessagePtr &message)
{
    const RemoteSequences::Outcome outcome = m_sequences.received(message, m_clock.elapsed());
    deliverInOrder(outcome);
    if (outcome.askFrom) {
        qCInfo(lcPubsub).noquote() << "a gap in topic" << message->topic().id() << "after offset"
                                   << outcome.askFrom->offset << "- asking its home" << fromNodeId;
        askHome(fromNodeId, message->topic(), *outcome.askFrom);
    }
}

void ClusterPubSub::askHome(const QString &home, const TopicKey &topic, StreamPosition after)
{
    history_wire::Request question;
    question.topic = topic;
    question.from = after;
    m_historyExchange->ask(home, std::move(question), this,
                           [this, topic, home](const TopicHistory::Recovery &recovery) {
                               if (recovery.failure != TopicHistory::RecoveryFailure::None) {
                                   qCWarning(lcPubsub).noquote()
                                           << "topic" << topic.id()
                                           << "- what this node may have missed from" << home
                                           << "cannot be recovered:"
                                           << TopicHistory::toString(recovery.failure);
                               }
                               deliverInOrder(m_sequences.answered(topic, recovery));
                           });
}

void ClusterPubSub::deliverInOrder(const RemoteSequences::Outcome &outcome)
{
    for (const OutboundMessagePtr &message : outcome.deliver) {
        m_local.publish(message);
    }
}

void ClusterPubSub::catchUpWith(const QString &home)
{
    if (m_historyExchange == nullptr || m_homes == nullptr) {
        return;
    }
    // Frames in flight when the link broke are lost, and a peer that left the membership had
    // its queue discarded: ask the home what came after what was delivered here.
    const auto questions = m_sequences.catchUp(
            [this, &home](const QByteArray &tenant) {
                const TenantHomes::Home where = m_homes->homeOf(tenant);
                return where.node == home && where.where != TenantHomes::Where::Here;
            },
            m_clock.elapsed());
    for (const auto &[topic, after] : questions) {
        askHome(home, topic, after);
    }
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
        sendAck(fromNodeId); // it may hold a join's reply until we route the tenant to it
        break;
    case InterestMap::UpdateOutcome::Duplicate:
        sendAck(fromNodeId);
        return;
    case InterestMap::UpdateOutcome::InSync:
    case InterestMap::UpdateOutcome::NotAPeer:
        return;
    case InterestMap::UpdateOutcome::NeedSync:
        qCDebug(lcPubsub) << "interest of" << fromNodeId << "out of step at seq" << update->seq
                          << "; asking for a sync";
        requestSync(fromNodeId, false);
        break;
    }
    const std::lock_guard lock(m_statsMutex);
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
        sendAck(fromNodeId);
        {
            const std::lock_guard lock(m_statsMutex);
            refreshPeerFigures(fromNodeId);
        }
        // A full sync comes over the peer's own link to this node once it counts this node as
        // a member again: only now can a home answer, so only now is the catch-up asked (a
        // question sent when our link to it came up may reach a home that has no way back).
        catchUpWith(fromNodeId);
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
    const std::lock_guard lock(m_statsMutex);
    ++m_stats.badFrames;
}

} // namespace rt::pubsub
