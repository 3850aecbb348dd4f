#pragma once

#include "server/pubsub/topic_key.h"

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QMetaType>

namespace rt::presence {

// One presence as its origin node holds it: who (the origin's own member id, unique only on that
// node), under which presence key, the tracked object (without phx_ref/phx_ref_prev) and the
// origin's phx_ref for it. Plain value: crosses threads (store <-> replicator) and the wire.
struct PresenceRecord
{
    pubsub::TopicKey topic;
    quint64 memberId = 0;
    QByteArray key;
    QJsonObject meta;
    QByteArray ref;

    friend bool operator==(const PresenceRecord &a, const PresenceRecord &b)
    {
        return a.topic == b.topic && a.memberId == b.memberId && a.key == b.key && a.meta == b.meta
                && a.ref == b.ref;
    }
};

// A change of one of this node's own presences, in the order the store made it. Track carries
// the whole new record (first track or update: the receiver derives the join, or the leave and
// the join with phx_ref_prev, exactly as the origin did); Untrack needs only topic and memberId.
struct PresenceChange
{
    enum class Op : quint8 {
        Track = 1,
        Untrack = 2,
    };
    Op op = Op::Track;
    PresenceRecord record;

    friend bool operator==(const PresenceChange &a, const PresenceChange &b)
    {
        return a.op == b.op && a.record == b.record;
    }
};

// Registers the types above for queued signals (idempotent; called by the store's and the
// replicator's constructors).
void registerPresenceMetaTypes();

} // namespace rt::presence

Q_DECLARE_METATYPE(rt::presence::PresenceRecord)
Q_DECLARE_METATYPE(rt::presence::PresenceChange)
