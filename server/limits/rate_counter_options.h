#pragma once

#include "server/limits/rate_counter_key.h"

#include <QtGlobal>

#include <optional>

namespace rt::limits {

// A limit on a RateCounter (upstream's `limit: [value:, measurement:]`). It is evaluated only at
// ticks: not triggered and measurement >= value -> triggered; triggered and measurement < value
// -> released. A value of 0 is allowed and triggers permanently from the first tick.
struct RateLimit
{
    enum class Measurement {
        Average, // events per second over the retained samples (upstream :avg)
        Sum, // total of the retained samples (upstream :sum)
    };

    double value = 0.0;
    Measurement measurement = Measurement::Average;

    friend bool operator==(const RateLimit &, const RateLimit &) = default;
};

// How a RateCounter samples and what it limits. A value type.
struct RateCounterOptions
{
    // Upstream's defaults (Realtime.RateCounter): tick 1 s, 60 samples, idle shutdown 5 min.
    static constexpr qint64 DefaultTickMs = 1000;
    static constexpr int DefaultMaxBuckets = 60;
    static constexpr qint64 DefaultIdleShutdownMs = qint64{ 5 } * 60 * 1000;

    qint64 tickMs = DefaultTickMs; // > 0; the sampling interval
    int maxBuckets = DefaultMaxBuckets; // > 0; samples retained (window = tickMs * maxBuckets)
    // Every idleShutdownMs the counter checks whether all retained samples are 0; if so it
    // expires (RateCounter::expireIfIdle). <= 0 disables expiry (upstream :infinity).
    qint64 idleShutdownMs = DefaultIdleShutdownMs;
    std::optional<RateLimit> limit; // none: never triggered

    friend bool operator==(const RateCounterOptions &, const RateCounterOptions &) = default;

    // The settings of upstream's counter of `kind` (§5.2: tick/buckets and the measurement its
    // limit uses) with `limitValue` as the limit's value; no value means no limit. The tenant
    // field to pass: Events and DbEvents max_events_per_second, PresenceEvents
    // max_presence_events_per_second, Joins max_joins_per_second, DatabaseConnect 3,
    // AuthorizationErrors settings.db_pool, SubscriptionErrors the subscriber pool size.
    // Requests never has a limit (limitValue is ignored); the HTTP check is done on its average
    // by computeRateLimitHeaders().
    static RateCounterOptions forKind(RateCounterKind kind,
                                      std::optional<double> limitValue = std::nullopt);
};

} // namespace rt::limits
