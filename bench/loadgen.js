#!/usr/bin/env node
'use strict';
// Fan-out load generator: N subscribers + 1 publisher in ONE process (one clock for latency).
//
// Design (shared/design/performance.md §4.1 and §6.3):
//   * Raw TCP WebSocket client with hand-written framing: HTTP upgrade, client frames masked with
//     the all-zero key (so the payload bytes stay as they are), a streaming frame parser fed by one
//     shared read buffer (net `onread`), no per-chunk allocation (lib/ws-client.js). The `ws`
//     client tops out near 170k frames/s on this machine and would cap the results.
//   * Per delivered frame the work is a header parse plus a byte search for `"t":`, the publish
//     timestamp (performance.now() ms) written by the publisher; no JSON.parse on the hot path.
//   * Adapters: `phx` (Phoenix v1 objects or v2 arrays, as realtime-js sends them) and `nats`
//     (NATS text protocol over WS text frames, streaming MSG parser).
//   * Phases: connect storm (N subscribers, --conc handshakes+joins in flight) -> idle --idle s
//     (idle RSS) -> publisher connects -> warm-up -> measurement window -> drain.
//   * Modes: `window` = closed loop, at most W publishes in flight, where in flight =
//     published - delivered/N (saturation throughput); `rate` = open loop, R publishes/s;
//     `storm` = the connect storm and the idle RSS only (no publisher): connect + JWT verify +
//     join rates and latencies, with the core usage of the storm itself.
//   * Server probes from /proc/<pid>: stat (utime+stime), status (VmRSS), io (syscw).
//   * --tls: wss instead of ws (node:tls, the server verified against --ca, SNI
//     --tls-servername), the same framing and measurements; every connection makes a full
//     handshake (no session resumption), and the storm adds TLS handshakes/s and latency.
//   * Two servers (--port-b, --subs-b; bench/cluster/): the publisher and N - subs-b subscribers
//     on --port (node A), subs-b subscribers on --port-b (node B, interleaved in the storm), and
//     one latency histogram per group besides the overall one, so the hop A -> B shows as the
//     difference of the two groups, measured on one clock.
//
// Output: ONE JSON line on stdout (metrics of performance.md §6.3); progress on stderr.
// Bounded: a hard self-exit timer (--hard-timeout, at most 60 s) prints an error line and exits 3.
// Needs file descriptors: N + a few. Run under `ulimit -n 65536` (run.sh sets it).
//
// Example:
//   node loadgen.js --adapter phx --port 4001 --jwt-secret s3cret --subs 1000 --mode window \
//        --window 64 --duration 10 --warmup 3 --server-pid 1234

const fs = require('node:fs');
const crypto = require('node:crypto');
const tls = require('node:tls');
const { spawn } = require('node:child_process');
const { performance } = require('node:perf_hooks');
const { benchToken } = require('./lib/jwt');
const { parseOptions, optionsOrExit } = require('./lib/options');
const { sleep, round, makeLog, armHardTimeout } = require('./lib/harness');
const { CLK_TCK, procCpuSec, procRssKB, selfCpuSec, setAutogroupNice } = require('./lib/proc');
const { WsConn, clientFrame } = require('./lib/ws-client');

// ---- options ---------------------------------------------------------------------------------

const DEFAULTS = {
  adapter: 'phx', // phx | nats
  port: 4000,
  path: '', // default: /socket/websocket (phx) or / (nats)
  vsn: '1.0.0', // phx serializer: 1.0.0 (objects) | 2.0.0 (arrays, text frames)
  topic: 'realtime:bench', // phx topic; nats uses the subject "bench"
  subs: 1000,
  conc: 100,
  mode: 'window', // window | rate | storm
  window: 64,
  rate: 50,
  duration: 10,
  warmup: 3,
  drain: 3, // drain: stop after this many seconds without a delivery (or when all arrived)
  idle: 1, // seconds to wait after the storm before sampling idle RSS
  payload: 100, // approx. bytes of the inner JSON payload {"seq":..,"t":..,"pad":".."}
  token: '', // phx apikey / access_token; or give --jwt-secret to sign one here
  'jwt-secret': '',
  'server-pid': 0,
  'storm-timeout': 30,
  'hard-timeout': 60,
  'src-addrs': 1, // spread client sockets over 127.0.0.1..127.0.0.k (needed beyond ~28k sockets)
  heartbeat: 25, // phx heartbeat interval, seconds (realtime-js default)
  meta: '{}', // JSON object merged into the output line (run.sh: target/scenario/rep)
  'autogroup-nice': 0, // if this process leads its own session: nice of its scheduler autogroup
  'count-syscalls': 'auto', // auto: count the server's write/send syscalls with `perf stat`; off
  'port-b': 0, // second server (a cluster peer): subs-b of the subscribers connect here; 0 = off
  'subs-b': 0, // how many of --subs connect to --port-b (spread evenly over the storm)
  'server-pid-b': 0, // PID of the server on --port-b (its CPU and RSS are reported as serverB)
  tls: false, // wss: TLS under the WebSocket (a flag: --tls)
  ca: '', // PEM file of the CA the server's certificate must chain to (default: the system's)
  // SNI and the name the certificate is checked against. Not the Host header's 127.0.0.1:
  // RFC 6066 allows no IP address in SNI (node:tls refuses one), and our server maps an
  // IP-literal Host to the bench tenant, so the Host header stays as it is over ws.
  'tls-servername': 'localhost',
  'tls-ciphers': '', // OpenSSL cipher list offered (TLS 1.3 suites too); empty: Node's default
};

function usage() {
  const lines = Object.entries(DEFAULTS).map(([k, v]) => `  --${k.padEnd(14)} ${JSON.stringify(v)}`);
  process.stdout.write(`usage: node loadgen.js [--option value ...]\noptions and defaults:\n${lines.join('\n')}\n`);
  process.exit(0);
}

