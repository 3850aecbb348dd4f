#!/usr/bin/env bash
# Installs everything qtrealtime needs to build, run and test on Debian 12, idempotently:
# Debian packages (Qt 6.4, libpq, OpenSSL, http-parser, PostgreSQL 15, etcd 3.4, nats-server,
# Xvfb, Node.js + npm) and the npm packages of tests/e2e and bench (from their lockfiles).
#
#   scripts/install-deps.sh            # build + run + test dependencies
#   RT_SKIP_APT=1 scripts/install-deps.sh   # only the npm part (packages already present)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
    build-essential cmake ninja-build ccache pkg-config git ca-certificates curl
    dpkg-dev  # dpkg-shlibdeps: cpack computes the .deb dependencies with it
    clang clang-format clang-tidy libclang-rt-14-dev
    qt6-base-dev qt6-websockets-dev qt6-charts-dev libqt6opengl6-dev qt6-tools-dev qt6-l10n-tools
    qt6-translations-l10n  # Qt's own texts (buttons, dialogs) in the dashboard's languages
    libqt6sql6-psql libqt6sql6-sqlite
    libpq-dev libssl-dev libhttp-parser-dev libre2-dev
    postgresql etcd-server etcd-client nats-server
    xvfb xauth fonts-dejavu-core
    nodejs npm openssl
    iproute2 util-linux  # ip netns and flock: the multi-host test bed (tests/support/netns)
)

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
    sudo_cmd=(sudo)
fi

if [ -z "${RT_SKIP_APT:-}" ]; then
    missing=()
    for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    # nodejs/npm may come from elsewhere (nodesource, nvm); accept any Node >= 20 on PATH.
    if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
        node_major=$(node -p 'process.versions.node.split(".")[0]')
        if [ "$node_major" -ge 20 ]; then
            missing=("${missing[@]/nodejs/}")
            missing=("${missing[@]/npm/}")
        fi
    fi
    filtered=()
    for p in "${missing[@]}"; do [ -n "$p" ] && filtered+=("$p"); done
    if [ ${#filtered[@]} -gt 0 ]; then
        echo "install-deps: installing ${filtered[*]}"
        "${sudo_cmd[@]}" apt-get update -qq
        DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y --no-install-recommends "${filtered[@]}"
    fi
fi

for dir in tests/e2e bench; do
    if [ -f "$dir/package-lock.json" ]; then
        if [ ! -d "$dir/node_modules" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
            echo "install-deps: npm ci in $dir"
            (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
        fi
    fi
done
