#pragma once

// A synthetic cluster of 100 nodes and 10,000 tenants that changes a little every second: the
// scale the dashboard must stay responsive at (issue 6). Shared by the model and the window
// tests; deterministic (fixed seed).
#include "shared/api/cluster_snapshot.h"

#include <QHash>
#include <QRandomGenerator>
#include <QStringList>

#include <algorithm>
#include <ctime>

namespace rt::dashboard::testing {

constexpr int NodeCount = 100;
constexpr int TenantCount = 10'000;

inline QString nodeName(int i)
{
    return QStringLiteral("node-%1").arg(i, 3, 10, QLatin1Char('0'));
}

// CPU time of the calling thread: a stall budget that the machine's other work cannot break.
inline double threadCpuMs()
{
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return double(now.tv_sec) * 1000.0 + double(now.tv_nsec) / 1e6;
}

// A synthetic cluster that changes a little every second, kept sorted as the server sends it.
class SyntheticCluster
{
public:
    SyntheticCluster()
    {
        m_snapshot.takenAtMs = 1'800'000'000'000;
        m_snapshot.answeredBy = nodeName(0);
        m_snapshot.available = true;
        for (int i = 0; i < NodeCount; ++i) {
            api::NodeSnapshot node;
            node.id = nodeName(i);
            node.region = QStringLiteral("region-%1").arg(i % 5);
            node.clientAddress = QStringLiteral("10.0.%1.%2:4000").arg(i / 250).arg(i % 250 + 1);
            node.linkAddress = QStringLiteral("10.0.%1.%2:7000").arg(i / 250).arg(i % 250 + 1);
            node.startedAtMs = m_snapshot.takenAtMs - 3'600'000 - i * 1000;
            node.load = 0.5 + i * 0.01;
            for (int s = 0; s < 10; ++s) {
                node.loadHistory.append({ m_snapshot.takenAtMs - (10 - s) * 60'000, 0.5 });
            }
            m_snapshot.nodes.append(node);
        }
        for (int t = 0; t < TenantCount; ++t) {
            m_snapshot.tenants.append(
                    makeTenant(QStringLiteral("tenant-%1").arg(t, 5, 10, QLatin1Char('0'))));
        }
        for (int from = 0; from < NodeCount; ++from) {
            for (int to = 0; to < NodeCount; ++to) {
                if (from != to) {
                    m_snapshot.links.append({ nodeName(from), nodeName(to), 10.0, 2000.0 });
                }
            }
        }
        rebuildFlows();
        for (int k = 0; k < 50; ++k) {
            m_snapshot.config.append({ QStringLiteral("key.%1").arg(k, 2, 10, QLatin1Char('0')),
                                       QByteArrayLiteral("{\"value\":1}"), k + 1, false,
                                       std::nullopt });
        }
        m_snapshot.configRevision = 50;
    }

    const api::ClusterSnapshot &snapshot() const { return m_snapshot; }
    QStringList deadNodes() const { return m_dead; }

    // One second later: ~5% of tenants change users, ~5% of flows and links change rates, every
    // node's figures move, 10 tenants leave and 10 arrive; at `dieAt` a node dies.
    void advance(int step, int dieAt)
    {
        m_snapshot.takenAtMs += 1000;
        for (api::NodeSnapshot &node : m_snapshot.nodes) {
            node.load = 0.5 + m_random.bounded(100) / 100.0;
            node.loadHistory.removeFirst();
            node.loadHistory.append({ m_snapshot.takenAtMs, *node.load });
            node.messagesInPerSecond = m_random.bounded(1000);
            node.messagesOutPerSecond = m_random.bounded(10000);
        }
        if (step == dieAt) {
            const qsizetype victim = 42;
            m_dead.append(m_snapshot.nodes.at(victim).id);
            m_snapshot.nodes.removeAt(victim);
            m_snapshot.links.removeIf([this](const api::LinkFlow &link) {
                return m_dead.contains(link.from) || m_dead.contains(link.to);
            });
            // Its users reconnect elsewhere and its streams move.
            for (api::TenantPlacement &tenant : m_snapshot.tenants) {
                const QString dead = m_dead.constLast();
                if (const qint64 users = tenant.usersByNode.take(dead); users > 0) {
                    tenant.usersByNode[nodeName(0)] += users;
                }
                if (tenant.streamOwner == dead) {
                    tenant.streamOwner = nodeName(1);
                    tenant.streamState = QStringLiteral("starting");
                }
            }
        }
        const qsizetype changes = m_snapshot.tenants.size() / 20;
        for (qsizetype k = 0; k < changes; ++k) {
            api::TenantPlacement &tenant =
                    m_snapshot.tenants[m_random.bounded(m_snapshot.tenants.size())];
            // Mostly more users where the tenant already is; now and then on another node.
            const QString node = m_random.bounded(10) == 0 || tenant.usersByNode.isEmpty()
                    ? liveNode()
                    : tenant.usersByNode.keys().at(m_random.bounded(tenant.usersByNode.size()));
            tenant.usersByNode[node] += 1 + m_random.bounded(5);
        }
        for (qsizetype k = 0; k < 10; ++k) {
            m_snapshot.tenants.removeAt(m_random.bounded(m_snapshot.tenants.size()));
        }
        for (qsizetype k = 0; k < 10; ++k) {
            m_snapshot.tenants.append(
                    makeTenant(QStringLiteral("tenant-%1-new%2")
                                       .arg(m_random.bounded(TenantCount), 5, 10, QLatin1Char('0'))
                                       .arg(m_created++)));
        }
        std::sort(m_snapshot.tenants.begin(), m_snapshot.tenants.end(),
                  [](const auto &a, const auto &b) { return a.tenant < b.tenant; });
        rebuildFlows();
        const qsizetype linkChanges = m_snapshot.links.size() / 20;
        for (qsizetype k = 0; k < linkChanges; ++k) {
            api::LinkFlow &link = m_snapshot.links[m_random.bounded(m_snapshot.links.size())];
            link.messagesPerSecond = m_random.bounded(500);
            link.bytesPerSecond = link.messagesPerSecond * 200;
        }
        if (step % 5 == 0) {
            m_snapshot.config[step % m_snapshot.config.size()].modRevision =
                    ++m_snapshot.configRevision;
        }
    }

private:
    QString liveNode() { return m_snapshot.nodes.at(m_random.bounded(m_snapshot.nodes.size())).id; }
    api::TenantPlacement makeTenant(const QString &name)
    {
        api::TenantPlacement tenant;
        tenant.tenant = name;
        const int nodes = 1 + int(m_random.bounded(3));
        for (int n = 0; n < nodes; ++n) {
            tenant.usersByNode.insert(liveNode(), 1 + m_random.bounded(100));
        }
        if (m_random.bounded(2) == 0) {
            tenant.streamOwner = tenant.usersByNode.cbegin().key();
            tenant.streamState = QStringLiteral("ready");
        }
        return tenant;
    }
    // One flow per tenant per node with clients; ~5% change their rates each second.
    void rebuildFlows()
    {
        QHash<std::pair<QString, QString>, std::pair<double, double>> previous;
        previous.reserve(m_snapshot.tenantFlows.size());
        for (const api::TenantFlow &flow : std::as_const(m_snapshot.tenantFlows)) {
            previous.insert({ flow.tenant, flow.node },
                            { flow.messagesInPerSecond, flow.messagesOutPerSecond });
        }
        m_snapshot.tenantFlows.clear();
        for (const api::TenantPlacement &tenant : std::as_const(m_snapshot.tenants)) {
            QStringList nodes = tenant.usersByNode.keys();
            nodes.sort();
            for (const QString &node : std::as_const(nodes)) {
                auto rates = previous.value({ tenant.tenant, node }, { 1.0, 10.0 });
                if (m_random.bounded(20) == 0) {
                    rates = { double(m_random.bounded(100)), double(m_random.bounded(1000)) };
                }
                m_snapshot.tenantFlows.append({ tenant.tenant, node, rates.first, rates.second });
            }
        }
    }

    api::ClusterSnapshot m_snapshot;
    QRandomGenerator m_random{ 20261130 };
    QStringList m_dead;
    int m_created = 0;
};

} // namespace rt::dashboard::testing
