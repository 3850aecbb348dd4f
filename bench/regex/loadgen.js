#!/usr/bin/env node
'use strict';
// Hostile regex filters vs a victim subscriber (issue 17 part 2), in ONE process.
//
//   node bench/regex/loadgen.js --port 14100 --tenant regexbench --jwt-secret S --hostile 100 \
//        --rate 20 --duration 10 --warmup 3 --pg-env /tmp/x/pg.env --db regexbench --server-pid 1234
//
// * One VICTIM: a raw WebSocket Phoenix client (vsn 1.0.0, hand-written framing as in
//   ../loadgen.js) on channel `realtime:victim`, joined with postgres_changes
//   [{event:INSERT, schema:public, table:items}] (plus --victim-filter when given, e.g. id=gt.0).
// * --hostile H HOSTILE clients, each with its own socket, token and channel `realtime:hostile-<i>`,
//   joined on the same table with filter --hostile-filter (default `body=match.^(a|a|aa)*$`,
//   catastrophic for a backtracking engine on a near miss). The run starts once every client has
//   its `Subscribed to PostgreSQL` system message.
// * The writer is one `psql` child fed through stdin, open loop at --rate rows/s, ONE row per
//   transaction: `INSERT INTO items (id, body) VALUES (n, '<body>')`, ids 1, 2, 3, ... Every
//   --match-every-th row (id % m == 0) has body 'aaaa' (matches the hostile pattern); every other
//   row is the near miss 'a' x --near-miss-len + 'b' (does not match; a backtracking engine needs
//   ~2.4^len steps to find that out).
// * Latency: items.created_at (clock_timestamp() at the INSERT, one-row transactions, so ≈ the
//   commit) vs the receive time of the victim's frame, both on this machine's wall clock; rows
//   inserted during the measurement window, whenever they arrive (drain included); rows that never
//   arrive count as +infinity (a percentile inside them is null). Exact nearest-rank percentiles.
//   Also reported: the same for the near-miss rows alone, and the hostiles' latency on the
//   matching rows.
// * Correctness: the victim gets every row exactly once and in id order (ids consecutive); every
//   hostile subscriber gets no near-miss row and exactly the matching rows, once each, in order;
//   sampled frames are parsed in full and checked (event, topic, ids, schema/table/type, record).
// * Probes: the server PID's CPU and RSS, the PostgreSQL cluster's CPU, this process, the machine.
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
  port: 14100,
  tenant: 'regexbench', // Host: <tenant>.localhost
  'jwt-secret': '',
  hostile: 100,
  'hostile-filter': 'body=match.^(a|a|aa)*$',
  'victim-filter': '', // empty: no filter
  conc: 50, // handshakes + joins in flight
  rate: 20, // rows/s, one row per transaction
  'match-every': 20, // every n-th row matches the hostile pattern (body 'aaaa')
  'near-miss-len': 28, // the near miss: 'a' x len + 'b'
  duration: 10,
  warmup: 3,
  drain: 5, // s at most after the writer stops
  stall: 3, // the drain also ends after this many s without a delivery
  'subscribe-timeout': 30,
  'hard-timeout': 60,
  'pg-env': '',
  db: 'regexbench',
  'server-pid': 0,
  'sample-every': 25, // full JSON check of every n-th delivery (and each client's first)
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
  if (!o['jwt-secret']) throw new Error('--jwt-secret is required');
  if (!o['pg-env']) throw new Error('--pg-env is required');
  if (o['match-every'] < 2) throw new Error('--match-every must be ≥ 2');
  if (o.rate <= 0) throw new Error('--rate must be > 0');
  o['hard-timeout'] = Math.min(120, Math.max(10, o['hard-timeout']));
  o.meta = JSON.parse(o.meta);
  return o;
}

let OPT;
try {
  OPT = parseArgs(process.argv.slice(2));
} catch (e) {
  process.stderr.write(`regex loadgen: ${e.message}\n`);
  process.exit(64);
}
const H = OPT.hostile;
const M = OPT['match-every'];
const NEAR_MISS = `${'a'.repeat(OPT['near-miss-len'])}b`;
const MATCHING = 'aaaa';
const isMatchRow = (id) => id % M === 0;
const bodyFor = (id) => (isMatchRow(id) ? MATCHING : NEAR_MISS);
const log = (s) => process.stderr.write(`[regex-loadgen ${(performance.now() / 1000).toFixed(1)}s] ${s}\n`);
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
const tokenFor = (name) => hs256({ role: 'authenticated', sub: name, exp: EXP });

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

