#include "server/limits/rate_counter_registry.h"

#include "server/limits/logging.h"

namespace rt::limits {

RateCounterRegistry::RateCounterRegistry(const Clock &clock) : m_clock(clock) { }

std::shared_ptr<RateCounter> RateCounterRegistry::obtain(const RateCounterKey &key,
                                                         const RateCounterOptions &options)
{
    const qint64 nowMs = m_clock.monotonicMs();
    std::lock_guard lock(m_mutex);
    auto it = m_counters.find(key);
    if (it == m_counters.end()) {
        it = m_counters.emplace(key, std::make_shared<RateCounter>(options, nowMs)).first;
        qCDebug(lcLimits, "rate counter %s started (tick %lld ms x %d)",
                qUtf8Printable(key.toString()), static_cast<long long>(options.tickMs),
                options.maxBuckets);
    } else if (it->second->isDormant()) {
        it->second->restart(nowMs, options);
        qCDebug(lcLimits, "rate counter %s restarted after idling", qUtf8Printable(key.toString()));
    }
    return it->second;
}

std::shared_ptr<RateCounter> RateCounterRegistry::find(const RateCounterKey &key) const
{
    std::lock_guard lock(m_mutex);
    const auto it = m_counters.find(key);
    return it == m_counters.end() ? nullptr : it->second;
}

bool RateCounterRegistry::restart(const RateCounterKey &key,
                                  std::optional<RateCounterOptions> options)
{
    const qint64 nowMs = m_clock.monotonicMs();
    std::lock_guard lock(m_mutex);
    const auto it = m_counters.find(key);
    if (it == m_counters.end()) {
        return false;
    }
    it->second->restart(nowMs, options);
    return true;
}

int RateCounterRegistry::restartTenant(const QString &tenantId)
{
    const qint64 nowMs = m_clock.monotonicMs();
    std::lock_guard lock(m_mutex);
    int restarted = 0;
    for (const auto &[key, counter] : m_counters) {
        if (key.tenantId == tenantId) {
            counter->restart(nowMs);
            ++restarted;
        }
    }
    return restarted;
}

bool RateCounterRegistry::setLimit(const RateCounterKey &key, std::optional<RateLimit> limit)
{
    std::lock_guard lock(m_mutex);
    const auto it = m_counters.find(key);
    if (it == m_counters.end()) {
        return false;
    }
    it->second->setLimit(limit);
    return true;
}

int RateCounterRegistry::removeTenant(const QString &tenantId)
{
    std::lock_guard lock(m_mutex);
    return static_cast<int>(std::erase_if(m_counters, [&tenantId](const auto &entry) {
        return entry.first.tenantId == tenantId;
    }));
}

RateCounterRegistry::TickPass RateCounterRegistry::tickDue(qint64 nowMs)
{
    TickPass pass;
    {
        std::lock_guard lock(m_mutex);
        for (auto it = m_counters.begin(); it != m_counters.end();) {
            RateCounter &counter = *it->second;
            if (counter.isTickDue(nowMs)) {
                pass.ticked.push_back(TickedCounter{ it->first, counter.tick(nowMs) });
            }
            const bool hasExpired = counter.expireIfIdle(nowMs);
            if (hasExpired) {
                ++pass.expired;
            }
            // A dormant counter that only the registry holds (it just expired, or its last
            // holder let go since it expired) is dropped: new references are made only under
            // m_mutex, so nobody can be using it. Otherwise its holders keep the dormant object,
            // and it stays here so that obtain() returns the same one.
            if (counter.isDormant() && it->second.use_count() == 1) {
                qCDebug(lcLimits, "rate counter %s idle, dropped",
                        qUtf8Printable(it->first.toString()));
                it = m_counters.erase(it);
                ++pass.dropped;
                continue;
            }
            if (hasExpired) {
                qCDebug(lcLimits, "rate counter %s idle, dormant",
                        qUtf8Printable(it->first.toString()));
            }
            ++it;
        }
    }
    // Logged outside the lock: upstream's log_fn fires once, when the limit is reached.
    for (const TickedCounter &ticked : std::as_const(pass.ticked)) {
        if (!ticked.tick.hasTriggeredChanged) {
            continue;
        }
        const RateCounterState &state = ticked.tick.state;
        if (state.isTriggered) {
            qCInfo(lcLimits, "rate limit reached: %s (avg %.2f/s, sum %lld)",
                   qUtf8Printable(ticked.key.toString()), state.average,
                   static_cast<long long>(state.sum));
        } else {
            qCDebug(lcLimits, "rate limit released: %s (avg %.2f/s, sum %lld)",
                    qUtf8Printable(ticked.key.toString()), state.average,
                    static_cast<long long>(state.sum));
        }
    }
    return pass;
}

std::size_t RateCounterRegistry::size() const
{
    std::lock_guard lock(m_mutex);
    return m_counters.size();
}

} // namespace rt::limits
