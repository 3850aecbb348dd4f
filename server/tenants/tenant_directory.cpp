#include "server/tenants/tenant_directory.h"

#include <QSet>

#include <algorithm>

namespace rt::tenants {

TenantDirectory::TenantDirectory() : m_snapshot(std::make_shared<const Snapshot>()) { }

std::shared_ptr<const TenantDirectory::Snapshot> TenantDirectory::snapshot() const
{
    const QMutexLocker lock(&m_mutex);
    return m_snapshot;
}

void TenantDirectory::publish(std::shared_ptr<const Snapshot> next)
{
    const QMutexLocker lock(&m_mutex);
    m_snapshot = std::move(next);
}

TenantPtr TenantDirectory::effectiveOf(const TenantPtr &stored) const
{
    const auto it = m_overrides.constFind(stored->externalId);
    if (it == m_overrides.cend() || !overridesChange(*stored, *it)) {
        return stored;
    }
    return std::make_shared<const Tenant>(applyOverrides(*stored, *it));
}

TenantPtr TenantDirectory::find(const QByteArray &externalId) const
{
    return snapshot()->effective.value(externalId);
}

QList<TenantPtr> TenantDirectory::all() const
{
    return snapshot()->effective.values();
}

TenantPtr TenantDirectory::findStored(const QByteArray &externalId) const
{
    return snapshot()->stored.value(externalId);
}

QList<TenantPtr> TenantDirectory::allStored() const
{
    return snapshot()->stored.values();
}

qsizetype TenantDirectory::size() const
{
    return snapshot()->stored.size();
}

void TenantDirectory::replaceAll(const QList<TenantPtr> &tenants)
{
    const QMutexLocker writing(&m_writeMutex);
    auto next = std::make_shared<Snapshot>();
    for (const TenantPtr &tenant : tenants) {
        next->stored.insert(tenant->externalId, tenant);
        next->effective.insert(tenant->externalId, effectiveOf(tenant));
    }
    publish(std::move(next));
}

void TenantDirectory::upsert(const TenantPtr &tenant)
{
    const QMutexLocker writing(&m_writeMutex);
    auto next = std::make_shared<Snapshot>(*snapshot());
    next->stored.insert(tenant->externalId, tenant);
    next->effective.insert(tenant->externalId, effectiveOf(tenant));
    publish(std::move(next));
}

void TenantDirectory::remove(const QByteArray &externalId)
{
    const QMutexLocker writing(&m_writeMutex);
    auto next = std::make_shared<Snapshot>(*snapshot());
    next->stored.remove(externalId);
    next->effective.remove(externalId);
    publish(std::move(next));
}

QList<TenantDirectory::OverrideChange>
TenantDirectory::setLimitOverrides(QHash<QByteArray, LimitOverrides> overrides)
{
    for (auto it = overrides.begin(); it != overrides.end();) {
        it = it->isEmpty() ? overrides.erase(it) : std::next(it);
    }
    const QMutexLocker writing(&m_writeMutex);
    // Only tenants with an old or a new override can change.
    QSet<QByteArray> touched;
    for (auto it = m_overrides.cbegin(); it != m_overrides.cend(); ++it) {
        touched.insert(it.key());
    }
    for (auto it = overrides.cbegin(); it != overrides.cend(); ++it) {
        touched.insert(it.key());
    }
    m_overrides = std::move(overrides);

    const std::shared_ptr<const Snapshot> current = snapshot();
    auto next = std::make_shared<Snapshot>(*current);
    QList<OverrideChange> changes;
    for (const QByteArray &externalId : std::as_const(touched)) {
        const TenantPtr stored = current->stored.value(externalId);
        if (!stored) {
            continue; // kept for when the tenant appears
        }
        const TenantPtr before = current->effective.value(externalId);
        const TenantPtr after = effectiveOf(stored);
        next->effective.insert(externalId, after);
        if (before && overridableSettings(*before) != overridableSettings(*after)) {
            // As for a control-plane update: suspending (or resuming) and private_only drop
            // the sockets; other settings apply to what comes next.
            const bool disconnect =
                    before->suspend != after->suspend || before->privateOnly != after->privateOnly;
            changes.append({ externalId, disconnect });
        }
    }
    publish(std::move(next));
    std::sort(changes.begin(), changes.end(), [](const OverrideChange &a, const OverrideChange &b) {
        return a.externalId < b.externalId;
    });
    return changes;
}

LimitOverrides TenantDirectory::limitOverrides(const QByteArray &externalId) const
{
    const QMutexLocker writing(&m_writeMutex);
    return m_overrides.value(externalId);
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

QList<QPair<QByteArray, int>> TenantUsageRegistry::clusterConnectedUsers() const
{
    QList<QPair<QByteArray, int>> result;
    const QMutexLocker lock(&m_mutex);
    for (auto it = m_usage.cbegin(); it != m_usage.cend(); ++it) {
        const int users = it.value()->clusterUsers();
        if (users > 0) {
            result.append({ it.key(), users });
        }
    }
    return result;
}

} // namespace rt::tenants
