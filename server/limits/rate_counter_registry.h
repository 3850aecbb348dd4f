#pragma once

#include "server/limits/rate_counter.h"
#include "server/limits/rate_counter_key.h"
#include "server/limits/rate_counter_options.h"
#include "shared/core/clock.h"

#include <QString>

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

namespace rt::limits {

// One counter ticked by a RateCounterRegistry::tickDue() pass.
struct TickedCounter
{
    RateCounterKey key;
    RateCounterTick tick;
};

// The node's rate counters by key (tenant + kind), created on demand: upstream's
// RateCounter.get/new plus its DynamicSupervisor. Shared by every thread; one object per node,
// owned by the application, outliving the threads that use it.
//
// Any thread may obtain(), find(), restart() or change limits; a mutex guards the map only, so
// hot paths obtain a counter once (on join, per connection...) and keep the shared_ptr, then
// call add()/isTriggered() on it without any lock. One thread (RateCounterTicker) calls
// tickDue() periodically; tests call it with explicit times.
class RateCounterRegistry
{
public:
    // What one tickDue() pass did.
    struct TickPass
    {
        std::vector<TickedCounter> ticked; // every counter ticked, in no particular order
        int expired = 0; // counters that went idle this pass (dropped or dormant)
        // Dormant counters removed because nobody else held them: those that expired this pass
        // and those that expired earlier while held and whose last holder has let go since.
        int dropped = 0;
    };

    // `clock` gives creation and restart times (the first tick is due then); it must be safe to
    // read from every thread that calls obtain()/restart() and must outlive the registry.
    explicit RateCounterRegistry(const Clock &clock = SystemClock::instance());
    Q_DISABLE_COPY_MOVE(RateCounterRegistry)

    const Clock &clock() const { return m_clock; }

    // The counter of `key`, created with `options` if there is none; its first tick is due
    // immediately (at the next tickDue()). An existing counter keeps its options (use
    // setLimit() or restart() to change them), except that a dormant one restarts with
    // `options`, like upstream's get after an idle shutdown ("the args of whoever calls first").
    // Any thread.
    std::shared_ptr<RateCounter> obtain(const RateCounterKey &key,
                                        const RateCounterOptions &options);
    // The counter of `key`, or null; never creates. Any thread.
    std::shared_ptr<RateCounter> find(const RateCounterKey &key) const;

    // Fresh state for `key` (upstream's publish_update): window and cell cleared, not
    // triggered, first tick due now; with options they replace the counter's. False if there is
    // no such counter (the next obtain() creates a fresh one anyway). Any thread.
    bool restart(const RateCounterKey &key,
                 std::optional<RateCounterOptions> options = std::nullopt);
    // restart() of every counter of a tenant with its current options; returns how many. Any
    // thread.
    int restartTenant(const QString &tenantId);
    // RateCounter::setLimit() on the counter of `key`, if there is one (false otherwise): the
    // window is kept and the new limit applies from the next tick. Any thread.
    bool setLimit(const RateCounterKey &key, std::optional<RateLimit> limit);
    // Forgets every counter of a tenant (tenant deleted); holders keep working with their
    // now-detached counters, which nobody ticks any more. Returns how many. Any thread.
    int removeTenant(const QString &tenantId);

    // Ticks every counter whose tick is due at nowMs (RateCounter::isTickDue()), then runs the
    // idle check of each: an expired counter is removed if the registry holds the only
    // reference, and otherwise stays registered as dormant until it is used again or its last
    // holder lets go (it is then removed by a later pass). Logs limit
    // flips on rt.limits. Call it from one thread, with a monotonic time, at least as often as
    // the shortest tick; it is a linear pass under the map's mutex.
    TickPass tickDue(qint64 nowMs);

    // Number of registered counters (dormant included). Any thread.
    std::size_t size() const;

private:
    const Clock &m_clock;
    mutable std::mutex m_mutex;
    // Guarded by m_mutex. Lock order: m_mutex, then a counter's own mutex.
    std::unordered_map<RateCounterKey, std::shared_ptr<RateCounter>, RateCounterKeyHash> m_counters;
};

} // namespace rt::limits
