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

// Only this benchmark's logic is here; the client, the writer and the probes are in ../lib.
const { performance } = require('node:perf_hooks');
const { parseOptions, optionsOrExit } = require('../lib/options');
const { sleep, round, makeLog, push5, armHardTimeout, drain } = require('../lib/harness');
const { userTokens } = require('../lib/jwt');
const { procRssKB, loadavg, setAutogroupNice } = require('../lib/proc');
const { pgCluster, PsqlWriter, psqlValue, usageProbe } = require('../lib/pg');
const { WsConn } = require('../lib/ws-client');
const {
  parseTs, parseIntAt, CREATED, ID, ChangesClient, clientCounters, checkFigures, subscribeFailureSamples, subscribeAll,
  measureWindow,
} = require('../lib/pg-changes');

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
  const o = parseOptions(argv, DEFAULTS);
  if (!['all', 'owner'].includes(o.policy)) throw new Error('--policy must be all or owner');
  if (!['window', 'rate'].includes(o.mode)) throw new Error('--mode must be window or rate');
  if (!['distinct', 'shared'].includes(o.topics)) throw new Error('--topics must be distinct or shared');
  if (!o['jwt-secret']) throw new Error('--jwt-secret is required');
  if (!o['pg-env']) throw new Error('--pg-env is required');
  o['hard-timeout'] = Math.min(120, Math.max(10, o['hard-timeout']));
  o.meta = JSON.parse(o.meta);
  return o;
}

const OPT = optionsOrExit('pgchanges loadgen', parseArgs);
const K = OPT.subs;
const log = makeLog('pgc-loadgen');
const PG = pgCluster(OPT['pg-env']);
const tokenFor = userTokens(OPT['jwt-secret']);

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
  ...clientCounters(),
};
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

// ---- the subscriber ----------------------------------------------------------------------------

const OWNER = Buffer.from('"owner":"user-');

class Subscriber extends ChangesClient {
  static COLUMNS = 'created_at:timestamptz,id:int8,owner:text,v:int4';

