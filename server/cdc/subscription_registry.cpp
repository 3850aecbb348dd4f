#include "server/cdc/subscription_registry.h"

namespace rt::cdc {

namespace {

QByteArray tableKey(const QByteArray &schema, const QByteArray &table)
{
    return schema + '\x1f' + table;
}

} // namespace

void SubscriptionRegistry::add(Subscriber subscriber)
{
    const quint64 memberId = subscriber.memberId;
    m_subscribers.insert(memberId, std::make_shared<Subscriber>(std::move(subscriber)));
    rebuildIndex();
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
    rebuildIndex();
    return ids;
}

const Subscriber *SubscriptionRegistry::find(quint64 memberId) const
{
    const auto it = m_subscribers.constFind(memberId);
    return it == m_subscribers.constEnd() ? nullptr : it.value().get();
}

const std::vector<SubscriptionRegistry::Entry> *
SubscriptionRegistry::bindingsOn(const QByteArray &schema, const QByteArray &table) const
{
    const auto it = m_byTable.constFind(tableKey(schema, table));
    return it == m_byTable.constEnd() ? nullptr : &it.value();
}

void SubscriptionRegistry::rebuildIndex()
{
    // Subscriptions change at join/leave rates, changes arrive far more often: an index rebuilt
    // per change of membership keeps matching a single hash lookup per change.
    m_byTable.clear();
    for (const auto &subscriber : std::as_const(m_subscribers)) {
        for (const Binding &binding : subscriber->bindings) {
            m_byTable[tableKey(binding.schema, binding.table)].push_back(
                    Entry{ subscriber.get(), &binding });
        }
    }
}

} // namespace rt::cdc
