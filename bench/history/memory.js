#!/usr/bin/env node
'use strict';
// Memory per retained broadcast (issue 19 part 8). For each payload size and each server
// configuration, interleaved per repetition, one fresh server:
//   with     TENANT_HISTORY_SIZE=<history-size> HISTORY_MAX_BYTES=<max-bytes> (every message kept)
//   without  TENANT_HISTORY_SIZE=0 (no numbering, no history)
//   bounded  TENANT_HISTORY_SIZE=<history-size> HISTORY_MAX_BYTES=<bound> (the node bound bites)
// (TENANT_HISTORY_TTL_SECONDS=600 in all, so nothing expires during a run), then: publisher
// sockets join <topics> topics (self: false, ack: true; <per-socket> channels a socket) and one
// subscriber joins the first topic (it reads the epoch); VmRSS of the server; <messages>
// broadcasts of a <size>-byte JSON payload to each topic (round robin, <window> in flight),
// every one acked; <settle> s for the history sweep (every second); VmRSS and VmHWM again.
// Where history is on, the messages still retained are counted afterwards on the first topic by
// recovery joins ({epoch, offset: k}, bisecting on k: the smallest k that recovers).
//   bytes per retained message = (ΔRSS with - ΔRSS without) / (topics × retained per topic)
// One JSON line per run to --out (default bench/results/history-memory-<stamp>.jsonl), the
// summary as Markdown on stdout.
//
//   setsid -w node bench/history/memory.js --server /tmp/rt-bench-bin/realtime-server [--reps 3]
//        [--topics 100] [--messages 1000] [--sizes 100,1024] [--bound 8388608] [--configs with,without,bounded]

const fs = require('node:fs');
const path = require('node:path');
const { performance } = require('node:perf_hooks');

const { parseOptions, optionsOrExit } = require('../lib/options');
const { benchToken } = require('../lib/jwt');
const { procRssKB, setAutogroupNice } = require('../lib/proc');
const { sleep, makeLog } = require('../lib/harness');
const { REPO_DIR, pinSelf, startServer, Phx, payloadOf, median } = require('./common');

const DEFAULTS = {
  server: path.join(REPO_DIR, 'build/bin/realtime-server'),
  port: 14005,
  reps: 3,
  topics: 100,
  messages: 1000,
  sizes: '100,1024',
  'history-size': 1000,
  'max-bytes': 1000000000, // the largest HISTORY_MAX_BYTES the server accepts
  bound: 8388608,
  configs: 'with,without,bounded',
  'per-socket': 10,
  window: 256,
  settle: 3,
  nice: -15,
  out: '',
};
const OPT = optionsOrExit('memory.js', (argv) => parseOptions(argv, DEFAULTS));
const log = makeLog('history/memory');
const STAMP = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
const OUT = OPT.out || path.join(REPO_DIR, 'bench/results', `history-memory-${STAMP}.jsonl`);
const SECRET = `bench-${require('node:crypto').randomBytes(12).toString('hex')}`;
const TOKEN = benchToken(SECRET);
const CONFIGS = {
  with: { TENANT_HISTORY_SIZE: String(OPT['history-size']), HISTORY_MAX_BYTES: String(OPT['max-bytes']) },
  without: { TENANT_HISTORY_SIZE: '0' },
  bounded: { TENANT_HISTORY_SIZE: String(OPT['history-size']), HISTORY_MAX_BYTES: String(OPT.bound) },
};
const topicName = (i) => `realtime:hist-${i}`;

const statusKB = (pid, field) => {
  const m = new RegExp(`${field}:\\s+(\\d+)`).exec(fs.readFileSync(`/proc/${pid}/status`, 'latin1'));
  return m ? Number(m[1]) : null;
};

