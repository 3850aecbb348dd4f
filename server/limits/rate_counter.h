#pragma once

#include "server/limits/rate_counter_options.h"

#include <QtGlobal>

#include <atomic>
#include <mutex>
#include <optional>
#include <vector>

namespace rt::limits {

// What readers see of a RateCounter: the state published by the last tick (upstream's state in
// the Cachex cache). Before the first tick, and after a restart, everything is 0 / false.
struct RateCounterState
{
    double average = 0.0; // sum / samples / (tickMs / 1000): events per second
    qint64 sum = 0; // total of the retained samples
    int samples = 0; // retained samples, 1..maxBuckets once ticked
    qint64 lastCount = 0; // the sample the last tick added (local + remote)
    qint64 lastLocalCount = 0; // its local part: add() calls on this node
    bool isTriggered = false; // the limit's state as of the last tick

    friend bool operator==(const RateCounterState &, const RateCounterState &) = default;
};

// The outcome of one RateCounter::tick().
struct RateCounterTick
{
    RateCounterState state; // as published by this tick
    bool hasTriggeredChanged = false; // the limit flipped at this tick (either direction)
};

// A windowed event-rate counter with an optional limit: upstream's Realtime.RateCounter over a
// GenCounter cell (docs/upstream/tenants-limits-metrics.md §5.1), without the process.
//
// Producers call add(n) from any thread: one relaxed atomic add on a cell that has a cache line
// to itself. A tick (every options().tickMs, the first one immediately after creation or restart)
// moves the cell into a ring of at most maxBuckets samples and publishes
//     sum = Σ samples,  average = sum / number-of-samples-so-far / (tickMs / 1000)
// and the limit: not triggered and measurement >= value -> triggered; triggered and
// measurement < value -> released. Readers (average(), sum(), isTriggered(), state()) are
// lock-free from any thread and see the last tick's values, so decisions lag by up to one tick.
//
// Threads: add()/addRemote() and the readers are lock-free and may run on any thread.
// tick(), expireIfIdle(), restart(), setLimit() and options() serialize on an internal mutex
// that add() and the readers never take; in the server one thread (RateCounterTicker, through
// RateCounterRegistry::tickDue) ticks and the others only restart or change the limit. Nothing
// here starts a timer: the caller passes the monotonic time (Clock::monotonicMs()), which makes
// ticks deterministic in tests.
//
// Idle expiry: every idleShutdownMs the counter checks whether all its retained samples are 0;
// if so expireIfIdle() puts it to sleep ("dormant"): state back to zero, no ticks. The next add()
// makes it due again and its next tick starts a fresh window (upstream stops the process and
// the next use starts a new one). A registry drops a dormant counter nobody else holds.
//
// Cluster contract (not built here): a backend that wants cluster-wide rates gossips each
// node's lastLocalCount() (the add() total moved into the sample at the last tick; remote
// contributions are excluded, so counts are never echoed back) and feeds what it receives from
// peers into addRemote(), which is folded into this node's next sample. average()/sum() then
// estimate the cluster's rate with up to one tick of extra lag per hop; with no backend
// addRemote() is never called and every counter is node-local, as upstream's are.
class RateCounter // NOLINT(clang-analyzer-optin.performance.Padding): cache lines, on purpose
{
public:
    // Starts a counter whose first tick is due at nowMs ("immediately").
    RateCounter(const RateCounterOptions &options, qint64 nowMs);
    Q_DISABLE_COPY_MOVE(RateCounter)

    // Counts n >= 0 events into the current tick. Any thread; lock-free, wait-free on x86.
    void add(qint64 n = 1) noexcept
    {
        Q_ASSERT(n >= 0);
        m_localCell.fetch_add(n, std::memory_order_relaxed);
    }
    // Counts n >= 0 events that other nodes reported into the current tick's sample; they are
    // not part of lastLocalCount(). Any thread; lock-free.
    void addRemote(qint64 n) noexcept
    {
        Q_ASSERT(n >= 0);
        m_remoteCell.fetch_add(n, std::memory_order_relaxed);
    }
    // Events added (local + remote) since the last tick. Any thread.
    qint64 pendingCount() const noexcept;

