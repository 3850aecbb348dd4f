#pragma once

#include "server/cluster/counters/counters_state.h"
#include "server/cluster/types.h"

#include <QElapsedTimer>
#include <QObject>
#include <QSet>
#include <QTimer>

namespace rt::cluster::links {
class NodeLinks;
}
namespace rt::limits {
class RateCounterRegistry;
}
namespace rt::tenants {
class TenantUsageRegistry;
}

namespace rt::node {

class ClusterNode;

// Makes max_concurrent_users and the rate limits hold across the cluster (issue 5 part 8).
//
// Every reportIntervalMs it compares this node's connected users per tenant with what its
// peers were last told and sends the differences, with the local counts of the limited rate
// counters since the previous report (CounterBoard, fed by the rate ticker), to every connected
// peer as one KindUpdate frame; a peer whose link comes up gets a KindSync of the users figures,
// and every peer gets one every syncIntervalMs (updates lost on a breaking link are repaired by
// it). From the frames it receives it keeps users per (peer, tenant), writes their sum into the
// tenant's TenantUsage::remoteUsers, which the connect and join checks add to the node's own
// users, and feeds the rate counts into the node's counters with RateCounter::addRemote(), so
// each counter's window holds the cluster's events (reported counts are local only: nothing is
// echoed back). A peer's figures go when it leaves the membership.
//
// The figures lag by up to one report interval plus a link hop, so nodes admitting users at the
// same moment may overshoot a limit briefly; nothing is refused on a stale figure for longer.
// Without node links (single node) it only publishes this node's users to the admin view.
//
// A child of the ClusterNode, created with it on the main thread before the node moves to the
// cluster thread; it lives there and follows the node's signals (started, membersChanged,
// stopped). Its parts outlive it.
class ClusterCounters : public QObject
{
    Q_OBJECT
public:
    struct Settings
    {
        int reportIntervalMs = 500;
        int syncIntervalMs = 10'000;
    };
    struct Parts
    {
        tenants::TenantUsageRegistry &usage;
        limits::RateCounterRegistry &rates;
        cluster::counters::CounterBoard &board; // also read by the admin view
    };

    // (No default argument: clang needs Settings complete for one, and it is not inside the class.)
    ClusterCounters(ClusterNode &node, Parts parts);
    ClusterCounters(ClusterNode &node, Parts parts, Settings settings);
    ~ClusterCounters() override;

    // Peers whose figures are held (for tests and diagnostics). Cluster thread.
    QStringList peers() const { return m_remote.peers(); }

private:
    void onStarted(const cluster::NodeInfo &self);
    void onStopped();
    void report();
    void onPeerConnected(const QString &nodeId);
    void onFrame(const QString &fromNodeId, quint8 kind, const QByteArray &payload);
    void onMembersChanged(const QList<cluster::NodeInfo> &members);
    // Sends `kind` with the encoded message to every connected peer.
    void sendToPeers(quint8 kind, const cluster::counters::Message &message);
    // Writes the remote totals that changed into the tenants' usage.
    void applyRemoteTotals();
    void publishView(const cluster::counters::UsersByTenant &local);
    cluster::counters::UsersByTenant localUsers() const;

    ClusterNode &m_node;
    Parts m_parts;
    Settings m_settings;
    QString m_selfId;
    cluster::links::NodeLinks *m_links = nullptr; // the node's; etcd only
    QTimer m_timer; // a child: it moves to the cluster thread with this object
    QElapsedTimer m_sinceSync;
    cluster::counters::LocalReport m_report;
    cluster::counters::RemoteFigures m_remote;
    QSet<QString> m_members; // last membership view (node ids)
    // Nodes that left the membership: their late frames are ignored until they are back.
    QSet<QString> m_departed;
    cluster::counters::UsersByTenant m_lastLocal;
};

} // namespace rt::node
