#pragma once

#include <QByteArray>
#include <QHash>
#include <QJsonObject>
#include <QList>

namespace rt::presence {

// A change of a topic's presences in Phoenix.Presence form (spec §5.2):
// {"joins":{key:{"metas":[...]}},"leaves":{key:{"metas":[...]}}}.
struct PresenceDiff
{
    struct Entry
    {
        QByteArray key;
        QJsonObject meta; // the tracked object plus phx_ref (and phx_ref_prev on updates)
    };
    QList<Entry> joins;
    QList<Entry> leaves;

    bool isEmpty() const { return joins.isEmpty() && leaves.isEmpty(); }
    QByteArray toJson() const;
};

// The presences of one topic: one meta per tracking member (a joined channel), grouped by
// presence key. Pure state, no threads or I/O; the caller supplies unique phx_refs.
class TopicPresence
{
public:
    // Tracks `meta` for `memberId` under `key`. First track: a join. Same key and identical
    // meta: nothing (empty diff). Changed meta or key: a leave of the old meta and a join of the
    // new one carrying phx_ref_prev (spec §5.1).
    PresenceDiff track(quint64 memberId, const QByteArray &key, const QJsonObject &meta,
                       const QByteArray &newRef);
    // Removes the member's meta: a leave, or an empty diff when it was not tracked.
    PresenceDiff untrack(quint64 memberId);

    bool isTracked(quint64 memberId) const;
    bool isEmpty() const { return m_entries.isEmpty(); }
    qsizetype size() const { return m_entries.size(); }

    // presence_state payload: {key:{"metas":[meta,...]}} with metas in tracking order.
    QByteArray stateJson() const;

private:
    struct Tracked
    {
        QByteArray key;
        QJsonObject meta; // without phx_ref
        QByteArray ref;
        quint64 sequence; // first-track order, for a stable presence_state
    };
    static QJsonObject metaWithRef(const Tracked &tracked);
    QHash<quint64, Tracked> m_entries; // member id -> its presence
    quint64 m_nextSequence = 0;
};

} // namespace rt::presence
