#pragma once

#include "server/cluster/stats/load_history.h"
#include "server/cluster/stats/stats_wire.h"
#include "server/cluster/types.h"
#include "shared/api/cluster_snapshot.h"

#include <QHash>
#include <QList>
#include <QString>

namespace rt::cluster::stats {

// Where a tenant's change stream (its per-tenant singleton) runs.
struct StreamPlacement
{
    QString owner; // node id
    QString state; // "starting" | "ready"

    friend bool operator==(const StreamPlacement &, const StreamPlacement &) = default;
};

// Everything one node knows about the cluster at one moment, gathered by ClusterStats on the
// cluster thread: the membership, each member's last reported figures, the users per tenant per
// node (the cluster counters), the stream claims and the configuration.
struct SnapshotInputs
{
    qint64 takenAtMs = 0; // wall clock
    NodeInfo self; // the answering node (listed even before its record is registered)
    bool available = false; // the answering node reaches the cluster backend
    QList<NodeInfo> members;
    QHash<QString, NodeStats> stats; // node id -> its figures (self included)
    QHash<QByteArray, QHash<QString, int>> users; // tenant -> node -> users
    QHash<QByteArray, StreamPlacement> streams; // tenant -> its stream
    ConfigSnapshot config;
    QHash<QString, qint64> configExpiries; // temporary key -> when it expires (wall ms)
};

// The admin API's snapshot (docs/admin-api.md): nodes sorted by id (figures of members that
// have not reported yet are 0), tenants with users or a stream sorted by id, link and tenant
// flows of the members sorted by their keys, configuration sorted by key. Figures of nodes that
// are not members are left out. Pure.
api::ClusterSnapshot buildSnapshot(const SnapshotInputs &inputs, const LoadHistory &history);

} // namespace rt::cluster::stats
