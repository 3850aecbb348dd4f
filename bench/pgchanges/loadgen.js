#!/usr/bin/env node
'use strict';
// postgres_changes with row level security: K subscribers and one writer, in ONE process.
//
//   node bench/pgchanges/loadgen.js --port 14000 --tenant pgbench --jwt-secret S --subs 1000 \
//        --policy all --mode window --txn 50 --window 100 --duration 12 --warmup 3 \
//        --pg-env /tmp/x/pg.env --db pgbench --server-pid 1234
//
// * K raw WebSocket Phoenix clients (vsn 1.0.0, hand-written framing as in ../loadgen.js), each
//   with its own HS256 token {role:"authenticated", sub:"user-<i>"} and its own channel
//   `realtime:items-<i>` (--topics distinct; `shared` puts them all on `realtime:items`), joined
//   with postgres_changes [{event:INSERT, schema:public, table:items}]. The run starts once every
//   subscriber has its `Subscribed to PostgreSQL` system message.
// * The writer is one `psql` child (the realtime role, owner of `items`) fed through stdin: each
//   line is `INSERT INTO items (id, owner, v) SELECT g, 'user-' || (g % K), 0 FROM
//   generate_series(a, b) g`, one transaction of --txn rows. Row g belongs to user-(g % K), so
//   under the owner-only policy each change is visible to exactly one subscriber.
//   Modes: `rate` = open loop, --rate rows/s; `window` = closed loop, at most --window rows
//   committed-or-queued and not yet delivered to everyone who should see them.
// * Latency: items.created_at (clock_timestamp() at the INSERT) vs the receive time of the
//   frame, both on this machine's wall clock; rows inserted during the measurement window,
//   whenever they arrive (drain included). Rows that never arrive are counted as censored.
// * Correctness, per subscriber: every row it must see arrives exactly once and in id order
//   (the writer inserts ids in increasing order, one connection, so commit order = id order),
//   the owner-only policy never shows it another user's row, and sampled frames are parsed in
//   full and checked (event, topic, ids, schema/table/type, columns, record, errors).
// * Probes: the server PID's CPU and RSS (/proc), every process of the PostgreSQL cluster
//   (postmaster + children, found from pg.env's data directory), this process, /proc/loadavg.
//
// Output: ONE JSON line on stdout; progress on stderr. Bounded by --hard-timeout (≤ 120 s).

const net = require('node:net');
const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
const { spawn, execFileSync } = require('node:child_process');
const { performance } = require('node:perf_hooks');

// ---- options ---------------------------------------------------------------------------------

const DEFAULTS = {
  port: 14000,
  tenant: 'pgbench', // Host: <tenant>.localhost
  'jwt-secret': '',
  subs: 100,
  conc: 100, // handshakes + joins in flight
  topics: 'distinct', // distinct | shared
  policy: 'all', // all | owner (only affects what is expected)
  mode: 'window', // window | rate
  rate: 100, // rows/s (rate mode)
  txn: 50, // rows per INSERT transaction
  window: 100, // rows in flight (window mode)
  duration: 12,
  warmup: 3,
  drain: 10, // s at most after the writer stops
  stall: 3, // the drain also ends after this many s without a delivery (a merged RLS batch can take longer)
  'subscribe-timeout': 20,
  'hard-timeout': 60,
  'pg-env': '',
  db: 'pgbench',
  'server-pid': 0,
  'sample-every': 97, // full JSON check of every n-th delivery (and each subscriber's first)
  heartbeat: 25,
  'autogroup-nice': 0,
  meta: '{}',
};

function parseArgs(argv) {
  const o = { ...DEFAULTS };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--help' || a === '-h') {
      process.stdout.write(`options and defaults:\n${Object.entries(DEFAULTS).map(([k, v]) => `  --${k} ${JSON.stringify(v)}`).join('\n')}\n`);
      process.exit(0);
    }
    if (!a.startsWith('--')) throw new Error(`unexpected argument ${a}`);
    let key = a.slice(2);
    let val;
    const eq = key.indexOf('=');
    if (eq >= 0) {
      val = key.slice(eq + 1);
      key = key.slice(0, eq);
    } else val = argv[++i];
    if (!(key in DEFAULTS)) throw new Error(`unknown option --${key}`);
    if (val === undefined) throw new Error(`--${key} needs a value`);
    o[key] = typeof DEFAULTS[key] === 'number' ? Number(val) : val;
    if (typeof DEFAULTS[key] === 'number' && !Number.isFinite(o[key])) throw new Error(`--${key}: not a number`);
  }
  if (!['all', 'owner'].includes(o.policy)) throw new Error('--policy must be all or owner');
  if (!['window', 'rate'].includes(o.mode)) throw new Error('--mode must be window or rate');
  if (!['distinct', 'shared'].includes(o.topics)) throw new Error('--topics must be distinct or shared');
  if (!o['jwt-secret']) throw new Error('--jwt-secret is required');
  if (!o['pg-env']) throw new Error('--pg-env is required');
  o['hard-timeout'] = Math.min(120, Math.max(10, o['hard-timeout']));
  o.meta = JSON.parse(o.meta);
  return o;
}

