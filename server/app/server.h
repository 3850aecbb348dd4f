#pragma once

#include "server/app/config.h"
#include "server/cdc/cdc_service.h"
#include "server/cluster/counters/counters_state.h"
#include "server/cluster/types.h"
#include "server/limits/rate_counter_ticker.h"
#include "server/metrics/catalog.h"
#include "server/metrics/registry.h"
#include "server/presence/presence_store.h"
#include "server/pubsub/local_pubsub.h"
#include "server/pubsub/node_pubsub.h"
#include "server/pubsub/sequencing_pubsub.h"
#include "server/pubsub/topic_history.h"
#include "server/runtime/mailbox.h"
#include "server/tenants/tenant_directory.h"
#include "server/tenants/tenant_rates.h"

#include <QJsonObject>
#include <QMutex>
#include <QObject>
#include <QThread>

#include <atomic>
#include <memory>

namespace rt::runtime {
class WorkerPool;
}
namespace rt::transport {
class ConnectionAdmission;
class Listener;
class IoLoop;
} // namespace rt::transport
namespace rt::gateway {
class ConnectGate;
}
namespace rt::http {
class AdminAuth;
class TenantApiAuth;
class BroadcastRoutes;
class ClusterConfigRoutes;
class TenantRoutes;
} // namespace rt::http
namespace rt::tenants {
class ControlPlane;
}
namespace rt::tls {
class ReloadableServerContext;
}

namespace rt::node {
class ClusterNode;
class ClusterStats;
struct LocalActivity;
class NodeConfigAccess;
} // namespace rt::node

namespace rt::app {

class WorkerNode;

// One realtime node, wired: control plane on the db thread, presence on the main thread,
// connections on the workers. This is the one place that names concrete implementations.
// Lives on the main thread. start() is asynchronous: it ends in started() or failed().
class Server : public QObject
{
    Q_OBJECT
public:
    explicit Server(ServerConfig config, QObject *parent = nullptr);
    ~Server() override;

    void start();
    // Stops accepting, closes every socket with 1012 (Service Restart) so that clients
    // reconnect, and stops the threads. Idempotent.
    void stop();
    // Reads the client port's certificate and key again (SIGHUP); new connections use them,
    // open ones keep theirs. A file that cannot be used is logged and the old pair stays.
    void reloadCertificates();

    quint16 port() const;
    const ServerConfig &config() const { return m_config; }
    tenants::TenantDirectory &tenants() { return m_tenants; }

    // Sends "Server requested disconnect" and closes (1012) every socket of the tenant on every
    // worker. Any thread.
    void disconnectTenant(const QByteArray &externalId);

    // The name this node reports (NODE_NAME, or host name and port).
    QString nodeName() const;

Q_SIGNALS:
    void started(quint16 port);
    void failed(const QString &message);

private:
    void onControlPlaneReady();
    bool loadClientTls();
    // A tenant was written, deleted or found changed (db thread): sockets, rate counters, series.
    void onTenantChanged(const QByteArray &externalId, bool disconnectSockets);
    // Feeds the per-tick counts of the rate counters into the metrics (upstream's telemetry).
    void recordRateTicks(const limits::RateCounterRegistry::TickPass &pass);
    // The /metrics body: gauges sampled now, then every family rendered. Any thread.
    QByteArray renderMetrics() const;
    void onWorkerReady();
    void startListening();
    // Joins the cluster once the client port is known (it is part of the node's record).
    void startCluster(quint16 clientPort);
    // startCluster's steps.
    std::function<pubsub::DeliveryCounting(const pubsub::TopicKey &, bool)>
    remoteCountingFunction();
    void applySavedClusterConfig();
    void addClusterParts(
            const std::function<void(const QByteArray &, std::function<void()>)> &refreshTenant);
    void connectClusterNode();
    // GET /api/cluster. Any thread.
    QJsonObject clusterView() const;
    // The admin snapshot (GET /api/admin/snapshot, the live feed): built on the cluster thread,
    // which calls `done` with its JSON (empty bytes when there is no cluster node). Any thread.
    void requestAdminSnapshot(const std::function<void(QByteArray)> &done) const;
    void requestAdminHistory(const std::function<void(QByteArray)> &done) const;
    // Runs `build` on the admin view's thread and hands its JSON to `done` (empty: no view).
    void askClusterStats(const std::function<QByteArray(node::ClusterStats &)> &build,
                         const std::function<void(QByteArray)> &done) const;
    // This node's activity for the admin view: the workers' socket and channel counts as last
    // sampled (and a new sample requested of each worker), the message counters now. Any thread.
    node::LocalActivity localActivity() const;
    // Applies a cluster configuration (tenant overrides; region mapping for placement) and,
    // unless it came from there, saves it as this node's last known good. Main thread.
    void applyClusterConfig(const cluster::ConfigSnapshot &snapshot, bool save);
    QString clusterConfigFile() const;
    // The tenant's history settings as this node applies them. Any thread.
    pubsub::HistorySettings historySettingsFor(const QByteArray &tenantId) const;
    // How the sequencer reaches a tenant's home (etcd only; one node is every tenant's home).
    pubsub::SequencingPubSub::Routing sequencerRouting();

