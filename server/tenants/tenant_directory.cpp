#include "server/tenants/tenant_directory.h"

namespace rt::tenants {

TenantDirectory::TenantDirectory() : m_snapshot(std::make_shared<const Snapshot>()) { }

std::shared_ptr<const TenantDirectory::Snapshot> TenantDirectory::snapshot() const
{
    const QMutexLocker lock(&m_mutex);
    return m_snapshot;
}

TenantPtr TenantDirectory::find(const QByteArray &externalId) const
{
    return snapshot()->value(externalId);
}

QList<TenantPtr> TenantDirectory::all() const
{
    return snapshot()->values();
}

qsizetype TenantDirectory::size() const
{
    return snapshot()->size();
}

void TenantDirectory::replaceAll(const QList<TenantPtr> &tenants)
{
    auto next = std::make_shared<Snapshot>();
    for (const TenantPtr &tenant : tenants) {
        next->insert(tenant->externalId, tenant);
    }
    const QMutexLocker lock(&m_mutex);
    m_snapshot = std::move(next);
}

void TenantDirectory::upsert(const TenantPtr &tenant)
{
    const QMutexLocker lock(&m_mutex);
    auto next = std::make_shared<Snapshot>(*m_snapshot);
    next->insert(tenant->externalId, tenant);
    m_snapshot = std::move(next);
}

void TenantDirectory::remove(const QByteArray &externalId)
{
    const QMutexLocker lock(&m_mutex);
    auto next = std::make_shared<Snapshot>(*m_snapshot);
    next->remove(externalId);
    m_snapshot = std::move(next);
}

std::shared_ptr<TenantUsage> TenantUsageRegistry::usage(const QByteArray &externalId)
{
    const QMutexLocker lock(&m_mutex);
    std::shared_ptr<TenantUsage> &slot = m_usage[externalId];
    if (!slot) {
        slot = std::make_shared<TenantUsage>();
    }
    return slot;
}

QList<QPair<QByteArray, int>> TenantUsageRegistry::connectedUsers() const
{
    QList<QPair<QByteArray, int>> result;
    const QMutexLocker lock(&m_mutex);
    for (auto it = m_usage.cbegin(); it != m_usage.cend(); ++it) {
        const int users = it.value()->connectedUsers.load(std::memory_order_relaxed);
        if (users > 0) {
            result.append({ it.key(), users });
        }
    }
    return result;
}

} // namespace rt::tenants
