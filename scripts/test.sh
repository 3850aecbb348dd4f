#!/usr/bin/env bash
# One command that installs what is needed, builds, and runs every test: formatting, unit
# tests, fuzz-corpus replays, the install and .deb packaging check, end-to-end tests with the
# real @supabase/realtime-js client, clang-tidy of the files changed since .clang-tidy-baseline,
# then an AddressSanitizer/UBSan build of the unit tests and fuzz replays with short libFuzzer
# runs.
# .ci/run calls exactly this.
#
#   scripts/test.sh                 # everything
#   RT_SKIP_SANITIZERS=1 scripts/test.sh   # skip the sanitizer build (local iteration)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
jobs=$(nproc)
started=$(date +%s)
step() { printf '\n== %s (%ss)\n' "$1" "$(($(date +%s) - started))"; }
# Background jobs (clang-tidy, the sanitizer build) do not outlive a failed step.
trap 'jobs -p | xargs -r kill 2>/dev/null || true' EXIT

step "dependencies"
scripts/install-deps.sh

step "format check"
scripts/check-format.sh

step "build (preset dev: gcc, RelWithDebInfo)"
cmake --preset dev
cmake --build --preset dev -j"$jobs"

step "unit tests and fuzz corpus replays"
ctest --preset unit -j"$jobs"

step "packaging: cmake --install, systemd unit, .deb"
ctest --test-dir build -L packaging --output-on-failure

asan_pid=""
if [ -z "${RT_SKIP_SANITIZERS:-}" ]; then
    step "configure preset asan (clang, ASan + UBSan, libFuzzer); its build runs alongside the next step"
    cmake --preset asan >build/asan-configure.log
    # Only what runs under the sanitizers: the unit tests labelled asan (tests/CMakeLists.txt),
    # the fuzz corpus replays and the fuzz targets. A test is built by the executable target of
    # its name.
    executables=$(cd build-asan && ninja -t targets all | sed -n 's|^\([^ :]*/\)\{0,1\}\([A-Za-z0-9_]*\): CXX_EXECUTABLE_LINKER.*|\2|p' | sort -u)
    tests=$(ctest --test-dir build-asan -N -L 'asan|fuzz-replay' | sed -n 's/^ *Test *#[0-9]*: //p' | sort -u)
    targets=$(comm -12 <(echo "$tests") <(echo "$executables"))
    fuzzers=$(echo "$executables" | grep '^fuzz_' || true)
    # shellcheck disable=SC2086
    nice -n 15 cmake --build --preset asan -j"$jobs" --target $targets $fuzzers >build/asan-build.log 2>&1 &
    asan_pid=$!
fi

step "integration and end-to-end tests (clang-tidy of the changed files and the sanitizer build alongside, niced)"
# The tests mostly wait on sockets and databases; clang-tidy (about 13 s of CPU per file) and the
# sanitizer build fill the idle cores instead of adding their own minutes to the run.
nice -n 10 scripts/tidy.sh --changed build >build/tidy.log 2>&1 &
tidy_pid=$!
# As root the multi-host suite (network namespaces) must run: a machine that cannot build its
# test bed fails it instead of skipping it (tests/e2e/test/multihost.test.mjs).
if [ "$(id -u)" -eq 0 ]; then
    export RT_E2E_NETNS_REQUIRED=1
fi
ctest --test-dir build -L 'integration|e2e' --output-on-failure

step "clang-tidy: files changed since the baseline (.clang-tidy-baseline)"
tidy_status=0
wait "$tidy_pid" || tidy_status=$?
cat build/tidy.log
[ "$tidy_status" -eq 0 ] || exit "$tidy_status"

if [ -n "$asan_pid" ]; then
    step "build (preset asan): waiting for it to finish"
    asan_status=0
    wait "$asan_pid" || asan_status=$?
    if [ "$asan_status" -ne 0 ]; then
        grep -B2 -A20 -m5 'error' build/asan-build.log || tail -n 80 build/asan-build.log
        echo "the asan build failed (exit $asan_status)"; exit "$asan_status"
    fi
    tail -n 1 build/asan-build.log

    step "unit tests (label asan) and fuzz replays under ASan + UBSan"
    ctest --preset asan -j"$jobs"

    step "short libFuzzer runs (${RT_FUZZ_SECONDS:-20}s per target, $jobs at a time)"
    export RT_FUZZ_ROOT=$root RT_FUZZ_SECONDS=${RT_FUZZ_SECONDS:-20}
    # shellcheck disable=SC2016
    echo "$fuzzers" | xargs -P "$jobs" -I{} bash -c '
        fuzzer=$1; name=${fuzzer#fuzz_}
        work=$(mktemp -d); status=0
        "$RT_FUZZ_ROOT/build-asan/fuzz/$fuzzer" -max_total_time="$RT_FUZZ_SECONDS" -print_final_stats=1 \
            "$work" "$RT_FUZZ_ROOT/tests/fuzz/$name/corpus" >"$work.log" 2>&1 || status=$?
        if [ "$status" -ne 0 ]; then
            tail -n 60 "$work.log"; echo "fuzzer $fuzzer failed (exit $status)"; exit 1
        fi
        echo "$fuzzer: $(grep -E "stat::number_of_executed_units" "$work.log" || echo "no stats")"
        rm -rf "$work" "$work.log"' _ {}
fi

step "all tests passed"
