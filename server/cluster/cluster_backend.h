#pragma once

#include "server/cluster/types.h"

#include <QHash>
#include <QList>
#include <QObject>
#include <QString>

#include <functional>
#include <optional>

namespace rt::cluster {

// Cluster membership, exclusive ownership of named resources ("claims", e.g. "cdc/<tenant>")
// and cluster-wide configuration. Two implementations: InProcessClusterBackend (one process,
// the embedded default and the tests' multi-node cluster) and EtcdClusterBackend.
//
// Lives on the cluster thread; call it only there. Nothing blocks: requests return at once and
// their outcome arrives later, either as a signal (membership, claims, configuration changes,
// availability: several parties care) or through the callback of a configuration write (one
// caller cares). Signals and callbacks are never emitted/called from inside the call that
// caused them, so callers are never re-entered. Callbacks not called yet when the backend is
// destroyed are dropped; they must not outlive what they capture (guard with a context/QPointer).
//
// Every node sees every claim and every configuration entry (one watch over the whole cluster
// state): claimOf() and configSnapshot() answer from this node's copy, without a round trip.
class ClusterBackend : public QObject
{
    Q_OBJECT
public:
    using QObject::QObject;

    // --- membership ---------------------------------------------------------------------------
    // Registers `self` under a lease kept alive until stop(); backendAvailable() follows once
    // registered and the cluster state is loaded. Calling start() twice is a programming error.
    virtual void start(const NodeInfo &self) = 0;
    // Leaves: revokes the lease, which deletes this node's record and every claim it holds.
    // stopped() follows (also when the backend is unreachable: nothing more is tried). Owned
    // claims are dropped without claimLost().
    virtual void stop() = 0;
    // Publishes a new record for this node (e.g. a new load figure); the id must not change.
    virtual void updateSelf(const NodeInfo &self) = 0;
    // Live members as last seen (this node included once registered), sorted by id.
    virtual QList<NodeInfo> members() const = 0;
    virtual QString nodeId() const = 0;
    // True between backendAvailable() and backendUnavailable().
    virtual bool isAvailable() const = 0;

    // --- claims -------------------------------------------------------------------------------
    // Creates the claim if nobody holds `resource`, bound to this node's lease. Answers with
    // claimGranted (also when this node already holds it), claimRefused with the current holder,
    // or claimFailed (not registered / unreachable: try again later).
    virtual void claim(const QString &resource, const QByteArray &metadata) = 0;
    // Replaces the metadata of a claim this node holds (e.g. starting → ready). Waiters see
    // claimChanged; if this node no longer holds it, claimLost follows.
    virtual void updateClaim(const QString &resource, const QByteArray &metadata) = 0;
    // Gives a held claim up; everyone sees claimChanged(resource, nullopt).
    virtual void release(const QString &resource) = 0;
    // The current holder of `resource` as this node last saw it.
    virtual std::optional<Claim> claimOf(const QString &resource) const = 0;
    // Resources this node holds.
    virtual QStringList ownedClaims() const = 0;

    // --- configuration ------------------------------------------------------------------------
    // The last known configuration (kept while the backend is unreachable).
    virtual ConfigSnapshot configSnapshot() const = 0;
    using ConfigCallback = std::function<void(rt::cluster::ConfigWriteResult)>;
    // Compare-and-swap write: applied only if the key's mod revision is expectedModRevision
    // (0 = the key must not exist); otherwise Conflict with the stored entry, nothing written.
    // ttlSeconds > 0 binds the entry to a new lease of that TTL, so it expires by itself
    // (a temporary override); 0 = permanent.
    virtual void putConfig(const QString &key, const QByteArray &value, qint64 expectedModRevision,
                           int ttlSeconds, ConfigCallback done) = 0;
    // Deletes `key` if its mod revision is expectedModRevision (0 = unconditionally). A missing
    // key with expectedModRevision > 0 is a Conflict with current = nullopt.
    virtual void deleteConfig(const QString &key, qint64 expectedModRevision,
                              ConfigCallback done) = 0;
    // When each temporary entry's lease runs out (wall clock, ms since the epoch), by key. A
    // key is missing until the backend knows (etcd asks each new lease's time to live once).
    virtual QHash<QString, qint64> configExpiries() const = 0;

Q_SIGNALS:
    void membersChanged(const QList<rt::cluster::NodeInfo> &members);
    void claimGranted(const QString &resource);
    void claimRefused(const QString &resource, const rt::cluster::Claim &current);
    void claimFailed(const QString &resource, const QString &reason);
    // Any claim in the cluster appeared, changed metadata or owner, or vanished (nullopt).
    void claimChanged(const QString &resource, const std::optional<rt::cluster::Claim> &claim);
    // A claim this node held is gone: its lease expired, the key was deleted or taken over, or
    // the backend was unreachable for longer than the lease TTL (it may have expired). The owner
    // must stop acting as the owner.
    void claimLost(const QString &resource, const QString &reason);
    void configChanged(const rt::cluster::ConfigSnapshot &snapshot);
    void backendAvailable();
    void backendUnavailable(const QString &reason);
    void stopped();
};

} // namespace rt::cluster
