#pragma once

#include "server/cluster/links/link_tls.h"
#include "server/cluster/types.h"

#include <QElapsedTimer>
#include <QHash>
#include <QHostAddress>
#include <QList>
#include <QMutex>
#include <QObject>
#include <QSet>
#include <QTimer>
#include <QUrl>

#include <functional>
#include <memory>

namespace rt::cluster {
class ClusterBackend;
namespace links {
class NodeLinks;
}
} // namespace rt::cluster

namespace rt::pubsub {
class ClusterPubSub;
class HistoryExchange;
class LocalPubSub;
class OutboundMessage;
class TenantHomes;
class TopicHistory;
struct DeliveryCounting;
struct HistorySettings;
class TopicKey;
} // namespace rt::pubsub
namespace rt::presence {
class PresenceReplicator;
class PresenceStore;
} // namespace rt::presence
namespace rt::tenants {
class TenantDirectory;
class TenantUsageRegistry;
} // namespace rt::tenants
namespace rt::cdc {
class CdcService;
class StreamCoordinator;
} // namespace rt::cdc
namespace rt::metrics {
class ServerMetrics;
}

namespace rt::node {

// How this node joins a cluster: etcd when endpoints are given, else the embedded single node.
// Values (and defaults) come from the option table (server/app/config.cpp).
// How this node reaches etcd beyond its endpoints: TLS files for https:// endpoints (the CA
// etcd's certificate is checked against; a client certificate for --client-cert-auth) and an
// etcd v3 user.
struct EtcdAccess
{
    QString caFile; // ETCD_CA_FILE; empty: the system's CAs
    QString certificateFile; // ETCD_CERT_FILE, with keyFile
    QString keyFile; // ETCD_KEY_FILE
    QString user; // ETCD_USERNAME; empty: no authentication
    QString password; // ETCD_PASSWORD

    bool usesTlsFiles() const { return !caFile.isEmpty() || !certificateFile.isEmpty(); }
};

struct ClusterConfig
{
    QList<QUrl> etcdEndpoints; // ETCD_ENDPOINTS; empty: in-process backend, no node links
    QString etcdPrefix;
    EtcdAccess etcdAccess;
    int leaseTtlSeconds = 0;
    quint16 linkPort = 0; // CLUSTER_PORT; 0: any free port (advertised in the node record)
    QString advertiseHost; // empty: this machine's host name
    QByteArray secret; // CLUSTER_SECRET
    // CLUSTER_TLS_*: mutual TLS on the node links; all empty: plaintext links, allowed only
    // with plaintextLinks (CLUSTER_PLAINTEXT_LINKS) and a secret of at least 32 bytes.
    cluster::links::LinkTlsFiles linkTls;
    bool plaintextLinks = false;
    int linksPerPeer = 0;
    QString loadAverageFile;
    int loadMinUptimeSeconds = 0;

