#pragma once

#include "server/runtime/post.h"
#include "tests/support/threads/semaphore.h"

#include <QObject>

#include <memory>
#include <utility>

namespace rt::test {

// Runs `fn` on the thread of `context` and waits until it has run there; false if it did not
// within `timeoutMs` (say `context` died first). Qt::BlockingQueuedConnection, but through
// runtime::post and a Semaphore, so ThreadSanitizer sees that what `fn` did happens before the
// caller goes on. Never call it for an object of the calling thread.
template <typename Fn>
bool runOn(QObject *context, Fn &&fn, int timeoutMs = 10'000)
{
    const auto done = std::make_shared<Semaphore>(); // outlives a wait that timed out
    runtime::post(context, [done, fn = std::forward<Fn>(fn)]() mutable {
        fn();
        done->release();
    });
    return done->tryAcquire(1, timeoutMs);
}

} // namespace rt::test
