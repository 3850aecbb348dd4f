#pragma once

#include "server/cluster/stats/stats_wire.h"
#include "shared/api/node_history.h"

#include <QHash>
#include <QList>
#include <QSet>
#include <QString>

#include <deque>

namespace rt::cluster::stats {

// The sample of a node's figures at `atMs` (its loop lag: the largest of its workers').
api::NodeSample sampleOf(qint64 atMs, const NodeStats &figures, std::optional<double> load);

// The last hour of every member's own figures, one sample per interval (GET /api/admin/history):
// each node records its own and its peers' latest figures every interval, and a peer that
// connects sends its own hour once (frame kind 34), which fills in what this node did not see
// (it started later, or the two were cut apart). At most `capacity` samples per member, oldest
// dropped first: 720 samples of 5 s are an hour, 73 bytes each on the wire and about 80 in
// memory, so 100 members cost about 6 MB. Single-threaded, pure.
class MemberHistory
{
public:
    static constexpr int DefaultCapacity = 720;

    explicit MemberHistory(int capacity = DefaultCapacity) : m_capacity(qMax(1, capacity)) { }

    // Appends `sample` to `nodeId`'s history unless it is not newer than the newest there.
    void record(const QString &nodeId, const api::NodeSample &sample);
    // A member's own history as it sent it: the part older than what is held here goes in
    // front (what is held stays, it is what this node saw); then the capacity is kept.
    void merge(const QString &nodeId, const QList<api::NodeSample> &theirs);
    // Forgets every node not in `members`.
    void retainOnly(const QSet<QString> &members);

    QList<api::NodeSample> samples(const QString &nodeId) const; // oldest first
    api::ClusterHistory history(qint64 takenAtMs, const QString &answeredBy,
                                qint64 intervalMs) const; // nodes sorted by id
    int capacity() const { return m_capacity; }

private:
    void trim(std::deque<api::NodeSample> &samples) const;

    int m_capacity;
    QHash<QString, std::deque<api::NodeSample>> m_samples;
};

} // namespace rt::cluster::stats
