#pragma once

#include "server/limits/rate_counter.h"
#include "server/limits/rate_counter_registry.h"
#include "server/tenants/tenant.h"

#include <memory>

namespace rt::tenants {

// A tenant's rate counters (docs/upstream/tenants-limits-metrics.md §5.2) with the limits of its
// current row. Counters are node-wide: every worker adds to the same ones; a RateCounterTicker
// ticks the registry. Holders obtain a counter once (per socket, per channel) and keep it; a
// tenant change restarts the counters whose limit changed, in place, so holders keep working.
// Thread-safe.
class TenantRates
{
public:
    explicit TenantRates(limits::RateCounterRegistry &registry) : m_registry(registry) { }

    // events: broadcasts sent and delivered, limited by max_events_per_second.
    std::shared_ptr<limits::RateCounter> events(const Tenant &tenant) const;
    // presence_events: tracks, presence_state pushes and presence_diff deliveries.
    std::shared_ptr<limits::RateCounter> presenceEvents(const Tenant &tenant) const;
    // joins: every join that passes the joins check, limited by max_joins_per_second.
    std::shared_ptr<limits::RateCounter> joins(const Tenant &tenant) const;
    // db_events: postgres_changes deliveries and broadcasts from the database. Counted, not
    // limited: a change is never dropped for the rate (upstream drops them silently).
    std::shared_ptr<limits::RateCounter> dbEvents(const Tenant &tenant) const;
    // requests: HTTP requests of the tenant API (x-rate-* headers); no limit of its own.
    std::shared_ptr<limits::RateCounter> requests(const Tenant &tenant) const;
    // The joins counter if the tenant has one (the connect check must not create counters for
    // every tenant a client names).
    std::shared_ptr<limits::RateCounter> existingJoins(const QByteArray &tenantId) const;

    // After a tenant was written or deleted: counters whose limit changed restart with the new
    // limit (upstream restarts them too); a deleted tenant's counters are forgotten.
    void applyTenantChange(const QByteArray &tenantId, const TenantPtr &current) const;

    limits::RateCounterRegistry &registry() const { return m_registry; }

private:
    std::shared_ptr<limits::RateCounter> obtain(const QByteArray &tenantId,
                                                limits::RateCounterKind kind,
                                                std::optional<double> limit) const;

    limits::RateCounterRegistry &m_registry;
};

} // namespace rt::tenants
