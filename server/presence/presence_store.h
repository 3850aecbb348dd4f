#pragma once

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

// Presence of every topic of this node (single node; the cluster issue replicates it). Lives on
// one thread (the main thread), which serialises all changes; every change is published as a
// fastlane presence_diff through pubsub right away.
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
    qsizetype presenceCount(const pubsub::TopicKey &topic) const;

private:
    void publish(const pubsub::TopicKey &topic, const PresenceDiff &diff,
                 pubsub::DeliveryCounting counting);
    QByteArray nextRef();

    const pubsub::LocalPubSub &m_pubsub;
    QHash<QByteArray, TopicPresence> m_topics; // TopicKey::id() -> presences
    quint32 m_refPrefix; // random per process, so refs differ across restarts
    quint64 m_refCounter = 0;
    bool m_stopped = false;
};

} // namespace rt::presence
