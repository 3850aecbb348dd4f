#include "server/pubsub/remote_sequences.h"

namespace rt::pubsub {

void RemoteSequences::deliverIfNew(Topic &topic, const OutboundMessagePtr &message, Outcome &out)
{
    const StreamPosition position = message->position();
    if (position.epoch != topic.epoch || position.offset <= topic.last) {
        return;
    }
    topic.last = position.offset;
    out.deliver.push_back(message);
}

void RemoteSequences::release(Topic &topic, Outcome &out)
{
    topic.waiting = false;
    std::deque<OutboundMessagePtr> held = std::move(topic.held);
    topic.held.clear();
    for (const OutboundMessagePtr &message : held) {
        deliverIfNew(topic, message, out);
    }
}

RemoteSequences::Outcome RemoteSequences::received(const OutboundMessagePtr &message, qint64 nowMs)
{
    Outcome out;
    const StreamPosition position = message->position();
    Topic &topic = m_topics[message->topic()];
    topic.touchedMs = nowMs;
    if (topic.epoch != position.epoch) {
        // The first message seen, or a new epoch (the home changed): start from it. What waited
        // for the old epoch goes out first, as it came.
        release(topic, out);
        topic = Topic{ position.epoch, position.offset, false, {}, nowMs };
        out.deliver.push_back(message);
        return out;
    }
    if (position.offset <= topic.last) {
        ++m_figures.duplicatesDropped; // a queued copy after a catch-up, or the answer had it
        return out;
    }
    if (topic.waiting) {
        if (std::ssize(topic.held) >= MaxHeldPerTopic) {
            ++m_figures.gapsLeft;
            release(topic, out);
            deliverIfNew(topic, message, out);
            return out;
        }
        topic.held.push_back(message);
        return out;
    }
    if (position.previous <= topic.last) {
        deliverIfNew(topic, message, out); // nothing that went to every node is missing
        return out;
    }
    ++m_figures.gapsSeen;
    topic.waiting = true;
    topic.held.push_back(message);
    out.askFrom = StreamPosition{ topic.epoch, topic.last };
    return out;
}

RemoteSequences::Outcome RemoteSequences::answered(const TopicKey &topic,
                                                   const TopicHistory::Recovery &recovery)
{
    Outcome out;
    const auto it = m_topics.find(topic);
    if (it == m_topics.end() || !it->waiting) {
        return out; // forgotten meanwhile, or a new epoch already took over
    }
    Topic &state = it.value();
    if (recovery.failure == TopicHistory::RecoveryFailure::None) {
        ++m_figures.gapsFilled;
        for (const OutboundMessagePtr &message : recovery.messages) {
            deliverIfNew(state, message, out);
        }
    } else {
        ++m_figures.gapsLeft;
    }
    release(state, out);
    return out;
}

std::vector<std::pair<TopicKey, StreamPosition>>
RemoteSequences::catchUp(const std::function<bool(const QByteArray &tenantId)> &homedThere,
                         qint64 nowMs)
{
    std::vector<std::pair<TopicKey, StreamPosition>> questions;
    for (auto it = m_topics.begin(); it != m_topics.end(); ++it) {
        Topic &topic = it.value();
        if (topic.waiting || !homedThere(it.key().tenant())) {
            continue;
        }
        topic.waiting = true;
        topic.touchedMs = nowMs;
        questions.emplace_back(it.key(), StreamPosition{ topic.epoch, topic.last });
    }
    return questions;
}

void RemoteSequences::forgetTenant(const QByteArray &tenantId)
{
    m_topics.removeIf([&tenantId](QHash<TopicKey, Topic>::iterator it) {
        return it.key().tenant() == tenantId;
    });
}

void RemoteSequences::sweep(qint64 nowMs)
{
    m_topics.removeIf([nowMs](QHash<TopicKey, Topic>::iterator it) {
        return !it->waiting && nowMs - it->touchedMs >= IdleForgetMs;
    });
}

} // namespace rt::pubsub
