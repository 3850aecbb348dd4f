#include "server/limits/rate_counter.h"

#include <thread>

namespace rt::limits {

namespace {

static_assert(std::atomic<double>::is_always_lock_free, "readers must be lock-free");
static_assert(std::atomic<qint64>::is_always_lock_free, "add() must be lock-free");
static_assert(std::atomic<quint64>::is_always_lock_free);

// Invalid options are a programming error; survive them in release builds with the smallest
// meaningful values rather than dividing by zero.
RateCounterOptions sanitized(RateCounterOptions options)
{
    Q_ASSERT(options.tickMs > 0);
    Q_ASSERT(options.maxBuckets > 0);
    options.tickMs = qMax<qint64>(options.tickMs, 1);
    options.maxBuckets = qMax(options.maxBuckets, 1);
    return options;
}

} // namespace

RateCounter::RateCounter(const RateCounterOptions &options, qint64 nowMs)
    : m_options(sanitized(options))
{
    std::lock_guard lock(m_mutex);
    resetLocked(nowMs);
}

qint64 RateCounter::pendingCount() const noexcept
{
    return m_localCell.load(std::memory_order_relaxed)
            + m_remoteCell.load(std::memory_order_relaxed);
}

RateCounterState RateCounter::state() const noexcept
{
    // Sequence-lock reader (Boehm, "Can seqlocks get along with programming language memory
    // models?"): the fields are atomics, so a torn read is impossible per field, and the version
    // check makes the set consistent.
    for (int attempt = 0;; ++attempt) {
        const quint64 before = m_version.load(std::memory_order_acquire);
        if ((before & 1U) == 0) {
            RateCounterState state;
            state.average = m_average.load(std::memory_order_relaxed);
            state.sum = m_sum.load(std::memory_order_relaxed);
            state.samples = m_samples.load(std::memory_order_relaxed);
            state.lastCount = m_lastCount.load(std::memory_order_relaxed);
            state.lastLocalCount = m_lastLocalCount.load(std::memory_order_relaxed);
            state.isTriggered = m_isTriggered.load(std::memory_order_relaxed);
            std::atomic_thread_fence(std::memory_order_acquire);
            if (m_version.load(std::memory_order_relaxed) == before) {
                return state;
            }
        }
        // A publish takes nanoseconds; only a writer preempted mid-publish makes us wait longer.
        if (attempt >= 64) {
            std::this_thread::yield();
        }
    }
}

RateCounterOptions RateCounter::options() const
{
    std::lock_guard lock(m_mutex);
    return m_options;
}

void RateCounter::setLimit(std::optional<RateLimit> limit)
{
    std::lock_guard lock(m_mutex);
    m_options.limit = limit;
}

bool RateCounter::isTickDue(qint64 nowMs) const noexcept
{
    if (m_isDormant.load(std::memory_order_relaxed)) {
        return pendingCount() != 0;
    }
    return nowMs >= m_nextTickAtMs.load(std::memory_order_relaxed);
}

RateCounterTick RateCounter::tick(qint64 nowMs)
{
    std::lock_guard lock(m_mutex);
    if (m_isDormant.load(std::memory_order_relaxed)) {
        // Used again after expiring: a fresh window (resetLocked() ran when it went dormant), as
        // upstream starts a new process; unlike upstream, what was added meanwhile is kept.
        m_isDormant.store(false, std::memory_order_relaxed);
        m_nextTickAtMs.store(nowMs, std::memory_order_relaxed);
        m_idleCheckAtMs = nowMs + m_options.idleShutdownMs;
    }

    // Relaxed exchanges are exact: every add() is a read-modify-write on the same cell, so each
    // lands either in this sample or in a later one, never in none or two.
    const qint64 local = m_localCell.exchange(0, std::memory_order_relaxed);
    const qint64 remote = m_remoteCell.exchange(0, std::memory_order_relaxed);
    const qint64 count = local + remote;

    const int maxBuckets = m_options.maxBuckets;
    if (m_state.samples == maxBuckets) {
        const qint64 oldest = m_bucket[static_cast<std::size_t>(m_head)];
        m_state.sum -= oldest;
        if (oldest != 0) {
            --m_nonZeroSamples;
        }
    } else {
        ++m_state.samples;
    }
    m_bucket[static_cast<std::size_t>(m_head)] = count;
    m_head = (m_head + 1) % maxBuckets;
    m_state.sum += count;
    if (count != 0) {
        ++m_nonZeroSamples;
    }
    m_state.lastCount = count;
    m_state.lastLocalCount = local;
    // Same order of operations as upstream (sum / length(bucket) / (tick / 1000)), so the
    // floating-point results are identical.
    m_state.average = static_cast<double>(m_state.sum) / static_cast<double>(m_state.samples)
            / (static_cast<double>(m_options.tickMs) / 1000.0);

    const bool wasTriggered = m_state.isTriggered;
    if (const std::optional<RateLimit> &limit = m_options.limit) {
        const double measurement = limit->measurement == RateLimit::Measurement::Average
                ? m_state.average
                : static_cast<double>(m_state.sum);
        if (!m_state.isTriggered && measurement >= limit->value) {
            m_state.isTriggered = true;
        } else if (m_state.isTriggered && measurement < limit->value) {
            m_state.isTriggered = false;
        }
    } else {
        m_state.isTriggered = false;
    }

    // Keep the cadence anchored to the schedule, not to when the ticker got around to it; after
    // a stall of more than one interval, skip ahead instead of ticking in a burst.
    qint64 next = m_nextTickAtMs.load(std::memory_order_relaxed) + m_options.tickMs;
    if (next <= nowMs) {
        next = nowMs + m_options.tickMs;
    }
    m_nextTickAtMs.store(next, std::memory_order_relaxed);

    publishLocked();
    return RateCounterTick{ m_state, wasTriggered != m_state.isTriggered };
}

bool RateCounter::expireIfIdle(qint64 nowMs)
{
    std::lock_guard lock(m_mutex);
    if (m_isDormant.load(std::memory_order_relaxed) || m_options.idleShutdownMs <= 0
        || nowMs < m_idleCheckAtMs) {
        return false;
    }
    // Upstream checks only the retained samples; events added since the last tick count as use
    // here too, so they are never thrown away by an expiry.
    if (m_nonZeroSamples != 0 || pendingCount() != 0) {
        m_idleCheckAtMs = nowMs + m_options.idleShutdownMs;
        return false;
    }
    resetLocked(nowMs);
    m_isDormant.store(true, std::memory_order_relaxed);
    return true;
}

void RateCounter::restart(qint64 nowMs, std::optional<RateCounterOptions> options)
{
    std::lock_guard lock(m_mutex);
    if (options) {
        m_options = sanitized(*options);
    }
    // Upstream resets the GenCounter cell when the new process starts: what was counted before
    // the restart is not carried over.
    m_localCell.store(0, std::memory_order_relaxed);
    m_remoteCell.store(0, std::memory_order_relaxed);
    resetLocked(nowMs);
}

void RateCounter::resetLocked(qint64 nowMs)
{
    m_bucket.assign(static_cast<std::size_t>(m_options.maxBuckets), 0);
    m_head = 0;
    m_nonZeroSamples = 0;
    m_state = RateCounterState{};
    m_idleCheckAtMs = nowMs + m_options.idleShutdownMs;
    m_isDormant.store(false, std::memory_order_relaxed);
    m_nextTickAtMs.store(nowMs, std::memory_order_relaxed);
    publishLocked();
}

void RateCounter::publishLocked() noexcept
{
    // Sequence-lock writer; only one writer at a time because m_mutex is held.
    const quint64 version = m_version.load(std::memory_order_relaxed);
    m_version.store(version + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    m_average.store(m_state.average, std::memory_order_relaxed);
    m_sum.store(m_state.sum, std::memory_order_relaxed);
    m_samples.store(m_state.samples, std::memory_order_relaxed);
    m_lastCount.store(m_state.lastCount, std::memory_order_relaxed);
    m_lastLocalCount.store(m_state.lastLocalCount, std::memory_order_relaxed);
    m_isTriggered.store(m_state.isTriggered, std::memory_order_relaxed);
    m_version.store(version + 2, std::memory_order_release);
}

} // namespace rt::limits
