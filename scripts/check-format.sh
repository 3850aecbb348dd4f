#!/usr/bin/env bash
# Fails if any C++ source of ours is not clang-format clean (config: .clang-format).
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files '*.cpp' '*.h')
# shellcheck disable=SC2086
clang-format --dry-run -Werror $files
echo "format: $(echo "$files" | wc -l) files clean"