    // The last tick's published values. Any thread; each is a single atomic load.
    double average() const noexcept { return m_average.load(std::memory_order_relaxed); }
    qint64 sum() const noexcept { return m_sum.load(std::memory_order_relaxed); }
    bool isTriggered() const noexcept { return m_isTriggered.load(std::memory_order_relaxed); }
    qint64 lastLocalCount() const noexcept
    {
        return m_lastLocalCount.load(std::memory_order_relaxed);
    }
    // All published values of one tick, consistent with each other (a sequence lock: readers
    // retry while a tick is publishing; they never block the ticker). Any thread.
    RateCounterState state() const noexcept;

    // The current options (including the limit set by setLimit()). Any thread; takes the mutex.
    RateCounterOptions options() const;
    // Replaces the limit (tenant limits change at runtime). The window is kept; the new limit is
    // evaluated at the next tick with the usual flip rules, and no limit releases the counter at
    // the next tick. Any thread.
    void setLimit(std::optional<RateLimit> limit);

    // Whether tick(nowMs) should run now: the interval elapsed, or the counter is dormant and
    // something was added. Any thread.
    bool isTickDue(qint64 nowMs) const noexcept;
    // When the next tick is due (meaningless while dormant). Any thread.
    qint64 nextTickAtMs() const noexcept { return m_nextTickAtMs.load(std::memory_order_relaxed); }
    // Moves the cells into a new sample, recomputes and publishes the state and evaluates the
    // limit, whether or not it is due; the next tick is then due one interval after this one was
    // (catching up at most to nowMs + tickMs, never with a burst of ticks). A dormant counter
    // wakes with a fresh window. Serialized with the other mutating calls.
    RateCounterTick tick(qint64 nowMs);
    // The idle check (upstream's :idle_shutdown message): when idleShutdownMs has passed since
    // the last check and every retained sample is 0 and nothing is pending, the counter becomes
    // dormant and this returns true; otherwise the next check is idleShutdownMs from now.
    bool expireIfIdle(qint64 nowMs);
    // Whether the counter expired and has not been used since. Any thread.
    bool isDormant() const noexcept { return m_isDormant.load(std::memory_order_relaxed); }
    // Fresh state (upstream's publish_update followed by a restart): the cells and the window are
    // cleared, the state published as zero and not triggered, and the first tick is due at
    // nowMs. With options, they replace the current ones (tick, buckets, limit, idle). Any thread.
    void restart(qint64 nowMs, std::optional<RateCounterOptions> options = std::nullopt);

private:
    // Resets the window and the published state; m_mutex held.
    void resetLocked(qint64 nowMs);
    // Copies m_state to the published atomics under the sequence lock; m_mutex held.
    void publishLocked() noexcept;

    // Two counters never share a line, and the hot cell does not share one with the published
    // state that readers load after each add (64 bytes on x86-64 and most ARM cores).
    static constexpr std::size_t CacheLineBytes = 64;

    // Written by add()/addRemote() on any thread, drained by tick().
    alignas(CacheLineBytes) std::atomic<qint64> m_localCell{ 0 };
    std::atomic<qint64> m_remoteCell{ 0 };

    // Published state: written by the ticking thread under m_mutex, read lock-free by any thread.
    // m_version is odd while a write is in progress (sequence lock for state()).
    alignas(CacheLineBytes) std::atomic<quint64> m_version{ 0 };
    std::atomic<double> m_average{ 0.0 };
    std::atomic<qint64> m_sum{ 0 };
    std::atomic<qint64> m_lastCount{ 0 };
    std::atomic<qint64> m_lastLocalCount{ 0 };
    std::atomic<int> m_samples{ 0 };
    std::atomic<bool> m_isTriggered{ false };
    // Scheduling, written under m_mutex, read by isTickDue() from any thread.
    std::atomic<qint64> m_nextTickAtMs{ 0 };
    std::atomic<bool> m_isDormant{ false };

    alignas(CacheLineBytes) mutable std::mutex m_mutex;
    // Everything below is guarded by m_mutex.
    RateCounterOptions m_options;
    std::vector<qint64> m_bucket; // ring of maxBuckets samples; m_head is the next slot
    int m_head = 0;
    int m_nonZeroSamples = 0; // retained samples != 0, for the idle check
    qint64 m_idleCheckAtMs = 0;
    RateCounterState m_state; // the writer's copy of what is published
};

} // namespace rt::limits
