#pragma once

#include "server/cluster/cluster_backend.h"
#include "shared/core/clock.h"

#include <QHash>
#include <QList>
#include <QMap>
#include <QObject>
#include <QPointer>
#include <QTimer>

#include <functional>

namespace rt::cluster {

class InProcessClusterBackend;

// The shared state of a cluster that lives in one process: members, claims and configuration
// with etcd's semantics (one revision counter, leases, create-if-absent, compare-and-swap).
// It is the single-node embedded default (one InProcessClusterBackend) and the tests'
// multi-node cluster (several backends, one per simulated node).
//
// Leases: a node's lease is renewed as long as its backend runs (in one process a keepalive
// cannot fail), unless InProcessClusterBackend::suspendKeepAlive() simulates a hung or crashed
// node: then it expires leaseTtlMs later on the cluster's clock. Temporary configuration
// entries hold a lease of their own that is never renewed. Expiry is checked by sweep(), which
// a timer calls every sweepIntervalMs; tests that drive a ManualClock call sweep() themselves.
//
// Lives on the cluster thread, with every backend attached to it; use it only there. Every
// notification to a backend is queued (never delivered inside the call that caused it) and
// carries the state as of that change, so each backend sees changes in revision order.
class InProcessCluster : public QObject
{
    Q_OBJECT
public:
    explicit InProcessCluster(const Clock &clock = SystemClock::instance(),
                              QObject *parent = nullptr);
    ~InProcessCluster() override;

    void setLeaseTtlMs(qint64 ttlMs) { m_leaseTtlMs = ttlMs; }
    qint64 leaseTtlMs() const { return m_leaseTtlMs; }
    void setSweepIntervalMs(int intervalMs) { m_sweepTimer.setInterval(intervalMs); }

    // Ends every lease whose deadline has passed on the clock (and the keys bound to it).
    void sweep();
    // Simulates the death of a node: its lease ends now; peers see it leave and its claims
    // vanish; its backend gets claimLost for what it held and is no longer a member.
    void expireNode(const QString &nodeId);
    qint64 revision() const { return m_revision; }

private:
    friend class InProcessClusterBackend;

    struct Lease
    {
        qint64 ttlMs = 0;
        qint64 deadlineMs = 0; // on clock.monotonicMs(); only when !keptAlive
        bool keptAlive = false;
    };
    struct Member
    {
        NodeInfo info;
        qint64 lease = 0;
        QPointer<InProcessClusterBackend> backend;
    };
    struct StoredClaim
    {
        Claim claim;
        qint64 lease = 0;
    };
    struct StoredConfig
    {
        ConfigEntry entry;
        qint64 lease = 0;
    };

    // Called by the backends.
    bool registerNode(InProcessClusterBackend *backend, const NodeInfo &self);
    void unregisterNode(const QString &nodeId);
    void updateNode(const NodeInfo &self);
    void suspendKeepAlive(const QString &nodeId);
    QList<NodeInfo> memberList() const;
    void claim(InProcessClusterBackend *backend, const QString &resource,
               const QByteArray &metadata);
    void updateClaim(InProcessClusterBackend *backend, const QString &resource,
                     const QByteArray &metadata);
    void release(InProcessClusterBackend *backend, const QString &resource);
    std::optional<Claim> claimOf(const QString &resource) const;
    QStringList claimsOf(const QString &nodeId) const;
    ConfigSnapshot snapshot() const;
    // When each temporary entry's lease runs out, wall clock ms, by key.
    QHash<QString, qint64> configExpiries() const;
    ConfigWriteResult putConfig(const QString &key, const QByteArray &value,
                                qint64 expectedModRevision, int ttlSeconds);
    ConfigWriteResult deleteConfig(const QString &key, qint64 expectedModRevision);

    void endLease(qint64 lease, const QString &reason);
    // lostReason empty: a release (no claimLost); otherwise formerOwner gets claimLost.
    void deleteClaim(const QString &resource, const QString &lostReason,
                     InProcessClusterBackend *formerOwner);
    // Queues `call` on every registered backend (in registration order).
    void notifyAll(const std::function<void(InProcessClusterBackend &)> &call);
    void notify(InProcessClusterBackend *backend,
                std::function<void(InProcessClusterBackend &)> call);
    void notifyMembers();
    void notifyConfig();

    const Clock &m_clock;
    QTimer m_sweepTimer;
    qint64 m_leaseTtlMs = 10'000;
    qint64 m_revision = 1; // etcd starts at 1 too
    qint64 m_nextLease = 1;
    QHash<qint64, Lease> m_leases;
    QMap<QString, Member> m_members; // by node id
    QMap<QString, StoredClaim> m_claims; // by resource
    QMap<QString, StoredConfig> m_config; // by key
};

// One node's view of an InProcessCluster (see ClusterBackend for the contract). Lives on the
// cluster thread, like its InProcessCluster; use it only there.
class InProcessClusterBackend final : public ClusterBackend
{
    Q_OBJECT
public:
    explicit InProcessClusterBackend(InProcessCluster &cluster, QObject *parent = nullptr);
    ~InProcessClusterBackend() override;

    void start(const NodeInfo &self) override;
    void stop() override;
    void updateSelf(const NodeInfo &self) override;
    QList<NodeInfo> members() const override;
    QString nodeId() const override { return m_self.id; }
    bool isAvailable() const override { return m_registered; }

    void claim(const QString &resource, const QByteArray &metadata) override;
    void updateClaim(const QString &resource, const QByteArray &metadata) override;
    void release(const QString &resource) override;
    std::optional<Claim> claimOf(const QString &resource) const override;
    QStringList ownedClaims() const override;

    ConfigSnapshot configSnapshot() const override;
    void putConfig(const QString &key, const QByteArray &value, qint64 expectedModRevision,
                   int ttlSeconds, ConfigCallback done) override;
    void deleteConfig(const QString &key, qint64 expectedModRevision, ConfigCallback done) override;
    QHash<QString, qint64> configExpiries() const override;

    // Test hook: this node stops renewing its lease (a hung or crashed process); it expires
    // leaseTtlMs later on the cluster's clock, at the next sweep().
    void suspendKeepAlive();

private:
    friend class InProcessCluster;

    void post(std::function<void()> call);
    // The cluster ended this node's lease: it is no longer a member.
    void leaseEnded() { m_registered = false; }

    QPointer<InProcessCluster> m_cluster;
    NodeInfo m_self;
    bool m_started = false;
    bool m_registered = false;
};

} // namespace rt::cluster
