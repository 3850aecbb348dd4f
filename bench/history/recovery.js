#!/usr/bin/env node
'use strict';
// Recovery time for <messages> missed broadcasts (issue 19 part 8). Per repetition, one fresh
// server with TENANT_HISTORY_SIZE=<messages> (TENANT_HISTORY_TTL_SECONDS=600, HISTORY_MAX_BYTES
// default 64 MiB, run.sh's other settings; pinned to CPU 0, this process to CPU 1):
//   1. a publisher joins <topic> with self: true, ack: true and sends <messages> broadcasts of a
//      <payload>-byte JSON object {"seq":n,"pad":…} (<window> in flight), waits for every ack
//      and every echo; the epoch is the first echo's meta.epoch;
//   2. a fresh socket (upgraded before the clock starts) sends the join with
//      config.broadcast.recover = {epoch, offset: 0}, self: false;
//   3. measured: join sent -> join reply (recovered: true), and join sent -> the <messages>th
//      recovered broadcast read; the server's CPU time in between (all its threads, schedstat);
//      before it, for comparison, a plain join of the topic (no recover) on another fresh socket.
// Checked: the reply came before any broadcast, said recovered: true, and the broadcasts carry
// offsets 1..<messages> in order, the same epoch, seq = offset, nothing else. After the reply,
// frames are only counted and kept (as strings) while they arrive; they are parsed after the
// clock stops, so the figure is the server's and the raw client's, not a JSON parser's.
// One JSON line per run to --out (default bench/results/history-recovery-<stamp>.jsonl), the
// summary (median [min–max]) as Markdown on stdout.
//
//   setsid -w node bench/history/recovery.js --server /tmp/rt-bench-bin/realtime-server [--reps 5] [--messages 10000]

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
  reps: 5,
  messages: 10000,
  payload: 100,
  window: 256,
  topic: 'realtime:recover',
  timeout: 30,
  nice: -15,
  out: '',
};
const OPT = optionsOrExit('recovery.js', (argv) => parseOptions(argv, DEFAULTS));
const log = makeLog('history/recovery');
const STAMP = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
const OUT = OPT.out || path.join(REPO_DIR, 'bench/results', `history-recovery-${STAMP}.jsonl`);
const SECRET = `bench-${require('node:crypto').randomBytes(12).toString('hex')}`;
const TOKEN = benchToken(SECRET);
const N = OPT.messages;

/** CPU time of every thread of `pid` in ms (/proc/<pid>/task/<tid>/schedstat, ns), or null. */
function threadsCpuMs(pid) {
  try {
    let ns = 0;
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
      ns += Number(fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'latin1').split(' ')[0]);
    }
    return ns / 1e6;
  } catch {
    return null;
  }
}

const waitFor = async (cond, sec, what) => {
  const t0 = performance.now();
  while (!cond()) {
    if (performance.now() - t0 > sec * 1000) throw new Error(`timed out after ${sec} s waiting for ${what}`);
    await sleep(5);
  }
};

