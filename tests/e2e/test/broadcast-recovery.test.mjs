// Positions, history and recovery of broadcasts (issue 19; docs/design-notes.md "Positions,
// history and recovery"), on a single node, with the unchanged realtime-js client and raw clients:
//
// - every broadcast (realtime-js kind-3 pushes, POST /api/broadcast, realtime.send) carries
//   meta.epoch (16 lowercase hex digits) and meta.offset (1, 2, … per topic: tenant + privacy +
//   sub-topic), the same for every subscriber; postgres_changes pushes carry the topic's next
//   offset in a top-level `meta` of the push payload (realtime-js drops it: raw clients);
// - per topic the last history_size messages no older than history_ttl_seconds are kept
//   (tenant settings, set through the tenant API; history_size 0 turns positions off);
// - a join with config.broadcast.recover {epoch, offset} answers response.recovered true and
//   delivers what came after that offset before any live message, or recovered false with a
//   reason ("epoch changed", "history too short", "history disabled") and live messages only;
// - config.broadcast.replay {since, limit} works on public channels: the retained messages since
//   then, the newest `limit` (default 25) of them, oldest first.
//
// The recovering channels are written exactly as README shows: the broadcast callback writes the
// last position into the channel's own join config (channel.params.config.broadcast.recover),
// and realtime-js serialises that object afresh for every (re)join (Push.send calls
// joinPush.payload(), whose config.broadcast is the application's object; see
// node_modules/@supabase/realtime-js/dist/main/phoenix/channelAdapter.js updateJoinPayload and
// node_modules/@supabase/phoenix/priv/static/phoenix.cjs.js Channel.rejoin → Push.resend → send).
// The join reply is seen through channel.joinPush.receive('ok'), whose hooks survive rejoins.
//
// Each test creates its own tenant through the tenant API (history settings and
// max_events_per_second 1,000,000, so that the streams below are never rate limited). The
// database tests share one throwaway PostgreSQL 15 cluster (a database per tenant) and are
// skipped without its binaries.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import { adminApi, operatorToken, startPgCluster } from '../lib/admin.mjs';
import { ClientPool, joinChannel, subscribe } from '../lib/clients.mjs';
import { token } from '../lib/jwt.mjs';
import { cdcSettings, createDatabase, literal, PG_BIN, pgBinariesPresent, psqlAs } from '../lib/pg.mjs';
import { RawClient } from '../lib/raw.mjs';
import {
    awaitSentinel, heartbeatBarrier, httpConnection, newSentinelId, rawHeartbeat, SENTINEL_EVENT, sentinelBroadcast, withoutSentinels,
} from '../lib/sentinel.mjs';
import { SELF_HOST_SECRET, startServer } from '../lib/server.mjs';
import {
    assertConsecutive, pacedPublisher, positionOf, rawBroadcast, rawBroadcasts, recoveringChannel, sequenceReport,
} from '../lib/recovery.mjs';
import { startTcpProxy } from '../lib/tcp-proxy.mjs';
import { Recorder, show, waitFor } from '../lib/util.mjs';

const EPOCH = /^[0-9a-f]{16}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const pgSkip = !pgBinariesPresent() && `PostgreSQL 15 binaries not found in ${PG_BIN} (install postgresql-15 or set RT_PG_BIN)`;
/** A tenant's first join connects to its database and runs the migrations. */
const FIRST_JOIN_MS = 30_000;
/** A database write may take this long to arrive (through the WAL). */
const DELIVERY_MS = 8_000;

let server;
let api;
let pool;
let seq = 0;
const unique = (name) => `${name}-${process.pid % 10000}-${++seq}`;
/** HTTP connections opened by a test (closed after it). */
const httpConns = [];

before(async () => {
    server = await startServer();
    pool = new ClientPool(server);
    api = adminApi(server, { token: operatorToken(SELF_HOST_SECRET) });
});
afterEach(async () => {
    for (const conn of httpConns.splice(0)) conn.close();
    await pool.cleanup();
});
after(async () => {
    const result = await server.stop();
    assert.equal(result.crashedBeforeStop, null, `server exited during the tests:\n${result.stderr}`);
});

/**
 * Creates a tenant through the tenant API with `fields` (history_size, history_ttl_seconds,
 * extensions, …). Returns { id, secret, token(claims) }.
 */
async function createTenant(prefix, fields = {}) {
    const id = unique(prefix);
    const secret = `${id}-jwt-secret-0123456789abcdefghijklmnopqrstuvwxyz`;
    const base = { external_id: id, jwt_secret: secret, max_events_per_second: 1_000_000 };
    // Without a database, realtime-js needs migrations_ran ≥ 81 (as in tenant-api.test.mjs).
    const body = fields.extensions ? { ...base, ...fields } : { ...base, extensions: [], migrations_ran: 81, ...fields };
    const res = await api.create(body);
    assert.equal(res.status, 201, `create tenant ${id}: ${res.status} ${res.body}`);
    return { id, secret, token: (claims = {}) => token(secret, claims) };
}

