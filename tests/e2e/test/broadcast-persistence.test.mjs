// Broadcast persistence (realtime-js 2.119.1's `persist`; upstream supabase/realtime PR #2022) with
// the unchanged realtime-js client and raw Phoenix clients against a throwaway PostgreSQL 15 cluster.
//
// One cluster and one server for the file. Tenant `persist` points its postgres_cdc_rls settings at
// the database rt_persist. The tenant's first join runs the migrations (they create
// realtime.messages); the RLS policies below are created on it as superuser once it exists:
//
//   saved-%   authenticated may read, write broadcasts and persist them (extension 'persistence')
//   plain-%   authenticated may read and write broadcasts, but not persist them
//   keep-%    authenticated may read and persist, but not write broadcasts
//
// A persisted message is stored in realtime.messages (skip_broadcast true, expires_at from its
// ttl), broadcast live once with meta.id = the row's id, and replayed by later joins with
// config.broadcast.replay. Every "nothing (more) arrived" assertion comes after a sentinel
// (lib/sentinel.mjs).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import { startPgCluster } from '../lib/admin.mjs';
import { ClientPool, subscribe } from '../lib/clients.mjs';
import { token } from '../lib/jwt.mjs';
import { createDatabase, literal, PG_BIN, pgBinariesPresent, psqlAs, tenantSeed } from '../lib/pg.mjs';
import { withoutPosition } from '../lib/positions.mjs';
import { encodeKind3, RawClient } from '../lib/raw.mjs';
import { dbSentinelBroadcast, rawSentinelBroadcast, SENTINEL_EVENT, sentinelBroadcast, sentinelMesh, withoutSentinels } from '../lib/sentinel.mjs';
import { startServer } from '../lib/server.mjs';
import { httpRequest, Recorder, show, waitFor } from '../lib/util.mjs';

const pgAvailable = pgBinariesPresent();
const skip = !pgAvailable && `PostgreSQL 15 binaries not found in ${PG_BIN} (install postgresql-15 or set RT_PG_BIN)`;

const SECRET = 'broadcast-persistence-tenant-secret-0123456789';
const TENANT = 'persist';
const DB = 'rt_persist';
/** A message that was sent may take this long to arrive (DB broadcast goes through WAL). */
const DELIVERY_MS = 8_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MAX_TTL = 259_200;
const refused = (topic) => `Unauthorized: You do not have permissions to persist messages on this Channel topic: ${topic}`;
const INVALID_TTL = `Invalid persist: ttl must be a positive integer of seconds up to ${MAX_TTL}`;
const PUBLIC_REFUSED = 'Persistence is only available on private channels';

let seq = 0;
const unique = (name) => `${name}-${++seq}-${process.pid}`;
const tokenFor = (claims = {}) => token(SECRET, claims);
const authed = (sub = 'user-a', extra = {}) => tokenFor({ role: 'authenticated', sub, ...extra });

const POLICIES_SQL = `
CREATE POLICY e2e_read ON realtime.messages FOR SELECT TO authenticated
    USING (realtime.topic() LIKE 'saved-%' OR realtime.topic() LIKE 'plain-%' OR realtime.topic() LIKE 'keep-%');
CREATE POLICY e2e_write ON realtime.messages FOR INSERT TO authenticated
    WITH CHECK ((realtime.topic() LIKE 'saved-%' OR realtime.topic() LIKE 'plain-%')
                AND realtime.messages.extension = 'broadcast');
CREATE POLICY persist ON realtime.messages FOR INSERT TO authenticated
    WITH CHECK (realtime.topic() LIKE 'saved-%' AND realtime.messages.extension = 'persistence');
CREATE POLICY e2e_keep_persist ON realtime.messages FOR INSERT TO authenticated
    WITH CHECK (realtime.topic() LIKE 'keep-%' AND realtime.messages.extension = 'persistence');
`;

/** The text frames a realtime-js client received on `topic`, decoded (v1 objects, v2 arrays). */
function wireFrames(client, topic) {
    const out = [];
    for (const f of client.wire.items) {
        if (f.dir !== 'in' || typeof f.data !== 'string') continue;
        let m;
        try {
            m = JSON.parse(f.data);
        } catch {
            continue;
        }
        const frame = Array.isArray(m) ? { join_ref: m[0], ref: m[1], topic: m[2], event: m[3], payload: m[4] } : m;
        if (frame.topic === topic) out.push(frame);
    }
    return out;
}

/**
 * A `fetch` for realtime-js that sends its request to the test server with `Host` naming the
 * tenant (Node's fetch cannot set Host). Binary bodies go out as they are; every request's path
 * and query is kept in `fetch.calls`.
 */
function hostFetch(server, tenant) {
    const calls = [];
    const fetch = async (url, options = {}) => {
        const u = new URL(url);
        calls.push(u.pathname + u.search);
        let body = options.body;
        if (body instanceof ArrayBuffer) body = Buffer.from(body);
        else if (ArrayBuffer.isView(body)) body = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
        const res = await httpRequest(server, {
            method: options.method || 'GET', path: u.pathname + u.search, headers: { ...(options.headers || {}) },
            body, host: server.hostFor(tenant),
        });
        return {
            status: res.status, statusText: String(res.status), ok: res.status >= 200 && res.status < 300,
            json: async () => JSON.parse(res.body), text: async () => res.body,
        };
    };
    fetch.calls = calls;
    return fetch;
}

