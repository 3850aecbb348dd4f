#pragma once

#include "server/tenants/tenant.h"

#include <QHash>
#include <QList>
#include <QMutex>

#include <atomic>
#include <memory>

namespace rt::tenants {

// The tenants this node serves, readable from any thread. Readers take an immutable snapshot
// (one mutex-guarded shared_ptr copy); writers (the control plane) publish a new snapshot.
class TenantDirectory
{
public:
    TenantDirectory();

    TenantPtr find(const QByteArray &externalId) const;
    QList<TenantPtr> all() const;
    qsizetype size() const;

    void replaceAll(const QList<TenantPtr> &tenants);
    void upsert(const TenantPtr &tenant);
    void remove(const QByteArray &externalId);

private:
    using Snapshot = QHash<QByteArray, TenantPtr>;
    std::shared_ptr<const Snapshot> snapshot() const;

    mutable QMutex m_mutex;
    std::shared_ptr<const Snapshot> m_snapshot; // guarded by m_mutex
};

// Live per-tenant figures shared by every worker of this node (atomics, no locks on use).
// Counters are per node here; the cluster issue sums them across nodes.
struct TenantUsage
{
    std::atomic<int> connectedUsers{ 0 }; // sockets with at least one joined channel
};

// Tenant external id -> its usage counters, created on first use and kept for the process
// lifetime (a few dozen bytes per tenant ever seen).
class TenantUsageRegistry
{
public:
    std::shared_ptr<TenantUsage> usage(const QByteArray &externalId);
    // Tenant -> connected users, for every tenant with at least one (metrics, health).
    QList<QPair<QByteArray, int>> connectedUsers() const;

private:
    mutable QMutex m_mutex;
    QHash<QByteArray, std::shared_ptr<TenantUsage>> m_usage; // guarded by m_mutex
};

} // namespace rt::tenants
