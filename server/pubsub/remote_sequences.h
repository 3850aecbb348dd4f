#pragma once

#include "server/pubsub/outbound_message.h"
#include "server/pubsub/topic_history.h"
#include "server/pubsub/topic_key.h"

#include <QHash>

#include <deque>
#include <functional>
#include <optional>
#include <vector>

namespace rt::pubsub {

// The numbered messages this node receives from their tenants' homes, per topic: delivered in
// offset order, each once (docs/design-notes.md, "Positions, history and recovery"). Each
// message names the offset of the topic's previous message that went to every node
// (StreamPosition::previous); one that names an offset this node has not delivered shows a
// loss on the way (a link that broke with frames in flight, a partition that discarded the
// queue): the topic's later messages then wait while the caller asks the home for what lies
// between (askFrom), and answered() delivers that and then what waited. Bounds: at most
// MaxHeldPerTopic messages wait (beyond, the gap stays and they go out); a topic untouched for
// IdleForgetMs is forgotten. Pure logic, no threads and no I/O: ClusterPubSub drives it on the
// cluster thread.
class RemoteSequences
{
public:
    static constexpr qsizetype MaxHeldPerTopic = 10'000;
    static constexpr qint64 IdleForgetMs = qint64{ 10 } * 60'000;

    struct Outcome
    {
        std::vector<OutboundMessagePtr> deliver; // in this order, now
        std::optional<StreamPosition> askFrom; // ask the home for the topic after this
    };
    struct Figures
    {
        quint64 gapsSeen = 0;
        quint64 gapsFilled = 0; // answered with what was missing
        quint64 gapsLeft = 0; // the home could not say, or too much waited
        quint64 duplicatesDropped = 0;
    };

    // A numbered message of `message->topic()` from its home.
    Outcome received(const OutboundMessagePtr &message, qint64 nowMs);
    // The home's answer to an askFrom (or a catch-up) for `topic`.
    Outcome answered(const TopicKey &topic, const TopicHistory::Recovery &recovery);
    // The link to a home came back: every topic of a tenant homed there (homedThere) waits for
    // the answer to a question after its last delivered position; returns those questions.
    std::vector<std::pair<TopicKey, StreamPosition>>
    catchUp(const std::function<bool(const QByteArray &tenantId)> &homedThere, qint64 nowMs);
    // This node no longer holds clients of the tenant: its topics start afresh next time (a
    // gap across a time without clients is nobody's loss).
    void forgetTenant(const QByteArray &tenantId);
    // Forgets topics idle for IdleForgetMs that wait for nothing.
    void sweep(qint64 nowMs);

    qsizetype topicCount() const { return m_topics.size(); }
    const Figures &figures() const { return m_figures; }

private:
    struct Topic
    {
        quint64 epoch = 0;
        quint64 last = 0; // the last offset delivered
        bool waiting = false; // a question is out; newer messages are held
        std::deque<OutboundMessagePtr> held;
        qint64 touchedMs = 0;
    };
    // Delivers what waited (in order, above `last`) and stops waiting.
    static void release(Topic &topic, Outcome &out);
    static void deliverIfNew(Topic &topic, const OutboundMessagePtr &message, Outcome &out);

    QHash<TopicKey, Topic> m_topics;
    Figures m_figures;
};

} // namespace rt::pubsub
