#!/usr/bin/env node
'use strict';
// Summarise a bench/results/<stamp>.jsonl file as Markdown.
//
//   node bench/summarize.js bench/results/20261130T053000Z.jsonl [more.jsonl ...]
//
// Per scenario: one row per target with the median over its repetitions and the [min–max]
// range, then the ratios ours/base, ours/ws-phx and ours/nats of the medians (a row only for a
// target that was run), then the project's targets
// (from the issue; shared/design/performance.md §6.4) checked where the data allows.
// Flags: `c` = client-limited rep (loadgen ≥ 90% CPU), `b` = disturbed rep (see isBusy),
// `!` = lost messages after the drain. Reps with an error are
// listed under the table and left out of the medians; busy reps are left out when at least one
// quiet rep of the same target exists.

const fs = require('node:fs');
const { median } = require('./lib/summary');

// base: our server from another binary (run.sh --baseline-server), the before of a change.
const TARGETS = ['ours', 'base', 'ws-phx', 'nats'];
const SCENARIOS = {
  a: 'a: fan-out 1→1,000, saturation (window 64)',
  b: 'b: fan-out 1→1,000 at 50 publishes/s (50k deliveries/s)',
  c: 'c: 1→10,000, connect storm (500 concurrent) + idle RSS + saturation (window 8)',
  d: 'd: fan-out 1→1,000, saturation (window 8, as c)',
  e: 'e: fan-out 1→10,000, saturation (window 64, as a)',
  f: 'f: connect + JWT verify + join storm, 10,000 sockets (500 in flight) + idle RSS per joined connection',
  i: 'i: fan-out 1→1,000 over wss, saturation (window 64, as a)',
  j: 'j: TLS connect storm, 10,000 full handshakes (ECDSA P-256) + JWT verify + join (500 in flight) + idle RSS',
};
// Scenarios without a publisher (loadgen --mode storm): their own columns, judged by joins/s.
const STORM_SCENARIOS = new Set(['f', 'j']);
// Scenarios over TLS (loadgen --tls): the storm's table leads with the TLS handshake figures.
const TLS_SCENARIOS = new Set(['i', 'j']);
const BUSY_PCT = 15;

// Columns: [header, getter, digits, better ('hi' | 'lo'), in ratio section?]
const FANOUT_COLUMNS = [
  ['deliveries/s', (r) => r.deliveriesPerSec, 0, 'hi', true],
  ['server CPU %', (r) => r.serverCpuPct, 0, null, false],
  ['CPU µs/delivery', (r) => r.serverCpuUsPerDelivery, 2, 'lo', true],
  ['core0 µs/delivery', (r) => r.core0UsPerDelivery, 2, 'lo', false],
  ['p50 ms', (r) => r.latencyMs && r.latencyMs.p50, 1, 'lo', true],
  ['p99 ms', (r) => r.latencyMs && r.latencyMs.p99, 1, 'lo', true],
  ['p999 ms', (r) => r.latencyMs && r.latencyMs.p999, 1, 'lo', false],
  ['frames/write', (r) => r.framesPerWrite, 1, null, false],
  ['B/idle conn', (r) => r.serverBytesPerIdleConn, 0, 'lo', true],
  ['RSS end MB', (r) => r.serverRssKB && r.serverRssKB.endOfLoad && r.serverRssKB.endOfLoad / 1024, 0, 'lo', false],
  ['joins/s', (r) => r.joinsPerSec, 0, 'hi', false],
  ['join p99 ms', (r) => r.joinLatencyMs && r.joinLatencyMs.p99, 0, 'lo', false],
  ['loadgen CPU %', (r) => r.loadgenCpuPct, 0, null, false],
];

