#pragma once

#include <QMetaObject>
#include <QMutex>
#include <QObject>

#include <memory>
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
        const QMutexLocker lock(&m_mutex);
        if (m_target == nullptr) {
            return false;
        }
        QMetaObject::invokeMethod(m_target, std::forward<Fn>(fn), Qt::QueuedConnection);
        return true;
    }

    // Called on the target's thread (or when it is not running) before the target dies.
    void close()
    {
        const QMutexLocker lock(&m_mutex);
        m_target = nullptr;
    }

private:
    QMutex m_mutex;
    QObject *m_target; // guarded by m_mutex
};

using MailboxPtr = std::shared_ptr<Mailbox>;

} // namespace rt::runtime
