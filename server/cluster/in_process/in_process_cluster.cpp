#include "server/cluster/in_process/in_process_cluster.h"

#include "server/cluster/logging.h"

#include <QDateTime>

namespace rt::cluster {

namespace {

constexpr int DefaultSweepIntervalMs = 200;

ConfigWriteResult invalid(const QString &message)
{
    return ConfigWriteError{ ConfigWriteError::Kind::Invalid, std::nullopt, message };
}

} // namespace

InProcessCluster::InProcessCluster(const Clock &clock, QObject *parent)
    : QObject(parent),
      m_clock(clock)
{
    m_sweepTimer.setInterval(DefaultSweepIntervalMs);
    connect(&m_sweepTimer, &QTimer::timeout, this, &InProcessCluster::sweep);
    m_sweepTimer.start();
}

InProcessCluster::~InProcessCluster() = default;

void InProcessCluster::sweep()
{
    const qint64 now = m_clock.monotonicMs();
    QList<qint64> expired;
    for (auto it = m_leases.cbegin(); it != m_leases.cend(); ++it) {
        if (!it->keptAlive && it->deadlineMs <= now) {
            expired.append(it.key());
        }
    }
    std::sort(expired.begin(), expired.end()); // deterministic order of the notifications
    for (qint64 lease : std::as_const(expired)) {
        endLease(lease, QStringLiteral("lease expired"));
    }
}

void InProcessCluster::expireNode(const QString &nodeId)
{
    const auto it = m_members.constFind(nodeId);
    if (it != m_members.constEnd()) {
        endLease(it->lease, QStringLiteral("lease expired"));
    }
}

bool InProcessCluster::registerNode(InProcessClusterBackend *backend, const NodeInfo &self)
{
    if (self.id.isEmpty() || m_members.contains(self.id)) {
        return false;
    }
    const qint64 lease = m_nextLease++;
    m_leases.insert(lease, Lease{ m_leaseTtlMs, 0, true });
    m_members.insert(self.id, Member{ self, lease, backend });
    ++m_revision;
    qCDebug(lcCluster) << "in-process cluster: node" << self.id << "joined";
    notifyMembers();
    return true;
}

void InProcessCluster::unregisterNode(const QString &nodeId)
{
    const auto it = m_members.constFind(nodeId);
    if (it != m_members.constEnd()) {
        endLease(it->lease, QString()); // a clean leave: no claimLost for the leaver
    }
}

void InProcessCluster::updateNode(const NodeInfo &self)
{
    const auto it = m_members.find(self.id);
    if (it == m_members.end() || it->info == self) {
        return;
    }
    it->info = self;
    ++m_revision;
    notifyMembers();
}

void InProcessCluster::suspendKeepAlive(const QString &nodeId)
{
    const auto member = m_members.constFind(nodeId);
    if (member == m_members.constEnd()) {
        return;
    }
    Lease &lease = m_leases[member->lease];
    lease.keptAlive = false;
    lease.deadlineMs = m_clock.monotonicMs() + lease.ttlMs;
}

QList<NodeInfo> InProcessCluster::memberList() const
{
    QList<NodeInfo> list;
    list.reserve(m_members.size());
    for (const Member &member : m_members) {
        list.append(member.info);
    }
    return list; // QMap order: sorted by id
}

void InProcessCluster::claim(InProcessClusterBackend *backend, const QString &resource,
                             const QByteArray &metadata)
{
    const QString owner = backend->nodeId();
    const auto member = m_members.constFind(owner);
    if (member == m_members.constEnd()) {
        notify(backend, [resource](InProcessClusterBackend &self) {
            Q_EMIT self.claimFailed(resource, QStringLiteral("this node is not registered"));
        });
        return;
    }
    const auto existing = m_claims.constFind(resource);
    if (existing != m_claims.constEnd()) {
        const Claim current = existing->claim;
        notify(backend, [resource, current, owner](InProcessClusterBackend &self) {
            if (current.owner == owner) {
                Q_EMIT self.claimGranted(resource);
            } else {
                Q_EMIT self.claimRefused(resource, current);
            }
        });
        return;
    }
    ++m_revision;
    const Claim created{ resource, owner, metadata, m_revision, m_revision };
    m_claims.insert(resource, StoredClaim{ created, member->lease });
    notify(backend,
           [resource](InProcessClusterBackend &self) { Q_EMIT self.claimGranted(resource); });
    notifyAll([resource, created](InProcessClusterBackend &self) {
        Q_EMIT self.claimChanged(resource, created);
    });
}

void InProcessCluster::updateClaim(InProcessClusterBackend *backend, const QString &resource,
                                   const QByteArray &metadata)
{
    const auto it = m_claims.find(resource);
    if (it == m_claims.end() || it->claim.owner != backend->nodeId()) {
        notify(backend, [resource](InProcessClusterBackend &self) {
            Q_EMIT self.claimLost(resource, QStringLiteral("this node does not hold the claim"));
        });
        return;
    }
    ++m_revision;
    it->claim.metadata = metadata;
    it->claim.modRevision = m_revision;
    const Claim updated = it->claim;
    notifyAll([resource, updated](InProcessClusterBackend &self) {
        Q_EMIT self.claimChanged(resource, updated);
    });
}

void InProcessCluster::release(InProcessClusterBackend *backend, const QString &resource)
{
    const auto it = m_claims.constFind(resource);
    if (it != m_claims.constEnd() && it->claim.owner == backend->nodeId()) {
        deleteClaim(resource, QString(), nullptr);
    }
}

std::optional<Claim> InProcessCluster::claimOf(const QString &resource) const
{
    const auto it = m_claims.constFind(resource);
    if (it == m_claims.constEnd()) {
        return std::nullopt;
    }
    return it->claim;
}

QStringList InProcessCluster::claimsOf(const QString &nodeId) const
{
    QStringList resources;
    for (const StoredClaim &stored : m_claims) {
        if (stored.claim.owner == nodeId) {
            resources.append(stored.claim.resource);
        }
    }
    return resources;
}

ConfigSnapshot InProcessCluster::snapshot() const
{
    ConfigSnapshot snapshot;
    snapshot.revision = m_revision;
    for (const StoredConfig &stored : m_config) {
        snapshot.entries.insert(stored.entry.key, stored.entry);
    }
    return snapshot;
}

QHash<QString, qint64> InProcessCluster::configExpiries() const
{
    // Lease deadlines are on the cluster's (monotonic) clock: shift them to the wall clock.
    const qint64 wallMinusMonotonic = QDateTime::currentMSecsSinceEpoch() - m_clock.monotonicMs();
    QHash<QString, qint64> expiries;
    for (const StoredConfig &stored : m_config) {
        if (const auto lease = m_leases.constFind(stored.lease);
            stored.lease != 0 && lease != m_leases.cend()) {
            expiries.insert(stored.entry.key, lease->deadlineMs + wallMinusMonotonic);
        }
    }
    return expiries;
}

ConfigWriteResult InProcessCluster::putConfig(const QString &key, const QByteArray &value,
                                              qint64 expectedModRevision, int ttlSeconds)
{
    if (key.isEmpty() || expectedModRevision < 0 || ttlSeconds < 0) {
        return invalid(QStringLiteral("empty key, negative revision or negative TTL"));
    }
    const auto it = m_config.constFind(key);
    const qint64 current = it == m_config.constEnd() ? 0 : it->entry.modRevision;
    if (current != expectedModRevision) {
        return ConfigWriteError{ ConfigWriteError::Kind::Conflict,
                                 it == m_config.constEnd() ? std::nullopt
                                                           : std::optional(it->entry),
                                 QStringLiteral("%1 is at revision %2, not %3")
                                         .arg(key)
                                         .arg(current)
                                         .arg(expectedModRevision) };
    }
    qint64 lease = 0;
    if (ttlSeconds > 0) {
        lease = m_nextLease++;
        const qint64 ttlMs = qint64(ttlSeconds) * 1000;
        m_leases.insert(lease, Lease{ ttlMs, m_clock.monotonicMs() + ttlMs, false });
    }
    ++m_revision;
    m_config.insert(key, StoredConfig{ ConfigEntry{ key, value, m_revision, lease != 0 }, lease });
    notifyConfig();
    return m_revision;
}

ConfigWriteResult InProcessCluster::deleteConfig(const QString &key, qint64 expectedModRevision)
{
    if (key.isEmpty() || expectedModRevision < 0) {
        return invalid(QStringLiteral("empty key or negative revision"));
    }
    const auto it = m_config.constFind(key);
    if (expectedModRevision != 0
        && (it == m_config.constEnd() || it->entry.modRevision != expectedModRevision)) {
        return ConfigWriteError{
            ConfigWriteError::Kind::Conflict,
            it == m_config.constEnd() ? std::nullopt : std::optional(it->entry),
            QStringLiteral("%1 is not at revision %2").arg(key).arg(expectedModRevision)
        };
    }
    if (it == m_config.constEnd()) {
        return m_revision; // nothing to delete; etcd does not bump the revision either
    }
    m_config.remove(key);
    ++m_revision;
    notifyConfig();
    return m_revision;
}

void InProcessCluster::endLease(qint64 lease, const QString &reason)
{
    if (!m_leases.remove(lease)) {
        return;
    }
    // The node first, so that it receives no claimChanged for its own claims once gone.
    bool membersChanged = false;
    QPointer<InProcessClusterBackend> leaver;
    for (auto it = m_members.begin(); it != m_members.end();) {
        if (it->lease == lease) {
            leaver = it->backend;
            qCDebug(lcCluster) << "in-process cluster: node" << it.key() << "left"
                               << (reason.isEmpty() ? QStringLiteral("(stopped)") : reason);
            if (it->backend) {
                it->backend->leaseEnded();
            }
            it = m_members.erase(it);
            membersChanged = true;
        } else {
            ++it;
        }
    }
    QStringList claims;
    for (const StoredClaim &stored : std::as_const(m_claims)) {
        if (stored.lease == lease) {
            claims.append(stored.claim.resource);
        }
    }
    bool configChanged = false;
    for (auto it = m_config.begin(); it != m_config.end();) {
        if (it->lease == lease) {
            it = m_config.erase(it);
            configChanged = true;
        } else {
            ++it;
        }
    }
    ++m_revision; // one revision for everything the lease held, as in etcd
    if (membersChanged) {
        notifyMembers();
    }
    for (const QString &resource : std::as_const(claims)) {
        deleteClaim(resource, reason, leaver);
    }
    if (configChanged) {
        notifyConfig();
    }
}

void InProcessCluster::deleteClaim(const QString &resource, const QString &lostReason,
                                   InProcessClusterBackend *formerOwner)
{
    if (!m_claims.remove(resource)) {
        return;
    }
    if (lostReason.isEmpty()) {
        ++m_revision; // a release (a lease end counted its one revision already)
    } else {
        notify(formerOwner, [resource, lostReason](InProcessClusterBackend &self) {
            Q_EMIT self.claimLost(resource, lostReason);
        });
    }
    notifyAll([resource](InProcessClusterBackend &self) {
        Q_EMIT self.claimChanged(resource, std::nullopt);
    });
}

void InProcessCluster::notifyAll(const std::function<void(InProcessClusterBackend &)> &call)
{
    for (const Member &member : std::as_const(m_members)) {
        notify(member.backend, call);
    }
}

void InProcessCluster::notify(InProcessClusterBackend *backend,
                              std::function<void(InProcessClusterBackend &)> call)
{
    if (!backend) {
        return;
    }
    QPointer<InProcessClusterBackend> target(backend);
    backend->post([target, call = std::move(call)] {
        if (target) {
            call(*target);
        }
    });
}

void InProcessCluster::notifyMembers()
{
    const QList<NodeInfo> members = memberList();
    notifyAll([members](InProcessClusterBackend &self) { Q_EMIT self.membersChanged(members); });
}

void InProcessCluster::notifyConfig()
{
    const ConfigSnapshot current = snapshot();
    notifyAll([current](InProcessClusterBackend &self) { Q_EMIT self.configChanged(current); });
}

} // namespace rt::cluster
