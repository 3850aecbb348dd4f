#include "server/cdc/subscription_registry.h"

namespace rt::cdc {

namespace {

QByteArray tableKey(const QByteArray &schema, const QByteArray &table)
{
    return schema + '\x1f' + table;
}

} // namespace

SubscriptionRegistry::SubscriptionRegistry() : m_snapshot(std::make_shared<const Snapshot>()) { }

void SubscriptionRegistry::add(Subscriber subscriber)
{
    const quint64 memberId = subscriber.memberId;
    m_subscribers.insert(memberId, std::make_shared<const Subscriber>(std::move(subscriber)));
    rebuildSnapshot();
}

QList<QUuid> SubscriptionRegistry::remove(quint64 memberId)
{
    QList<QUuid> ids;
    const auto it = m_subscribers.find(memberId);
    if (it == m_subscribers.end()) {
        return ids;
    }
    for (const Binding &binding : it.value()->bindings) {
        ids.append(binding.subscriptionId);
    }
    m_subscribers.erase(it);
    rebuildSnapshot();
    return ids;
}

const Subscriber *SubscriptionRegistry::find(quint64 memberId) const
{
    const auto it = m_subscribers.constFind(memberId);
    return it == m_subscribers.constEnd() ? nullptr : it.value().get();
}

const std::vector<SubscriptionRegistry::Entry> *
SubscriptionRegistry::Snapshot::bindingsOn(const QByteArray &schema, const QByteArray &table) const
{
    const auto it = byTable.constFind(tableKey(schema, table));
    return it == byTable.constEnd() ? nullptr : &it.value();
}

void SubscriptionRegistry::rebuildSnapshot()
{
    // Subscriptions change at join/leave rates, changes arrive far more often: a snapshot built
    // per change of membership keeps matching a single hash lookup per change.
    auto snapshot = std::make_shared<Snapshot>();
    QHash<QByteArray, int> claimsSets;
    snapshot->subscribers.reserve(static_cast<size_t>(m_subscribers.size()));
    for (const auto &subscriber : std::as_const(m_subscribers)) {
        snapshot->subscribers.push_back(subscriber);
        auto known = claimsSets.constFind(subscriber->claimsJson);
        if (known == claimsSets.constEnd()) {
            known = claimsSets.insert(subscriber->claimsJson, int(claimsSets.size()));
        }
        const int claimsSet = known.value();
        for (const Binding &binding : subscriber->bindings) {
            snapshot->byTable[tableKey(binding.schema, binding.table)].push_back(
                    Entry{ subscriber.get(), &binding, claimsSet });
        }
    }
    snapshot->claimsSetCount = int(claimsSets.size());
    m_snapshot = std::move(snapshot);
}

} // namespace rt::cdc
