#pragma once

#include "server/cluster/stats/load_history.h"
#include "server/cluster/stats/member_history.h"
#include "server/cluster/stats/rate_meter.h"
#include "server/cluster/stats/snapshot_builder.h"
#include "server/cluster/stats/stats_wire.h"
#include "server/cluster/types.h"
#include "server/runtime/mailbox.h"
#include "server/runtime/process_figures.h"

#include <QElapsedTimer>
#include <QHash>
#include <QObject>
#include <QSet>
#include <QTimer>

#include <functional>

namespace rt::cluster::counters {
class CounterBoard;
}
namespace rt::cluster::links {
class NodeLinks;
}
namespace rt::cdc {
class CdcService;
}
namespace rt::tenants {
class TenantDirectory;
}

namespace rt::node {

class ClusterNode;
class NodeConfigAccess;

// One worker thread as it last reported itself (the Server's probe, one per report).
struct WorkerActivity
{
    qint64 cpuNs = 0; // the thread's CPU time so far
    qint64 startedNs = 0; // runtime::monotonicNs() when the thread started
    qint64 loopLagNs = 0; // how long the probe waited in its event loop before it ran
};

// This node's own activity as running totals, read from any thread without waiting (the
// Server samples its workers' figures in the background).
struct LocalActivity
{
    qint64 processCpuNs = 0; // runtime::processCpuNs()
    qint64 residentBytes = 0;
    QList<WorkerActivity> workers;
    qint64 connections = 0; // client sockets
    qint64 channels = 0; // channel topics with members
    QHash<QByteArray, quint64> messagesIn; // tenant -> client messages received so far
    QHash<QByteArray, quint64> messagesOut; // tenant -> messages written to clients so far
};

// The admin view of the whole cluster (GET /api/admin/snapshot and the live feed, issue 6).
//
// Every reportIntervalMs it reads this node's activity, turns the running totals (per tenant,
// and the broadcasts sent to each peer: ClusterPubSub::stats()) into rates and sends the result
// to every connected peer as one node-stats frame (kind 26); it keeps the last frame of each
// member, and the process's own figures (CPU in cores, in all and per worker, resident memory,
// each worker's event-loop lag) are in it from the first report. Every loadSampleIntervalMs it
// adds each member's published load to the load history and each member's figures to the hour
// of history (MemberHistory); a peer whose link comes up gets this node's own hour (kind 34).
// snapshotJson() assembles the snapshot from these, the users per tenant per node (the cluster
// counters' board), the stream claims and the configuration. Other nodes' figures are at most
// about one report interval plus a link hop old. Without node links (single node) it describes
// this node alone.
//
// A child of the ClusterNode, created with it on the main thread before the node moves to the
// cluster thread; it lives there and follows the node's signals. Other threads reach it only
// through mailbox(). Its parts outlive it.
class ClusterStats : public QObject
{
    Q_OBJECT
public:
    struct Settings
    {
        int reportIntervalMs = 500;
        int loadSampleIntervalMs = 5000;
        int loadHistorySamples = 120; // 10 minutes at one sample every 5 s
        int historySamples = cluster::stats::MemberHistory::DefaultCapacity; // an hour at 5 s
        int snapshotReuseMs = 250; // feeds and requests within this share one build
    };
    struct Parts
    {
        const cluster::counters::CounterBoard &counters; // users per tenant per node
        const NodeConfigAccess &config;
        std::function<LocalActivity()> localActivity; // any thread, never blocks
        cdc::CdcService *cdc = nullptr; // a single node's own streams
        const tenants::TenantDirectory *tenants = nullptr; // whose stream claims to look up
    };

    // (No default argument: clang needs Settings complete for one, and it is not inside the class.)
    ClusterStats(ClusterNode &node, Parts parts);
    ClusterStats(ClusterNode &node, Parts parts, Settings settings);
    ~ClusterStats() override;

    // Posts work to this object's thread from any thread; posts are dropped once it is gone.
    const runtime::MailboxPtr &mailbox() const { return m_mailbox; }
    // The snapshot's compact JSON (rt::api::ClusterSnapshot::toJson()). Cluster thread.
    QByteArray snapshotJson();
    // The members' hour of figures (rt::api::ClusterHistory::toJson()). Cluster thread.
    QByteArray historyJson() const;

private:
    void onStarted(const cluster::NodeInfo &self);
    void onStopped();
    void onFrame(const QString &fromNodeId, quint8 kind, const QByteArray &payload);
    void onMembersChanged(const QList<cluster::NodeInfo> &members);
    void report();
    // The steps of report(): rates since the last report into `local`, then m_local to the peers.
    void measureTenantRates(qint64 nowMs, const LocalActivity &activity,
                            cluster::stats::NodeStats &local);
    void measureLinkRates(qint64 nowMs, cluster::stats::NodeStats &local);
    void measureProcess(const LocalActivity &activity, cluster::stats::NodeStats &local);
    void sendLocalStats();
    void sendHistory(const QString &peer);
    void sampleLoad();
    void sampleHistory(qint64 atMs, const QList<cluster::NodeInfo> &members);
    QList<cluster::NodeInfo> members() const;
    QHash<QByteArray, cluster::stats::StreamPlacement> streams() const;
    QHash<QByteArray, QHash<QString, int>> users() const;

    ClusterNode &m_node;
    Parts m_parts;
    Settings m_settings;
    runtime::MailboxPtr m_mailbox;
    QString m_selfId;
    cluster::links::NodeLinks *m_links = nullptr; // the node's; etcd only
    QTimer m_reportTimer; // children: they move to the cluster thread with this object
    QTimer m_loadTimer;
    QElapsedTimer m_clock;
    cluster::stats::RateMeter m_messagesIn;
    cluster::stats::RateMeter m_messagesOut;
    cluster::stats::RateMeter m_linkMessages;
    cluster::stats::RateMeter m_linkBytes;
    cluster::stats::NodeStats m_local;
    QHash<QString, cluster::stats::NodeStats> m_remote; // members' last figures
    QSet<QString> m_members;
    cluster::stats::LoadHistory m_loadHistory;
    cluster::stats::MemberHistory m_memberHistory;
    runtime::CpuRate m_processCpu{ runtime::processStartedNs() };
    std::vector<runtime::CpuRate> m_workerCpu; // one per worker, in the activity's order
    QByteArray m_json;
    qint64 m_jsonBuiltMs = -1; // m_clock time of m_json
};

} // namespace rt::node