async function runOnce(rep) {
  const env = { TENANT_HISTORY_SIZE: String(N), TENANT_HISTORY_TTL_SECONDS: '600' };
  const srv = await startServer({ bin: OPT.server, port: OPT.port, secret: SECRET, env, nice: OPT.nice });
  const line = { kind: 'history-recovery', session: STAMP, rep, env, messages: N, payloadBytes: OPT.payload };
  const clients = [];
  try {
    // 1. Publish N with acks and echoes.
    const pub = await Phx.connect(OPT.port, TOKEN);
    clients.push(pub);
    let echoes = 0;
    let firstEcho = null;
    pub.onBroadcast = (buf, start, end) => {
      if (echoes++ === 0) firstEcho = buf.toString('utf8', start, end);
    };
    const j = await pub.join(OPT.topic, { self: true, ack: true }, TOKEN);
    if (j.status !== 'ok') throw new Error(`publisher join refused: ${JSON.stringify(j)}`);
    let next = 0;
    let acked = 0;
    let ackErrors = 0;
    const tPub = performance.now();
    await new Promise((resolve) => {
      const pump = () => {
        while (next < N && next - acked < OPT.window) {
          pub.publish(OPT.topic, 'm', payloadOf(++next, OPT.payload)).then((r) => {
            acked++;
            if (r.status !== 'ok') ackErrors++;
            if (acked === N) resolve();
            else pump();
          });
        }
      };
      pump();
    });
    await waitFor(() => echoes === N, OPT.timeout, `${N} echoes (have ${echoes})`);
    line.publishSec = Number(((performance.now() - tPub) / 1000).toFixed(2));
    line.ackErrors = ackErrors;
    const first = JSON.parse(firstEcho);
    const epoch = first.payload.meta && first.payload.meta.epoch;
    if (!epoch || first.payload.meta.offset !== 1) throw new Error(`first echo has no position 1: ${firstEcho}`);
    line.epoch = epoch;
    await sleep(500);

    // For comparison: a plain join (no recover) of the same topic on a fresh socket.
    const plain = await Phx.connect(OPT.port, TOKEN);
    clients.push(plain);
    plain.onBroadcast = () => {};
    const tp = performance.now();
    const plainReply = await plain.join(OPT.topic, { self: false, ack: false }, TOKEN);
    line.plainJoinReplyMs = Number((plainReply.at - tp).toFixed(2));
    plain.close();
    await sleep(200);

    // 2. A fresh socket recovers from offset 0.
    const rec = await Phx.connect(OPT.port, TOKEN);
    clients.push(rec);
    const frames = [];
    let bytes = 0;
    let tLast = null;
    let tFirst = null;
    let reads = 0; // socket reads that carried recovered broadcasts (one clock value per read)
    let lastRead = null;
    let broadcastsBeforeReply = null;
    // Until the join reply, frames go through Phx (parsed; the reply resolves the join). After
    // it, every frame is kept as it is and counted with no search at all: the checks below parse
    // them all, so anything that is not the next recovered broadcast is still caught.
    let replied = false;
    const viaPhx = rec.onMessage.bind(rec);
    rec.onMessage = (buf, start, end, now) => {
      if (replied) return keep(buf, start, end, now);
      viaPhx(buf, start, end, now);
      if (rec.pending.size === 0) replied = true; // the reply was read (and taken out of pending)
    };
    const keep = (buf, start, end, now) => {
      if (frames.length === 0) tFirst = now;
      if (now !== lastRead) {
        reads++;
        lastRead = now;
      }
      frames.push(buf.latin1Slice(start, end)); // a V8 string: cheaper to keep than a Buffer (the bytes are ASCII)
      bytes += end - start;
      if (frames.length === N) tLast = now;
    };
    rec.onBroadcast = keep; // broadcasts before the reply (there must be none: checked below)
    const cpu0 = threadsCpuMs(srv.pid);
    const rss0 = procRssKB(srv.pid);
    const self0 = process.cpuUsage();
    const t0 = performance.now();
    const reply = await rec.join(OPT.topic, { self: false, ack: false, recover: { epoch, offset: 0 } }, TOKEN);
    broadcastsBeforeReply = reply.broadcastsBefore; // counted when the reply was read, in frame order
    await waitFor(() => tLast !== null, OPT.timeout, `${N} recovered messages (have ${frames.length})`);
    const cpu1 = threadsCpuMs(srv.pid);
    const self1 = process.cpuUsage(self0);
    const rss1 = procRssKB(srv.pid);
    await sleep(200); // anything extra would arrive now

    // 3. Checks, after the clock.
    const problems = [];
    if (reply.status !== 'ok' || !reply.response || reply.response.recovered !== true) problems.push(`join reply ${JSON.stringify(reply)}`);
    if (broadcastsBeforeReply !== 0) problems.push(`${broadcastsBeforeReply} broadcasts before the join reply`);
    if (frames.length !== N) problems.push(`${frames.length} broadcasts, expected ${N}`);
    let inOrder = 0;
    frames.forEach((f, i) => {
      const m = JSON.parse(f);
      const meta = m.payload && m.payload.meta;
      const ok = m.topic === OPT.topic && meta && meta.epoch === epoch && meta.offset === i + 1 && m.payload.payload && m.payload.payload.seq === i + 1;
      if (ok) inOrder++;
      else if (problems.length < 5) problems.push(`frame ${i + 1}: ${f.slice(0, 200)}`);
    });
    problems.push(...rec.errors.slice(0, 3), ...pub.errors.slice(0, 3));
    Object.assign(line, {
      joinReplyMs: Number((reply.at - t0).toFixed(2)),
      firstMs: Number((tFirst - t0).toFixed(2)),
      lastMs: Number((tLast - t0).toFixed(2)),
      reads,
      messagesPerSec: Math.round(N / ((tLast - t0) / 1000)),
      bytesReceived: bytes,
      serverCpuMs: cpu0 === null || cpu1 === null ? null : Number((cpu1 - cpu0).toFixed(1)),
      serverRssKB: { before: rss0, after: rss1 },
      clientCpuMs: Number(((self1.user + self1.system) / 1000).toFixed(1)),
      inOrder,
      ok: problems.length === 0,
      problems,
    });
  } catch (e) {
    line.error = String(e && e.stack ? e.stack : e);
  } finally {
    for (const c of clients) c.close();
    await srv.stop();
  }
  fs.appendFileSync(OUT, `${JSON.stringify(line)}\n`);
  return line;
}

