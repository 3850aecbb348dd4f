#include "server/presence/presence_store.h"

#include "server/presence/logging.h"
#include "server/pubsub/local_pubsub.h"
#include "server/pubsub/outbound_message.h"
#include "server/runtime/post.h"

#include <QRandomGenerator>
#include <QSet>
#include <QtEndian>

#include <cstring>

namespace rt::presence {

PresenceStore::PresenceStore(const pubsub::LocalPubSub &pubsub, QObject *parent)
    : QObject(parent),
      m_pubsub(pubsub),
      m_refPrefix(QRandomGenerator::global()->generate64() & 0xFFFF'FFFF'FFFFULL)
{
    registerPresenceMetaTypes();
}

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
    Topic &entry = m_topics[topic.id()];
    entry.key = topic;
    const QByteArray ref = nextRef();
    const PresenceDiff diff = entry.presences.track(memberId, key, meta, ref);
    if (diff.isEmpty()) {
        return;
    }
    // The diff's join holds the meta as stored (phx_ref* removed); announce that one.
    QJsonObject stored = diff.joins.constFirst().meta;
    stored.remove(QStringLiteral("phx_ref"));
    stored.remove(QStringLiteral("phx_ref_prev"));
    publish(topic, diff, std::move(counting));
    Q_EMIT localChanged(PresenceChange{ PresenceChange::Op::Track,
                                        PresenceRecord{ topic, memberId, key, stored, ref } });
}

void PresenceStore::untrack(const pubsub::TopicKey &topic, quint64 memberId,
                            pubsub::DeliveryCounting counting)
{
    const auto it = m_topics.find(topic.id());
    if (it == m_topics.end()) {
        return;
    }
    const PresenceDiff diff = it->presences.untrack(memberId);
    eraseIfEmpty(it);
    if (diff.isEmpty()) {
        return;
    }
    publish(topic, diff, std::move(counting));
    Q_EMIT localChanged(PresenceChange{ PresenceChange::Op::Untrack,
                                        PresenceRecord{ topic, memberId, {}, {}, {} } });
}

QByteArray PresenceStore::stateJson(const pubsub::TopicKey &topic) const
{
    const auto it = m_topics.constFind(topic.id());
    return it == m_topics.constEnd() ? QByteArrayLiteral("{}") : it->presences.stateJson();
}

qsizetype PresenceStore::presenceCount(const pubsub::TopicKey &topic) const
{
    const auto it = m_topics.constFind(topic.id());
    return it == m_topics.constEnd() ? 0 : it->presences.size();
}

QList<PresenceRecord> PresenceStore::localPresences() const
{
    QList<PresenceRecord> records;
    for (const Topic &topic : m_topics) {
        for (const PresenceRecord &record : topic.presences.recordsOf(0)) {
            records.append(PresenceRecord{ topic.key, record.memberId, record.key, record.meta,
                                           record.ref });
        }
    }
    return records;
}

void PresenceStore::applyRemoteChange(const QString &origin, const PresenceChange &change)
{
    const quint32 handle = originHandle(origin);
    const PresenceRecord &record = change.record;
    const MemberRef who{ handle, record.memberId };
    if (change.op == PresenceChange::Op::Track) {
        Topic &entry = m_topics[record.topic.id()];
        entry.key = record.topic;
        publishRemote(record.topic, entry.presences.put(who, record.key, record.meta, record.ref));
        return;
    }
    const auto it = m_topics.find(record.topic.id());
    if (it == m_topics.end()) {
        return;
    }
    const PresenceDiff diff = it->presences.untrack(who);
    eraseIfEmpty(it);
    publishRemote(record.topic, diff);
}

