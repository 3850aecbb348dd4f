#include "server/cluster/stats/snapshot_builder.h"

#include <QSet>

#include <algorithm>
#include <tuple>

namespace rt::cluster::stats {

namespace {

api::NodeSnapshot nodeSnapshot(const NodeInfo &node, const SnapshotInputs &inputs,
                               const LoadHistory &history)
{
    api::NodeSnapshot out;
    out.id = node.id;
    out.region = node.region;
    out.clientAddress = node.clientAddress;
    out.linkAddress = node.linkAddress;
    out.startedAtMs = node.startedAtMs;
    out.load = node.load;
    out.loadHistory = history.history(node.id);
    const auto stats = inputs.stats.constFind(node.id);
    if (stats != inputs.stats.cend()) {
        out.connections = stats->connections;
        out.channels = stats->channels;
        out.messagesInPerSecond = stats->messagesInPerSecond;
        out.messagesOutPerSecond = stats->messagesOutPerSecond;
        out.cpu = stats->cpuCores;
        out.cpuCount = stats->cpuCount;
        out.residentBytes = stats->residentBytes;
        for (const WorkerLoad &worker : stats->workers) {
            out.workers.append(api::WorkerSnapshot{ worker.cpuCores, worker.loopLagMs });
        }
    }
    if (node.id == inputs.self.id) {
        out.available = inputs.available;
    } else {
        // A member has a live lease; what it last said about its backend wins.
        out.available = stats == inputs.stats.cend() || stats->available;
    }
    return out;
}

// The members plus the answering node (until its record is listed), sorted by id.
QList<NodeInfo> sortedNodes(const SnapshotInputs &inputs)
{
    QList<NodeInfo> nodes = inputs.members;
    const bool selfListed = std::any_of(nodes.cbegin(), nodes.cend(), [&](const NodeInfo &node) {
        return node.id == inputs.self.id;
    });
    if (!selfListed && !inputs.self.id.isEmpty()) {
        nodes.append(inputs.self);
    }
    std::sort(nodes.begin(), nodes.end(),
              [](const NodeInfo &a, const NodeInfo &b) { return a.id < b.id; });
    return nodes;
}

// Appends one NodeSnapshot per node id; returns the ids listed.
QSet<QString> addNodes(api::ClusterSnapshot &snapshot, const SnapshotInputs &inputs,
                       const LoadHistory &history)
{
    const QList<NodeInfo> nodes = sortedNodes(inputs);
    QSet<QString> nodeIds;
    for (const NodeInfo &node : nodes) {
        if (nodeIds.contains(node.id)) {
            continue;
        }
        nodeIds.insert(node.id);
        snapshot.nodes.append(nodeSnapshot(node, inputs, history));
    }
    return nodeIds;
}

void addTenants(api::ClusterSnapshot &snapshot, const SnapshotInputs &inputs,
                const QSet<QString> &nodeIds)
{
    // Tenants with users anywhere or a stream.
    QSet<QByteArray> tenantIds;
    for (auto it = inputs.users.cbegin(); it != inputs.users.cend(); ++it) {
        tenantIds.insert(it.key());
    }
    for (auto it = inputs.streams.cbegin(); it != inputs.streams.cend(); ++it) {
        tenantIds.insert(it.key());
    }
    QList<QByteArray> sortedTenants(tenantIds.cbegin(), tenantIds.cend());
    std::sort(sortedTenants.begin(), sortedTenants.end());
    for (const QByteArray &tenant : std::as_const(sortedTenants)) {
        api::TenantPlacement placement;
        placement.tenant = QString::fromUtf8(tenant);
        const auto stream = inputs.streams.constFind(tenant);
        if (stream != inputs.streams.cend()) {
            placement.streamOwner = stream->owner;
            placement.streamState = stream->state;
        }
        const QHash<QString, int> users = inputs.users.value(tenant);
        for (auto it = users.cbegin(); it != users.cend(); ++it) {
            if (it.value() > 0 && nodeIds.contains(it.key())) {
                placement.usersByNode.insert(it.key(), it.value());
            }
        }
        if (placement.usersByNode.isEmpty() && placement.streamOwner.isEmpty()) {
            continue;
        }
        snapshot.tenants.append(std::move(placement));
    }
}

// The link and tenant flows the listed nodes reported, sorted by their keys.
void addFlows(api::ClusterSnapshot &snapshot, const SnapshotInputs &inputs,
              const QSet<QString> &nodeIds)
{
    for (const api::NodeSnapshot &node : std::as_const(snapshot.nodes)) {
        const auto stats = inputs.stats.constFind(node.id);
        if (stats == inputs.stats.cend()) {
            continue;
        }
        for (const LinkRate &link : stats->links) {
            if (link.peer != node.id && nodeIds.contains(link.peer)) {
                snapshot.links.append(api::LinkFlow{ node.id, link.peer, link.messagesPerSecond,
                                                     link.bytesPerSecond });
            }
        }
        for (const TenantRate &tenant : stats->tenants) {
            snapshot.tenantFlows.append(api::TenantFlow{ QString::fromUtf8(tenant.tenant), node.id,
                                                         tenant.messagesInPerSecond,
                                                         tenant.messagesOutPerSecond });
        }
    }
    std::sort(snapshot.links.begin(), snapshot.links.end(),
              [](const api::LinkFlow &a, const api::LinkFlow &b) {
                  return std::tie(a.from, a.to) < std::tie(b.from, b.to);
              });
    std::sort(snapshot.tenantFlows.begin(), snapshot.tenantFlows.end(),
              [](const api::TenantFlow &a, const api::TenantFlow &b) {
                  return std::tie(a.tenant, a.node) < std::tie(b.tenant, b.node);
              });
}

void addConfig(api::ClusterSnapshot &snapshot, const SnapshotInputs &inputs)
{
    snapshot.configRevision = inputs.config.revision;
    for (const ConfigEntry &entry : inputs.config.entries) {
        const auto expiry = inputs.configExpiries.constFind(entry.key);
        snapshot.config.append(
                api::ConfigValue{ entry.key, entry.value, entry.modRevision, entry.temporary,
                                  entry.temporary && expiry != inputs.configExpiries.cend()
                                          ? std::optional<qint64>(*expiry)
                                          : std::nullopt });
    }
}

} // namespace

api::ClusterSnapshot buildSnapshot(const SnapshotInputs &inputs, const LoadHistory &history)
{
    api::ClusterSnapshot snapshot;
    snapshot.takenAtMs = inputs.takenAtMs;
    snapshot.answeredBy = inputs.self.id;
    snapshot.available = inputs.available;
    const QSet<QString> nodeIds = addNodes(snapshot, inputs, history);
    addTenants(snapshot, inputs, nodeIds);
    addFlows(snapshot, inputs, nodeIds);
    addConfig(snapshot, inputs);
    return snapshot;
}

} // namespace rt::cluster::stats
