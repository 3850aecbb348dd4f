# shellcheck shell=bash
# Throwaway TLS material for the wss scenarios of bench/run.sh: a CA and one server certificate,
# both ECDSA P-256, made fresh per session in a temp dir and deleted with it. Nothing is
# reused between sessions, so no bench key ever lives in the repository or in results/.
#
# make_bench_certs <dir> writes into <dir> (which must exist):
#   ca.pem                the CA certificate: what the loadgen checks the server against (--ca)
#   server.pem, server.key the server's certificate (SAN DNS:localhost, IP:127.0.0.1) and key,
#                         given to every TLS target alike (ours, nats, ws-phx)
# The CA key is deleted once the server certificate is signed: nothing else is ever signed
# with it. Needs `openssl` (1.1.1 or 3.x). Returns non-zero with a message on failure.

make_bench_certs() {
  local dir="$1"
  command -v openssl >/dev/null || { echo "make_bench_certs: openssl not found" >&2; return 1; }
  # Keys readable by this user only, as a server operator would keep them (README: mode 0600).
  (
    umask 077
    set -e
    # P-256 with the named-curve encoding: the curve the issue asks for, and the one every TLS
    # stack (OpenSSL, Go's crypto/tls in nats-server, Node) signs with in constant time.
    local curve=(-algorithm EC -pkeyopt ec_paramgen_curve:P-256 -pkeyopt ec_param_enc:named_curve)
    openssl genpkey "${curve[@]}" -out "$dir/ca.key" 2>/dev/null
    openssl genpkey "${curve[@]}" -out "$dir/server.key" 2>/dev/null
    # Two days: long enough for any session, short enough that a leaked copy is worthless.
    openssl req -new -x509 -sha256 -days 2 -key "$dir/ca.key" -subj "/O=qtrealtime bench/CN=bench CA" \
      -addext "basicConstraints=critical,CA:TRUE,pathlen:0" \
      -addext "keyUsage=critical,keyCertSign,cRLSign" \
      -out "$dir/ca.pem"
    openssl req -new -sha256 -key "$dir/server.key" -subj "/O=qtrealtime bench/CN=localhost" -out "$dir/server.csr"
    # The extensions go through a file: `x509 -req` does not copy a CSR's extensions on 1.1.1.
    # localhost is what the loadgen sends as SNI and checks (--tls-servername); the IP entry is
    # for a client that checks 127.0.0.1 instead (curl, openssl s_client -verify_ip).
    cat >"$dir/server.ext" <<'EOF'
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, IP:127.0.0.1
EOF
    openssl x509 -req -sha256 -days 2 -in "$dir/server.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" \
      -set_serial "0x$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')" \
      -extfile "$dir/server.ext" -out "$dir/server.pem" 2>/dev/null
    rm -f "$dir/ca.key" "$dir/server.csr" "$dir/server.ext"
    # Fail here, not in the middle of a scenario, if the pair does not verify.
    openssl verify -CAfile "$dir/ca.pem" "$dir/server.pem" >/dev/null
  ) || { echo "make_bench_certs: could not make the bench certificates in $dir" >&2; return 1; }
}