  constructor(i, hooks) {
    const name = `user-${i}`;
    super({
      name,
      topic: OPT.topics === 'shared' ? 'realtime:items' : `realtime:items-${i}`,
      token: tokenFor(name),
      binding: { event: 'INSERT', schema: 'public', table: 'items' },
      hooks,
      stats: S,
      port: OPT.port,
      tenant: OPT.tenant,
    });
    this.i = i;
  }
  disconnectSample(reason) {
    return `sub ${this.i} disconnected: ${reason}`;
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
      return this.bad(`no id/owner/created_at in record: ${buf.toString('utf8', start, Math.min(end, start + 400))}`);
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
  recordOk(rec, id) {
    return rec.id === id && rec.owner === `user-${id % K}` && rec.v === 0 && typeof rec.created_at === 'string';
  }
  onRecordlessChange(text) {
    if (!this.subscribed) {
      S.unexpected++;
      return push5(S.unexpectedSamples, `change before Subscribed to PostgreSQL: ${text}`);
    }
    S.deliveries++;
    S.errorPayloads++;
    push5(S.errorSamples, text);
  }
}

// ---- probes and the writer ---------------------------------------------------------------------

const SERVER_PID = OPT['server-pid'];
const { snapshot, usage } = usageProbe(SERVER_PID, PG.postmaster);
const writer = new PsqlWriter(PG, OPT.db, { killAfterMs: 15000 });
/** Queue one transaction of n rows (ids inserted+1 .. inserted+n); row g is user-(g % K)'s. */
function insertTxn(n) {
  const a = S.inserted + 1;
  const b = S.inserted + n;
  writer.write(`INSERT INTO items (id, owner, v) SELECT g, 'user-' || (g % ${K}), 0 FROM generate_series(${a}, ${b}) g;\n`);
  S.inserted = b;
}

// ---- run -----------------------------------------------------------------------------------------

const result = { params: { ...OPT, meta: undefined, 'jwt-secret': undefined }, ...OPT.meta };
function emit(extra) {
  process.stdout.write(`${JSON.stringify({ ...result, ...extra })}\n`);
}
armHardTimeout(OPT['hard-timeout'], () =>
  emit({ error: `hard timeout ${OPT['hard-timeout']} s`, deliveries: S.deliveries, inserted: S.inserted, subscribedOk: S.subscribedOk }));

async function main() {
  setAutogroupNice(OPT['autogroup-nice']);
  result.loadavgStart = loadavg();
  result.serverRssKB = { start: procRssKB(SERVER_PID) };

  // 1. Connect, join, wait for every "Subscribed to PostgreSQL".
  const joined = await subscribeAll({
    total: K, conc: OPT.conc, timeoutSec: OPT['subscribe-timeout'], stats: S,
    create: (i, hooks) => new Subscriber(i, hooks),
  });
  result.subscribeSec = joined.sec;
  result.subscribed = joined.subscribed;
  if (!joined.ok) {
    emit({ error: `only ${joined.subscribed} of ${K} subscribers reached "Subscribed to PostgreSQL" (${joined.failed} failed) in ${result.subscribeSec} s`,
      ...subscribeFailureSamples(S) });
    process.exit(2);
  }
  const subs = joined.clients;
  log(`${K} subscribed in ${result.subscribeSec} s`);
  result.serverRssKB.subscribed = procRssKB(SERVER_PID);
  const hb = setInterval(() => subs.forEach((s) => s.subscribed && s.heartbeat()), OPT.heartbeat * 1000);

  // 2. Write: warm-up, then the measurement window.
  writer.start();
  const perRow = OPT.policy === 'owner' ? 1 : K; // deliveries each row should make
  let writing = true;
  const tStart = performance.now();
  if (OPT.mode === 'window') {
    WsConn.afterRead = () => {
      if (!writing) return;
      while (S.inserted - rowsComplete + OPT.txn <= OPT.window) insertTxn(OPT.txn);
    };
    WsConn.afterRead();
  }
  const tick = setInterval(() => {
    if (!writing) return;
    if (OPT.mode === 'rate') {
      const due = ((performance.now() - tStart) / 1000) * OPT.rate;
      while (S.inserted + OPT.txn <= due) insertTxn(OPT.txn);
    } else WsConn.afterRead();
  }, 5);
  await sleep(OPT.warmup * 1000);
  const a = snapshot();
  const dA = S.deliveries;
  const rA = rowsComplete;
  await measureWindow(S, OPT.duration);
  const b = snapshot();
  const dB = S.deliveries;
  const rB = rowsComplete;
  result.serverRssKB.endOfWindow = procRssKB(SERVER_PID);
  writing = false;
  clearInterval(tick);
  await writer.stop();

  // 3. Drain: until every expected delivery arrived, --stall s without progress, or --drain s.
  const expected = S.inserted * perRow;
  const tDrain = await drain({
    done: () => S.deliveries >= expected, progress: () => S.deliveries,
    maxSec: OPT.drain, stallSec: OPT.stall, pollMs: 50,
  });
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
  const dbRows = psqlValue(PG, OPT.db, 'SELECT count(*) FROM items');
  const ok = S.deliveries === expected && S.dup === 0 && S.wrongOwner === 0 && S.malformed === 0 && S.errorPayloads === 0 && perSubShort === 0 && perSubExtra === 0 && S.disconnects === 0;
  emit({
    subs: K,
    policy: OPT.policy,
    mode: OPT.mode,
    rowsInserted: S.inserted,
    rowsInDb: Number(dbRows) || dbRows,
    writerError: writer.errorText(),
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
    ...checkFigures(S),
    allDelivered: ok,
  });
  process.exit(0);
}

main().catch((e) => {
  emit({ error: `loadgen: ${e.stack || e}` });
  process.exit(1);
});
