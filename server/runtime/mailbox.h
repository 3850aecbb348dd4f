#pragma once

#include "shared/core/happens_before.h"

#include <QObject>

#include <memory>
#include <mutex>
#include <utility>

namespace rt::runtime {

// A thread-safe way to post work to an object that may go away: other threads hold a
// shared_ptr<Mailbox> and post(); the target's own thread calls close() before the target is
// destroyed, after which posts are dropped. Unlike posting to a raw QObject pointer, a post can
// never reach a deleted object: the mutex orders close() against every post, and Qt discards
// events already queued for the target when it is destroyed.
class Mailbox
{
public:
    explicit Mailbox(QObject *target) : m_target(target) { }

    // Runs `fn` later on the target's thread. Returns false if the mailbox is closed.
    template <typename Fn>
    bool post(Fn &&fn)
    {
        const std::lock_guard lock(m_mutex);
        if (m_target == nullptr) {
            return false;
        }
        invokeQueued(m_target, std::forward<Fn>(fn));
        return true;
    }

    // Called on the target's thread (or when it is not running) before the target dies.
    void close()
    {
        const std::lock_guard lock(m_mutex);
        m_target = nullptr;
    }

private:
    std::mutex m_mutex; // a pthread mutex: ThreadSanitizer sees it order close() and post()
    QObject *m_target; // guarded by m_mutex
};

using MailboxPtr = std::shared_ptr<Mailbox>;

} // namespace rt::runtime