    ServerConfig m_config;
    tenants::TenantDirectory m_tenants;
    tenants::TenantUsageRegistry m_usage;
    limits::RateCounterRegistry m_rateCounters;
    tenants::TenantRates m_rates{ m_rateCounters };
    // Local rate counts for the cluster (fed by the ticker) and the users view of GET /api/cluster.
    cluster::counters::CounterBoard m_counterBoard;
    std::unique_ptr<limits::RateCounterTicker> m_rateTicker; // main thread
    std::unique_ptr<metrics::Registry> m_metricsRegistry;
    std::unique_ptr<metrics::ServerMetrics> m_metrics;
    std::unique_ptr<http::AdminAuth> m_metricsAdmin; // METRICS_JWT_SECRET
    pubsub::LocalPubSub m_pubsub;
    pubsub::NodePubSub m_nodePubSub{
        m_pubsub
    }; // what broadcasts go through (cluster-wide once joined)
    pubsub::TopicHistory m_history{ m_config.historyMaxBytes };
    // Where each tenant's topics are numbered (etcd: its home; the cluster thread writes it).
    pubsub::TenantHomes m_homes{ [this](const QByteArray &tenantId) {
        m_history.forgetTenant(tenantId);
    } };
    // Numbers broadcasts and postgres_changes into m_history, then hands them to m_nodePubSub.
    pubsub::SequencingPubSub m_sequencer{ m_nodePubSub, m_history,
                                          [this](const QByteArray &tenantId) {
                                              return historySettingsFor(tenantId);
                                          },
                                          sequencerRouting() };
    std::atomic<bool> m_shuttingDown{ false };
    std::unique_ptr<presence::PresenceStore> m_presence;
    std::unique_ptr<cdc::CdcService> m_cdc; // tenant databases, on the cdc thread
    std::unique_ptr<gateway::ConnectGate> m_gate;
    std::unique_ptr<http::TenantApiAuth> m_apiAuth;
    std::unique_ptr<http::BroadcastRoutes> m_broadcastRoutes;
    std::unique_ptr<http::AdminAuth> m_tenantApiAdmin; // API_JWT_SECRET(_NEXT)
    std::unique_ptr<http::TenantRoutes> m_tenantRoutes; // made once the control plane exists
    QThread m_dbThread;
    QThread m_clusterThread;
    node::ClusterNode *m_clusterNode = nullptr; // lives on m_clusterThread
    std::unique_ptr<node::NodeConfigAccess> m_configAccess;
    std::unique_ptr<http::ClusterConfigRoutes> m_configRoutes;
    tenants::ControlPlane *m_controlPlane = nullptr; // lives on m_dbThread
    runtime::MailboxPtr m_controlPlaneMailbox; // posts from threads that outlive m_dbThread
    std::unique_ptr<runtime::WorkerPool> m_workers;
    std::vector<WorkerNode *> m_workerNodes; // live on the workers
    // How other threads reach the workers (their I/O loops); filled once all workers are ready.
    mutable QMutex m_workerMailboxesMutex;
    std::vector<std::pair<runtime::MailboxPtr, WorkerNode *>> m_workerMailboxes;
    // Each worker's figures as it last wrote them (index as m_workerMailboxes; same guard).
    struct WorkerFigures
    {
        std::atomic<qint64> sockets{ 0 };
        std::atomic<qint64> channels{ 0 };
        std::atomic<qint64> cpuNs{ 0 }; // the worker thread's CPU time at the last probe
        std::atomic<qint64> loopLagNs{ 0 }; // how long the last probe waited to run
        qint64 startedNs = 0; // about when the worker started (set before it is shared)
    };
    std::vector<std::shared_ptr<WorkerFigures>> m_workerFigures;
    // How other threads reach the admin view on the cluster thread (null until it exists).
    mutable QMutex m_statsMutex;
    runtime::MailboxPtr m_statsMailbox; // guarded by m_statsMutex
    node::ClusterStats *m_clusterStats =
            nullptr; // guarded by m_statsMutex; lives on m_clusterThread
    std::atomic<int> m_workersPending{ 0 };
    std::unique_ptr<transport::ConnectionAdmission> m_admission; // outlives the listener
    std::unique_ptr<transport::Listener> m_listener;
    std::shared_ptr<tls::ReloadableServerContext> m_clientTls; // null: the port is plaintext
    bool m_stopped = false;
};

} // namespace rt::app
