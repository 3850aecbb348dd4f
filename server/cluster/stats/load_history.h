#pragma once

#include "server/cluster/types.h"
#include "shared/api/cluster_snapshot.h"

#include <QHash>
#include <QList>
#include <QString>

#include <deque>

namespace rt::cluster::stats {

// The load figures of every member over a sliding window (the admin view's CPU chart), taken
// from the membership records (each node publishes its 5-minute load average there), so every
// node keeps the same history without asking anyone. One sample per member per record() call;
// at most maxSamples per member (oldest dropped). Single-threaded, pure.
class LoadHistory
{
public:
    explicit LoadHistory(int maxSamples = 120) : m_maxSamples(qMax(1, maxSamples)) { }

    // Adds one sample (atMs, wall clock) for each member with a load figure and forgets the
    // nodes that are no longer members.
    void record(qint64 atMs, const QList<NodeInfo> &members);
    // Starts the history of `node` with one sample if it has none yet (a member that just
    // joined shows its load at once instead of at the next record()); keeps everything else.
    void start(qint64 atMs, const NodeInfo &node);
    // Oldest first; empty for an unknown node.
    QList<api::LoadSample> history(const QString &nodeId) const;

private:
    int m_maxSamples;
    QHash<QString, std::deque<api::LoadSample>> m_samples;
};

} // namespace rt::cluster::stats
