#pragma once

#include "server/metrics/family.h"
#include "server/metrics/metric_types.h"

#include <QByteArrayView>

#include <optional>
#include <vector>

namespace rt::metrics {

class Registry;

// The metric families this server exports on GET /metrics: upstream's `realtime_*` families
// (docs/upstream/tenants-limits-metrics.md §6.3, same names, types, label names and HELP texts,
// bucket bounds in milliseconds or bytes as upstream) and our own `qtrealtime_*` families.
// Labels listed exclude the registry-wide host/id/region (Registry's global labels).
//
// The catalog only declares; the modules that observe the events update the series. Label
// values are passed in the order of FamilySpec::labelNames, which always starts with "tenant"
// when a family has one: family.labels({tenantId, "broadcast"}).

namespace names {
// Upstream, tenant registry (label "tenant" first).
inline constexpr char ConnectionsConnected[] = "realtime_connections_connected";
inline constexpr char ConnectionsConnectedCluster[] = "realtime_connections_connected_cluster";
inline constexpr char ChannelEvents[] = "realtime_channel_events";
inline constexpr char ChannelPresenceEvents[] = "realtime_channel_presence_events";
inline constexpr char ChannelDbEvents[] = "realtime_channel_db_events";
inline constexpr char ChannelJoins[] = "realtime_channel_joins";
inline constexpr char ChannelInputBytes[] = "realtime_channel_input_bytes";
inline constexpr char ChannelOutputBytes[] = "realtime_channel_output_bytes";
inline constexpr char ChannelError[] = "realtime_channel_error";
inline constexpr char TenantsPayloadSize[] = "realtime_tenants_payload_size";
inline constexpr char TenantsReadAuthorizationCheck[] = "realtime_tenants_read_authorization_check";
inline constexpr char TenantsWriteAuthorizationCheck[] =
        "realtime_tenants_write_authorization_check";
inline constexpr char TenantsBroadcastFromDatabaseLatencyCommittedAt[] =
        "realtime_tenants_broadcast_from_database_latency_committed_at";
inline constexpr char TenantsBroadcastFromDatabaseLatencyInsertedAt[] =
        "realtime_tenants_broadcast_from_database_latency_inserted_at";
inline constexpr char TenantsReplay[] = "realtime_tenants_replay";
inline constexpr char ReplicationPollerQueryDuration[] =
        "realtime_replication_poller_query_duration";
inline constexpr char ReplicationPollerChangesDispatch[] =
        "realtime_replication_poller_changes_dispatch";

// Upstream, global registry.
inline constexpr char ConnectionsGlobalConnected[] = "realtime_connections_global_connected";
inline constexpr char ConnectionsGlobalConnectedCluster[] =
        "realtime_connections_global_connected_cluster";
inline constexpr char TenantsConnected[] = "realtime_tenants_connected";
inline constexpr char ChannelGlobalEvents[] = "realtime_channel_global_events";
inline constexpr char ChannelGlobalPresenceEvents[] = "realtime_channel_global_presence_events";
inline constexpr char ChannelGlobalDbEvents[] = "realtime_channel_global_db_events";
inline constexpr char ChannelGlobalJoins[] = "realtime_channel_global_joins";
inline constexpr char ChannelGlobalInputBytes[] = "realtime_channel_global_input_bytes";
inline constexpr char ChannelGlobalOutputBytes[] = "realtime_channel_global_output_bytes";
inline constexpr char ChannelGlobalError[] = "realtime_channel_global_error";
inline constexpr char PayloadSize[] = "realtime_payload_size";
inline constexpr char GlobalRpc[] = "realtime_global_rpc";
inline constexpr char TenantsMigrationsDurationMilliseconds[] =
        "realtime_tenants_migrations_duration_milliseconds";
inline constexpr char TenantsMigrationsExceptionsTotal[] =
        "realtime_tenants_migrations_exceptions_total";
inline constexpr char TenantsMigrationsReconcileTotal[] =
        "realtime_tenants_migrations_reconcile_total";
inline constexpr char TenantsMigrationsReconcileExceptionsTotal[] =
        "realtime_tenants_migrations_reconcile_exceptions_total";

// Ours (tenant registry).
inline constexpr char MessagesIn[] = "qtrealtime_messages_in_total";
inline constexpr char MessagesOut[] = "qtrealtime_messages_out_total";
inline constexpr char SlowConsumerDroppedMessages[] =
        "qtrealtime_slow_consumer_dropped_messages_total";
inline constexpr char SlowConsumerDisconnects[] = "qtrealtime_slow_consumer_disconnects_total";
inline constexpr char RateLimitRejections[] = "qtrealtime_rate_limit_rejections_total";
// Ours (global registry).
inline constexpr char FanoutLatency[] = "qtrealtime_fanout_latency_milliseconds";
inline constexpr char ControlPlaneRouting[] = "qtrealtime_control_plane_routing_total";
inline constexpr char StreamPlacements[] = "qtrealtime_stream_placements_total";
inline constexpr char StreamPlacementFallbacks[] = "qtrealtime_stream_placement_fallbacks_total";
inline constexpr char StreamClaims[] = "qtrealtime_stream_claims_total";
} // namespace names

// Label values used by the catalog's families.
namespace label_values {
// message_type of the payload size histograms and of the fan-out latency.
inline constexpr char Broadcast[] = "broadcast";
inline constexpr char Presence[] = "presence";
inline constexpr char PostgresChanges[] = "postgres_changes";
// kind of qtrealtime_rate_limit_rejections_total: which limit (docs §5) said no.
inline constexpr char Events[] = "events"; // max_events_per_second
inline constexpr char Joins[] = "joins"; // max_joins_per_second
inline constexpr char PresenceEvents[] = "presence_events"; // max_presence_events_per_second
inline constexpr char ConcurrentUsers[] = "concurrent_users"; // max_concurrent_users
inline constexpr char ChannelsPerClient[] = "channels_per_client"; // max_channels_per_client
inline constexpr char HttpRequests[] = "http_requests"; // the REST request rate
} // namespace label_values

// Which upstream registry (and so which chunk of upstream's /metrics body) a family belongs to.
enum class Scope { Global, Tenant };

struct CatalogEntry
{
    MetricType type = MetricType::Counter;
    Scope scope = Scope::Global;
    FamilySpec spec;
};

// Every family above, sorted by name. Immutable; any thread.
const std::vector<CatalogEntry> &catalog();
std::optional<CatalogEntry> catalogEntry(QByteArrayView name);

// The catalog declared in registries, with a reference to each family for the code that updates
// it. Construct once at start-up, before any worker thread runs; the references stay valid as long
// as the registries. Global-scope families go to `global`, tenant-scope ones to `tenant` (pass the
// same registry twice for a single /metrics chunk). Declaring into a registry that already holds
// one of these names stops the process (Registry's declaration contract).
//
// Gauges are plain gauges that a poller sets (upstream polls every 5 s); a tenant's series go away
// with Registry::removeSeries("tenant", externalId) when the tenant is deleted or idle.
class ServerMetrics
{
public:
    ServerMetrics(Registry &global, Registry &tenant);
    explicit ServerMetrics(Registry &registry) : ServerMetrics(registry, registry) { }

