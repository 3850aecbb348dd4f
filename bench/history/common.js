'use strict';
// What bench/history/memory.js and recovery.js share: our server started as bench/run.sh starts
// it (same environment and tenant limits, pinned to CPU 0, a session of its own, one worker),
// this process pinned to CPU 1, and a small Phoenix client (vsn 1.0.0, realtime-js's join
// payload) over the loadgens' raw WebSocket client (../lib/ws-client.js).

const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { spawn, execFileSync } = require('node:child_process');
const { performance } = require('node:perf_hooks');

const { WsConn, clientFrame } = require('../lib/ws-client');
const { sleep } = require('../lib/harness');

const REPO_DIR = path.resolve(__dirname, '..', '..');

/** Pin this process (every thread) to `cpu`; false when taskset is missing or refuses. */
function pinSelf(cpu) {
  try {
    execFileSync('taskset', ['-a', '-p', '-c', String(cpu), String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function portOpen(port) {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/**
 * Start `bin --workers 1` on 127.0.0.1:`port` with run.sh's environment plus `env`, pinned to
 * `cpu`, in a session of its own whose autogroup gets `nice` (root only; ignored otherwise).
 * Resolves { pid, stop() } once the port accepts TCP; rejects if it exits or takes over 15 s.
 */
async function startServer({ bin, port, secret, env = {}, cpu = 0, nice = -15, logFile }) {
  if (await portOpen(port)) throw new Error(`port ${port} is already in use; not measuring someone else's server`);
  const dataDir = fs.mkdtempSync('/tmp/qtrealtime-bench-history.');
  const logPath = logFile || path.join(dataDir, 'server.log');
  const log = fs.openSync(logPath, 'a');
  const child = spawn('taskset', ['-c', String(cpu), bin, '--workers', '1'], {
    detached: true, // setsid: its own session, so its own autogroup
    stdio: ['ignore', log, log],
    env: {
      ...process.env,
      PORT: String(port),
      SEED_SELF_HOST: 'true',
      API_JWT_SECRET: secret,
      DATA_DIR: dataDir,
      LISTEN_ADDRESS: '127.0.0.1',
      LOG_LEVEL: 'warning',
      TENANT_MAX_CONCURRENT_USERS: '1000000',
      TENANT_MAX_EVENTS_PER_SECOND: '1000000000',
      TENANT_MAX_BYTES_PER_SECOND: '1000000000',
      TENANT_MAX_JOINS_PER_SECOND: '1000000',
      TENANT_MAX_CHANNELS_PER_CLIENT: '100',
      ...env,
    },
  });
  fs.closeSync(log);
  let exited = null;
  const exit = new Promise((resolve) => child.once('exit', (code, sig) => resolve((exited = { code, sig }))));
  const stop = async () => {
    if (exited === null) {
      try {
        process.kill(child.pid, 'SIGTERM');
      } catch {
        /* gone */
      }
      const killer = setTimeout(() => exited === null && process.kill(child.pid, 'SIGKILL'), 3000);
      await exit;
      clearTimeout(killer);
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  const t0 = performance.now();
  while (performance.now() - t0 < 15000) {
    if (exited !== null) {
      const tail = fs.readFileSync(logPath, 'utf8').slice(-500).trim();
      await stop();
      throw new Error(`server exited during start-up (${JSON.stringify(exited)}): ${tail}`);
    }
    if (await portOpen(port)) {
      if (nice) {
        try {
          fs.writeFileSync(`/proc/${child.pid}/autogroup`, String(nice));
        } catch {
          /* not permitted: normal priority */
        }
      }
      return { pid: child.pid, stop };
    }
    await sleep(100);
  }
  await stop();
  throw new Error(`server did not accept TCP on 127.0.0.1:${port} within 15 s`);
}

const BROADCAST_NEEDLE = Buffer.from('"event":"broadcast"');
const REPLY_NEEDLE = Buffer.from('"event":"phx_reply"');

/**
 * One Phoenix socket (vsn 1.0.0). `await Phx.connect(port, token)`; `join(topic, broadcast)`
 * resolves with the join reply's payload; `publish(topic, event, payload)` pushes a broadcast
 * and, on a channel joined with ack: true, resolves on its phx_reply. Broadcast frames go to
 * `onBroadcast(buf, start, end, now)` unparsed (a subarray of a shared buffer: copy what is
 * kept); everything else is parsed. Replies resolve with their payload plus `at` (the clock of
 * the read) and `broadcastsBefore` (broadcast frames read on this socket before the reply).
 */
class Phx {
  constructor(port, token) {
    this.refs = 0;
    this.pending = new Map(); // ref -> resolve
    this.joinRefs = new Map(); // topic -> join_ref
    this.onBroadcast = null;
    this.broadcasts = 0; // broadcast frames passed to onBroadcast
    this.errors = [];
    this.ready = new Promise((resolve, reject) => {
      this.opened = resolve;
      this.failed = reject;
    });
    this.conn = new WsConn(this, {
      port,
      url: `/socket/websocket?apikey=${encodeURIComponent(token)}&vsn=1.0.0`,
      host: `127.0.0.1:${port}`,
    });
    this.hb = setInterval(() => this.send('phoenix', 'heartbeat', {}, null), 20000);
    this.hb.unref();
  }

  static async connect(port, token) {
    const c = new Phx(port, token);
    await c.ready;
    return c;
  }

  onOpen() {
    this.opened();
  }

  onClose(reason) {
    clearInterval(this.hb);
    this.closed = reason;
    this.failed(new Error(reason));
    for (const resolve of this.pending.values()) resolve({ status: 'closed', response: { reason } });
    this.pending.clear();
  }

  onMessage(buf, start, end, now) {
    // Search the frame only: a miss must not scan the rest of the shared read buffer.
    const frame = buf.subarray(start, end);
    if (this.onBroadcast && frame.indexOf(BROADCAST_NEEDLE) !== -1) {
      if (frame.indexOf(REPLY_NEEDLE) === -1) {
        this.broadcasts++;
        return this.onBroadcast(buf, start, end, now);
      }
    }
    let m;
    try {
      m = JSON.parse(buf.toString('utf8', start, end));
    } catch {
      return this.errors.push(`unparsable frame: ${buf.toString('utf8', start, Math.min(end, start + 200))}`);
    }
    if (m.event === 'phx_reply' && this.pending.has(m.ref)) {
      const resolve = this.pending.get(m.ref);
      this.pending.delete(m.ref);
      // at: the clock of the read; broadcastsBefore: broadcast frames this socket read before it.
      return resolve({ ...m.payload, at: now, broadcastsBefore: this.broadcasts });
    }
    if (m.event !== 'phx_reply' && m.event !== 'presence_state') this.errors.push(JSON.stringify(m).slice(0, 300));
  }

  send(topic, event, payload, joinRef) {
    const ref = String(++this.refs);
    const m = { topic, event, payload, ref };
    if (joinRef !== null && joinRef !== undefined) m.join_ref = joinRef;
    this.conn.sendFrame(clientFrame(0x1, JSON.stringify(m)));
    return ref;
  }

  request(topic, event, payload, joinRef) {
    return new Promise((resolve) => {
      const ref = this.send(topic, event, payload, joinRef);
      this.pending.set(ref, resolve);
    });
  }

  /** The realtime-js join payload with `broadcast` as config.broadcast; resolves with the reply. */
  join(topic, broadcast, token) {
    const ref = String(this.refs + 1);
    this.joinRefs.set(topic, ref);
    return this.request(
      topic,
      'phx_join',
      {
        config: { broadcast, presence: { key: '', enabled: false }, postgres_changes: [], private: false },
        access_token: token,
      },
      ref,
    );
  }

  /** A broadcast push; resolves on its ack (only if the channel was joined with ack: true). */
  publish(topic, event, payload) {
    return this.request(topic, 'broadcast', { type: 'broadcast', event, payload }, this.joinRefs.get(topic));
  }

  close() {
    clearInterval(this.hb);
    this.conn.close('closed by the bench');
  }
}

/** A JSON payload object of exactly `bytes` bytes once serialised: {"seq":n,"pad":"xx…"}. */
function payloadOf(seq, bytes) {
  const base = JSON.stringify({ seq, pad: '' }).length;
  return { seq, pad: 'x'.repeat(Math.max(0, bytes - base)) };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n === 0 ? null : n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
};

module.exports = { REPO_DIR, pinSelf, portOpen, startServer, Phx, payloadOf, median };
