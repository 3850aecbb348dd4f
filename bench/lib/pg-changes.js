'use strict';
// realtime-js style postgres_changes subscribers for the loadgens of bench/pgchanges and
// bench/regex: a raw Phoenix client (vsn 1.0.0 objects) per subscriber with its own token and
// channel, the join with one postgres_changes binding, `Subscribed to PostgreSQL`, heartbeats,
// the full check of sampled frames, and the connect phase with a bounded number in flight.
// What a delivered change means (latency, which rows are due) stays with each benchmark.

const { performance } = require('node:perf_hooks');
const { WsConn } = require('./ws-client');
const { sleep, round, push5 } = require('./harness');

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

// ---- the hot path: byte searches in a delivered frame, no JSON.parse ----------------------------

const REC = Buffer.from('"record":{');
const CREATED = Buffer.from('"created_at":"');
const ID = Buffer.from('"id":');
const COMMIT_TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;

/** The decimal integer at buf[i..end), or -1 if there is no digit there. */
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

// ---- one subscriber -----------------------------------------------------------------------------

/**
 * A postgres_changes subscriber on table public.items. Subclasses define
 *   onChange(buf, start, end, r, now)  a frame with a record (r: offset of `"record":{`),
 *   recordOk(rec, id)                  the record of a fully checked frame is the expected one,
 *   onRecordlessChange(text)           a postgres_changes frame without a record,
 * and the static COLUMNS ("name:type,..." sorted) of the table.
 * Options: name (in samples), topic, token, binding (the postgres_changes entry of the join),
 * hooks (from subscribeAll), stats (the loadgen's state, with the clientCounters()),
 * port and tenant (Host: <tenant>.localhost), sampleTag (prefix of this client's malformed and
 * error samples), closeOnSubscribeError (give up at once instead of waiting for the timeout).
 */
class ChangesClient {
  constructor({ name, topic, token, binding, hooks, stats, port, tenant, sampleTag = '', closeOnSubscribeError = false }) {
    this.name = name;
    this.topic = topic;
    this.token = token;
    this.binding = binding;
    this.hooks = hooks;
    this.S = stats;
    this.port = port;
    this.tenant = tenant;
    this.sampleTag = sampleTag;
    this.closeOnSubscribeError = closeOnSubscribeError;
    this.ready = false; // join ok
    this.subscribed = false; // "Subscribed to PostgreSQL"
    this.bindingId = null;
    this.ref = 1;
    this.hbRef = null;
    this.first = true; // its first delivery is always checked in full
  }

  start() {
    this.conn = new WsConn(this, {
      port: this.port,
      url: `/socket/websocket?apikey=${encodeURIComponent(this.token)}&vsn=1.0.0`,
      host: `${this.tenant}.localhost:${this.port}`,
      clock: wallNow,
    });
  }

