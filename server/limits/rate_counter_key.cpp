#include "server/limits/rate_counter_key.h"

#include <QHashFunctions>

namespace rt::limits {

QLatin1String kindName(RateCounterKind kind)
{
    switch (kind) {
    case RateCounterKind::Events:
        return QLatin1String("events");
    case RateCounterKind::DbEvents:
        return QLatin1String("db_events");
    case RateCounterKind::PresenceEvents:
        return QLatin1String("presence_events");
    case RateCounterKind::Joins:
        return QLatin1String("joins");
    case RateCounterKind::Requests:
        return QLatin1String("requests");
    case RateCounterKind::DatabaseConnect:
        return QLatin1String("database_connect");
    case RateCounterKind::AuthorizationErrors:
        return QLatin1String("authorization_errors");
    case RateCounterKind::SubscriptionErrors:
        return QLatin1String("subscription_errors");
    }
    return QLatin1String("unknown");
}

QString RateCounterKey::toString() const
{
    return tenantId + QLatin1Char('/') + kindName(kind);
}

std::size_t RateCounterKeyHash::operator()(const RateCounterKey &key) const noexcept
{
    return qHash(key.tenantId, static_cast<std::size_t>(key.kind));
}

} // namespace rt::limits
