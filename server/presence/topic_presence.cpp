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
    PresenceDiff diff;
    QJsonObject cleanMeta = meta;
    // phx_ref is ours: a client cannot choose or forge it.
    cleanMeta.remove(PhxRef);
    cleanMeta.remove(PhxRefPrev);
    const auto it = m_entries.find(memberId);
    if (it == m_entries.end()) {
        const Tracked &tracked =
                *m_entries.insert(memberId, Tracked{ key, cleanMeta, newRef, m_nextSequence++ });
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

PresenceDiff TopicPresence::untrack(quint64 memberId)
{
    PresenceDiff diff;
    const auto it = m_entries.find(memberId);
    if (it != m_entries.end()) {
        diff.leaves.append({ it->key, metaWithRef(it.value()) });
        m_entries.erase(it);
    }
    return diff;
}

bool TopicPresence::isTracked(quint64 memberId) const
{
    return m_entries.contains(memberId);
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
