#pragma once

#include "server/cluster/types.h"
#include "server/tenants/limit_overrides.h"
#include "shared/core/result.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QHash>
#include <QList>
#include <QString>

#include <functional>
#include <optional>

namespace rt::tenants {
class TenantDirectory;
class TenantRates;
} // namespace rt::tenants

namespace rt::node {

// The cluster configuration (issue 5 part 9, seed 003): keys stored by the ClusterBackend under
// <prefix>/config/<key>, edited through the admin API (PUT/DELETE /api/cluster/config/:key,
// compare-and-swap, optionally temporary), watched by every node and applied within a second.
// Every value is a JSON object. The keys:
//
//   region_mapping
//       {"<tenant region>": "<platform region>", ...}: where placement looks for nodes for a
//       tenant whose region is the key (e.g. {"ap-northeast-2": "ap-northeast-1"} sends Seoul
//       tenants to the Tokyo nodes). A region without an entry maps to itself. Keys and values
//       are non-empty region names (at most 64 characters, no control characters or spaces).
//
//   tenant_limits.<external_id>
//       {"max_concurrent_users": 500, "max_events_per_second": 1000, ...}: overrides of the
//       tenant's stored limits, any of max_concurrent_users, max_events_per_second,
//       max_bytes_per_second, max_channels_per_client, max_joins_per_second,
//       max_presence_events_per_second, max_payload_size_in_kb (positive integers). Written
//       with a TTL it is a temporary boost that ends by itself. The tenant API keeps showing
//       the stored limits; sockets, rate counters and connect checks use the overridden ones.
//
//   tenant_flags.<external_id>
//       {"suspend": true}: suspends the tenant on every node (new sockets refused with
//       "Realtime was disabled for this tenant", REST broadcasts 403, its sockets disconnected)
//       without touching the control-plane database; "suspend": false serves a tenant whose
//       row says suspended. With a TTL: "suspend this tenant for an hour".
//       {"private_only": true}: only private channels may be joined (public joins get
//       "PrivateOnly: This project only allows private channels"); a change disconnects the
//       tenant's sockets, as a change of the stored private_only does.
//       {"presence_enabled": true}: every join gets presence, as the stored presence_enabled;
//       applies to joins made after the change (no disconnect).
//       One value may carry several flags; a flag left out keeps the stored value.
//
// An entry whose key is unknown or whose value is invalid is reported as a problem and
// ignored; every other entry still applies (one bad edit never takes the rest down). The admin
// API refuses such writes before they reach the backend (validateConfigEntry).

inline constexpr QLatin1StringView RegionMappingKey{ "region_mapping" };
inline constexpr QLatin1StringView TenantLimitsPrefix{ "tenant_limits." };
inline constexpr QLatin1StringView TenantFlagsPrefix{ "tenant_flags." };

// One entry that could not be applied.
struct ConfigProblem
{
    QString key;
    QString message;

    friend bool operator==(const ConfigProblem &, const ConfigProblem &) = default;
};

// What a configuration snapshot means for this node.
struct ClusterSettings
{
    QHash<QString, QString> regionMapping; // tenant region -> platform region
    // External id -> overrides (tenant_limits.<id> and tenant_flags.<id> merged). Only tenants
    // with at least one valid, non-empty entry appear.
    QHash<QByteArray, tenants::LimitOverrides> tenantOverrides;
    qint64 revision = 0; // the snapshot's cluster revision
    QList<ConfigProblem> problems; // sorted by key
};

// Pure: the same snapshot gives the same settings on every node.
ClusterSettings parseClusterSettings(const cluster::ConfigSnapshot &snapshot);

// Whether `value` may be stored under `key`: nullopt if so, otherwise why not (the message the
// admin API returns with 422). The same rules as parseClusterSettings().
std::optional<QString> validateConfigEntry(const QString &key, QByteArrayView value);

// Whether `key` is a well-formed key name at all (a known kind or not): non-empty, at most 256
// bytes, printable ASCII without '/', spaces or '%'. Deleting is allowed for any such key, so
// that a stray entry written behind the API's back can be removed.
std::optional<QString> validateConfigKeyName(const QString &key);

// Applies the tenant part of `settings` on this node: the overrides go into the directory
// (find() then returns the effective tenants), the rate counters of every tenant whose effective
// limits changed restart with the new limits, and `disconnectTenant` is called for every tenant
// whose suspension changed (its clients go, or reconnect to a resumed tenant). Returns the
// external ids that changed. Thread-safe if `disconnectTenant` is (directory and rates are).
QList<QByteArray>
applyTenantOverrides(const ClusterSettings &settings, tenants::TenantDirectory &directory,
                     const tenants::TenantRates &rates,
                     const std::function<void(const QByteArray &)> &disconnectTenant);

// Parses region_mapping's value.
Result<QHash<QString, QString>> parseRegionMapping(QByteArrayView json);

// --- last known good -------------------------------------------------------------------------
// A node saves every configuration snapshot it applies to a local file and, on start, applies
// the saved one before the backend answers, so a node restarted while etcd is down serves the
// last configuration it saw (seed 003). Temporary entries are kept with their flag: the file
// cannot know when their lease ends, exactly like a node that stays up through an outage; the
// backend's snapshot replaces them once it is reachable.
//
// The file is JSON: {"format": 1, "revision": N, "saved_at": "<ISO 8601>", "entries": [{"key",
// "value" (the value's text) or "value_base64" (bytes that are not UTF-8), "mod_revision",
// "temporary"}]}. Blocking file I/O of a few kilobytes; several nodes on one machine need one
// path each.

struct SnapshotFileError
{
    enum class Kind {
        Missing, // no file yet (first start): not worth a warning
        Unreadable, // I/O error
        Corrupt, // not a snapshot this code wrote: ignore it, never crash
    };
    Kind kind = Kind::Corrupt;
    QString message;
};

// Writes atomically (QSaveFile: a crash leaves the previous file intact). Returns an error
// message on failure.
std::optional<QString> saveSnapshot(const QString &path, const cluster::ConfigSnapshot &snapshot);
Result<cluster::ConfigSnapshot, SnapshotFileError> loadSnapshot(const QString &path);

} // namespace rt::node