function parseArgs(argv) {
  const o = parseOptions(argv, DEFAULTS, usage);
  if (!['phx', 'nats'].includes(o.adapter)) throw new Error('--adapter must be phx or nats');
  if (!['window', 'rate', 'storm'].includes(o.mode)) throw new Error('--mode must be window, rate or storm');
  if (!['1.0.0', '2.0.0'].includes(o.vsn)) throw new Error('--vsn must be 1.0.0 or 2.0.0');
  o['hard-timeout'] = Math.min(60, Math.max(5, o['hard-timeout']));
  if (!o.path) o.path = o.adapter === 'phx' ? '/socket/websocket' : '/';
  if (o.adapter === 'phx' && !o.token) o.token = o['jwt-secret'] ? benchToken(o['jwt-secret']) : 'bench';
  o.meta = JSON.parse(o.meta);
  if (o['subs-b'] < 0 || o['subs-b'] > o.subs) throw new Error('--subs-b must be between 0 and --subs');
  if (o['subs-b'] > 0 && !o['port-b']) throw new Error('--subs-b needs --port-b');
  if (!o.tls && (o.ca || o['tls-ciphers'])) throw new Error('--ca and --tls-ciphers need --tls');
  return o;
}

const OPT = optionsOrExit('loadgen', parseArgs);

const log = makeLog('loadgen');

// tls.connect options of every connection with --tls (null: plain ws). ALPN offers http/1.1
// only, as browsers do for a WebSocket. One SecureContext (CA store, cipher list) for all
// connections: given `ca` or `ciphers` instead, tls.connect builds a context per connection,
// which cost the loadgen's core 0.5 ms of its 2 ms per handshake here (OpenSSL 3.0) and made
// the storm measure the client. A shared context resumes no session: only a `session` given to
// tls.connect does (TLS_SEEN.resumed checks it).
const TLS_OPTS = OPT.tls
  ? {
      secureContext: tls.createSecureContext({
        ca: OPT.ca ? fs.readFileSync(OPT.ca) : undefined,
        ciphers: OPT['tls-ciphers'] || undefined,
      }),
      servername: OPT['tls-servername'],
      ALPNProtocols: ['http/1.1'],
    }
  : null;
// What the handshakes negotiated (from the first one) and how many resumed a session: with
// no session offered that must stay 0, the proof that every handshake was a full one.
const TLS_SEEN = { protocol: null, cipher: null, group: null, alpn: null, resumed: 0, handshakes: 0 };

// ---- shared measurement state ----------------------------------------------------------------

const HIST_BUCKET_MS = 0.01; // 10 µs buckets
const HIST_MAX_MS = 60000; // everything above lands in the last bucket (max is kept exactly)
const hist = new Uint32Array(Math.ceil(HIST_MAX_MS / HIST_BUCKET_MS) + 1);
// Two-server runs: one more histogram per group (subscribers on --port and on --port-b).
const TWO = OPT['subs-b'] > 0;
const histA = TWO ? new Uint32Array(hist.length) : null;
const histB = TWO ? new Uint32Array(hist.length) : null;
const G = { A: { count: 0, max: 0, delivered: 0 }, B: { count: 0, max: 0, delivered: 0 } };

const S = {
  delivered: 0, // broadcast frames received by subscribers (all phases)
  published: 0,
  recording: false, // latency histogram on (measurement window only)
  histCount: 0,
  latMax: 0,
  unexpected: 0, // control frames we did not ask for (phx_error, phx_close, system, -ERR, ...)
  unexpectedSamples: [],
  disconnects: 0, // sockets closed by the server after they were ready
  hbReplies: 0,
  subsReady: 0,
  connectFailures: 0,
  failureSamples: [],
};

function recordLatency(ms) {
  if (ms > S.latMax) S.latMax = ms;
  let b = Math.floor(ms / HIST_BUCKET_MS);
  if (b < 0) b = 0;
  else if (b >= hist.length) b = hist.length - 1;
  hist[b]++;
  S.histCount++;
}

/** Latency of a delivery to a subscriber of group A or B (two-server runs), besides the total. */
function recordGroupLatency(ms, b) {
  const g = b ? G.B : G.A;
  if (ms > g.max) g.max = ms;
  let k = Math.floor(ms / HIST_BUCKET_MS);
  if (k < 0) k = 0;
  else if (k >= hist.length) k = hist.length - 1;
  (b ? histB : histA)[k]++;
  g.count++;
}

function percentile(q, h = hist, count = S.histCount, max = S.latMax) {
  if (count === 0) return null;
  const target = Math.ceil(q * count);
  let acc = 0;
  for (let i = 0; i < h.length; i++) {
    acc += h[i];
    if (acc >= target) return round((i + 1) * HIST_BUCKET_MS, 3); // upper edge of the bucket
  }
  return round(max, 3);
}

function noteUnexpected(what) {
  S.unexpected++;
  if (S.unexpectedSamples.length < 5) S.unexpectedSamples.push(String(what).slice(0, 300));
}

function noteFailure(what) {
  S.connectFailures++;
  if (S.failureSamples.length < 5) S.failureSamples.push(String(what).slice(0, 300));
}

/** Parse the decimal number that starts at buf[i] (digits, optional '.', digits, optional '-'). */
function parseNumberAt(buf, i) {
  let neg = false;
  if (buf[i] === 0x2d) {
    neg = true;
    i++;
  }
  let v = 0;
  let c = buf[i];
  while (c >= 0x30 && c <= 0x39) {
    v = v * 10 + (c - 0x30);
    c = buf[++i];
  }
  if (c === 0x2e) {
    let scale = 0.1;
    c = buf[++i];
    while (c >= 0x30 && c <= 0x39) {
      v += (c - 0x30) * scale;
      scale *= 0.1;
      c = buf[++i];
    }
  }
  return neg ? -v : v;
}

