#include "server/pubsub/cluster_interest.h"

#include "server/pubsub/cluster_bytes.h"

#include <algorithm>

namespace rt::pubsub {

namespace {

constexpr quint8 Version = 1;
// The smallest encoded entry: an update's present byte + a length; a sync's length. A count
// larger than the remaining bytes allow is refused before anything is reserved.
constexpr qsizetype MinUpdateEntryBytes = 1 + 4;
constexpr qsizetype MinSyncEntryBytes = 4;

Result<bool> readVersion(detail::ByteReader &in, const char *what)
{
    const auto version = in.u8();
    if (!version) {
        return Error{ QStringLiteral("%1 truncated").arg(QLatin1String(what)) };
    }
    if (*version != Version) {
        return Error{
            QStringLiteral("unsupported %1 version %2").arg(QLatin1String(what)).arg(*version)
        };
    }
    return true;
}

} // namespace

QByteArray encodeInterestUpdate(const InterestUpdate &update)
{
    detail::ByteWriter out(1 + 8 + 8 + 4 + update.changes.size() * 16);
    out.u8(Version);
    out.u64(update.epoch);
    out.u64(update.seq);
    out.u32(static_cast<quint32>(update.changes.size()));
    for (const InterestChange &change : update.changes) {
        out.u8(change.present ? 1 : 0);
        out.bytes(change.tenant);
    }
    return out.take();
}

QByteArray encodeInterestSyncRequest()
{
    detail::ByteWriter out(1);
    out.u8(Version);
    return out.take();
}

QByteArray encodeInterestSync(const InterestSync &sync)
{
    detail::ByteWriter out(1 + 8 + 8 + 4 + sync.tenants.size() * 16);
    out.u8(Version);
    out.u64(sync.epoch);
    out.u64(sync.seq);
    out.u32(static_cast<quint32>(sync.tenants.size()));
    for (const QByteArray &tenant : sync.tenants) {
        out.bytes(tenant);
    }
    return out.take();
}

QByteArray encodeInterestAck(const InterestAck &ack)
{
    detail::ByteWriter out(1 + 8 + 8);
    out.u8(Version);
    out.u64(ack.epoch);
    out.u64(ack.seq);
    return out.take();
}

Result<InterestUpdate> decodeInterestUpdate(QByteArrayView bytes)
{
    detail::ByteReader in(bytes);
    if (auto version = readVersion(in, "interest update"); !version.ok()) {
        return std::move(version).error();
    }
    InterestUpdate update;
    const auto epoch = in.u64();
    const auto seq = in.u64();
    const auto count = in.u32();
    if (!epoch || !seq || !count) {
        return Error{ QStringLiteral("interest update header truncated") };
    }
    if (*count > static_cast<quint64>(in.remaining() / MinUpdateEntryBytes)) {
        return Error{ QStringLiteral("interest update announces %1 changes in %2 bytes")
                              .arg(*count)
                              .arg(in.remaining()) };
    }
    update.epoch = *epoch;
    update.seq = *seq;
    update.changes.reserve(static_cast<qsizetype>(*count));
    for (quint32 i = 0; i < *count; ++i) {
        const auto present = in.u8();
        if (!present || *present > 1) {
            return Error{ QStringLiteral("interest update: bad presence flag") };
        }
        auto tenant = in.bytes();
        if (!tenant || tenant->isEmpty()) {
            return Error{ QStringLiteral("interest update: truncated or empty tenant") };
        }
        update.changes.append(InterestChange{ std::move(*tenant), *present == 1 });
    }
    if (!in.atEnd()) {
        return Error{ QStringLiteral("interest update: trailing bytes") };
    }
    return update;
}

Result<bool> decodeInterestSyncRequest(QByteArrayView bytes)
{
    detail::ByteReader in(bytes);
    if (auto version = readVersion(in, "interest sync request"); !version.ok()) {
        return std::move(version).error();
    }
    if (!in.atEnd()) {
        return Error{ QStringLiteral("interest sync request: trailing bytes") };
    }
    return true;
}

Result<InterestSync> decodeInterestSync(QByteArrayView bytes)
{
    detail::ByteReader in(bytes);
    if (auto version = readVersion(in, "interest sync"); !version.ok()) {
        return std::move(version).error();
    }
    InterestSync sync;
    const auto epoch = in.u64();
    const auto seq = in.u64();
    const auto count = in.u32();
    if (!epoch || !seq || !count) {
        return Error{ QStringLiteral("interest sync header truncated") };
    }
    if (*count > static_cast<quint64>(in.remaining() / MinSyncEntryBytes)) {
        return Error{ QStringLiteral("interest sync announces %1 tenants in %2 bytes")
                              .arg(*count)
                              .arg(in.remaining()) };
    }
    sync.epoch = *epoch;
    sync.seq = *seq;
    sync.tenants.reserve(static_cast<qsizetype>(*count));
    for (quint32 i = 0; i < *count; ++i) {
        auto tenant = in.bytes();
        if (!tenant || tenant->isEmpty()) {
            return Error{ QStringLiteral("interest sync: truncated or empty tenant") };
        }
        sync.tenants.append(std::move(*tenant));
    }
    if (!in.atEnd()) {
        return Error{ QStringLiteral("interest sync: trailing bytes") };
    }
    return sync;
}

Result<InterestAck> decodeInterestAck(QByteArrayView bytes)
{
    detail::ByteReader in(bytes);
    if (auto version = readVersion(in, "interest ack"); !version.ok()) {
        return std::move(version).error();
    }
    const auto epoch = in.u64();
    const auto seq = in.u64();
    if (!epoch || !seq) {
        return Error{ QStringLiteral("interest ack truncated") };
    }
    if (!in.atEnd()) {
        return Error{ QStringLiteral("interest ack: trailing bytes") };
    }
    return InterestAck{ *epoch, *seq };
}

// LocalInterest

bool LocalInterest::note(const QByteArray &tenant, bool present)
{
    if (tenant.isEmpty()) {
        return false;
    }
    if (present) {
        if (m_current.contains(tenant)) {
            return false;
        }
        m_current.insert(tenant);
        return true;
    }
    return m_current.remove(tenant);
}

std::optional<InterestUpdate> LocalInterest::takeUpdate()
{
    InterestUpdate update{ m_epoch, m_seq + 1, {} };
    for (const QByteArray &tenant : std::as_const(m_current)) {
        if (!m_announced.contains(tenant)) {
            update.changes.append(InterestChange{ tenant, true });
        }
    }
    for (const QByteArray &tenant : std::as_const(m_announced)) {
        if (!m_current.contains(tenant)) {
            update.changes.append(InterestChange{ tenant, false });
        }
    }
    if (update.changes.isEmpty()) {
        return std::nullopt;
    }
    std::sort(update.changes.begin(), update.changes.end(),
              [](const InterestChange &a, const InterestChange &b) { return a.tenant < b.tenant; });
    m_seq = update.seq;
    m_announced = m_current;
    return update;
}

InterestSync LocalInterest::sync() const
{
    InterestSync sync{ m_epoch, m_seq,
                       QList<QByteArray>(m_announced.cbegin(), m_announced.cend()) };
    std::sort(sync.tenants.begin(), sync.tenants.end());
    return sync;
}

// InterestMap

void InterestMap::forget(Peer &peer)
{
    peer.state = PeerState::Unknown;
    peer.tenants.clear();
    peer.epoch = 0;
    peer.seq = 0;
}

QStringList InterestMap::setPeers(const QList<ClusterPeer> &peers)
{
    QHash<QString, QString> wanted; // node id -> region
    for (const ClusterPeer &peer : peers) {
        if (!peer.nodeId.isEmpty() && peer.nodeId != m_self) {
            wanted.insert(peer.nodeId, peer.region);
        }
    }
    for (auto it = m_peers.begin(); it != m_peers.end();) {
        if (wanted.contains(it.key())) {
            ++it;
        } else {
            it = m_peers.erase(it);
        }
    }
    QStringList added;
    for (auto it = wanted.cbegin(); it != wanted.cend(); ++it) {
        auto existing = m_peers.find(it.key());
        if (existing != m_peers.end()) {
            existing->region = it.value();
            continue;
        }
        Peer peer;
        peer.region = it.value();
        m_peers.insert(it.key(), peer);
        added.append(it.key());
    }
    added.sort();
    return added;
}

QStringList InterestMap::peerIds() const
{
    QStringList ids = m_peers.keys();
    ids.sort();
    return ids;
}

void InterestMap::markUnknown(const QString &nodeId)
{
    auto it = m_peers.find(nodeId);
    if (it != m_peers.end()) {
        forget(*it);
    }
}

InterestMap::UpdateOutcome InterestMap::applyUpdate(const QString &nodeId,
                                                    const InterestUpdate &update)
{
    auto it = m_peers.find(nodeId);
    if (it == m_peers.end()) {
        return UpdateOutcome::NotAPeer;
    }
    Peer &peer = *it;
    if (peer.state == PeerState::Unknown) {
        return UpdateOutcome::NeedSync;
    }
    if (update.epoch != peer.epoch) {
        forget(peer); // the peer restarted, or a sync from its new run was lost
        return UpdateOutcome::NeedSync;
    }
    if (update.changes.isEmpty()) {
        if (update.seq == peer.seq) {
            return UpdateOutcome::InSync;
        }
        forget(peer); // we missed its last update(s)
        return UpdateOutcome::NeedSync;
    }
    if (update.seq <= peer.seq) {
        return UpdateOutcome::Duplicate;
    }
    if (update.seq != peer.seq + 1) {
        forget(peer);
        return UpdateOutcome::NeedSync;
    }
    for (const InterestChange &change : update.changes) {
        if (change.present) {
            peer.tenants.insert(change.tenant);
        } else {
            peer.tenants.remove(change.tenant);
        }
    }
    peer.seq = update.seq;
    return UpdateOutcome::Applied;
}

bool InterestMap::applySync(const QString &nodeId, const InterestSync &sync)
{
    auto it = m_peers.find(nodeId);
    if (it == m_peers.end()) {
        return false;
    }
    Peer &peer = *it;
    // Frames of one peer arrive in order, so an older sync of the same run should not happen;
    // if it does, what we hold is newer.
    if (peer.state == PeerState::Known && peer.epoch == sync.epoch && sync.seq < peer.seq) {
        return false;
    }
    peer.state = PeerState::Known;
    peer.epoch = sync.epoch;
    peer.seq = sync.seq;
    peer.tenants = QSet<QByteArray>(sync.tenants.cbegin(), sync.tenants.cend());
    peer.lastSyncRequestMs = -1;
    return true;
}

bool InterestMap::takeSyncRequest(const QString &nodeId, qint64 nowMs, qint64 minIntervalMs)
{
    auto it = m_peers.find(nodeId);
    if (it == m_peers.end() || it->state != PeerState::Unknown) {
        return false;
    }
    if (it->lastSyncRequestMs >= 0 && nowMs - it->lastSyncRequestMs < minIntervalMs) {
        return false;
    }
    it->lastSyncRequestMs = nowMs;
    return true;
}

void InterestMap::resetSyncRequest(const QString &nodeId)
{
    auto it = m_peers.find(nodeId);
    if (it != m_peers.end()) {
        it->lastSyncRequestMs = -1;
    }
}

InterestMap::Targets InterestMap::targets(const QByteArray &tenant, const QString &selfRegion,
                                          FloodScope scope) const
{
    Targets targets;
    for (auto it = m_peers.cbegin(); it != m_peers.cend(); ++it) {
        const Peer &peer = it.value();
        if (peer.state == PeerState::Known) {
            if (peer.tenants.contains(tenant)) {
                targets.nodes.append(it.key());
            }
            continue;
        }
        if (scope == FloodScope::Cluster || peer.region == selfRegion) {
            targets.nodes.append(it.key());
            ++targets.flooded;
        }
    }
    return targets;
}

std::optional<InterestMap::PeerState> InterestMap::state(const QString &nodeId) const
{
    auto it = m_peers.constFind(nodeId);
    if (it == m_peers.cend()) {
        return std::nullopt;
    }
    return it->state;
}

std::optional<InterestAck> InterestMap::heldNumbering(const QString &nodeId) const
{
    auto it = m_peers.constFind(nodeId);
    if (it == m_peers.cend() || it->state != PeerState::Known) {
        return std::nullopt;
    }
    return InterestAck{ it->epoch, it->seq };
}

QSet<QByteArray> InterestMap::tenantsOf(const QString &nodeId) const
{
    return m_peers.value(nodeId).tenants;
}

qsizetype InterestMap::tenantCount(const QString &nodeId) const
{
    auto it = m_peers.constFind(nodeId);
    return it == m_peers.cend() ? 0 : it->tenants.size();
}

} // namespace rt::pubsub
