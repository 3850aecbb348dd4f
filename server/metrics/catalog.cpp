#include "server/metrics/catalog.h"

#include "server/metrics/registry.h"

#include <algorithm>

namespace rt::metrics {

namespace {

// Upstream's bucket bounds (docs §6.3).
const std::vector<double> PayloadSizeBuckets = { 250,   500,    1000,   3000,    5000,   10000,
                                                 25000, 100000, 500000, 1000000, 3000000 };
const std::vector<double> LatencyBuckets = { 10, 250, 5000, 15000 };
const std::vector<double> BroadcastFromDatabaseBuckets = { 10, 250, 5000 };
const std::vector<double> MigrationBuckets = { 100,   250,   500,   1000,  2000,  5000,  10000,
                                               20000, 30000, 45000, 60000, 90000, 120000 };
// Ours: in-node fan-out is sub-millisecond when healthy, seconds when a node is overloaded.
const std::vector<double> FanoutBuckets = { 0.1, 0.25, 0.5, 1,   2.5,  5,    10,  25,
                                            50,  100,  250, 500, 1000, 2500, 5000 };

CatalogEntry entry(MetricType type, Scope scope, const char *name, const char *help,
                   std::vector<QByteArray> labelNames, std::vector<double> buckets = {})
{
    return { type, scope,
             FamilySpec{ QByteArray(name), QByteArray(help), std::move(labelNames),
                         std::move(buckets) } };
}

// Tabular (one row per metric family), so longer than a screen by design.
std::vector<CatalogEntry> buildCatalog()
{
    using enum MetricType;
    constexpr Scope T = Scope::Tenant;
    constexpr Scope G = Scope::Global;
    const QByteArray tenant("tenant");
    std::vector<CatalogEntry> entries = {
        // Upstream, tenant registry.
        entry(Gauge, T, names::ConnectionsConnected,
              "The node total count of connected clients for a tenant.", { tenant }),
        entry(Gauge, T, names::ConnectionsConnectedCluster,
              "The cluster total count of connected clients for a tenant.", { tenant }),
        entry(Counter, T, names::ChannelEvents, "Sum of messages sent on a Realtime Channel.",
              { tenant }),
        entry(Counter, T, names::ChannelPresenceEvents,
              "Sum of presence messages sent on a Realtime Channel.", { tenant }),
        entry(Counter, T, names::ChannelDbEvents, "Sum of db messages sent on a Realtime Channel.",
              { tenant }),
        entry(Counter, T, names::ChannelJoins, "Sum of Realtime Channel joins.", { tenant }),
        entry(Counter, T, names::ChannelInputBytes, "Sum of input bytes sent on sockets.",
              { tenant }),
        entry(Counter, T, names::ChannelOutputBytes, "Sum of output bytes sent on sockets.",
              { tenant }),
        entry(Counter, T, names::ChannelError,
              "Count of errors in the Realtime channels initialization",
              { tenant, QByteArray("code") }),
        entry(Histogram, T, names::TenantsPayloadSize, "Tenant payload size",
              { tenant, QByteArray("message_type") }, PayloadSizeBuckets),
        entry(Histogram, T, names::TenantsReadAuthorizationCheck,
              "Latency of read authorization checks.", { tenant }, LatencyBuckets),
        entry(Histogram, T, names::TenantsWriteAuthorizationCheck,
              "Latency of write authorization checks.", { tenant }, LatencyBuckets),
        entry(Histogram, T, names::TenantsBroadcastFromDatabaseLatencyCommittedAt,
              "Latency of database transaction start until reaches server to be broadcasted",
              { tenant }, BroadcastFromDatabaseBuckets),
        entry(Histogram, T, names::TenantsBroadcastFromDatabaseLatencyInsertedAt,
              "Latency of database inserted_at until reaches server to be broadcasted", { tenant },
              BroadcastFromDatabaseBuckets),
        entry(Histogram, T, names::TenantsReplay, "Latency of broadcast replay", { tenant },
              LatencyBuckets),
        entry(Histogram, T, names::ReplicationPollerQueryDuration,
              "Duration of the logical replication slot polling query for Realtime RLS.",
              { tenant }, PayloadSizeBuckets),
        entry(Counter, T, names::ReplicationPollerChangesDispatch,
              "Number of Postgres Changes rows the poller broadcast to subscribers.", { tenant }),

        // Upstream, global registry.
        entry(Gauge, G, names::ConnectionsGlobalConnected,
              "The node total count of connected clients across all tenants.", {}),
        entry(Gauge, G, names::ConnectionsGlobalConnectedCluster,
              "The cluster total count of connected clients across all tenants.", {}),
        entry(Gauge, G, names::TenantsConnected, "The total count of connected tenants.", {}),
        entry(Counter, G, names::ChannelGlobalEvents,
              "Global sum of messages sent on a Realtime Channel.", {}),
        entry(Counter, G, names::ChannelGlobalPresenceEvents,
              "Global sum of presence messages sent on a Realtime Channel.", {}),
        entry(Counter, G, names::ChannelGlobalDbEvents,
              "Global sum of db messages sent on a Realtime Channel.", {}),
        entry(Counter, G, names::ChannelGlobalJoins, "Global sum of Realtime Channel joins.", {}),
        entry(Counter, G, names::ChannelGlobalInputBytes,
              "Global sum of input bytes sent on sockets.", {}),
        entry(Counter, G, names::ChannelGlobalOutputBytes,
              "Global sum of output bytes sent on sockets.", {}),
        entry(Counter, G, names::ChannelGlobalError,
              "Global count of errors in Realtime channel initialization.", { QByteArray("code") }),
        entry(Histogram, G, names::PayloadSize, "Global payload size across all tenants",
              { QByteArray("message_type") }, PayloadSizeBuckets),
        entry(Histogram, G, names::GlobalRpc, "Global Latency of rpc calls",
              { QByteArray("mechanism"), QByteArray("success") }, LatencyBuckets),
        entry(Histogram, G, names::TenantsMigrationsDurationMilliseconds,
              "Tenant migrations duration", { QByteArray("platform_region") }, MigrationBuckets),
        entry(Counter, G, names::TenantsMigrationsExceptionsTotal,
              "Count of failed tenant migrations", { QByteArray("error_code") }),
        entry(Counter, G, names::TenantsMigrationsReconcileTotal,
              "Count of reconciled tenant migrations", {}),
        entry(Counter, G, names::TenantsMigrationsReconcileExceptionsTotal,
              "Count of failed migrations_ran reconciliations", {}),

        // Ours.
        entry(Counter, T, names::MessagesIn, "Messages received from clients on Realtime sockets.",
              { tenant }),
        entry(Counter, T, names::MessagesOut, "Messages written to clients on Realtime sockets.",
              { tenant }),
        entry(Counter, T, names::SlowConsumerDroppedMessages,
              "Messages dropped because a client's send queue was full.", { tenant }),
        entry(Counter, T, names::SlowConsumerDisconnects,
              "Connections closed because the client did not read its messages fast enough.",
              { tenant }),
        entry(Counter, T, names::RateLimitRejections,
              "Requests, messages and connections rejected by a per-tenant limit, by kind of "
              "limit.",
              { tenant, QByteArray("kind") }),
        entry(Histogram, G, names::FanoutLatency,
              "Time from accepting a message to handing it to the last local subscriber's "
              "socket, in milliseconds.",
              { QByteArray("message_type") }, FanoutBuckets),
        entry(Counter, G, names::ControlPlaneRouting,
              "Control-plane reads and writes by the database that served them (target: primary "
              "or replica) and why it was chosen (reason).",
              { QByteArray("target"), QByteArray("reason") }),
        entry(Counter, G, names::StreamPlacements,
              "Placement decisions this node took for tenant change streams without an owner, by "
              "the picker's reason and whether it chose this node (self) or another (peer).",
              { QByteArray("reason"), QByteArray("target") }),
        entry(Counter, G, names::StreamPlacementFallbacks,
              "Tenant change streams this node started itself because the node the picker chose "
              "refused, did not start it in time, or could not be reached (reason).",
              { QByteArray("reason") }),
        entry(Counter, G, names::StreamClaims,
              "Tenant change streams granted to this node, by why it claimed them (cause).",
              { QByteArray("cause") }),
    };
    std::sort(entries.begin(), entries.end(), [](const CatalogEntry &a, const CatalogEntry &b) {
        return a.spec.name < b.spec.name;
    });
    return entries;
}

const CatalogEntry &find(QByteArrayView name)
{
    const std::vector<CatalogEntry> &entries = catalog();
    const auto it = std::find_if(entries.begin(), entries.end(), [&](const CatalogEntry &e) {
        return QByteArrayView(e.spec.name) == name;
    });
    // Belief: ServerMetrics asks only for names this file defines.
    if (it == entries.end()) {
        qFatal("metrics: \"%s\" is not in the catalog", name.toByteArray().constData());
    }
    return *it;
}

Registry &registryFor(const CatalogEntry &entry, Registry &global, Registry &tenant)
{
    return entry.scope == Scope::Global ? global : tenant;
}

template <typename F>
F &declare(const char *name, Registry &global, Registry &tenant)
{
    const CatalogEntry &entry = find(name);
    Registry &registry = registryFor(entry, global, tenant);
    if constexpr (std::is_same_v<F, CounterFamily>) {
        return registry.counterFamily(entry.spec);
    } else if constexpr (std::is_same_v<F, GaugeFamily>) {
        return registry.gaugeFamily(entry.spec);
    } else {
        return registry.histogramFamily(entry.spec);
    }
}

} // namespace

const std::vector<CatalogEntry> &catalog()
{
    static const std::vector<CatalogEntry> Entries = buildCatalog();
    return Entries;
}

std::optional<CatalogEntry> catalogEntry(QByteArrayView name)
{
    const std::vector<CatalogEntry> &entries = catalog();
    const auto it = std::find_if(entries.begin(), entries.end(), [&](const CatalogEntry &e) {
        return QByteArrayView(e.spec.name) == name;
    });
    if (it == entries.end()) {
        return std::nullopt;
    }
    return *it;
}

// Tabular: one reference per family of the catalog.
ServerMetrics::ServerMetrics(Registry &global, Registry &tenant)
    : connectionsConnected(declare<GaugeFamily>(names::ConnectionsConnected, global, tenant)),
      connectionsConnectedCluster(
              declare<GaugeFamily>(names::ConnectionsConnectedCluster, global, tenant)),
      channelEvents(declare<CounterFamily>(names::ChannelEvents, global, tenant)),
      channelPresenceEvents(declare<CounterFamily>(names::ChannelPresenceEvents, global, tenant)),
      channelDbEvents(declare<CounterFamily>(names::ChannelDbEvents, global, tenant)),
      channelJoins(declare<CounterFamily>(names::ChannelJoins, global, tenant)),
      channelInputBytes(declare<CounterFamily>(names::ChannelInputBytes, global, tenant)),
      channelOutputBytes(declare<CounterFamily>(names::ChannelOutputBytes, global, tenant)),
      channelError(declare<CounterFamily>(names::ChannelError, global, tenant)),
      tenantsPayloadSize(declare<HistogramFamily>(names::TenantsPayloadSize, global, tenant)),
      tenantsReadAuthorizationCheck(
              declare<HistogramFamily>(names::TenantsReadAuthorizationCheck, global, tenant)),
      tenantsWriteAuthorizationCheck(
              declare<HistogramFamily>(names::TenantsWriteAuthorizationCheck, global, tenant)),
      tenantsBroadcastFromDatabaseLatencyCommittedAt(declare<HistogramFamily>(
              names::TenantsBroadcastFromDatabaseLatencyCommittedAt, global, tenant)),
      tenantsBroadcastFromDatabaseLatencyInsertedAt(declare<HistogramFamily>(
              names::TenantsBroadcastFromDatabaseLatencyInsertedAt, global, tenant)),
      tenantsReplay(declare<HistogramFamily>(names::TenantsReplay, global, tenant)),
      replicationPollerQueryDuration(
              declare<HistogramFamily>(names::ReplicationPollerQueryDuration, global, tenant)),
      replicationPollerChangesDispatch(
              declare<CounterFamily>(names::ReplicationPollerChangesDispatch, global, tenant)),
      connectionsGlobalConnected(
              declare<GaugeFamily>(names::ConnectionsGlobalConnected, global, tenant).unlabelled()),
      connectionsGlobalConnectedCluster(
              declare<GaugeFamily>(names::ConnectionsGlobalConnectedCluster, global, tenant)
                      .unlabelled()),
      tenantsConnected(declare<GaugeFamily>(names::TenantsConnected, global, tenant).unlabelled()),
      channelGlobalEvents(
              declare<CounterFamily>(names::ChannelGlobalEvents, global, tenant).unlabelled()),
      channelGlobalPresenceEvents(
              declare<CounterFamily>(names::ChannelGlobalPresenceEvents, global, tenant)
                      .unlabelled()),
      channelGlobalDbEvents(
              declare<CounterFamily>(names::ChannelGlobalDbEvents, global, tenant).unlabelled()),
      channelGlobalJoins(
              declare<CounterFamily>(names::ChannelGlobalJoins, global, tenant).unlabelled()),
      channelGlobalInputBytes(
              declare<CounterFamily>(names::ChannelGlobalInputBytes, global, tenant).unlabelled()),
      channelGlobalOutputBytes(
              declare<CounterFamily>(names::ChannelGlobalOutputBytes, global, tenant).unlabelled()),
      channelGlobalError(declare<CounterFamily>(names::ChannelGlobalError, global, tenant)),
      payloadSize(declare<HistogramFamily>(names::PayloadSize, global, tenant)),
      globalRpc(declare<HistogramFamily>(names::GlobalRpc, global, tenant)),
      tenantsMigrationsDuration(declare<HistogramFamily>(
              names::TenantsMigrationsDurationMilliseconds, global, tenant)),
      tenantsMigrationsExceptions(
              declare<CounterFamily>(names::TenantsMigrationsExceptionsTotal, global, tenant)),
      tenantsMigrationsReconcile(
              declare<CounterFamily>(names::TenantsMigrationsReconcileTotal, global, tenant)
                      .unlabelled()),
      tenantsMigrationsReconcileExceptions(
              declare<CounterFamily>(names::TenantsMigrationsReconcileExceptionsTotal, global,
                                     tenant)
                      .unlabelled()),
      messagesIn(declare<CounterFamily>(names::MessagesIn, global, tenant)),
      messagesOut(declare<CounterFamily>(names::MessagesOut, global, tenant)),
      slowConsumerDroppedMessages(
              declare<CounterFamily>(names::SlowConsumerDroppedMessages, global, tenant)),
      slowConsumerDisconnects(
              declare<CounterFamily>(names::SlowConsumerDisconnects, global, tenant)),
      rateLimitRejections(declare<CounterFamily>(names::RateLimitRejections, global, tenant)),
      fanoutLatency(declare<HistogramFamily>(names::FanoutLatency, global, tenant)),
      controlPlaneRouting(declare<CounterFamily>(names::ControlPlaneRouting, global, tenant)),
      streamPlacements(declare<CounterFamily>(names::StreamPlacements, global, tenant)),
      streamPlacementFallbacks(
              declare<CounterFamily>(names::StreamPlacementFallbacks, global, tenant)),
      streamClaims(declare<CounterFamily>(names::StreamClaims, global, tenant))
{ }

} // namespace rt::metrics
