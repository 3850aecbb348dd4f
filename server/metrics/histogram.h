#pragma once

#include "server/metrics/metric_types.h"

#include <QtGlobal>

#include <atomic>
#include <memory>
#include <vector>

namespace rt::metrics {

// One series of a histogram family: observation counts per bucket plus their sum. observe() is
// lock-free from any thread: one relaxed atomic add on the bucket and a compare-and-swap on the
// sum. Buckets follow Prometheus: an observation v counts in every bucket whose bound b has
// v <= b (upstream's Peep uses v < b; the bounds, not the placement of ties, are what dashboards
// see). Shared like Counter (family plus the callers' std::shared_ptr); the bounds are an
// immutable vector shared with the family, so a series that outlives its registry stays valid.
class alignas(CacheLineBytes) Histogram
{
public:
    explicit Histogram(std::shared_ptr<const std::vector<double>> bounds);
    Histogram(const Histogram &) = delete;
    Histogram &operator=(const Histogram &) = delete;

    // NaN is ignored (it would turn the sum into NaN for good).
    void observe(double value) noexcept;

    const std::vector<double> &bounds() const noexcept { return *m_bounds; }
    // Per bound, the number of observations <= that bound, followed by the +Inf bucket (= count).
    // Consistent in itself (monotonic, last == count) even while other threads observe.
    std::vector<quint64> cumulativeCounts() const;
    quint64 count() const;
    double sum() const noexcept { return m_sum.load(std::memory_order_relaxed); }

private:
    static constexpr std::size_t CountsPerLine = CacheLineBytes / sizeof(std::atomic<quint64>);
    // The bucket counts are spread over whole cache lines of their own, so two series never
    // share a line.
    struct alignas(CacheLineBytes) CountLine
    {
        std::atomic<quint64> counts[CountsPerLine]{};
    };

    std::atomic<quint64> &bucket(std::size_t index) const noexcept
    {
        return m_lines[index / CountsPerLine].counts[index % CountsPerLine];
    }

    std::shared_ptr<const std::vector<double>> m_bounds;
    std::unique_ptr<CountLine[]> m_lines; // bounds().size() + 1 counters, the last for +Inf
    std::atomic<double> m_sum{ 0 };
};

} // namespace rt::metrics
