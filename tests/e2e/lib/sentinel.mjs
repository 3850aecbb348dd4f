// Sentinels for "nothing (more) arrived" assertions. Instead of waiting out a quiet period, a test
// sends a marker after the action under test along a path on which the server keeps order, waits
// until the marker arrived wherever it asserts, and then asserts on what arrived before it. A test
// then never passes because it looked too early.
//
// The orders the server keeps (and the tests rely on):
// - Frames one socket sends are handled in order on that socket's I/O loop, and what they publish
//   reaches each other socket in that order (a broadcast sentinel from the same sender).
// - One socket's frames are answered in order, after everything the server wrote to that socket
//   while handling the earlier ones (an ack or heartbeat round trip on the same socket).
// - One HTTP connection's requests are handled in order on one I/O loop (httpConnection below).
// - The change stream of a tenant delivers in commit order (a later transaction as sentinel); the
//   presence store handles every track/untrack of a node in order.
//
//   const id = await sentinelBroadcast(sender.ch, [receiver.got]);
//   assert.deepEqual(withoutSentinels(receiver.got.items).map((m) => m.event), ['a', 'b']);
import assert from 'node:assert/strict';
import http from 'node:http';
import { joinChannel } from './clients.mjs';
import { literal } from './pg.mjs';
import { httpRequest, Recorder, show } from './util.mjs';

/** The event name of every sentinel broadcast. */
export const SENTINEL_EVENT = 'sentinel';

let counter = 0;
/** A fresh sentinel id (payload field `sentinel`). */
export const newSentinelId = () => `sentinel-${process.pid}-${++counter}`;

/**
 * The sentinel id carried by `item`, or undefined: a realtime-js broadcast ({ event, payload }),
 * a limits-helpers channelLog entry, a raw text frame ({ event: 'broadcast', payload: { event,
 * payload } }) or a raw binary frame ({ userEvent, payload }).
 */
export function sentinelIdOf(item) {
    if (!item || typeof item !== 'object') return undefined;
    if (item.event === SENTINEL_EVENT || item.userEvent === SENTINEL_EVENT) return item.payload?.sentinel;
    if (item.event === 'broadcast' && item.payload?.event === SENTINEL_EVENT) return item.payload.payload?.sentinel;
    return undefined;
}

/** Is `item` a sentinel broadcast (event SENTINEL_EVENT, in any of the shapes of sentinelIdOf)? */
export function isSentinel(item) {
    if (!item || typeof item !== 'object') return false;
    return item.event === SENTINEL_EVENT || item.userEvent === SENTINEL_EVENT
        || (item.event === 'broadcast' && item.payload?.event === SENTINEL_EVENT);
}

/** `items` without the sentinel broadcasts. */
export const withoutSentinels = (items) => items.filter((item) => !isSentinel(item));

/** Waits until each Recorder of `receivers` recorded the sentinel `id`. */
export async function awaitSentinel(receivers, id, { timeoutMs = 3000 } = {}) {
    for (const rec of receivers) {
        await rec.next((item) => sentinelIdOf(item) === id, timeoutMs, `sentinel ${id}`);
    }
}

/**
 * Sends a sentinel broadcast on the joined realtime-js channel `ch` (after the action under test,
 * from the same sender) and waits until each Recorder of `receivers` recorded it. With ack on the
 * channel, the ack must be ok. Returns the sentinel id.
 */
export async function sentinelBroadcast(ch, receivers, { timeoutMs = 3000 } = {}) {
    const id = newSentinelId();
    const status = await ch.send({ type: 'broadcast', event: SENTINEL_EVENT, payload: { sentinel: id } });
    assert.equal(status, 'ok', `sentinel broadcast on ${ch.topic}`);
    await awaitSentinel(receivers, id, { timeoutMs });
    return id;
}

/**
 * Pushes a sentinel broadcast from the raw client `raw` on its joined `topic` and waits until each
 * Recorder of `receivers` recorded it. Returns the sentinel id.
 */
export async function rawSentinelBroadcast(raw, topic, joinRef, receivers, { timeoutMs = 3000 } = {}) {
    const id = newSentinelId();
    raw.push(topic, 'broadcast', { type: 'broadcast', event: SENTINEL_EVENT, payload: { sentinel: id } }, { joinRef });
    await awaitSentinel(receivers, id, { timeoutMs });
    return id;
}

