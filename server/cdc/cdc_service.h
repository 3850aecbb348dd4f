#pragma once

#include "server/cdc/cdc_settings.h"
#include "server/cdc/channel_authorization.h"
#include "server/cdc/stream_wire.h"
#include "server/cdc/tenant_database.h"
#include "server/tenants/tenant.h"

#include <QByteArray>
#include <QHash>
#include <QMutex>
#include <QObject>
#include <QPointer>
#include <QSet>
#include <QThread>

#include <functional>
#include <memory>

namespace rt::pubsub {
class LocalPubSub;
class PubSub;
} // namespace rt::pubsub
namespace rt::tenants {
class TenantUsageRegistry;
class TenantRates;
} // namespace rt::tenants
namespace rt::metrics {
class ServerMetrics;
}

namespace rt::cdc {

class StreamCluster;

// The tenant databases this node uses, each a TenantDatabase on the node's cdc thread.
// Thread-safe facade: workers call it from any thread; results come back on the caller's
// worker thread through `receiver` (a QObject that lives as long as that worker) and only run
// while `guard` (a QObject of the caller's, on the same thread) is alive.
class CdcService
{
public:
    // `local` is this node's fan-out (postgres_changes for its own members); `publisher` is
    // where database broadcasts go (the whole cluster once the node has joined).
    CdcService(CdcSettings settings, pubsub::LocalPubSub &local, const pubsub::PubSub &publisher,
               tenants::TenantUsageRegistry &usage, const tenants::TenantRates &rates,
               metrics::ServerMetrics &metrics);
    ~CdcService();
    CdcService(const CdcService &) = delete;
    CdcService &operator=(const CdcService &) = delete;

    void start();
    // Closes every tenant database and stops the thread (before the workers' hubs go away).
    void stop();

    // Whether joins of this tenant need its database (it has a postgres_cdc_rls extension
    // whose settings name one).
    static bool usesDatabase(const tenants::Tenant &tenant);

    using Guard = QPointer<QObject>;
    void connect(const tenants::TenantPtr &tenant, QObject *receiver, Guard guard,
                 std::function<void(ConnectOutcome)> done);
    void subscribe(const tenants::TenantPtr &tenant, SubscribeRequest request, QObject *receiver,
                   Guard guard, std::function<void(SubscribeOutcome)> done);
    void unsubscribe(const QByteArray &tenantId, quint64 memberId);
    // `done(true)` once the tenant's replication stream runs; false if it cannot start.
    void whenStreaming(const tenants::TenantPtr &tenant, QObject *receiver, Guard guard,
                       std::function<void(bool)> done);
    // What a private channel may do (spec §7): the read checks (presence only when
    // `checkPresence`), both write checks, and the replay when asked and allowed. Write checks
    // run together with the read check rather than at the first push: the effect is the same
    // (cached per channel until the next access_token), one round of queries fewer later.
    struct ChannelAccess
    {
        std::optional<AuthorizationError> error; // the read check failed
        Permissions permissions;
        bool replayFailed = false;
        QList<StoredMessage> replayed; // oldest first
    };
    void authorizeChannel(const tenants::TenantPtr &tenant, AuthorizationRequest request,
                          bool checkPresence, std::optional<std::pair<qint64, int>> replay,
                          QObject *receiver, Guard guard, std::function<void(ChannelAccess)> done);

    // The broadcast-write check of the HTTP API's private messages (spec §4.4, §4.5): `done`
    // runs on the cdc thread (callers answer through thread-safe responders).
    void checkBroadcastWrite(const tenants::TenantPtr &tenant, AuthorizationRequest request,
                             std::function<void(rt::Result<bool, AuthorizationError>)> done);

    // Broadcast persistence: the persistence check and the stored row (cdc::persist); `done`
    // runs on the cdc thread.
    void persistBroadcast(const tenants::TenantPtr &tenant, PersistRequest request,
                          std::function<void(rt::Result<PersistOutcome, AuthorizationError>)> done);

