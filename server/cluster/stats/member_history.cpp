#include "server/cluster/stats/member_history.h"

#include <algorithm>

namespace rt::cluster::stats {

api::NodeSample sampleOf(qint64 atMs, const NodeStats &figures, std::optional<double> load)
{
    double lag = 0;
    for (const WorkerLoad &worker : figures.workers) {
        lag = std::max(lag, worker.loopLagMs);
    }
    return api::NodeSample{ atMs,
                            figures.cpuCores,
                            figures.residentBytes,
                            figures.connections,
                            figures.channels,
                            figures.messagesInPerSecond,
                            figures.messagesOutPerSecond,
                            lag,
                            load };
}

void MemberHistory::record(const QString &nodeId, const api::NodeSample &sample)
{
    std::deque<api::NodeSample> &samples = m_samples[nodeId];
    if (!samples.empty() && sample.atMs <= samples.back().atMs) {
        return;
    }
    samples.push_back(sample);
    trim(samples);
}

void MemberHistory::merge(const QString &nodeId, const QList<api::NodeSample> &theirs)
{
    std::deque<api::NodeSample> &samples = m_samples[nodeId];
    // Theirs are in time order (the decoder checks): take those before what is held, newest
    // first, so that the capacity keeps the most recent of them.
    for (qsizetype i = theirs.size() - 1; i >= 0; --i) {
        const api::NodeSample &sample = theirs.at(i);
        if (std::ssize(samples) >= m_capacity) {
            break;
        }
        if (samples.empty() || sample.atMs < samples.front().atMs) {
            samples.push_front(sample);
        }
    }
    trim(samples);
}

void MemberHistory::retainOnly(const QSet<QString> &members)
{
    m_samples.removeIf([&members](const auto &it) { return !members.contains(it.key()); });
}

QList<api::NodeSample> MemberHistory::samples(const QString &nodeId) const
{
    const auto it = m_samples.constFind(nodeId);
    if (it == m_samples.constEnd()) {
        return {};
    }
    return { it->cbegin(), it->cend() };
}

api::ClusterHistory MemberHistory::history(qint64 takenAtMs, const QString &answeredBy,
                                           qint64 intervalMs) const
{
    api::ClusterHistory history{ takenAtMs, answeredBy, intervalMs, {} };
    for (auto it = m_samples.cbegin(); it != m_samples.cend(); ++it) {
        history.nodes.append(
                api::NodeHistory{ it.key(), QList<api::NodeSample>(it->cbegin(), it->cend()) });
    }
    std::sort(history.nodes.begin(), history.nodes.end(),
              [](const api::NodeHistory &a, const api::NodeHistory &b) { return a.id < b.id; });
    return history;
}

void MemberHistory::trim(std::deque<api::NodeSample> &samples) const
{
    while (std::ssize(samples) > m_capacity) {
        samples.pop_front();
    }
}

} // namespace rt::cluster::stats
