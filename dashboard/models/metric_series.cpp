#include "dashboard/models/metric_series.h"

#include <algorithm>

namespace rt::dashboard {

MetricSeries::MetricSeries(qint64 windowMs, qsizetype capacity)
    : m_windowMs(std::max<qint64>(windowMs, 1)),
      m_capacity(std::max<qsizetype>(capacity, 1))
{ }

bool MetricSeries::append(qint64 atMs, double value)
{
    if (m_count > 0 && atMs <= at(m_count - 1).atMs) {
        return false; // a duplicate or out of order: the series only moves forward
    }
    // Samples that fell out of the window go first, then the oldest if the ring is full.
    qsizetype expired = 0;
    while (expired < m_count && at(expired).atMs < atMs - m_windowMs) {
        ++expired;
    }
    dropFront(expired);
    if (m_count == m_capacity) {
        dropFront(1);
    }
    const MetricSample sample{ atMs, value };
    if (m_count == m_ring.size()) {
        // Every slot is used but the ring is below capacity: grow (storage follows use, not
        // capacity), first turning the ring so that the oldest sample is in slot 0 again.
        std::rotate(m_ring.begin(), m_ring.begin() + m_head, m_ring.end());
        m_head = 0;
        m_ring.append(sample);
    } else {
        m_ring[(m_head + m_count) % m_ring.size()] = sample;
    }
    ++m_count;
    return true;
}

void MetricSeries::dropFront(qsizetype count)
{
    if (count <= 0) {
        return;
    }
    m_count -= count;
    m_head = m_count == 0 ? 0 : (m_head + count) % m_ring.size();
    if (m_count == 0) {
        m_ring.clear(); // an empty series starts growing again from slot 0
    }
}

void MetricSeries::clear()
{
    m_ring.clear();
    m_head = 0;
    m_count = 0;
}

MetricSample MetricSeries::at(qsizetype i) const
{
    Q_ASSERT(i >= 0 && i < m_count);
    return m_ring.at((m_head + i) % m_ring.size());
}

std::optional<MetricSample> MetricSeries::first() const
{
    return m_count == 0 ? std::nullopt : std::optional<MetricSample>(at(0));
}

std::optional<MetricSample> MetricSeries::last() const
{
    return m_count == 0 ? std::nullopt : std::optional<MetricSample>(at(m_count - 1));
}

std::optional<double> MetricSeries::minimum() const
{
    std::optional<double> result;
    for (qsizetype i = 0; i < m_count; ++i) {
        const double value = at(i).value;
        result = result ? std::min(*result, value) : value;
    }
    return result;
}

std::optional<double> MetricSeries::maximum() const
{
    std::optional<double> result;
    for (qsizetype i = 0; i < m_count; ++i) {
        const double value = at(i).value;
        result = result ? std::max(*result, value) : value;
    }
    return result;
}

QList<MetricSample> MetricSeries::samples() const
{
    QList<MetricSample> result;
    result.reserve(m_count);
    for (qsizetype i = 0; i < m_count; ++i) {
        result.append(at(i));
    }
    return result;
}

QList<QPointF> MetricSeries::points() const
{
    QList<QPointF> result;
    result.reserve(m_count);
    for (qsizetype i = 0; i < m_count; ++i) {
        const MetricSample sample = at(i);
        result.append(QPointF(static_cast<double>(sample.atMs), sample.value));
    }
    return result;
}

} // namespace rt::dashboard
