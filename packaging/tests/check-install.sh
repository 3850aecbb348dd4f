#!/usr/bin/env bash
# CTest "packaging_install" (label packaging): installs the build the two documented ways and
# checks what lands where.
#   1. DESTDIR=<tmp>/root cmake --install <build> --prefix /usr: binaries, unit, env template,
#      man page; the unit's paths; `systemd-analyze verify` on it; the installed binary's
#      --check-config with the installed env template.
#   2. cmake --install <build> --prefix <tmp>/opt-like: the unit names that prefix.
#   3. cpack -G DEB: package names, Depends (computed by dpkg-shlibdeps), conffiles, scripts,
#      file list.
#
#   packaging/tests/check-install.sh <build-dir>
set -euo pipefail

build=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok:   $*"; }
expect_file() { if [ -f "$1" ]; then pass "$2"; else fail "$2: $1 missing"; fi; }
expect_line() { # file, exact line
    if grep -qxF -- "$2" "$1"; then pass "$(basename "$1"): $2"; else fail "$(basename "$1") lacks: $2"; fi
}

echo "== cmake --install --prefix /usr (DESTDIR)"
root=$work/root
DESTDIR=$root cmake --install "$build" --prefix /usr >"$work/install.log"
expect_file "$root/usr/bin/realtime-server" "server binary"
expect_file "$root/usr/bin/realtime-dashboard" "dashboard binary"
unit=$root/usr/lib/systemd/system/realtime-server.service
env_file=$root/etc/realtime-server/realtime-server.env
expect_file "$unit" "systemd unit"
expect_file "$env_file" "environment file"
expect_file "$root/usr/share/doc/realtime-server/realtime-server.env" "environment template copy"
expect_file "$root/usr/share/man/man8/realtime-server.8.gz" "manual page"
[ "$(stat -c %a "$env_file")" = 600 ] && pass "env file mode 0600" || fail "env file mode $(stat -c %a "$env_file")"
for line in \
    "ExecStart=/usr/bin/realtime-server" \
    "ExecStartPre=/usr/bin/realtime-server --check-config" \
    "EnvironmentFile=/etc/realtime-server/realtime-server.env" \
    "Environment=DATA_DIR=/var/lib/realtime-server" \
    "StateDirectory=realtime-server" \
    "StateDirectoryMode=0700" \
    "DynamicUser=yes" \
    "Restart=on-failure" \
    "LimitNOFILE=1048576" \
    "NoNewPrivileges=yes" \
    "ProtectSystem=strict" \
    "ProtectHome=yes" \
    "PrivateTmp=yes" \
    "WantedBy=multi-user.target"; do
    expect_line "$unit" "$line"
done
if grep -q '@RT_' "$unit"; then fail "unplaced @RT_ placeholders in the unit"; fi
for binary in realtime-server realtime-dashboard; do
    if readelf -d "$root/usr/bin/$binary" | grep -qE 'RPATH|RUNPATH'; then
        fail "$binary carries an RPATH/RUNPATH"
    else
        pass "$binary has no RPATH"
    fi
done

# A repeated install keeps an edited environment file (it holds the secrets).
echo "API_JWT_SECRET=edited" >>"$env_file"
DESTDIR=$root cmake --install "$build" --prefix /usr >"$work/install2.log"
grep -qx 'API_JWT_SECRET=edited' "$env_file" && pass "existing env file kept" || fail "env file overwritten"

echo "== systemd-analyze verify"
if ! command -v systemd-analyze >/dev/null 2>&1; then
    echo "skip: systemd-analyze is not installed (Debian package systemd)"
else
    # The unit names /usr/bin/realtime-server, which verify checks on this machine: verify a
    # copy pointing into DESTDIR instead (it needs no running systemd). Any output is a finding.
    mkdir -p "$work/verify"
    sed -e "s|/usr/bin/realtime-server|$root/usr/bin/realtime-server|" \
        -e "s|=/etc/realtime-server/|=$root/etc/realtime-server/|" "$unit" \
        >"$work/verify/realtime-server.service"
    if output=$(systemd-analyze verify --man=no "$work/verify/realtime-server.service" 2>&1) \
        && [ -z "$output" ]; then
        pass "systemd-analyze verify"
    else
        fail "systemd-analyze verify: $output"
    fi
fi

echo "== installed binary with the installed env template"
sed -i '/^API_JWT_SECRET=edited$/d' "$env_file"
summary=$(env -i PATH=/usr/bin:/bin DATA_DIR="$work/state" bash -c \
    "set -a; . '$env_file'; exec '$root/usr/bin/realtime-server' --check-config" 2>&1) || true