    // Upstream, tenant scope. Labels: {tenant} unless noted.
    GaugeFamily &connectionsConnected;
    GaugeFamily &connectionsConnectedCluster;
    CounterFamily &channelEvents;
    CounterFamily &channelPresenceEvents;
    CounterFamily &channelDbEvents;
    CounterFamily &channelJoins;
    CounterFamily &channelInputBytes;
    CounterFamily &channelOutputBytes;
    CounterFamily &channelError; // {tenant, code}
    HistogramFamily &tenantsPayloadSize; // {tenant, message_type}, bytes
    HistogramFamily &tenantsReadAuthorizationCheck; // ms
    HistogramFamily &tenantsWriteAuthorizationCheck; // ms
    HistogramFamily &tenantsBroadcastFromDatabaseLatencyCommittedAt; // ms
    HistogramFamily &tenantsBroadcastFromDatabaseLatencyInsertedAt; // ms
    HistogramFamily &tenantsReplay; // ms
    HistogramFamily &replicationPollerQueryDuration; // ms
    CounterFamily &replicationPollerChangesDispatch;

    // Upstream, global scope (no labels unless noted).
    Gauge &connectionsGlobalConnected;
    Gauge &connectionsGlobalConnectedCluster;
    Gauge &tenantsConnected;
    Counter &channelGlobalEvents;
    Counter &channelGlobalPresenceEvents;
    Counter &channelGlobalDbEvents;
    Counter &channelGlobalJoins;
    Counter &channelGlobalInputBytes;
    Counter &channelGlobalOutputBytes;
    CounterFamily &channelGlobalError; // {code}
    HistogramFamily &payloadSize; // {message_type}, bytes
    HistogramFamily &globalRpc; // {mechanism, success}, ms
    HistogramFamily &tenantsMigrationsDuration; // {platform_region}, ms
    CounterFamily &tenantsMigrationsExceptions; // {error_code}
    Counter &tenantsMigrationsReconcile;
    Counter &tenantsMigrationsReconcileExceptions;

    // Ours.
    CounterFamily &messagesIn; // {tenant}: client messages received
    CounterFamily &messagesOut; // {tenant}: messages written to client sockets
    CounterFamily &slowConsumerDroppedMessages; // {tenant}
    CounterFamily &slowConsumerDisconnects; // {tenant}
    CounterFamily &rateLimitRejections; // {tenant, kind}; kind: label_values
    HistogramFamily &fanoutLatency; // {message_type}, ms
    // {target, reason}: which control-plane database served a read or write and why
    // (tenants::ReplicaRouter's targetLabel()/reasonLabel()).
    CounterFamily &controlPlaneRouting;
    // Tenant change streams in a cluster (app::StreamCoordinator): {reason, target} decisions
    // this node took for a stream without an owner (reason: the picker's; target: self or
    // peer); {reason} streams it took over from the node the picker chose (refused, timeout,
    // unreachable); {cause} streams this node was granted and why it claimed them.
    CounterFamily &streamPlacements;
    CounterFamily &streamPlacementFallbacks;
    CounterFamily &streamClaims;
};

} // namespace rt::metrics