/** A realtime-js client of `tenant` (token with `claims`; on `clients`, default the file's pool). */
function clientOf(tenant, { claims, ...opts } = {}, clients = pool) {
    return clients.client({ tenant: tenant.id, token: tenant.token(claims), ...opts });
}

/** A raw v2 client of `tenant`. */
async function rawOf(tenant, claims = {}) {
    return pool.track(await RawClient.connect(server, { vsn: '2.0.0', token: tenant.token(claims), host: server.hostFor(tenant.id) }));
}

/**
 * POST /api/broadcast for `tenant` over one kept-alive connection (requests are handled, and what
 * they publish delivered, in order). send(messages) asserts 202.
 */
function httpPublisher(tenant, claims = {}) {
    const conn = httpConnection(server);
    httpConns.push(conn);
    return {
        async send(messages) {
            const res = await conn.request({
                method: 'POST', path: '/api/broadcast', host: server.hostFor(tenant.id),
                headers: { apikey: tenant.token(claims) }, body: { messages },
            });
            assert.equal(res.status, 202, `POST /api/broadcast ${show(messages, 200)}: ${res.status} ${res.body}`);
        },
    };
}

/** A joined realtime-js channel that publishes on `sub` (self false, ack as given). */
async function publisherChannel(client, sub, { ack = true, isPrivate = false } = {}) {
    const ch = client.channel(sub, { config: { broadcast: { self: false, ack }, ...(isPrivate ? { private: true } : {}) } });
    await joinChannel(ch);
    return ch;
}


