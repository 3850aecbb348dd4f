#pragma once

#include "server/tenants/tenant.h"
#include "shared/core/result.h"

#include <QByteArrayView>
#include <QJsonObject>

#include <optional>

namespace rt::tenants {

// Cluster-wide overrides of one tenant's settings, kept in the cluster configuration (etcd)
// rather than in the control-plane database, so that an operator can change a tenant's limits
// on every node within a second, possibly for a while only (a temporary entry with a lease).
// Unset fields leave the stored value alone. Plain value; copy it across threads.
//
// Where they come from (server/node/cluster_config.h documents the keys):
//   tenant_limits.<external_id> = {"max_concurrent_users": 500, ...} → the int fields
//   tenant_flags.<external_id>  = {"suspend": true, "private_only": true,
//                                  "presence_enabled": true}        → the bool fields
struct LimitOverrides
{
    std::optional<int> maxConcurrentUsers;
    std::optional<int> maxEventsPerSecond;
    std::optional<int> maxBytesPerSecond;
    std::optional<int> maxChannelsPerClient;
    std::optional<int> maxJoinsPerSecond;
    std::optional<int> maxPresenceEventsPerSecond;
    std::optional<int> maxPayloadSizeInKb;
    // true: the tenant is suspended (new sockets refused with "Realtime was disabled for this
    // tenant", REST broadcasts with 403), exactly as if its row said suspend = true; false:
    // served even if its row says suspended.
    std::optional<bool> suspend;
    // true: only private channels may be joined (public joins refused with "PrivateOnly: This
    // project only allows private channels"), as the tenant's own private_only.
    std::optional<bool> privateOnly;
    // true: every join gets presence (presence_state after join), as the tenant's own
    // presence_enabled; false: only joins that ask for it.
    std::optional<bool> presenceEnabled;

    bool isEmpty() const { return *this == LimitOverrides(); }
    friend bool operator==(const LimitOverrides &, const LimitOverrides &) = default;
};

// The value of tenant_limits.<external_id>: a JSON object with any of max_concurrent_users,
// max_events_per_second, max_bytes_per_second, max_channels_per_client, max_joins_per_second,
// max_presence_events_per_second, max_payload_size_in_kb, each a positive integer that fits an
// int (2.0 counts as 2; 2.5, "2", null, 0 and -1 do not). An unknown field, a bad value or
// anything but an object is an error whose message names the field: the whole value is
// refused, never half applied. Untrusted bytes: never crashes.
Result<LimitOverrides> parseLimitOverrides(QByteArrayView json);

// The value of tenant_flags.<external_id>: a JSON object with any of "suspend", "private_only"
// and "presence_enabled", each a boolean; the same rules for unknown fields and bad values as
// parseLimitOverrides().
Result<LimitOverrides> parseTenantFlags(QByteArrayView json);

// `base` with every field set in `more` replaced by it.
LimitOverrides mergeOverrides(LimitOverrides base, const LimitOverrides &more);

// The tenant with the overrides' set fields replacing its own.
Tenant applyOverrides(Tenant tenant, const LimitOverrides &overrides);

// Whether applying `overrides` to `tenant` changes anything (false: the effective tenant is the
// stored one, and callers may keep sharing the same object).
bool overridesChange(const Tenant &tenant, const LimitOverrides &overrides);

// Every overridable setting of `tenant`, all fields set: two tenants whose results compare
// equal have the same effective limits and flags.
LimitOverrides overridableSettings(const Tenant &tenant);

// The JSON form (the field names above), for views and logs; unset fields are left out.
QJsonObject overridesToJson(const LimitOverrides &overrides);

} // namespace rt::tenants