/**
 * Broadcasts a sentinel from the database (realtime.send as `psql`, a psqlAs session) to `topic`
 * and waits until each Recorder of `receivers` recorded it: the broadcast stream delivers in
 * commit order, so everything committed before has been delivered by then. Returns the id.
 */
export async function dbSentinelBroadcast(psql, topic, isPrivate, receivers, { timeoutMs = 8000 } = {}) {
    const id = newSentinelId();
    await psql.exec(`SELECT realtime.send(${literal(JSON.stringify({ sentinel: id }))}::jsonb, ${literal(SENTINEL_EVENT)}, ${literal(topic)}, ${isPrivate})`);
    await awaitSentinel(receivers, id, { timeoutMs });
    return id;
}

/**
 * Commits `sql` (the sentinel transaction, after the one under test) with the psqlAs session `db`
 * and waits until each [recorder, predicate] of `waits` recorded a matching item: the change
 * stream delivers in commit order, so every earlier change has been delivered by then.
 */
export async function sentinelRows(db, sql, waits, { timeoutMs = 8000, what = 'the sentinel row' } = {}) {
    await db.exec(sql);
    for (const [rec, predicate] of waits) {
        await rec.next(predicate, timeoutMs, `${what} in ${rec.name}`);
    }
}

/**
 * A Phoenix heartbeat round trip on the socket of the realtime-js `client`. The server answers a
 * socket's frames in order, so once the reply is here, everything the server wrote to the socket
 * while handling earlier frames (replies, echoes, system messages, closes) has been received.
 */
export function heartbeatBarrier(client, timeoutMs = 3000) {
    const socket = client.socketAdapter.getSocket();
    return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for a heartbeat reply`)), timeoutMs);
        // ping() sends a heartbeat with a fresh ref and calls back on its reply, after the
        // channels were given every earlier message.
        const sent = socket.ping(() => {
            clearTimeout(timer);
            resolve();
        });
        if (!sent) {
            clearTimeout(timer);
            reject(new Error('heartbeat barrier: the socket is not connected'));
        }
    });
}

/** The heartbeat round trip of heartbeatBarrier for a RawClient; resolves the reply frame. */
export async function rawHeartbeat(raw, timeoutMs = 3000) {
    const ref = raw.nextRef();
    raw.push('phoenix', 'heartbeat', {}, { ref, omitJoinRef: true });
    const reply = await raw.reply(ref, timeoutMs, 'phoenix');
    assert.equal(reply.payload?.status, 'ok', `heartbeat reply ${show(reply.payload)}`);
    return reply;
}

/**
 * One kept-alive HTTP connection to `server`: every request() goes over the same TCP connection
 * (asserted), so the server handles them in order on one I/O loop and what they publish reaches
 * each subscriber in that order. Takes httpRequest options; close() when done.
 */
export function httpConnection(server) {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    let port;
    return {
        async request(opts) {
            const res = await httpRequest(server, { ...opts, agent });
            if (port === undefined) port = res.localPort;
            assert.equal(res.localPort, port, `HTTP ${opts.method || 'GET'} ${opts.path} went over the same connection`);
            return res;
        },
        close() {
            agent.destroy();
        },
    };
}

/**
 * Sentinel paths between the sockets of several realtime-js `clients` when the channels under test
 * cannot carry one (another tenant's topic, a channel without the permission): each client joins
 * the public `topic` as well, recording its broadcasts. from(client) sends a sentinel there from
 * `client`'s socket and waits until every other member got it: what that socket published before
 * (on any topic) has reached the others by then.
 */
export async function sentinelMesh(clients, topic) {
    const members = [];
    for (const client of clients) {
        const ch = client.channel(topic, { config: { broadcast: { self: false, ack: true } } });
        const got = new Recorder(`sentinels on ${topic}`);
        ch.on('broadcast', { event: SENTINEL_EVENT }, got.fn);
        await joinChannel(ch);
        members.push({ client, ch, got });
    }
    return {
        members,
        async from(client, { timeoutMs = 3000 } = {}) {
            const sender = members.find((m) => m.client === client);
            assert.ok(sender, 'the sender is a member of the mesh');
            return await sentinelBroadcast(sender.ch, members.filter((m) => m !== sender).map((m) => m.got), { timeoutMs });
        },
    };
}
