#pragma once

#include "shared/core/result.h"

#include <QByteArray>
#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QString>

#include <optional>

// The admin API's picture of the cluster, as the server sends it and the dashboard reads it
// (GET /api/admin/snapshot and the live feed). Plain values; the JSON mapping lives here once, so
// both programs agree on every field. Reading is strict about types (a field of the wrong type
// is an error that names it) and lenient about absence (missing fields keep their defaults, so
// an older dashboard reads a newer server's snapshot).
namespace rt::api {

// One sample of a node's 5-minute load average.
struct LoadSample
{
    qint64 atMs = 0; // wall clock, ms since the epoch
    double load = 0;

    friend bool operator==(const LoadSample &, const LoadSample &) = default;
};

// One worker thread of a node: its CPU in cores and its event loop's lag.
struct WorkerSnapshot
{
    double cpu = 0;
    double loopLagMs = 0;

    friend bool operator==(const WorkerSnapshot &, const WorkerSnapshot &) = default;
};

struct NodeSnapshot
{
    QString id;
    QString region;
    QString clientAddress;
    QString linkAddress;
    qint64 startedAtMs = 0;
    // The placement load: the host's 5-minute load average (what the stream picker weighs);
    // nullopt: "not enough data" yet.
    std::optional<double> load;
    QList<LoadSample> loadHistory; // oldest first
    qint64 connections = 0;
    qint64 channels = 0;
    double messagesInPerSecond = 0;
    double messagesOutPerSecond = 0;
    bool available = true; // the node reaches the cluster backend
    // The process's own CPU (utime + stime over wall time) in cores, all threads; nullopt until
    // the node has reported. cpu / cpuCount is its share of the cores it may run on.
    std::optional<double> cpu;
    qint64 cpuCount = 0;
    qint64 residentBytes = 0;
    QList<WorkerSnapshot> workers;

    friend bool operator==(const NodeSnapshot &, const NodeSnapshot &) = default;
};

// Where a tenant lives: the node that runs its change stream (the per-tenant singleton) and the
// nodes that hold its clients.
struct TenantPlacement
{
    QString tenant;
    QString streamOwner; // empty: no stream runs
    QString streamState; // "starting" | "ready" | empty
    QHash<QString, qint64> usersByNode; // node id -> connected users

    friend bool operator==(const TenantPlacement &, const TenantPlacement &) = default;
};

// Messages per second from one node to another over the node links.
struct LinkFlow
{
    QString from;
    QString to;
    double messagesPerSecond = 0;
    double bytesPerSecond = 0;

    friend bool operator==(const LinkFlow &, const LinkFlow &) = default;
};

// Messages per second of one tenant on one node (delivered to its clients, received from them).
struct TenantFlow
{
    QString tenant;
    QString node;
    double messagesInPerSecond = 0;
    double messagesOutPerSecond = 0;

    friend bool operator==(const TenantFlow &, const TenantFlow &) = default;
};

struct ConfigValue
{
    QString key;
    QByteArray value; // JSON text as stored
    qint64 modRevision = 0;
    bool temporary = false;
    // A temporary entry's end (ms since the epoch), once the answering node knows it.
    std::optional<qint64> expiresAtMs;

    friend bool operator==(const ConfigValue &, const ConfigValue &) = default;
};

struct ClusterSnapshot
{
    qint64 takenAtMs = 0;
    QString answeredBy; // the node that made the snapshot
    bool available = false; // that node reaches the cluster backend
    QList<NodeSnapshot> nodes; // sorted by id
    QList<TenantPlacement> tenants; // sorted by tenant
    QList<LinkFlow> links;
    QList<TenantFlow> tenantFlows;
    qint64 configRevision = 0;
    QList<ConfigValue> config; // sorted by key

    QJsonObject toJson() const;
    static Result<ClusterSnapshot> fromJson(const QJsonObject &object);
    static Result<ClusterSnapshot> fromJson(QByteArrayView json);

    friend bool operator==(const ClusterSnapshot &, const ClusterSnapshot &) = default;
};

// Drops `snapshot` on a pool thread. The last reference to a snapshot of 10,000 tenants frees
// ~100,000 blocks, 10-20 ms that a GUI thread should not spend; its parts are implicitly shared
// with atomic reference counts, so copies still held elsewhere are unaffected.
void releaseInBackground(ClusterSnapshot &&snapshot);

} // namespace rt::api
