#!/usr/bin/env node
'use strict';
// Markdown tables for bench/regex/run.sh (issue 17 part 2): the victim's p50/p99 per number of
// hostile subscriptions per rep, the median over reps, H vs 0 (difference and ratio) and the
// issue's target: hostile ≤ calm × 1.2 + 5 ms (p50 and p99), plus the correctness verdicts.
//
//   node bench/regex/summarize.js bench/results/regex-<stamp>.jsonl
const { readResultsArg, median } = require('../lib/summary');

const rows = readResultsArg();
const fmt = (x, d = 1) => (x === null || x === undefined || !Number.isFinite(x) ? '–' : x.toFixed(d));
const lat = (r, q) => (r.latencyMs ? r.latencyMs[q] : null);
const hs = [...new Set(rows.map((r) => r.hostile))].sort((a, b) => a - b);
const reps = [...new Set(rows.map((r) => r.rep))].sort((a, b) => a - b);
const p = rows.find((r) => r.params) || {};
const params = p.params || {};

const out = [];
out.push(`Session ${rows[0] ? rows[0].session : '?'} (${rows.length} runs; binary ${rows[0] && rows[0].binarySha}); ` +
  `${params.rate} rows/s, one row per transaction, window ${params.duration} s; hostile filter \`${params['hostile-filter']}\`, ` +
  `near miss 'a'×${params['near-miss-len']}+'b', every ${params['match-every']}th row 'aaaa'; victim filter ${params['victim-filter'] ? `\`${params['victim-filter']}\`` : 'none'}`);
out.push('');
out.push('| rep | hostile | victim p50 ms | victim p99 ms | max ms | near-miss p99 ms | hostile p50 / p99 ms (matching rows) | rows/s | server CPU % | server ms/row | PostgreSQL CPU % | others CPU % | correct |');
out.push('|---|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const rep of reps) {
  for (const r of rows.filter((x) => x.rep === rep)) {
    if (r.error) {
      out.push(`| ${rep} | ${r.hostile} | error: ${r.error} |||||||||||`);
      continue;
    }
    const hl = r.hostileLatencyMs;
    const problems = [];
    if (!r.victimOk) problems.push(`victim ${r.victimRows}/${r.rowsInserted}, ${r.victimDupOrOrder} dup/order`);
    if (!r.hostileOk) problems.push(`hostile: ${r.hostileNearMissDelivered} near misses, ${r.hostileMatchShort} short, ${r.hostileMatchExtra} extra, ${r.hostileDupOrOrder} dup/order`);
    if (r.malformed || r.errorPayloads || r.unexpected || r.disconnects) problems.push(`${r.malformed} malformed, ${r.errorPayloads} errors, ${r.unexpected} unexpected, ${r.disconnects} disconnects`);
    if (r.serverDiedDuringRun) problems.push('SERVER DIED');
    out.push(`| ${rep} | ${r.hostile} | ${fmt(lat(r, 'p50'))} | ${fmt(lat(r, 'p99'))} | ${fmt(lat(r, 'max'))} | ${fmt(r.latencyNearMissMs && r.latencyNearMissMs.p99)} | ` +
      `${hl ? `${fmt(hl.p50)} / ${fmt(hl.p99)}` : '–'} | ${fmt(r.insertedPerSec)} | ${fmt(r.serverCpuPct, 0)} | ${fmt(r.serverCpuMsPerRow, 3)} | ${fmt(r.pgCpuPct, 0)} | ${fmt(r.othersCpuPct, 0)} | ` +
      `${r.correct ? 'yes' : `**no**: ${problems.join('; ') || 'see the JSON line'}`} |`);
  }
}
out.push('');
const med = {};
for (const h of hs) {
  const rs = rows.filter((r) => r.hostile === h && !r.error);
  med[h] = { p50: median(rs.map((r) => lat(r, 'p50'))), p99: median(rs.map((r) => lat(r, 'p99'))), n: rs.length, correct: rs.every((r) => r.correct) };
}
out.push('Median over reps, and the target (hostile ≤ calm × 1.2 + 5 ms):');
out.push('');
out.push('| hostile | reps | p50 ms | p99 ms | p50 vs 0: Δ ms (ratio) | p99 vs 0: Δ ms (ratio) | p50 limit / p99 limit ms | target | all correct |');
out.push('|---|---|---|---|---|---|---|---|---|');
const calm = med[0];
let allMet = true;
for (const h of hs) {
  const m = med[h];
  let d50 = '–';
  let d99 = '–';
  let lim = '–';
  let verdict = h === 0 ? '(calm)' : '–';
  if (calm && h !== 0 && m.p50 !== null && m.p99 !== null && calm.p50 !== null && calm.p99 !== null) {
    d50 = `${m.p50 - calm.p50 >= 0 ? '+' : ''}${fmt(m.p50 - calm.p50)} (${fmt(m.p50 / calm.p50, 2)}×)`;
    d99 = `${m.p99 - calm.p99 >= 0 ? '+' : ''}${fmt(m.p99 - calm.p99)} (${fmt(m.p99 / calm.p99, 2)}×)`;
    const l50 = calm.p50 * 1.2 + 5;
    const l99 = calm.p99 * 1.2 + 5;
    lim = `${fmt(l50)} / ${fmt(l99)}`;
    const met = m.p50 <= l50 && m.p99 <= l99;
    allMet = allMet && met;
    verdict = met ? '**met**' : '**missed**';
  } else if (h !== 0) {
    allMet = null;
    verdict = calm ? '– (no figures)' : '– (no calm run)';
  }
  out.push(`| ${h} | ${m.n} | ${fmt(m.p50)} | ${fmt(m.p99)} | ${d50} | ${d99} | ${lim} | ${verdict} | ${m.correct ? 'yes' : '**no**'} |`);
}
out.push('');
const allCorrect = rows.every((r) => !r.error && r.correct);
const targetText = allMet === null || !hs.some((h) => h !== 0) ? 'not evaluated (needs runs with 0 and with hostile subscriptions)' : allMet ? 'met' : 'NOT met';
out.push(`Target ${targetText}; correctness ${allCorrect ? 'ok in every run' : 'FAILED in some run (see the table)'}.`);
console.log(out.join('\n'));
