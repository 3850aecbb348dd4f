// Helpers for tests/e2e/test/limits.test.mjs: one ClientPool per test (the limit tests run
// concurrently), realtime-js views of socket closes and channel events, and polling probes for
// rate counters that only change at their ticks.
import assert from 'node:assert/strict';
import { ClientPool, subscribe } from './clients.mjs';
import { Recorder, show, sleep } from './util.mjs';

/** A ClientPool cleaned up when the test `t` ends (tests of this file share one server). */
export function testPool(t, server) {
    const pool = new ClientPool(server);
    t.after(() => pool.cleanup());
    return pool;
}

/**
 * Records the WebSocket close events of a realtime-js client (the phoenix socket's onClose
 * callbacks receive the transport's CloseEvent; realtime-js itself only reports a state change).
 * Returns a Recorder of { code, reason }.
 */
export function closeRecorder(client) {
    const closes = new Recorder('socket closes');
    client.socketAdapter.getSocket().onClose((event) => closes.push({ code: event?.code, reason: event?.reason }));
    return closes;
}

/**
 * Records, in the order realtime-js dispatches them (wire order), a channel's broadcasts
 * ({ kind: 'broadcast', event, payload }), system messages ({ kind: 'system', payload }) and
 * subscribe statuses ({ kind: 'status', status, err }). Must be called before subscribe.
 * Returns { log, subscribed } where subscribed resolves with the first status.
 */
export function channelLog(ch) {
    const log = new Recorder(`events of ${ch.topic}`);
    ch.on('broadcast', { event: '*' }, (m) => log.push({ kind: 'broadcast', event: m.event, payload: m.payload }));
    ch.on('system', {}, (p) => log.push({ kind: 'system', payload: p }));
    return log;
}

/** Subscribes `ch` (statuses also pushed to `log` if given) and waits for SUBSCRIBED. */
export async function subscribed(ch, log, timeoutMs = 3000) {
    const statuses = subscribe(ch, timeoutMs);
    if (log) {
        const push = statuses.push.bind(statuses);
        statuses.push = (item) => {
            push(item);
            log.push({ kind: 'status', status: item.status, err: item.err });
        };
    }
    const first = await statuses.next(() => true, timeoutMs + 1000, `a subscribe status for ${ch.topic}`);
    assert.equal(first.status, 'SUBSCRIBED', `expected SUBSCRIBED for ${ch.topic}, got ${first.status} ${first.err?.message ?? ''}`);
    return statuses;
}

/**
 * Subscribes `ch`, asserts CHANNEL_ERROR with err.message === reason (realtime-js joins the
 * reply's response values), then tears the channel down so realtime-js does not rejoin it.
 */
export async function assertSubscribeError(ch, reason, timeoutMs = 4000) {
    const statuses = subscribe(ch, timeoutMs);
    const first = await statuses.next(() => true, timeoutMs + 1000, `a subscribe status for ${ch.topic}`);
    ch.teardown();
    assert.equal(first.status, 'CHANNEL_ERROR', `expected CHANNEL_ERROR for ${ch.topic}, got ${first.status}`);
    assert.equal(first.err?.message, reason);
    assert.deepEqual(first.err?.cause, { reason });
    return first;
}

/**
 * Calls `probe` every `intervalMs` until `until(result)` holds (default: truthy) and returns that
 * result. Meant for rate counters whose state only changes at a tick, so each probe must be
 * something the test may repeat without disturbing what it measures.
 */
export async function pollUntil(probe, { until = Boolean, intervalMs = 200, timeoutMs = 9000, what = 'condition', context } = {}) {
    const deadline = Date.now() + timeoutMs;
    let last;
    for (;;) {
        const started = Date.now();
        last = await probe();
        if (until(last)) return last;
        if (Date.now() >= deadline) {
            const extra = context ? `\n  state: ${show(context())}` : '';
            throw new Error(`timed out after ${timeoutMs} ms polling for ${what}; last probe: ${show(last)}${extra}`);
        }
        await sleep(Math.max(0, intervalMs - (Date.now() - started)));
    }
}

/** Header subset x-rate-* of an httpRequest/upgradeRequest result. */
export function rateHeaders(res) {
    const h = res.headers || {};
    return { rolling: h['x-rate-rolling'], limit: h['x-rate-limit'], remaining: h['x-rate-limit-remaining'] };
}

/** Asserts the three x-rate headers: limit as given, rolling a non-negative integer, remaining = limit - rolling. */
export function assertRateHeaders(res, limit, what = '') {
    const h = rateHeaders(res);
    assert.equal(h.limit, String(limit), `x-rate-limit ${what}: ${show(res.headers)}`);
    assert.match(String(h.rolling), /^\d+$/, `x-rate-rolling ${what}: ${show(res.headers)}`);
    assert.equal(h.remaining, String(limit - Number(h.rolling)), `x-rate-limit-remaining = limit - rolling ${what}: ${show(res.headers)}`);
    return { rolling: Number(h.rolling), limit: Number(h.limit), remaining: Number(h.remaining) };
}
