#include "server/presence/topic_presence.h"

#include <QJsonArray>
#include <QJsonDocument>

#include <algorithm>

namespace rt::presence {

namespace {

const QString PhxRef = QStringLiteral("phx_ref");
const QString PhxRefPrev = QStringLiteral("phx_ref_prev");
const QString Metas = QStringLiteral("metas");

// Groups entries by key, keeping the order of first appearance of each key and of the metas.
QJsonObject groupByKey(const QList<PresenceDiff::Entry> &entries)
{
    QJsonObject grouped;
    for (const PresenceDiff::Entry &entry : entries) {
        const QString key = QString::fromUtf8(entry.key);
        QJsonObject group = grouped.value(key).toObject();
        QJsonArray metas = group.value(Metas).toArray();
        metas.append(entry.meta);
        group.insert(Metas, metas);
        grouped.insert(key, group);
    }
    return grouped;
}

} // namespace

QByteArray PresenceDiff::toJson() const
{
    QJsonObject diff;
    diff.insert(QStringLiteral("joins"), groupByKey(joins));
    diff.insert(QStringLiteral("leaves"), groupByKey(leaves));
    return QJsonDocument(diff).toJson(QJsonDocument::Compact);
}

QJsonObject TopicPresence::metaWithRef(const Tracked &tracked)
{
    QJsonObject meta = tracked.meta;
    meta.insert(PhxRef, QString::fromLatin1(tracked.ref));
    return meta;
}

PresenceDiff TopicPresence::track(quint64 memberId, const QByteArray &key, const QJsonObject &meta,
                                  const QByteArray &newRef)
{
    return track(MemberRef{ 0, memberId }, key, meta, newRef);
}

PresenceDiff TopicPresence::track(MemberRef who, const QByteArray &key, const QJsonObject &meta,
                                  const QByteArray &newRef)
{
    PresenceDiff diff;
    QJsonObject cleanMeta = meta;
    // phx_ref is ours: a client cannot choose or forge it.
    cleanMeta.remove(PhxRef);
    cleanMeta.remove(PhxRefPrev);
    const auto it = m_entries.find(who);
    if (it == m_entries.end()) {
        const Tracked &tracked =
                *m_entries.insert(who, Tracked{ key, cleanMeta, newRef, m_nextSequence++ });
        diff.joins.append({ key, metaWithRef(tracked) });
        return diff;
    }
    Tracked &tracked = it.value();
    if (tracked.key == key && tracked.meta == cleanMeta) {
        return diff;
    }
    diff.leaves.append({ tracked.key, metaWithRef(tracked) });
    const QByteArray previousRef = tracked.ref;
    tracked.key = key;
    tracked.meta = cleanMeta;
    tracked.ref = newRef;
    QJsonObject joined = metaWithRef(tracked);
    joined.insert(PhxRefPrev, QString::fromLatin1(previousRef));
    diff.joins.append({ key, joined });
    return diff;
}

PresenceDiff TopicPresence::put(MemberRef who, const QByteArray &key, const QJsonObject &meta,
                                const QByteArray &ref)
{
    PresenceDiff diff;
    QJsonObject cleanMeta = meta;
    cleanMeta.remove(PhxRef);
    cleanMeta.remove(PhxRefPrev);
    const auto it = m_entries.find(who);
    if (it == m_entries.end()) {
        const Tracked &tracked =
                *m_entries.insert(who, Tracked{ key, cleanMeta, ref, m_nextSequence++ });
        diff.joins.append({ key, metaWithRef(tracked) });
        return diff;
    }
    Tracked &tracked = it.value();
    if (tracked.ref == ref) {
        return diff;
    }
    diff.leaves.append({ tracked.key, metaWithRef(tracked) });
    const QByteArray previousRef = tracked.ref;
    tracked.key = key;
    tracked.meta = cleanMeta;
    tracked.ref = ref;
    QJsonObject joined = metaWithRef(tracked);
    joined.insert(PhxRefPrev, QString::fromLatin1(previousRef));
    diff.joins.append({ key, joined });
    return diff;
}

PresenceDiff TopicPresence::untrack(quint64 memberId)
{
    return untrack(MemberRef{ 0, memberId });
}

PresenceDiff TopicPresence::untrack(MemberRef who)
{
    PresenceDiff diff;
    const auto it = m_entries.find(who);
    if (it != m_entries.end()) {
        diff.leaves.append({ it->key, metaWithRef(it.value()) });
        m_entries.erase(it);
    }
    return diff;
}

PresenceDiff TopicPresence::removeOrigin(quint32 origin)
{
    // Leaves in tracking order, like presence_state.
    QList<std::pair<quint64, MemberRef>> gone;
    for (auto it = m_entries.cbegin(); it != m_entries.cend(); ++it) {
        if (it.key().origin == origin) {
            gone.append({ it->sequence, it.key() });
        }
    }
    std::sort(gone.begin(), gone.end(),
              [](const auto &a, const auto &b) { return a.first < b.first; });
    PresenceDiff diff;
    for (const auto &[sequence, who] : std::as_const(gone)) {
        diff.append(untrack(who));
    }
    return diff;
}

QList<MemberRef> TopicPresence::membersOf(quint32 origin) const
{
    QList<MemberRef> members;
    for (auto it = m_entries.cbegin(); it != m_entries.cend(); ++it) {
        if (it.key().origin == origin) {
            members.append(it.key());
        }
    }
    return members;
}

QList<PresenceRecord> TopicPresence::recordsOf(quint32 origin) const
{
    QList<std::pair<quint64, PresenceRecord>> ordered;
    for (auto it = m_entries.cbegin(); it != m_entries.cend(); ++it) {
        if (it.key().origin == origin) {
            ordered.append({ it->sequence,
                             PresenceRecord{ {}, it.key().member, it->key, it->meta, it->ref } });
        }
    }
    std::sort(ordered.begin(), ordered.end(),
              [](const auto &a, const auto &b) { return a.first < b.first; });
    QList<PresenceRecord> records;
    records.reserve(ordered.size());
    for (auto &[sequence, record] : ordered) {
        records.append(std::move(record));
    }
    return records;
}

bool TopicPresence::isTracked(quint64 memberId) const
{
    return isTracked(MemberRef{ 0, memberId });
}

bool TopicPresence::isTracked(MemberRef who) const
{
    return m_entries.contains(who);
}

QByteArray TopicPresence::stateJson() const
{
    QList<const Tracked *> ordered;
    ordered.reserve(m_entries.size());
    for (const Tracked &tracked : m_entries) {
        ordered.append(&tracked);
    }
    std::sort(ordered.begin(), ordered.end(),
              [](const Tracked *a, const Tracked *b) { return a->sequence < b->sequence; });
    QList<PresenceDiff::Entry> entries;
    entries.reserve(ordered.size());
    for (const Tracked *tracked : std::as_const(ordered)) {
        entries.append({ tracked->key, metaWithRef(*tracked) });
    }
    return QJsonDocument(groupByKey(entries)).toJson(QJsonDocument::Compact);
}

} // namespace rt::presence
