#include "server/presence/presence_replicator.h"

#include "server/cluster/links/node_links.h"
#include "server/presence/logging.h"
#include "server/presence/presence_store.h"
#include "server/runtime/post.h"

#include <QRandomGenerator>
#include <QTimer>

#include <utility>

namespace rt::presence {

namespace {

// One ordering key for every presence frame to a peer: the peer must see our syncs, deltas and
// markers in the order we sent them (see the class comment).
constexpr QStringView OrderingKey = u"presence";

} // namespace

PresenceReplicator::PresenceReplicator(cluster::links::NodeLinks &links,
                                       const ReplicatorSettings &settings, QObject *parent)
    : QObject(parent),
      m_links(links),
      m_settings(settings),
      m_self(links.settings().nodeId),
      // Never 0, so a peer's "no incarnation yet" never matches.
      m_incarnation(QRandomGenerator::global()->generate64() | 1U),
      m_markerTimer(new QTimer(this))
{
    registerPresenceMetaTypes();
    connect(&m_links, &cluster::links::NodeLinks::frameReceived, this,
            &PresenceReplicator::handleFrame);
    connect(&m_links, &cluster::links::NodeLinks::peerConnected, this,
            &PresenceReplicator::onPeerConnected);
    connect(&m_links, &cluster::links::NodeLinks::peerDisconnected, this,
            &PresenceReplicator::onPeerDisconnected);
    connect(m_markerTimer, &QTimer::timeout, this, &PresenceReplicator::sendMarkers);
    m_markerTimer->start(m_settings.markerInterval);
    // Peers already connected get our (empty) state, replacing what an earlier incarnation of
    // this node may have left with them.
    sendSync(m_links.connectedPeers());
}

PresenceReplicator::~PresenceReplicator()
{
    m_inbox->close();
}

QStringList PresenceReplicator::syncedOrigins() const
{
    QStringList synced;
    for (auto it = m_origins.cbegin(); it != m_origins.cend(); ++it) {
        if (it->inSync) {
            synced.append(it.key());
        }
    }
    synced.sort();
    return synced;
}

quint64 PresenceReplicator::markersReceivedFrom(const QString &nodeId) const
{
    const auto found = m_origins.constFind(nodeId);
    return found == m_origins.cend() ? 0 : found->markersReceived;
}

void PresenceReplicator::publishLocalChange(const PresenceChange &change)
{
    const PresenceRecord &record = change.record;
    if (change.op == PresenceChange::Op::Track) {
        m_local[record.topic.id()].insert(record.memberId, record);
    } else {
        const auto topic = m_local.find(record.topic.id());
        if (topic != m_local.end()) {
            topic->remove(record.memberId);
            if (topic->isEmpty()) {
                m_local.erase(topic);
            }
        }
    }
    ++m_sequence;
    // Peers not connected now get a full sync when they are.
    const QStringList peers = m_links.connectedPeers();
    if (peers.isEmpty()) {
        return;
    }
    const QByteArray payload = wire::encode(wire::Delta{ m_incarnation, m_sequence, change });
    for (const QString &peer : peers) {
        m_links.send(peer, wire::KindDelta, payload, OrderingKey);
    }
}

void PresenceReplicator::resetLocal(const QList<PresenceRecord> &records)
{
    m_local.clear();
    for (const PresenceRecord &record : records) {
        m_local[record.topic.id()].insert(record.memberId, record);
    }
    // A new number: peers holding an older state see the sync (or a marker) move on.
    ++m_sequence;
    sendSync(m_links.connectedPeers());
}

void PresenceReplicator::setMembers(const QStringList &liveNodeIds)
{
    QSet<QString> live(liveNodeIds.cbegin(), liveNodeIds.cend());
    live.remove(m_self);
    const QSet<QString> departed = m_members - live;
    m_members = std::move(live);
    for (const QString &nodeId : departed) {
        drop(nodeId, "left the cluster membership");
    }
}

void PresenceReplicator::memberLeft(const QString &nodeId)
{
    m_members.remove(nodeId);
    drop(nodeId, "left the cluster membership");
}

void PresenceReplicator::handleFrame(const QString &fromNodeId, quint8 kind,
                                     const QByteArray &payload)
{
    if (!wire::isPresenceKind(kind) || fromNodeId == m_self) {
        return;
    }
    Origin &from = origin(fromNodeId);
    auto message = wire::decode(kind, payload);
    if (!message) {
        qCWarning(lcPresence) << "malformed presence frame of kind" << kind << "from" << fromNodeId
                              << ":" << message.error().message;
        from.assembling = false;
        from.pending.clear();
        lostSync(fromNodeId, from, "malformed frame");
        return;
    }
    if (auto *delta = std::get_if<wire::Delta>(&*message)) {
        onDelta(fromNodeId, from, *delta);
    } else if (auto *chunk = std::get_if<wire::SyncChunk>(&*message)) {
        onSyncChunk(fromNodeId, from, std::move(*chunk));
    } else if (auto *marker = std::get_if<wire::Marker>(&*message)) {
        ++from.markersReceived;
        onMarker(fromNodeId, from, *marker);
    } else {
        sendSync({ fromNodeId }); // ResyncRequest
    }
}

void PresenceReplicator::onPeerConnected(const QString &nodeId)
{
    const auto known = m_origins.find(nodeId);
    if (known != m_origins.end()) {
        known->graceTimer->stop();
    }
    sendSync({ nodeId });
}

void PresenceReplicator::onPeerDisconnected(const QString &nodeId)
{
    Origin &peer = origin(nodeId);
    if (!peer.graceTimer->isActive()) {
        peer.graceTimer->start(m_settings.disconnectGrace);
    }
}

void PresenceReplicator::sendMarkers()
{
    const QByteArray payload = wire::encode(wire::Marker{ m_incarnation, m_sequence });
    const QStringList peers = m_links.connectedPeers();
    for (const QString &peer : peers) {
        m_links.send(peer, wire::KindMarker, payload, OrderingKey);
    }
}

void PresenceReplicator::sendSync(const QStringList &nodeIds)
{
    if (nodeIds.isEmpty()) {
        return;
    }
    QList<PresenceRecord> records;
    for (const auto &members : std::as_const(m_local)) {
        for (const PresenceRecord &record : members) {
            records.append(record);
        }
    }
    // Encoded once for all the peers.
    const QList<QByteArray> chunks =
            wire::encodeSync(m_incarnation, m_sequence, records, m_settings.maxSyncChunkBytes);
    for (const QString &nodeId : nodeIds) {
        qCDebug(lcPresence) << "full sync to" << nodeId << ":" << records.size() << "presences in"
                            << chunks.size() << "frames, up to change" << m_sequence;
        for (const QByteArray &chunk : chunks) {
            // A refused frame (queue full, peer gone) leaves the peer without the last chunk; its
            // next marker check asks again.
            if (!m_links.send(nodeId, wire::KindSyncChunk, chunk, OrderingKey)) {
                qCInfo(lcPresence) << "presence sync to" << nodeId << "not sent completely";
                break;
            }
        }
    }
}

void PresenceReplicator::onDelta(const QString &from, Origin &origin, const wire::Delta &delta)
{
    if (origin.assembling) {
        origin.assembling = false;
        origin.pending.clear();
        lostSync(from, origin, "delta inside a sync");
        return;
    }
    if (!origin.inSync) {
        // Deltas sent before the sync we are waiting for (or that a marker will ask for).
        return;
    }
    if (delta.incarnation != origin.incarnation) {
        lostSync(from, origin, "origin restarted");
        return;
    }
    if (delta.sequence <= origin.sequence) {
        return; // already part of the state we hold
    }
    if (delta.sequence != origin.sequence + 1) {
        lostSync(from, origin, "change numbers skip");
        return;
    }
    origin.sequence = delta.sequence;
    origin.held = true;
    Q_EMIT remoteChanged(from, delta.change);
}

void PresenceReplicator::onSyncChunk(const QString &from, Origin &origin, wire::SyncChunk chunk)
{
    if (chunk.index == 0) {
        origin.assembling = true;
        origin.syncIncarnation = chunk.incarnation;
        origin.syncSequence = chunk.sequence;
        origin.nextChunk = 1;
        origin.pending = std::move(chunk.records);
    } else if (origin.assembling && chunk.incarnation == origin.syncIncarnation
               && chunk.sequence == origin.syncSequence && chunk.index == origin.nextChunk) {
        ++origin.nextChunk;
        origin.pending.append(std::move(chunk.records));
    } else {
        origin.assembling = false;
        origin.pending.clear();
        lostSync(from, origin, "sync chunk missing");
        return;
    }
    if (!chunk.last) {
        return;
    }
    origin.assembling = false;
    origin.inSync = true;
    origin.incarnation = origin.syncIncarnation;
    origin.sequence = origin.syncSequence;
    origin.resyncRequested = false;
    origin.held = true;
    qCDebug(lcPresence) << "full sync from" << from << ":" << origin.pending.size()
                        << "presences, up to change" << origin.sequence;
    Q_EMIT remoteReplaced(from, std::exchange(origin.pending, {}));
}

void PresenceReplicator::onMarker(const QString &from, Origin &origin, const wire::Marker &marker)
{
    if (origin.assembling) {
        origin.assembling = false;
        origin.pending.clear();
        lostSync(from, origin, "marker inside a sync");
        return;
    }
    if (origin.inSync && marker.incarnation == origin.incarnation
        && marker.sequence == origin.sequence) {
        return;
    }
    lostSync(from, origin, origin.inSync ? "marker ahead of the changes received" : "not in sync");
}

void PresenceReplicator::lostSync(const QString &from, Origin &origin, const char *reason)
{
    origin.inSync = false;
    if (origin.resyncRequested
        && !origin.resyncRequestedAt.hasExpired(m_settings.resyncRetry.count())) {
        return;
    }
    qCInfo(lcPresence) << "asking" << from << "for a full presence sync:" << reason;
    origin.resyncRequested = true;
    origin.resyncRequestedAt.start();
    m_links.send(from, wire::KindResyncRequest, wire::encode(wire::ResyncRequest{}), OrderingKey);
}

void PresenceReplicator::drop(const QString &nodeId, const char *reason)
{
    const auto it = m_origins.find(nodeId);
    if (it == m_origins.end()) {
        return; // never heard of: the store holds nothing of it
    }
    it->graceTimer->stop();
    it->inSync = false;
    it->assembling = false;
    it->pending.clear();
    it->incarnation = 0;
    it->sequence = 0;
    it->resyncRequested = false;
    if (!std::exchange(it->held, false)) {
        return;
    }
    qCInfo(lcPresence) << "presences of" << nodeId << "leave:" << reason;
    Q_EMIT remoteDropped(nodeId);
}

PresenceReplicator::Origin &PresenceReplicator::origin(const QString &nodeId)
{
    auto it = m_origins.find(nodeId);
    if (it == m_origins.end()) {
        it = m_origins.insert(nodeId, Origin{});
        auto *timer = new QTimer(this);
        timer->setSingleShot(true);
        connect(timer, &QTimer::timeout, this,
                [this, nodeId] { drop(nodeId, "links down longer than the grace period"); });
        it->graceTimer = timer;
    }
    return *it;
}

void connectReplication(PresenceStore &store, PresenceReplicator &replicator)
{
    // Each signal runs a direct slot on the emitting thread that posts a copy of the values to
    // the other side (runtime::post: in order, dropped if the receiver is gone, a hand-off
    // ThreadSanitizer can follow), as a queued connection would.
    PresenceReplicator *target = &replicator;
    PresenceStore *home = &store;
    // The store outlives the replicator (which is destroyed on its own thread, maybe while the
    // store emits): this direction goes through the replicator's mailbox.
    QObject::connect(
            &store, &PresenceStore::localChanged, &replicator,
            [target, inbox = replicator.inbox()](const PresenceChange &change) {
                inbox->post([target, change] { target->publishLocalChange(change); });
            },
            Qt::DirectConnection);
    QObject::connect(
            &replicator, &PresenceReplicator::remoteChanged, &store,
            [home](const QString &origin, const PresenceChange &change) {
                runtime::post(home,
                              [home, origin, change] { home->applyRemoteChange(origin, change); });
            },
            Qt::DirectConnection);
    QObject::connect(
            &replicator, &PresenceReplicator::remoteReplaced, &store,
            [home](const QString &origin, const QList<PresenceRecord> &records) {
                runtime::post(home, [home, origin, records] {
                    home->replaceRemoteOrigin(origin, records);
                });
            },
            Qt::DirectConnection);
    QObject::connect(
            &replicator, &PresenceReplicator::remoteDropped, &store,
            [home](const QString &origin) {
                runtime::post(home, [home, origin] { home->dropRemoteOrigin(origin); });
            },
            Qt::DirectConnection);
    // Runs on the replicator's thread, and not at all if it is gone by then.
    runtime::post(target,
                  [target, records = store.localPresences()] { target->resetLocal(records); });
}

} // namespace rt::presence
