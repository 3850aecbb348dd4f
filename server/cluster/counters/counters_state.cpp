#include "server/cluster/counters/counters_state.h"

#include <algorithm>
#include <climits>
#include <mutex>
#include <utility>

namespace rt::cluster::counters {

namespace {

QList<QByteArray> sortedKeys(const UsersByTenant &users)
{
    QList<QByteArray> keys = users.keys();
    std::sort(keys.begin(), keys.end());
    return keys;
}

} // namespace

std::optional<Message> LocalReport::update(const UsersByTenant &usersNow, const RateCounts &rates)
{
    // Tenant -> its entry in the message, built in tenant order.
    QMap<QByteArray, TenantFigures> figures;
    const auto entry = [&figures](const QByteArray &tenant) -> TenantFigures & {
        TenantFigures &slot = figures[tenant];
        slot.tenantId = tenant;
        return slot;
    };
    UsersByTenant next;
    for (auto it = usersNow.cbegin(); it != usersNow.cend(); ++it) {
        if (it.value() <= 0 || it.key().size() > MaxTenantIdBytes) {
            continue;
        }
        next.insert(it.key(), it.value());
        if (m_reported.value(it.key()) != it.value()) {
            entry(it.key()).users = it.value();
        }
    }
    for (auto it = m_reported.cbegin(); it != m_reported.cend(); ++it) {
        if (!next.contains(it.key())) {
            entry(it.key()).users = 0;
        }
    }
    for (auto tenant = rates.cbegin(); tenant != rates.cend(); ++tenant) {
        if (tenant.key().size() > MaxTenantIdBytes) {
            continue;
        }
        for (auto rate = tenant.value().cbegin(); rate != tenant.value().cend(); ++rate) {
            if (rate.value() > 0 && isClusterWide(rate.key())) {
                entry(tenant.key()).rates.append(RateFigure{ rate.key(), rate.value() });
            }
        }
    }
    m_reported = std::move(next);
    // A tenant named only for its rates carries no users figure, and one whose rates were all
    // filtered out above is left out entirely.
    Message message;
    for (TenantFigures &tenant : figures) {
        if (tenant.users || !tenant.rates.isEmpty()) {
            message.tenants.append(std::move(tenant));
        }
    }
    if (message.tenants.isEmpty()) {
        return std::nullopt;
    }
    return message;
}

Message LocalReport::sync() const
{
    Message message;
    for (const QByteArray &tenant : sortedKeys(m_reported)) {
        message.tenants.append(TenantFigures{ tenant, m_reported.value(tenant), {} });
    }
    return message;
}

void RemoteFigures::apply(const QString &peer, const Message &message, bool isSync)
{
    if (isSync) {
        // Tenants the sync no longer names have no users on the peer any more.
        QSet<QByteArray> named;
        for (const TenantFigures &tenant : message.tenants) {
            if (tenant.users) {
                named.insert(tenant.tenantId);
            }
        }
        const UsersByTenant held = m_peers.value(peer);
        for (auto it = held.cbegin(); it != held.cend(); ++it) {
            if (!named.contains(it.key())) {
                setUsers(peer, it.key(), 0);
            }
        }
    }
    for (const TenantFigures &tenant : message.tenants) {
        if (tenant.users) {
            setUsers(peer, tenant.tenantId, *tenant.users);
        }
    }
}

bool RemoteFigures::dropPeer(const QString &peer)
{
    const auto it = m_peers.constFind(peer);
    if (it == m_peers.cend()) {
        return false;
    }
    // A copy, not a reference: setUsers() below changes m_peers.
    // NOLINTNEXTLINE(performance-unnecessary-copy-initialization): see above
    const UsersByTenant held = it.value();
    for (auto tenant = held.cbegin(); tenant != held.cend(); ++tenant) {
        setUsers(peer, tenant.key(), 0);
    }
    m_peers.remove(peer);
    return true;
}

QStringList RemoteFigures::peers() const
{
    QStringList ids = m_peers.keys();
    ids.sort();
    return ids;
}

int RemoteFigures::total(const QByteArray &tenant) const
{
    return static_cast<int>(qMin<qint64>(m_totals.value(tenant), INT_MAX));
}

QHash<QByteArray, int> RemoteFigures::takeChangedTotals()
{
    QHash<QByteArray, int> changed;
    for (const QByteArray &tenant : std::as_const(m_changed)) {
        changed.insert(tenant, total(tenant));
    }
    m_changed.clear();
    return changed;
}

UsersByNode RemoteFigures::usersByNode() const
{
    UsersByNode result;
    for (auto peer = m_peers.cbegin(); peer != m_peers.cend(); ++peer) {
        for (auto tenant = peer.value().cbegin(); tenant != peer.value().cend(); ++tenant) {
            result[tenant.key()].insert(peer.key(), tenant.value());
        }
    }
    return result;
}

void RemoteFigures::setUsers(const QString &peer, const QByteArray &tenant, int users)
{
    users = qMax(users, 0);
    UsersByTenant &held = m_peers[peer];
    const int before = held.value(tenant);
    if (before == users) {
        return;
    }
    if (users == 0) {
        held.remove(tenant);
    } else {
        held.insert(tenant, users);
    }
    const qint64 sum = m_totals.value(tenant) - before + users;
    if (sum <= 0) {
        m_totals.remove(tenant);
    } else {
        m_totals.insert(tenant, sum);
    }
    m_changed.insert(tenant);
}

QJsonObject usersView(const QString &selfId, const UsersByTenant &local, const UsersByNode &remote)
{
    UsersByNode all = remote;
    for (auto it = local.cbegin(); it != local.cend(); ++it) {
        if (it.value() > 0) {
            all[it.key()].insert(selfId, it.value());
        }
    }
    QJsonObject view;
    for (auto tenant = all.cbegin(); tenant != all.cend(); ++tenant) {
        QJsonObject nodes;
        for (auto node = tenant.value().cbegin(); node != tenant.value().cend(); ++node) {
            if (node.value() > 0) {
                nodes.insert(node.key(), node.value());
            }
        }
        if (!nodes.isEmpty()) {
            view.insert(QString::fromUtf8(tenant.key()), nodes);
        }
    }
    return view;
}

void CounterBoard::setCollecting(bool collecting)
{
    const std::lock_guard lock(m_mutex);
    m_collecting = collecting;
    if (!collecting) {
        m_rates.clear();
    }
}

void CounterBoard::noteTicks(const limits::RateCounterRegistry::TickPass &pass)
{
    const std::lock_guard lock(m_mutex);
    if (!m_collecting) {
        return;
    }
    for (const limits::TickedCounter &ticked : pass.ticked) {
        const qint64 count = ticked.tick.state.lastLocalCount;
        if (count > 0 && isClusterWide(ticked.key.kind)) {
            m_rates[ticked.key.tenantId.toUtf8()][ticked.key.kind] += count;
        }
    }
}

void CounterBoard::addLocal(const QByteArray &tenant, limits::RateCounterKind kind, qint64 count)
{
    const std::lock_guard lock(m_mutex);
    if (m_collecting && count > 0 && isClusterWide(kind)) {
        m_rates[tenant][kind] += count;
    }
}

RateCounts CounterBoard::takeLocalRates()
{
    const std::lock_guard lock(m_mutex);
    return std::exchange(m_rates, {});
}

void CounterBoard::setUsersView(const QJsonObject &view)
{
    const std::lock_guard lock(m_mutex);
    m_usersView = view;
}

QJsonObject CounterBoard::usersView() const
{
    const std::lock_guard lock(m_mutex);
    return m_usersView;
}

} // namespace rt::cluster::counters
