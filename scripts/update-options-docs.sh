#!/usr/bin/env bash
# Rewrites README.md's option table and packaging/realtime-server.env from the option table in
# server/app/config.cpp (tst_option_docs fails until they match it).
#
#   scripts/update-options-docs.sh [build-dir]     # default: build
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
cmake --build "$build" --target tst_option_docs
RT_UPDATE_DOCS=1 "$build/tests/tst_option_docs"
"$build/tests/tst_option_docs"
