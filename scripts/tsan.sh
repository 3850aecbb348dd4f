#!/usr/bin/env bash
# ThreadSanitizer over the unit suites of the code that shares state between threads (label
# tsan: runtime, limits, pubsub, cluster links and counters, presence). Too long for every CI run
# (a clang build of its own): run it before resolving a change to those modules, and quote the
# result (CONTRIBUTING.md).
#
# Debian's Qt and GLib are not built with TSan: the futex under QMutex, QSemaphore, QThread::wait()
# and Qt's event queue is invisible to it, so every value handed through them would look like a
# race. Our hand-off points say what orders them (shared/core/happens_before.h: runtime::post,
# runtime::Mailbox and a thread's finish), our locks are std::mutex, and the tests hand values
# over with tests/support/threads (Semaphore, runOn) instead of QSemaphore or
# BlockingQueuedConnection. tests/tsan.supp ignores only the C-library calls made from inside the
# uninstrumented libraries; no race is suppressed by pattern. The preset runs the suites with
# QT_NO_GLIB=1, as the server runs.
#
#   scripts/tsan.sh            # configure (preset tsan), build the tsan suites, run them
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset tsan >/dev/null
targets=$(ctest --test-dir build-tsan -N -L tsan | sed -n 's/^ *Test *#[0-9]*: //p')
# shellcheck disable=SC2086
cmake --build --preset tsan --target $targets
ctest --preset tsan -j"$(nproc)"