case $summary in
"configuration ok: port 4000 on 0.0.0.0, control plane sqlite $work/state/control-plane.sqlite3,"*)
    pass "--check-config: $summary" ;;
*) fail "--check-config with the template: $summary" ;;
esac
[ ! -e "$work/state" ] && pass "--check-config created no state" || fail "--check-config created $work/state"
error=$(env -i PATH=/usr/bin:/bin PORT=http "$root/usr/bin/realtime-server" --check-config 2>&1) && status=0 || status=$?
if [ "$status" = 2 ] && [ "$error" = 'realtime-server: invalid PORT (--port): "http"; expected an integer from 0 to 65535' ]; then
    pass "--check-config on a bad value: exit 2, $error"
else
    fail "--check-config on a bad value: exit $status, $error"
fi

echo "== cmake --install --prefix <tmp>/prefix"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install3.log"
expect_line "$prefix/lib/systemd/system/realtime-server.service" "ExecStart=$prefix/bin/realtime-server"
expect_line "$prefix/lib/systemd/system/realtime-server.service" "EnvironmentFile=$prefix/etc/realtime-server/realtime-server.env"
expect_file "$prefix/etc/realtime-server/realtime-server.env" "env file under <prefix>/etc"

echo "== cpack -G DEB"
cpack --config "$build/CPackConfig.cmake" -G DEB -B "$work/deb" >"$work/cpack.log" 2>&1 \
    || { cat "$work/cpack.log"; fail "cpack"; }
server_deb=$(ls "$work"/deb/realtime-server_*.deb 2>/dev/null | head -n1)
dashboard_deb=$(ls "$work"/deb/realtime-dashboard_*.deb 2>/dev/null | head -n1)
if [ -z "$server_deb" ] || [ -z "$dashboard_deb" ]; then
    ls "$work/deb"; fail "packages realtime-server_*.deb and realtime-dashboard_*.deb"
else
    echo "$(basename "$server_deb") $(basename "$dashboard_deb")"
    depends=$(dpkg-deb -f "$server_deb" Depends)
    echo "realtime-server Depends: $depends"
    for dep in libqt6core6 libqt6network6 libqt6sql6 libssl3 libqt6sql6-sqlite libqt6sql6-psql; do
        [[ ", $depends," == *", $dep"[\ ,]* ]] && pass "Depends $dep" || fail "Depends lacks $dep"
    done
    dashboard_depends=$(dpkg-deb -f "$dashboard_deb" Depends)
    echo "realtime-dashboard Depends: $dashboard_depends"
    [[ $dashboard_depends == *libqt6widgets6* ]] && pass "dashboard Depends libqt6widgets6" || fail "dashboard Depends lacks libqt6widgets6"
    [[ $depends != *libqt6widgets6* ]] && pass "server does not depend on Widgets" || fail "server depends on Widgets"
    [ "$(dpkg-deb -f "$server_deb" Version)" = "$(sed -n 's/^set(CPACK_PACKAGE_VERSION "\(.*\)")$/\1/p' "$build/CPackConfig.cmake")-1" ] \
        && pass "version $(dpkg-deb -f "$server_deb" Version)" || fail "version $(dpkg-deb -f "$server_deb" Version)"
    dpkg-deb -c "$server_deb" >"$work/server.list"
    for path in ./usr/bin/realtime-server ./usr/lib/systemd/system/realtime-server.service \
        ./etc/realtime-server/realtime-server.env ./usr/share/man/man8/realtime-server.8.gz; do
        grep -q " $path\$" "$work/server.list" && pass "package contains $path" || fail "package lacks $path"
    done
    grep -q ' ./usr/bin/realtime-dashboard$' "$work/server.list" && fail "server package contains the dashboard"
    dpkg-deb -c "$dashboard_deb" | grep -q ' ./usr/bin/realtime-dashboard$' \
        && pass "dashboard package contains ./usr/bin/realtime-dashboard" || fail "dashboard package lacks its binary"
    dpkg-deb -e "$server_deb" "$work/control"
    expect_line "$work/control/conffiles" "/etc/realtime-server/realtime-server.env"
    for script in postinst prerm postrm; do
        [ -x "$work/control/$script" ] && sh -n "$work/control/$script" && pass "$script" || fail "$script"
    done
    dpkg-deb -x "$server_deb" "$work/extracted"
    expect_line "$work/extracted/usr/lib/systemd/system/realtime-server.service" "ExecStart=/usr/bin/realtime-server"
fi

if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed"
    exit 1
fi
echo "all packaging checks passed"
