#!/usr/bin/env node
'use strict';
// Markdown tables for scenario g (bench/pgchanges/run.sh): batched vs naive RLS per policy, K and
// mode, the ratio batched / naive, the issue's targets and the correctness counters.
//
//   node bench/pgchanges/summarize.js bench/results/pgchanges-<stamp>.jsonl
const { readResultsArg } = require('../lib/summary');

const rows = readResultsArg();
const fmt = (x, d = 0) => (x === null || x === undefined || !Number.isFinite(x) ? '–' : x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d }));
const lat = (r, q) => {
  const v = r.latencyMs && r.latencyMs[q];
  if (v !== null && v !== undefined) return fmt(v, v < 10 ? 1 : 0);
  return r.latencyMs && r.latencyMs.expected ? `> run (${fmt(100 * (1 - r.latencyMs.samples / r.latencyMs.expected), 0)}% never arrived)` : '–';
};
// build: "ours", or "base" for the lines of run.sh --baseline-server (older lines have none: ours).
const find = (policy, k, mode, strategy, build = 'ours') =>
  rows.find((r) => r.policy === policy && r.k === k && r.mode === mode && r.strategy === strategy && (r.build || 'ours') === build);
const rlsLabel = (r) => (r.build === 'base' ? `${r.strategy} (base)` : r.strategy);
const keys = [];
for (const r of rows) {
  const key = `${r.policy}|${r.k}|${r.mode}`;
  if (!keys.includes(key)) keys.push(key);
}
const POLICY = { all: '(a) USING (true)', owner: '(b) owner only' };
const out = [];
out.push(`Session ${rows[0] ? rows[0].session : '?'} (${rows.length} runs)`);
out.push('');
out.push('| policy | K | mode (offered) | RLS | deliveries/s | changes/s delivered | p50 ms | p99 ms | server CPU % | µs/delivery | PostgreSQL CPU % | loadgen CPU % | others CPU % | server RSS MB | undelivered at end | load avg | batched / naive |');
out.push('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const key of keys) {
  const [policy, kS, mode] = key.split('|');
  const k = Number(kS);
  const b = find(policy, k, mode, 'batched');
  const n = find(policy, k, mode, 'naive');
  const bBase = find(policy, k, mode, 'batched', 'base');
  const nBase = find(policy, k, mode, 'naive', 'base');
  for (const r of [b, bBase, n, nBase]) {
    if (!r) continue;
    const offered = r.params ? (r.params.mode === 'rate' ? `rate ${fmt(r.params.rate)} rows/s, txn ${r.params.txn}` : `window ${r.params.window}, txn ${r.params.txn}`) : mode;
    if (r.error) {
      out.push(`| ${POLICY[policy]} | ${fmt(k)} | ${offered} | ${rlsLabel(r)} | error: ${r.error} |||||||||||||`);
      continue;
    }
    let ratio = '';
    if (r === b && n && !n.error) {
      ratio = n.deliveriesPerSec > 0 ? `**${fmt(b.deliveriesPerSec / n.deliveriesPerSec, 1)}×**` : `∞ (naive: 0 in ${fmt(n.windowSec)} s)`;
    }
    const ours = r === bBase ? b : r === nBase ? n : null;
    // Closed loop: the delivery rate says it; open loop both deliver what is offered, so the CPU
    // per delivery says it.
    if (ours && !ours.error && r.deliveriesPerSec > 0 && r.serverCpuUsPerDelivery > 0) {
      ratio = `ours / base: ${fmt(ours.deliveriesPerSec / r.deliveriesPerSec, 2)}× deliveries/s, ${fmt(ours.serverCpuUsPerDelivery / r.serverCpuUsPerDelivery, 2)}× µs/delivery`;
    }
    const bad = (r.malformed || 0) + (r.errorPayloads || 0);
    // Not delivered when the drain ended: "behind" if the server was still busy then (working
    // through a backlog), "LOST?" if it was idle (the rows never came).
    const busy = r.drainUsage && r.drainUsage.serverCpuPct >= 10;
    const und = r.undelivered > 0 ? `${fmt(r.undelivered)} (${busy ? `behind, server ${fmt(r.drainUsage.serverCpuPct)}% in drain` : '**LOST?** server idle'})` : '0';
    const flags = [und, bad ? `+ ${fmt(bad)} error payloads` : '', r.serverDiedDuringRun ? 'SERVER DIED' : ''].filter(Boolean).join(' ');
    out.push(`| ${POLICY[policy]} | ${fmt(k)} | ${offered} | ${rlsLabel(r)} | ${fmt(r.deliveriesPerSec)} | ${fmt(r.changesDeliveredPerSec, 1)} | ${lat(r, 'p50')} | ${lat(r, 'p99')} | ${fmt(r.serverCpuPct)} | ${fmt(r.serverCpuUsPerDelivery, 1)} | ${fmt(r.pgCpuPct)} | ${fmt(r.loadgenCpuPct)} | ${fmt(r.othersCpuPct)} | ${fmt(r.serverRssKB && r.serverRssKB.endOfWindow / 1024, 0)} | ${flags} | ${r.loadavgStart ? r.loadavgStart[0] : '–'} | ${ratio} |`);
  }
}
out.push('');
out.push('Correctness (every run): expected deliveries = rows × K (policy all) or rows (owner only).');
out.push('');
out.push('| run | policy | K | mode | RLS | rows | expected | delivered | short | duplicate / out of order | wrong owner | malformed | error payloads | sampled checks | disconnects | unexpected |');
out.push('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const r of rows) {
  if (r.error) {
    out.push(`| ${r.run} | ${r.policy} | ${r.k} | ${r.mode} | ${rlsLabel(r)} | error: ${r.error} ||||||||||`);
    continue;
  }
  out.push(`| ${r.run} | ${r.policy} | ${fmt(r.k)} | ${r.mode} | ${rlsLabel(r)} | ${fmt(r.rowsInserted)} (db ${fmt(r.rowsInDb)}) | ${fmt(r.expectedDeliveries)} | ${fmt(r.deliveries)} | ${fmt(r.perSubscriberShort)} | ${r.duplicatesOrOutOfOrder} | ${r.wrongOwner} | ${r.malformed} | ${r.errorPayloads} | ${r.sampledChecks} | ${r.disconnects} | ${r.unexpected} |`);
}
const samples = rows.flatMap((r) => [...(r.malformedSamples || []), ...(r.wrongOwnerSamples || []), ...(r.errorSamples || []), ...(r.unexpectedSamples || [])].map((s) => `run ${r.run}: ${s}`));
if (samples.length) {
  out.push('');
  out.push('Samples of problems:');
  for (const s of samples.slice(0, 20)) out.push(`- ${s}`);
}
out.push('');
out.push('Targets (issue 4, 2-core machine):');
out.push('');
out.push('| target | measured (batched) | status |');
out.push('|---|---|---|');
const best = (policy, k, field) => rows.filter((r) => r.policy === policy && r.k === k && r.strategy === 'batched' && (r.build || 'ours') === 'ours' && !r.error).map((r) => ({ v: r[field], mode: r.mode, r }));
for (const [policy, field, goal, label] of [['all', 'deliveriesPerSec', 40000, '(a) ≥ 40,000 deliveries/s at K = 1,000'], ['owner', 'changesDeliveredPerSec', 500, '(b) ≥ 500 changes/s delivered at K = 1,000 distinct users']]) {
  const c = best(policy, 1000, field);
  if (!c.length) continue;
  const cells = c.map((x) => `${x.mode}: ${fmt(x.v, field === 'deliveriesPerSec' ? 0 : 1)}${x.mode === 'rate' ? ` of ${fmt(x.r.params.rate * (policy === 'all' ? 1000 : 1))} offered` : ''}`).join('; ');
  const met = c.some((x) => x.v >= goal * 0.98);
  out.push(`| ${label} | ${cells} | ${met ? 'met' : '**not met**'} |`);
}
console.log(out.join('\n'));