/** The smallest k in [0, messages] whose recover {epoch, k} on `topic` answers recovered: true. */
async function retainedOn(topic, epoch, messages) {
  const recovers = async (k) => {
    const c = await Phx.connect(OPT.port, TOKEN);
    c.onBroadcast = () => {};
    const reply = await c.join(topic, { self: false, ack: false, recover: { epoch, offset: k } }, TOKEN);
    c.close();
    if (reply.status !== 'ok') throw new Error(`recovery join refused: ${JSON.stringify(reply)}`);
    return reply.response.recovered === true;
  };
  let lo = 0;
  let hi = messages; // recovers(messages) holds: nothing was missed
  if (await recovers(0)) return messages;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (await recovers(mid)) hi = mid;
    else lo = mid;
  }
  return messages - hi;
}

async function runOnce(config, size, rep) {
  const env = { ...CONFIGS[config], TENANT_HISTORY_TTL_SECONDS: '600' };
  const srv = await startServer({ bin: OPT.server, port: OPT.port, secret: SECRET, env, nice: OPT.nice });
  const line = { kind: 'history-memory', session: STAMP, config, env, payloadBytes: size, rep, topics: OPT.topics, messages: OPT.messages };
  try {
    const sockets = [];
    const joins = [];
    for (let t = 0; t < OPT.topics; t++) {
      if (t % OPT['per-socket'] === 0) sockets.push(await Phx.connect(OPT.port, TOKEN));
      joins.push(sockets[sockets.length - 1].join(topicName(t), { self: false, ack: true }, TOKEN));
    }
    const sub = await Phx.connect(OPT.port, TOKEN);
    let first = null;
    let received = 0;
    sub.onBroadcast = (buf, start, end) => {
      if (first === null) first = buf.toString('utf8', start, end);
      received++;
    };
    joins.push(sub.join(topicName(0), { self: false, ack: false }, TOKEN));
    for (const r of await Promise.all(joins)) if (r.status !== 'ok') throw new Error(`join refused: ${JSON.stringify(r)}`);
    await sleep(1000);
    const rssBefore = procRssKB(srv.pid);

    const total = OPT.topics * OPT.messages;
    let next = 0;
    let acked = 0;
    let ackErrors = 0;
    const t0 = performance.now();
    await new Promise((resolve) => {
      const pump = () => {
        while (next < total && next - acked < OPT.window) {
          const i = next++;
          const t = i % OPT.topics;
          const seq = Math.floor(i / OPT.topics) + 1;
          sockets[Math.floor(t / OPT['per-socket'])].publish(topicName(t), 'm', payloadOf(seq, size)).then((r) => {
            acked++;
            if (r.status !== 'ok') ackErrors++;
            if (acked === total) resolve();
            else pump();
          });
        }
      };
      pump();
    });
    const publishSec = (performance.now() - t0) / 1000;
    await sleep(OPT.settle * 1000);
    const rssAfter = procRssKB(srv.pid);
    const hwm = statusKB(srv.pid, 'VmHWM');
    let retainedPerTopic = 0;
    let epoch = null;
    let frameBytes = null;
    if (first !== null) {
      const m = JSON.parse(first);
      epoch = m.payload.meta ? m.payload.meta.epoch : null;
      frameBytes = Buffer.byteLength(first);
    }
    if (config !== 'without') {
      if (!epoch) throw new Error(`no epoch in the first broadcast: ${first}`);
      retainedPerTopic = await retainedOn(topicName(0), epoch, OPT.messages);
    }
    for (const s of [...sockets, sub]) s.close();
    Object.assign(line, {
      rssKB: { before: rssBefore, after: rssAfter, hwm },
      deltaKB: rssAfter - rssBefore,
      publishSec: Number(publishSec.toFixed(2)),
      publishesPerSec: Math.round(total / publishSec),
      acked,
      ackErrors,
      subscriberReceived: received,
      frameBytes,
      epoch,
      retainedPerTopic,
      retained: retainedPerTopic * OPT.topics,
      errors: [...sockets, sub].flatMap((s) => s.errors).slice(0, 5),
    });
  } catch (e) {
    line.error = String(e && e.stack ? e.stack : e);
  } finally {
    await srv.stop();
  }
  fs.appendFileSync(OUT, `${JSON.stringify(line)}\n`);
  return line;
}

