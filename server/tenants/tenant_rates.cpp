#include "server/tenants/tenant_rates.h"

#include "server/limits/rate_counter_key.h"
#include "server/limits/rate_counter_options.h"

namespace rt::tenants {

namespace {

using limits::RateCounterKind;

// The limit a tenant sets on each kind this class serves.
std::optional<double> limitOf(const Tenant &tenant, RateCounterKind kind)
{
    switch (kind) {
    case RateCounterKind::Events:
        return tenant.maxEventsPerSecond;
    case RateCounterKind::PresenceEvents:
        return tenant.maxPresenceEventsPerSecond;
    case RateCounterKind::Joins:
        return tenant.maxJoinsPerSecond;
    default:
        return std::nullopt;
    }
}

constexpr RateCounterKind LimitedKinds[] = { RateCounterKind::Events,
                                             RateCounterKind::PresenceEvents,
                                             RateCounterKind::Joins };

} // namespace

std::shared_ptr<limits::RateCounter> TenantRates::obtain(const QByteArray &tenantId,
                                                         RateCounterKind kind,
                                                         std::optional<double> limit) const
{
    return m_registry.obtain(limits::RateCounterKey{ QString::fromUtf8(tenantId), kind },
                             limits::RateCounterOptions::forKind(kind, limit));
}

std::shared_ptr<limits::RateCounter> TenantRates::events(const Tenant &tenant) const
{
    return obtain(tenant.externalId, RateCounterKind::Events,
                  limitOf(tenant, RateCounterKind::Events));
}

std::shared_ptr<limits::RateCounter> TenantRates::presenceEvents(const Tenant &tenant) const
{
    return obtain(tenant.externalId, RateCounterKind::PresenceEvents,
                  limitOf(tenant, RateCounterKind::PresenceEvents));
}

std::shared_ptr<limits::RateCounter> TenantRates::dbEvents(const Tenant &tenant) const
{
    return obtain(tenant.externalId, RateCounterKind::DbEvents, std::nullopt);
}

std::shared_ptr<limits::RateCounter> TenantRates::joins(const Tenant &tenant) const
{
    return obtain(tenant.externalId, RateCounterKind::Joins,
                  limitOf(tenant, RateCounterKind::Joins));
}

std::shared_ptr<limits::RateCounter> TenantRates::requests(const Tenant &tenant) const
{
    return obtain(tenant.externalId, RateCounterKind::Requests, std::nullopt);
}

std::shared_ptr<limits::RateCounter> TenantRates::existingJoins(const QByteArray &tenantId) const
{
    return m_registry.find(
            limits::RateCounterKey{ QString::fromUtf8(tenantId), RateCounterKind::Joins });
}

void TenantRates::applyTenantChange(const QByteArray &tenantId, const TenantPtr &current) const
{
    const QString id = QString::fromUtf8(tenantId);
    if (!current) {
        m_registry.removeTenant(id);
        return;
    }
    for (const RateCounterKind kind : LimitedKinds) {
        const limits::RateCounterKey key{ id, kind };
        const std::shared_ptr<limits::RateCounter> counter = m_registry.find(key);
        if (!counter) {
            continue; // created with the current limit on first use
        }
        const limits::RateCounterOptions wanted =
                limits::RateCounterOptions::forKind(kind, limitOf(*current, kind));
        if (counter->options().limit != wanted.limit) {
            m_registry.restart(key, wanted);
        }
    }
}

} // namespace rt::tenants