let OPT;
try {
  OPT = parseArgs(process.argv.slice(2));
} catch (e) {
  process.stderr.write(`pgchanges loadgen: ${e.message}\n`);
  process.exit(64);
}
const K = OPT.subs;
const log = (s) => process.stderr.write(`[pgc-loadgen ${(performance.now() / 1000).toFixed(1)}s] ${s}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const round = (x, d = 1) => (x === null || x === undefined || !Number.isFinite(x) ? null : Number(x.toFixed(d)));

function readEnvFile(file) {
  const env = {};
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const m = /^([A-Z_]+)=(.*)$/.exec(line);
    if (m) env[m[1]] = m[2].replace(/^'(.*)'$/, '$1');
  }
  return env;
}
const PG = readEnvFile(OPT['pg-env']);
const PSQL = path.join(PG.RT_PG_BIN || '/usr/lib/postgresql/15/bin', 'psql');

// ---- tokens ------------------------------------------------------------------------------------

const b64url = (buf) => Buffer.from(buf).toString('base64url');
function hs256(claims) {
  const head = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
  const body = b64url(JSON.stringify(claims));
  const sig = crypto.createHmac('sha256', OPT['jwt-secret']).update(`${head}.${body}`).digest('base64url');
  return `${head}.${body}.${sig}`;
}
const EXP = Math.floor(Date.now() / 1000) + 3600;
const tokenFor = (i) => hs256({ role: 'authenticated', sub: `user-${i}`, exp: EXP });

// ---- clock: wall-clock ms with sub-ms resolution ------------------------------------------------

// created_at is PostgreSQL's clock_timestamp() (CLOCK_REALTIME); performance.now() is monotonic.
// One offset taken at start-up maps one onto the other (the run lasts under a minute).
const WALL_OFFSET = (() => {
  let best = Infinity;
  let off = 0;
  for (let i = 0; i < 50; i++) {
    const a = performance.now();
    const w = Date.now();
    const b = performance.now();
    if (b - a < best) {
      best = b - a;
      off = w + 0.5 - (a + b) / 2; // Date.now() truncates to the ms: +0.5 on average
    }
  }
  return off;
})();
const wallNow = () => performance.now() + WALL_OFFSET;

// ---- measurement state -------------------------------------------------------------------------

const HIST_BUCKET_MS = 0.1;
const HIST_MAX_MS = 120000;
const hist = new Uint32Array(Math.ceil(HIST_MAX_MS / HIST_BUCKET_MS) + 1);
let histCount = 0;
let latMax = 0;

const S = {
  deliveries: 0, // postgres_changes frames with a record, all phases
  measuring: false,
  windowIdFirst: 0, // rows with ids in [windowIdFirst, windowIdLast] are "window rows"
  windowIdLast: -1,
  windowDeliveries: 0, // deliveries of rows (any) received during the window
  windowRowsDelivered: 0, // rows whose delivery completed during the window... (owner: = deliveries)
  inserted: 0, // rows handed to psql (ids 1..inserted)
  dup: 0, // a row a subscriber already had (or out of id order)
  wrongOwner: 0, // owner-only policy: a row of another user
  wrongOwnerSamples: [],
  malformed: 0,
  malformedSamples: [],
  errorPayloads: 0, // data.errors not null
  errorSamples: [],
  unexpected: 0,
  unexpectedSamples: [],
  disconnects: 0,
  sampled: 0,
  connectFailures: 0,
  failureSamples: [],
  joinFailures: 0,
  subscribedOk: 0,
  subscribeErrors: 0,
  subscribeErrorSamples: [],
};
const push5 = (arr, v) => arr.length < 5 && arr.push(String(v).slice(0, 400));
const lastId = new Float64Array(K); // highest row id each subscriber received
const got = new Uint32Array(K); // rows each subscriber received
// Per row: created_at (wall ms), parsed once; and how many subscribers have it (policy all).
let createdMs = new Float64Array(1 << 16).fill(NaN);
let rowSeen = new Uint32Array(1 << 16);
function growRows(id) {
  let n = createdMs.length;
  while (n <= id) n *= 2;
  if (n === createdMs.length) return;
  const c = new Float64Array(n).fill(NaN);
  c.set(createdMs);
  createdMs = c;
  const r = new Uint32Array(n);
  r.set(rowSeen);
  rowSeen = r;
}
let rowsComplete = 0; // rows every intended subscriber has (for the window pump)

function recordLatency(ms) {
  if (ms > latMax) latMax = ms;
  let b = Math.floor(ms / HIST_BUCKET_MS);
  if (b < 0) b = 0;
  else if (b >= hist.length) b = hist.length - 1;
  hist[b]++;
  histCount++;
}
/** q-quantile over `total` expected samples; the missing ones count as +infinity (censored). */
function percentile(q, total) {
  if (total === 0) return null;
  const target = Math.ceil(q * total);
  if (target > histCount) return null; // inside the undelivered tail
  let acc = 0;
  for (let i = 0; i < hist.length; i++) {
    acc += hist[i];
    if (acc >= target) return round((i + 1) * HIST_BUCKET_MS, 1);
  }
  return round(latMax, 1);
}

/** ISO-8601 / PostgreSQL text timestamp with offset -> epoch ms (with fractions). */
function parseTs(s) {
  const m = /^(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(\.\d+)?(Z|[+-]\d\d(?::?\d\d)?)?$/.exec(s);
  if (!m) return NaN;
  let ms = Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]) + (m[7] ? Number(m[7]) * 1000 : 0);
  if (m[8] && m[8] !== 'Z') {
    const sign = m[8][0] === '-' ? -1 : 1;
    const hh = Number(m[8].slice(1, 3));
    const mm = m[8].length > 3 ? Number(m[8].slice(-2)) : 0;
    ms -= sign * (hh * 60 + mm) * 60000;
  }
  return ms;
}

// ---- raw WebSocket client (approach of ../loadgen.js) ------------------------------------------

const READ_BUF = Buffer.allocUnsafe(256 * 1024);
const CRLFCRLF = Buffer.from('\r\n\r\n');
const WS_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

function clientFrame(opcode, payload) {
  const body = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
  const len = body.length;
  const hdr = len < 126 ? 2 : len < 65536 ? 4 : 10;
  const out = Buffer.allocUnsafe(hdr + 4 + len);
  out[0] = 0x80 | opcode;
  if (hdr === 2) out[1] = 0x80 | len;
  else if (hdr === 4) {
    out[1] = 0x80 | 126;
    out.writeUInt16BE(len, 2);
  } else {
    out[1] = 0x80 | 127;
    out.writeUInt32BE(Math.floor(len / 2 ** 32), 2);
    out.writeUInt32BE(len >>> 0, 6);
  }
  out.writeUInt32BE(0, hdr); // masking key 0
  body.copy(out, hdr + 4);
  return out;
}

class WsConn {
  constructor(owner, url, host) {
    this.owner = owner;
    this.upgraded = false;
    this.closed = false;
    this.pend = null;
    this.frag = null;
    this.key = crypto.randomBytes(16).toString('base64');
    this.sock = net.connect({
      host: '127.0.0.1',
      port: OPT.port,
      noDelay: true,
      onread: { buffer: READ_BUF, callback: (n, buf) => this.onRead(n, buf) },
    });
    this.sock.on('connect', () => {
      this.sock.write(`GET ${url} HTTP/1.1\r\nHost: ${host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: ${this.key}\r\nSec-WebSocket-Version: 13\r\n\r\n`);
    });
    this.sock.on('error', (e) => this.close(e.code || e.message));
    this.sock.on('close', () => this.close('socket closed'));
  }
  close(reason) {
    if (this.closed) return;
    this.closed = true;
    this.sock.destroy();
    this.owner.onClose(reason);
  }
  send(str) {
    if (!this.closed) this.sock.write(clientFrame(0x1, str));
  }
  onRead(n, readBuf) {
    const now = wallNow();
    let buf = readBuf.subarray(0, n);
    if (this.pend) {
      buf = Buffer.concat([this.pend, buf]);
      this.pend = null;
    }
    if (!this.upgraded) {
      const end = buf.indexOf(CRLFCRLF);
      if (end === -1) {
        if (buf.length > 16384) return this.close('oversized HTTP response');
        this.pend = Buffer.from(buf);
        return;
      }
      const head = buf.toString('latin1', 0, end);
      if (!/^HTTP\/1\.1 101/.test(head)) {
        return this.close(`upgrade refused: ${head.split('\r\n')[0]} ${buf.toString('utf8', end + 4, Math.min(buf.length, end + 300))}`);
      }
      const accept = /\r\nsec-websocket-accept:\s*(\S+)/i.exec(head);
      const want = crypto.createHash('sha1').update(this.key + WS_GUID).digest('base64');
      if (!accept || accept[1] !== want) return this.close('bad Sec-WebSocket-Accept');
      this.upgraded = true;
      this.owner.onOpen();
      buf = buf.subarray(end + 4);
      if (buf.length === 0) return;
    }
    this.parse(buf, now);
    if (afterRead !== null) afterRead();
  }
  parse(buf, now) {
    const len = buf.length;
    let off = 0;
    while (len - off >= 2) {
      const b0 = buf[off];
      const b1 = buf[off + 1];
      let plen = b1 & 0x7f;
      let hdr = 2;
      if (plen === 126) {
        if (len - off < 4) break;
        plen = buf.readUInt16BE(off + 2);
        hdr = 4;
      } else if (plen === 127) {
        if (len - off < 10) break;
        plen = buf.readUInt32BE(off + 2) * 2 ** 32 + buf.readUInt32BE(off + 6);
        hdr = 10;
      }
      const masked = (b1 & 0x80) !== 0;
      if (masked) hdr += 4;
      if (len - off < hdr + plen) break;
      const start = off + hdr;
      const end = start + plen;
      if (masked) for (let i = 0; i < plen; i++) buf[start + i] ^= buf[off + hdr - 4 + (i & 3)];
      off = end;
      const op = b0 & 0x0f;
      const fin = (b0 & 0x80) !== 0;
      if (op === 0x1 || op === 0x2) {
        if (fin) this.owner.onMessage(buf, start, end, now);
        else this.frag = [Buffer.from(buf.subarray(start, end))];
      } else if (op === 0x0) {
        if (!this.frag) return this.close('continuation without start');
        this.frag.push(Buffer.from(buf.subarray(start, end)));
        if (fin) {
          const whole = Buffer.concat(this.frag);
          this.frag = null;
          this.owner.onMessage(whole, 0, whole.length, now);
        }
      } else if (op === 0x9) {
        this.sock.write(clientFrame(0xa, Buffer.from(buf.subarray(start, end))));
      } else if (op === 0x8) {
        const code = plen >= 2 ? buf.readUInt16BE(start) : 1005;
        return this.close(`close frame ${code} ${buf.toString('utf8', start + 2, end)}`);
      }
      if (this.closed) return;
    }
    if (off < len) this.pend = Buffer.from(buf.subarray(off));
  }
}
let afterRead = null;

// ---- the subscriber ----------------------------------------------------------------------------

const REC = Buffer.from('"record":{');
const CREATED = Buffer.from('"created_at":"');
const ID = Buffer.from('"id":');
const OWNER = Buffer.from('"owner":"user-');
const COMMIT_TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;

function parseIntAt(buf, i, end) {
  let v = 0;
  let digits = 0;
  while (i < end) {
    const c = buf[i];
    if (c < 0x30 || c > 0x39) break;
    v = v * 10 + (c - 0x30);
    i++;
    digits++;
  }
  return digits ? v : -1;
}

class Subscriber {
  constructor(i, hooks) {
    this.i = i;
    this.hooks = hooks;
    this.token = tokenFor(i);
    this.topic = OPT.topics === 'shared' ? 'realtime:items' : `realtime:items-${i}`;
    this.ready = false; // join ok
    this.subscribed = false; // "Subscribed to PostgreSQL"
    this.bindingId = null;
    this.ref = 1;
    this.hbRef = null;
    this.first = true;
  }
  start() {
    this.conn = new WsConn(this, `/socket/websocket?apikey=${encodeURIComponent(this.token)}&vsn=1.0.0`,
      `${OPT.tenant}.localhost:${OPT.port}`);
  }
  onOpen() {
    this.conn.send(JSON.stringify({
      topic: this.topic,
      event: 'phx_join',
      payload: {
        config: {
          broadcast: { self: false, ack: false },
          presence: { key: '', enabled: false },
          postgres_changes: [{ event: 'INSERT', schema: 'public', table: 'items' }],
          private: false,
        },
        access_token: this.token,
      },
      ref: '1',
      join_ref: '1',
    }));
  }
  heartbeat() {
    this.hbRef = String(++this.ref);
    this.conn.send(JSON.stringify({ topic: 'phoenix', event: 'heartbeat', payload: {}, ref: this.hbRef }));
  }
  onClose(reason) {
    if (this.subscribed) {
      S.disconnects++;
      push5(S.unexpectedSamples, `sub ${this.i} disconnected: ${reason}`);
    } else this.hooks.onFail(this, reason);
  }
  onMessage(buf, start, end, now) {
    const r = buf.indexOf(REC, start);
    if (r !== -1 && r < end && this.subscribed) return this.onChange(buf, start, end, r, now);
    this.onControl(buf.toString('utf8', start, end));
  }
  onChange(buf, start, end, r, now) {
    S.deliveries++;
    if (S.measuring) S.windowDeliveries++;
    // record keys come sorted (created_at, id, owner, v); search each from the record start.
    const c = buf.indexOf(CREATED, r);
    const d = buf.indexOf(ID, r);
    const o = buf.indexOf(OWNER, r);
    const id = d !== -1 && d < end ? parseIntAt(buf, d + ID.length, end) : -1;
    const owner = o !== -1 && o < end ? parseIntAt(buf, o + OWNER.length, end) : -1;
    if (id <= 0 || owner < 0 || c === -1 || c >= end) {
      return this.bad(`no id/owner/created_at in record: ${buf.toString('utf8', start, Math.min(end, start + 400))}`, buf, start, end);
    }
    if (id >= createdMs.length) growRows(id);
    let created = createdMs[id];
    if (Number.isNaN(created)) {
      const q = buf.indexOf(0x22, c + CREATED.length);
      created = parseTs(buf.toString('latin1', c + CREATED.length, q));
      createdMs[id] = created;
    }
    if (OPT.policy === 'owner' && owner !== this.i) {
      S.wrongOwner++;
      push5(S.wrongOwnerSamples, `user-${this.i} got row ${id} of user-${owner}`);
    }
    if (id <= lastId[this.i]) {
      S.dup++;
      push5(S.unexpectedSamples, `user-${this.i}: row ${id} after row ${lastId[this.i]} (duplicate or out of order)`);
      return;
    }
    lastId[this.i] = id;
    got[this.i]++;
    const seen = ++rowSeen[id];
    if (OPT.policy === 'owner' || seen === K) rowsComplete++;
    if (id >= S.windowIdFirst && id <= S.windowIdLast) recordLatency(now - created);
    if (this.first || S.deliveries % OPT['sample-every'] === 0) {
      this.first = false;
      this.check(buf.toString('utf8', start, end), id);
    }
  }
  bad(what) {
    S.malformed++;
    push5(S.malformedSamples, what);
  }
  /** Full check of one delivered frame (server-protocol §6.5 shape). */
  check(text, id) {
    S.sampled++;
    let m;
    try {
      m = JSON.parse(text);
    } catch {
      return this.bad(`unparsable: ${text}`);
    }
    const p = m.payload;
    const d = p && p.data;
    const problems = [];
    if (m.event !== 'postgres_changes') problems.push(`event ${m.event}`);
    if (m.topic !== this.topic) problems.push(`topic ${m.topic}`);
    if (m.ref !== null) problems.push(`ref ${m.ref}`);
    if (!p || !Array.isArray(p.ids) || !p.ids.includes(this.bindingId)) problems.push(`ids ${JSON.stringify(p && p.ids)} lack ${this.bindingId}`);
    if (!d) problems.push('no data');
    else {
      if (d.schema !== 'public' || d.table !== 'items' || d.type !== 'INSERT') problems.push(`schema/table/type ${d.schema}.${d.table} ${d.type}`);
      if (d.errors !== null) {
        S.errorPayloads++;
        push5(S.errorSamples, JSON.stringify(d.errors));
      }
      if (typeof d.commit_timestamp !== 'string' || !COMMIT_TS.test(d.commit_timestamp)) problems.push(`commit_timestamp ${d.commit_timestamp}`);
      const names = Array.isArray(d.columns) ? d.columns.map((x) => `${x.name}:${x.type}`).sort().join(',') : '';
      if (names !== 'created_at:timestamptz,id:int8,owner:text,v:int4') problems.push(`columns ${names}`);
      const rec = d.record || {};
      if (rec.id !== id || rec.owner !== `user-${id % K}` || rec.v !== 0 || typeof rec.created_at !== 'string') problems.push(`record ${JSON.stringify(rec)}`);
      if ('old_record' in d) problems.push('old_record on an INSERT');
    }
    if (problems.length) this.bad(`${problems.join('; ')}: ${text.slice(0, 300)}`);
  }
  onControl(text) {
    let m;
    try {
      m = JSON.parse(text);
    } catch {
      S.unexpected++;
      return push5(S.unexpectedSamples, `unparsable: ${text}`);
    }
    if (m.event === 'phx_reply' && m.topic === 'phoenix' && m.ref === this.hbRef) return;
    if (m.event === 'phx_reply' && m.topic === this.topic && m.ref === '1' && !this.ready) {
      if (m.payload && m.payload.status === 'ok') {
        this.ready = true;
        const pc = m.payload.response && m.payload.response.postgres_changes;
        this.bindingId = Array.isArray(pc) && pc[0] ? pc[0].id : null;
        if (this.bindingId === null) {
          S.unexpected++;
          push5(S.unexpectedSamples, `join reply without a postgres_changes id: ${text}`);
        }
        return;
      }
      S.joinFailures++;
      return this.conn.close(`join refused: ${text}`);
    }
    if (m.event === 'system' && m.topic === this.topic && m.payload && m.payload.extension === 'postgres_changes') {
      if (m.payload.status === 'ok' && !this.subscribed) {
        this.subscribed = true;
        S.subscribedOk++;
        return this.hooks.onSubscribed(this);
      }
      S.subscribeErrors++;
      push5(S.subscribeErrorSamples, text);
      return;
    }
    if (m.event === 'presence_state' || m.event === 'presence_diff') return;
    if (m.event === 'postgres_changes') {
      // A change without a record object, or before "Subscribed to PostgreSQL".
      if (!this.subscribed) {
        S.unexpected++;
        return push5(S.unexpectedSamples, `change before Subscribed to PostgreSQL: ${text}`);
      }
      S.deliveries++;
      S.errorPayloads++;
      return push5(S.errorSamples, text);
    }
    S.unexpected++;
    push5(S.unexpectedSamples, `user-${this.i}: ${text}`);
  }
}

// ---- /proc probes ------------------------------------------------------------------------------

let CLK_TCK = 100;
try {
  CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
} catch {
  /* keep 100 */
}
function procStat(pid) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(f[1]), cpu: (Number(f[11]) + Number(f[12])) / CLK_TCK };
  } catch {
    return null;
  }
}
function procRssKB(pid) {
  try {
    const m = /VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'latin1'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}
const SERVER_PID = OPT['server-pid'];
let POSTMASTER = 0;
try {
  POSTMASTER = Number(fs.readFileSync(path.join(PG.RT_PG_DATA, 'postmaster.pid'), 'latin1').split('\n')[0]);
} catch {
  /* no cluster CPU figures */
}
/** CPU seconds of the postmaster and all its children (backends, walsender, ...), per pid. */
function pgCpu() {
  const out = new Map();
  if (!POSTMASTER) return out;
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    const st = procStat(pid);
    if (st && (pid === POSTMASTER || st.ppid === POSTMASTER)) out.set(pid, st.cpu);
  }
  return out;
}
function pgCpuDelta(a, b) {
  // Processes that exited in between lose their last slice; new ones count from 0.
  let sum = 0;
  for (const [pid, cpu] of b) sum += cpu - (a.get(pid) || 0);
  return sum;
}
const selfCpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
const loadavg = () => fs.readFileSync('/proc/loadavg', 'latin1').split(' ').slice(0, 3).map(Number);
function cpuTotals() {
  const f = fs.readFileSync('/proc/stat', 'latin1').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return { busy: (f[0] + f[1] + f[2] + f[5] + f[6] + f[7]) / CLK_TCK, all: f.slice(0, 8).reduce((x, y) => x + y, 0) / CLK_TCK };
}
function snapshot() {
  return {
    t: performance.now(),
    server: SERVER_PID ? (procStat(SERVER_PID) || { cpu: null }).cpu : null,
    pg: pgCpu(),
    self: selfCpu(),
    machine: cpuTotals(),
  };
}
function usage(a, b) {
  const sec = (b.t - a.t) / 1000;
  const pct = (x) => round((100 * x) / sec, 0);
  const out = {
    sec,
    serverCpuPct: a.server !== null && b.server !== null ? pct(b.server - a.server) : null,
    serverCpuSec: a.server !== null && b.server !== null ? b.server - a.server : null,
    pgCpuPct: POSTMASTER ? pct(pgCpuDelta(a.pg, b.pg)) : null,
    loadgenCpuPct: pct(b.self - a.self),
    machineBusyPct: round((200 * (b.machine.busy - a.machine.busy)) / (b.machine.all - a.machine.all), 0), // of 200%
  };
  // CPU taken by everything else on the machine (other engineers' builds), % of one core.
  out.othersCpuPct = round(out.machineBusyPct - (out.serverCpuPct || 0) - (out.pgCpuPct || 0) - out.loadgenCpuPct, 0);
  return out;
}

// ---- the writer: one psql fed through stdin ----------------------------------------------------

let psql = null;
let psqlErr = '';
let psqlExit = null;
function startWriter() {
  psql = spawn(PSQL, ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-h', PG.RT_PG_HOST, '-p', PG.RT_PG_PORT,
    '-U', PG.RT_PG_USER, '-d', OPT.db, '-f', '-'], {
    env: { ...process.env, PGPASSWORD: PG.RT_PG_PASSWORD, PGCONNECT_TIMEOUT: '10' },
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  psql.stderr.setEncoding('utf8');
  psql.stderr.on('data', (c) => (psqlErr += c));
  psql.on('exit', (code, sig) => (psqlExit = { code, sig }));
  psql.stdin.on('error', () => {});
  // The test cluster runs with synchronous_commit = off, where a commit reaches the WAL sender
  // only when the WAL writer flushes (wal_writer_delay, 200 ms): every change would wait for it.
  // A production database commits synchronously; so does the writer here (fsync is off, so a
  // flush costs little).
  psql.stdin.write('SET synchronous_commit = on;\n');
}
/** Queue one transaction of n rows (ids inserted+1 .. inserted+n). */
function insertTxn(n) {
  const a = S.inserted + 1;
  const b = S.inserted + n;
  psql.stdin.write(`INSERT INTO items (id, owner, v) SELECT g, 'user-' || (g % ${K}), 0 FROM generate_series(${a}, ${b}) g;\n`);
  S.inserted = b;
}
function stopWriter() {
  return new Promise((resolve) => {
    if (psqlExit) return resolve();
    psql.on('exit', () => resolve());
    psql.stdin.end();
    setTimeout(() => {
      if (!psqlExit) psql.kill('SIGKILL');
    }, 15000);
  });
}
function psqlValue(sql) {
  try {
    return execFileSync(PSQL, ['-X', '-qtA', '-h', PG.RT_PG_HOST, '-p', PG.RT_PG_PORT, '-U', PG.RT_PG_USER, '-d', OPT.db, '-c', sql], {
      env: { ...process.env, PGPASSWORD: PG.RT_PG_PASSWORD }, timeout: 10000,
    }).toString().trim();
  } catch (e) {
    return `error: ${e.message.split('\n')[0]}`;
  }
}

// ---- run -----------------------------------------------------------------------------------------

const result = { params: { ...OPT, meta: undefined, 'jwt-secret': undefined }, ...OPT.meta };
function emit(extra) {
  process.stdout.write(`${JSON.stringify({ ...result, ...extra })}\n`);
}
const hard = setTimeout(() => {
  emit({ error: `hard timeout ${OPT['hard-timeout']} s`, deliveries: S.deliveries, inserted: S.inserted, subscribedOk: S.subscribedOk });
  process.exit(3);
}, OPT['hard-timeout'] * 1000);
hard.unref();

function setAutogroupNice(nice) {
  if (!nice) return;
  try {
    const sid = Number(fs.readFileSync('/proc/self/stat', 'latin1').split(') ')[1].split(' ')[3]);
    if (sid === process.pid) fs.writeFileSync('/proc/self/autogroup', String(nice));
  } catch {
    /* normal priority */
  }
}

async function main() {
  setAutogroupNice(OPT['autogroup-nice']);
  result.loadavgStart = loadavg();
  result.serverRssKB = { start: procRssKB(SERVER_PID) };

  // 1. Connect, join, wait for every "Subscribed to PostgreSQL".
  const subs = [];
  let inFlight = 0;
  let next = 0;
  let subscribed = 0;
  let failed = 0;
  let allDone;
  const allSubscribed = new Promise((r) => (allDone = r));
  const hooks = {
    onSubscribed() {
      subscribed++;
      inFlight--;
      pump();
      if (subscribed + failed === K) allDone();
    },
    onFail(sub, reason) {
      failed++;
      inFlight--;
      S.connectFailures++;
      push5(S.failureSamples, `user-${sub.i}: ${reason}`);
      pump();
      if (subscribed + failed === K) allDone();
    },
  };
  function pump() {
    while (inFlight < OPT.conc && next < K) {
      const s = new Subscriber(next++, hooks);
      subs.push(s);
      inFlight++;
      s.start();
    }
  }
  const t0 = performance.now();
  pump();
  const to = sleep(OPT['subscribe-timeout'] * 1000).then(() => 'timeout');
  const outcome = await Promise.race([allSubscribed.then(() => 'ok'), to]);
  result.subscribeSec = round((performance.now() - t0) / 1000, 2);
  result.subscribed = subscribed;
  if (outcome !== 'ok' || subscribed !== K) {
    emit({ error: `only ${subscribed} of ${K} subscribers reached "Subscribed to PostgreSQL" (${failed} failed) in ${result.subscribeSec} s`,
      failureSamples: S.failureSamples, subscribeErrorSamples: S.subscribeErrorSamples, unexpectedSamples: S.unexpectedSamples });
    process.exit(2);
  }
  log(`${K} subscribed in ${result.subscribeSec} s`);
  result.serverRssKB.subscribed = procRssKB(SERVER_PID);
  const hb = setInterval(() => subs.forEach((s) => s.subscribed && s.heartbeat()), OPT.heartbeat * 1000);

  // 2. Write: warm-up, then the measurement window.
  startWriter();
  const perRow = OPT.policy === 'owner' ? 1 : K; // deliveries each row should make
  let writing = true;
  const tStart = performance.now();
  if (OPT.mode === 'window') {
    afterRead = () => {
      if (!writing) return;
      while (S.inserted - rowsComplete + OPT.txn <= OPT.window) insertTxn(OPT.txn);
    };
    afterRead();
  }
  const tick = setInterval(() => {
    if (!writing) return;
    if (OPT.mode === 'rate') {
      const due = ((performance.now() - tStart) / 1000) * OPT.rate;
      while (S.inserted + OPT.txn <= due) insertTxn(OPT.txn);
    } else afterRead();
  }, 5);
  await sleep(OPT.warmup * 1000);
  const a = snapshot();
  const dA = S.deliveries;
  const rA = rowsComplete;
  S.windowIdFirst = S.inserted + 1;
  S.windowIdLast = Infinity;
  S.measuring = true;
  await sleep(OPT.duration * 1000);
  S.measuring = false;
  S.windowIdLast = S.inserted;
  const b = snapshot();
  const dB = S.deliveries;
  const rB = rowsComplete;
  result.serverRssKB.endOfWindow = procRssKB(SERVER_PID);
  writing = false;
  clearInterval(tick);
  await stopWriter();

  // 3. Drain: until every expected delivery arrived, --stall s without progress, or --drain s.
  const expected = S.inserted * perRow;
  const tDrain = performance.now();
  let last = S.deliveries;
  let lastProgress = performance.now();
  while (S.deliveries < expected && performance.now() - tDrain < OPT.drain * 1000 && performance.now() - lastProgress < OPT.stall * 1000) {
    await sleep(50);
    if (S.deliveries !== last) {
      last = S.deliveries;
      lastProgress = performance.now();
    }
  }
  // A little longer to catch duplicates / extra deliveries once everything seems in.
  if (S.deliveries >= expected) await sleep(300);
  result.drainSec = round((performance.now() - tDrain) / 1000, 2);
  const c = snapshot();
  clearInterval(hb);
  result.serverRssKB.end = procRssKB(SERVER_PID);
  result.loadavgEnd = loadavg();

  // 4. Figures.
  const u = usage(a, b);
  const windowRows = S.windowIdLast - S.windowIdFirst + 1;
  const expectedWindow = windowRows * perRow;
  const deliveriesPerSec = (dB - dA) / u.sec;
  let perSubShort = 0;
  let perSubExtra = 0;
  for (let i = 0; i < K; i++) {
    // policy all: every row; owner: the ids 1..n with id % K == i
    const n = S.inserted;
    const want = OPT.policy === 'all' ? n : i === 0 ? Math.floor(n / K) : n >= i ? Math.floor((n - i) / K) + 1 : 0;
    if (got[i] < want) perSubShort += want - got[i];
    else if (got[i] > want) perSubExtra += got[i] - want;
  }
  // Which rows are short (not delivered to everyone who should see them), as id ranges.
  const missing = [];
  let missingRows = 0;
  for (let id = 1; id <= S.inserted; id++) {
    const seen = id < rowSeen.length ? rowSeen[id] : 0;
    if (seen >= (OPT.policy === 'owner' ? 1 : K)) continue;
    missingRows++;
    const last = missing[missing.length - 1];
    if (last && last[1] === id - 1) last[1] = id;
    else if (missing.length < 20) missing.push([id, id]);
  }
  const dbRows = psqlValue('SELECT count(*) FROM items');
  const ok = S.deliveries === expected && S.dup === 0 && S.wrongOwner === 0 && S.malformed === 0 && S.errorPayloads === 0 && perSubShort === 0 && perSubExtra === 0 && S.disconnects === 0;
  emit({
    subs: K,
    policy: OPT.policy,
    mode: OPT.mode,
    rowsInserted: S.inserted,
    rowsInDb: Number(dbRows) || dbRows,
    writerError: psqlExit && psqlExit.code !== 0 ? `psql exit ${psqlExit.code}: ${psqlErr.slice(0, 300)}` : psqlErr ? psqlErr.slice(0, 300) : null,
    windowSec: round(u.sec, 2),
    insertedPerSec: round(windowRows / u.sec, 1),
    deliveriesPerSec: round(deliveriesPerSec, 0),
    changesDeliveredPerSec: round((rB - rA) / u.sec, 1), // rows completely delivered (to all who should see them) per s
    latencyMs: {
      p50: percentile(0.5, expectedWindow),
      p90: percentile(0.9, expectedWindow),
      p99: percentile(0.99, expectedWindow),
      max: histCount ? round(latMax, 1) : null,
      samples: histCount,
      expected: expectedWindow,
    },
    serverCpuPct: u.serverCpuPct,
    serverCpuUsPerDelivery: u.serverCpuSec !== null && dB > dA ? round((u.serverCpuSec * 1e6) / (dB - dA), 1) : null,
    pgCpuPct: u.pgCpuPct,
    loadgenCpuPct: u.loadgenCpuPct,
    machineBusyPct: u.machineBusyPct,
    othersCpuPct: u.othersCpuPct,
    drainUsage: usage(b, c),
    expectedDeliveries: expected,
    deliveries: S.deliveries,
    undelivered: expected - S.deliveries,
    perSubscriberShort: perSubShort,
    rowsShort: missingRows, // rows not delivered to all who should see them
    rowsShortRanges: missing.map(([x, y]) => (x === y ? `${x}` : `${x}-${y}`)), // first 20 ranges

    perSubscriberExtra: perSubExtra,
    duplicatesOrOutOfOrder: S.dup,
    wrongOwner: S.wrongOwner,
    wrongOwnerSamples: S.wrongOwnerSamples,
    malformed: S.malformed,
    malformedSamples: S.malformedSamples,
    errorPayloads: S.errorPayloads,
    errorSamples: S.errorSamples,
    sampledChecks: S.sampled,
    unexpected: S.unexpected,
    unexpectedSamples: S.unexpectedSamples,
    disconnects: S.disconnects,
    allDelivered: ok,
  });
  process.exit(0);
}

main().catch((e) => {
  emit({ error: `loadgen: ${e.stack || e}` });
  process.exit(1);
});
