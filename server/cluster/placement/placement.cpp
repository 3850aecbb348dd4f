#include "server/cluster/placement/placement.h"

#include "server/cluster/placement/stable_hash.h"

#include <algorithm>
#include <cmath>

namespace rt::cluster::placement {

namespace {

// Hash input separator between the tenant id and the bucket: a byte UTF-8 never produces, so
// ("ab", bucket) and ("a", other bucket) cannot collide by construction of the input.
constexpr char Separator = '\xff';

std::optional<double> usableLoad(std::optional<double> load)
{
    if (!load || !std::isfinite(*load) || *load < 0) {
        return std::nullopt;
    }
    return load;
}

// Orders duplicates of one node id deterministically: by id, then "no data" first, then load.
bool candidateLess(const NodeCandidate &a, const NodeCandidate &b)
{
    if (a.nodeId != b.nodeId) {
        return a.nodeId < b.nodeId;
    }
    const auto la = usableLoad(a.load);
    const auto lb = usableLoad(b.load);
    if (la.has_value() != lb.has_value()) {
        return !la.has_value();
    }
    return la && *la < *lb;
}

// The region's nodes, sorted by id, one entry per id.
QList<NodeCandidate> sortedRegionCandidates(const QList<NodeCandidate> &nodes,
                                            const QString &region)
{
    QList<NodeCandidate> inRegion;
    for (const NodeCandidate &node : nodes) {
        if (node.region == region && !node.nodeId.isEmpty()) {
            inRegion.append(node);
        }
    }
    std::sort(inRegion.begin(), inRegion.end(), candidateLess);
    const auto last = std::unique(
            inRegion.begin(), inRegion.end(),
            [](const NodeCandidate &a, const NodeCandidate &b) { return a.nodeId == b.nodeId; });
    inRegion.erase(last, inRegion.end());
    return inRegion;
}

std::uint64_t tenantHash(const QString &tenantId)
{
    return fnv1a64(QStringView(tenantId));
}

} // namespace

QString platformRegion(const QString &tenantRegion, const QString &selfRegion,
                       const PlacementSettings &settings)
{
    QString region = tenantRegion;
    if (region.isEmpty()) {
        region = settings.defaultTenantRegion.isEmpty() ? selfRegion : settings.defaultTenantRegion;
    }
    const auto mapped = settings.regionMapping.constFind(region);
    return mapped != settings.regionMapping.constEnd() ? *mapped : region;
}

qint64 timeBucket(qint64 epochMs, const PlacementSettings &settings)
{
    const qint64 widthMs = std::max<qint64>(
            1000,
            std::chrono::duration_cast<std::chrono::milliseconds>(settings.timeBucket).count());
    // Floor division, so instants before the epoch still fall into one bucket per width.
    qint64 bucket = epochMs / widthMs;
    if (epochMs % widthMs != 0 && epochMs < 0) {
        --bucket;
    }
    return bucket;
}

std::optional<double> reportedLoad(qint64 uptimeMs, std::optional<double> loadAverage5,
                                   const PlacementSettings &settings)
{
    if (uptimeMs < settings.uptimeThreshold.count()) {
        return std::nullopt;
    }
    return usableLoad(loadAverage5);
}

QStringList regionNodes(const QList<NodeCandidate> &nodes, const QString &region)
{
    QStringList ids;
    for (const NodeCandidate &node : sortedRegionCandidates(nodes, region)) {
        ids.append(node.nodeId);
    }
    return ids;
}

std::pair<int, int> candidatePair(const QString &tenantId, qint64 bucket, int nodeCount)
{
    if (nodeCount < 2) {
        return { 0, 0 };
    }
    std::uint64_t seed = fnv1a64(QByteArrayView(&Separator, 1), tenantHash(tenantId));
    seed = fnv1a64(static_cast<std::uint64_t>(bucket), seed);
    SplitMix64 rng(seed);
    const auto count = static_cast<std::uint32_t>(nodeCount);
    const auto first = static_cast<int>(rng.below(count));
    auto second = static_cast<int>(rng.below(count));
    if (second == first) {
        // Two distinct candidates: take the next node (wrapping), as upstream does.
        second = (first + 1) % nodeCount;
    }
    return { first, second };
}

int consistentIndex(const QString &tenantId, int nodeCount)
{
    if (nodeCount < 1) {
        return 0;
    }
    return static_cast<int>(tenantHash(tenantId) % static_cast<std::uint64_t>(nodeCount));
}

PlacementDecision placeTenant(const PlacementInput &input, const PlacementSettings &settings)
{
    PlacementDecision decision;
    decision.region = platformRegion(input.tenantRegion, input.selfRegion, settings);
    const QList<NodeCandidate> nodes = sortedRegionCandidates(input.nodes, decision.region);
    if (nodes.isEmpty()) {
        decision.nodeId = input.selfNodeId;
        decision.reason = PlacementReason::NoRegionNodes;
        return decision;
    }
    if (nodes.size() == 1) {
        decision.nodeId = nodes.front().nodeId;
        decision.reason = PlacementReason::SingleNode;
        return decision;
    }
    const int count = static_cast<int>(nodes.size());
    const auto [first, second] =
            candidatePair(input.tenantId, timeBucket(input.epochMs, settings), count);
    const NodeCandidate &a = nodes.at(first);
    const NodeCandidate &b = nodes.at(second);
    decision.candidates = QStringList{ a.nodeId, b.nodeId };
    const auto loadA = usableLoad(a.load);
    const auto loadB = usableLoad(b.load);
    if (loadA && loadB) {
        decision.nodeId = *loadA <= *loadB ? a.nodeId : b.nodeId;
        decision.reason = PlacementReason::LowerLoad;
    } else {
        decision.nodeId = nodes.at(consistentIndex(input.tenantId, count)).nodeId;
        decision.reason = PlacementReason::ConsistentHash;
    }
    return decision;
}

std::optional<double> LoadCache::resolve(const QString &nodeId, qint64 bucket,
                                         std::optional<double> fresh)
{
    auto it = m_entries.find(nodeId);
    if (it != m_entries.end() && it->bucket == bucket) {
        return it->load;
    }
    m_entries.insert(nodeId, Entry{ bucket, usableLoad(fresh) });
    return usableLoad(fresh);
}

std::optional<std::optional<double>> LoadCache::lookup(const QString &nodeId, qint64 bucket) const
{
    const auto it = m_entries.constFind(nodeId);
    if (it == m_entries.constEnd() || it->bucket != bucket) {
        return std::nullopt;
    }
    return it->load;
}

void LoadCache::forget(const QString &nodeId)
{
    m_entries.remove(nodeId);
}

void LoadCache::dropBefore(qint64 bucket)
{
    m_entries.removeIf([bucket](const auto &entry) { return entry.value().bucket < bucket; });
}

const char *toString(PlacementReason reason)
{
    switch (reason) {
    case PlacementReason::NoRegionNodes:
        return "no_region_nodes";
    case PlacementReason::SingleNode:
        return "single_node";
    case PlacementReason::LowerLoad:
        return "lower_load";
    case PlacementReason::ConsistentHash:
        return "consistent_hash";
    }
    return "unknown";
}

} // namespace rt::cluster::placement
