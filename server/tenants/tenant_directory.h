#pragma once

#include "server/tenants/limit_overrides.h"
#include "server/tenants/tenant.h"

#include <QHash>
#include <QList>
#include <QMutex>

#include <atomic>
#include <functional>
#include <memory>

namespace rt::tenants {

// The tenants this node serves, readable from any thread. Readers take an immutable snapshot
// (one mutex-guarded shared_ptr copy); writers (the control plane, the cluster configuration)
// publish a new snapshot.
//
// Two layers: the tenants as stored in the control plane (replaceAll/upsert/remove) and the
// cluster configuration's per-tenant overrides (setLimitOverrides). find()/all() give the
// effective tenant, stored settings with the overrides applied: what sockets, rate counters and
// the connect checks must use. findStored()/allStored() give the stored rows: what the tenant
// management API shows and what the control plane compares its database with. Overrides are
// kept by external id independently of the stored tenants: they survive control-plane writes
// and reloads, and apply to a tenant created later. When no override changes anything, the
// effective tenant is the very same object as the stored one.
class TenantDirectory
{
public:
    TenantDirectory();

    TenantPtr find(const QByteArray &externalId) const; // effective
    QList<TenantPtr> all() const; // effective
    TenantPtr findStored(const QByteArray &externalId) const;
    QList<TenantPtr> allStored() const;
    qsizetype size() const;

    // Control-plane writes: stored tenants. The current overrides apply to them at once.
    void replaceAll(const QList<TenantPtr> &tenants);
    void upsert(const TenantPtr &tenant);
    void remove(const QByteArray &externalId);

    // A tenant whose effective settings changed because the overrides changed.
    struct OverrideChange
    {
        QByteArray externalId;
        // Its effective suspend or private_only flag changed: its sockets must be disconnected
        // (like a control-plane change of either; suspended tenants' clients must go, resumed
        // ones reconnect, public channels of a tenant now private-only must be refused).
        bool disconnectSockets = false;

        friend bool operator==(const OverrideChange &, const OverrideChange &) = default;
    };
    // Replaces every override (external id -> overrides; empty overrides are dropped) and
    // publishes the new effective tenants. Returns the stored tenants whose effective settings
    // changed, sorted by external id: the caller restarts their rate counters
    // (TenantRates::applyTenantChange with find()) and disconnects sockets where told.
    // Thread-safe, like every other writer.
    QList<OverrideChange> setLimitOverrides(QHash<QByteArray, LimitOverrides> overrides);
    // The overrides last set for a tenant (empty if none).
    LimitOverrides limitOverrides(const QByteArray &externalId) const;

private:
    struct Snapshot
    {
        QHash<QByteArray, TenantPtr> stored;
        QHash<QByteArray, TenantPtr> effective; // same keys as `stored`
    };
    std::shared_ptr<const Snapshot> snapshot() const;
    void publish(std::shared_ptr<const Snapshot> next);
    TenantPtr effectiveOf(const TenantPtr &stored) const; // m_writeMutex held

    // Writers hold m_writeMutex for their whole read-modify-publish, so concurrent writers
    // (db thread, cluster thread) never lose each other's change; m_mutex only guards the
    // pointer swap, so readers never wait for a writer's work.
    mutable QMutex m_writeMutex;
    QHash<QByteArray, LimitOverrides> m_overrides; // guarded by m_writeMutex
    mutable QMutex m_mutex;
    std::shared_ptr<const Snapshot> m_snapshot; // guarded by m_mutex
};

// Live per-tenant figures shared by every worker of this node (atomics, no locks on use).
struct TenantUsage
{
    std::atomic<int> connectedUsers{ 0 }; // sockets with at least one joined channel
    // The same figure on the other nodes of the cluster, as they last reported it
    // (app::ClusterCounters); 0 on a single node. max_concurrent_users applies to the sum.
    std::atomic<int> remoteUsers{ 0 };

    // This node's users plus the other nodes': what max_concurrent_users is checked against.
    int clusterUsers() const
    {
        return connectedUsers.load(std::memory_order_relaxed)
                + remoteUsers.load(std::memory_order_relaxed);
    }
};

// Tenant external id -> its usage counters, created on first use and kept for the process
// lifetime (a few dozen bytes per tenant ever seen).
class TenantUsageRegistry
{
public:
    std::shared_ptr<TenantUsage> usage(const QByteArray &externalId);
    // Tenant -> connected users, for every tenant with at least one (metrics, health).
    QList<QPair<QByteArray, int>> connectedUsers() const;
    // The same across the cluster (this node's users plus the others' last reports).
    QList<QPair<QByteArray, int>> clusterConnectedUsers() const;

private:
    mutable QMutex m_mutex;
    QHash<QByteArray, std::shared_ptr<TenantUsage>> m_usage; // guarded by m_mutex
};

} // namespace rt::tenants
