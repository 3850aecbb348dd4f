#pragma once

#include "shared/core/happens_before.h"

#include <QObject>

#include <utility>

namespace rt::runtime {

// Runs `fn` on the thread of `context` from its event loop, later. The call is dropped if
// `context` is destroyed first. Use it to hand values to another thread; never capture
// references to the caller's stack or pointers to the caller's thread-owned objects.
template <typename Fn>
void post(QObject *context, Fn &&fn)
{
    invokeQueued(context, std::forward<Fn>(fn));
}

} // namespace rt::runtime
