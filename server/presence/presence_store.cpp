#include "server/presence/presence_store.h"

#include "server/pubsub/local_pubsub.h"
#include "server/pubsub/outbound_message.h"
#include "server/runtime/post.h"

#include <QRandomGenerator>
#include <QtEndian>

namespace rt::presence {

PresenceStore::PresenceStore(const pubsub::LocalPubSub &pubsub, QObject *parent)
    : QObject(parent),
      m_pubsub(pubsub),
      m_refPrefix(QRandomGenerator::global()->generate())
{ }

void PresenceStore::trackAsync(const pubsub::TopicKey &topic, quint64 memberId,
                               const QByteArray &key, const QJsonObject &meta,
                               pubsub::DeliveryCounting counting)
{
    runtime::post(this, [this, topic, memberId, key, meta, counting = std::move(counting)] {
        track(topic, memberId, key, meta, counting);
    });
}

void PresenceStore::untrackAsync(const pubsub::TopicKey &topic, quint64 memberId,
                                 pubsub::DeliveryCounting counting)
{
    runtime::post(this, [this, topic, memberId, counting = std::move(counting)] {
        untrack(topic, memberId, counting);
    });
}

void PresenceStore::requestStateAsync(const pubsub::TopicKey &topic, QObject *receiver,
                                      QPointer<QObject> guard,
                                      std::function<void(const QByteArray &)> callback)
{
    runtime::post(this,
                  [this, topic, receiver, guard = std::move(guard),
                   callback = std::move(callback)]() mutable {
                      if (m_stopped) {
                          return;
                      }
                      runtime::post(receiver,
                                    [state = stateJson(topic), guard = std::move(guard),
                                     callback = std::move(callback)] {
                                        // On the receiver's thread, where the guard lives: safe to check.
                                        if (!guard.isNull()) {
                                            callback(state);
                                        }
                                    });
                  });
}

void PresenceStore::track(const pubsub::TopicKey &topic, quint64 memberId, const QByteArray &key,
                          const QJsonObject &meta, pubsub::DeliveryCounting counting)
{
    publish(topic, m_topics[topic.id()].track(memberId, key, meta, nextRef()), std::move(counting));
}

void PresenceStore::untrack(const pubsub::TopicKey &topic, quint64 memberId,
                            pubsub::DeliveryCounting counting)
{
    const auto it = m_topics.find(topic.id());
    if (it == m_topics.end()) {
        return;
    }
    const PresenceDiff diff = it->untrack(memberId);
    if (it->isEmpty()) {
        m_topics.erase(it);
    }
    publish(topic, diff, std::move(counting));
}

QByteArray PresenceStore::stateJson(const pubsub::TopicKey &topic) const
{
    const auto it = m_topics.constFind(topic.id());
    return it == m_topics.constEnd() ? QByteArrayLiteral("{}") : it->stateJson();
}

qsizetype PresenceStore::presenceCount(const pubsub::TopicKey &topic) const
{
    const auto it = m_topics.constFind(topic.id());
    return it == m_topics.constEnd() ? 0 : it->size();
}

void PresenceStore::publish(const pubsub::TopicKey &topic, const PresenceDiff &diff,
                            pubsub::DeliveryCounting counting)
{
    if (diff.isEmpty() || m_stopped) {
        return;
    }
    m_pubsub.publish(pubsub::OutboundMessage::push(topic, QByteArrayLiteral("presence_diff"),
                                                   diff.toJson(), pubsub::Audience::PresenceReaders,
                                                   0, std::move(counting)));
}

QByteArray PresenceStore::nextRef()
{
    // 12 bytes -> 16 URL-safe base64 characters, the shape of upstream's refs. Unique per
    // process: a random prefix and a counter.
    uchar raw[12];
    qToBigEndian(m_refPrefix, raw);
    qToBigEndian(++m_refCounter, raw + 4);
    return QByteArray(reinterpret_cast<const char *>(raw), sizeof(raw))
            .toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals);
}

} // namespace rt::presence
