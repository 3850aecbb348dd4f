#!/usr/bin/env bash
# Regenerates the README's dashboard screenshots (docs/screenshots/*.png): runs the dashboard's
# end-to-end test (tests/e2e/test/dashboard.test.mjs: etcd, three nodes in two regions,
# realtime-js clients of two tenants broadcasting, then realtime-dashboard's report mode under
# QT_QPA_PLATFORM=offscreen) and copies the five PNGs of its first report.
#
#   scripts/dashboard-screenshots.sh [build-dir]      # default: build
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=${1:-build}
export RT_SERVER_BIN=${RT_SERVER_BIN:-$root/$build/bin/realtime-server}
export RT_DASHBOARD_BIN=${RT_DASHBOARD_BIN:-$root/$build/bin/realtime-dashboard}
export RT_DASHBOARD_SCREENSHOT_DIR=$root/docs/screenshots
cd tests/e2e
node --test --test-reporter=spec --test-name-pattern='writes the five views' test/dashboard.test.mjs
ls -l "$RT_DASHBOARD_SCREENSHOT_DIR"