void PresenceStore::replaceRemoteOrigin(const QString &origin, const QList<PresenceRecord> &records)
{
    const quint32 handle = originHandle(origin);
    // The new state, per topic.
    QHash<QByteArray, QList<const PresenceRecord *>> byTopic;
    for (const PresenceRecord &record : records) {
        byTopic[record.topic.id()].append(&record);
    }
    // Topics where the origin held presences and holds none now: all leave.
    QList<QByteArray> emptied;
    for (auto it = m_topics.cbegin(); it != m_topics.cend(); ++it) {
        if (!byTopic.contains(it.key()) && !it->presences.membersOf(handle).isEmpty()) {
            emptied.append(it.key());
        }
    }
    for (const QByteArray &id : std::as_const(emptied)) {
        const auto it = m_topics.find(id);
        const pubsub::TopicKey topic = it->key;
        const PresenceDiff diff = it->presences.removeOrigin(handle);
        eraseIfEmpty(it);
        publishRemote(topic, diff);
    }
    // Topics in the new state: joins for the new and changed, leaves for the vanished.
    for (auto it = byTopic.cbegin(); it != byTopic.cend(); ++it) {
        Topic &entry = m_topics[it.key()];
        entry.key = it.value().constFirst()->topic;
        QSet<quint64> present;
        PresenceDiff diff;
        for (const PresenceRecord *record : it.value()) {
            present.insert(record->memberId);
            diff.append(entry.presences.put(MemberRef{ handle, record->memberId }, record->key,
                                            record->meta, record->ref));
        }
        for (const MemberRef who : entry.presences.membersOf(handle)) {
            if (!present.contains(who.member)) {
                diff.append(entry.presences.untrack(who));
            }
        }
        publishRemote(entry.key, diff);
    }
}

void PresenceStore::dropRemoteOrigin(const QString &origin)
{
    const auto handle = m_origins.constFind(origin);
    if (handle == m_origins.constEnd()) {
        return;
    }
    QList<QByteArray> touched;
    for (auto it = m_topics.cbegin(); it != m_topics.cend(); ++it) {
        if (!it->presences.membersOf(*handle).isEmpty()) {
            touched.append(it.key());
        }
    }
    for (const QByteArray &id : std::as_const(touched)) {
        const auto it = m_topics.find(id);
        const pubsub::TopicKey topic = it->key;
        const PresenceDiff diff = it->presences.removeOrigin(*handle);
        eraseIfEmpty(it);
        publishRemote(topic, diff);
    }
    if (!touched.isEmpty()) {
        qCInfo(lcPresence) << "presences of node" << origin << "left" << touched.size() << "topics";
    }
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

void PresenceStore::publishRemote(const pubsub::TopicKey &topic, const PresenceDiff &diff)
{
    if (diff.isEmpty()) {
        return;
    }
    publish(topic, diff, m_remoteCounting ? m_remoteCounting(topic) : pubsub::DeliveryCounting{});
}

void PresenceStore::eraseIfEmpty(QHash<QByteArray, Topic>::iterator it)
{
    if (it->presences.isEmpty()) {
        m_topics.erase(it);
    }
}

quint32 PresenceStore::originHandle(const QString &origin)
{
    auto it = m_origins.find(origin);
    if (it == m_origins.end()) {
        it = m_origins.insert(origin, static_cast<quint32>(m_origins.size() + 1));
    }
    return *it;
}

QByteArray PresenceStore::nextRef()
{
    // 12 bytes -> 16 URL-safe base64 characters, the shape of upstream's refs. Unique per
    // process: a random 48-bit prefix and a 48-bit counter (2^48 tracks outlast any process).
    uchar raw[16];
    qToBigEndian(m_refPrefix, raw); // 8 bytes, the top 2 zero
    qToBigEndian(++m_refCounter, raw + 8);
    // Keep prefix bytes 2..7 and counter bytes 10..15.
    std::memmove(raw, raw + 2, 6);
    std::memmove(raw + 6, raw + 10, 6);
    return QByteArray(reinterpret_cast<const char *>(raw), 12)
            .toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals);
}

} // namespace rt::presence
