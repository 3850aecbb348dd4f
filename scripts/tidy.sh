#!/usr/bin/env bash
# Runs clang-tidy (config: .clang-tidy, all checks are errors) over the sources of shared/,
# server/ and dashboard/, using the compile commands of a configured build directory.
#
#   scripts/tidy.sh [build-dir]        # default: build
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
if [ ! -f "$build/compile_commands.json" ]; then
    echo "tidy: $build/compile_commands.json missing; configure first (cmake -S . -B $build -G Ninja)" >&2
    exit 2
fi
# Generated moc sources need their headers; build them first so every include resolves.
cmake --build "$build" --target all >/dev/null
files=$(git ls-files 'shared/*.cpp' 'server/*.cpp' 'dashboard/*.cpp')
# shellcheck disable=SC2086
run-clang-tidy -quiet -p "$build" -j "$(nproc)" $files
