#pragma once

#include <QByteArray>
#include <QtGlobal>

#include <array>
#include <utility>

namespace rt::limits {

// The HTTP rate headers of upstream's RateLimiter plug (docs/upstream/tenants-limits-metrics.md
// §5.5), set on every response of a known tenant's /api/ping and /api/broadcast* requests.
// A value type; pure.
struct RateLimitHeaders
{
    qint64 rolling = 0; // x-rate-rolling: trunc(average of the tenant's requests counter)
    qint64 limit = 0; // x-rate-limit: the tenant's max_events_per_second
    qint64 remaining = 0; // x-rate-limit-remaining: limit - rolling; may be negative
    // rolling >= limit: the plug answers 429 {"message":"Too many requests"} and stops.
    bool isLimited = false;

    friend bool operator==(const RateLimitHeaders &, const RateLimitHeaders &) = default;

    // The three headers as (lower-case name, decimal value) pairs, in the order above.
    std::array<std::pair<QByteArray, QByteArray>, 3> toHttpHeaders() const;
};

// The headers for a request counted into the requests counter whose last-tick average is
// `requestsAverage` (RateCounter::average() of RateCounterKind::Requests, read after the add),
// under the tenant's max_events_per_second. Any thread.
RateLimitHeaders computeRateLimitHeaders(double requestsAverage, qint64 maxEventsPerSecond);

} // namespace rt::limits