describe('broadcast positions and recovery (no database)', () => {
    test('a subscriber whose TCP connection is reset mid-stream (500 messages/s) ends with every message exactly once, in order; its rejoin carried its last position and was answered recovered: true', { timeout: 120_000 }, async (t) => {
        const TOTAL = 3000;
        const PER_SECOND = 500;
        const RESET_AFTER = 800; // messages the subscriber has when its connection is reset
        const MISSED = 300; // messages published while it is disconnected (at least)
        const tenant = await createTenant('rec-reset', { history_size: 5000 });
        const sub = unique('reset');

        // The subscriber reaches the server through a TCP proxy that can reset its connection.
        const proxy = await startTcpProxy({ port: server.port });
        const proxied = new ClientPool({ ...server, wsUrl: (prefix = '/realtime/v1') => `ws://127.0.0.1:${proxy.port}${prefix}` });
        t.after(async () => {
            await proxied.cleanup();
            await proxy.close();
        });
        const client = clientOf(tenant, { reconnectAfterMs: () => 100 }, proxied);
        const closes = new Recorder('subscriber socket closes');
        const opens = new Recorder('subscriber socket opens');
        client.socketAdapter.getSocket().onClose((event) => closes.push({ code: event?.code }));
        client.socketAdapter.getSocket().onOpen(() => opens.push({ at: Date.now() }));
        const s = recoveringChannel(client, sub);
        const statuses = await joinChannel(s.channel);

        const pubClient = clientOf(tenant, { wire: false });
        const pubCh = await publisherChannel(pubClient, sub, { ack: false });

        // 500 numbered messages per second (kind-3 pushes) from one socket.
        const publisher = pacedPublisher(pubCh, TOTAL, PER_SECOND);

        await waitFor(() => s.got.items.length >= RESET_AFTER, 20_000, `${RESET_AFTER} messages at the subscriber`,
            () => ({ received: s.got.items.length, sent: publisher.sent }));
        // Reset the proxied connection (both sides see a reset) and refuse new ones for a while.
        proxy.pause({ mode: 'refuse' });
        await closes.next(() => true, 5000, 'the subscriber to see its socket close after the reset');
        const receivedAtClose = s.got.items.length;
        const positionAtClose = { ...s.channel.params.config.broadcast.recover };
        const sentAtClose = publisher.sent;
        assert.ok(sentAtClose + MISSED < TOTAL, `the reset came mid-stream (sent ${sentAtClose} of ${TOTAL})`);
        // Messages go on while the subscriber is away; then the path heals and it reconnects.
        await waitFor(() => publisher.sent >= sentAtClose + MISSED, 10_000, `${MISSED} messages published during the outage`);
        const sentAtResume = publisher.sent;
        await proxy.resume();
        await waitFor(() => s.replies.items.length >= 2, 15_000, 'the reply to the rejoin', () => ({ opens: opens.items.length, statuses: statuses.items }));
        await publisher.done;
        // The sentinel follows every message of the stream from the same socket.
        await sentinelBroadcast(pubCh, [s.got], { timeoutMs: 20_000 });

        // The reset happened: the socket closed, reconnected through the proxy, the channel rejoined.
        assert.ok(closes.items.length >= 1, 'the subscriber saw its socket close');
        assert.ok(opens.items.length >= 2, `the subscriber reconnected (opens: ${opens.items.length})`);
        assert.ok(proxy.stats.accepted >= 2, `the reconnect went through the proxy (accepted ${proxy.stats.accepted})`);
        assert.ok(statuses.items.some((x) => x.status === 'CHANNEL_ERROR'), `the channel errored on the close: ${show(statuses.items)}`);
        assert.equal(statuses.items.filter((x) => x.status === 'SUBSCRIBED').length, 2, `subscribed twice: ${show(statuses.items)}`);
        assert.ok(receivedAtClose >= RESET_AFTER && receivedAtClose <= sentAtClose,
            `received ${receivedAtClose} before the close (sent ${sentAtClose})`);
        assert.ok(sentAtResume - receivedAtClose >= MISSED, `at least ${MISSED} messages were published while the subscriber was away`);

        // The rejoin carried the position of the last message before the close, and was recovered.
        assert.deepEqual(positionAtClose, positionOf(s.got.items[receivedAtClose - 1]), 'the README pattern kept the last position');
        const joins = client.wire.items
            .filter((f) => f.dir === 'out' && typeof f.data === 'string')
            .map((f) => JSON.parse(f.data))
            .filter((m) => m[2] === `realtime:${sub}` && m[3] === 'phx_join');
        assert.equal(joins.length, 2, `two joins on the wire: ${show(joins)}`);
        assert.equal(joins[0][4].config.broadcast.recover, undefined, 'the first join has no position');
        assert.deepEqual(joins[1][4].config.broadcast.recover, positionAtClose, 'the rejoin carries the last position');
        const [first, rejoin] = s.replies.items;
        assert.notEqual(first.response.recovered, true, `first join reply ${show(first.response)}`);
        assert.equal(rejoin.response.recovered, true, `rejoin reply ${show(rejoin.response)}`);
        assert.equal(rejoin.received, receivedAtClose, 'nothing arrived between the close and the rejoin reply');
        assert.deepEqual(positionOf(s.got.items[receivedAtClose]),
            { epoch: positionAtClose.epoch, offset: positionAtClose.offset + 1 }, 'the first message after the rejoin follows the last one before');

        // Every message exactly once, in order, with offsets 1..TOTAL in one epoch.
        const msgs = withoutSentinels(s.got.items);
        const seqs = msgs.map((m) => m.payload?.seq);
        assert.equal(seqs.length, TOTAL, sequenceReport(seqs, TOTAL));
        assert.ok(seqs.every((x, i) => x === i), sequenceReport(seqs, TOTAL));
        assertConsecutive(msgs, 1, 'the stream');
    });

    test('positions: two subscribers (v2 and v1) see the same epoch and offset for each message, consecutive from 1; HTTP API and client broadcasts share the sequence', async () => {
        const tenant = await createTenant('rec-pos');
        const sub = unique('pos');
        const v2 = recoveringChannel(clientOf(tenant), sub);
        await joinChannel(v2.channel);
        const v1 = recoveringChannel(clientOf(tenant, { vsn: '1.0.0' }), sub);
        await joinChannel(v1.channel);
        const pubCh = await publisherChannel(clientOf(tenant), sub, { ack: true });
        const http = httpPublisher(tenant);
        const steps = ['client', 'http', 'client', 'client', 'http', 'http', 'client', 'http'];
        for (const [i, kind] of steps.entries()) {
            if (kind === 'client') {
                assert.equal(await pubCh.send({ type: 'broadcast', event: `client-${i}`, payload: { i } }), 'ok');
            } else {
                await http.send([{ topic: sub, event: `http-${i}`, payload: { i } }]);
            }
        }
        // A sentinel on each path (the HTTP connection and the publisher's socket): what each sent
        // before has arrived once its sentinel has.
        const httpSentinel = newSentinelId();
        await http.send([{ topic: sub, event: SENTINEL_EVENT, payload: { sentinel: httpSentinel } }]);
        await awaitSentinel([v2.got, v1.got], httpSentinel);
        await sentinelBroadcast(pubCh, [v2.got, v1.got]);
        const byKind = (msgs, kind) => msgs.filter((m) => m.event.startsWith(`${kind}-`)).map((m) => m.payload.i);
        for (const [name, r] of [['v2', v2], ['v1', v1]]) {
            const msgs = withoutSentinels(r.got.items);
            assert.deepEqual(msgs.map((m) => m.event).sort(), steps.map((kind, i) => `${kind}-${i}`).sort(), `${name}: every message once`);
            // The order between the two paths is not the test's; each path keeps its own.
            for (const kind of ['client', 'http']) {
                assert.deepEqual(byKind(msgs, kind), steps.flatMap((k, i) => (k === kind ? [i] : [])), `${name}: the ${kind} messages in order`);
            }
            // One sequence for both paths: in arrival order, 1, 2, … (the two sentinels included).
            assertConsecutive(r.got.items, 1, `${name}: client and HTTP broadcasts`);
        }
        assert.deepEqual(v1.got.items.map((m) => ({ event: m.event, ...positionOf(m) })), v2.got.items.map((m) => ({ event: m.event, ...positionOf(m) })),
            'both subscribers see the same messages in the same order with the same positions');
        // The README pattern followed them.
        assert.deepEqual(v2.channel.params.config.broadcast.recover, positionOf(v2.got.items.at(-1)));

        // Another topic of the tenant has its own sequence, from 1.
        const otherSub = unique('pos-other');
        const other = recoveringChannel(clientOf(tenant), otherSub);
        await joinChannel(other.channel);
        await http.send([{ topic: otherSub, event: 'o', payload: {} }, { topic: otherSub, event: 'sentinel', payload: { sentinel: 'other' } }]);
        await other.got.next((m) => m.event === 'sentinel', 3000, 'the sentinel on the other topic');
        assertConsecutive(other.got.items, 1, 'the other topic');
    });

    test('a recovered join within the history returns exactly the missed messages (recovered: true), then a live message with the next offset', async () => {
        const tenant = await createTenant('rec-window');
        const sub = unique('window');
        const pubCh = await publisherChannel(clientOf(tenant), sub, { ack: true });
        // A watcher sees every message live: once it has one, the message has been numbered.
        const watcher = recoveringChannel(clientOf(tenant), sub);
        await joinChannel(watcher.channel);
        const client = clientOf(tenant);
        const s1 = recoveringChannel(client, sub);
        await joinChannel(s1.channel);
        for (let i = 1; i <= 5; ++i) assert.equal(await pubCh.send({ type: 'broadcast', event: 'm', payload: { i } }), 'ok');
        await s1.got.next((m) => m.payload?.i === 5, 3000, 'message 5 at the first subscriber');
        const epoch = assertConsecutive(s1.got.items, 1, 'the first subscriber');
        const saved = { ...s1.channel.params.config.broadcast.recover };
        assert.deepEqual(saved, { epoch, offset: 5 }, 'the README pattern kept the last position');

        // It leaves and misses 6..12.
        assert.equal(await client.removeChannel(s1.channel), 'ok');
        for (let i = 6; i <= 12; ++i) assert.equal(await pubCh.send({ type: 'broadcast', event: 'm', payload: { i } }), 'ok');
        await watcher.got.next((m) => m.payload?.i === 12, 3000, 'message 12 at the watcher');

        const s2 = recoveringChannel(client, sub, { recover: saved });
        await joinChannel(s2.channel);
        // A live message right after the join reply: it must come after the recovered ones.
        assert.equal(await pubCh.send({ type: 'broadcast', event: 'm', payload: { i: 13 } }), 'ok');
        await s2.got.next((m) => m.payload?.i === 13, 3000, 'the live message 13');
        await sentinelBroadcast(pubCh, [s2.got, watcher.got]);

        assert.equal(s2.replies.items.length, 1);
        assert.equal(s2.replies.items[0].response.recovered, true, `join reply ${show(s2.replies.items[0].response)}`);
        assert.equal(s2.replies.items[0].received, 0, 'nothing before the reply');
        const msgs = withoutSentinels(s2.got.items);
        assert.deepEqual(msgs.map((m) => m.payload.i), [6, 7, 8, 9, 10, 11, 12, 13], 'the missed messages, then the live one');
        assert.equal(assertConsecutive(s2.got.items, 6, 'the recovered join'), epoch, 'the same epoch');
        // The recovered messages carry the positions the watcher saw live.
        assert.deepEqual(msgs.map(positionOf), withoutSentinels(watcher.got.items).slice(5).map(positionOf));
    });

    test('recovery outside the history: history_size 5 and 20 missed → recovered: false "history too short"; a made-up epoch → "epoch changed"; then live messages only', async () => {
        const tenant = await createTenant('rec-short', { history_size: 5 });
        const sub = unique('short');
        const http = httpPublisher(tenant);
        const watcher = recoveringChannel(clientOf(tenant), sub);
        await joinChannel(watcher.channel);
        const client = clientOf(tenant);
        const s1 = recoveringChannel(client, sub);
        await joinChannel(s1.channel);
        for (let i = 1; i <= 3; ++i) await http.send([{ topic: sub, event: 'm', payload: { i } }]);
        await s1.got.next((m) => m.payload?.i === 3, 3000, 'message 3');
        const epoch = assertConsecutive(s1.got.items, 1, 'before leaving');
        const saved = { ...s1.channel.params.config.broadcast.recover };
        assert.deepEqual(saved, { epoch, offset: 3 });
        assert.equal(await client.removeChannel(s1.channel), 'ok');
        // 20 missed messages; the history keeps the last 5 (offsets 19..23).
        for (let i = 4; i <= 23; ++i) await http.send([{ topic: sub, event: 'm', payload: { i } }]);
        await watcher.got.next((m) => m.payload?.i === 23, 3000, 'message 23 at the watcher');

        const s2 = recoveringChannel(client, sub, { recover: saved });
        await joinChannel(s2.channel);
        const fake = epoch === '0123456789abcdef' ? 'fedcba9876543210' : '0123456789abcdef';
        const s3c = clientOf(tenant);
        const s3 = recoveringChannel(s3c, sub, { recover: { epoch: fake, offset: 23 } });
        await joinChannel(s3.channel);
        assert.deepEqual(pick(s2.replies.items[0].response), { recovered: false, reason: 'history too short' },
            `join reply ${show(s2.replies.items[0].response)}`);
        assert.deepEqual(pick(s3.replies.items[0].response), { recovered: false, reason: 'epoch changed' },
            `join reply ${show(s3.replies.items[0].response)}`);

        // Live messages only: the next one (24), then nothing else.
        await http.send([{ topic: sub, event: 'm', payload: { i: 24 } }]);
        for (const [name, r, c] of [['history too short', s2, client], ['epoch changed', s3, s3c]]) {
            await r.got.next((m) => m.payload?.i === 24, 3000, `the live message at the ${name} subscriber`);
            await heartbeatBarrier(c);
            assert.deepEqual(r.got.items.map((m) => m.payload.i), [24], `${name}: live messages only`);
            assert.deepEqual(positionOf(r.got.items[0]), { epoch, offset: 24 }, `${name}: the live message's position`);
        }
    });

    test('history_size 0: no epoch or offset in meta (client and HTTP broadcasts); a recover is answered recovered: false "history disabled", then live messages', async () => {
        const tenant = await createTenant('rec-off', { history_size: 0 });
        const sub = unique('off');
        const http = httpPublisher(tenant);
        const pubCh = await publisherChannel(clientOf(tenant), sub, { ack: true });
        const client = clientOf(tenant);
        const s1 = recoveringChannel(client, sub);
        await joinChannel(s1.channel);
        assert.equal(await pubCh.send({ type: 'broadcast', event: 'client', payload: { n: 1 } }), 'ok');
        await http.send([{ topic: sub, event: 'http', payload: { n: 2 } }]);
        await s1.got.next((m) => m.event === 'http', 3000, 'the HTTP broadcast');
        await s1.got.next((m) => m.event === 'client', 3000, 'the client broadcast');
        assert.deepEqual(s1.got.items.map((m) => m.event).sort(), ['client', 'http']);
        for (const m of s1.got.items) {
            assert.equal(m.meta?.epoch, undefined, `no epoch: ${show(m)}`);
            assert.equal(m.meta?.offset, undefined, `no offset: ${show(m)}`);
        }
        assert.equal(s1.channel.params.config.broadcast.recover, undefined, 'nothing for the README pattern to keep');

        const s2 = recoveringChannel(client, unique('off-recover'), { recover: { epoch: 'aaaaaaaaaaaaaaaa', offset: 1 } });
        await joinChannel(s2.channel);
        assert.deepEqual(pick(s2.replies.items[0].response), { recovered: false, reason: 'history disabled' },
            `join reply ${show(s2.replies.items[0].response)}`);
        const s3 = recoveringChannel(clientOf(tenant), sub, { recover: { epoch: 'aaaaaaaaaaaaaaaa', offset: 1 } });
        await joinChannel(s3.channel);
        assert.deepEqual(pick(s3.replies.items[0].response), { recovered: false, reason: 'history disabled' },
            `join reply on a topic with messages ${show(s3.replies.items[0].response)}`);
        await sentinelBroadcast(pubCh, [s3.got, s1.got]);
        assert.deepEqual(s3.got.items.map((m) => m.event), ['sentinel'], 'live messages only');
        assert.equal(s3.got.items[0].meta?.offset, undefined);
    });

    test('replay.since on a public channel: the retained messages published since then, the newest `limit` (default 25), oldest first, with their positions; then live ones', async () => {
        const tenant = await createTenant('rec-replay');
        const http = httpPublisher(tenant);

        /** Publishes `before` messages a1.., picks `since`, publishes `after` messages b1..; returns the live view. */
        async function publishAround(sub, before, after) {
            const topic = `realtime:${sub}`;
            const live = await rawOf(tenant);
            assert.equal((await live.join(topic)).payload.status, 'ok');
            const startedAt = Date.now();
            for (let i = 1; i <= before; ++i) await http.send([{ topic: sub, event: 'a', payload: { i } }]);
            // Every `a` was published before its 202; `since` is a later millisecond.
            const lastA = Date.now();
            await waitFor(() => Date.now() > lastA, 1000, 'the clock to pass the last message before since');
            const since = Date.now();
            for (let i = 1; i <= after; ++i) await http.send([{ topic: sub, event: 'b', payload: { i } }]);
            await live.frames.next((f) => rawBroadcast(f, topic)?.event === 'b' && rawBroadcast(f, topic).payload.i === after,
                3000, `the last message on ${sub} live`);
            const seen = rawBroadcasts(live, topic);
            assert.equal(seen.length, before + after);
            assertConsecutive(seen, 1, `live on ${sub}`);
            return { topic, sub, seen, since, startedAt };
        }

        /** A raw client joined on the topic with `replay`; returns it and the index of its join reply. */
        async function replayed(around, replay) {
            const r = await rawOf(tenant);
            const reply = await r.join(around.topic, { config: { broadcast: { self: false, replay } } });
            assert.equal(reply.payload.status, 'ok', `join with replay ${show(replay)}: ${reply.text}`);
            return { r, from: r.frames.items.indexOf(reply) };
        }

        const key = (m) => `${m.event}${m.payload.i}`;
        const expectReplay = async (around, joined, expectedKeys, what) => {
            const topic = around.topic;
            const got = rawBroadcasts(joined.r, topic, joined.from);
            const live = got.at(-1);
            assert.equal(live?.event, 'live', `${what}: the live message last: ${show(got.map(key))}`);
            assert.deepEqual(got.slice(0, -1).map(key), expectedKeys, `${what}: the replayed messages, oldest first`);
            const byKey = new Map(around.seen.map((m) => [key(m), positionOf(m)]));
            assert.deepEqual(got.slice(0, -1).map(positionOf), expectedKeys.map((k) => byKey.get(k)), `${what}: replayed with their positions`);
            assert.deepEqual(positionOf(live), { epoch: around.seen[0].meta.epoch, offset: around.seen.length + 1 }, `${what}: the live message's position`);
        };
        const keys = (event, from, to) => Array.from({ length: to - from + 1 }, (_, k) => `${event}${from + k}`);

        // 3 before since, 30 after: limit 5 → b26..b30; no limit → the newest 25, b6..b30.
        const big = await publishAround(unique('replay-big'), 3, 30);
        const limited = await replayed(big, { since: big.since, limit: 5 });
        const byDefault = await replayed(big, { since: big.since });
        const one = await replayed(big, { since: big.since, limit: 1 });
        // 3 before since, 4 after: since leaves a1..a3 out; an earlier since takes them.
        const small = await publishAround(unique('replay-small'), 3, 4);
        const sinceOnly = await replayed(small, { since: small.since });
        const everything = await replayed(small, { since: small.startedAt - 1000, limit: 25 });

        // A live message on each topic, published after every join: the sentinel.
        await http.send([{ topic: big.sub, event: 'live', payload: { i: 0 } }, { topic: small.sub, event: 'live', payload: { i: 0 } }]);
        for (const [around, joined] of [[big, limited], [big, byDefault], [big, one], [small, sinceOnly], [small, everything]]) {
            await joined.r.frames.next((f) => rawBroadcast(f, around.topic)?.event === 'live', 3000, `the live message on ${around.sub}`);
        }
        await expectReplay(big, limited, keys('b', 26, 30), 'limit 5');
        await expectReplay(big, byDefault, keys('b', 6, 30), 'default limit 25');
        await expectReplay(big, one, ['b30'], 'limit 1');
        await expectReplay(small, sinceOnly, keys('b', 1, 4), 'since after the a messages');
        await expectReplay(small, everything, [...keys('a', 1, 3), ...keys('b', 1, 4)], 'since before everything');
    });
});