    bool usesEtcd() const { return !etcdEndpoints.isEmpty(); }
    bool usesLinkTls() const { return !linkTls.certificateFile.isEmpty(); }
};

class NodeConfigAccess;

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
        bool clientUsesTls = false; // the record's address is then https://host:port
        // How often the node republishes its load; placement caches it per time bucket.
        int loadPublishIntervalMs = 15'000;
        // How often the tenants with clients here are compared with what peers were told: the
        // delay before peers forward a tenant's broadcasts to a node that got its first client.
        int localTenantsIntervalMs = 100;
    };

    // What the cluster's data plane works on; all of it outlives this object.
    struct Parts
    {
        pubsub::LocalPubSub &localPubSub;
        presence::PresenceStore &presence; // lives on the main thread
        const tenants::TenantUsageRegistry &usage;
        // The receiving node's counting of a broadcast from another node (see ClusterPubSub).
        std::function<pubsub::DeliveryCounting(const pubsub::TopicKey &, bool isBroadcast)>
                counting;
        NodeConfigAccess &configAccess; // the configuration API's way to the backend
        // Tenant change streams, placed once in the cluster (etcd only; thread-safe facade).
        cdc::CdcService *cdc = nullptr;
        const tenants::TenantDirectory *tenants = nullptr;
        // Makes this node's cluster backend: etcd with node links, or the embedded in-process
        // one (the composition root chooses and builds it). Called once, in start(), on the
        // cluster thread.
        std::function<std::unique_ptr<cluster::ClusterBackend>()> makeBackend;
        // Re-reads one tenant from the control plane, then calls `done` on any thread (the
        // stream placement asks when a peer names a tenant this node has not seen yet).
        std::function<void(const QByteArray &tenantId, std::function<void()> done)> refreshTenant;
        metrics::ServerMetrics *metrics = nullptr; // the placement's counters; may be null
        // Positions and history (etcd only; all set or none): where each tenant's home is
        // (written here from the claims and links), this node's histories and their settings,
        // and what numbers a broadcast a peer sent here (the sequencer's publishAsHome).
        pubsub::TenantHomes *homes = nullptr;
        pubsub::TopicHistory *history = nullptr;
        std::function<pubsub::HistorySettings(const QByteArray &tenantId)> historySettings;
        std::function<void(const std::shared_ptr<const pubsub::OutboundMessage> &)> publishAsHome;
    };

    ClusterNode(Settings settings, Parts parts, QObject *parent = nullptr);
    ~ClusterNode() override;

    // Registers this node (and, with etcd, opens the link listener first so that the record
    // can name its port). started() follows at once; the backend reports availability itself.
    void start();
    // Leaves the cluster (revokes the lease: the record and claims go at once, not at expiry).
    void stop();

    cluster::ClusterBackend *backend() const { return m_backend.get(); }
    // nullptr without etcd (a single node has no peers).
    cluster::links::NodeLinks *links() const { return m_links; }
    // Broadcasts to and from the other nodes; nullptr without etcd. publish() is thread-safe.
    pubsub::ClusterPubSub *clusterPubSub() const { return m_pubsub; }
    const cluster::NodeInfo &self() const { return m_self; }

    // Live members as the backend last reported them, sorted by id. Any thread. (membersChanged
    // carries what the data plane follows: these, plus departed nodes whose links are still up
    // for a short grace, plus this node.)
    QList<cluster::NodeInfo> membersSnapshot() const;
    // Whether the backend is reachable (etcd up). Any thread.
    bool isAvailable() const;

Q_SIGNALS:
    void started(const rt::cluster::NodeInfo &self);
    void failed(const QString &message);
    void membersChanged(const QList<rt::cluster::NodeInfo> &members);
    // After stop(): the node has left (or gave up reaching the backend).
    void stopped();
    // The cluster configuration changed, or is known again after an outage.
    void configChanged(const rt::cluster::ConfigSnapshot &snapshot);

private:
    void onMembersChanged(const QList<cluster::NodeInfo> &members);
    void applyDataPlaneMembers();
    // The backend's members, this node, and departed ones whose links are still up (grace).
    QList<cluster::NodeInfo> effectiveMembers();
    // Links, fan-out, presence and streams follow `members` (sorted by id).
    void followMembers(const QList<cluster::NodeInfo> &members);
    void publishLoad();
    std::optional<double> currentLoad() const;
    void startDataPlane();
    // Listens for peers' links and names the address in this node's record; the problem if not.
    std::optional<QString> startLinks(const QString &advertiseHost);
    void connectBackend();
    void reconcileLocalTenants();
    // Positions: the homes follow the stream claims and the links; peers' history questions
    // and numbering requests are answered here.
    void startHomes();

    Settings m_settings;
    Parts m_parts;
    cluster::NodeInfo m_self;
    pubsub::ClusterPubSub *m_pubsub = nullptr; // child; etcd only
    pubsub::HistoryExchange *m_historyExchange = nullptr; // child; etcd with homes only
    presence::PresenceReplicator *m_presenceReplicator = nullptr; // child; etcd only
    cdc::StreamCoordinator *m_streams = nullptr; // child; etcd with a cdc service only
    QTimer m_localTenantsTimer; // a child, like m_loadTimer
    QTimer m_graceTimer; // a child: re-evaluates the nodes kept while their links are up
    QList<cluster::NodeInfo> m_backendMembers; // as the backend reports them
    QList<cluster::NodeInfo> m_dataPlaneMembers; // what the links, fan-out and presence follow
    QHash<QString, qint64> m_departedAtMs; // uptime when a kept node left the membership
    std::unique_ptr<cluster::ClusterBackend> m_backend;
    cluster::links::NodeLinks *m_links = nullptr; // child; etcd only
    QTimer m_loadTimer; // a child: it moves to the cluster thread with this object
    QElapsedTimer m_uptime;
    mutable QMutex m_snapshotMutex;
    QList<cluster::NodeInfo> m_membersSnapshot;
    bool m_available = false;
};

} // namespace rt::node
