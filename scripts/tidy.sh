#!/usr/bin/env bash
# clang-tidy (config: .clang-tidy; every check is an error) over our C++ sources, with the compile
# commands of a configured and built tree.
#
#   scripts/tidy.sh [--changed] [build-dir]   # what CI gates: the files changed since the
#                                              # baseline commit (.clang-tidy-baseline)
#   scripts/tidy.sh --all [build-dir]         # every file of server/, shared/, dashboard/;
#                                              # clean, it says how to move the baseline
#   scripts/tidy.sh --count [build-dir]       # every file: diagnostics per file, never fails
#
# A full run takes about 15 minutes on 2 cores, too long for every CI run; the gate keeps every
# file that is touched clean, and a clean full run moves the baseline forward.
# "Changed" means: a .cpp that differs from the baseline (or is new), and the .cpp beside a
# changed header. Deleted files are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=changed
case "${1:-}" in
    --changed) shift ;;
    --all) mode=all; shift ;;
    --count) mode=count; shift ;;
esac
build=${1:-build}
if [ ! -f "$build/compile_commands.json" ]; then
    echo "tidy: $build/compile_commands.json missing; configure and build first (cmake --preset dev)" >&2
    exit 2
fi
baseline=$(tr -d '[:space:]' < .clang-tidy-baseline)

changed_files() {
    # A shallow clone may lack the baseline: fetch it if we can, fail clearly if we cannot.
    if ! git cat-file -e "$baseline^{commit}" 2>/dev/null; then
        git fetch --quiet --depth=1 origin "$baseline" 2>/dev/null || {
            echo "tidy: baseline commit $baseline is not in this clone" >&2
            exit 2
        }
    fi
    {
        git diff --name-only --diff-filter=d "$baseline" -- 'server/*.cpp' 'shared/*.cpp' 'dashboard/*.cpp'
        git ls-files --others --exclude-standard -- 'server/*.cpp' 'shared/*.cpp' 'dashboard/*.cpp'
        git diff --name-only --diff-filter=d "$baseline" -- 'server/*.h' 'shared/*.h' 'dashboard/*.h' |
            sed 's/\.h$/.cpp/'
    } | sort -u | while read -r file; do if [ -f "$file" ]; then echo "$file"; fi; done
}

case $mode in
    changed) files=$(changed_files) ;;
    *) files=$(git ls-files 'shared/*.cpp' 'server/*.cpp' 'dashboard/*.cpp') ;;
esac
if [ -z "$files" ]; then
    echo "tidy: no file changed since the baseline ${baseline:0:12}"
    exit 0
fi
count=$(echo "$files" | wc -l)
echo "tidy: $count file(s) ($mode; baseline ${baseline:0:12})"
log=$(mktemp)
status=0
# The gate holds the changed files to zero diagnostics, headers included; an unchanged header's
# diagnostics belong to the full run. (Default: .clang-tidy's HeaderFilterRegex.)
header_filter=()
if [ "$mode" = changed ]; then
    headers=$(git diff --name-only --diff-filter=d "$baseline" -- 'server/*.h' 'shared/*.h' 'dashboard/*.h'
              echo "$files" | sed 's/\.cpp$/.h/')
    regex=$(echo "$headers" | sort -u | while read -r h; do if [ -f "$h" ]; then echo "$h"; fi; done |
            sed 's/[.]/[.]/g' | paste -sd '|')
    header_filter=(-header-filter "(${regex:-__none__})\$")
fi
# shellcheck disable=SC2086
run-clang-tidy -quiet "${header_filter[@]}" -p "$build" -j "$(nproc)" $files >"$log.raw" 2>&1 ||
    status=$?
# run-clang-tidy 14 always asks for colours.
sed 's/\x1b\[[0-9;]*m//g' "$log.raw" >"$log" && rm -f "$log.raw"
if [ "$mode" = count ]; then
    grep -oE '^[^ :]+\.(cpp|h):[0-9]+:[0-9]+: (warning|error):' "$log" | cut -d: -f1 | sort | uniq -c | sort -rn
    echo "tidy: $(grep -cE ': (warning|error): ' "$log" || true) diagnostic(s) in all"
    rm -f "$log"
    exit 0
fi
grep -E ': (warning|error): ' "$log" | sort -u || true
rm -f "$log"
if [ "$status" -ne 0 ]; then
    echo "tidy: diagnostics above (fix them, or NOLINT(check-name) with a reason)" >&2
    exit 1
fi
if [ "$mode" = all ]; then
    echo "tidy: every file is clean; move the baseline: git rev-parse HEAD > .clang-tidy-baseline"
fi
echo "tidy: clean"
