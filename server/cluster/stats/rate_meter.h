#pragma once

#include <QByteArray>
#include <QHash>

#include <deque>
#include <utility>

namespace rt::cluster::stats {

// Turns running totals (messages, bytes) into rates per second by differencing them over a
// sliding window of about windowMs, so one quiet report interval does not read as silence.
// A key missing from the oldest sample counted from 0 (counters start there); a total smaller
// than before (a counter that was reset) reads as 0. Single-threaded, pure.
class RateMeter
{
public:
    using Totals = QHash<QByteArray, quint64>;

    explicit RateMeter(qint64 windowMs = 2000) : m_windowMs(windowMs) { }

    // Records `totals` as of nowMs (monotonic) and returns the rate of each key of `totals`
    // since the window's oldest sample; 0 for everything on the first call.
    QHash<QByteArray, double> update(qint64 nowMs, const Totals &totals);

private:
    qint64 m_windowMs;
    std::deque<std::pair<qint64, Totals>> m_samples; // oldest first
};

} // namespace rt::cluster::stats