    // Runs `job` on the cdc thread with the tenant's database once it is ready (nullptr and the
    // join error when it is not). For authorization queries.
    void withDatabase(const tenants::TenantPtr &tenant,
                      std::function<void(TenantDatabase *, ConnectOutcome)> job);
    // Closes the tenant's database (tenant changed, deleted or shut down through the API).
    void dropTenant(const QByteArray &tenantId);
    // Whether the tenant's database is connected on this node (tenant health).
    bool isConnected(const QByteArray &tenantId) const;

    // --- the cluster ---------------------------------------------------------------------------
    // Before start(): this node is one of a cluster, where each tenant's change stream runs on
    // one node only. Tenant databases then serve queries here and stream only once
    // setStreamOwner() names this node; subscribers of a stream that runs elsewhere are
    // registered with its owner, which sends their changes back (StreamCluster).
    void setClusterMode();
    // Any thread: the cluster is there, and this node's id in it (until stop(); it must outlive
    // the service's thread). Every tenant database already open here asks it for its owner.
    void attachCluster(StreamCluster *cluster, const QString &selfNodeId);
    // Any thread (the cluster's answers and messages from other nodes):
    // Who owns the tenant's stream (nullopt: nobody now); `ready` = its stream runs.
    void setStreamOwner(const QByteArray &tenantId, const std::optional<QString> &owner,
                        bool ready);
    // The placement picked this node for a tenant that other nodes need: open its database
    // so that the stream can run here (the caller claims it).
    void openForStream(const tenants::TenantPtr &tenant);
    // `incarnation`: the subscribing node's process; one of a later process makes the owner
    // forget the subscribers of the node's earlier ones, one of an earlier process is ignored.
    void remoteSubscribe(const QString &fromNode, quint64 incarnation,
                         const tenants::TenantPtr &tenant, quint64 token, SubscribeRequest request);
    void remoteUnsubscribe(const QString &fromNode, const QByteArray &tenantId, quint64 memberId);
    void remoteSubscribeAnswered(quint64 token, const SubscribeOutcome &outcome, bool retry);
    void remoteDelivery(wire::Delivery delivery);
    // A node's processes up to `incarnation` are gone (it left the cluster for good, or
    // restarted): the subscribers they registered here are dropped.
    void nodeGone(const QString &nodeId, quint64 incarnation);
    // A link to a node came up (again): this node's subscribers of the streams it owns register
    // with it once more, since it may have dropped them (nodeGone there, after this node was
    // away from the membership for longer than it holds an absent node's subscribers).
    // Registering is idempotent on the owner (same member, same subscriber), so a link that only
    // flapped costs one round trip per subscriber and no duplicate change.
    void nodeReachable(const QString &nodeId);
    // Tenants that other nodes hold clients of: an owner keeps their stream while they do.
    void setTenantsHeldByPeers(QSet<QByteArray> tenants);
    // Figures for the admin view (any thread): tenants whose stream runs here.
    QList<QByteArray> ownedStreams() const;

    // Posts `fn` to the caller: on `receiver`'s thread, only if `guard` is still alive there.
    template <typename Fn>
    static void reply(QObject *receiver, Guard guard, Fn fn)
    {
        QMetaObject::invokeMethod(
                receiver,
                [guard = std::move(guard), fn = std::move(fn)]() mutable {
                    if (!guard.isNull()) {
                        fn();
                    }
                },
                Qt::QueuedConnection);
    }

private:
    class DeliveryRouter;
    // Other nodes' subscribers are registered with the owner's TenantDatabase under ids with this
    // bit set: this node's own member ids never have it (they count up from 1), and sorted member
    // lists keep them at the end.
    static constexpr quint64 ProxyBit = quint64(1) << 63;
    // The key of another node's member in m_proxyOf.
    static QString proxyKey(const QString &node, const QByteArray &tenantId, quint64 memberId);
    enum class StreamRole { Standalone, Unknown, Owner, Remote };
    // A channel's bindings on this node (cluster mode): kept to register them again with
    // whichever node owns the stream next. `done` is empty once the channel got its answer.
    struct LocalSubscription
    {
        SubscribeRequest request;
        std::function<void(SubscribeOutcome)> done;
    };
    struct PendingRemoteSubscribe
    {
        QString fromNode;
        quint64 incarnation = 0;
        quint64 token = 0;
        SubscribeRequest request;
    };
    struct RemoteMember
    {
        QString node;
        quint64 incarnation = 0;
        QByteArray tenantId;
        quint64 memberId = 0;
    };
    struct Entry;

