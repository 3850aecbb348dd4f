# shellcheck shell=bash
# Helpers sourced by every benchmark driver (bench/run.sh, bench/cluster/run.sh,
# bench/pgchanges/run.sh, bench/regex/run.sh), so that they all stop servers, pick priorities
# and wait for a quiet machine the same way. Needs LOG_TAG (the prefix of log lines), and NICE,
# QUIET_WAIT or OUT where a function uses them.

# The usage text is the script's header comment (from line 2 to the first line without '#').
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }

log() { printf '[%s %s] %s\n' "$LOG_TAG" "$(date -u +%H:%M:%S)" "$*" >&2; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# File descriptors: a loadgen holds one socket per subscriber, and so does the server. 65536
# where allowed, else the hard limit (20000 in this sandbox).
raise_fd_limit() { ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"; }

# random_hex <bytes>: that many random bytes as hex, for per-session secrets.
random_hex() { head -c "$1" /dev/urandom | od -An -tx1 | tr -d ' \n'; }

# stop_pid <pid> <tenths>: stop a server by PID: TERM, up to <tenths> x 0.1 s to exit, then KILL;
# reaped either way. By PID only, never by name: other engineers' servers run on this machine.
stop_pid() {
  kill -TERM "$1" 2>/dev/null || true
  for _ in $(seq 1 "$2"); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}

# boost <pid> [--quiet]: give the session of <pid> (a session leader, started with setsid) the
# NICE autogroup priority. setsid does not fork here (a background job of a script is not a
# process-group leader), so $! is the server itself; by the time its port is open, the exec
# chain setsid -> nice -> taskset -> server is complete. --quiet: no warning if it is not a
# session leader.
boost() {
  local sid
  sid=$(awk '{ sub(/^.*\) /, ""); print $4 }' "/proc/$1/stat" 2>/dev/null || echo 0)
  if [[ "$sid" == "$1" ]]; then
    echo "$NICE" >"/proc/$1/autogroup" 2>/dev/null || log "could not raise the priority of $1"
  elif [[ "${2:-}" != --quiet ]]; then
    log "warning: server $1 is not a session leader; its priority is not raised"
  fi
}

# Wait (up to QUIET_WAIT s) until the machine is quiet: other engineers' builds on the same
# 2 cores distort a run. Prints the busy % seen last (it is also recorded with the run).
wait_quiet() {
  local busy=100 tries=0 a b
  while :; do
    a=$(awk '/^cpu /{print $2+$3+$4+$7+$8, $5+$6}' /proc/stat)
    sleep 1
    b=$(awk '/^cpu /{print $2+$3+$4+$7+$8, $5+$6}' /proc/stat)
    busy=$(awk -v a="$a" -v b="$b" 'BEGIN{split(a,x," ");split(b,y," ");t=(y[1]-x[1])+(y[2]-x[2]);print (t>0)?int(100*(y[1]-x[1])/t):0}')
    if [[ $busy -le 15 ]] || [[ $tries -ge $((QUIET_WAIT - 1)) ]]; then break; fi
    [[ $tries -eq 0 ]] && log "machine busy (${busy}% of 2 cores used by others); waiting up to ${QUIET_WAIT} s"
    tries=$((tries + 1))
  done
  echo "$busy"
}

# append_error <meta json> <message>: the run's meta object plus "error" as a line of $OUT.
append_error() {
  node -e 'console.log(JSON.stringify({...JSON.parse(process.argv[1]), error: process.argv[2]}))' "$1" "$2" >>"$OUT"
}
