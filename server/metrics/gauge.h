#pragma once

#include "server/metrics/metric_types.h"

#include <atomic>

namespace rt::metrics {

// One series of a gauge family: a value that goes up and down (connected sockets). Lock-free:
// set() is an atomic store, inc()/dec()/add() a compare-and-swap loop on the double; any thread.
// Shared like Counter (family plus the callers' std::shared_ptr).
class alignas(CacheLineBytes) Gauge
{
public:
    Gauge() = default;
    Gauge(const Gauge &) = delete;
    Gauge &operator=(const Gauge &) = delete;

    void set(double value) noexcept { m_value.store(value, std::memory_order_relaxed); }
    void add(double delta) noexcept
    {
        double current = m_value.load(std::memory_order_relaxed);
        while (!m_value.compare_exchange_weak(current, current + delta,
                                              std::memory_order_relaxed)) { }
    }
    void inc(double delta = 1) noexcept { add(delta); }
    void dec(double delta = 1) noexcept { add(-delta); }
    double value() const noexcept { return m_value.load(std::memory_order_relaxed); }

private:
    std::atomic<double> m_value{ 0 };
};

} // namespace rt::metrics