/** The payload of a stored/replayed JSON row is the sent one (an added "id" must be the row's id). */
function assertStoredPayload(actual, sent, rowId, what) {
    assert.ok(actual !== null && typeof actual === 'object', `${what}: a JSON object payload: ${show(actual)}`);
    const { id, ...rest } = actual;
    assert.deepEqual(rest, sent, `${what}: the payload that was sent`);
    if (id !== undefined) assert.equal(id, rowId, `${what}: an "id" in the payload is the row's id`);
}

describe('broadcast persistence: persist on private channels, stored rows, replay (realtime-js)', { skip }, () => {
    let pgDir;
    let pg;
    let server;
    let pool;
    let su; // psql as superuser on rt_persist

    before(async () => {
        pgDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rt-e2e-persist-'));
        pg = await startPgCluster(pgDir);
        await createDatabase(pg.env, DB);
        su = psqlAs(pg.env, { database: DB, superuser: true });
        server = await startServer({
            tenants: [tenantSeed(TENANT, SECRET, pg.env, DB, { settings: { slot_name: 'rt_e2e_persist_slot' } })],
        });
        pool = new ClientPool(server);
        // The first join connects to the tenant database and runs the migrations; with
        // replication_ready it also tells when the DB-broadcast stream runs (the sentinels need it).
        // Failures are logged, not thrown, so each test reports its own failure.
        try {
            const c = pool.client({ tenant: TENANT, token: tokenFor() });
            const ch = c.channel(unique('warmup'), { config: { broadcast: { replication_ready: true } } });
            const system = new Recorder('warm-up system messages');
            ch.on('system', {}, system.fn);
            await subscribe(ch, 10_000).next((s) => s.status === 'SUBSCRIBED', 60_000, 'the warm-up channel SUBSCRIBED');
            await system.next((m) => m?.extension === 'system', 65_000, 'Replication connection established');
            await waitFor(async () => (await su.value("SELECT to_regclass('realtime.messages') IS NOT NULL")) === 't',
                30_000, 'realtime.messages (tenant migrations)');
        } catch (err) {
            console.error(`# warm-up of tenant ${TENANT} failed: ${err.message}`);
        }
        try {
            await su.exec(POLICIES_SQL);
        } catch (err) {
            console.error(`# policies on realtime.messages failed: ${err.message}`);
        }
        await pool.cleanup();
    });
    afterEach(() => pool?.cleanup());
    after(async () => {
        let result;
        if (server) result = await server.stop();
        if (pg) await pg.stop();
        if (pgDir) fs.rmSync(pgDir, { recursive: true, force: true });
        if (result) assert.equal(result.crashedBeforeStop, null, `server exited during the tests:\n${result.stderr}`);
    });

    const client = (tok, vsn = '2.0.0', extra = {}) => pool.client({ vsn, tenant: TENANT, token: tok, ...extra });
    const raw = async (tok, vsn = '2.0.0') =>
        pool.track(await RawClient.connect(server, { vsn, token: tok, host: server.hostFor(TENANT) }));

    /**
     * A realtime-js channel (private unless `isPrivate` is false) recording broadcasts. Waits for
     * the first subscribe status and asserts it is SUBSCRIBED.
     */
    async function channel(c, topic, { isPrivate = true, ack = false, replay } = {}) {
        const ch = c.channel(topic, { config: { private: isPrivate, broadcast: { ack, self: false, ...(replay ? { replay } : {}) } } });
        const bc = new Recorder(`broadcasts on ${isPrivate ? 'private' : 'public'} ${topic}${replay ? ` (replay ${show(replay)})` : ''}`);
        ch.on('broadcast', { event: '*' }, bc.fn);
        const statuses = subscribe(ch, 5000);
        const first = await statuses.next(() => true, 6000, `a subscribe status for ${topic}`);
        assert.equal(first.status, 'SUBSCRIBED', `join of ${isPrivate ? 'private' : 'public'} ${topic}: ${first.status} ${first.err ? first.err.message : ''}`);
        return { c, ch, bc };
    }

    /** A raw v2 client joined on the private (or public) `topic` with ack; returns { r, topic, joinRef }. */
    async function rawSender(topic, { isPrivate = true, tok = authed('user-raw') } = {}) {
        const r = await raw(tok);
        const full = `realtime:${topic}`;
        const reply = await r.join(full, { config: { private: isPrivate, broadcast: { ack: true, self: false } } });
        assert.equal(reply.payload.status, 'ok', `raw join of ${full}: ${reply.text}`);
        return { r, topic: full, joinRef: reply.joinRef };
    }

    /** Pushes a kind-3 broadcast with `meta` (a string) from a rawSender; resolves the ack reply's payload. */
    async function pushKind3(sender, { event, meta, payload }) {
        const ref = sender.r.nextRef();
        sender.r.sendBinary(encodeKind3({ joinRef: sender.joinRef, ref, topic: sender.topic, event, meta, payload }));
        const reply = await sender.r.reply(ref, 5000, sender.topic);
        return reply.payload;
    }

    /** The rows of realtime.messages on `topic` (sentinels left out), oldest first. */
    async function rowsOf(topic) {
        const out = await su.exec(`
            SELECT coalesce(json_agg(json_build_object(
                       'id', id, 'topic', topic, 'extension', extension, 'event', event, 'private', private,
                       'payload', payload, 'binary_payload', encode(binary_payload, 'hex'),
                       'skip_broadcast', skip_broadcast, 'expires_at_null', expires_at IS NULL,
                       'ttl_seconds', extract(epoch FROM expires_at - inserted_at))
                   ORDER BY inserted_at, insertion_order), '[]'::json)
              FROM realtime.messages
             WHERE topic = ${literal(topic)} AND event IS DISTINCT FROM ${literal(SENTINEL_EVENT)}`);
        return JSON.parse(out);
    }

    /** Asserts a stored persisted JSON row: broadcast, private, skip_broadcast, and its ttl (null: none). */
    function assertPersistedRow(row, { id, topic, event, sent, ttl = null }, what) {
        assert.ok(row, `${what}: a row in realtime.messages`);
        const { payload, ...rest } = row;
        assert.deepEqual(rest, {
            id, topic, extension: 'broadcast', event, private: true, binary_payload: null,
            skip_broadcast: true, expires_at_null: ttl === null, ttl_seconds: ttl,
        }, `${what}: the stored row`);
        assertStoredPayload(payload, sent, id, what);
    }

    /** A live persisted broadcast: sent payload, meta = { id (a UUID), epoch, offset }; returns the id. */
    function liveId(msg, event, payload, what) {
        const rest = withoutPosition(msg, {}, what);
        assert.equal(typeof rest.meta?.id, 'string', `${what}: meta.id: ${show(msg)}`);
        assert.match(rest.meta.id, UUID, `${what}: meta.id is the row's uuid`);
        assert.deepEqual(rest, { type: 'broadcast', event, payload, meta: { id: rest.meta.id } }, what);
        return rest.meta.id;
    }

    test('socket persist: true (realtime-js, ack): send() → ok, the ack carries the row id, subscribers (v1, v2) get it once with meta.id; the row: broadcast, private, skip_broadcast, no expiry',
        async () => {
            const topic = `saved-${unique('sock')}`;
            const sender = await channel(client(authed('user-a')), topic, { ack: true });
            const rx2 = await channel(client(authed('user-b')), topic);
            const rx1 = await channel(client(authed('user-c'), '1.0.0'), topic);
            const sent = { text: 'kept', n: 1 };
            assert.equal(await sender.ch.send({ type: 'broadcast', event: 'note', payload: sent, persist: true }), 'ok');
            // realtime-js put {"persist":true} into the kind-3 metadata.
            const out = sender.c.wire.items.filter((f) => f.dir === 'out' && Buffer.isBuffer(f.data) && f.data[0] === 3);
            assert.equal(out.length, 1, 'one kind-3 push');
            assert.ok(out[0].data.includes(Buffer.from('{"persist":true}')), `kind-3 metadata: ${out[0].data.toString('hex')}`);
            // The ack reply on the wire: {"status":"ok","response":{"id":"<row id>"}}.
            const replies = wireFrames(sender.c, `realtime:${topic}`).filter((f) => f.event === 'phx_reply');
            assert.equal(replies.length, 2, `the join reply and the ack: ${show(replies)}`);
            const ackId = replies[1].payload?.response?.id;
            assert.deepEqual(replies[1].payload, { status: 'ok', response: { id: ackId } }, 'the ack reply');
            assert.match(String(ackId), UUID, 'the ack carries the row id');

            const got2 = await rx2.bc.next((m) => m.event === 'note', 3000, 'the persisted broadcast (v2)');
            const got1 = await rx1.bc.next((m) => m.event === 'note', 3000, 'the persisted broadcast (v1)');
            assert.equal(liveId(got2, 'note', sent, 'v2 live'), ackId, 'v2: meta.id = the acked row id');
            assert.equal(liveId(got1, 'note', sent, 'v1 live'), ackId, 'v1: meta.id = the acked row id');

            const rows = await rowsOf(topic);
            assert.equal(rows.length, 1, `one row on ${topic} (no persistence probe left): ${show(rows)}`);
            assertPersistedRow(rows[0], { id: ackId, topic, event: 'note', sent }, 'persist: true');

            // Sentinel from the database, committed after the row: a second delivery from the WAL
            // would arrive before it.
            await dbSentinelBroadcast(su, topic, true, [rx2.bc, rx1.bc, sender.bc], { timeoutMs: DELIVERY_MS });
            assert.deepEqual(withoutSentinels(rx2.bc.items).map((m) => m.meta?.id), [ackId], `delivered once (v2): ${show(rx2.bc.items)}`);
            assert.deepEqual(withoutSentinels(rx1.bc.items).map((m) => m.meta?.id), [ackId], `delivered once (v1): ${show(rx1.bc.items)}`);
            assert.deepEqual(withoutSentinels(sender.bc.items), [], 'not echoed to the sender (self false)');
        });

    test('socket persist {ttl} (raw kind 3): ack {"id"} = meta.id live; expires_at - inserted_at = ttl (60, 259200); binary payload in binary_payload',
        async () => {
            const topic = `saved-${unique('ttl')}`;
            const rx = await channel(client(authed('user-b')), topic);
            const sender = await rawSender(topic);
            const ids = {};
            for (const [event, ttl] of [['ttl-60', 60], ['ttl-max', MAX_TTL]]) {
                const reply = await pushKind3(sender, { event, meta: JSON.stringify({ persist: { ttl } }), payload: { ttl } });
                assert.equal(reply.status, 'ok', `ttl ${ttl}: ${show(reply)}`);
                assert.deepEqual(reply, { status: 'ok', response: { id: reply.response?.id } }, `ttl ${ttl}: the ack`);
                assert.match(String(reply.response.id), UUID, `ttl ${ttl}: the ack's id`);
                ids[event] = reply.response.id;
                const got = await rx.bc.next((m) => m.event === event, 3000, `the ${event} broadcast`);
                assert.equal(liveId(got, event, { ttl }, event), ids[event], `${event}: meta.id = the acked id`);
            }
            const bytes = Buffer.from([1, 2, 3, 0, 255]);
            const binReply = await pushKind3(sender, { event: 'bin', meta: '{"persist":true}', payload: bytes });
            assert.deepEqual(binReply, { status: 'ok', response: { id: binReply.response?.id } }, `binary: the ack ${show(binReply)}`);
            assert.match(String(binReply.response.id), UUID);
            const bin = await rx.bc.next((m) => m.event === 'bin', 3000, 'the binary persisted broadcast');
            assert.ok(bin.payload instanceof ArrayBuffer, `binary payload: ${show(bin)}`);
            assert.deepEqual([...new Uint8Array(bin.payload)], [...bytes]);
            assert.equal(withoutPosition(bin, {}, 'binary live').meta?.id, binReply.response.id, 'binary: meta.id = the acked id');

            const rows = await rowsOf(topic);
            assert.equal(rows.length, 3, `three rows: ${show(rows)}`);
            assertPersistedRow(rows[0], { id: ids['ttl-60'], topic, event: 'ttl-60', sent: { ttl: 60 }, ttl: 60 }, 'ttl 60');
            assertPersistedRow(rows[1], { id: ids['ttl-max'], topic, event: 'ttl-max', sent: { ttl: MAX_TTL }, ttl: MAX_TTL }, `ttl ${MAX_TTL}`);
            assert.deepEqual(rows[2], {
                id: binReply.response.id, topic, extension: 'broadcast', event: 'bin', private: true, payload: null,
                binary_payload: bytes.toString('hex'), skip_broadcast: true, expires_at_null: true, ttl_seconds: null,
            }, 'the binary row');
            // The SQL of the brief, on the ttl 60 row.
            assert.equal(await su.value(`SELECT skip_broadcast AND expires_at - inserted_at = interval '60 seconds'
                                          FROM realtime.messages WHERE id = ${literal(ids['ttl-60'])}`), 't');

            await dbSentinelBroadcast(su, topic, true, [rx.bc], { timeoutMs: DELIVERY_MS });
            assert.deepEqual(withoutSentinels(rx.bc.items).map((m) => [m.event, m.meta?.id]),
                [['ttl-60', ids['ttl-60']], ['ttl-max', ids['ttl-max']], ['bin', binReply.response.id]], 'each delivered once');
        });

    test('persistence refused (broadcast write but no persistence policy): send() resolves the exact Unauthorized reason, nothing stored, nobody receives',
        async () => {
            const topic = `plain-${unique('refused')}`;
            const sender = await channel(client(authed('user-a')), topic, { ack: true });
            const rx2 = await channel(client(authed('user-b')), topic);
            const rx1 = await channel(client(authed('user-c'), '1.0.0'), topic);
            assert.equal(await sender.ch.send({ type: 'broadcast', event: 'denied', payload: { n: 1 }, persist: true }), refused(topic));
            assert.equal(await sender.ch.send({ type: 'broadcast', event: 'denied-ttl', payload: { n: 2 }, persist: { ttl: 60 } }), refused(topic));
            const replies = wireFrames(sender.c, `realtime:${topic}`).filter((f) => f.event === 'phx_reply').slice(1);
            assert.deepEqual(replies.map((f) => f.payload), [
                { status: 'error', response: { error: refused(topic) } },
                { status: 'error', response: { error: refused(topic) } },
            ], 'the ack replies on the wire');
            // Sentinel from the sender's channel (a plain broadcast, which its write permission
            // allows): whatever the refused pushes published before the replies reached the others first.
            await sentinelBroadcast(sender.ch, [rx2.bc, rx1.bc]);
            assert.deepEqual(withoutSentinels(rx2.bc.items), [], 'nobody receives a refused persisted message (v2)');
            assert.deepEqual(withoutSentinels(rx1.bc.items), [], 'nobody receives a refused persisted message (v1)');
            assert.deepEqual(await rowsOf(topic), [], 'nothing stored');
        });

    test('persistence allowed but no broadcast write (keep-%): dropped like any private broadcast without write, nothing stored or delivered',
        async () => {
            const topic = `keep-${unique('nowrite')}`;
            const sender = await channel(client(authed('user-a')), topic, { ack: true });
            const rx = await channel(client(authed('user-b')), topic);
            const mesh = await sentinelMesh([sender.c, rx.c], unique('keep-sentinels'));
            const status = await sender.ch.send({ type: 'broadcast', event: 'nowrite', payload: { n: 1 }, persist: true }, { timeout: 1500 });
            assert.notEqual(status, 'ok', 'a persisted broadcast needs broadcast write too');
            // Sentinel from the sender's socket: what it published before reached rx first.
            await mesh.from(sender.c);
            assert.deepEqual(rx.bc.items, [], 'nobody receives it');
            assert.deepEqual(await rowsOf(topic), [], 'nothing stored');
        });

    test('invalid persist metadata (raw kind 3): a bad ttl → "Invalid persist: …", a persist that is no object → error; nothing stored or delivered',
        async () => {
            const topic = `saved-${unique('invalid')}`;
            const rx = await channel(client(authed('user-b')), topic);
            const sender = await rawSender(topic);
            for (const ttl of [-1, 0, 1.5, '60', MAX_TTL + 1]) {
                const reply = await pushKind3(sender, { event: 'bad-ttl', meta: JSON.stringify({ persist: { ttl } }), payload: { ttl } });
                assert.deepEqual(reply, { status: 'error', response: { error: INVALID_TTL } }, `ttl ${show(ttl)}`);
            }
            const yes = await pushKind3(sender, { event: 'bad-persist', meta: '{"persist":"yes"}', payload: { n: 1 } });
            assert.equal(yes.status, 'error', `{"persist":"yes"}: ${show(yes)}`);
            assert.equal(typeof yes.response?.error, 'string', `{"persist":"yes"}: an error text: ${show(yes)}`);
            // Sentinel from the same raw socket (a text broadcast): anything the refused pushes
            // published would have reached rx before it.
            await rawSentinelBroadcast(sender.r, sender.topic, sender.joinRef, [rx.bc]);
            assert.deepEqual(withoutSentinels(rx.bc.items), [], 'nothing delivered');
            assert.deepEqual(await rowsOf(topic), [], 'nothing stored');
        });

    test('public channel: kind 3 with persist → "Persistence is only available on private channels", not delivered; realtime-js refuses public and vsn 1.0.0 itself',
        async () => {
            // A topic whose private channel would allow persistence: the refusal is about being public.
            const topic = `saved-${unique('public')}`;
            const pubRx = await channel(client(authed('user-b')), topic, { isPrivate: false });
            const privRx = await channel(client(authed('user-c')), topic);
            const sender = await rawSender(topic, { isPrivate: false });
            for (const meta of ['{"persist":true}', '{"persist":{"ttl":60}}']) {
                const reply = await pushKind3(sender, { event: 'pub-persist', meta, payload: { meta } });
                assert.deepEqual(reply, { status: 'error', response: { error: PUBLIC_REFUSED } }, meta);
            }
            await rawSentinelBroadcast(sender.r, sender.topic, sender.joinRef, [pubRx.bc]);
            await dbSentinelBroadcast(su, topic, true, [privRx.bc], { timeoutMs: DELIVERY_MS });
            assert.deepEqual(withoutSentinels(pubRx.bc.items), [], 'not delivered on the public channel');
            assert.deepEqual(withoutSentinels(privRx.bc.items), [], 'nor on the private one');
            assert.deepEqual(await rowsOf(topic), [], 'nothing stored');

            // realtime-js: persist on a public channel, or on a private one with vsn 1.0.0, resolves
            // 'error' without sending anything.
            const quiet = { logger: () => {} };
            const pubClient = client(authed('user-a'), '2.0.0', quiet);
            const pub = await channel(pubClient, topic, { isPrivate: false, ack: true });
            const v1Client = client(authed('user-a'), '1.0.0', quiet);
            const v1 = await channel(v1Client, topic, { ack: true });
            const outs = (c) => c.wire.items.filter((f) => f.dir === 'out' && !(typeof f.data === 'string' && f.data.includes('heartbeat'))).length;
            const before = [outs(pubClient), outs(v1Client)];
            assert.equal(await pub.ch.send({ type: 'broadcast', event: 'x', payload: {}, persist: true }), 'error');
            assert.equal(await v1.ch.send({ type: 'broadcast', event: 'x', payload: {}, persist: true }), 'error');
            assert.deepEqual([outs(pubClient), outs(v1Client)], before, 'realtime-js sent nothing');
        });

    test('HTTP persist: httpSend persist true / {ttl: 60} / binary → {success:true} (202), subscribers get each once with meta.id = the row id; rows skip_broadcast, expiry',
        async () => {
            const topic = `saved-${unique('http')}`;
            const rx2 = await channel(client(authed('user-b')), topic);
            const rx1 = await channel(client(authed('user-c'), '1.0.0'), topic);
            const fetch = hostFetch(server, TENANT);
            const ch = client(authed('user-a'), '2.0.0', { fetch }).channel(topic, { config: { private: true } });
            assert.deepEqual(await ch.httpSend('h-plain', { n: 1 }, { persist: true }), { success: true });
            assert.deepEqual(await ch.httpSend('h-ttl', { n: 2 }, { persist: { ttl: 60 } }), { success: true });
            const bytes = new Uint8Array([7, 8, 9]);
            assert.deepEqual(await ch.httpSend('h-bin', bytes, { persist: true }), { success: true });
            // The requests realtime-js made (its apikey and vsn query parameters left out).
            const base = `/realtime/v1/api/broadcast/${encodeURIComponent(topic)}/events`;
            const requested = fetch.calls.map((call) => {
                const u = new URL(call, 'http://x');
                const params = [...u.searchParams].filter(([k]) => k !== 'apikey' && k !== 'vsn');
                return `${u.pathname}?${new URLSearchParams(params)}`;
            });
            assert.deepEqual(requested, [
                `${base}/h-plain?private=true&persist=true`,
                `${base}/h-ttl?private=true&persist%5Bttl%5D=60`,
                `${base}/h-bin?private=true&persist=true`,
            ], 'the requests realtime-js made');

            const plain = await rx2.bc.next((m) => m.event === 'h-plain', 3000, 'h-plain');
            const ttl = await rx2.bc.next((m) => m.event === 'h-ttl', 3000, 'h-ttl');
            const bin = await rx2.bc.next((m) => m.event === 'h-bin', 3000, 'h-bin');
            const plainId = liveId(plain, 'h-plain', { n: 1 }, 'h-plain live');
            const ttlId = liveId(ttl, 'h-ttl', { n: 2 }, 'h-ttl live');
            assert.ok(bin.payload instanceof ArrayBuffer, `binary payload: ${show(bin)}`);
            assert.deepEqual([...new Uint8Array(bin.payload)], [7, 8, 9]);
            const binId = withoutPosition(bin, {}, 'h-bin live').meta?.id;
            assert.match(String(binId), UUID, 'h-bin: meta.id');
            assert.equal(liveId(await rx1.bc.next((m) => m.event === 'h-plain', 3000, 'h-plain (v1)'), 'h-plain', { n: 1 }, 'h-plain v1'), plainId);
            assert.equal(liveId(await rx1.bc.next((m) => m.event === 'h-ttl', 3000, 'h-ttl (v1)'), 'h-ttl', { n: 2 }, 'h-ttl v1'), ttlId);

            const rows = await rowsOf(topic);
            assert.equal(rows.length, 3, `three rows: ${show(rows)}`);
            assertPersistedRow(rows[0], { id: plainId, topic, event: 'h-plain', sent: { n: 1 } }, 'HTTP persist=true');
            assertPersistedRow(rows[1], { id: ttlId, topic, event: 'h-ttl', sent: { n: 2 }, ttl: 60 }, 'HTTP persist[ttl]=60');
            assert.deepEqual(rows[2], {
                id: binId, topic, extension: 'broadcast', event: 'h-bin', private: true, payload: null,
                binary_payload: '070809', skip_broadcast: true, expires_at_null: true, ttl_seconds: null,
            }, 'the binary row');

            // The database sentinel, committed after the rows (and sent after the 202s).
            await dbSentinelBroadcast(su, topic, true, [rx2.bc, rx1.bc], { timeoutMs: DELIVERY_MS });
            assert.deepEqual(withoutSentinels(rx2.bc.items).map((m) => [m.event, m.meta?.id]),
                [['h-plain', plainId], ['h-ttl', ttlId], ['h-bin', binId]], 'each delivered once (v2)');
            assert.deepEqual(withoutSentinels(rx1.bc.items).map((m) => [m.event, m.meta?.id]),
                [['h-plain', plainId], ['h-ttl', ttlId]], 'each JSON one delivered once (v1; binary is not sent to v1)');
        });

    test('HTTP persist refusals: no persistence policy → 403 {"message":"Unauthorized"} (httpSend rejects); persist without private → 422; bad ttl → 422; nothing stored or delivered',
        async () => {
            const plainTopic = `plain-${unique('http-refused')}`;
            const savedTopic = `saved-${unique('http-invalid')}`;
            const plainRx = await channel(client(authed('user-b')), plainTopic);
            const savedRx = await channel(client(authed('user-b')), savedTopic);
            const pubRx = await channel(client(authed('user-c')), savedTopic, { isPrivate: false });
            const ch = client(authed('user-a'), '2.0.0', { fetch: hostFetch(server, TENANT) }).channel(plainTopic, { config: { private: true } });
            await assert.rejects(ch.httpSend('denied', { n: 1 }, { persist: true }), (err) => err.message === 'Unauthorized');
            await assert.rejects(ch.httpSend('denied', { n: 2 }, { persist: { ttl: 60 } }), (err) => err.message === 'Unauthorized');

            const post = (topic, query) => httpRequest(server, {
                method: 'POST', path: `/realtime/v1/api/broadcast/${encodeURIComponent(topic)}/events/ev${query}`,
                host: server.hostFor(TENANT), headers: { Authorization: `Bearer ${authed('user-a')}` }, body: { n: 3 },
            });
            const forbidden = await post(plainTopic, '?private=true&persist=true');
            assert.equal(forbidden.status, 403, forbidden.body);
            assert.deepEqual(forbidden.json, { message: 'Unauthorized' });
            const onPublic = await post(savedTopic, '?persist=true');
            assert.equal(onPublic.status, 422, onPublic.body);
            assert.deepEqual(onPublic.json, { errors: { persist: ['can only be used on private channels'] } });
            for (const query of ['?private=true&persist%5Bttl%5D=0', '?private=true&persist[ttl]=x', '?private=true&persist%5Bttl%5D=-5',
                '?private=true&persist%5Bttl%5D=1.5']) {
                const bad = await post(savedTopic, query);
                assert.equal(bad.status, 422, `${query}: ${bad.body}`);
                assert.deepEqual(bad.json, { errors: { persist: ['ttl is invalid'] } }, query);
            }
            // Sentinels from the database, after the answers: a refused request published nothing.
            await dbSentinelBroadcast(su, plainTopic, true, [plainRx.bc], { timeoutMs: DELIVERY_MS });
            await dbSentinelBroadcast(su, savedTopic, true, [savedRx.bc], { timeoutMs: DELIVERY_MS });
            await dbSentinelBroadcast(su, savedTopic, false, [pubRx.bc], { timeoutMs: DELIVERY_MS });
            assert.deepEqual(withoutSentinels(plainRx.bc.items), [], 'the 403 ones reached nobody');
            assert.deepEqual(withoutSentinels(savedRx.bc.items), [], 'the 422 ones reached nobody (private)');
            assert.deepEqual(withoutSentinels(pubRx.bc.items), [], 'the 422 ones reached nobody (public)');
            assert.deepEqual(await rowsOf(plainTopic), [], 'nothing stored (403)');
            assert.deepEqual(await rowsOf(savedTopic), [], 'nothing stored (422)');
        });

    test('replay: persisted messages (socket and HTTP) replay oldest first with meta {replayed, id} = the live ids; plain broadcasts are not replayed; limit keeps the newest',
        { timeout: 60_000 }, async () => {
            const topic = `saved-${unique('replay')}`;
            const since = Date.now() - 5000;
            const live = await channel(client(authed('user-l')), topic);
            const sender = await channel(client(authed('user-a')), topic, { ack: true });
            const http = client(authed('user-a'), '2.0.0', { fetch: hostFetch(server, TENANT) }).channel(topic, { config: { private: true } });
            assert.equal(await sender.ch.send({ type: 'broadcast', event: 'p1', payload: { k: 1 }, persist: true }), 'ok');
            assert.equal(await sender.ch.send({ type: 'broadcast', event: 'e1', payload: { k: 'ephemeral' } }), 'ok');
            assert.equal(await sender.ch.send({ type: 'broadcast', event: 'p2', payload: { k: 2 }, persist: { ttl: 3600 } }), 'ok');
            assert.deepEqual(await http.httpSend('p3', { k: 3 }, { persist: true }), { success: true });
            assert.deepEqual(await http.httpSend('e2', { k: 'ephemeral' }), { success: true });
            const liveItems = await waitFor(() => live.bc.items.length >= 5 && live.bc.items, 3000, 'the five live broadcasts',
                () => live.bc.items);
            assert.deepEqual(liveItems.map((m) => m.event), ['p1', 'e1', 'p2', 'p3', 'e2']);
            const sent = { p1: { k: 1 }, e1: { k: 'ephemeral' }, p2: { k: 2 }, p3: { k: 3 }, e2: { k: 'ephemeral' } };
            for (const m of liveItems.filter((x) => x.event.startsWith('e'))) {
                assert.deepEqual(withoutPosition(m, {}, `${m.event} live`), { type: 'broadcast', event: m.event, payload: sent[m.event] },
                    `${m.event}: a plain broadcast has no id`);
            }
            const ids = Object.fromEntries(liveItems.filter((m) => m.event.startsWith('p'))
                .map((m) => [m.event, liveId(m, m.event, sent[m.event], `${m.event} live`)]));

            const rows = await rowsOf(topic);
            assert.deepEqual(rows.map((r) => [r.event, r.id]), [['p1', ids.p1], ['p2', ids.p2], ['p3', ids.p3]], 'the stored rows');
            rows.forEach((r, i) => assertStoredPayload(r.payload, { k: i + 1 }, r.id, r.event));
            const replayedOf = (r) => ({ type: 'broadcast', event: r.event, payload: r.payload, meta: { replayed: true, id: r.id } });

            const all = await channel(client(authed('user-r')), topic, { replay: { since, limit: 10 } });
            const limited = await channel(client(authed('user-s')), topic, { replay: { since, limit: 2 } });
            const v1 = await channel(client(authed('user-t'), '1.0.0'), topic, { replay: { since } });
            await waitFor(() => all.bc.items.length >= 3 && limited.bc.items.length >= 2 && v1.bc.items.length >= 3, 3000,
                'the replayed rows', () => ({ all: all.bc.items, limited: limited.bc.items, v1: v1.bc.items }));
            // Sentinel: a row sent now arrives live after the replay and after anything committed before.
            await dbSentinelBroadcast(su, topic, true, [all.bc, limited.bc, v1.bc], { timeoutMs: DELIVERY_MS });
            assert.deepEqual(withoutSentinels(all.bc.items), rows.map(replayedOf), 'all persisted messages, oldest first');
            assert.deepEqual(withoutSentinels(limited.bc.items), rows.slice(1).map(replayedOf), 'limit 2: the newest two, oldest first');
            assert.deepEqual(withoutSentinels(v1.bc.items), rows.map(replayedOf), 'vsn 1.0.0, default limit');
        });

    test('replay leaves out a row whose expires_at has passed (set with SQL); rows without expiry or with a later one stay', { timeout: 60_000 }, async () => {
        const topic = `saved-${unique('expiry')}`;
        const since = Date.now() - 5000;
        const live = await channel(client(authed('user-l')), topic);
        const sender = await channel(client(authed('user-a')), topic, { ack: true });
        assert.equal(await sender.ch.send({ type: 'broadcast', event: 'a', payload: { k: 'a' }, persist: true }), 'ok');
        assert.equal(await sender.ch.send({ type: 'broadcast', event: 'b', payload: { k: 'b' }, persist: { ttl: 60 } }), 'ok');
        assert.equal(await sender.ch.send({ type: 'broadcast', event: 'c', payload: { k: 'c' }, persist: { ttl: 3600 } }), 'ok');
        const liveItems = await waitFor(() => live.bc.items.length >= 3 && live.bc.items, 3000, 'the three live broadcasts', () => live.bc.items);
        const ids = Object.fromEntries(liveItems.map((m) => [m.event, liveId(m, m.event, { k: m.event }, `${m.event} live`)]));
        const rows = await rowsOf(topic);
        assert.deepEqual(rows.map((r) => [r.event, r.id, r.ttl_seconds]), [['a', ids.a, null], ['b', ids.b, 60], ['c', ids.c, 3600]]);
        const replayedOf = (r) => ({ type: 'broadcast', event: r.event, payload: r.payload, meta: { replayed: true, id: r.id } });

        const beforeExpiry = await channel(client(authed('user-r')), topic, { replay: { since } });
        await dbSentinelBroadcast(su, topic, true, [beforeExpiry.bc], { timeoutMs: DELIVERY_MS });
        assert.deepEqual(withoutSentinels(beforeExpiry.bc.items), rows.map(replayedOf), 'before: a, b and c');

        assert.equal(await su.value(`WITH u AS (UPDATE realtime.messages SET expires_at = timezone('utc', now()) - interval '1 second'
                                                 WHERE id = ${literal(ids.b)} RETURNING 1)
                                      SELECT count(*) FROM u`), '1', 'b expired by SQL');
        const afterExpiry = await channel(client(authed('user-s')), topic, { replay: { since } });
        const afterV1 = await channel(client(authed('user-t'), '1.0.0'), topic, { replay: { since, limit: 25 } });
        await dbSentinelBroadcast(su, topic, true, [afterExpiry.bc, afterV1.bc], { timeoutMs: DELIVERY_MS });
        assert.deepEqual(withoutSentinels(afterExpiry.bc.items), [rows[0], rows[2]].map(replayedOf), 'after: b is left out');
        assert.deepEqual(withoutSentinels(afterV1.bc.items), [rows[0], rows[2]].map(replayedOf), 'after (vsn 1.0.0): b is left out');
    });

    test('replay: five realtime.send calls of one transaction (same inserted_at) replay in call order (upstream #2201)', { timeout: 60_000 }, async () => {
        const topic = `saved-${unique('txn')}`;
        const since = Date.now() - 5000;
        const live = await channel(client(authed('user-l')), topic);
        const sends = [1, 2, 3, 4, 5].map((k) => `SELECT realtime.send('{"k":${k}}'::jsonb, 'tx', ${literal(topic)}, true);`).join('\n');
        await su.exec(`BEGIN;\n${sends}\nCOMMIT;`);
        assert.equal(await su.value(`SELECT count(*) || '/' || count(DISTINCT inserted_at) FROM realtime.messages WHERE topic = ${literal(topic)}`),
            '5/1', 'five rows sharing one inserted_at (the ties of #2201)');
        // Live: the WAL delivers in call order (and the replays below are not mixed with it).
        const liveItems = await waitFor(() => live.bc.items.length >= 5 && live.bc.items, DELIVERY_MS, 'the five live rows', () => live.bc.items);
        assert.deepEqual(liveItems.map((m) => m.payload.k), [1, 2, 3, 4, 5], 'live in call order');
        const ids = liveItems.map((m) => m.meta.id);
        const replayed = (k) => ({ type: 'broadcast', event: 'tx', payload: { k, id: ids[k - 1] }, meta: { replayed: true, id: ids[k - 1] } });

        const all = await channel(client(authed('user-r')), topic, { replay: { since, limit: 25 } });
        const limited = await channel(client(authed('user-s')), topic, { replay: { since, limit: 3 } });
        const v1 = await channel(client(authed('user-t'), '1.0.0'), topic, { replay: { since } });
        await dbSentinelBroadcast(su, topic, true, [all.bc, limited.bc, v1.bc], { timeoutMs: DELIVERY_MS });
        assert.deepEqual(withoutSentinels(all.bc.items), [1, 2, 3, 4, 5].map(replayed), `call order: ${show(all.bc.items.map((m) => m.payload?.k))}`);
        assert.deepEqual(withoutSentinels(limited.bc.items), [3, 4, 5].map(replayed), `limit 3: the last three calls: ${show(limited.bc.items.map((m) => m.payload?.k))}`);
        assert.deepEqual(withoutSentinels(v1.bc.items), [1, 2, 3, 4, 5].map(replayed), `vsn 1.0.0: ${show(v1.bc.items.map((m) => m.payload?.k))}`);
    });
});
