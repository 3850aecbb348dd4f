'use strict';
// The PostgreSQL side of the postgres_changes loadgens (bench/pgchanges, bench/regex): the
// cluster of a tests/support/postgres/pg-cluster.sh env file, one `psql` writer fed through
// stdin, one-off queries, and the CPU of the cluster's processes next to the server's.

const fs = require('node:fs');
const path = require('node:path');
const { spawn, execFileSync } = require('node:child_process');
const { performance } = require('node:perf_hooks');
const { procStat, selfCpuSec, cpuTotals } = require('./proc');
const { round } = require('./harness');

/** KEY=value lines (values possibly in single quotes) of a pg.env file. */
function readEnvFile(file) {
  const env = {};
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const m = /^([A-Z_]+)=(.*)$/.exec(line);
    if (m) env[m[1]] = m[2].replace(/^'(.*)'$/, '$1');
  }
  return env;
}

/** The cluster of `envFile`: { env, psql (path of the binary), postmaster (pid, 0 if unknown) }. */
function pgCluster(envFile) {
  const env = readEnvFile(envFile);
  const psql = path.join(env.RT_PG_BIN || '/usr/lib/postgresql/15/bin', 'psql');
  let postmaster = 0;
  try {
    postmaster = Number(fs.readFileSync(path.join(env.RT_PG_DATA, 'postmaster.pid'), 'latin1').split('\n')[0]);
  } catch {
    /* no cluster CPU figures */
  }
  return { env, psql, postmaster };
}

/** The realtime role's connection options of psql for database `db`. */
const psqlConnArgs = (pg, db) => ['-h', pg.env.RT_PG_HOST, '-p', pg.env.RT_PG_PORT, '-U', pg.env.RT_PG_USER, '-d', db];

/**
 * One `psql` child (the realtime role, owner of the bench table) that runs what `write()` gives
 * it, in order, on one connection: so commit order is write order.
 */
class PsqlWriter {
  /** killAfterMs: how long stop() waits for psql to finish its input before SIGKILL. */
  constructor(pg, db, { killAfterMs }) {
    this.pg = pg;
    this.db = db;
    this.killAfterMs = killAfterMs;
    this.proc = null;
    this.err = '';
    this.exit = null;
  }

  start() {
    const pg = this.pg;
    this.proc = spawn(pg.psql, ['-X', '-q', '-v', 'ON_ERROR_STOP=1', ...psqlConnArgs(pg, this.db), '-f', '-'], {
      env: { ...process.env, PGPASSWORD: pg.env.RT_PG_PASSWORD, PGCONNECT_TIMEOUT: '10' },
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    this.proc.stderr.setEncoding('utf8');
    this.proc.stderr.on('data', (c) => (this.err += c));
    this.proc.on('exit', (code, sig) => (this.exit = { code, sig }));
    this.proc.stdin.on('error', () => {});
    // The test cluster runs with synchronous_commit = off, where a commit reaches the WAL sender
    // only when the WAL writer flushes (wal_writer_delay, 200 ms): every change would wait for it.
    // A production database commits synchronously; so does the writer here (fsync is off, so a
    // flush costs little).
    this.proc.stdin.write('SET synchronous_commit = on;\n');
  }

  /** Queue SQL text (complete statements, newline-terminated). */
  write(sql) {
    this.proc.stdin.write(sql);
  }

  /** End the input and wait until psql has run it and exited (killed after killAfterMs). */
  stop() {
    return new Promise((resolve) => {
      if (this.exit) return resolve();
      this.proc.on('exit', () => resolve());
      this.proc.stdin.end();
      setTimeout(() => {
        if (!this.exit) this.proc.kill('SIGKILL');
      }, this.killAfterMs);
    });
  }

  /** The result line's writerError: psql's exit status and stderr, or null if all went well. */
  errorText() {
    if (this.exit && this.exit.code !== 0) return `psql exit ${this.exit.code}: ${this.err.slice(0, 300)}`;
    return this.err ? this.err.slice(0, 300) : null;
  }
}

/** The single value of a query, as text; `error: ...` instead of throwing. */
function psqlValue(pg, db, sql) {
  try {
    return execFileSync(pg.psql, ['-X', '-qtA', ...psqlConnArgs(pg, db), '-c', sql], {
      env: { ...process.env, PGPASSWORD: pg.env.RT_PG_PASSWORD }, timeout: 10000,
    }).toString().trim();
  } catch (e) {
    return `error: ${e.message.split('\n')[0]}`;
  }
}

/** CPU seconds of the postmaster and all its children (backends, walsender, ...), per pid. */
function pgCpu(postmaster) {
  const out = new Map();
  if (!postmaster) return out;
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    const st = procStat(pid);
    if (st && (pid === postmaster || st.ppid === postmaster)) out.set(pid, st.cpu);
  }
  return out;
}

function pgCpuDelta(a, b) {
  // Processes that exited in between lose their last slice; new ones count from 0.
  let sum = 0;
  for (const [pid, cpu] of b) sum += cpu - (a.get(pid) || 0);
  return sum;
}

/**
 * CPU use over an interval: snapshot() at its start and end, usage(a, b) for the figures of the
 * result line (% of one core; the machine in % of 200, both cores).
 */
function usageProbe(serverPid, postmaster) {
  const snapshot = () => ({
    t: performance.now(),
    server: serverPid ? (procStat(serverPid) || { cpu: null }).cpu : null,
    pg: pgCpu(postmaster),
    self: selfCpuSec(),
    machine: cpuTotals(),
  });
  const usage = (a, b) => {
    const sec = (b.t - a.t) / 1000;
    const pct = (x) => round((100 * x) / sec, 0);
    const out = {
      sec,
      serverCpuPct: a.server !== null && b.server !== null ? pct(b.server - a.server) : null,
      serverCpuSec: a.server !== null && b.server !== null ? b.server - a.server : null,
      pgCpuPct: postmaster ? pct(pgCpuDelta(a.pg, b.pg)) : null,
      loadgenCpuPct: pct(b.self - a.self),
      machineBusyPct: round((200 * (b.machine.busy - a.machine.busy)) / (b.machine.all - a.machine.all), 0), // of 200%
    };
    // CPU taken by everything else on the machine (other engineers' builds), % of one core.
    out.othersCpuPct = round(out.machineBusyPct - (out.serverCpuPct || 0) - (out.pgCpuPct || 0) - out.loadgenCpuPct, 0);
    return out;
  };
  return { snapshot, usage };
}

module.exports = { pgCluster, PsqlWriter, psqlValue, usageProbe };
