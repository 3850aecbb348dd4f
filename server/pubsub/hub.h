#pragma once

#include "server/pubsub/outbound_message.h"
#include "server/pubsub/topic_key.h"

#include <QHash>
#include <QObject>

#include <vector>

namespace rt::metrics {
class Histogram;
}

namespace rt::pubsub {

// The receiving end of one joined channel. Implemented by the gateway's channel object; lives
// on the same worker thread as the Hub it is subscribed to.
class Subscriber
{
public:
    virtual ~Subscriber() = default;
    // Queue `frame` (the encoding of `message` for this member's serializer) for the client.
    // Called by Hub::deliver on the worker thread; must not subscribe, unsubscribe or destroy
    // anything synchronously (defer such work).
    virtual void deliver(const OutboundMessage &message, const OutboundMessage::Frame &frame) = 0;

private:
    friend class Hub;
    qsizetype m_hubSlot = -1; // position in the hub's member list; maintained by Hub only
};

// What a member may receive. Public channels read everything; private channels follow the
// tenant's RLS policies.
struct MemberRights
{
    bool readsBroadcast = true;
    bool readsPresence = true;
};

// Topic -> members of one worker. Lives on its worker thread and is used only there; messages
// from other threads arrive through LocalPubSub, which posts them here.
class Hub : public QObject
{
    Q_OBJECT
public:
    using QObject::QObject;

    void subscribe(const TopicKey &topic, Subscriber *subscriber, quint64 memberId,
                   protocol::Vsn vsn, MemberRights rights);
    // Removes `subscriber` from `topic`; a no-op when it is not subscribed.
    void unsubscribe(const TopicKey &topic, Subscriber *subscriber);
    void setRights(const TopicKey &topic, Subscriber *subscriber, MemberRights rights);

    // Sends `message` to every member of its topic that may read it, except the excluded one.
    void deliver(const OutboundMessagePtr &message);

    // Where to record the fan-out latency of broadcasts and of presence diffs (set before use).
    void setFanoutLatency(std::shared_ptr<metrics::Histogram> broadcasts,
                          std::shared_ptr<metrics::Histogram> presence)
    {
        m_broadcastLatency = std::move(broadcasts);
        m_presenceLatency = std::move(presence);
    }

    qsizetype memberCount(const TopicKey &topic) const;
    qsizetype topicCount() const { return m_topics.size(); }
    // Members of all topics: the joined channels of this worker's sockets (a socket joined to
    // two topics counts twice; a topic joined on several workers counts once per member, so
    // workers' counts add up).
    qsizetype membershipCount() const { return m_memberships; }

private:
    struct Member
    {
        Subscriber *subscriber = nullptr;
        quint64 memberId = 0;
        protocol::Vsn vsn = protocol::Vsn::V2;
        MemberRights rights;
    };
    QHash<QByteArray, std::vector<Member>> m_topics; // TopicKey::id() -> members
    qsizetype m_memberships = 0; // sum of the members' vectors' sizes
    std::shared_ptr<metrics::Histogram> m_broadcastLatency;
    std::shared_ptr<metrics::Histogram> m_presenceLatency;
    bool m_delivering = false; // guards the rule that delivery never changes membership
};

} // namespace rt::pubsub
