#!/usr/bin/env bash
# ThreadSanitizer over the unit suites of the code that shares state between threads (label
# tsan: runtime, limits, pubsub, cluster links and counters, presence). Too long for every CI run
# (a clang build of its own): run it before resolving a change to those modules, and quote the
# result (CONTRIBUTING.md).
#
# Known limit: Debian's Qt is not built with TSan and its QMutex/QSemaphore wait on futexes TSan
# cannot see, so data handed from one thread to another through a queued call (posted functors,
# queued signals, implicitly shared QString/QByteArray in them) is reported as a race although
# Qt's event queue orders it. 19 of the 25 suites pass; 6 report such hand-offs (see the note of
# the session that added this script). Telling them apart needs happens-before annotations at our
# hand-off points (runtime::post, Mailbox, queued connections) or a TSan build of Qt.
#
#   scripts/tsan.sh            # configure (preset tsan), build the tsan suites, run them
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset tsan >/dev/null
targets=$(ctest --test-dir build-tsan -N -L tsan | sed -n 's/^ *Test *#[0-9]*: //p')
# shellcheck disable=SC2086
cmake --build --preset tsan --target $targets
ctest --preset tsan -j"$(nproc)"
