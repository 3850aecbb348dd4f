// Private channels (server-protocol §7, §3.4, §3.6, §4.3, §4.7; client-protocol §8, §11) with the
// unchanged realtime-js client and raw Phoenix clients against a throwaway PostgreSQL 15 cluster.
//
// One cluster and one server for the file. Tenant `priv` points its postgres_cdc_rls settings at
// the database rt_priv. The tenant's first join runs the migrations (they create realtime.messages);
// the RLS policies below are created on it as superuser once it exists, before any test runs:
//
//   topic:%      authenticated may read (both extensions) and write, except topics topic:ro-% (no write)
//   pres:%       authenticated may read presence only, and write both
//   user:<sub>   authenticated may read broadcast only on its own topic (the JWT `sub` claim);
//                any authenticated user may read presence on user:%; write broadcast on its own
//                topic only with the claim refreshed = "true" (it marks a refreshed token)
//
// Role e2e_plain (no BYPASSRLS, SELECT/INSERT granted on realtime.messages, no policy) must be
// refused; service_role (BYPASSRLS) passes every check.
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
import { RawClient } from '../lib/raw.mjs';
import { dbSentinelBroadcast, heartbeatBarrier, sentinelBroadcast, sentinelMesh, withoutSentinels } from '../lib/sentinel.mjs';
import { startServer } from '../lib/server.mjs';
import { httpRequest, Recorder, show, sleep, VSNS, waitFor } from '../lib/util.mjs';

const pgAvailable = pgBinariesPresent();
const skip = !pgAvailable && `PostgreSQL 15 binaries not found in ${PG_BIN} (install postgresql-15 or set RT_PG_BIN)`;

const SECRET = 'private-channels-tenant-secret-0123456789abcdef';
const TENANT = 'priv';
/** A tenant without database that keeps no history (history_size 0): replay on public channels is refused. */
const NOHISTORY = 'nohistory';
const DB = 'rt_priv';
/** A message that was sent may take this long to arrive (DB broadcast goes through WAL). */
const DELIVERY_MS = 8_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const denied = (topic) => `Unauthorized: You do not have permissions to read from this Channel topic: ${topic}`;

let seq = 0;
const unique = (name) => `${name}-${++seq}-${process.pid}`;
const tokenFor = (claims = {}) => token(SECRET, claims);
const authed = (sub = 'user-a', extra = {}) => tokenFor({ role: 'authenticated', sub, ...extra });
const serviceRole = () => tokenFor({ role: 'service_role' });

