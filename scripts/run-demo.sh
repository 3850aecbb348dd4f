#!/usr/bin/env bash
# One command for a newcomer: installs what is needed, builds, and runs a single-node
# realtime-server on port 4000 on the embedded default (SQLite control plane, in-process
# cluster) with the demo tenant "realtime-dev".
#
#   scripts/run-demo.sh            # PORT, API_JWT_SECRET, DATA_DIR may be overridden
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build --target realtime-server

export PORT="${PORT:-4000}"
export API_JWT_SECRET="${API_JWT_SECRET:-super-secret-jwt-token-with-at-least-32-characters-long}"
export SEED_SELF_HOST=true
export SELF_HOST_TENANT_NAME="${SELF_HOST_TENANT_NAME:-realtime-dev}"
export DATA_DIR="${DATA_DIR:-$PWD/build/demo-data}"

# Tokens valid for 30 days (HS256 with API_JWT_SECRET): the demo tenant's anon key, for clients,
# and an operator token (role service_role, one of API_JWT_OPERATOR_ROLES) for the tenant API
# and the dashboard; the anon key is refused there.
b64url() { openssl base64 -A | tr '+/' '-_' | tr -d '='; }
sign_hs256() { # <role>
    local header payload signature
    header=$(printf '{"alg":"HS256","typ":"JWT"}' | b64url)
    payload=$(printf '{"role":"%s","iss":"qtrealtime-demo","exp":%s}' "$1" "$(($(date +%s) + 30 * 24 * 3600))" | b64url)
    signature=$(printf '%s.%s' "$header" "$payload" | openssl dgst -sha256 -hmac "$API_JWT_SECRET" -binary | b64url)
    printf '%s.%s.%s' "$header" "$payload" "$signature"
}
token=$(sign_hs256 anon)
operator_token=$(sign_hs256 service_role)

cat <<TXT

  qtrealtime demo
  ---------------
  WebSocket : ws://localhost:$PORT/socket/websocket   (also /realtime/v1/websocket)
  REST      : http://localhost:$PORT/api/...           (also /realtime/v1/api/...)
  Tenant    : $SELF_HOST_TENANT_NAME (localhost and IP hosts map to it)
  JWT secret: $API_JWT_SECRET
  anon token: $token
  operator  : $operator_token

  Stop with Ctrl-C.

TXT
exec build/bin/realtime-server
