#include "shared/core/clock.h"

#include <chrono>

namespace rt {

qint64 SystemClock::monotonicMs() const
{
    using namespace std::chrono;
    return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

qint64 SystemClock::epochMs() const
{
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

const SystemClock &SystemClock::instance()
{
    static const SystemClock TheClock;
    return TheClock;
}

} // namespace rt
