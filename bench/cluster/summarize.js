#!/usr/bin/env node
'use strict';
// Markdown tables of a bench/cluster/run.sh session: node bench/cluster/summarize.js <file.jsonl>
//
// One table per (N, mode), one row per target/layout, each cell the median [min–max] over the
// repetitions. "hop" is, per run, p50 (or p99) of the subscribers on B minus that of the
// subscribers on A (same run, same clock), then the median over the runs: the latency the node
// link adds. "vs single" compares the cluster's deliveries/s with the single server's median, and
// "B p50 − single p50" the median p50 of B's subscribers with the single server's (other runs).

const { readResultsArg, median } = require('../lib/summary');

const rows = readResultsArg('usage: node bench/cluster/summarize.js <results.jsonl>', (l) => l.startsWith('{'));

const fmt = (x, d) => (x == null ? '–' : d === 0 ? Math.round(x).toLocaleString('en-US') : x.toFixed(d));
const cell = (xs, d = 2) => {
  const v = xs.filter((x) => x != null && Number.isFinite(x));
  if (v.length === 0) return '–';
  const m = median(v);
  if (v.length === 1) return fmt(m, d);
  return `${fmt(m, d)} [${fmt(Math.min(...v), d)}–${fmt(Math.max(...v), d)}]`;
};
const get = (r, path) => path.split('.').reduce((o, k) => (o == null ? null : o[k]), r);

// CPU of every other process (other engineers' builds, etcd) in % of one core during the window:
// the loadgen counts node B among "others", so B's own CPU is taken out.
const othersPct = (r) =>
  r.otherProcsCpuPct == null ? null : Math.max(0, r.otherProcsCpuPct - (get(r, 'serverB.cpuPct') || 0));

const ok = rows.filter((r) => !r.error && r.deliveriesPerSec != null);
const errors = rows.filter((r) => r.error);
const session = rows.length ? rows[0].session : '?';

const out = [];
out.push(`Session \`${session}\`: ${ok.length} runs, ${errors.length} errors.`);
const keys = [...new Set(ok.map((r) => `${r.n}|${r.mode}`))];
for (const key of keys) {
  const [n, mode] = key.split('|');
  const group = ok.filter((r) => `${r.n}|${r.mode}` === key);
  const p = group[0].params;
  const what = mode === 'window' ? `closed loop, window ${p.window}` : `open loop, ${p.rate} publishes/s`;
  out.push('', `**N = ${Number(n).toLocaleString('en-US')} subscribers, ${what}** (${p.duration} s window)`, '');
  out.push(
    '| target | deliveries/s | vs single | p50 ms | p99 ms | A p50 / p99 ms | B p50 / p99 ms | hop p50 ms | hop p99 ms | B p50 − single p50 ms | link msgs / publish | link B / publish | servers CPU µs / delivery | lost | loadgen CPU % | others CPU % |',
  );
  out.push('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  const single = group.filter((r) => r.target === 'single');
  const singleRate = median(single.map((r) => r.deliveriesPerSec));
  const singleP50 = median(single.map((r) => get(r, 'latencyMs.p50')));
  const variants = [...new Set(group.map((r) => `${r.target}|${r.layout}`))];
  for (const v of variants) {
    const rs = group.filter((r) => `${r.target}|${r.layout}` === v);
    const [target, layout] = v.split('|');
    const name = target === 'single' ? 'single server' : `cluster A+B, ${layout}`;
    const two = target === 'cluster';
    const dps = rs.map((r) => r.deliveriesPerSec);
    const ratio = singleRate ? `${fmt(median(dps) / singleRate, 2)}×` : '–';
    const ab = (g) =>
      two ? `${fmt(median(rs.map((r) => get(r, `${g}.latencyMs.p50`))), 2)} / ${fmt(median(rs.map((r) => get(r, `${g}.latencyMs.p99`))), 2)}` : '–';
    const hop = (q) => (two ? cell(rs.map((r) => get(r, `groupB.latencyMs.${q}`) - get(r, `groupA.latencyMs.${q}`)), 2) : '–');
    const cpu = rs.map((r) => (two ? r.serversCpuUsPerDelivery : r.serverCpuUsPerDelivery));
    out.push(
      `| ${name} | ${cell(dps, 0)} | ${two ? ratio : '1'} | ${cell(rs.map((r) => get(r, 'latencyMs.p50')))} | ${cell(
        rs.map((r) => get(r, 'latencyMs.p99')),
      )} | ${ab('groupA')} | ${ab('groupB')} | ${hop('p50')} | ${hop('p99')} | ${
        two && singleP50 != null ? fmt(median(rs.map((r) => get(r, 'groupB.latencyMs.p50'))) - singleP50, 2) : '–'
      } | ${
        two ? cell(rs.map((r) => get(r, 'link.messagesPerPublish')), 3) : '–'
      } | ${two ? cell(rs.map((r) => get(r, 'link.wireBytesPerPublish')), 1) : '–'} | ${cell(cpu, 2)} | ${cell(
        rs.map((r) => r.lostAfterDrain),
        0,
      )} | ${cell(rs.map((r) => r.loadgenCpuPct), 0)} | ${cell(rs.map(othersPct), 0)} |`,
    );
  }
}

// Checks: every publish crossed exactly one link message, none flooded or dropped, nothing lost.
const cl = ok.filter((r) => r.target === 'cluster');
if (cl.length) {
  const flooded = cl.reduce((a, r) => a + (get(r, 'link.floodedOut') || 0), 0);
  const dropped = cl.reduce((a, r) => a + (get(r, 'link.droppedOut') || 0), 0);
  const payload = median(cl.map((r) => get(r, 'link.payloadBytesPerMessage')));
  out.push(
    '',
    `Link A → B over all cluster runs: ${flooded} flooded, ${dropped} dropped; median envelope payload ${fmt(
      payload,
      1,
    )} B (+ 5 B frame header). Lost after drain (all runs): ${ok.reduce((a, r) => a + (r.lostAfterDrain || 0), 0)}.`,
  );
}
// No per-run "contended" flag here: in the cluster layouts node B shares a core with A or with
// the loadgen by design, so the run-queue waits that flag relies on are high on a quiet machine
// too. The "others CPU %" column says how busy the rest of the machine was.
for (const e of errors) out.push('', `error: ${e.target} ${e.layout} N=${e.n} ${e.mode} rep ${e.rep}: ${e.error}`);
process.stdout.write(`${out.join('\n')}\n`);