// Columns of the storm scenarios (all figures from the storm itself, except the idle RSS).
const STORM_COLUMNS = [
  ['connects/s', (r) => r.connectsPerSec, 0, 'hi', true],
  ['joins/s', (r) => r.joinsPerSec, 0, 'hi', true],
  ['connect p50 ms', (r) => r.connectLatencyMs && r.connectLatencyMs.p50, 1, 'lo', false],
  ['connect p99 ms', (r) => r.connectLatencyMs && r.connectLatencyMs.p99, 1, 'lo', true],
  ['join p50 ms', (r) => r.joinLatencyMs && r.joinLatencyMs.p50, 1, 'lo', true],
  ['join p99 ms', (r) => r.joinLatencyMs && r.joinLatencyMs.p99, 1, 'lo', true],
  ['CPU µs/join', (r) => r.serverCpuUsPerJoin, 0, 'lo', true],
  ['server CPU %', (r) => r.serverCpuPctStorm, 0, null, false],
  ['core0 busy %', (r) => r.stormCores && r.stormCores.cpu0 && r.stormCores.cpu0.busyPct, 0, null, false],
  ['B/idle conn', (r) => r.serverBytesPerIdleConn, 0, 'lo', true],
  ['loadgen CPU %', (r) => r.loadgenCpuPctStorm, 0, null, false],
];

// The TLS storm's columns: the handshake (connect() -> TLS done), then those of any storm.
const TLS_STORM_COLUMNS = [
  ['TLS handshakes/s', (r) => r.tlsHandshakesPerSec, 0, 'hi', true],
  ['TLS p50 ms', (r) => r.tlsHandshakeLatencyMs && r.tlsHandshakeLatencyMs.p50, 1, 'lo', false],
  ['TLS p99 ms', (r) => r.tlsHandshakeLatencyMs && r.tlsHandshakeLatencyMs.p99, 1, 'lo', true],
  ...STORM_COLUMNS,
];

function columnsOf(scen) {
  if (!STORM_SCENARIOS.has(scen)) return FANOUT_COLUMNS;
  return TLS_SCENARIOS.has(scen) ? TLS_STORM_COLUMNS : STORM_COLUMNS;
}

/** What the TLS runs negotiated, one line per target ("TLSv1.3 TLS_AES_128_GCM_SHA256 X25519"). */
function tlsNegotiated(runs) {
  const seen = new Set();
  for (const r of runs) {
    const t = r.params && r.params.tls;
    if (t && t.protocol) seen.add(`${t.protocol} ${t.cipher} ${t.group}${t.resumed ? `, ${t.resumed} resumed (!)` : ''}`);
  }
  return [...seen].join('; ');
}

function readLines(files) {
  const rows = [];
  for (const f of files) {
    for (const line of fs.readFileSync(f, 'utf8').split('\n')) {
      if (!line.trim()) continue;
      try {
        rows.push(JSON.parse(line));
      } catch {
        process.stderr.write(`summarize: skipping unparsable line in ${f}\n`);
      }
    }
  }
  return rows;
}

