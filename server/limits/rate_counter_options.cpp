#include "server/limits/rate_counter_options.h"

namespace rt::limits {

RateCounterOptions RateCounterOptions::forKind(RateCounterKind kind,
                                               std::optional<double> limitValue)
{
    RateCounterOptions options;
    RateLimit::Measurement measurement = RateLimit::Measurement::Average;
    switch (kind) {
    case RateCounterKind::Events:
    case RateCounterKind::DbEvents:
    case RateCounterKind::PresenceEvents:
    case RateCounterKind::Joins:
        // 5 s x 12 = a 60 s window (lib/realtime/tenants.ex).
        options.tickMs = 5000;
        options.maxBuckets = 12;
        break;
    case RateCounterKind::Requests:
        options.tickMs = 1000;
        options.maxBuckets = 60;
        limitValue.reset();
        break;
    case RateCounterKind::DatabaseConnect:
        options.tickMs = 1000;
        options.maxBuckets = 5;
        measurement = RateLimit::Measurement::Sum;
        break;
    case RateCounterKind::AuthorizationErrors:
    case RateCounterKind::SubscriptionErrors:
        options.tickMs = 1000;
        options.maxBuckets = 30;
        measurement = RateLimit::Measurement::Sum;
        break;
    }
    if (limitValue) {
        options.limit = RateLimit{ *limitValue, measurement };
    }
    return options;
}

} // namespace rt::limits
