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

// Only this benchmark's logic is here; the client, the writer and the probes are in ../lib.
const { performance } = require('node:perf_hooks');
const { parseOptions, optionsOrExit } = require('../lib/options');
const { sleep, round, makeLog, push5, armHardTimeout, drain } = require('../lib/harness');
const { userTokens } = require('../lib/jwt');
const { procRssKB, loadavg, setAutogroupNice } = require('../lib/proc');
const { pgCluster, PsqlWriter, psqlValue, usageProbe } = require('../lib/pg');
const {
  parseTs, parseIntAt, CREATED, ID, ChangesClient, clientCounters, checkFigures, subscribeFailureSamples, subscribeAll,
  measureWindow,
} = require('../lib/pg-changes');

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
  const o = parseOptions(argv, DEFAULTS);
  if (!o['jwt-secret']) throw new Error('--jwt-secret is required');
  if (!o['pg-env']) throw new Error('--pg-env is required');
  if (o['match-every'] < 2) throw new Error('--match-every must be ≥ 2');
  if (o.rate <= 0) throw new Error('--rate must be > 0');
  o['hard-timeout'] = Math.min(120, Math.max(10, o['hard-timeout']));
  o.meta = JSON.parse(o.meta);
  return o;
}

const OPT = optionsOrExit('regex loadgen', parseArgs);
const H = OPT.hostile;
const M = OPT['match-every'];
const NEAR_MISS = `${'a'.repeat(OPT['near-miss-len'])}b`;
const MATCHING = 'aaaa';
const isMatchRow = (id) => id % M === 0;
const bodyFor = (id) => (isMatchRow(id) ? MATCHING : NEAR_MISS);
const log = makeLog('regex-loadgen');
const PG = pgCluster(OPT['pg-env']);
const tokenFor = userTokens(OPT['jwt-secret']);

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
  ...clientCounters(),
};
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

// ---- clients -----------------------------------------------------------------------------------

const BODY = Buffer.from('"body":"');

class Client extends ChangesClient {
  static COLUMNS = 'body:text,created_at:timestamptz,id:int8';

  /** kind: 'victim' or 'hostile'; i: hostile index (victim: -1). */
  constructor(kind, i, hooks) {
    const name = kind === 'victim' ? 'victim' : `hostile-${i}`;
    const filter = kind === 'victim' ? OPT['victim-filter'] : OPT['hostile-filter'];
    const binding = { event: 'INSERT', schema: 'public', table: 'items' };
    if (filter) binding.filter = filter;
    super({
      name,
      topic: `realtime:${name}`,
      token: tokenFor(name),
      binding,
      hooks,
      stats: S,
      port: OPT.port,
      tenant: OPT.tenant,
      sampleTag: `${name}: `,
      closeOnSubscribeError: true,
    });
    this.kind = kind;
    this.i = i;
    this.lastId = 0;
    this.got = 0;
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
  recordOk(rec, id) {
    return rec.id === id && rec.body === bodyFor(id) && typeof rec.created_at === 'string';
  }
  onRecordlessChange(text) {
    // A change without a record object, or before "Subscribed to PostgreSQL".
    S.errorPayloads++;
    push5(S.errorSamples, `${this.name}: ${text}`);
  }
}

// ---- probes and the writer: one row per transaction --------------------------------------------

const SERVER_PID = OPT['server-pid'];
const { snapshot, usage } = usageProbe(SERVER_PID, PG.postmaster);
const writer = new PsqlWriter(PG, OPT.db, { killAfterMs: 10000 });
function insertRow() {
  const id = ++S.inserted;
  writer.write(`INSERT INTO items (id, body) VALUES (${id}, '${bodyFor(id)}');\n`);
}

// ---- run -----------------------------------------------------------------------------------------

const result = { ...OPT.meta, params: { ...OPT, meta: undefined, 'jwt-secret': undefined } };
function emit(extra) {
  process.stdout.write(`${JSON.stringify({ ...result, ...extra })}\n`);
}
armHardTimeout(OPT['hard-timeout'], () =>
  emit({ error: `hard timeout ${OPT['hard-timeout']} s`, inserted: S.inserted, victimRows: S.victimRows }));

async function main() {
  setAutogroupNice(OPT['autogroup-nice']);
  result.loadavgStart = loadavg();
  result.serverRssKB = { start: procRssKB(SERVER_PID) };

  // 1. Connect and join the hostiles first (so the victim's subscription is the newest), then the
  //    victim; wait for every "Subscribed to PostgreSQL".
  const total = H + 1;
  const joined = await subscribeAll({
    total, conc: OPT.conc, timeoutSec: OPT['subscribe-timeout'], stats: S,
    create: (i, hooks) => (i < H ? new Client('hostile', i, hooks) : new Client('victim', -1, hooks)),
  });
  result.subscribeSec = joined.sec;
  result.subscribed = joined.subscribed;
  if (!joined.ok) {
    emit({ error: `only ${joined.subscribed} of ${total} clients reached "Subscribed to PostgreSQL" (${joined.failed} failed) in ${result.subscribeSec} s`,
      ...subscribeFailureSamples(S) });
    process.exit(2);
  }
  const clients = joined.clients;
  const victim = clients.find((c) => c.kind === 'victim');
  const hostiles = clients.filter((c) => c.kind === 'hostile');
  log(`victim + ${H} hostile subscribed in ${result.subscribeSec} s`);
  result.serverRssKB.subscribed = procRssKB(SERVER_PID);
  const hb = setInterval(() => clients.forEach((c) => c.subscribed && c.heartbeat()), OPT.heartbeat * 1000);

  // 2. Write at --rate rows/s: warm-up, then the measurement window.
  writer.start();
  let writing = true;
  const tStart = performance.now();
  const tick = setInterval(() => {
    if (!writing) return;
    const due = Math.floor(((performance.now() - tStart) / 1000) * OPT.rate) + 1; // row 1 at t = 0
    while (S.inserted < due) insertRow();
  }, 2);
  await sleep(OPT.warmup * 1000);
  const a = snapshot();
  await measureWindow(S, OPT.duration);
  const b = snapshot();
  result.serverRssKB.endOfWindow = procRssKB(SERVER_PID);
  writing = false;
  clearInterval(tick);
  await writer.stop();

  // 3. Drain: until the victim and every hostile have everything, --stall s without progress, or
  //    --drain s; then 500 ms more to catch late extras (duplicates, near misses).
  const matchRows = Math.floor(S.inserted / M);
  const tDrain = await drain({
    done: () => victim.got >= S.inserted && hostiles.every((h) => h.got >= matchRows),
    progress: () => S.victimRows + S.hostileDeliveries,
    maxSec: OPT.drain, stallSec: OPT.stall, pollMs: 20,
  });
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
  const dbRows = psqlValue(PG, OPT.db, 'SELECT count(*) FROM items');
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
    writerError: writer.errorText(),
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
    ...checkFigures(S),
    correct: ok,
  });
  process.exit(0);
}

main().catch((e) => {
  emit({ error: `loadgen: ${e.stack || e}` });
  process.exit(1);
});
