#pragma once

#include <QHash>
#include <QList>
#include <QString>
#include <QStringList>

#include <chrono>
#include <optional>
#include <utility>

namespace rt::cluster::placement {

// Which node runs a tenant's singletons (its database connection and its postgres_changes
// stream). The rules follow supabase/realtime (seed 000, Realtime.Nodes.launch_node):
//
//   1. The tenant's region is translated to a platform region (regionMapping); the candidates
//      are the live nodes of that region, sorted by node id. None: this node runs it.
//      One: that node.
//   2. Otherwise an RNG seeded with a stable hash of (tenant id, time bucket) picks two distinct
//      candidates. Every node deciding within the same bucket picks the same pair, so concurrent
//      requests for one tenant agree; the next bucket picks another pair, so tenants spread.
//   3. The candidate with the lower 5-minute load average wins (a tie goes to the first pick).
//      If either candidate has no load figure ("not enough data": the node is younger than the
//      uptime threshold, or its load is unknown), the tenant goes to
//      sortedNodes[hash(tenant id) mod count] instead, so freshly booted nodes that look idle do
//      not absorb every tenant.
//
// Agreement is best effort: deciders on either side of a bucket edge, or with skewed clocks,
// may disagree; the registry's conflict resolution handles the rare double start.
// Everything here is pure and deterministic: the same inputs give the same node in every
// process, whatever the order of `nodes`.

struct PlacementSettings
{
    // Width of the window in which all deciders pick the same candidate pair.
    std::chrono::seconds timeBucket{ 60 };
    // A node up for less than this reports "not enough data" instead of its load.
    std::chrono::milliseconds uptimeThreshold{ std::chrono::minutes(5) };
    // Tenant region (e.g. the region of the tenant's database) -> platform region (the REGION
    // nodes run in). A region without an entry maps to itself.
    QHash<QString, QString> regionMapping;
    // Region assumed for a tenant that has none; empty means the deciding node's own region.
    QString defaultTenantRegion;
};

// A live node as the decider sees it.
struct NodeCandidate
{
    QString nodeId;
    QString region;
    // 5-minute load average as reported by the node (see reportedLoad) and cached for the
    // bucket (LoadCache); nullopt means "not enough data". Negative or NaN counts as nullopt.
    std::optional<double> load;
};

enum class PlacementReason {
    NoRegionNodes, // no live node in the tenant's region: the deciding node runs it
    SingleNode, // exactly one node in the region
    LowerLoad, // two candidates with known loads; the less loaded one won
    ConsistentHash, // a candidate had no load figure: hash of the tenant over sorted nodes
};

struct PlacementDecision
{
    QString nodeId;
    QString region; // the platform region the tenant maps to
    PlacementReason reason = PlacementReason::NoRegionNodes;
    // The two candidates drawn for the bucket (empty unless reason is LowerLoad/ConsistentHash).
    QStringList candidates;
};

struct PlacementInput
{
    QString tenantId; // external id
    QString tenantRegion; // may be empty
    QString selfNodeId; // the deciding node
    QString selfRegion;
    qint64 epochMs = 0; // wall clock of the decision (selects the time bucket)
    QList<NodeCandidate> nodes; // live members, any order; may include the deciding node
};

// The decision for one tenant.
PlacementDecision placeTenant(const PlacementInput &input, const PlacementSettings &settings);

// The building blocks, exposed for callers that fetch only the two candidates' loads and for
// tests.

// The platform region a tenant belongs to.
QString platformRegion(const QString &tenantRegion, const QString &selfRegion,
                       const PlacementSettings &settings);

// floor(epochMs / timeBucket); a non-positive bucket width counts as 1 s.
qint64 timeBucket(qint64 epochMs, const PlacementSettings &settings);

// What a node reports as its own load: nullopt while younger than the uptime threshold, else
// its 5-minute load average (itself nullopt when unreadable).
std::optional<double> reportedLoad(qint64 uptimeMs, std::optional<double> loadAverage5,
                                   const PlacementSettings &settings);

// Distinct node ids of `region`, sorted.
QStringList regionNodes(const QList<NodeCandidate> &nodes, const QString &region);

// The two distinct indexes into a sorted list of nodeCount (>= 2) nodes drawn for
// (tenant, bucket). For nodeCount < 2 both are 0.
std::pair<int, int> candidatePair(const QString &tenantId, qint64 bucket, int nodeCount);

// hash(tenant id) mod nodeCount, the fallback index into the sorted nodes (0 if nodeCount < 1).
int consistentIndex(const QString &tenantId, int nodeCount);

// Loads fetched from nodes, kept for the time bucket in which they were first seen, so that
// every decision in one bucket on this node compares the same figures (and a remote node is
// asked at most once per bucket). A value type; the owner decides which thread uses it.
class LoadCache
{
public:
    // The load to use for `nodeId` in `bucket`: the one cached for this bucket if any; otherwise
    // `fresh`, which is cached for the rest of the bucket. "Not enough data" is cached too.
    std::optional<double> resolve(const QString &nodeId, qint64 bucket,
                                  std::optional<double> fresh);
    // The cached load for this bucket, if one was stored; the outer optional says whether.
    std::optional<std::optional<double>> lookup(const QString &nodeId, qint64 bucket) const;
    // Forget a node (it left the cluster).
    void forget(const QString &nodeId);
    // Drop entries of buckets older than `bucket` (bounds the cache by the member count).
    void dropBefore(qint64 bucket);
    qsizetype size() const { return m_entries.size(); }

private:
    struct Entry
    {
        qint64 bucket = 0;
        std::optional<double> load;
    };
    QHash<QString, Entry> m_entries;
};

const char *toString(PlacementReason reason);

} // namespace rt::cluster::placement
