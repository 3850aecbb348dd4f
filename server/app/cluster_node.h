#pragma once

#include "server/app/config.h"
#include "server/cluster/types.h"

#include <QElapsedTimer>
#include <QHostAddress>
#include <QList>
#include <QMutex>
#include <QObject>
#include <QTimer>

#include <memory>

namespace rt::cluster {
class ClusterBackend;
class InProcessCluster;
namespace links {
class NodeLinks;
}
} // namespace rt::cluster

namespace rt::app {

// This node's place in the cluster: its record in the membership (ClusterBackend: etcd, or the
// embedded in-process backend for a single node), its links to the other nodes (etcd only) and
// the load figure it publishes for placement. Peers' link addresses follow the membership.
//
// Lives on the cluster thread: created on the main thread, moved there before start(); call
// it only there, except membersSnapshot(), which any thread may call.
class ClusterNode : public QObject
{
    Q_OBJECT
public:
    struct Settings
    {
        ClusterConfig cluster;
        QString nodeId;
        QString region;
        QHostAddress listenAddress; // links listen here (the server's LISTEN_ADDRESS)
        quint16 clientPort = 0; // where clients reach this node (published in the record)
        // How often the node republishes its load; placement caches it per time bucket.
        int loadPublishIntervalMs = 15'000;
    };

    explicit ClusterNode(Settings settings, QObject *parent = nullptr);
    ~ClusterNode() override;

    // Registers this node (and, with etcd, opens the link listener first so that the record
    // can name its port). started() follows at once; the backend reports availability itself.
    void start();
    // Leaves the cluster (revokes the lease: the record and claims go at once, not at expiry).
    void stop();

    cluster::ClusterBackend *backend() const { return m_backend.get(); }
    // nullptr without etcd (a single node has no peers).
    cluster::links::NodeLinks *links() const { return m_links; }
    const cluster::NodeInfo &self() const { return m_self; }

    // Live members as last seen, sorted by id. Any thread.
    QList<cluster::NodeInfo> membersSnapshot() const;
    // Whether the backend is reachable (etcd up). Any thread.
    bool isAvailable() const;

Q_SIGNALS:
    void started(const rt::cluster::NodeInfo &self);
    void failed(const QString &message);
    void membersChanged(const QList<rt::cluster::NodeInfo> &members);
    // After stop(): the node has left (or gave up reaching the backend).
    void stopped();

private:
    void onMembersChanged(const QList<cluster::NodeInfo> &members);
    void publishLoad();

    Settings m_settings;
    cluster::NodeInfo m_self;
    std::unique_ptr<cluster::InProcessCluster> m_inProcess; // the embedded default only
    std::unique_ptr<cluster::ClusterBackend> m_backend;
    cluster::links::NodeLinks *m_links = nullptr; // child; etcd only
    QTimer m_loadTimer; // a child: it moves to the cluster thread with this object
    QElapsedTimer m_uptime;
    mutable QMutex m_snapshotMutex;
    QList<cluster::NodeInfo> m_membersSnapshot;
    bool m_available = false;
};

} // namespace rt::app