const T_NEEDLE = Buffer.from('"t":');

/** One delivered bench message: frame bytes buf[start, end) contain `"t":<publish ms>`. */
function delivery(buf, start, end, now) {
  S.delivered++;
  if (!S.recording) return;
  const i = buf.indexOf(T_NEEDLE, start);
  if (i !== -1 && i < end) recordLatency(now - parseNumberAt(buf, i + 4));
}

// ---- raw WebSocket client (../lib/ws-client.js) ------------------------------------------------

// Sec-WebSocket-Key nonces, cut from one random block refilled every 1,024 connections (one
// randomBytes call per connection was 4% of the loadgen's CPU in the connect storm).
let keyPool = null;
let keyPoolPos = 0;
function wsKey() {
  if (keyPool === null || keyPoolPos === keyPool.length) {
    keyPool = crypto.randomBytes(16 * 1024);
    keyPoolPos = 0;
  }
  keyPoolPos += 16;
  return keyPool.toString('base64', keyPoolPos - 16, keyPoolPos);
}

let srcIndex = 0;
let subIndex = 0; // subscribers started so far (two-server runs: which go to --port-b)

// ---- protocol adapters -----------------------------------------------------------------------

/** Shared life cycle: ready/failed callbacks for the storm, timing of connect and join. */
class BaseClient {
  constructor(role, hooks) {
    this.role = role; // 'sub' | 'pub'
    this.hooks = hooks; // { onReady(client), onFail(client, reason) }
    this.ready = false;
    this.tStart = performance.now();
    this.tOpen = 0;
    this.tSecure = 0; // --tls: TLS handshake done (secureConnect)
    this.tJoinSent = 0;
    this.tReady = 0;
    this.conn = null;
    // Two-server runs: subscriber k goes to --port-b when the running share of B steps up, so
    // the B subscribers are spread evenly over the storm. The publisher stays on --port.
    this.onB = false;
    if (TWO && role === 'sub') {
      const k = subIndex++;
      this.onB = Math.floor(((k + 1) * OPT['subs-b']) / OPT.subs) > Math.floor((k * OPT['subs-b']) / OPT.subs);
    }
  }

  start() {
    const k = OPT['src-addrs'] > 1 ? (srcIndex++ % OPT['src-addrs']) + 1 : 1;
    const port = this.onB ? OPT['port-b'] : OPT.port;
    this.conn = new WsConn(this, {
      port,
      url: this.url,
      host: `127.0.0.1:${port}`,
      key: wsKey(),
      localAddress: k > 1 ? `127.0.0.${k}` : undefined,
      clock: () => performance.now(), // the clock of the publish timestamps
      tls: TLS_OPTS,
    });
  }

  onSecure(conn) {
    this.tSecure = performance.now();
    const sock = conn.sock;
    TLS_SEEN.handshakes++;
    if (sock.isSessionReused()) TLS_SEEN.resumed++;
    if (TLS_SEEN.protocol === null) {
      const key = sock.getEphemeralKeyInfo();
      TLS_SEEN.protocol = sock.getProtocol();
      TLS_SEEN.cipher = sock.getCipher().standardName;
      TLS_SEEN.group = key && key.name ? key.name : null;
      TLS_SEEN.alpn = sock.alpnProtocol || null;
    }
  }

  markReady() {
    if (this.ready) return;
    this.ready = true;
    this.tReady = performance.now();
    this.hooks.onReady(this);
  }

  onClose(reason) {
    if (this.ready) {
      S.disconnects++;
      noteUnexpected(`${this.role} disconnected: ${reason}`);
    } else this.hooks.onFail(this, reason);
  }
}

/** The phx_join frame, identical for every client (built by the first one; never mutated). */
let JOIN_FRAME = null;

/** Phoenix channel client (realtime-js wire format, vsn 1.0.0 objects or 2.0.0 arrays). */
class PhxClient extends BaseClient {
  constructor(role, hooks) {
    super(role, hooks);
    this.url = `${OPT.path}?apikey=${encodeURIComponent(OPT.token)}&vsn=${OPT.vsn}`;
    this.refCounter = 0;
    this.joinRef = null;
  }

  nextRef() {
    return String(++this.refCounter);
  }

  encode(joinRef, ref, topic, event, payload) {
    if (OPT.vsn === '2.0.0') return JSON.stringify([joinRef, ref, topic, event, payload]);
    const m = { topic, event, payload, ref };
    if (joinRef !== null) m.join_ref = joinRef; // realtime-js omits join_ref when undefined
    return JSON.stringify(m);
  }

  onOpen() {
    this.tOpen = performance.now();
    this.joinRef = this.nextRef();
    // Every client's join is the same frame (ref "1", the same token): encoded once.
    if (JOIN_FRAME === null) {
      const payload = {
        config: {
          broadcast: { self: false, ack: false },
          presence: { key: '', enabled: false },
          postgres_changes: [],
          private: false,
        },
        access_token: OPT.token,
      };
      JOIN_FRAME = clientFrame(0x1, this.encode(this.joinRef, this.joinRef, OPT.topic, 'phx_join', payload));
    }
    this.tJoinSent = performance.now();
    this.conn.sendFrame(JOIN_FRAME);
  }

  heartbeat() {
    this.hbRef = this.nextRef();
    this.conn.send(this.encode(null, this.hbRef, 'phoenix', 'heartbeat', {}));
  }

  onMessage(buf, start, end, now) {
    if (this.ready) {
      // Hot path: a bench broadcast is the only frame that carries `"t":`.
      const i = buf.indexOf(T_NEEDLE, start);
      if (i !== -1 && i < end) {
        S.delivered++;
        if (TWO) (this.onB ? G.B : G.A).delivered++;
        if (S.recording) {
          const ms = now - parseNumberAt(buf, i + 4);
          recordLatency(ms);
          if (TWO) recordGroupLatency(ms, this.onB);
        }
        return;
      }
    }
    this.onControl(buf.toString('utf8', start, end));
  }

