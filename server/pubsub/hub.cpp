#include "server/pubsub/hub.h"

#include "server/limits/rate_counter.h"
#include "server/metrics/counter.h"
#include "server/metrics/histogram.h"

namespace rt::pubsub {

void Hub::subscribe(const TopicKey &topic, Subscriber *subscriber, quint64 memberId,
                    protocol::Vsn vsn, MemberRights rights)
{
    Q_ASSERT(!m_delivering);
    Q_ASSERT(subscriber->m_hubSlot < 0);
    std::vector<Member> &members = m_topics[topic.id()];
    subscriber->m_hubSlot = static_cast<qsizetype>(members.size());
    members.push_back(Member{ subscriber, memberId, vsn, rights });
    ++m_memberships;
}

void Hub::unsubscribe(const TopicKey &topic, Subscriber *subscriber)
{
    Q_ASSERT(!m_delivering);
    const auto it = m_topics.find(topic.id());
    const qsizetype slot = subscriber->m_hubSlot;
    if (it == m_topics.end() || slot < 0) {
        return;
    }
    std::vector<Member> &members = it.value();
    if (slot >= static_cast<qsizetype>(members.size())
        || members[static_cast<std::size_t>(slot)].subscriber != subscriber) {
        return; // subscribed to another topic: nothing to do here
    }
    // Swap-remove keeps unsubscribe O(1); order of delivery within a topic does not matter.
    members[static_cast<std::size_t>(slot)] = members.back();
    members[static_cast<std::size_t>(slot)].subscriber->m_hubSlot = slot;
    members.pop_back();
    subscriber->m_hubSlot = -1;
    --m_memberships;
    if (members.empty()) {
        m_topics.erase(it);
    }
}

void Hub::setRights(const TopicKey &topic, Subscriber *subscriber, MemberRights rights)
{
    const auto it = m_topics.find(topic.id());
    if (it == m_topics.end() || subscriber->m_hubSlot < 0) {
        return;
    }
    it.value()[static_cast<std::size_t>(subscriber->m_hubSlot)].rights = rights;
}

void Hub::deliver(const OutboundMessagePtr &message)
{
    const auto it = m_topics.constFind(message->topic().id());
    if (it == m_topics.constEnd()) {
        return;
    }
    const Audience audience = message->audience();
    const quint64 excluded = message->excludedMember();
    m_delivering = true;
    qint64 delivered = 0;
    for (const Member &member : it.value()) {
        if (member.memberId == excluded) {
            continue;
        }
        if ((audience == Audience::BroadcastReaders && !member.rights.readsBroadcast)
            || (audience == Audience::PresenceReaders && !member.rights.readsPresence)
            || (audience == Audience::Members && !message->isAddressedTo(member.memberId))) {
            continue;
        }
        const OutboundMessage::Frame &frame = message->frameFor(member.vsn);
        if (!frame.bytes.isEmpty()) {
            member.subscriber->deliver(*message, frame);
            ++delivered;
        }
    }
    m_delivering = false;
    if (delivered > 0) {
        const DeliveryCounting &counting = message->counting();
        if (counting.counter) {
            counting.counter->add(delivered);
        }
        if (counting.delivered) {
            counting.delivered->inc(static_cast<quint64>(delivered));
        }
        // From publication to this worker's pass over its members: queueing across threads.
        const std::shared_ptr<metrics::Histogram> &latency =
                audience == Audience::PresenceReaders ? m_presenceLatency : m_broadcastLatency;
        if (latency) {
            const auto waited = std::chrono::steady_clock::now() - message->createdAt();
            latency->observe(std::chrono::duration<double, std::milli>(waited).count());
        }
    }
}

qsizetype Hub::memberCount(const TopicKey &topic) const
{
    const auto it = m_topics.constFind(topic.id());
    return it == m_topics.constEnd() ? 0 : static_cast<qsizetype>(it.value().size());
}

} // namespace rt::pubsub
