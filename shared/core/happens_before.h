#pragma once

// Happens-before annotations for ThreadSanitizer at our thread hand-off points; empty otherwise.
//
// Debian's Qt is not instrumented: the mutex that orders its event queue is invisible to TSan, so
// a value handed to another thread through a queued call (runtime::post, Mailbox) looks like a
// race although Qt orders it. The hand-off says so explicitly: the poster releases a key before
// it posts, the functor acquires it before it runs. Only the hand-off itself is annotated; two
// threads that touch the same data outside such a hand-off are still reported.

#if defined(__has_feature)
#  if __has_feature(thread_sanitizer)
#    define RT_UNDER_TSAN 1
#  endif
#endif
#if !defined(RT_UNDER_TSAN) && defined(__SANITIZE_THREAD__)
#  define RT_UNDER_TSAN 1
#endif

#if defined(RT_UNDER_TSAN)
#  include <sanitizer/tsan_interface.h>
extern "C" {
// From TSan's dynamic-annotations interface (tsan_interface_ann.cpp); no public header has them.
void AnnotateIgnoreReadsBegin(const char *file, int line);
void AnnotateIgnoreReadsEnd(const char *file, int line);
void AnnotateIgnoreWritesBegin(const char *file, int line);
void AnnotateIgnoreWritesEnd(const char *file, int line);
}
#endif

#include <QDeadlineTimer>
#include <QMetaObject>
#include <QObject>
#include <QThread>

#include <memory>
#include <type_traits>
#include <utility>

namespace rt {

// Marks that everything this thread did so far happens before a later acquire(key) elsewhere.
inline void releaseTo([[maybe_unused]] const void *key)
{
#if defined(RT_UNDER_TSAN)
    __tsan_release(const_cast<void *>(
            key)); // NOLINT(cppcoreguidelines-pro-type-const-cast): TSan's C API takes void*
#endif
}

// Marks that everything done before the matching releaseTo(key) happens before what follows.
inline void acquireFrom([[maybe_unused]] const void *key)
{
#if defined(RT_UNDER_TSAN)
    __tsan_acquire(const_cast<void *>(
            key)); // NOLINT(cppcoreguidelines-pro-type-const-cast): TSan's C API takes void*
#endif
}

// While alive, TSan does not record this thread's memory accesses. Only for the inside of a
// Qt call that copies a handed-off functor into Qt's event: the copy is ordered by Qt's queue.
#if defined(RT_UNDER_TSAN)
class UnrecordedAccesses
{
public:
    UnrecordedAccesses()
    {
        AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
        AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
    }
    ~UnrecordedAccesses()
    {
        AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
        AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
    }
    UnrecordedAccesses(const UnrecordedAccesses &) = delete;
    UnrecordedAccesses &operator=(const UnrecordedAccesses &) = delete;
    UnrecordedAccesses(UnrecordedAccesses &&) = delete;
    UnrecordedAccesses &operator=(UnrecordedAccesses &&) = delete;
};
#endif

// A functor handed to another thread: constructing it releases a key of its own; calling it (or
// destroying it unrun, when Qt drops the event) acquires that key first. Hand it to Qt inside an
// UnrecordedAccesses scope. Used only under TSan: elsewhere the functor is posted as it is.
template <typename Fn>
class HandedOff
{
public:
    explicit HandedOff(Fn fn) : m_key(std::make_unique<char>()), m_fn(std::move(fn))
    {
        releaseTo(m_key.get());
    }
    HandedOff(HandedOff &&) noexcept = default;
    HandedOff &operator=(HandedOff &&) noexcept = default;
    HandedOff(const HandedOff &) = delete;
    HandedOff &operator=(const HandedOff &) = delete;
    ~HandedOff()
    {
        if (m_key) {
            acquireFrom(m_key.get());
        }
    }

    void operator()()
    {
        acquireFrom(m_key.get());
        m_fn();
    }

private:
    std::unique_ptr<char> m_key; // only its address is used: the TSan sync key of this hand-off
    Fn m_fn;
};

// Posts `fn` to run on the thread of `context` (queued), annotated as a hand-off under TSan.
template <typename Fn>
void invokeQueued(QObject *context, Fn &&fn)
{
#if defined(RT_UNDER_TSAN)
    HandedOff<std::decay_t<Fn>> handed(std::forward<Fn>(fn));
    const UnrecordedAccesses copiedIntoQtsEvent;
    QMetaObject::invokeMethod(context, std::move(handed), Qt::QueuedConnection);
#else
    QMetaObject::invokeMethod(context, std::forward<Fn>(fn), Qt::QueuedConnection);
#endif
}

// QThread::wait() is ordered by a Qt mutex TSan cannot see either. watchFinish(thread), before
// thread->start(): the thread releases a key as it finishes (its finished() signal, on itself);
// waitFinished(thread) waits for the thread and acquires that key, so what the thread did
// happens before what the waiter does next.
inline void watchFinish([[maybe_unused]] QThread *thread)
{
#if defined(RT_UNDER_TSAN)
    // Captures nothing: the connection is destroyed with the thread, by the waiter.
    QObject::connect(
            thread, &QThread::finished, thread, [] { releaseTo(QThread::currentThread()); },
            Qt::DirectConnection);
#endif
}

inline bool waitFinished(QThread *thread,
                         QDeadlineTimer deadline = QDeadlineTimer(QDeadlineTimer::Forever))
{
    const bool finished = thread->wait(deadline);
    if (finished) {
        acquireFrom(thread);
    }
    return finished;
}

} // namespace rt
