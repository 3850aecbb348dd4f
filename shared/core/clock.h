#pragma once

#include <QtGlobal>

namespace rt {

// Time source for rate counters, deadlines and token expiry, injectable so that tests control
// time (ManualClock). Implementations must be safe to read from any thread.
class Clock
{
public:
    virtual ~Clock() = default;
    // Monotonic milliseconds for durations and deadlines; the origin is arbitrary.
    virtual qint64 monotonicMs() const = 0;
    // Wall-clock milliseconds since the Unix epoch (JWT exp/iat, timestamps).
    virtual qint64 epochMs() const = 0;
};

// The real clocks (steady_clock and system_clock).
class SystemClock final : public Clock
{
public:
    qint64 monotonicMs() const override;
    qint64 epochMs() const override;
    // Process-wide instance; it has no state.
    static const SystemClock &instance();
};

// A clock that moves only when told to. Not thread-safe for concurrent advance(); tests advance
// it from the thread that reads it.
class ManualClock final : public Clock
{
public:
    explicit ManualClock(qint64 epochMs = 1'700'000'000'000) : m_epochMs(epochMs) { }
    qint64 monotonicMs() const override { return m_monotonicMs; }
    qint64 epochMs() const override { return m_epochMs; }
    void advance(qint64 ms)
    {
        m_monotonicMs += ms;
        m_epochMs += ms;
    }

private:
    qint64 m_monotonicMs = 0;
    qint64 m_epochMs;
};

} // namespace rt