// ---- measurement state -------------------------------------------------------------------------

const S = {
  measuring: false,
  windowIdFirst: Infinity, // rows with ids in [windowIdFirst, windowIdLast] are "window rows"
  windowIdLast: -1,
  inserted: 0, // rows handed to psql (ids 1..inserted)
  victimRows: 0,
  victimDupOrOrder: 0, // an id that is not lastId + 1
  hostileDeliveries: 0, // all rows delivered to hostile clients
  hostileNearMiss: 0, // near-miss rows delivered to a hostile client (must be 0)
  hostileDupOrOrder: 0,
  malformed: 0,
  malformedSamples: [],
  errorPayloads: 0,
  errorSamples: [],
  unexpected: 0,
  unexpectedSamples: [],
  disconnects: 0,
  sampled: 0,
  connectFailures: 0,
  failureSamples: [],
  subscribeErrors: 0,
  subscribeErrorSamples: [],
};
const push5 = (arr, v) => arr.length < 5 && arr.push(String(v).slice(0, 400));
const victimLat = []; // window rows, ms
const victimLatNearMiss = [];
const hostileLat = []; // window matching rows, every hostile delivery, ms
const created = new Map(); // id -> created_at wall ms (parsed once)

/** Nearest-rank q-quantile over `total` expected samples; missing ones count as +infinity. */
function pct(arr, q, total) {
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  if (rank > arr.length) return null;
  return round(arr[rank - 1], 2);
}
function summary(arr, total) {
  arr.sort((x, y) => x - y);
  return {
    p50: pct(arr, 0.5, total),
    p90: pct(arr, 0.9, total),
    p99: pct(arr, 0.99, total),
    max: arr.length ? round(arr[arr.length - 1], 2) : null,
    mean: arr.length ? round(arr.reduce((x, y) => x + y, 0) / arr.length, 2) : null,
    samples: arr.length,
    expected: total,
  };
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

// ---- clients -----------------------------------------------------------------------------------

const REC = Buffer.from('"record":{');
const CREATED = Buffer.from('"created_at":"');
const ID = Buffer.from('"id":');
const BODY = Buffer.from('"body":"');
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

class Client {
  /** kind: 'victim' or 'hostile'; i: hostile index (victim: -1). */
  constructor(kind, i, hooks) {
    this.kind = kind;
    this.i = i;
    this.name = kind === 'victim' ? 'victim' : `hostile-${i}`;
    this.hooks = hooks;
    this.token = tokenFor(this.name);
    this.topic = `realtime:${this.name}`;
    this.filter = kind === 'victim' ? OPT['victim-filter'] : OPT['hostile-filter'];
    this.ready = false; // join ok
    this.subscribed = false; // "Subscribed to PostgreSQL"
    this.bindingId = null;
    this.ref = 1;
    this.hbRef = null;
    this.first = true;
    this.lastId = 0;
    this.got = 0;
  }
  start() {
    this.conn = new WsConn(this, `/socket/websocket?apikey=${encodeURIComponent(this.token)}&vsn=1.0.0`,
      `${OPT.tenant}.localhost:${OPT.port}`);
  }
  onOpen() {
    const binding = { event: 'INSERT', schema: 'public', table: 'items' };
    if (this.filter) binding.filter = this.filter;
    this.conn.send(JSON.stringify({
      topic: this.topic,
      event: 'phx_join',
      payload: {
        config: {
          broadcast: { self: false, ack: false },
          presence: { key: '', enabled: false },
          postgres_changes: [binding],
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
      push5(S.unexpectedSamples, `${this.name} disconnected: ${reason}`);
    } else this.hooks.onFail(this, reason);
  }
  onMessage(buf, start, end, now) {
    const r = buf.indexOf(REC, start);
    if (r !== -1 && r < end && this.subscribed) return this.onChange(buf, start, end, r, now);
    this.onControl(buf.toString('utf8', start, end));
  }
  onChange(buf, start, end, r, now) {
    const c = buf.indexOf(CREATED, r);
    const d = buf.indexOf(ID, r);
    const b = buf.indexOf(BODY, r);
    const id = d !== -1 && d < end ? parseIntAt(buf, d + ID.length, end) : -1;
    if (id <= 0 || c === -1 || c >= end || b === -1 || b >= end) {
      return this.bad(`no id/body/created_at in record: ${buf.toString('utf8', start, Math.min(end, start + 400))}`);
    }
    let t = created.get(id);
    if (t === undefined) {
      const q = buf.indexOf(0x22, c + CREATED.length);
      t = parseTs(buf.toString('latin1', c + CREATED.length, q));
      created.set(id, t);
    }
    const bq = buf.indexOf(0x22, b + BODY.length);
    const body = buf.toString('latin1', b + BODY.length, bq);
    if (body !== bodyFor(id)) this.bad(`${this.name}: row ${id} has body ${body.slice(0, 60)}, expected ${bodyFor(id)}`);
    const inWindow = id >= S.windowIdFirst && id <= S.windowIdLast;
    if (this.kind === 'victim') {
      if (id !== this.lastId + 1) {
        S.victimDupOrOrder++;
        push5(S.unexpectedSamples, `victim: row ${id} after row ${this.lastId} (duplicate, gap or out of order)`);
        if (id <= this.lastId) return; // a duplicate: not counted
      }
      this.lastId = id;
      this.got++;
      S.victimRows++;
      if (inWindow) {
        victimLat.push(now - t);
        if (!isMatchRow(id)) victimLatNearMiss.push(now - t);
      }
    } else {
      S.hostileDeliveries++;
      if (!isMatchRow(id)) {
        S.hostileNearMiss++;
        push5(S.unexpectedSamples, `${this.name}: got near-miss row ${id}`);
      }
      if (id <= this.lastId) {
        S.hostileDupOrOrder++;
        push5(S.unexpectedSamples, `${this.name}: row ${id} after row ${this.lastId} (duplicate or out of order)`);
        return;
      }
      this.lastId = id;
      if (isMatchRow(id)) this.got++;
      if (inWindow) hostileLat.push(now - t);
    }
    if (this.first || (S.victimRows + S.hostileDeliveries) % OPT['sample-every'] === 0) {
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
      if (names !== 'body:text,created_at:timestamptz,id:int8') problems.push(`columns ${names}`);
      const rec = d.record || {};
      if (rec.id !== id || rec.body !== bodyFor(id) || typeof rec.created_at !== 'string') problems.push(`record ${JSON.stringify(rec)}`);
      if ('old_record' in d) problems.push('old_record on an INSERT');
    }
    if (problems.length) this.bad(`${this.name}: ${problems.join('; ')}: ${text.slice(0, 300)}`);
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
      return this.conn.close(`join refused: ${text}`);
    }
    if (m.event === 'system' && m.topic === this.topic && m.payload && m.payload.extension === 'postgres_changes') {
      if (m.payload.status === 'ok' && !this.subscribed) {
        this.subscribed = true;
        return this.hooks.onSubscribed(this);
      }
      S.subscribeErrors++;
      push5(S.subscribeErrorSamples, `${this.name}: ${text}`);
      if (!this.subscribed) this.conn.close(`subscribe error: ${text}`);
      return;
    }
    if (m.event === 'presence_state' || m.event === 'presence_diff') return;
    if (m.event === 'postgres_changes') {
      // A change without a record object, or before "Subscribed to PostgreSQL".
      S.errorPayloads++;
      return push5(S.errorSamples, `${this.name}: ${text}`);
    }
    S.unexpected++;
    push5(S.unexpectedSamples, `${this.name}: ${text}`);
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
  const p = (x) => round((100 * x) / sec, 0);
  const out = {
    sec,
    serverCpuPct: a.server !== null && b.server !== null ? p(b.server - a.server) : null,
    serverCpuSec: a.server !== null && b.server !== null ? b.server - a.server : null,
    pgCpuPct: POSTMASTER ? p(pgCpuDelta(a.pg, b.pg)) : null,
    loadgenCpuPct: p(b.self - a.self),
    machineBusyPct: round((200 * (b.machine.busy - a.machine.busy)) / (b.machine.all - a.machine.all), 0), // of 200%
  };
  // CPU taken by everything else on the machine (other engineers' builds), % of one core.
  out.othersCpuPct = round(out.machineBusyPct - (out.serverCpuPct || 0) - (out.pgCpuPct || 0) - out.loadgenCpuPct, 0);
  return out;
}

// ---- the writer: one psql fed through stdin, one row per transaction ---------------------------

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
  // only when the WAL writer flushes (wal_writer_delay, 200 ms); production commits synchronously
  // (fsync is off here, so a flush costs little). Same as bench/pgchanges.
  psql.stdin.write('SET synchronous_commit = on;\n');
}
function insertRow() {
  const id = ++S.inserted;
  psql.stdin.write(`INSERT INTO items (id, body) VALUES (${id}, '${bodyFor(id)}');\n`);
}
function stopWriter() {
  return new Promise((resolve) => {
    if (psqlExit) return resolve();
    psql.on('exit', () => resolve());
    psql.stdin.end();
    setTimeout(() => {
      if (!psqlExit) psql.kill('SIGKILL');
    }, 10000);
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

const result = { ...OPT.meta, params: { ...OPT, meta: undefined, 'jwt-secret': undefined } };
function emit(extra) {
  process.stdout.write(`${JSON.stringify({ ...result, ...extra })}\n`);
}
const hard = setTimeout(() => {
  emit({ error: `hard timeout ${OPT['hard-timeout']} s`, inserted: S.inserted, victimRows: S.victimRows });
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

  // 1. Connect and join the hostiles first (so the victim's subscription is the newest), then the
  //    victim; wait for every "Subscribed to PostgreSQL".
  const clients = [];
  const total = H + 1;
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
      if (subscribed + failed === total) allDone();
    },
    onFail(c, reason) {
      failed++;
      inFlight--;
      S.connectFailures++;
      push5(S.failureSamples, `${c.name}: ${reason}`);
      pump();
      if (subscribed + failed === total) allDone();
    },
  };
  function pump() {
    while (inFlight < OPT.conc && next < total) {
      const c = next < H ? new Client('hostile', next, hooks) : new Client('victim', -1, hooks);
      next++;
      clients.push(c);
      inFlight++;
      c.start();
    }
  }
  const t0 = performance.now();
  pump();
  const to = sleep(OPT['subscribe-timeout'] * 1000).then(() => 'timeout');
  const outcome = await Promise.race([allSubscribed.then(() => 'ok'), to]);
  result.subscribeSec = round((performance.now() - t0) / 1000, 2);
  result.subscribed = subscribed;
  if (outcome !== 'ok' || subscribed !== total) {
    emit({ error: `only ${subscribed} of ${total} clients reached "Subscribed to PostgreSQL" (${failed} failed) in ${result.subscribeSec} s`,
      failureSamples: S.failureSamples, subscribeErrorSamples: S.subscribeErrorSamples, unexpectedSamples: S.unexpectedSamples });
    process.exit(2);
  }
  const victim = clients.find((c) => c.kind === 'victim');
  const hostiles = clients.filter((c) => c.kind === 'hostile');
  log(`victim + ${H} hostile subscribed in ${result.subscribeSec} s`);
  result.serverRssKB.subscribed = procRssKB(SERVER_PID);
  const hb = setInterval(() => clients.forEach((c) => c.subscribed && c.heartbeat()), OPT.heartbeat * 1000);

  // 2. Write at --rate rows/s: warm-up, then the measurement window.
  startWriter();
  let writing = true;
  const tStart = performance.now();
  const tick = setInterval(() => {
    if (!writing) return;
    const due = Math.floor(((performance.now() - tStart) / 1000) * OPT.rate) + 1; // row 1 at t = 0
    while (S.inserted < due) insertRow();
  }, 2);
  await sleep(OPT.warmup * 1000);
  const a = snapshot();
  S.windowIdFirst = S.inserted + 1;
  S.windowIdLast = Infinity;
  S.measuring = true;
  await sleep(OPT.duration * 1000);
  S.measuring = false;
  S.windowIdLast = S.inserted;
  const b = snapshot();
  result.serverRssKB.endOfWindow = procRssKB(SERVER_PID);
  writing = false;
  clearInterval(tick);
  await stopWriter();

  // 3. Drain: until the victim and every hostile have everything, --stall s without progress, or
  //    --drain s; then 500 ms more to catch late extras (duplicates, near misses).
  const matchRows = Math.floor(S.inserted / M);
  const done = () => victim.got >= S.inserted && hostiles.every((h) => h.got >= matchRows);
  const progress = () => S.victimRows + S.hostileDeliveries;
  const tDrain = performance.now();
  let last = progress();
  let lastProgress = performance.now();
  while (!done() && performance.now() - tDrain < OPT.drain * 1000 && performance.now() - lastProgress < OPT.stall * 1000) {
    await sleep(20);
    if (progress() !== last) {
      last = progress();
      lastProgress = performance.now();
    }
  }
  await sleep(500);
  result.drainSec = round((performance.now() - tDrain) / 1000, 2);
  clearInterval(hb);
  result.serverRssKB.end = procRssKB(SERVER_PID);
  result.loadavgEnd = loadavg();

  // 4. Figures and verdicts.
  const u = usage(a, b);
  const windowRows = S.windowIdLast - S.windowIdFirst + 1;
  let windowMatch = 0;
  for (let id = S.windowIdFirst; id <= S.windowIdLast; id++) if (isMatchRow(id)) windowMatch++;
  const dbRows = psqlValue('SELECT count(*) FROM items');
  const hostileShort = hostiles.reduce((acc, h) => acc + Math.max(0, matchRows - h.got), 0);
  const hostileExtra = hostiles.reduce((acc, h) => acc + Math.max(0, h.got - matchRows), 0);
  const victimOk = victim.got === S.inserted && victim.lastId === S.inserted && S.victimDupOrOrder === 0;
  const hostileOk = S.hostileNearMiss === 0 && S.hostileDupOrOrder === 0 && hostileShort === 0 && hostileExtra === 0;
  const ok = victimOk && hostileOk && S.malformed === 0 && S.errorPayloads === 0 && S.disconnects === 0 && S.unexpected === 0 &&
    String(dbRows) === String(S.inserted);
  emit({
    hostile: H,
    rowsInserted: S.inserted,
    rowsInDb: Number(dbRows) || dbRows,
    matchRowsInserted: matchRows,
    writerError: psqlExit && psqlExit.code !== 0 ? `psql exit ${psqlExit.code}: ${psqlErr.slice(0, 300)}` : psqlErr ? psqlErr.slice(0, 300) : null,
    windowSec: round(u.sec, 2),
    insertedPerSec: round(windowRows / u.sec, 1),
    latencyMs: summary(victimLat, windowRows), // the victim, every window row
    latencyNearMissMs: summary(victimLatNearMiss, windowRows - windowMatch), // the victim, near-miss rows only
    hostileLatencyMs: H ? summary(hostileLat, windowMatch * H) : null, // hostile deliveries of matching rows
    serverCpuPct: u.serverCpuPct,
    serverCpuMsPerRow: u.serverCpuSec !== null && windowRows > 0 ? round((u.serverCpuSec * 1000) / windowRows, 3) : null,
    pgCpuPct: u.pgCpuPct,
    loadgenCpuPct: u.loadgenCpuPct,
    machineBusyPct: u.machineBusyPct,
    othersCpuPct: u.othersCpuPct,
    victimRows: victim.got,
    victimDupOrOrder: S.victimDupOrOrder,
    victimOk,
    hostileDeliveries: S.hostileDeliveries,
    hostileNearMissDelivered: S.hostileNearMiss,
    hostileMatchShort: hostileShort,
    hostileMatchExtra: hostileExtra,
    hostileDupOrOrder: S.hostileDupOrOrder,
    hostileOk,
    malformed: S.malformed,
    malformedSamples: S.malformedSamples,
    errorPayloads: S.errorPayloads,
    errorSamples: S.errorSamples,
    sampledChecks: S.sampled,
    unexpected: S.unexpected,
    unexpectedSamples: S.unexpectedSamples,
    disconnects: S.disconnects,
    correct: ok,
  });
  process.exit(0);
}

main().catch((e) => {
  emit({ error: `loadgen: ${e.stack || e}` });
  process.exit(1);
});