const fmtMiB = (kb) => (kb === null ? '-' : (kb / 1024).toFixed(1));
const range = (xs, f) => (xs.length ? `${f(median(xs))} [${f(Math.min(...xs))}–${f(Math.max(...xs))}]` : '-');

function summary(lines) {
  const out = [];
  out.push(`# History memory (session ${STAMP}, ${OPT.topics} topics × ${OPT.messages} messages, history_size ${OPT['history-size']}, bound ${OPT.bound} B)`);
  out.push('');
  out.push('| payload B | frame B | config | reps | RSS before MiB | ΔRSS MiB | VmHWM MiB | retained | bytes per retained message (vs without) | publishes/s |');
  out.push('|---|---|---|---|---|---|---|---|---|---|');
  for (const size of OPT.sizes.split(',').map(Number)) {
    const of = (c) => lines.filter((l) => l.payloadBytes === size && l.config === c && !l.error);
    const without = of('without');
    const dWithout = without.length ? median(without.map((l) => l.deltaKB)) : null;
    for (const c of OPT.configs.split(',')) {
      const ls = of(c);
      if (!ls.length) continue;
      const retained = median(ls.map((l) => l.retained));
      const perMsg = c !== 'without' && dWithout !== null && retained > 0
        ? range(ls.map((l) => ((l.deltaKB - dWithout) * 1024) / l.retained), (x) => x.toFixed(0))
        : '-';
      const frame = ls.find((l) => l.frameBytes !== null);
      out.push(`| ${size} | ${frame ? frame.frameBytes : '-'} | ${c} | ${ls.length} | ${range(ls.map((l) => l.rssKB.before), fmtMiB)} | ${range(ls.map((l) => l.deltaKB), fmtMiB)} | ${range(ls.map((l) => l.rssKB.hwm), fmtMiB)} | ${retained} | ${perMsg} | ${range(ls.map((l) => l.publishesPerSec), (x) => String(Math.round(x)))} |`);
    }
  }
  const failed = lines.filter((l) => l.error || l.ackErrors || (l.errors && l.errors.length));
  for (const l of failed) out.push(`\n- ${l.config} ${l.payloadBytes} B rep ${l.rep}: ${l.error || ''} ${l.ackErrors ? `${l.ackErrors} acks not ok` : ''} ${(l.errors || []).join('; ')}`);
  return out.join('\n');
}

async function main() {
  if (!fs.existsSync(OPT.server)) throw new Error(`no server binary at ${OPT.server}`);
  fs.mkdirSync(path.dirname(OUT), { recursive: true });
  if (!pinSelf(1)) log('warning: could not pin this process to CPU 1');
  setAutogroupNice(OPT.nice); // only when started as a session leader (setsid -w node ...)
  log(`results -> ${OUT}`);
  const lines = [];
  for (let rep = 1; rep <= OPT.reps; rep++) {
    for (const size of OPT.sizes.split(',').map(Number)) {
      for (const config of OPT.configs.split(',')) {
        if (!CONFIGS[config]) throw new Error(`unknown config ${config}`);
        const l = await runOnce(config, size, rep);
        lines.push(l);
        log(l.error
          ? `${config} ${size} B rep ${rep}: ERROR ${l.error.split('\n')[0]}`
          : `${config} ${size} B rep ${rep}: RSS ${fmtMiB(l.rssKB.before)} -> ${fmtMiB(l.rssKB.after)} MiB (hwm ${fmtMiB(l.rssKB.hwm)}), retained ${l.retained}, ${l.publishesPerSec} publishes/s, frame ${l.frameBytes} B`);
      }
    }
  }
  console.log(summary(lines));
}

main().catch((e) => {
  console.error(`memory.js: ${e && e.stack ? e.stack : e}`);
  process.exit(1);
});