async function main() {
  if (!fs.existsSync(OPT.server)) throw new Error(`no server binary at ${OPT.server}`);
  fs.mkdirSync(path.dirname(OUT), { recursive: true });
  if (!pinSelf(1)) log('warning: could not pin this process to CPU 1');
  setAutogroupNice(OPT.nice); // only when started as a session leader (setsid -w node ...)
  log(`results -> ${OUT}`);
  const lines = [];
  for (let rep = 1; rep <= OPT.reps; rep++) {
    const l = await runOnce(rep);
    lines.push(l);
    log(l.error
      ? `rep ${rep}: ERROR ${l.error.split('\n')[0]}`
      : `rep ${rep}: reply ${l.joinReplyMs} ms, ${N}th message ${l.lastMs} ms (${l.messagesPerSec}/s, ${l.bytesReceived} B), first ${l.firstMs} ms, ${l.reads} reads, server CPU ${l.serverCpuMs} ms, client CPU ${l.clientCpuMs} ms, plain join ${l.plainJoinReplyMs} ms, in order ${l.inOrder}/${N}${l.ok ? '' : `, PROBLEMS: ${l.problems.join(' | ')}`}`);
  }
  const good = lines.filter((l) => !l.error);
  const r = (f, d = 1) => {
    const xs = good.map(f).filter((x) => x !== null);
    return xs.length ? `${median(xs).toFixed(d)} [${Math.min(...xs).toFixed(d)}–${Math.max(...xs).toFixed(d)}]` : '-';
  };
  console.log(`# History recovery (session ${STAMP}): ${N} missed messages of ${OPT.payload} B, recover {epoch, offset: 0}\n`);
  console.log('| reps | all checks ok | join → reply ms | join → last message ms | messages/s | server CPU ms | client CPU ms | plain join → reply ms | bytes received |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  console.log(`| ${good.length}/${lines.length} | ${good.filter((l) => l.ok).length} | ${r((l) => l.joinReplyMs, 2)} | ${r((l) => l.lastMs, 1)} | ${r((l) => l.messagesPerSec, 0)} | ${r((l) => l.serverCpuMs, 1)} | ${r((l) => l.clientCpuMs, 1)} | ${r((l) => l.plainJoinReplyMs, 2)} | ${good.length ? good[0].bytesReceived : '-'} |`);
  if (good.some((l) => !l.ok) || good.length < lines.length) process.exitCode = 1;
}

main().catch((e) => {
  console.error(`recovery.js: ${e && e.stack ? e.stack : e}`);
  process.exit(1);
});
