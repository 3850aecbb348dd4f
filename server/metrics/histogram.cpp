#include "server/metrics/histogram.h"

#include <algorithm>
#include <cmath>

namespace rt::metrics {

Histogram::Histogram(std::shared_ptr<const std::vector<double>> bounds)
    : m_bounds(std::move(bounds)),
      m_lines(std::make_unique<CountLine[]>(m_bounds->size() / CountsPerLine + 1))
{ }

void Histogram::observe(double value) noexcept
{
    if (std::isnan(value)) {
        return;
    }
    const std::vector<double> &bounds = *m_bounds;
    // First bound >= value; past the end means the +Inf bucket.
    const auto index =
            std::size_t(std::lower_bound(bounds.begin(), bounds.end(), value) - bounds.begin());
    bucket(index).fetch_add(1, std::memory_order_relaxed);
    double current = m_sum.load(std::memory_order_relaxed);
    while (!m_sum.compare_exchange_weak(current, current + value, std::memory_order_relaxed)) { }
}

std::vector<quint64> Histogram::cumulativeCounts() const
{
    const std::size_t buckets = m_bounds->size() + 1;
    std::vector<quint64> counts(buckets);
    quint64 running = 0;
    for (std::size_t i = 0; i < buckets; ++i) {
        running += bucket(i).load(std::memory_order_relaxed);
        counts[i] = running;
    }
    return counts;
}

quint64 Histogram::count() const
{
    quint64 total = 0;
    for (std::size_t i = 0; i <= m_bounds->size(); ++i) {
        total += bucket(i).load(std::memory_order_relaxed);
    }
    return total;
}

} // namespace rt::metrics