    // cdc thread:
    TenantDatabase *database(const tenants::TenantPtr &tenant);
    void sweepIdle();
    void routeSubscription(const QByteArray &tenantId, quint64 memberId);
    void answerLocal(const QByteArray &tenantId, quint64 memberId, const SubscribeOutcome &outcome);
    void applyStreamOwner(const QByteArray &tenantId, const std::optional<QString> &owner,
                          bool ready);
    static void wakeStreamWaiters(Entry &entry);
    void followOwner(const QByteArray &tenantId, Entry &entry);
    void takeOwnership(const QByteArray &tenantId, Entry &entry);
    void stepDown(Entry &entry);
    void acceptRemote(const QByteArray &tenantId, Entry &entry, PendingRemoteSubscribe pending);
    void dropProxy(quint64 proxy);
    // Whether a subscriber of `node`'s process `incarnation` may register (not an earlier
    // process than one already seen); a later one replaces the earlier's subscribers.
    bool admitIncarnation(const QString &node, quint64 incarnation);
    void dropNodeSubscribers(const QString &nodeId, quint64 upToIncarnation);
    // Answers to subscriptions sent for the tenant will be ignored (they are sent again).
    void forgetSentRequests(const QByteArray &tenantId);
    void closeEntry(const QByteArray &tenantId);
    void publishSplit(const pubsub::OutboundMessagePtr &message) const;

    CdcSettings m_settings;
    pubsub::LocalPubSub &m_pubsub;
    const pubsub::PubSub &m_publisher;
    std::unique_ptr<DeliveryRouter> m_router; // what tenant databases publish through
    tenants::TenantUsageRegistry &m_usage;
    const tenants::TenantRates &m_rates;
    metrics::ServerMetrics &m_metrics;
    QThread m_thread;
    QObject *m_host = nullptr; // on m_thread; parent of every TenantDatabase
    // cdc thread only:
    struct Entry
    {
        TenantDatabase *database = nullptr;
        tenants::TenantPtr tenant;
        pubsub::DeliveryCounting counting;
        qint64 idleSinceMs = -1;
        StreamRole role = StreamRole::Standalone;
        QString owner; // Remote: the owner's node id
        bool ownerReady = false; // Remote: its stream runs
        QHash<quint64, LocalSubscription> local; // cluster mode, by member id
        std::vector<std::function<void(bool)>> streamWaiters; // until an owner streams
        std::vector<PendingRemoteSubscribe> pendingRemote; // arrived while the role was Unknown
    };
    QHash<QByteArray, Entry> m_databases;
    bool m_clustered = false; // set before start()
    QString m_selfNodeId; // cluster mode, once attached
    StreamCluster *m_cluster = nullptr;
    // Owner side: other nodes' subscribers, registered under ids of their own (ProxyBit set).
    QHash<quint64, RemoteMember> m_proxies;
    QHash<QString, quint64> m_proxyOf; // "<node>/<tenant>/<member id>" -> proxy id
    QHash<QString, quint64> m_nodeIncarnation; // the latest process of each node seen here
    quint64 m_nextProxy = 0;
    // Subscribing side: requests sent to an owner, by token.
    struct SentSubscribe
    {
        QByteArray tenantId;
        quint64 memberId = 0;
        QString owner;
    };
    QHash<quint64, SentSubscribe> m_sent;
    quint64 m_nextToken = 0;
    QSet<QByteArray> m_heldByPeers;
    // Read by other threads (health):
    mutable QMutex m_connectedMutex;
    QSet<QByteArray> m_connected; // guarded by m_connectedMutex
    QSet<QByteArray> m_owned; // guarded by m_connectedMutex: streams owned here (cluster mode)
};

} // namespace rt::cdc
