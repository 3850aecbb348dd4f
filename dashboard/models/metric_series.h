#pragma once

#include <QList>
#include <QPointF>

#include <optional>

namespace rt::dashboard {

struct MetricSample
{
    qint64 atMs = 0; // wall clock, ms since the epoch
    double value = 0;

    friend bool operator==(const MetricSample &, const MetricSample &) = default;
};

// A bounded, time-ordered series of samples over a sliding window (e.g. a node's load over the
// last 10 minutes), as a chart draws it. Appending keeps only the samples within `windowMs` of
// the newest one and at most `capacity` samples (the oldest go first); a sample that is not newer
// than the newest is ignored, so feeding overlapping histories is harmless. A value type with
// implicitly shared storage: copying is cheap, and a copy is a consistent picture. Not thread-safe.
class MetricSeries
{
public:
    static constexpr qint64 DefaultWindowMs = 10LL * 60 * 1000;
    static constexpr qsizetype DefaultCapacity = 1200; // two samples a second over 10 minutes

    explicit MetricSeries(qint64 windowMs = DefaultWindowMs, qsizetype capacity = DefaultCapacity);

    // Adds a sample; false (and nothing changes) when atMs is not after the newest sample.
    bool append(qint64 atMs, double value);
    void clear();

    qint64 windowMs() const { return m_windowMs; }
    qsizetype capacity() const { return m_capacity; }
    qsizetype size() const { return m_count; }
    bool isEmpty() const { return m_count == 0; }
    // The i-th sample, oldest first (0 <= i < size()).
    MetricSample at(qsizetype i) const;
    std::optional<MetricSample> first() const;
    std::optional<MetricSample> last() const;
    // The smallest and largest value within the window; nullopt when empty.
    std::optional<double> minimum() const;
    std::optional<double> maximum() const;
    // Oldest first; x = ms since the epoch, y = value (what QLineSeries::replace() takes).
    QList<MetricSample> samples() const;
    QList<QPointF> points() const;

    friend bool operator==(const MetricSeries &a, const MetricSeries &b)
    {
        return a.m_windowMs == b.m_windowMs && a.m_capacity == b.m_capacity
                && a.samples() == b.samples();
    }

private:
    void dropFront(qsizetype count);

    qint64 m_windowMs;
    qsizetype m_capacity;
    // A ring: grows up to m_capacity, then wraps; m_head is the oldest sample's slot.
    QList<MetricSample> m_ring;
    qsizetype m_head = 0;
    qsizetype m_count = 0;
};

} // namespace rt::dashboard
