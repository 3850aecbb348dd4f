#include "server/cluster/stats/rate_meter.h"

namespace rt::cluster::stats {

QHash<QByteArray, double> RateMeter::update(qint64 nowMs, const Totals &totals)
{
    // Keep one sample at least windowMs old as the baseline, and nothing older than it.
    while (m_samples.size() >= 2 && nowMs - m_samples[1].first >= m_windowMs) {
        m_samples.pop_front();
    }
    QHash<QByteArray, double> rates;
    rates.reserve(totals.size());
    const bool hasBaseline = !m_samples.empty() && nowMs > m_samples.front().first;
    const double seconds = hasBaseline ? double(nowMs - m_samples.front().first) / 1000.0 : 0;
    for (auto it = totals.cbegin(); it != totals.cend(); ++it) {
        double rate = 0;
        if (hasBaseline) {
            const quint64 before = m_samples.front().second.value(it.key(), 0);
            if (it.value() > before) {
                rate = double(it.value() - before) / seconds;
            }
        }
        rates.insert(it.key(), rate);
    }
    if (m_samples.empty() || nowMs > m_samples.back().first) {
        m_samples.emplace_back(nowMs, totals);
    } else {
        m_samples.back().second = totals; // same instant (or a clock step back): replace
    }
    return rates;
}

} // namespace rt::cluster::stats
