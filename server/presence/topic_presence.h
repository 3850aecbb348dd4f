#pragma once

#include "server/presence/presence_change.h"

#include <QByteArray>
#include <QHash>
#include <QHashFunctions>
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
    // Adds `other`'s joins and leaves: one diff for several members' changes (clients apply
    // joins before leaves and match metas by phx_ref, so members never interfere).
    void append(const PresenceDiff &other)
    {
        joins.append(other.joins);
        leaves.append(other.leaves);
    }
    QByteArray toJson() const;
};

// Who holds a presence: a member (one joined channel) of some node. Member ids are chosen by
// each node on its own, so a presence is identified by its origin too. Origin 0 is this node;
// the store numbers the peer nodes it heard from 1, 2, ...
struct MemberRef
{
    quint32 origin = 0;
    quint64 member = 0;

    friend bool operator==(MemberRef a, MemberRef b)
    {
        return a.origin == b.origin && a.member == b.member;
    }
    friend size_t qHash(MemberRef ref, size_t seed = 0)
    {
        return qHashMulti(seed, ref.origin, ref.member);
    }
};

// The presences of one topic: one meta per tracking member (a joined channel), grouped by
// presence key. Pure state, no threads or I/O; the caller supplies unique phx_refs.
class TopicPresence
{
public:
    // Tracks `meta` for a member of this node under `key`. First track: a join. Same key and
    // identical meta: nothing (empty diff). Changed meta or key: a leave of the old meta and a
    // join of the new one carrying phx_ref_prev (spec §5.1).
    PresenceDiff track(quint64 memberId, const QByteArray &key, const QJsonObject &meta,
                       const QByteArray &newRef);
    PresenceDiff track(MemberRef who, const QByteArray &key, const QJsonObject &meta,
                       const QByteArray &newRef);
    // A presence replicated from its origin node, under the origin's own ref. The ref names the
    // version: the same ref again is nothing; a new ref for a held member is an update (leave
    // of the old meta, join of the new one with phx_ref_prev), the diff its origin published.
    PresenceDiff put(MemberRef who, const QByteArray &key, const QJsonObject &meta,
                     const QByteArray &ref);
    // Removes the member's meta: a leave, or an empty diff when it was not tracked.
    PresenceDiff untrack(quint64 memberId);
    PresenceDiff untrack(MemberRef who);
    // Removes every presence of `origin`: one diff with all their leaves.
    PresenceDiff removeOrigin(quint32 origin);
    // The members of `origin` present here.
    QList<MemberRef> membersOf(quint32 origin) const;
    // The presences of `origin` (topic left empty), in tracking order.
    QList<PresenceRecord> recordsOf(quint32 origin) const;

    bool isTracked(quint64 memberId) const;
    bool isTracked(MemberRef who) const;
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
    QHash<MemberRef, Tracked> m_entries; // member -> its presence
    quint64 m_nextSequence = 0;
};

} // namespace rt::presence