  onOpen() {
    this.conn.send(JSON.stringify({
      topic: this.topic,
      event: 'phx_join',
      payload: {
        config: {
          broadcast: { self: false, ack: false },
          presence: { key: '', enabled: false },
          postgres_changes: [this.binding],
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

  /** The sample text of a disconnect after subscribing. */
  disconnectSample(reason) {
    return `${this.name} disconnected: ${reason}`;
  }

  onClose(reason) {
    if (this.subscribed) {
      this.S.disconnects++;
      push5(this.S.unexpectedSamples, this.disconnectSample(reason));
    } else this.hooks.onFail(this, reason);
  }

  onMessage(buf, start, end, now) {
    const r = buf.indexOf(REC, start);
    if (r !== -1 && r < end && this.subscribed) return this.onChange(buf, start, end, r, now);
    this.onControl(buf.toString('utf8', start, end));
  }

  bad(what) {
    this.S.malformed++;
    push5(this.S.malformedSamples, what);
  }

  /** Full check of one delivered frame (server-protocol §6.5 shape). */
  check(text, id) {
    const S = this.S;
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
      if (names !== this.constructor.COLUMNS) problems.push(`columns ${names}`);
      const rec = d.record || {};
      if (!this.recordOk(rec, id)) problems.push(`record ${JSON.stringify(rec)}`);
      if ('old_record' in d) problems.push('old_record on an INSERT');
    }
    if (problems.length) this.bad(`${this.sampleTag}${problems.join('; ')}: ${text.slice(0, 300)}`);
  }

  /** Everything that is not a change with a record: replies, system messages, presence. */
  onControl(text) {
    const S = this.S;
    let m;
    try {
      m = JSON.parse(text);
    } catch {
      S.unexpected++;
      return push5(S.unexpectedSamples, `unparsable: ${text}`);
    }
    if (m.event === 'phx_reply' && m.topic === 'phoenix' && m.ref === this.hbRef) return;
    if (m.event === 'phx_reply' && m.topic === this.topic && m.ref === '1' && !this.ready) return this.onJoinReply(m, text);
    if (m.event === 'system' && m.topic === this.topic && m.payload && m.payload.extension === 'postgres_changes') {
      return this.onSystem(m, text);
    }
    if (m.event === 'presence_state' || m.event === 'presence_diff') return;
    if (m.event === 'postgres_changes') return this.onRecordlessChange(text);
    S.unexpected++;
    push5(S.unexpectedSamples, `${this.name}: ${text}`);
  }

  onJoinReply(m, text) {
    if (!(m.payload && m.payload.status === 'ok')) return this.conn.close(`join refused: ${text}`);
    this.ready = true;
    // The binding's id, which every change for it must carry in payload.ids.
    const pc = m.payload.response && m.payload.response.postgres_changes;
    this.bindingId = Array.isArray(pc) && pc[0] ? pc[0].id : null;
    if (this.bindingId === null) {
      this.S.unexpected++;
      push5(this.S.unexpectedSamples, `join reply without a postgres_changes id: ${text}`);
    }
  }

  /** The postgres_changes system message: "Subscribed to PostgreSQL", or an error. */
  onSystem(m, text) {
    const S = this.S;
    if (m.payload.status === 'ok' && !this.subscribed) {
      this.subscribed = true;
      S.subscribedOk++;
      return this.hooks.onSubscribed(this);
    }
    S.subscribeErrors++;
    push5(S.subscribeErrorSamples, `${this.sampleTag}${text}`);
    if (this.closeOnSubscribeError && !this.subscribed) this.conn.close(`subscribe error: ${text}`);
  }
}

// ---- the counters of the checks ----------------------------------------------------------------

/** The counters ChangesClient and subscribeAll keep, to spread into a loadgen's state object. */
function clientCounters() {
  return {
    malformed: 0,
    malformedSamples: [],
    errorPayloads: 0, // data.errors not null, or a change without a record
    errorSamples: [],
    unexpected: 0,
    unexpectedSamples: [],
    disconnects: 0,
    sampled: 0, // frames checked in full
    connectFailures: 0,
    failureSamples: [],
    subscribedOk: 0,
    subscribeErrors: 0,
    subscribeErrorSamples: [],
  };
}

/** Those counters as the result line reports them (in this order). */
const checkFigures = (S) => ({
  malformed: S.malformed,
  malformedSamples: S.malformedSamples,
  errorPayloads: S.errorPayloads,
  errorSamples: S.errorSamples,
  sampledChecks: S.sampled,
  unexpected: S.unexpected,
  unexpectedSamples: S.unexpectedSamples,
  disconnects: S.disconnects,
});

/** The samples for the error line of a connect phase that did not complete. */
const subscribeFailureSamples = (S) => ({
  failureSamples: S.failureSamples,
  subscribeErrorSamples: S.subscribeErrorSamples,
  unexpectedSamples: S.unexpectedSamples,
});

// ---- the measurement window --------------------------------------------------------------------

/**
 * The measurement window of `sec` s: the rows the writer inserts meanwhile (ids
 * S.windowIdFirst .. S.windowIdLast, S.inserted being the last id written) are the window rows,
 * whose latency counts whenever they arrive; S.measuring is true during it.
 */
async function measureWindow(S, sec) {
  S.windowIdFirst = S.inserted + 1;
  S.windowIdLast = Infinity;
  S.measuring = true;
  await sleep(sec * 1000);
  S.measuring = false;
  S.windowIdLast = S.inserted;
}

// ---- the connect phase --------------------------------------------------------------------------

/**
 * Start `total` clients (`create(i, hooks)` makes client i), at most `conc` handshakes and joins
 * in flight, and wait until each has `Subscribed to PostgreSQL` or failed, or `timeoutSec` s.
 * Failures are counted in stats.connectFailures with samples in stats.failureSamples.
 * Returns { clients, subscribed, failed, sec, ok } (ok: all subscribed in time).
 */
async function subscribeAll({ total, conc, timeoutSec, create, stats }) {
  const clients = [];
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
      stats.connectFailures++;
      push5(stats.failureSamples, `${c.name}: ${reason}`);
      pump();
      if (subscribed + failed === total) allDone();
    },
  };
  function pump() {
    while (inFlight < conc && next < total) {
      const c = create(next++, hooks);
      clients.push(c);
      inFlight++;
      c.start();
    }
  }
  const t0 = performance.now();
  pump();
  const timeout = sleep(timeoutSec * 1000).then(() => 'timeout');
  const outcome = await Promise.race([allSubscribed.then(() => 'ok'), timeout]);
  const sec = round((performance.now() - t0) / 1000, 2);
  return { clients, subscribed, failed, sec, ok: outcome === 'ok' && subscribed === total };
}

module.exports = {
  wallNow, parseTs, parseIntAt, REC, CREATED, ID,
  ChangesClient, clientCounters, checkFigures, subscribeFailureSamples, subscribeAll, measureWindow,
};
