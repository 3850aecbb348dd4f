#include "server/pubsub/local_pubsub.h"

#include "server/pubsub/hub.h"
#include "server/runtime/post.h"

#include <QThread>

namespace rt::pubsub {

void LocalPubSub::addHub(Hub *hub)
{
    m_hubs.emplace_back(hub);
}

void LocalPubSub::publish(const OutboundMessagePtr &message) const
{
    if (m_stopped.load(std::memory_order_relaxed)) {
        return;
    }
    QThread *current = QThread::currentThread();
    for (Hub *target : m_hubs) {
        if (target->thread() == current) {
            target->deliver(message);
        } else {
            runtime::post(target, [target, message] { target->deliver(message); });
        }
    }
}

} // namespace rt::pubsub
