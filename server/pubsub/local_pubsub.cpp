#include "server/pubsub/local_pubsub.h"

#include "server/pubsub/hub.h"
#include "server/runtime/post.h"

#include <QThread>

namespace rt::pubsub {

void LocalPubSub::stop()
{
    m_stopped.store(true, std::memory_order_seq_cst);
    // seq_cst on both sides: a publisher that did not see the flag is counted here.
    while (m_publishing.load(std::memory_order_seq_cst) != 0) {
        QThread::yieldCurrentThread();
    }
}

void LocalPubSub::addHub(Hub *hub)
{
    m_hubs.emplace_back(hub);
}

void LocalPubSub::publish(const OutboundMessagePtr &message) const
{
    m_publishing.fetch_add(1, std::memory_order_seq_cst);
    if (m_stopped.load(std::memory_order_seq_cst)) {
        m_publishing.fetch_sub(1, std::memory_order_release);
        return;
    }
    QThread *current = QThread::currentThread();
    // A numbered message is published under its topic's lock, so the posts of one topic reach
    // every hub's queue in offset order; served synchronously here it would overtake what
    // another publisher of the topic posted to this thread a moment before (offset 5 before
    // 3 and 4). It takes the queue like the rest.
    const bool synchronous = !message->position().isSet();
    for (Hub *target : m_hubs) {
        if (synchronous && target->thread() == current) {
            target->deliver(message);
        } else {
            runtime::post(target, [target, message] { target->deliver(message); });
        }
    }
    m_publishing.fetch_sub(1, std::memory_order_release);
}

} // namespace rt::pubsub
