#pragma once

#include "server/cluster/counters/counters_wire.h"
#include "server/limits/rate_counter_registry.h"

#include <QByteArray>
#include <QHash>
#include <QJsonObject>
#include <QMap>
#include <QSet>
#include <QString>
#include <QStringList>

#include <mutex>
#include <optional>

// The bookkeeping of cluster-wide counters, without timers or links: what this node told its
// peers, what they told it, and the thread-safe board where the rate ticker, the cluster
// thread and the admin view meet. ClusterCounters (server/app) drives it.
namespace rt::cluster::counters {

// Tenant -> users (sockets with a joined channel). Only positive figures are kept.
using UsersByTenant = QHash<QByteArray, int>;
// Tenant -> kind -> events counted since the last report. Ordered, so messages are
// deterministic.
using RateCounts = QMap<QByteArray, QMap<limits::RateCounterKind, qint64>>;
// Tenant -> node -> users.
using UsersByNode = QHash<QByteArray, QHash<QString, int>>;

// This node's side: the users figures its peers were last told, and the messages that keep
// them current. Single-threaded (the cluster thread).
//
// Updates carry only what changed, so a peer is current only if it saw every update since a
// full sync; a sync therefore carries what the updates said (reported()), not the figures of
// the moment, so that the next update's differences apply to it as well.
class LocalReport
{
public:
    // The update to send now: the users of every tenant whose figure differs from the last
    // report (0 for a tenant whose last user left), and `rates` (only positive counts of
    // cluster-wide kinds). nullopt when there is nothing to say. Records `usersNow` as reported.
    std::optional<Message> update(const UsersByTenant &usersNow, const RateCounts &rates);
    // Every tenant with users as last reported, sorted by tenant: a full sync's payload.
    Message sync() const;
    const UsersByTenant &reported() const { return m_reported; }

private:
    UsersByTenant m_reported;
};

// The peers' side: users per (peer, tenant) and their sum per tenant, which the limit checks
// add to this node's own users. Single-threaded (the cluster thread).
class RemoteFigures
{
public:
    // A message from `peer`: an update sets the users it names (0 removes them); a sync
    // replaces everything held of `peer`. Rates are not kept here (they go to the counters).
    void apply(const QString &peer, const Message &message, bool isSync);
    // Forgets `peer` (it left the membership); true if anything was held of it.
    bool dropPeer(const QString &peer);
    QStringList peers() const;

    // Users of `tenant` on all peers together.
    int total(const QByteArray &tenant) const;
    // The totals of the tenants whose total changed since the previous call, 0 included (a
    // tenant whose last remote user left), so the caller can update exactly those.
    QHash<QByteArray, int> takeChangedTotals();
    // Tenant -> peer -> users, positive figures only.
    UsersByNode usersByNode() const;

private:
    void setUsers(const QString &peer, const QByteArray &tenant, int users);

    QHash<QString, UsersByTenant> m_peers;
    // Positive totals only, wide so that absurd figures from peers cannot overflow them;
    // readers saturate at INT_MAX.
    QHash<QByteArray, qint64> m_totals;
    QSet<QByteArray> m_changed; // tenants whose total changed since takeChangedTotals()
};

// What GET /api/cluster shows under "users": {"<tenant>": {"<node>": users, ...}, ...} for every
// tenant with users anywhere; this node's own figures come from `local`.
QJsonObject usersView(const QString &selfId, const UsersByTenant &local, const UsersByNode &remote);

// Where the rate ticker (main thread), ClusterCounters (cluster thread) and the admin view (any
// thread) meet; every function is thread-safe. One per node, owned by the application and
// outliving every thread that uses it.
class CounterBoard
{
public:
    // While not collecting (no cluster links: nobody takes the counts), noteTicks() does
    // nothing; stopping clears what was collected.
    void setCollecting(bool collecting);
    // Adds the local part of each ticked cluster-wide counter (RateCounterState::lastLocalCount,
    // so counts received from peers are never echoed back). Any thread; from the ticker's
    // observer.
    void noteTicks(const limits::RateCounterRegistry::TickPass &pass);
    void addLocal(const QByteArray &tenant, limits::RateCounterKind kind, qint64 count);
    // What was collected since the previous call; the board starts again from zero.
    RateCounts takeLocalRates();

    void setUsersView(const QJsonObject &view);
    QJsonObject usersView() const;

private:
    mutable std::mutex m_mutex;
    bool m_collecting = false; // guarded by m_mutex, like everything below
    RateCounts m_rates;
    QJsonObject m_usersView;
};

} // namespace rt::cluster::counters
