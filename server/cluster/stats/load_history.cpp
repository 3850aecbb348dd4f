#include "server/cluster/stats/load_history.h"

#include <QSet>

namespace rt::cluster::stats {

void LoadHistory::record(qint64 atMs, const QList<NodeInfo> &members)
{
    QSet<QString> present;
    for (const NodeInfo &node : members) {
        present.insert(node.id);
        if (!node.load) {
            continue;
        }
        std::deque<api::LoadSample> &samples = m_samples[node.id];
        samples.push_back(api::LoadSample{ atMs, *node.load });
        while (samples.size() > static_cast<std::size_t>(m_maxSamples)) {
            samples.pop_front();
        }
    }
    for (auto it = m_samples.begin(); it != m_samples.end();) {
        it = present.contains(it.key()) ? std::next(it) : m_samples.erase(it);
    }
}

void LoadHistory::start(qint64 atMs, const NodeInfo &node)
{
    if (node.load && !m_samples.contains(node.id)) {
        m_samples[node.id].push_back(api::LoadSample{ atMs, *node.load });
    }
}

QList<api::LoadSample> LoadHistory::history(const QString &nodeId) const
{
    const auto it = m_samples.constFind(nodeId);
    if (it == m_samples.cend()) {
        return {};
    }
    return { it->cbegin(), it->cend() };
}

} // namespace rt::cluster::stats
