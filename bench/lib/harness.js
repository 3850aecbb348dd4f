'use strict';
// Small pieces every loadgen needs: rounding for the JSON line, sleeping, progress logging,
// problem samples, the hard self-exit and the drain after the writer/publisher stops.

const { performance } = require('node:perf_hooks');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** `x` to `d` decimals as a number; null for null, undefined, NaN and infinities (valid JSON). */
const round = (x, d = 1) => (x === null || x === undefined || !Number.isFinite(x) ? null : Number(x.toFixed(d)));

/** Progress on stderr as `[tag 12.3s] text` (seconds since the process started). */
const makeLog = (tag) => (s) => process.stderr.write(`[${tag} ${(performance.now() / 1000).toFixed(1)}s] ${s}\n`);

/** Keep the first 5 samples of a kind of problem, 400 characters each: enough to diagnose. */
const push5 = (arr, v) => arr.length < 5 && arr.push(String(v).slice(0, 400));

/**
 * Every run is bounded: after `sec` s, `onExpire()` (which prints the error line) and exit 3.
 * The timer does not keep the process alive on its own.
 */
function armHardTimeout(sec, onExpire) {
  const timer = setTimeout(() => {
    onExpire();
    process.exit(3);
  }, sec * 1000);
  timer.unref();
  return timer;
}

/**
 * Wait for the last deliveries: until `done()`, or `stallSec` s without a change of
 * `progress()`, or `maxSec` s in all; polls every `pollMs` ms. Returns the start time
 * (performance.now()), for the caller's drain duration.
 */
async function drain({ done, progress, maxSec, stallSec, pollMs }) {
  const t0 = performance.now();
  let last = progress();
  let lastProgress = performance.now();
  while (!done() && performance.now() - t0 < maxSec * 1000 && performance.now() - lastProgress < stallSec * 1000) {
    await sleep(pollMs);
    if (progress() !== last) {
      last = progress();
      lastProgress = performance.now();
    }
  }
  return t0;
}

module.exports = { sleep, round, makeLog, push5, armHardTimeout, drain };