  onControl(text) {
    let m;
    try {
      m = JSON.parse(text);
    } catch {
      return noteUnexpected(`unparsable frame: ${text}`);
    }
    if (Array.isArray(m)) m = { join_ref: m[0], ref: m[1], topic: m[2], event: m[3], payload: m[4] };
    else if (OPT.vsn === '2.0.0') return noteUnexpected(`object frame on vsn 2.0.0: ${text}`);
    if (m.event === 'phx_reply' && m.topic === 'phoenix' && m.ref === this.hbRef) {
      S.hbReplies++;
      return;
    }
    if (!this.ready && m.event === 'phx_reply' && m.topic === OPT.topic && m.ref === this.joinRef) {
      if (m.payload && m.payload.status === 'ok') return this.markReady();
      this.conn.close(`join refused: ${text}`);
      return;
    }
    noteUnexpected(`${this.role}: ${text}`);
  }

  publish(seq, body) {
    this.conn.send(
      this.encode(this.joinRef, this.nextRef(), OPT.topic, 'broadcast', {
        type: 'broadcast',
        event: 'bench',
        payload: body,
      }),
    );
  }
}

/** NATS client over the WebSocket listener: text protocol, streaming parser. */
class NatsClient extends BaseClient {
  constructor(role, hooks) {
    super(role, hooks);
    this.url = OPT.path;
    this.rest = null; // partial protocol bytes from an earlier WS frame (copied)
  }

  onOpen() {
    this.tOpen = performance.now();
    this.tJoinSent = performance.now();
    const connect = JSON.stringify({ verbose: false, pedantic: false, protocol: 1, headers: false, name: 'bench' });
    const sub = this.role === 'sub' ? 'SUB bench 1\r\n' : '';
    this.conn.send(`CONNECT ${connect}\r\n${sub}PING\r\n`); // the PONG means "subscribed"
  }

  heartbeat() {} // the NATS server PINGs us; we answer (see below)

  onMessage(frame, fstart, fend, now) {
    let buf = frame;
    let p = fstart;
    let end = fend;
    if (this.rest) {
      buf = Buffer.concat([this.rest, frame.subarray(fstart, fend)]);
      this.rest = null;
      p = 0;
      end = buf.length;
    }
    while (p < end) {
      const nl = buf.indexOf(0x0a, p); // header lines end with \r\n
      if (nl === -1 || nl >= end) break;
      const c = buf[p];
      if (c === 0x4d /* M */) {
        // MSG <subject> <sid> [reply-to] <#bytes>\r\n<payload>\r\n
        let q = nl - 2;
        let size = 0;
        let mul = 1;
        while (buf[q] >= 0x30 && buf[q] <= 0x39) {
          size += (buf[q] - 0x30) * mul;
          mul *= 10;
          q--;
        }
        const bodyStart = nl + 1;
        const bodyEnd = bodyStart + size;
        if (bodyEnd + 2 > end) break; // payload not complete yet
        delivery(buf, bodyStart, bodyEnd, now);
        p = bodyEnd + 2;
        continue;
      }
      const line = buf.toString('latin1', p, nl - 1);
      p = nl + 1;
      if (line === 'PING') this.conn.send('PONG\r\n');
      else if (line === 'PONG') {
        if (!this.ready) this.markReady();
      } else if (line.startsWith('INFO') || line === '+OK') {
        // INFO on connect; +OK only with verbose
      } else noteUnexpected(`${this.role}: ${line}`);
    }
    if (p < end) this.rest = Buffer.from(buf.subarray(p, end));
  }

  publish(seq, body) {
    const data = JSON.stringify(body);
    this.conn.send(`PUB bench ${Buffer.byteLength(data)}\r\n${data}\r\n`);
  }
}

const Client = OPT.adapter === 'phx' ? PhxClient : NatsClient;

// ---- /proc probes ------------------------------------------------------------------------------

