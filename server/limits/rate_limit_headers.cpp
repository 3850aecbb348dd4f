#include "server/limits/rate_limit_headers.h"

#include <cmath>
#include <limits>

namespace rt::limits {

namespace {

// Elixir's trunc/1 on the float average, saturated to the integer range. An average is never
// negative or NaN; treat one as 0 rather than produce undefined behaviour.
qint64 truncated(double average)
{
    if (!(average > 0.0)) {
        return 0;
    }
    constexpr double Max = 9.2e18; // below 2^63, exactly representable enough for a header
    if (average >= Max) {
        return static_cast<qint64>(Max);
    }
    return static_cast<qint64>(std::trunc(average));
}

} // namespace

std::array<std::pair<QByteArray, QByteArray>, 3> RateLimitHeaders::toHttpHeaders() const
{
    return { {
            { QByteArrayLiteral("x-rate-rolling"), QByteArray::number(rolling) },
            { QByteArrayLiteral("x-rate-limit"), QByteArray::number(limit) },
            { QByteArrayLiteral("x-rate-limit-remaining"), QByteArray::number(remaining) },
    } };
}

RateLimitHeaders computeRateLimitHeaders(double requestsAverage, qint64 maxEventsPerSecond)
{
    RateLimitHeaders headers;
    headers.rolling = truncated(requestsAverage);
    headers.limit = maxEventsPerSecond;
    headers.remaining = maxEventsPerSecond - headers.rolling;
    headers.isLimited = headers.rolling >= maxEventsPerSecond;
    return headers;
}

} // namespace rt::limits