const POLICIES_SQL = `
CREATE POLICY e2e_topic_read ON realtime.messages FOR SELECT TO authenticated
    USING (realtime.topic() LIKE 'topic:%');
CREATE POLICY e2e_topic_write ON realtime.messages FOR INSERT TO authenticated
    WITH CHECK (realtime.topic() LIKE 'topic:%' AND realtime.topic() NOT LIKE 'topic:ro-%');
CREATE POLICY e2e_pres_read ON realtime.messages FOR SELECT TO authenticated
    USING (realtime.topic() LIKE 'pres:%' AND realtime.messages.extension = 'presence');
CREATE POLICY e2e_pres_write ON realtime.messages FOR INSERT TO authenticated
    WITH CHECK (realtime.topic() LIKE 'pres:%');
CREATE POLICY e2e_user_broadcast_read ON realtime.messages FOR SELECT TO authenticated
    USING (realtime.topic() = 'user:' || (current_setting('request.jwt.claims', true)::jsonb->>'sub')
           AND realtime.messages.extension = 'broadcast');
CREATE POLICY e2e_user_presence_read ON realtime.messages FOR SELECT TO authenticated
    USING (realtime.topic() LIKE 'user:%' AND realtime.messages.extension = 'presence');
CREATE POLICY e2e_user_refreshed_write ON realtime.messages FOR INSERT TO authenticated
    WITH CHECK (realtime.topic() = 'user:' || (current_setting('request.jwt.claims', true)::jsonb->>'sub')
                AND current_setting('request.jwt.claims', true)::jsonb->>'refreshed' = 'true');
GRANT USAGE ON SCHEMA realtime TO e2e_plain;
GRANT SELECT, INSERT ON realtime.messages TO e2e_plain;
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
 * tenant (Node's fetch cannot set Host).
 */
function hostFetch(server, tenant) {
    return async (url, options = {}) => {
        const u = new URL(url);
        const res = await httpRequest(server, {
            method: options.method || 'GET', path: u.pathname + u.search, headers: { ...(options.headers || {}) },
            body: options.body, host: server.hostFor(tenant),
        });
        return {
            status: res.status, statusText: String(res.status), ok: res.status >= 200 && res.status < 300,
            json: async () => JSON.parse(res.body), text: async () => res.body,
        };
    };
}

describe('private channels: RLS on realtime.messages (realtime-js)', { skip }, () => {
    let pgDir;
    let pg;
    let server;
    let pool;
    let su; // psql as superuser on rt_priv

    before(async () => {
        pgDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rt-e2e-priv-'));
        pg = await startPgCluster(pgDir);
        await createDatabase(pg.env, DB);
        su = psqlAs(pg.env, { database: DB, superuser: true });
        await su.exec(`CREATE ROLE e2e_plain NOLOGIN NOINHERIT; GRANT e2e_plain TO ${pg.env.RT_PG_USER};`);
        server = await startServer({
            tenants: [
                tenantSeed(TENANT, SECRET, pg.env, DB, { settings: { slot_name: 'rt_e2e_priv_slot' } }),
                { external_id: NOHISTORY, jwt_secret: SECRET, history_size: 0 },
            ],
        });
        pool = new ClientPool(server);
        // The first join connects to the tenant database and runs the migrations; with
        // replication_ready it also tells when the DB-broadcast stream runs (spec §3.5).
        // Failures are logged, not thrown, so each test reports its own failure.
        try {
            const c = pool.client({ tenant: TENANT, token: tokenFor() });
            const name = unique('warmup');
            const ch = c.channel(name, { config: { broadcast: { replication_ready: true } } });
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
    const raw = async (tok, vsn = '2.0.0', tenant = TENANT) =>
        pool.track(await RawClient.connect(server, { vsn, token: tok, host: server.hostFor(tenant) }));

    /**
     * A realtime-js channel (private unless `isPrivate` is false) recording broadcasts, system
     * messages and, with `presence`, presence join/leave events. Waits for the first subscribe
     * status and asserts it is `expect`.
     */
    async function channel(c, topic, { isPrivate = true, presence = false, presenceKey, ack = false, self = false, replay, expect = 'SUBSCRIBED' } = {}) {
        const config = { private: isPrivate, broadcast: { ack, self, ...(replay ? { replay } : {}) } };
        if (presenceKey !== undefined) config.presence = { key: presenceKey };
        const ch = c.channel(topic, { config });
        const bc = new Recorder(`broadcasts on ${isPrivate ? 'private' : 'public'} ${topic}`);
        const system = new Recorder(`system messages of ${topic}`);
        const joins = new Recorder(`presence joins on ${topic}`);
        ch.on('broadcast', { event: '*' }, bc.fn);
        ch.on('system', {}, system.fn);
        if (presence) {
            ch.on('presence', { event: 'join' }, joins.fn);
            ch.on('presence', { event: 'sync' }, () => {});
        }
        const statuses = subscribe(ch, 5000);
        const first = await statuses.next(() => true, 6000, `a subscribe status for ${topic}`);
        assert.equal(first.status, expect, `join of ${isPrivate ? 'private' : 'public'} ${topic}: ${first.status} ${first.err ? first.err.message : ''}`);
        return { c, ch, bc, system, joins, statuses, first };
    }

    /** Sends DB broadcasts with realtime.send until `rec` holds one (the stream may lag at first). */
    async function sendUntilReceived(rec, topic, isPrivate) {
        let n = 0;
        const deadline = Date.now() + 15_000;
        const probe = (m) => m?.event === 'probe';
        while (!rec.items.some(probe) && Date.now() < deadline) {
            await su.exec(`SELECT realtime.send('{"probe":${++n}}'::jsonb, 'probe', ${literal(topic)}, ${isPrivate})`);
            await sleep(300); // resend interval, not a quiet period
        }
        return rec.next(probe, 2000, `a realtime.send broadcast on ${topic}`);
    }

    test('read check at join: LIKE topic policy admits topic:% and refuses other topics (exact reason, raw and realtime-js)', async () => {
        const ok = `topic:${unique('read')}`;
        const other = `other:${unique('read')}`;
        await channel(client(authed()), ok);
        const refused = await channel(client(authed()), other, { expect: 'CHANNEL_ERROR' });
        assert.equal(refused.first.err.message, denied(other));
        for (const vsn of VSNS) {
            const r = await raw(authed(), vsn);
            const good = await r.join(`realtime:${ok}`, { config: { private: true } });
            assert.equal(good.payload.status, 'ok', show(good.payload));
            assert.deepEqual(good.payload.response, { postgres_changes: [] });
            const bad = await r.join(`realtime:${other}`, { config: { private: true } });
            assert.deepEqual(bad.payload, { status: 'error', response: { reason: denied(other) } }, `vsn ${vsn}`);
            // The same topic as a public channel needs no policy.
            const pub = await r.join(`realtime:${other}`, { config: { private: false } });
            assert.equal(pub.payload.status, 'ok', `public ${other}: ${show(pub.payload)}`);
        }
    });

    test('a role without BYPASSRLS and no policy, a role that does not exist and anon are refused; service_role passes', async () => {
        const topic = `topic:${unique('roles')}`;
        for (const role of ['e2e_plain', 'e2e_no_such_role', 'anon']) {
            const r = await raw(tokenFor({ role }));
            const reply = await r.join(`realtime:${topic}`, { config: { private: true, presence: { enabled: true, key: '' } } });
            assert.deepEqual(reply.payload, { status: 'error', response: { reason: denied(topic) } }, `role ${role}`);
        }
        const plain = await channel(client(tokenFor({ role: 'e2e_plain' })), topic, { expect: 'CHANNEL_ERROR' });
        assert.equal(plain.first.err.message, denied(topic));

        // service_role: any topic, read, write (ack) and presence track.
        const any = `anything-${unique('svc')}`;
        const a = await channel(client(serviceRole()), any, { ack: true, presence: true, presenceKey: 'svc-a' });
        const b = await channel(client(serviceRole()), any, { presence: true, presenceKey: 'svc-b' });
        assert.equal(await a.ch.send({ type: 'broadcast', event: 'svc', payload: { n: 1 } }), 'ok');
        const got = await b.bc.next(() => true, 2000, 'the service_role broadcast');
        assert.deepEqual(withoutPosition(got, { offset: 1 }), { type: 'broadcast', event: 'svc', payload: { n: 1 } });
        assert.equal(await a.ch.track({ who: 'a' }), 'ok');
        const join = await b.joins.next((j) => j.key === 'svc-a', 2000, 'presence join of svc-a');
        assert.equal(join.newPresences[0].who, 'a');
    });

    for (const vsn of VSNS) {
        test(`broadcast write allowed: others receive, ack ok; write denied (topic:ro-): ack push times out, nobody receives (vsn ${vsn})`, async () => {
            const topic = `topic:${unique('chat')}`;
            const sender = await channel(client(authed('user-a'), vsn), topic, { ack: true });
            const receiver = await channel(client(authed('user-b'), vsn), topic);
            assert.equal(await sender.ch.send({ type: 'broadcast', event: 'hello', payload: { text: 'hi' } }), 'ok');
            assert.deepEqual(withoutPosition(await receiver.bc.next(() => true, 2000, 'the allowed broadcast'), { offset: 1 }),
                { type: 'broadcast', event: 'hello', payload: { text: 'hi' } });
            assert.deepEqual(sender.bc.items, [], 'self is false');

            const ro = `topic:ro-${unique('chat')}`;
            const roSender = await channel(client(authed('user-a'), vsn), ro, { ack: true });
            const roNoAck = await channel(client(authed('user-c'), vsn), ro);
            const roReceiver = await channel(client(authed('user-b'), vsn), ro);
            const svc = await channel(client(serviceRole(), vsn), ro, { ack: true });
            // Sentinel paths between the sockets of the ro members: a public topic they all join.
            const mesh = await sentinelMesh([roSender.c, roNoAck.c, roReceiver.c], unique('ro-sentinels'));
            const started = Date.now();
            assert.equal(await roSender.ch.send({ type: 'broadcast', event: 'denied', payload: { n: 1 } }, { timeout: 1500 }), 'timed out',
                'no reply at all for a private broadcast without write permission (spec §4.3)');
            assert.ok(Date.now() - started >= 1400, 'send waited for its timeout');
            assert.equal(await roNoAck.ch.send({ type: 'broadcast', event: 'denied-noack', payload: { n: 2 } }), 'ok', 'without ack realtime-js resolves ok at once');
            // A message that is allowed, sent after the denied ones, arrives alone.
            assert.equal(await svc.ch.send({ type: 'broadcast', event: 'allowed', payload: { n: 3 } }), 'ok');
            await roReceiver.bc.next((m) => m.event === 'allowed', 2000, 'the service_role broadcast');
            await roSender.bc.next((m) => m.event === 'allowed', 2000, 'the service_role broadcast at the denied sender');
            await roNoAck.bc.next((m) => m.event === 'allowed', 2000, 'the service_role broadcast at the denied sender without ack');
            // Sentinels from the denied senders' sockets (their ro channels cannot carry one):
            // whatever those sockets published before has reached the other members by then, and
            // the sentinel's ack reaches roSender after any reply to its denied push.
            await mesh.from(roSender.c);
            await mesh.from(roNoAck.c);
            assert.deepEqual(roReceiver.bc.items.map((m) => m.event), ['allowed'], 'the denied broadcasts reached nobody');
            assert.deepEqual(roSender.bc.items.map((m) => m.event), ['allowed']);
            assert.deepEqual(roNoAck.bc.items.map((m) => m.event), ['allowed']);
            // The ack reply of the denied push never came: no phx_reply with an error either.
            const replies = wireFrames(roSender.c, `realtime:${ro}`).filter((f) => f.event === 'phx_reply');
            assert.equal(replies.length, 1, `only the join reply on ${ro}: ${show(replies)}`);
        });
    }

    test('presence: track allowed → others see the join; track without presence write (topic:ro-) replies error and is not shown', async () => {
        const topic = `topic:${unique('pres')}`;
        const a = await channel(client(authed('user-a')), topic, { presence: true, presenceKey: 'a' });
        const b = await channel(client(authed('user-b')), topic, { presence: true, presenceKey: 'b' });
        assert.equal(await a.ch.track({ name: 'alice' }), 'ok');
        const join = await b.joins.next((j) => j.key === 'a', 2000, 'presence join of a');
        assert.equal(join.newPresences[0].name, 'alice');

        const ro = `topic:ro-${unique('pres')}`;
        const denied1 = await channel(client(authed('user-a')), ro, { presence: true, presenceKey: 'ro-a' });
        const watcher = await channel(client(authed('user-b')), ro, { presence: true, presenceKey: 'ro-b' });
        assert.equal(await denied1.ch.track({ name: 'alice' }), 'error', 'track without presence write replies error (spec §7.4)');
        const svc = await channel(client(serviceRole()), ro, { presence: true, presenceKey: 'svc' });
        // Sentinel: svc's track, pushed after the refused one was answered. The presence store
        // handles tracks in that order and sends its diffs in that order.
        assert.equal(await svc.ch.track({ name: 'svc' }), 'ok');
        await watcher.joins.next((j) => j.key === 'svc', 2000, 'presence join of svc');
        assert.deepEqual(watcher.joins.items.map((j) => j.key), ['svc'], 'the refused track is not visible');
        assert.deepEqual(Object.keys(watcher.ch.presenceState()).sort(), ['svc']);
        const reply = wireFrames(denied1.c, `realtime:${ro}`).filter((f) => f.event === 'phx_reply' && f.payload?.status === 'error');
        assert.equal(reply.length, 1, `one error reply (the track): ${show(wireFrames(denied1.c, `realtime:${ro}`))}`);
    });

    test('presence-only read (extension = presence): joins, gets presence_state and diffs, never broadcasts', async () => {
        const topic = `pres:${unique('room')}`;
        // Presence disabled: only broadcast-read is checked, and it is false.
        const r = await raw(authed('user-m'));
        const noPresence = await r.join(`realtime:${topic}`, { config: { private: true } });
        assert.deepEqual(noPresence.payload, { status: 'error', response: { reason: denied(topic) } });

        const member = await channel(client(authed('user-m')), topic, { presence: true, presenceKey: 'm', ack: true });
        await waitFor(() => wireFrames(member.c, `realtime:${topic}`).some((f) => f.event === 'presence_state'), 2000,
            'presence_state for the presence-only member', () => wireFrames(member.c, `realtime:${topic}`));
        const svc = await channel(client(serviceRole()), topic, { presence: true, presenceKey: 'svc', ack: true });
        const svc2 = await channel(client(serviceRole()), topic);
        // Sentinel paths to the member's socket, which cannot receive a broadcast on the topic:
        // a private topic it may read, joined by the member's and svc's clients.
        const sentinelTopic = `topic:${unique('room-sentinels')}`;
        const memberSentinels = await channel(member.c, sentinelTopic);
        const svcSentinels = await channel(svc.c, sentinelTopic, { ack: true });
        assert.equal(await svc.ch.track({ name: 'svc' }), 'ok');
        const join = await member.joins.next((j) => j.key === 'svc', 2000, 'presence join of svc on the member');
        assert.equal(join.newPresences[0].name, 'svc');

        // Broadcasts over the socket and from the database reach svc2 but not the member.
        assert.equal(await svc.ch.send({ type: 'broadcast', event: 'ws', payload: { n: 1 } }), 'ok');
        await svc2.bc.next((m) => m.event === 'ws', 2000, 'the socket broadcast on svc2');
        await sendUntilReceived(svc2.bc, topic, true);
        // The member may write (policy e2e_pres_write): its broadcast reaches svc2.
        assert.equal(await member.ch.send({ type: 'broadcast', event: 'from-member', payload: { n: 2 } }), 'ok');
        await svc2.bc.next((m) => m.event === 'from-member', 2000, 'the member broadcast on svc2');
        // A sentinel from svc's socket (after its broadcast) and one from the database (after the
        // probes): each reaches the member's socket after anything its path sent before. (The
        // member's own broadcast is not echoed: self is false, and an echo would have preceded its ack.)
        await sentinelBroadcast(svcSentinels.ch, [memberSentinels.bc]);
        await dbSentinelBroadcast(su, sentinelTopic, true, [memberSentinels.bc], { timeoutMs: DELIVERY_MS });
        assert.deepEqual(member.bc.items, [], 'no broadcast reaches a member without broadcast read');
    });

    test('private and public namespaces never mix (same topic, and public realtime:private:<topic>)', async () => {
        const topic = `topic:${unique('ns')}`;
        const priv = await channel(client(authed('user-a')), topic, { ack: true });
        const privRx = await channel(client(authed('user-b')), topic);
        const pub = await channel(client(authed('user-a')), topic, { isPrivate: false, ack: true });
        const pubRx = await channel(client(authed('user-b')), topic, { isPrivate: false });
        const spy = await channel(client(authed('user-c')), `private:${topic}`, { isPrivate: false });
        // Sentinel paths between the five sockets (realtime-js keeps one channel per topic name, so
        // a client cannot join the other namespace of its own topic): a public topic they all join.
        const everyone = [priv, privRx, pub, pubRx, spy];
        const mesh = await sentinelMesh(everyone.map((m) => m.c), unique('ns-sentinels'));
        assert.equal(await priv.ch.send({ type: 'broadcast', event: 'p', payload: { from: 'private' } }), 'ok');
        assert.equal(await pub.ch.send({ type: 'broadcast', event: 'q', payload: { from: 'public' } }), 'ok');
        await privRx.bc.next(() => true, 2000, 'the private broadcast');
        await pubRx.bc.next(() => true, 2000, 'the public broadcast');
        // From the database too.
        await su.exec(`SELECT realtime.send('{"db":"private"}'::jsonb, 'dbp', ${literal(topic)}, true);
                       SELECT realtime.send('{"db":"public"}'::jsonb, 'dbq', ${literal(topic)}, false);`);
        await privRx.bc.next((m) => m.event === 'dbp', DELIVERY_MS, 'the private DB broadcast');
        await pubRx.bc.next((m) => m.event === 'dbq', DELIVERY_MS, 'the public DB broadcast');
        // Sentinels on every path: from the two senders' sockets, and from the database to each of
        // the three channels (committed after dbp and dbq, so delivered after them).
        await mesh.from(priv.c);
        await mesh.from(pub.c);
        await dbSentinelBroadcast(su, topic, true, [privRx.bc, priv.bc], { timeoutMs: DELIVERY_MS });
        await dbSentinelBroadcast(su, topic, false, [pubRx.bc, pub.bc], { timeoutMs: DELIVERY_MS });
        await dbSentinelBroadcast(su, `private:${topic}`, false, [spy.bc], { timeoutMs: DELIVERY_MS });
        const events = (m) => withoutSentinels(m.bc.items).map((x) => x.event);
        assert.deepEqual(events(privRx), ['p', 'dbp']);
        assert.deepEqual(events(pubRx), ['q', 'dbq']);
        assert.deepEqual(events(pub), ['dbq'], 'the public sender gets only public messages (self false)');
        assert.deepEqual(events(priv), ['dbp']);
        assert.deepEqual(withoutSentinels(spy.bc.items), [], 'public realtime:private:<topic> is just another public topic');
    });

    test('policy on the sub claim: user:<sub> admits its owner only', async () => {
        await channel(client(authed('alice')), 'user:alice');
        const bob = await channel(client(authed('bob')), 'user:alice', { expect: 'CHANNEL_ERROR' });
        assert.equal(bob.first.err.message, denied('user:alice'));
        await channel(client(authed('bob')), 'user:bob');
        const noSub = await raw(tokenFor({ role: 'authenticated' }));
        assert.deepEqual((await noSub.join('realtime:user:alice', { config: { private: true } })).payload,
            { status: 'error', response: { reason: denied('user:alice') } }, 'a token without sub');
    });

    test('setAuth to a token of the same user keeps the channel; its broadcasts keep flowing', async () => {
        const c = client(authed('alice', { n: 1 }));
        const ch = await channel(c, 'user:alice');
        const svc = await channel(client(serviceRole()), 'user:alice', { ack: true });
        // The refreshed token may also write (policy e2e_user_refreshed_write): its broadcasts get
        // through once the server has evaluated the policies with the new claims. That marks the
        // end of the check whose outcome (keep or shut down) is under test.
        await c.setAuth(authed('alice', { n: 2, refreshed: 'true' }));
        await waitFor(() => c.wire.items.some((f) => f.dir === 'out' && typeof f.data === 'string' && f.data.includes('"access_token",{')),
            2000, 'the access_token push', () => c.wire.items.filter((f) => f.dir === 'out'));
        let k = 0;
        const deadline = Date.now() + 5000;
        while (!svc.bc.items.some((m) => m.event === 'refreshed')) {
            assert.ok(Date.now() < deadline, `no broadcast of the refreshed token got through; system ${show(ch.system.items)}`);
            assert.equal(await ch.ch.send({ type: 'broadcast', event: 'refreshed', payload: { k: ++k } }), 'ok');
            await svc.bc.next((m) => m.event === 'refreshed', 200).catch(() => {});
        }
        // A shutdown decided by that check would have been written to c's socket before its next
        // frames were handled: a heartbeat round trip brings everything in.
        await heartbeatBarrier(c);
        assert.equal(await svc.ch.send({ type: 'broadcast', event: 'still', payload: {} }), 'ok');
        await ch.bc.next((m) => m.event === 'still', 2000, 'a broadcast after the refresh');
        assert.deepEqual(ch.system.items, [], 'no system message');
        assert.equal(ch.statuses.items.length, 1, `no status change: ${show(ch.statuses.items)}`);
    });

    test('setAuth to another sub: broadcast read true→false with presence read kept → "You no longer have permission…", then CLOSED', async () => {
        const c = client(authed('alice'));
        const ch = await channel(c, 'user:alice', { presence: true, presenceKey: 'alice' });
        await c.setAuth(authed('bob'));
        const msg = await ch.system.next(() => true, 5000, 'the shutdown system message');
        assert.deepEqual(msg, {
            extension: 'system', status: 'error', channel: 'user:alice',
            message: 'You no longer have permission to read from this Channel topic: user:alice',
        });
        await ch.statuses.next((s) => s.status === 'CLOSED', 2000, 'CLOSED after the shutdown');
        const frames = wireFrames(c, 'realtime:user:alice');
        const sys = frames.findIndex((f) => f.event === 'system');
        const close = frames.findIndex((f) => f.event === 'phx_close');
        assert.ok(sys >= 0 && close > sys, `system then phx_close: ${show(frames.map((f) => f.event))}`);
    });

    test('setAuth to another sub with no read permission left → "You do not have permissions…", then CLOSED', async () => {
        const c = client(authed('alice'));
        const ch = await channel(c, 'user:alice');
        await c.setAuth(authed('bob'));
        const msg = await ch.system.next(() => true, 5000, 'the shutdown system message');
        assert.deepEqual(msg, {
            extension: 'system', status: 'error', channel: 'user:alice',
            message: 'You do not have permissions to read from this Channel topic: user:alice',
        });
        await ch.statuses.next((s) => s.status === 'CLOSED', 2000, 'CLOSED after the shutdown');
    });

    test('replay: rows of realtime.messages since/limit arrive oldest first with meta.replayed, not again live', { timeout: 60_000 }, async () => {
        const topic = `topic:${unique('replay')}`;
        // A live private subscriber first: the DB broadcast stream must run before the rows go in.
        const live = await channel(client(authed('user-l')), topic);
        await sendUntilReceived(live.bc, topic, true);
        await su.exec(`INSERT INTO realtime.messages (topic, extension, payload, event, private, inserted_at)
                       VALUES (${literal(topic)}, 'broadcast', '{"old":true}', 'rp', true, now() - interval '1 hour')`);
        const since = Date.now();
        await sleep(20); // time passing is the behaviour here: the rows below are later than `since`
        for (let k = 1; k <= 5; ++k) {
            await su.exec(`SELECT realtime.send('{"k":${k}}'::jsonb, 'rp', ${literal(topic)}, true)`);
        }
        await su.exec(`SELECT realtime.send('{"public":true}'::jsonb, 'rp', ${literal(topic)}, false);
                       SELECT realtime.send('{"other":true}'::jsonb, 'rp', ${literal(`${topic}-other`)}, true);`);
        // (The old row is a live INSERT too: the live subscriber gets it first.)
        const rows = () => live.bc.items.filter((m) => m.event === 'rp' && m.payload.k !== undefined);
        const liveRows = await waitFor(() => rows().length >= 5 && rows(),
            DELIVERY_MS, 'the 5 rows live on the first subscriber', () => live.bc.items);
        const ids = liveRows.map((m) => m.meta.id);
        assert.deepEqual(liveRows.map((m) => m.payload.k), [1, 2, 3, 4, 5]);

        const expectReplayed = (m, k) => {
            assert.deepEqual(m, { type: 'broadcast', event: 'rp', payload: { k, id: ids[k - 1] }, meta: { replayed: true, id: ids[k - 1] } },
                `replayed row ${k}`);
        };
        const limited = await channel(client(authed('user-r')), topic, { replay: { since, limit: 3 } });
        const v1 = await channel(client(authed('user-s'), '1.0.0'), topic, { replay: { since } });
        await waitFor(() => limited.bc.items.length >= 3 && v1.bc.items.length >= 5, 3000, 'the replayed rows',
            () => ({ limited: limited.bc.items, v1: v1.bc.items }));
        // Sentinel: a row sent now arrives live after the replay and after anything committed before.
        await dbSentinelBroadcast(su, topic, true, [limited.bc, v1.bc], { timeoutMs: DELIVERY_MS });
        const replayedTo = (m) => withoutSentinels(m.bc.items);
        assert.equal(replayedTo(limited).length, 3, `limit 3: ${show(limited.bc.items)}`);
        [3, 4, 5].forEach((k, i) => expectReplayed(limited.bc.items[i], k));
        assert.equal(replayedTo(v1).length, 5, `default limit, since excludes the old row, other topic and public excluded: ${show(v1.bc.items)}`);
        [1, 2, 3, 4, 5].forEach((k, i) => expectReplayed(v1.bc.items[i], k));
        // Replayed frames come right after the join reply, on the channel (join_ref set).
        const frames = wireFrames(limited.c, `realtime:${topic}`);
        assert.deepEqual(frames.slice(0, 4).map((f) => f.event), ['phx_reply', 'broadcast', 'broadcast', 'broadcast']);
        assert.equal(frames[1].join_ref, frames[0].ref, 'replayed pushes carry the channel join_ref');

        // The row with id 5 arrives live again (same id, later inserted_at): delivered to a channel
        // that did not replay it, not to the ones that did.
        const fresh = await channel(client(authed('user-f')), topic);
        await su.exec(`INSERT INTO realtime.messages (id, topic, extension, payload, event, private)
                       VALUES (${literal(ids[4])}, ${literal(topic)}, 'broadcast', '{"k":5,"again":true}', 'rp', true);
                       SELECT realtime.send('{"marker":true}'::jsonb, 'marker', ${literal(topic)}, true);`);
        // The marker, committed after the repeated row, is the sentinel.
        for (const rec of [fresh.bc, limited.bc, v1.bc]) await rec.next((m) => m.event === 'marker', DELIVERY_MS, `the marker on ${rec.name}`);
        assert.deepEqual(fresh.bc.items.map((m) => [m.event, m.meta?.id]), [['rp', ids[4]], ['marker', fresh.bc.items[1]?.meta?.id]],
            'a channel that did not replay gets the repeated id live');
        assert.equal(limited.bc.items.filter((m) => m.meta?.id === ids[4]).length, 1, `replayed id 5 not delivered again: ${show(limited.bc.items)}`);
        assert.equal(v1.bc.items.filter((m) => m.meta?.id === ids[4]).length, 1, `replayed id 5 not delivered again (v1): ${show(v1.bc.items)}`);
    });

    test('replay refusals: public channel (tenant without history), invalid params, no broadcast read (raw client, exact reasons)', async () => {
        const r = await raw(authed());
        const topic = `topic:${unique('replay-err')}`;
        const since = Date.now() - 60_000;
        // A public channel has nothing to replay from on a tenant that keeps no history.
        const noHistory = await raw(authed(), '2.0.0', NOHISTORY);
        const pub = await noHistory.join(`realtime:${topic}`, { config: { private: false, broadcast: { replay: { since, limit: 2 } } } });
        assert.deepEqual(pub.payload, { status: 'error', response: { reason: 'UnableToReplayMessages: Replay is not allowed for public channels' } });
        // With history (tenant priv) the same public join is accepted: replay reads the topic's history.
        const withHistory = await raw(authed());
        const pubOk = await withHistory.join(`realtime:${topic}`, { config: { private: false, broadcast: { replay: { since, limit: 2 } } } });
        assert.equal(pubOk.payload.status, 'ok', `public replay with history: ${show(pubOk.payload)}`);
        const bad = await r.join(`realtime:${topic}`, { config: { private: true, broadcast: { replay: { limit: 2 } } } });
        assert.deepEqual(bad.payload, { status: 'error', response: { reason: 'UnableToReplayMessages: Replay params are not valid' } });
        const presOnly = `pres:${unique('replay-err')}`;
        const noRead = await r.join(`realtime:${presOnly}`,
            { config: { private: true, presence: { enabled: true, key: 'x' }, broadcast: { replay: { since } } } });
        assert.deepEqual(noRead.payload, { status: 'error', response: { reason: denied(presOnly) } },
            'replay needs broadcast read even when presence read admits the join');
        assert.throws(() => client(authed()).channel(topic, { config: { broadcast: { replay: { since } } } }), /replay on public channel/,
            'realtime-js itself refuses replay on a public channel');
    });

    test('HTTP private broadcast without write permission: httpSend rejects with "Unauthorized" (403), nothing delivered', async () => {
        const topic = `topic:ro-${unique('http')}`;
        const rx = await channel(client(authed('user-b')), topic);
        const c = client(authed('user-a'), '2.0.0', { fetch: hostFetch(server, TENANT) });
        const ch = c.channel(topic, { config: { private: true } });
        await assert.rejects(ch.httpSend('denied', { n: 1 }), (err) => err.message === 'Unauthorized');
        const anon = client(tokenFor({ role: 'anon' }), '2.0.0', { fetch: hostFetch(server, TENANT) });
        await assert.rejects(anon.channel(`topic:${unique('http')}`, { config: { private: true } }).httpSend('denied', { n: 2 }),
            (err) => err.message === 'Unauthorized');
        // Sentinel from the database: a private HTTP broadcast is published (or not) before its
        // answer, from the thread that checked the policies, and reaches rx's socket through its
        // I/O loop's queue, like the database broadcast sent after the answer.
        await dbSentinelBroadcast(su, topic, true, [rx.bc], { timeoutMs: DELIVERY_MS });
        assert.deepEqual(withoutSentinels(rx.bc.items), []);
    });

    test('HTTP private broadcast with write permission: httpSend → {success:true}, private subscribers receive it; batch API too',
        async () => {
            const topic = `topic:${unique('http')}`;
            const rx = await channel(client(authed('user-b')), topic);
            const pubRx = await channel(client(authed('user-c')), topic, { isPrivate: false });
            const c = client(authed('user-a'), '2.0.0', { fetch: hostFetch(server, TENANT) });
            const ch = c.channel(topic, { config: { private: true } });
            assert.deepEqual(await ch.httpSend('over-http', { n: 1 }), { success: true });
            const got = await rx.bc.next(() => true, 2000, 'the private HTTP broadcast');
            assert.deepEqual(withoutPosition(got, { offset: 1 }), { type: 'broadcast', event: 'over-http', payload: { n: 1 } });
            // The batch API: private messages need write too (spec §4.4).
            const res = await httpRequest(server, {
                method: 'POST', path: '/api/broadcast', host: server.hostFor(TENANT),
                headers: { Authorization: `Bearer ${authed('user-a')}` },
                body: { messages: [{ topic, event: 'batch', payload: { n: 2 }, private: true }] },
            });
            assert.equal(res.status, 202);
            await rx.bc.next((m) => m.event === 'batch', 2000, 'the private batch broadcast');
            // Without write (topic:ro-): the batch is still accepted, the message dropped.
            const ro = `topic:ro-${unique('http')}`;
            const roRx = await channel(client(authed('user-b')), ro);
            const dropped = await httpRequest(server, {
                method: 'POST', path: '/api/broadcast', host: server.hostFor(TENANT),
                headers: { Authorization: `Bearer ${authed('user-a')}` },
                body: { messages: [{ topic: ro, event: 'batch-denied', payload: { n: 3 }, private: true }, { topic, event: 'batch-ok', payload: { n: 4 }, private: true }] },
            });
            assert.equal(dropped.status, 202);
            assert.equal(dropped.body, '');
            await rx.bc.next((m) => m.event === 'batch-ok', 2000, 'the allowed message of the mixed batch');
            // Sentinels from the database, after the batches were answered (and so after anything
            // they published): each reaches its channel's socket after that.
            await dbSentinelBroadcast(su, topic, false, [pubRx.bc], { timeoutMs: DELIVERY_MS });
            await dbSentinelBroadcast(su, ro, true, [roRx.bc], { timeoutMs: DELIVERY_MS });
            await dbSentinelBroadcast(su, topic, true, [rx.bc], { timeoutMs: DELIVERY_MS });
            assert.deepEqual(withoutSentinels(pubRx.bc.items), [], 'nothing on the public channel of the same topic');
            assert.deepEqual(withoutSentinels(roRx.bc.items), [], 'the message without write permission was dropped');
            assert.deepEqual(withoutSentinels(rx.bc.items).map((m) => m.event), ['over-http', 'batch', 'batch-ok']);
        });
});