const PID = OPT['server-pid'];
const PID_B = OPT['server-pid-b'];
function procSyscw(pid) {
  if (!pid) return null;
  try {
    const m = /syscw:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/io`, 'latin1'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/**
 * Per-core jiffies from /proc/stat: { busy, softirq } per cpuN. The server runs alone on core 0;
 * loopback receive work done in softirq context is not charged to any process, so the core's
 * busy time is the more complete "cost of serving" figure.
 */
function coreTimes() {
  try {
    const out = {};
    for (const line of fs.readFileSync('/proc/stat', 'latin1').split('\n')) {
      const m = /^cpu(\d+) (.*)$/.exec(line);
      if (!m) continue;
      const [user, nice, system, idle, iowait, irq, softirq, steal] = m[2].trim().split(/\s+/).map(Number);
      out[m[1]] = { userSys: (user + nice + system) / CLK_TCK, irq: (irq + softirq) / CLK_TCK, idle: (idle + iowait) / CLK_TCK, steal: steal / CLK_TCK };
    }
    return out;
  } catch {
    return null;
  }
}

/**
 * Seconds the process's threads spent runnable but waiting for a CPU (sum of field 2 of
 * /proc/<pid>/task/<tid>/schedstat). Time a server or the loadgen lost to other processes
 * (builds, fuzzers) on its core: the direct measure of a disturbed run.
 */
function runqWaitSec(pid) {
  if (!pid) return null;
  try {
    let ns = 0;
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'latin1').split(' ')[1]);
      } catch {
        /* thread exited meanwhile */
      }
    }
    return ns / 1e9;
  } catch {
    return null;
  }
}

/**
 * Count the server's write-family syscalls for `sec` seconds with `perf stat` on the syscall
 * tracepoints. /proc/<pid>/io syscw only counts write/writev; a server that uses send/sendmsg
 * would look like it never writes. Resolves to { write, writev, sendto, sendmsg, sendmmsg } or
 * null (no perf, not permitted, or --count-syscalls off).
 */
const WRITE_SYSCALLS = ['write', 'writev', 'sendto', 'sendmsg', 'sendmmsg'];
function countWriteSyscalls(pid, sec) {
  if (!pid || OPT['count-syscalls'] === 'off') return Promise.resolve(null);
  return new Promise((resolve) => {
    const events = WRITE_SYSCALLS.map((n) => `syscalls:sys_enter_${n}`).join(',');
    let err = '';
    let child;
    try {
      child = spawn('perf', ['stat', '-x,', '-e', events, '-p', String(pid), '--', 'sleep', String(sec)], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
    } catch {
      resolve(null);
      return;
    }
    child.on('error', () => resolve(null)); // perf not installed
    child.stderr.on('data', (d) => (err += d));
    child.on('close', () => {
      const counts = {};
      for (const line of err.split('\n')) {
        const f = line.split(',');
        const m = /^syscalls:sys_enter_(\w+)$/.exec(f[2] || '');
        if (m && /^\d+$/.test(f[0])) counts[m[1]] = Number(f[0]);
      }
      resolve(Object.keys(counts).length === WRITE_SYSCALLS.length ? counts : null);
    });
  });
}

function snapshot() {
  return {
    t: performance.now(),
    delivered: S.delivered,
    published: S.published,
    srvCpu: procCpuSec(PID),
    srvCpuB: procCpuSec(PID_B),
    deliveredA: G.A.delivered,
    deliveredB: G.B.delivered,
    syscw: procSyscw(PID),
    selfCpu: selfCpuSec(),
    cores: coreTimes(),
    srvWait: runqWaitSec(PID),
    selfWait: runqWaitSec(process.pid),
  };
}

/** Core usage between two snapshots, in % of the wall time, plus CPU used by other processes. */
/** The single CPU a process is pinned to (Cpus_allowed_list), or null if it may run on several. */
function pinnedCore(pid) {
  try {
    const m = /Cpus_allowed_list:\s*(\S+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'latin1'));
    return m && /^\d+$/.test(m[1]) ? m[1] : null;
  } catch {
    return null;
  }
}
const SERVER_CORE = PID ? pinnedCore(PID) : null;
const SELF_CORE = pinnedCore(process.pid);

/**
 * Core usage between two snapshots in % of the wall time, and the CPU other processes took on
 * the server's and the loadgen's cores (user+system time of the core minus our process's).
 * Combined with the run-queue wait (which also counts our own threads queuing behind each
 * other), that tells whether other work (builds, fuzzers) disturbed the run.
 */
function coreUsage(a, b, sec, dSrvCpu) {
  if (!a.cores || !b.cores) return {};
  const cores = {};
  let userSys = 0;
  const d = (id, k) => b.cores[id][k] - a.cores[id][k];
  for (const id of Object.keys(b.cores)) {
    userSys += d(id, 'userSys');
    cores[`cpu${id}`] = {
      busyPct: round((100 * (d(id, 'userSys') + d(id, 'irq'))) / sec, 0),
      irqPct: round((100 * d(id, 'irq')) / sec, 0),
      stealPct: round((100 * d(id, 'steal')) / sec, 0),
    };
  }
  const selfCpu = b.selfCpu - a.selfCpu;
  const others = (id, own) =>
    id !== null && b.cores[id] ? round(Math.max(0, (100 * (d(id, 'userSys') - own)) / sec), 1) : null;
  // user+system time of everything that is neither the server nor this process.
  const other = userSys - (dSrvCpu ?? 0) - selfCpu;
  return {
    cores,
    otherProcsCpuPct: round(Math.max(0, (100 * other) / sec), 0),
    othersOnServerCorePct: SERVER_CORE !== SELF_CORE ? others(SERVER_CORE, dSrvCpu ?? 0) : null,
    othersOnLoadgenCorePct: SERVER_CORE !== SELF_CORE ? others(SELF_CORE, selfCpu) : null,
  };
}

// ---- phases ------------------------------------------------------------------------------------

/** Connect N clients with at most `conc` handshakes+joins in flight. Resolves with the ready ones. */
function connectStorm(n, conc, role) {
  return new Promise((resolve) => {
    const ready = [];
    let started = 0;
    let settled = 0;
    let done = false;
    const timer = setTimeout(() => finish('storm timeout'), OPT['storm-timeout'] * 1000);
    const finish = (why) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (why) noteFailure(`${why}: ${n - settled} clients not ready`);
      resolve(ready);
    };
    const next = () => {
      if (started < n) {
        started++;
        new Client(role, hooks).start();
      }
    };
    const hooks = {
      onReady(c) {
        ready.push(c);
        settled++;
        if (role === 'sub') S.subsReady++;
        if (settled === n) finish(null);
        else next();
      },
      onFail(c, reason) {
        noteFailure(reason);
        settled++;
        if (settled === n) finish(null);
        else next();
      },
    };
    for (let i = 0; i < Math.min(conc, n); i++) next();
  });
}

/** Inner bench payload, padded so that its JSON is about --payload bytes. */
function makeBody(seq) {
  return { seq, t: Number(performance.now().toFixed(3)), pad: PAD };
}
const PAD = 'x'.repeat(Math.max(0, OPT.payload - JSON.stringify({ seq: 100000, t: 12345.678, pad: '' }).length));

function quantiles(values) {
  if (values.length === 0) return { p50: null, p90: null, p99: null, max: null };
  const v = Float64Array.from(values).sort();
  const q = (x) => round(v[Math.min(v.length - 1, Math.ceil(x * v.length) - 1)], 2);
  return { p50: q(0.5), p90: q(0.9), p99: q(0.99), max: round(v[v.length - 1], 2) };
}

/**
 * TcpExt counters of this network namespace that explain slow connects: accept-queue overflows
 * and drops (the listener's backlog was full; the client's SYN or ACK is retried after ~1 s) and
 * SYN retransmissions. Namespace-wide: other processes' connects count too. null if unreadable.
 */
const TCP_EXT = ['ListenOverflows', 'ListenDrops', 'TCPSynRetrans', 'TCPReqQFullDrop', 'TCPReqQFullDoCookies'];
function tcpExt() {
  try {
    const lines = fs.readFileSync('/proc/net/netstat', 'latin1').split('\n');
    for (let i = 0; i + 1 < lines.length; i++) {
      if (!lines[i].startsWith('TcpExt:') || !lines[i + 1].startsWith('TcpExt:')) continue;
      const names = lines[i].split(/\s+/);
      const vals = lines[i + 1].split(/\s+/);
      const out = {};
      for (const n of TCP_EXT) {
        const k = names.indexOf(n);
        out[n] = k > 0 ? Number(vals[k]) : null;
      }
      return out;
    }
  } catch {
    /* not Linux or no procfs */
  }
  return null;
}

/**
 * --tls storm figures: handshakes/s = N / (first connect() -> last TLS handshake done), and
 * the handshake latency connect() -> secureConnect (TCP + TLS; the upgrade and the join come
 * after it and are in connectLatencyMs / joinLatencyMs as over ws).
 */
function tlsStorm(subs, t0) {
  let lastSecure = 0;
  for (const c of subs) if (c.tSecure > lastSecure) lastSecure = c.tSecure;
  return {
    tlsHandshakesPerSec: round(subs.length / ((lastSecure - t0) / 1000), 0),
    tlsHandshakeLatencyMs: quantiles(subs.map((c) => c.tSecure - c.tStart)),
  };
}

const T0 = performance.now();

async function main() {
  setAutogroupNice(OPT['autogroup-nice']);
  armHardTimeout(OPT['hard-timeout'], () => emit({ error: `hard timeout after ${OPT['hard-timeout']} s`, partial: true }));

  const rssBefore = procRssKB(PID);
  if (PID && rssBefore === null) throw new Error(`no /proc entry for --server-pid ${PID}`);
  const rssBeforeB = procRssKB(PID_B);
  if (PID_B && rssBeforeB === null) throw new Error(`no /proc entry for --server-pid-b ${PID_B}`);

  // 1. Connect storm.
  log(
    `${OPT.adapter}: connecting ${OPT.subs} subscribers to 127.0.0.1:${OPT.port}` +
      (TWO ? ` (${OPT['subs-b']} of them to 127.0.0.1:${OPT['port-b']})` : '') +
      ` (conc ${OPT.conc})`,
  );
  const tcp0 = tcpExt();
  const storm0 = snapshot();
  const cpu0 = process.cpuUsage();
  const subs = await connectStorm(OPT.subs, OPT.conc, 'sub');
  const cpu1 = process.cpuUsage(cpu0);
  const storm1 = snapshot();
  const tcp1 = tcpExt();
  if (subs.length === 0) throw new Error(`no subscriber became ready (${S.failureSamples.join(' | ')})`);
  let lastOpen = 0;
  let lastReady = 0;
  for (const c of subs) {
    if (c.tOpen > lastOpen) lastOpen = c.tOpen;
    if (c.tReady > lastReady) lastReady = c.tReady;
  }
  const stormSec = (storm1.t - storm0.t) / 1000;
  const dSrvCpuStorm = storm0.srvCpu === null || storm1.srvCpu === null ? null : storm1.srvCpu - storm0.srvCpu;
  const loadgenCpuPctStorm = round((100 * (storm1.selfCpu - storm0.selfCpu)) / stormSec, 0);
  const stormUsage = coreUsage(storm0, storm1, stormSec, dSrvCpuStorm);
  const waitPct = (a, b) => (a === null || b === null ? null : round((100 * (b - a)) / stormSec, 1));
  const storm = {
    stormSec: round(stormSec, 3),
    // Rates over the whole storm: N / (time from the first connect() to the last upgrade or
    // join reply). With --conc bounding handshakes + joins together, they are nearly equal.
    connectsPerSec: round(subs.length / ((lastOpen - storm0.t) / 1000), 0),
    joinsPerSec: round(subs.length / ((lastReady - storm0.t) / 1000), 0),
    // connect: connect() called -> `101 Switching Protocols` parsed (TCP handshake, HTTP upgrade,
    // the server's JWT check of the apikey); join: phx_join written -> phx_reply ok parsed.
    connectLatencyMs: quantiles(subs.map((c) => c.tOpen - c.tStart)),
    joinLatencyMs: quantiles(subs.map((c) => c.tReady - c.tJoinSent)),
    ...(OPT.tls ? tlsStorm(subs, storm0.t) : {}),
    serverCpuUsPerJoin: dSrvCpuStorm === null ? null : round((dSrvCpuStorm * 1e6) / subs.length, 1),
    serverCpuPctStorm: dSrvCpuStorm === null ? null : round((100 * dSrvCpuStorm) / stormSec, 0),
    loadgenCpuPctStorm,
    // user (JavaScript, libuv) vs system (syscalls, loopback TCP) share of the loadgen's CPU
    loadgenUserPctStorm: round(cpu1.user / 1e4 / stormSec, 0),
    loadgenSysPctStorm: round(cpu1.system / 1e4 / stormSec, 0),
    clientLimitedStorm: loadgenCpuPctStorm >= 90,
    stormCores: stormUsage.cores,
    serverRunqWaitPctStorm: waitPct(storm0.srvWait, storm1.srvWait),
    loadgenRunqWaitPctStorm: waitPct(storm0.selfWait, storm1.selfWait),
    stormTcpExt:
      tcp0 && tcp1 ? Object.fromEntries(TCP_EXT.map((n) => [n, tcp1[n] === null ? null : tcp1[n] - tcp0[n]])) : null,
  };
  log(`${subs.length}/${OPT.subs} ready in ${stormSec.toFixed(2)} s; ${S.connectFailures} failures`);

  // 2. Idle footprint.
  await sleep(OPT.idle * 1000);
  const rssIdle = procRssKB(PID);
  const rssIdleB = procRssKB(PID_B);
  const serverBytesPerIdleConn =
    rssBefore === null || rssIdle === null ? null : round(((rssIdle - rssBefore) * 1024) / subs.length, 0);

  if (OPT.mode === 'storm') {
    // Storm only: the storm's own core usage stands in for the measurement window's, so the
    // contention flags (summarize.js) apply to it.
    emit({
      subsReady: subs.length,
      ...storm,
      serverBytesPerIdleConn,
      serverRssKB: { beforeConnect: rssBefore, idle: rssIdle },
      idleSec: OPT.idle,
      loadgenCpuPct: loadgenCpuPctStorm,
      clientLimited: loadgenCpuPctStorm >= 90,
      serverCpuPct: storm.serverCpuPctStorm,
      ...stormUsage,
      serverRunqWaitPct: storm.serverRunqWaitPctStorm,
      loadgenRunqWaitPct: storm.loadgenRunqWaitPctStorm,
      contended:
        ((stormUsage.othersOnServerCorePct ?? 0) > 5 && (storm.serverRunqWaitPctStorm ?? 0) > 15) ||
        ((stormUsage.othersOnLoadgenCorePct ?? 0) > 5 && (storm.loadgenRunqWaitPctStorm ?? 0) > 20),
    });
    process.exit(0);
  }

  // 3. Heartbeats (phx): every second, 1/heartbeat of the sockets, so each gets one per interval.
  const hbClients = subs.slice();
  let hbTick = 0;
  const hbTimer = setInterval(() => {
    const k = Math.max(1, Math.round(OPT.heartbeat));
    for (let i = hbTick++ % k; i < hbClients.length; i += k) hbClients[i].heartbeat();
  }, 1000);
  hbTimer.unref();

  // 4. Publisher.
  const pubs = await connectStorm(1, 1, 'pub');
  if (pubs.length !== 1) throw new Error(`publisher failed: ${S.failureSamples.join(' | ')}`);
  const pub = pubs[0];
  const nSubs = subs.length;
  hbClients.push(pub);

  let publishing = true;
  const publishOne = () => {
    S.published++;
    pub.publish(S.published, makeBody(S.published));
  };
  let pumpTimer = null;
  if (OPT.mode === 'window') {
    // Closed loop: refill whenever deliveries catch up. Checked on a 1 ms timer and after every
    // read (below), so the window never sits empty for long.
    const pump = () => {
      while (publishing && S.published - S.delivered / nSubs < OPT.window) publishOne();
    };
    WsConn.afterRead = pump;
    pumpTimer = setInterval(pump, 1);
    pump();
  } else {
    // Open loop: publish what is due at R/s on a fine timer (catches up after timer jitter).
    const t0 = performance.now();
    pumpTimer = setInterval(() => {
      const due = Math.floor(((performance.now() - t0) / 1000) * OPT.rate);
      while (publishing && S.published < due) publishOne();
    }, Math.max(1, Math.min(5, Math.floor(1000 / OPT.rate / 2))));
  }

  // 5. Warm-up, then the measurement window.
  await sleep(OPT.warmup * 1000);
  const w0 = snapshot();
  S.recording = true;
  const syscallsP = countWriteSyscalls(PID, OPT.duration);
  await sleep(OPT.duration * 1000);
  S.recording = false;
  const w1 = snapshot();
  const rssEnd = procRssKB(PID);
  const rssEndB = procRssKB(PID_B);

  // 6. Stop publishing and drain.
  publishing = false;
  clearInterval(pumpTimer);
  // The drain ends when everything arrived, or after --drain s without any progress, or when
  // the hard timeout comes near (2 s margin for the report).
  const expected = () => S.published * nSubs;
  const deadline = T0 + (OPT['hard-timeout'] - 2) * 1000;
  let lastCount = S.delivered;
  let lastProgress = performance.now();
  while (S.delivered < expected()) {
    const t = performance.now();
    if (S.delivered !== lastCount) {
      lastCount = S.delivered;
      lastProgress = t;
    }
    if (t - lastProgress > OPT.drain * 1000 || t > deadline) break;
    await sleep(20);
  }
  clearInterval(hbTimer);

  const winSec = (w1.t - w0.t) / 1000;
  const dDeliv = w1.delivered - w0.delivered;
  const dSrvCpu = w0.srvCpu === null || w1.srvCpu === null ? null : w1.srvCpu - w0.srvCpu;
  const dSyscw = w0.syscw === null || w1.syscw === null ? null : w1.syscw - w0.syscw;
  const loadgenCpuPct = (100 * (w1.selfCpu - w0.selfCpu)) / winSec;
  const syscalls = await Promise.race([syscallsP, sleep(2000).then(() => null)]);
  const nWrites = syscalls ? WRITE_SYSCALLS.reduce((a, n) => a + syscalls[n], 0) : dSyscw;
  const usage = coreUsage(w0, w1, winSec, dSrvCpu);
  const srvWaitPct = w0.srvWait === null || w1.srvWait === null ? null : (100 * (w1.srvWait - w0.srvWait)) / winSec;
  const selfWaitPct = w0.selfWait === null || w1.selfWait === null ? null : (100 * (w1.selfWait - w0.selfWait)) / winSec;
  const core0 = w0.cores && w1.cores && w0.cores['0'] && w1.cores['0'] ? w1.cores['0'] : null;
  const dCore0 = core0
    ? core0.userSys + core0.irq - (w0.cores['0'].userSys + w0.cores['0'].irq)
    : null;

  // Two-server runs: per-group figures (A = the publisher's server, B = the peer).
  const group = (g, h, d, n) => ({
    subsReady: n,
    deliveriesPerSec: round(d / winSec, 0),
    latencyMs: {
      p50: percentile(0.5, h, g.count, g.max),
      p90: percentile(0.9, h, g.count, g.max),
      p99: percentile(0.99, h, g.count, g.max),
      p999: percentile(0.999, h, g.count, g.max),
      max: round(g.max, 3),
      samples: g.count,
    },
  });
  const nB = TWO ? subs.filter((c) => c.onB).length : 0;
  const dSrvCpuB = w0.srvCpuB === null || w1.srvCpuB === null ? null : w1.srvCpuB - w0.srvCpuB;
  const two = TWO
    ? {
        groupA: group(G.A, histA, w1.deliveredA - w0.deliveredA, nSubs - nB),
        groupB: group(G.B, histB, w1.deliveredB - w0.deliveredB, nB),
        serverB: {
          cpuPct: dSrvCpuB === null ? null : round((100 * dSrvCpuB) / winSec, 1),
          rssKB: { beforeConnect: rssBeforeB, idle: rssIdleB, endOfLoad: rssEndB },
        },
        // Both servers' CPU per delivery (the cost of the whole cluster).
        serversCpuUsPerDelivery:
          dSrvCpu === null || dSrvCpuB === null || dDeliv === 0
            ? null
            : round(((dSrvCpu + dSrvCpuB) * 1e6) / dDeliv, 3),
      }
    : {};

  emit({
    subsReady: nSubs,
    windowSec: round(winSec, 3),
    deliveriesPerSec: round(dDeliv / winSec, 0),
    publishPerSec: round((w1.published - w0.published) / winSec, 1),
    latencyMs: {
      p50: percentile(0.5),
      p90: percentile(0.9),
      p99: percentile(0.99),
      p999: percentile(0.999),
      max: round(S.latMax, 3),
      samples: S.histCount,
    },
    ...two,
    serverCpuPct: dSrvCpu === null ? null : round((100 * dSrvCpu) / winSec, 1),
    serverCpuUsPerDelivery: dSrvCpu === null || dDeliv === 0 ? null : round((dSrvCpu * 1e6) / dDeliv, 3),
    // Core 0 (the server's core) busy time incl. softirq, per delivery.
    core0UsPerDelivery: dCore0 === null || dDeliv === 0 ? null : round((dCore0 * 1e6) / dDeliv, 3),
    serverBytesPerIdleConn,
    serverRssKB: { beforeConnect: rssBefore, idle: rssIdle, endOfLoad: rssEnd },
    ...storm,
    // Write-family syscalls of the server in the window: from perf (all of write, writev,
    // sendto, sendmsg, sendmmsg) or else from syscw (write/writev only).
    serverWriteSyscalls: syscalls ? { ...syscalls, source: 'perf' } : { total: dSyscw, source: 'syscw' },
    framesPerWrite: nWrites ? round(dDeliv / nWrites, 2) : null,
    published: S.published,
    delivered: S.delivered,
    lostAfterDrain: expected() - S.delivered,
    loadgenCpuPct: round(loadgenCpuPct, 1),
    clientLimited: round(loadgenCpuPct, 1) >= 90, // the client core was (co-)limiting
    ...usage,
    // Runnable-but-waiting time of the server's and the loadgen's threads: CPU lost to others.
    serverRunqWaitPct: round(srvWaitPct, 1),
    loadgenRunqWaitPct: round(selfWaitPct, 1),
    // Disturbed: another process ran on our core AND our threads waited clearly longer than
    // the 4-12% they wait behind their own sibling threads on a quiet machine (see summarize.js).
    contended:
      ((usage.othersOnServerCorePct ?? 0) > 5 && (srvWaitPct ?? 0) > 15) ||
      ((usage.othersOnLoadgenCorePct ?? 0) > 5 && (selfWaitPct ?? 0) > 20),
  });
  process.exit(0);
}

function emit(result) {
  const params = {
    adapter: OPT.adapter,
    vsn: OPT.adapter === 'phx' ? OPT.vsn : undefined,
    port: OPT.port,
    portB: TWO ? OPT['port-b'] : undefined,
    subs: OPT.subs,
    subsB: TWO ? OPT['subs-b'] : undefined,
    conc: OPT.conc,
    mode: OPT.mode,
    idle: OPT.idle,
    window: OPT.mode === 'window' ? OPT.window : undefined,
    rate: OPT.mode === 'rate' ? OPT.rate : undefined,
    duration: OPT.mode === 'storm' ? undefined : OPT.duration,
    warmup: OPT.mode === 'storm' ? undefined : OPT.warmup,
    payload: OPT.mode === 'storm' ? undefined : OPT.payload,
    transport: OPT.tls ? 'wss' : 'ws',
    tls: OPT.tls
      ? {
          servername: OPT['tls-servername'],
          ca: OPT.ca || 'system',
          ciphersOffered: OPT['tls-ciphers'] || 'node default',
          sessionResumption: 'off: no session offered, every connection a full handshake',
          ...TLS_SEEN,
        }
      : undefined,
  };
  const out = {
    ...OPT.meta,
    time: new Date().toISOString(),
    params,
    ...result,
    connectFailures: S.connectFailures,
    failureSamples: S.failureSamples.length ? S.failureSamples : undefined,
    disconnects: S.disconnects,
    unexpectedFrames: S.unexpected,
    unexpectedSamples: S.unexpectedSamples.length ? S.unexpectedSamples : undefined,
    heartbeatReplies: OPT.adapter === 'phx' ? S.hbReplies : undefined,
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

main().catch((e) => {
  emit({ error: e.message });
  process.exit(1);
});
