#pragma once

#include <QLatin1String>
#include <QString>

#include <cstddef>

namespace rt::limits {

// The per-tenant counters of upstream's Realtime.Tenants (docs/upstream/tenants-limits-metrics.md
// §5.2). The kind selects the tick, the bucket count and the measurement of the limit
// (RateCounterOptions::forKind).
enum class RateCounterKind {
    Events, // {:channel, :events, T}: broadcasts sent and delivered; max_events_per_second
    DbEvents, // {:channel, :db_events, T}: postgres_changes per WAL change; max_events_per_second
    PresenceEvents, // {:channel, :presence_events, T}: max_presence_events_per_second
    Joins, // {:channel, :joins, T}: max_joins_per_second
    Requests, // {:plug, :requests, T}: HTTP requests; no limit, feeds x-rate-rolling (§5.5)
    DatabaseConnect, // {:database, :connect, T}: failed tenant DB connects; limit 3 on the sum
    AuthorizationErrors, // {:channel, :authorization_errors, T}: RLS pool timeouts; db_pool, sum
    SubscriptionErrors, // {:channel, :subscription_errors, T}: subscriber pool size, sum
};

// The stable lower-case name of a kind ("events", "db_events", "presence_events", "joins",
// "requests", "database_connect", "authorization_errors", "subscription_errors"), for logs and
// metrics labels.
QLatin1String kindName(RateCounterKind kind);

// Identifies one counter of a RateCounterRegistry: a tenant (external id) and a kind. A value
// type; copy it freely between threads.
struct RateCounterKey
{
    QString tenantId;
    RateCounterKind kind = RateCounterKind::Events;

    friend bool operator==(const RateCounterKey &, const RateCounterKey &) = default;
    // "<tenant>/<kind>", for log lines.
    QString toString() const;
};

struct RateCounterKeyHash
{
    std::size_t operator()(const RateCounterKey &key) const noexcept;
};

} // namespace rt::limits
