#pragma once

#include "server/presence/presence_change.h"
#include "server/presence/topic_presence.h"
#include "server/pubsub/outbound_message.h"
#include "server/pubsub/topic_key.h"

#include <QHash>
#include <QObject>
#include <QPointer>

#include <functional>

namespace rt::pubsub {
class LocalPubSub;
}

namespace rt::presence {

// Presence of every topic as this node sees it: its own members' presences, plus (in a cluster)
// the presences of the other nodes, replicated by a PresenceReplicator. Lives on one thread
// (the main thread), which serialises all changes; every change, local or remote, is published
// as a fastlane presence_diff through this node's pubsub right away.
//
// Each node is the authority for its own members: local changes are announced by
// localChanged() (the replicator sends them to the peers); remote ones arrive through the
// applyRemote*/replaceRemoteOrigin/dropRemoteOrigin slots, keyed by the origin node's id, so
// member ids chosen independently by different nodes never collide.
//
// Ordering guarantee workers rely on: diffs and presence_state snapshots for a topic are posted
// to workers from this thread in the order they happened. A snapshot therefore already contains
// every diff posted before it, and a channel waiting for its presence_state may drop the diffs
// that arrive before the snapshot.
class PresenceStore : public QObject
{
    Q_OBJECT
public:
    explicit PresenceStore(const pubsub::LocalPubSub &pubsub, QObject *parent = nullptr);

    // Thread-safe entry points: they post to the store's thread.
    // `counting`: the tenant's presence counter, which each delivered copy of the resulting
    // presence_diff adds to (upstream's +N per diff dispatch).
    void trackAsync(const pubsub::TopicKey &topic, quint64 memberId, const QByteArray &key,
                    const QJsonObject &meta, pubsub::DeliveryCounting counting = {});
    void untrackAsync(const pubsub::TopicKey &topic, quint64 memberId,
                      pubsub::DeliveryCounting counting = {});
    // Calls `callback(stateJson)` on the thread of `receiver` unless `guard` died meanwhile.
    // `receiver` must live on that thread until this store is stopped (a worker's hub: the
    // answer then travels the same path, in order, as the presence diffs); `guard` is only
    // dereferenced there, so it may die at any time.
    void requestStateAsync(const pubsub::TopicKey &topic, QObject *receiver,
                           QPointer<QObject> guard,
                           std::function<void(const QByteArray &)> callback);
    // Stops answering and publishing: called before the threads that receive answers stop.
    void stop() { m_stopped = true; }

    // Store thread only.
    void track(const pubsub::TopicKey &topic, quint64 memberId, const QByteArray &key,
               const QJsonObject &meta, pubsub::DeliveryCounting counting = {});
    void untrack(const pubsub::TopicKey &topic, quint64 memberId,
                 pubsub::DeliveryCounting counting = {});
    QByteArray stateJson(const pubsub::TopicKey &topic) const;
    // Every presence of the topic, this node's and replicated ones.
    qsizetype presenceCount(const pubsub::TopicKey &topic) const;
    // This node's own presences (what a replicator must announce to a new peer), in no order.
    QList<PresenceRecord> localPresences() const;
    // Where the diffs of replicated changes are counted (the tenant's presence counter); by
    // default they are not. Store thread; set it before replication starts.
    void setRemoteCounting(std::function<pubsub::DeliveryCounting(const pubsub::TopicKey &)> fn)
    {
        m_remoteCounting = std::move(fn);
    }

    // NOLINTNEXTLINE(readability-redundant-access-specifiers): Q_SLOTS tells moc these are slots
public Q_SLOTS:
    // Replication (store thread; the replicator's changes are posted here, in its order).
    // A change of a presence of node `origin`.
    void applyRemoteChange(const QString &origin, const rt::presence::PresenceChange &change);
    // `records` are all of `origin`'s presences now: what it held before and is absent goes
    // (leaves), what is new or changed comes (joins), what is unchanged publishes nothing.
    // One presence_diff per touched topic.
    void replaceRemoteOrigin(const QString &origin,
                             const QList<rt::presence::PresenceRecord> &records);
    // Node `origin` left the cluster: all its presences leave.
    void dropRemoteOrigin(const QString &origin);

Q_SIGNALS:
    // One of this node's presences changed (a non-empty diff), in the order of the changes.
    void localChanged(const rt::presence::PresenceChange &change);

private:
    struct Topic
    {
        pubsub::TopicKey key;
        TopicPresence presences;
    };
    void publish(const pubsub::TopicKey &topic, const PresenceDiff &diff,
                 pubsub::DeliveryCounting counting);
    void publishRemote(const pubsub::TopicKey &topic, const PresenceDiff &diff);
    void eraseIfEmpty(QHash<QByteArray, Topic>::iterator it);
    quint32 originHandle(const QString &origin);
    QByteArray nextRef();

    const pubsub::LocalPubSub &m_pubsub;
    QHash<QByteArray, Topic> m_topics; // TopicKey::id() -> presences
    // Peer node id -> its MemberRef::origin (from 1; 0 is this node). Never shrinks: a node that
    // comes back under the same name gets its old number, and names are few.
    QHash<QString, quint32> m_origins;
    std::function<pubsub::DeliveryCounting(const pubsub::TopicKey &)> m_remoteCounting;
    // Refs are 12 bytes: a random 48-bit prefix per store (per process) and a 48-bit counter, so
    // refs differ across restarts and across the nodes of a cluster (a collision needs two of
    // the cluster's live processes to draw the same 48-bit prefix).
    quint64 m_refPrefix;
    quint64 m_refCounter = 0;
    bool m_stopped = false;
};

} // namespace rt::presence
