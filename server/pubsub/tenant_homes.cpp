#include "server/pubsub/tenant_homes.h"

#include <QObject>
#include <QTimer>

#include <algorithm>
#include <atomic>
#include <memory>

namespace rt::pubsub {

TenantHomes::TenantHomes(HomeLost homeLost) : m_homeLost(std::move(homeLost)) { }

QList<QByteArray> TenantHomes::homesHere() const
{
    QList<QByteArray> here;
    {
        const std::lock_guard lock(m_mutex);
        for (auto it = m_homes.cbegin(); it != m_homes.cend(); ++it) {
            if (it.value() == m_self) {
                here.append(it.key());
            }
        }
    }
    std::sort(here.begin(), here.end());
    return here;
}

void TenantHomes::setSelf(const QString &nodeId)
{
    const std::lock_guard lock(m_mutex);
    m_self = nodeId;
}

TenantHomes::Home TenantHomes::homeOf(const QByteArray &tenantId) const
{
    const std::lock_guard lock(m_mutex);
    const auto it = m_homes.constFind(tenantId);
    if (it == m_homes.constEnd()) {
        return {};
    }
    if (it.value() == m_self) {
        return Home{ Where::Here, it.value() };
    }
    return Home{ m_connected.contains(it.value()) ? Where::Remote : Where::Unreachable,
                 it.value() };
}

bool TenantHomes::awaitKnown(const QByteArray &tenantId, QObject *receiver,
                             std::function<void()> known, int timeoutMs) const
{
    auto done = std::make_shared<std::atomic<bool>>(false);
    std::function<void()> once = [done, known = std::move(known)] {
        if (!done->exchange(true)) {
            known();
        }
    };
    {
        const std::lock_guard lock(m_mutex);
        if (m_homes.contains(tenantId)) {
            return true;
        }
        // Waits that ended by their timeout go now: while no home can be claimed (etcd out of
        // reach) joins keep coming, and each waiter holds its join.
        m_waiters.removeIf([](QMultiHash<QByteArray, Waiter>::iterator it) {
            return it.value().done->load();
        });
        m_waiters.insert(tenantId, Waiter{ receiver, once, done });
    }
    QTimer::singleShot(timeoutMs, receiver, once);
    return false;
}

void TenantHomes::setHome(const QByteArray &tenantId, const QString &nodeId)
{
    bool lost = false;
    QList<Waiter> waiters;
    {
        const std::lock_guard lock(m_mutex);
        const QString previous = m_homes.value(tenantId);
        lost = previous == m_self && nodeId != m_self;
        if (nodeId.isEmpty()) {
            m_homes.remove(tenantId);
        } else {
            m_homes.insert(tenantId, nodeId);
            waiters = m_waiters.values(tenantId);
            m_waiters.remove(tenantId);
        }
    }
    for (const Waiter &waiter : std::as_const(waiters)) {
        QMetaObject::invokeMethod(waiter.receiver, waiter.once, Qt::QueuedConnection);
    }
    if (lost && m_homeLost) {
        m_homeLost(tenantId);
    }
}

void TenantHomes::setConnected(const QString &nodeId, bool connected)
{
    const std::lock_guard lock(m_mutex);
    if (connected) {
        m_connected.insert(nodeId);
    } else {
        m_connected.remove(nodeId);
    }
}

void TenantHomes::clear()
{
    QList<QByteArray> lost;
    {
        const std::lock_guard lock(m_mutex);
        for (auto it = m_homes.cbegin(); it != m_homes.cend(); ++it) {
            if (it.value() == m_self) {
                lost.append(it.key());
            }
        }
        m_homes.clear();
    }
    if (m_homeLost) {
        for (const QByteArray &tenantId : std::as_const(lost)) {
            m_homeLost(tenantId);
        }
    }
}

} // namespace rt::pubsub