function fmt(x, digits) {
  if (x === null || x === undefined || !Number.isFinite(x)) return '–';
  if (Math.abs(x) >= 1e6) return `${(x / 1e6).toFixed(2)}M`;
  if (Math.abs(x) >= 1e4 && digits === 0) return `${(x / 1e3).toFixed(0)}k`;
  return x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

// A disturbed rep: another process used > 5% of the server's (or the loadgen's) core AND the
// server's threads waited for a CPU > 15% of the window (loadgen: > 20%). The thresholds sit
// above what the threads wait behind their own siblings on a quiet machine (4-12%: GC and
// runtime threads share the one pinned core). Same rule as the loadgen's `contended` field;
// lines without the per-core fields fall back to other processes' CPU > 15%.
function isBusy(r) {
  if (typeof r.othersOnServerCorePct === 'number' && typeof r.serverRunqWaitPct === 'number') {
    return (
      (r.othersOnServerCorePct > 5 && r.serverRunqWaitPct > 15) ||
      ((r.othersOnLoadgenCorePct ?? 0) > 5 && (r.loadgenRunqWaitPct ?? 0) > 20)
    );
  }
  return typeof r.otherProcsCpuPct === 'number' && r.otherProcsCpuPct > BUSY_PCT;
}

/**
 * Reps used for the medians of one (scenario, target): valid, and quiet ones if there are any
 * and `dropBusy` (every compared target of the scenario has a quiet rep; otherwise the ratios
 * would set one target's quiet reps against another's disturbed ones, so all reps count).
 */
function usable(runs, dropBusy = true) {
  const ok = runs.filter(
    (r) =>
      !r.error &&
      !r.skipped &&
      typeof (STORM_SCENARIOS.has(r.scenario) ? r.joinsPerSec : r.deliveriesPerSec) === 'number',
  );
  const quiet = ok.filter((r) => !isBusy(r));
  return dropBusy && quiet.length > 0 ? quiet : ok;
}

function stat(runs, get) {
  const vals = runs.map(get).filter((x) => typeof x === 'number' && Number.isFinite(x));
  if (vals.length === 0) return null;
  return { med: median(vals), min: Math.min(...vals), max: Math.max(...vals), n: vals.length };
}

function cell(s, digits) {
  if (!s) return '–';
  if (s.n === 1 || s.min === s.max) return fmt(s.med, digits);
  return `${fmt(s.med, digits)} [${fmt(s.min, digits)}–${fmt(s.max, digits)}]`;
}

function ratio(a, b) {
  if (!a || !b || !b.med) return '–';
  return `${(a.med / b.med).toFixed(2)}×`;
}

/**
 * The TLS section: what wss costs each target (i / a, j / f) and ours against the peers over
 * TLS. Only the lines whose scenarios were run; nothing if no TLS scenario was.
 */
function tlsRatios(out, get, r, capped) {
  const line = (label, a, b, note = '') => {
    const x = r(a, b);
    const d = (v) => fmt(v, Math.abs(v) < 10 ? 2 : 0); // µs per delivery needs its decimals
    return x === null ? null : `| ${label} | ${x.toFixed(2)}×${note} | ${d(a)} vs ${d(b)} |`;
  };
  const lines = [
    line('i: ours / nats, deliveries/s over wss', get('i', 'ours', 'deliveries/s'), get('i', 'nats', 'deliveries/s'), capped('i', 'ours', 'nats')),
    line('i: ours / ws-phx, deliveries/s over wss', get('i', 'ours', 'deliveries/s'), get('i', 'ws-phx', 'deliveries/s'), capped('i', 'ours', 'ws-phx')),
    line('i / a: ours, wss / ws deliveries/s', get('i', 'ours', 'deliveries/s'), get('a', 'ours', 'deliveries/s'), capped('ia', 'ours')),
    line('i / a: nats, wss / ws deliveries/s', get('i', 'nats', 'deliveries/s'), get('a', 'nats', 'deliveries/s'), capped('ia', 'nats')),
    line('i / a: ws-phx, wss / ws deliveries/s', get('i', 'ws-phx', 'deliveries/s'), get('a', 'ws-phx', 'deliveries/s'), capped('ia', 'ws-phx')),
    // Server side: one core's worth of deliveries (1 / CPU µs per delivery), wss against ws and
    // against nats. It does not depend on the client's core, which TLS decryption tends to fill
    // first; the server's batching grows with load, so below saturation it errs against the
    // server.
    line('i / a: ours, server capacity wss / ws (CPU µs per delivery, ws / wss)', get('a', 'ours', 'CPU µs/delivery'), get('i', 'ours', 'CPU µs/delivery')),
    line('i: ours / nats, server capacity over wss (CPU µs per delivery, nats / ours)', get('i', 'nats', 'CPU µs/delivery'), get('i', 'ours', 'CPU µs/delivery')),
    line('j: ours / nats, TLS handshakes/s', get('j', 'ours', 'TLS handshakes/s'), get('j', 'nats', 'TLS handshakes/s'), capped('j', 'ours', 'nats')),
    line('j: ours / ws-phx, TLS handshakes/s', get('j', 'ours', 'TLS handshakes/s'), get('j', 'ws-phx', 'TLS handshakes/s'), capped('j', 'ours', 'ws-phx')),
    // nats does less per connection (no JWT, no join): see the note under j's table.
    line('j: ours / nats, joins/s (nats: no JWT, no join)', get('j', 'ours', 'joins/s'), get('j', 'nats', 'joins/s'), capped('j', 'ours', 'nats')),
    line('j: ours / ws-phx, joins/s', get('j', 'ours', 'joins/s'), get('j', 'ws-phx', 'joins/s'), capped('j', 'ours', 'ws-phx')),
    line('j / f: ours, joins/s with TLS / without', get('j', 'ours', 'joins/s'), get('f', 'ours', 'joins/s'), capped('jf', 'ours')),
    // Server CPU per connection over the storm (TLS handshake + upgrade + join): like the
    // capacity lines above, independent of the client's core.
    line('j: ours / nats, connections per server CPU second (CPU µs per connection, nats / ours; nats: no JWT, no join)', get('j', 'nats', 'CPU µs/join'), get('j', 'ours', 'CPU µs/join')),
    line('j: ours / ws-phx, connections per server CPU second (CPU µs per connection, ws-phx / ours)', get('j', 'ws-phx', 'CPU µs/join'), get('j', 'ours', 'CPU µs/join')),
    line('j / f: ours, CPU µs per connection with TLS / without', get('j', 'ours', 'CPU µs/join'), get('f', 'ours', 'CPU µs/join')),
  ].filter(Boolean);
  if (lines.length === 0) return;
  out.push('## TLS (issue 18 part 7)', '', '| ratio | value | medians |', '|---|---|---|', ...lines, '');
}

function main() {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    process.stderr.write('usage: node summarize.js <results.jsonl> [...]\n');
    process.exit(64);
  }
  const rows = readLines(files);
  const out = [];
  const sessions = [...new Set(rows.map((r) => r.session).filter(Boolean))];
  out.push(`# Benchmark summary (${sessions.join(', ') || files.join(', ')})`, '');

  // Physical probe: what this VM can do today (it varies between sessions).
  const probes = rows.filter((r) => r.scenario === 'probe');
  if (probes.length) {
    out.push('Physical probe (C, 1000 loopback sockets, 200 B frames, sender on CPU 0, receiver on CPU 1):', '');
    for (const p of probes) {
      out.push(
        `- ${p.framesPerWrite} frame(s) per write: ${fmt(p.framesPerSec, 0)} frames/s, ` +
          `${p.senderUsPerWrite} µs per write (sender ${p.senderCpuPct}% CPU, receiver ${p.receiverCpuPct}%)`,
      );
    }
    out.push('');
  }

  const medians = {}; // scenario -> target -> column -> stat
  for (const [scen, title] of Object.entries(SCENARIOS)) {
    const scenRows = rows.filter((r) => r.scenario === scen);
    if (scenRows.length === 0) continue;
    medians[scen] = {};
    const COLUMNS = columnsOf(scen);
    out.push(`## ${title}`, '');
    out.push(`| target | reps | ${COLUMNS.map((c) => c[0]).join(' | ')} | flags |`);
    out.push(`|---|---|${COLUMNS.map(() => '---').join('|')}|---|`);
    const notes = [];
    const measured = TARGETS.map((t) => scenRows.filter((r) => r.target === t)).filter((rs) => usable(rs).length > 0);
    const dropBusy = measured.every((rs) => usable(rs).some((r) => !isBusy(r)));
    for (const t of TARGETS) {
      const runs = scenRows.filter((r) => r.target === t);
      if (runs.length === 0) continue;
      const use = usable(runs, dropBusy);
      if (use.length === 0) {
        const skip = runs.find((r) => r.skipped);
        const why = skip ? (/not comparable/.test(skip.skipped) ? 'not comparable' : 'not yet measured') : 'failed';
        out.push(`| ${t} | 0 | ${COLUMNS.map(() => '–').join(' | ')} | ${why} |`);
      } else {
        const stats = {};
        for (const c of COLUMNS) stats[c[0]] = stat(use, c[1]);
        medians[scen][t] = stats;
        const flags = [];
        const cl = use.filter((r) => r.clientLimited).length;
        const busy = runs.filter((r) => isBusy(r) && !r.error).length;
        const lost = use.filter((r) => r.lostAfterDrain > 0).length;
        if (cl) flags.push(`c×${cl}`);
        if (busy) flags.push(`b×${busy}${use.some(isBusy) ? '' : ' (dropped)'}`);
        if (lost) flags.push(`!×${lost}`);
        out.push(`| ${t} | ${use.length} | ${COLUMNS.map((c) => cell(stats[c[0]], c[2])).join(' | ')} | ${flags.join(' ')} |`);
      }
      for (const r of runs) {
        if (r.error) notes.push(`- ${t} rep ${r.rep}: error: ${r.error}`);
        if (r.skipped) notes.push(`- ${t} rep ${r.rep}: skipped: ${r.skipped}`);
        if (r.connectFailures) notes.push(`- ${t} rep ${r.rep}: ${r.connectFailures} connect/join failures (${(r.failureSamples || []).join(' | ')})`);
        if (r.unexpectedFrames) notes.push(`- ${t} rep ${r.rep}: ${r.unexpectedFrames} unexpected frames (${(r.unexpectedSamples || []).join(' | ')})`);
        // No rep number: one note per target (run.sh writes the same text on every rep).
        if (r.comparability) notes.push(`- ${t}: not the same work: ${r.comparability}`);
      }
      if (TLS_SCENARIOS.has(scen) && tlsNegotiated(runs)) notes.push(`- ${t}: negotiated ${tlsNegotiated(runs)}`);
    }
    out.push('');
    // Ratios of the medians.
    const m = medians[scen];
    const rc = COLUMNS.filter((c) => c[4]);
    out.push(`| ratio | ${rc.map((c) => c[0]).join(' | ')} |`, `|---|${rc.map(() => '---').join('|')}|`);
    for (const peer of ['base', 'ws-phx', 'nats']) {
      const peerRuns = scenRows.filter((r) => r.target === peer);
      // No row for a peer that was not run here (--targets) or cannot be compared in this scenario.
      if (peerRuns.every((r) => r.skipped && /not comparable/.test(r.skipped))) continue;
      const cells = rc.map((c) => (m.ours && m[peer] ? ratio(m.ours[c[0]], m[peer][c[0]]) : 'ours: not yet measured'));
      out.push(`| ours / ${peer} | ${cells.join(' | ')} |`);
    }
    out.push('');
    if (notes.length) out.push(...[...new Set(notes)], '');
  }

  // Targets from the project's issue (performance.md §6.4).
  const get = (s, t, col) => medians[s] && medians[s][t] && medians[s][t][col] && medians[s][t][col].med;
  const check = (label, value, ok) =>
    value === null || value === undefined || Number.isNaN(value)
      ? `| ${label} | ours: not yet measured | – |`
      : `| ${label} | ${value} | ${ok ? 'met' : '**not met**'} |`;
  const r = (a, b) => (a && b ? a / b : null);
  const ra = r(get('a', 'ours', 'deliveries/s'), get('a', 'ws-phx', 'deliveries/s'));
  const rn = r(get('a', 'ours', 'deliveries/s'), get('a', 'nats', 'deliveries/s'));
  const rc = r(get('c', 'ours', 'deliveries/s'), get('a', 'ours', 'deliveries/s'));
  const rcd = r(get('c', 'ours', 'deliveries/s'), get('d', 'ours', 'deliveries/s'));
  const rea = r(get('e', 'ours', 'deliveries/s'), get('a', 'ours', 'deliveries/s'));
  // The floor of this VM today: the probe's sender cost per write() with one frame per write.
  const floor = rows
    .filter((p) => p.scenario === 'probe' && p.framesPerWrite === 1 && p.senderUsPerWrite)
    .map((p) => p.senderUsPerWrite)[0];
  const idle = get('c', 'ours', 'B/idle conn');
  const idleF = get('f', 'ours', 'B/idle conn');
  const rjf = r(get('f', 'ours', 'joins/s'), get('f', 'ws-phx', 'joins/s'));
  const p99b = get('b', 'ours', 'p99 ms');
  const p99bPeer = get('b', 'ws-phx', 'p99 ms');
  const usb = get('b', 'ours', 'CPU µs/delivery');
  // TLS (issue 18 part 7): wss vs wss of the peers, and each target's wss vs its own ws (i vs a).
  const rin = r(get('i', 'ours', 'deliveries/s'), get('i', 'nats', 'deliveries/s'));
  const ria = r(get('i', 'ours', 'deliveries/s'), get('a', 'ours', 'deliveries/s'));
  const rjn = r(get('j', 'ours', 'TLS handshakes/s'), get('j', 'nats', 'TLS handshakes/s'));
  // The same two targets from the server's CPU per delivery (see tlsRatios).
  const rinCpu = r(get('i', 'nats', 'CPU µs/delivery'), get('i', 'ours', 'CPU µs/delivery'));
  const riaCpu = r(get('a', 'ours', 'CPU µs/delivery'), get('i', 'ours', 'CPU µs/delivery'));
  // A figure the client core capped says little about the server: marked as such. `scens`:
  // the scenario letters the figure comes from ('ia' for i / a).
  const clientCapped = (s, t) => rows.some((x) => x.scenario === s && x.target === t && !x.error && x.clientLimited);
  const capped = (scens, ...ts) =>
    [...scens].some((s) => ts.some((t) => clientCapped(s, t))) ? ' (client-limited reps)' : '';
  tlsRatios(out, get, r, capped);
  out.push('## Targets', '', '| target | value | status |', '|---|---|---|');
  out.push(check('a: deliveries/s ≥ 2× ws-phx', ra && `${ra.toFixed(2)}×`, ra >= 2));
  out.push(check('a: deliveries/s ≥ 0.5× nats', rn && `${rn.toFixed(2)}×`, rn >= 0.5));
  out.push(check('e vs a: ours at 10,000 ≥ 0.7× ours at 1,000 (same window 64)', rea && `${rea.toFixed(2)}×`, rea >= 0.7));
  out.push(check('c vs d: ours at 10,000 ≥ 0.7× ours at 1,000 (same window 8)', rcd && `${rcd.toFixed(2)}×`, rcd >= 0.7));
  out.push(check('c vs a: ours at 10,000 (window 8) ≥ 0.7× ours at 1,000 (window 64)', rc && `${rc.toFixed(2)}×`, rc >= 0.7));
  out.push(check('c: ≤ 10 KB per idle connection', idle && `${(idle / 1024).toFixed(1)} KB`, idle <= 10240));
  out.push(check('f: ≤ 8 KB per idle joined connection (performance.md §6.4)', idleF && `${(idleF / 1024).toFixed(1)} KB`, idleF <= 8192));
  out.push(check('f: connect + join storm joins/s ≥ ws-phx', rjf && `${rjf.toFixed(2)}×`, rjf >= 1));
  out.push(check('i: wss deliveries/s ≥ 1.0× nats over wss', rin && `${rin.toFixed(2)}×${capped('i', 'ours', 'nats')}`, rin >= 1));
  out.push(check('i vs a: ours over wss ≥ 0.6× ours over ws', ria && `${ria.toFixed(2)}×${capped('ia', 'ours')}`, ria >= 0.6));
  out.push(check('i, server side: ours capacity over wss ≥ 1.0× nats (CPU µs per delivery, nats / ours)', rinCpu && `${rinCpu.toFixed(2)}×`, rinCpu >= 1));
  out.push(check('i vs a, server side: ours capacity over wss ≥ 0.6× over ws (CPU µs per delivery, ws / wss)', riaCpu && `${riaCpu.toFixed(2)}×`, riaCpu >= 0.6));
  out.push(check('j: TLS handshakes/s ≥ nats (informative: issue 18 sets no figure)', rjn && `${rjn.toFixed(2)}×${capped('j', 'ours', 'nats')}`, rjn >= 1));
  out.push(check('b: p99 ≤ ws-phx p99', p99b && p99bPeer && `${p99b.toFixed(1)} vs ${p99bPeer.toFixed(1)} ms`, p99b <= p99bPeer));
  out.push(check('b: CPU ≤ 8 µs per delivery (2× the 3.85 µs floor of performance.md)', usb && `${usb.toFixed(2)} µs`, usb <= 8));
  if (floor) {
    out.push(check(`b: CPU ≤ 2× this session's write floor (2 × ${floor.toFixed(2)} µs)`, usb && `${usb.toFixed(2)} µs`, usb <= 2 * floor));
  }
  out.push('');
  out.push(
    'Flags: c = client-limited rep (loadgen ≥ 90% CPU); b = disturbed rep (other processes took > 5% of ' +
      "the server's core while its threads waited > 15% for a CPU, or the same on the loadgen's core " +
      'with > 20%; dropped from the medians when every target of the scenario has undisturbed reps); ' +
      '! = messages lost after the drain. ' +
      'Cells: median [min–max] over reps.',
  );
  process.stdout.write(`${out.join('\n')}\n`);
}

main();