/** recovered and reason of a join reply's response. */
function pick(response) {
    return { recovered: response?.recovered, reason: response?.reason };
}

describe('broadcast positions and recovery with a tenant database', { skip: pgSkip }, () => {
    let pgDir;
    let pg;
    let slots = 0;

    before(async () => {
        pgDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rt-e2e-recovery-'));
        pg = await startPgCluster(path.join(pgDir, 'pg'));
    });
    after(async () => {
        await pg?.stop();
        if (pgDir) fs.rmSync(pgDir, { recursive: true, force: true });
    });

    /**
     * A tenant (tenant API) with its own database, a table `items` in the publication, and the
     * broadcast stream running: a warm-up channel with replication_ready got "Replication
     * connection established". Returns { tenant, db } (db: psql as the realtime role).
     */
    async function dbTenant(prefix, fields = {}) {
        const database = `rt_rec_${process.pid % 10000}_${++slots}`;
        await createDatabase(pg.env, database);
        const db = psqlAs(pg.env, { database });
        await db.exec(`CREATE TABLE items (id int PRIMARY KEY, v text);
                       GRANT SELECT ON items TO anon, authenticated;
                       CREATE PUBLICATION supabase_realtime FOR TABLE items;`);
        const tenant = await createTenant(prefix, {
            extensions: [{ type: 'postgres_cdc_rls', settings: cdcSettings(pg.env, database, { slot_name: `${database}_slot` }) }],
            ...fields,
        });
        const ch = clientOf(tenant, { timeout: FIRST_JOIN_MS }).channel(unique('warmup'), { config: { broadcast: { replication_ready: true } } });
        const system = new Recorder('warm-up system messages');
        ch.on('system', {}, system.fn);
        await subscribe(ch, FIRST_JOIN_MS).next((x) => x.status === 'SUBSCRIBED', FIRST_JOIN_MS * 2, 'the warm-up channel SUBSCRIBED');
        await system.next((m) => m?.extension === 'system' && m?.message === 'Replication connection established', 65_000,
            'Replication connection established');
        return { tenant, db, database };
    }

    test('database broadcasts: one transaction of realtime.send calls arrives in call order with consecutive offsets and meta.id; a later join recovering from before them gets them again (recovered: true)', { timeout: 120_000 }, async () => {
        const { tenant, db } = await dbTenant('rec-db');
        const sub = unique('dbsend');
        const s1 = recoveringChannel(clientOf(tenant), sub);
        await joinChannel(s1.channel);
        await db.exec(`SELECT realtime.send('{"k":0}'::jsonb, 'before', ${literal(sub)}, false)`);
        const beforeMsg = await s1.got.next((m) => m.event === 'before', DELIVERY_MS, 'the message before the transaction');
        const start = positionOf(beforeMsg);
        assert.match(String(start.epoch), EPOCH);
        assert.ok(Number.isInteger(start.offset) && start.offset >= 1, `offset ${show(start)}`);
        await db.exec(`BEGIN;
            ${[1, 2, 3, 4, 5].map((k) => `SELECT realtime.send('{"k":${k}}'::jsonb, 'ev', ${literal(sub)}, false);`).join('\n')}
            COMMIT;`);
        await s1.got.next((m) => m.payload?.k === 5, DELIVERY_MS, 'the last message of the transaction');
        const sent = s1.got.items.filter((m) => m.event === 'ev');
        assert.deepEqual(sent.map((m) => m.payload.k), [1, 2, 3, 4, 5], 'call order');
        assertConsecutive(s1.got.items, start.offset, 'the messages of the transaction after the first');
        for (const m of sent) {
            assert.match(String(m.meta?.id), UUID, `meta.id: ${show(m.meta)}`);
            assert.equal(m.meta.id, m.payload.id, 'meta.id is the row id (= payload id)');
        }
        assert.equal(new Set(sent.map((m) => m.meta.id)).size, 5, 'one row id each');

        // A second subscriber recovering from the message before them.
        const c2 = clientOf(tenant);
        const s2 = recoveringChannel(c2, sub, { recover: start });
        await joinChannel(s2.channel);
        assert.equal(s2.replies.items[0].response.recovered, true, `join reply ${show(s2.replies.items[0].response)}`);
        await db.exec(`SELECT realtime.send('{"k":6}'::jsonb, 'live', ${literal(sub)}, false)`);
        await s2.got.next((m) => m.event === 'live', DELIVERY_MS, 'the live message after the recovery');
        await heartbeatBarrier(c2);
        const view = (m) => ({ event: m.event, k: m.payload.k, id: m.meta?.id, ...positionOf(m) });
        assert.deepEqual(s2.got.items.slice(0, -1).map(view), sent.map(view), 'the same messages, in call order, with their ids and positions');
        assert.deepEqual(positionOf(s2.got.items.at(-1)), { epoch: start.epoch, offset: start.offset + 6 }, 'then the live one with the next offset');
        assert.equal(s2.got.items.length, 6, `nothing else: ${show(s2.got.items.map(view))}`);
    });

    test('private and public topics of the same name have independent sequences (service_role, HTTP API)', { timeout: 120_000 }, async () => {
        const { tenant } = await dbTenant('rec-priv');
        const sub = unique('both');
        const claims = { role: 'service_role' };
        const pub = recoveringChannel(clientOf(tenant, { claims }), sub);
        await joinChannel(pub.channel, { timeoutMs: 10_000 });
        const priv = recoveringChannel(clientOf(tenant, { claims }), sub, { isPrivate: true });
        await joinChannel(priv.channel, { timeoutMs: 10_000 });
        const http = httpPublisher(tenant, claims);
        const order = [['pub', false], ['priv', true], ['pub', false], ['pub', false], ['priv', true]];
        for (const [i, [event, isPrivate]] of order.entries()) {
            await http.send([{ topic: sub, event, payload: { i }, private: isPrivate }]);
        }
        await http.send([false, true].map((isPrivate) => ({ topic: sub, event: 'sentinel', payload: { sentinel: String(isPrivate) }, private: isPrivate })));
        await pub.got.next((m) => m.event === 'sentinel', 5000, 'the public sentinel');
        await priv.got.next((m) => m.event === 'sentinel', 5000, 'the private sentinel');
        assert.deepEqual(withoutSentinels(pub.got.items).map((m) => m.payload.i), [0, 2, 3], 'public messages');
        assert.deepEqual(withoutSentinels(priv.got.items).map((m) => m.payload.i), [1, 4], 'private messages');
        assertConsecutive(pub.got.items, 1, 'the public topic');
        assertConsecutive(priv.got.items, 1, 'the private topic');
    });

    /** A raw v2 client on `topic` with a postgres_changes INSERT binding on items (live once joined). */
    async function changesClient(tenant, topic, filter) {
        const r = await rawOf(tenant);
        const binding = { event: 'INSERT', schema: 'public', table: 'items', ...(filter ? { filter } : {}) };
        // wait: the reply comes once the binding is live on the change stream.
        const reply = await r.join(topic, { config: { postgres_changes: [binding], postgres_changes_options: { wait: true } }, timeoutMs: FIRST_JOIN_MS });
        assert.equal(reply.payload.status, 'ok', `join ${reply.text}`);
        const system = await r.frames.next((f) => f.event === 'system' && f.payload?.extension === 'postgres_changes', 20_000,
            'the postgres_changes system message', true);
        assert.equal(system.payload.message, 'Subscribed to PostgreSQL', show(system.payload));
        return r;
    }

    /**
     * What a raw client received on `topic`, in arrival order: changes ({ kind: 'change', id,
     * epoch, offset, meta }) and broadcasts ({ kind: 'broadcast', k, epoch, offset, meta }).
     */
    function timeline(r, topic) {
        const out = [];
        for (const f of r.frames.items) {
            if (f.event === 'postgres_changes' && f.topic === topic) {
                out.push({ kind: 'change', id: f.payload?.data?.record?.id, ...positionOf(f.payload), meta: f.payload?.meta, ids: f.payload?.ids });
            } else {
                const b = rawBroadcast(f, topic);
                if (b) out.push({ kind: 'broadcast', k: b.payload?.k, ...positionOf(b), meta: b.meta });
            }
        }
        return out;
    }
    const brief = (items) => items.map(({ kind, id, k, offset }) => `${kind}:${id ?? k}@${offset}`).join(' ');

    test('postgres_changes pushes carry meta {epoch, offset} (raw client) and share the topic\'s sequence with realtime.send; two subscribers see one offset per change', { timeout: 120_000 }, async () => {
        const { tenant, db } = await dbTenant('rec-pgc');
        const sub = unique('pgc');
        const topic = `realtime:${sub}`;
        const all = await changesClient(tenant, topic);
        const some = await changesClient(tenant, topic, 'id=in.(2,4)');
        // Each statement commits on its own: rows 1 and 2, a broadcast, rows 3 and 4.
        await db.exec(`INSERT INTO items VALUES (1, 'a');
                       INSERT INTO items VALUES (2, 'b');
                       SELECT realtime.send('{"k":"b"}'::jsonb, 'ev', ${literal(sub)}, false);
                       INSERT INTO items VALUES (3, 'c');
                       INSERT INTO items VALUES (4, 'd');`);
        for (const r of [all, some]) {
            await r.frames.next((f) => f.event === 'postgres_changes' && f.payload?.data?.record?.id === 4, DELIVERY_MS, 'the change of row 4', true);
        }
        await all.frames.next((f) => rawBroadcast(f, topic)?.event === 'ev', DELIVERY_MS, 'the database broadcast', true);
        await rawHeartbeat(all);
        await rawHeartbeat(some);

        const seen = timeline(all, topic);
        const changes = seen.filter((x) => x.kind === 'change');
        const broadcasts = seen.filter((x) => x.kind === 'broadcast');
        assert.deepEqual(changes.map((x) => x.id), [1, 2, 3, 4], 'the changes in commit order');
        for (const x of changes) {
            assert.deepEqual(Object.keys(x.meta ?? {}).sort(), ['epoch', 'offset'], `meta of a change: ${show(x)}`);
            assert.ok(Array.isArray(x.ids), 'ids next to meta');
        }
        assert.equal(broadcasts.length, 1, show(broadcasts));
        assert.match(String(broadcasts[0].meta?.id), UUID, `meta.id of the database broadcast ${show(broadcasts[0].meta)}`);
        // One sequence for the topic: the five events get offsets 1..5 of one epoch, delivered in
        // offset order; each kind in its commit order.
        const epoch = seen[0].epoch;
        assert.match(String(epoch), EPOCH);
        const pos = ({ epoch: e, offset }) => ({ epoch: e, offset });
        assert.deepEqual(seen.map(pos), [1, 2, 3, 4, 5].map((offset) => ({ epoch, offset })),
            `one sequence, delivered in offset order: ${brief(seen)}`);
        // The filtered subscriber gets rows 2 and 4 and the broadcast with the same positions
        // (gaps between).
        const someSeen = timeline(some, topic);
        const someChanges = someSeen.filter((x) => x.kind === 'change');
        assert.deepEqual(someChanges.map((x) => x.id), [2, 4]);
        assert.deepEqual(someSeen.filter((x) => x.kind === 'broadcast').map(pos), broadcasts.map(pos), 'the broadcast\'s position');
        assert.deepEqual(someChanges.map(pos), [2, 4].map((id) => pos(changes.find((x) => x.id === id))), 'the same offset for the same change');
    });

    test('postgres_changes and realtime.send in one transaction are numbered in call (WAL) order', { timeout: 120_000 }, async () => {
        const { tenant, db } = await dbTenant('rec-pgc-tx');
        const sub = unique('pgc-tx');
        const topic = `realtime:${sub}`;
        const r = await changesClient(tenant, topic);
        await db.exec(`BEGIN;
                       INSERT INTO items VALUES (1, 'a');
                       SELECT realtime.send('{"k":1}'::jsonb, 'ev', ${literal(sub)}, false);
                       INSERT INTO items VALUES (2, 'b');
                       SELECT realtime.send('{"k":2}'::jsonb, 'ev', ${literal(sub)}, false);
                       COMMIT;`);
        await r.frames.next((f) => f.event === 'postgres_changes' && f.payload?.data?.record?.id === 2, DELIVERY_MS, 'the change of row 2', true);
        await r.frames.next((f) => rawBroadcast(f, topic)?.payload?.k === 2, DELIVERY_MS, 'the second broadcast', true);
        await rawHeartbeat(r);
        const seen = timeline(r, topic);
        assert.equal(brief(seen), 'change:1@1 broadcast:1@2 change:2@3 broadcast:2@4',
            'the order of the calls in the transaction, offsets 1..4');
    });
});
