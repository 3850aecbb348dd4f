#pragma once

#include "server/cluster/cluster_backend.h"
#include "server/cluster/etcd/etcd_client.h"

#include <QElapsedTimer>
#include <QMap>
#include <QSet>
#include <QTimer>
#include <QUrl>

#include <memory>

namespace rt::cluster {

struct EtcdBackendSettings
{
    QList<QUrl> endpoints; // ETCD_ENDPOINTS (see EtcdClient::parseEndpoints)
    QString prefix = QStringLiteral("/qtrealtime"); // ETCD_PREFIX; keys live under <prefix>/
    int leaseTtlSeconds = 10; // a dead node's records vanish this long after its last keepalive
    int requestTimeoutMs = 3000;
    etcd::EtcdSecurity security; // TLS and authentication (ETCD_CA_FILE ... ETCD_PASSWORD)
};

// ClusterBackend on etcd 3.4 through its v3 JSON gateway (see ClusterBackend for the contract).
//
// Keys: <prefix>/nodes/<id> (the node's record, bound to its lease), <prefix>/claims/<resource>
// (created with a "create if absent" transaction bound to the owner's lease; value
// {"owner","metadata"}), <prefix>/config/<key> (compare-and-swap on mod revision; temporary
// entries hold a lease of their own that is never renewed).
//
// One watch covers <prefix>/ whole, so one revision orders everything this node sees. Startup:
// grant a lease, publish the node record, read <prefix>/ once, then watch from the revision
// after that read; backendAvailable() follows once the watch is established. The lease is kept
// alive every TTL/3. When etcd cannot be reached the node reports backendUnavailable(), keeps
// its last-known configuration and members, and keeps trying; the watch resumes from the revision
// after the last one applied, so no change is missed (a compacted revision makes it reload).
// If keepalives fail for longer than the TTL, this node gives up its claims (claimLost: the
// lease may have expired, another node may own them now). When the lease turns out to be gone
// (keepalive without TTL) the node registers again with a new lease; claims still stored under
// its old identity are released so the cluster can decide again.
//
// Lives on the cluster thread; use it only there.
class EtcdClusterBackend final : public ClusterBackend
{
    Q_OBJECT
public:
    explicit EtcdClusterBackend(EtcdBackendSettings settings, QObject *parent = nullptr);
    ~EtcdClusterBackend() override;

    void start(const NodeInfo &self) override;
    void stop() override;
    void updateSelf(const NodeInfo &self) override;
    QList<NodeInfo> members() const override { return m_members.values(); }
    QString nodeId() const override { return m_self.id; }
    bool isAvailable() const override { return m_availability == Availability::Available; }

    void claim(const QString &resource, const QByteArray &metadata) override;
    void updateClaim(const QString &resource, const QByteArray &metadata) override;
    void release(const QString &resource) override;
    std::optional<Claim> claimOf(const QString &resource) const override;
    QStringList ownedClaims() const override { return m_owned.keys(); }

    ConfigSnapshot configSnapshot() const override
    {
        ConfigSnapshot snapshot = m_config;
        snapshot.revision = m_revision;
        return snapshot;
    }
    void putConfig(const QString &key, const QByteArray &value, qint64 expectedModRevision,
                   int ttlSeconds, ConfigCallback done) override;
    void deleteConfig(const QString &key, qint64 expectedModRevision, ConfigCallback done) override;
    QHash<QString, qint64> configExpiries() const override;

    qint64 leaseId() const { return m_lease; }
    // The last cluster revision this node applied.
    qint64 revision() const { return m_revision; }

    // Test hooks. suspendKeepAliveForTesting(): no more keepalives or re-registration, as in a
    // hung process: the lease expires after its TTL. dropWatchForTesting(): the watch stream
    // is cut as by a network failure; with pause, it is not re-opened until resumeWatchForTesting().
    void suspendKeepAliveForTesting();
    void dropWatchForTesting(bool pause);
    void resumeWatchForTesting();

private:
    enum class Availability { Unknown, Available, Unavailable };

    QByteArray nodeKey(const QString &id) const;
    QByteArray claimKey(const QString &resource) const;
    QByteArray configKey(const QString &key) const;
    QByteArray rootKey() const { return m_root; }

    void tick();
    void registerSelf();
    void loadState();
    void startWatch(qint64 fromRevision);
    void keepAlive();
    void leaseLost(const QString &reason);
    void loseAllClaims(const QString &reason);
    void releaseOrphanedClaims();
    void onWatchEvents(const QList<etcd::WatchEvent> &events, qint64 revision);
    void applyRange(const etcd::RangeResponse &range);
    // Applies one key's new state (value nullopt: deleted). Returns what changed.
    enum Changed { Nothing = 0, MembersChanged = 1, ConfigChanged = 2 };
    int applyKey(const etcd::KeyValue &kv, bool deleted);
    // applyKey() for a key under nodes/, claims/ or config/, given the name after the directory.
    int applyNodeKey(const etcd::KeyValue &kv, const QString &id, bool deleted);
    int applyClaimKey(const etcd::KeyValue &kv, const QString &resource, bool deleted);
    int applyConfigKey(const etcd::KeyValue &kv, const QString &key, bool deleted);
    void setClaim(const QString &resource, const std::optional<Claim> &claim);
    void updateAvailability(const QString &reasonIfDown);
    void failed(const etcd::EtcdError &error, const QString &what);
    void later(std::function<void()> call);
    // Remembers that config `key` is bound to `lease` (0: permanent) and, for a lease not seen
    // yet, asks etcd how long it has left.
    void noteConfigLease(const QString &key, qint64 lease);

    EtcdBackendSettings m_settings;
    QByteArray m_root; // "<prefix>/"
    std::unique_ptr<etcd::EtcdClient> m_client;
    std::unique_ptr<etcd::EtcdWatch> m_watch;
    QTimer m_tick;

    NodeInfo m_self;
    bool m_started = false;
    bool m_stopping = false;
    bool m_keepAliveSuspended = false;
    bool m_registering = false;
    bool m_loading = false;
    bool m_loaded = false;
    bool m_registered = false; // the node record is stored under m_lease
    bool m_keepAliveInFlight = false;
    bool m_leaseHealthy = false; // the last keepalive (or grant) succeeded
    qint64 m_lease = 0;
    QElapsedTimer m_sinceKeepAlive; // since the last successful keepalive or grant
    quint64 m_generation = 0; // bumped by stop() and by a lost lease: stale answers are ignored
    Availability m_availability = Availability::Unknown;
    bool m_watchReopened = false; // since the last outage began
    QString m_lastFailure;

    qint64 m_revision = 0;
    QMap<QString, NodeInfo> m_members;
    QMap<QString, Claim> m_claims;
    QMap<QString, qint64> m_claimLeases; // resource → lease of the stored claim
    QMap<QString, qint64> m_owned; // resource → create revision of our claim
    QSet<QString> m_pendingClaims; // claim transactions in flight
    bool m_orphansPossible = false; // claims given up locally may still be stored as ours
    ConfigSnapshot m_config;
    QHash<QString, qint64> m_configLeases; // temporary config key -> its lease
    QHash<qint64, qint64> m_leaseExpiries; // lease -> wall-clock ms it runs out
    QSet<qint64> m_leaseLookups; // time-to-live requests in flight
};

} // namespace rt::cluster
