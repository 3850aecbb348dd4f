#pragma once

#include "server/metrics/metric_types.h"

#include <QtGlobal>

#include <atomic>

namespace rt::metrics {

// One series of a counter family: a count that only goes up (events, bytes). inc() is a relaxed
// atomic add, callable from any thread without locks. Shared by its family and by every caller
// that keeps the std::shared_ptr from Family::labels(); it outlives whichever lets go last.
class alignas(CacheLineBytes) Counter
{
public:
    Counter() = default;
    Counter(const Counter &) = delete;
    Counter &operator=(const Counter &) = delete;

    void inc(quint64 delta = 1) noexcept { m_value.fetch_add(delta, std::memory_order_relaxed); }
    quint64 value() const noexcept { return m_value.load(std::memory_order_relaxed); }

private:
    std::atomic<quint64> m_value{ 0 };
};

} // namespace rt::metrics
