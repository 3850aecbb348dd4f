// Positions and recovery on a three-node cluster over etcd (issue 19; docs/design-notes.md
// "Positions, history and recovery"), with the unchanged realtime-js:
//
// - every tenant with clients has a home (the node holding its stream/<tenant> claim, GET
//   /api/cluster `homes`); broadcasts from clients and the HTTP API of any node are numbered
//   there, so every subscriber on every node sees the same epoch and offsets, consecutive;
// - a subscriber on a node that is not the home recovers from the home's history (the node asks
//   it and holds live messages back meanwhile): a TCP reset mid-stream at 500 messages/s ends
//   with every message exactly once, in order;
// - the same when the subscriber's node is killed (-9) and the client reconnects to another node;
// - outside the home's history the rejoin answers recovered: false, "history too short";
// - replay.since on a public channel joined on a node that is not the home reads the home's
//   history.
//
// - with a tenant database (PostgreSQL 15): postgres_changes and database broadcasts are
//   numbered at the home (the stream's owner) and carry the same position on every node; one
//   transaction's realtime.send calls arrive and recover in call order on a node that is not the
//   home; wait-mode joins on such a node followed at once by a write miss nothing (100 trials);
//   a message persisted from such a node (realtime-js persist: true) is stored once, acked with
//   its row id, numbered at the home and delivered once to every node with that id.
//
// The subscribers are the README's recovering channels (lib/recovery.mjs); they reach their node
// through a TCP proxy that can reset the connection and send the reconnect to another node.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import { startPgCluster } from '../lib/admin.mjs';
import { ClientPool, joinChannel, subscribe } from '../lib/clients.mjs';
import { homeOf, memberIds, startEtcd, startNode } from '../lib/cluster.mjs';
import { token } from '../lib/jwt.mjs';
import { createDatabase, literal, PG_BIN, pgBinariesPresent, psqlAs, tenantSeed } from '../lib/pg.mjs';
import {
    assertConsecutive, pacedPublisher, positionOf, rawBroadcast, rawBroadcasts, recoveringChannel, sequenceReport,
} from '../lib/recovery.mjs';
import { RawClient } from '../lib/raw.mjs';
import { httpConnection, sentinelBroadcast, withoutSentinels } from '../lib/sentinel.mjs';
import { startTcpProxy } from '../lib/tcp-proxy.mjs';
import { Recorder, show, waitFor } from '../lib/util.mjs';

const SECRET = 'cluster-recovery-jwt-secret-0123456789abcdefghijklmnop';
/** Tenants every node knows (seeded alike): large history, and a short one. */
const TENANTS = [
    { external_id: 'recall', jwt_secret: SECRET, history_size: 5000, max_events_per_second: 1_000_000, migrations_ran: 81 },
    { external_id: 'shortmem', jwt_secret: SECRET, history_size: 5, max_events_per_second: 1_000_000, migrations_ran: 81 },
];

let seq = 0;
const unique = (name) => `${name}-${process.pid % 10000}-${++seq}`;

describe('positions and recovery on a three-node cluster', () => {
    let dir;
    let etcd;
    const nodes = {};
    const pools = [];
    const proxies = [];
    const httpConns = [];
    const rawClients = [];

    before(async () => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rt-e2e-recovery-'));
        etcd = await startEtcd(dir);
        const prefix = `/e2e-recovery-${process.pid}`;
        for (const name of ['node-a', 'node-b', 'node-c']) {
            nodes[name] = await startNode(etcd, { name, prefix, tenants: TENANTS });
        }
        for (const node of Object.values(nodes)) {
            await waitFor(async () => (await memberIds(node)).length === 3, 8000, 'every node sees 3 members');
        }
    });

    afterEach(async () => {
        for (const conn of httpConns.splice(0)) conn.close();
        for (const raw of rawClients.splice(0)) raw.close();
        await Promise.all(pools.splice(0).map((p) => p.cleanup()));
        await Promise.all(proxies.splice(0).map((p) => p.close()));
    });

    after(async () => {
        await Promise.all(Object.values(nodes).map((n) => n.stop()));
        await etcd?.stop();
        if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    /** A realtime-js client of `tenant` on `node` (or through `proxy` in front of it). */
    function clientOn(node, tenant, { proxy, ...opts } = {}) {
        const target = proxy ? { ...node, wsUrl: (p = '/realtime/v1') => `ws://127.0.0.1:${proxy.port}${p}` } : node;
        const pool = new ClientPool(target);
        pools.push(pool);
        return pool.client({ tenant, token: token(SECRET), ...opts });
    }

    async function publisherOn(node, tenant, sub) {
        const ch = clientOn(node, tenant, { wire: false }).channel(sub, { config: { broadcast: { self: false, ack: true } } });
        await joinChannel(ch);
        return ch;
    }

    /** The tenant's home once a client of it exists, and the other two nodes. */
    async function placeTenant(tenant) {
        const ch = clientOn(nodes['node-a'], tenant).channel(unique('probe'));
        await joinChannel(ch);
        const home = await homeOf(nodes, tenant);
        const others = Object.keys(nodes).filter((n) => n !== home).sort();
        return { home, others };
    }

    /** POST /api/broadcast of `tenant` on `node` over one kept-alive connection. */
    function httpOn(node, tenant) {
        const conn = httpConnection(node);
        httpConns.push(conn);
        return async (messages) => {
            const res = await conn.request({
                method: 'POST', path: '/api/broadcast', host: node.hostFor(tenant),
                headers: { apikey: token(SECRET) }, body: { messages },
            });
            assert.equal(res.status, 202, `POST /api/broadcast: ${res.status} ${res.body}`);
        };
    }

    test('positions: broadcasts from clients and the HTTP API of every node are numbered once, at the home: the same epoch and consecutive offsets for subscribers on all three nodes', async () => {
        const tenant = 'recall';
        const { home } = await placeTenant(tenant);
        const sub = unique('pos');
        const subscribers = {};
        for (const name of Object.keys(nodes)) {
            subscribers[name] = recoveringChannel(clientOn(nodes[name], tenant), sub);
            await joinChannel(subscribers[name].channel);
        }
        const clients = {};
        for (const name of Object.keys(nodes)) clients[name] = await publisherOn(nodes[name], tenant, sub);
        const http = {};
        for (const name of Object.keys(nodes)) http[name] = httpOn(nodes[name], tenant);
        const steps = [];
        for (const name of Object.keys(nodes)) steps.push(['client', name], ['http', name]);
        steps.push(...steps.slice().reverse());
        for (const [i, [kind, name]] of steps.entries()) {
            if (kind === 'client') {
                assert.equal(await clients[name].send({ type: 'broadcast', event: 'step', payload: { i } }), 'ok');
            } else {
                await http[name]([{ topic: sub, event: 'step', payload: { i } }]);
            }
            // One at a time: each is numbered before the next is sent (different paths to the home).
            for (const s of Object.values(subscribers)) await s.got.next((m) => m.payload?.i === i, 5000, `step ${i} everywhere`);
        }
        const views = Object.fromEntries(Object.entries(subscribers).map(([name, s]) => [name, s.got.items.map((m) => ({ i: m.payload.i, ...positionOf(m) }))]));
        for (const [name, view] of Object.entries(views)) {
            assert.deepEqual(view.map((v) => v.i), steps.map((_, i) => i), `${name} got every step once, in order`);
            assertConsecutive(subscribers[name].got.items, views[home][0].offset, `${name} (home ${home})`);
            assert.deepEqual(view, views[home], `${name} sees the positions the home's subscriber sees`);
        }
    });

    /**
     * A subscriber on `subscriberNode` (through a proxy) and a publisher on `publisherNode` at 500
     * messages/s; mid-stream the subscriber's path is cut (`cut`: reset, or kill -9 of its node),
     * then it reconnects through the proxy to `reconnectNode`. Asserts every message exactly once,
     * in order, and the rejoin answered recovered: true.
     */
    async function streamWithCut(t, { tenant, subscriberNode, publisherNode, reconnectNode, cut }) {
        const TOTAL = 2500;
        const PER_SECOND = 500;
        const CUT_AFTER = 600;
        const MISSED = 300;
        const sub = unique('stream');
        const proxy = await startTcpProxy({ port: nodes[subscriberNode].port });
        proxies.push(proxy);
        const client = clientOn(nodes[subscriberNode], tenant, { proxy, reconnectAfterMs: () => 100 });
        const closes = new Recorder('subscriber socket closes');
        client.socketAdapter.getSocket().onClose((event) => closes.push({ code: event?.code }));
        const s = recoveringChannel(client, sub);
        const statuses = await joinChannel(s.channel);
        const pubCh = await publisherOn(nodes[publisherNode], tenant, sub);
        const publisher = pacedPublisher(pubCh, TOTAL, PER_SECOND);

        await waitFor(() => s.got.items.length >= CUT_AFTER, 20_000, `${CUT_AFTER} messages at the subscriber`,
            () => ({ received: s.got.items.length, sent: publisher.sent }));
        proxy.pause({ mode: 'refuse' });
        await cut();
        await closes.next(() => true, 5000, 'the subscriber to see its socket close');
        const receivedAtClose = s.got.items.length;
        const positionAtClose = { ...s.channel.params.config.broadcast.recover };
        const sentAtClose = publisher.sent;
        assert.ok(sentAtClose + MISSED < TOTAL, `the cut came mid-stream (sent ${sentAtClose} of ${TOTAL})`);
        await waitFor(() => publisher.sent >= sentAtClose + MISSED, 10_000, `${MISSED} messages published meanwhile`);
        proxy.retarget({ port: nodes[reconnectNode].port });
        await proxy.resume();
        await waitFor(() => s.replies.items.length >= 2, 20_000, 'the reply to the rejoin', () => ({ statuses: statuses.items }));
        await publisher.done;
        await sentinelBroadcast(pubCh, [s.got], { timeoutMs: 20_000 });

        const [first, rejoin] = s.replies.items;
        assert.notEqual(first.response.recovered, true, `first join reply ${show(first.response)}`);
        assert.equal(rejoin.response.recovered, true, `rejoin reply on ${reconnectNode} ${show(rejoin.response)}`);
        assert.equal(rejoin.received, receivedAtClose, 'nothing arrived between the close and the rejoin reply');
        assert.deepEqual(positionOf(s.got.items[receivedAtClose]),
            { epoch: positionAtClose.epoch, offset: positionAtClose.offset + 1 }, 'the first message after the rejoin follows the last one before');
        const msgs = withoutSentinels(s.got.items);
        const seqs = msgs.map((m) => m.payload?.seq);
        assert.equal(seqs.length, TOTAL, sequenceReport(seqs, TOTAL));
        assert.ok(seqs.every((x, i) => x === i), sequenceReport(seqs, TOTAL));
        assertConsecutive(msgs, msgs[0].meta.offset, 'the stream');
        t.diagnostic(`subscriber on ${subscriberNode}, publisher on ${publisherNode}, rejoined on ${reconnectNode}; `
            + `${receivedAtClose} before the cut, ${TOTAL - receivedAtClose} after`);
    }

    test('a subscriber on a node that is not the home: its TCP connection reset mid-stream (500 messages/s), it rejoins the same node and recovers from the home: every message once, in order', { timeout: 120_000 }, async (t) => {
        const tenant = 'recall';
        const { others: [x, y] } = await placeTenant(tenant);
        await streamWithCut(t, { tenant, subscriberNode: x, publisherNode: y, reconnectNode: x, cut: async () => {} });
    });

    test('recovery outside the home\'s history (history_size 5, 20 missed) on a node that is not the home: recovered false, "history too short", then live messages only', async () => {
        const tenant = 'shortmem';
        const { home, others: [x] } = await placeTenant(tenant);
        const sub = unique('short');
        const publish = httpOn(nodes[home], tenant);
        await publish([{ topic: sub, event: 'old', payload: { n: 0 } }]);
        const earlier = recoveringChannel(clientOn(nodes[x], tenant), sub);
        await joinChannel(earlier.channel);
        await publish([{ topic: sub, event: 'seen', payload: { n: 1 } }]);
        const last = await earlier.got.next((m) => m.event === 'seen', 5000, 'the message seen before leaving');
        const from = positionOf(last);
        for (let n = 0; n < 20; ++n) await publish([{ topic: sub, event: 'missed', payload: { n } }]);
        const late = recoveringChannel(clientOn(nodes[x], tenant), sub, { recover: from });
        await joinChannel(late.channel);
        const reply = await late.replies.next(() => true, 5000, 'the join reply');
        assert.equal(reply.response.recovered, false, show(reply.response));
        assert.equal(reply.response.reason, 'history too short', show(reply.response));
        await publish([{ topic: sub, event: 'live', payload: { n: 99 } }]);
        const live = await late.got.next((m) => m.event === 'live', 5000, 'the live message');
        assert.equal(late.got.items.filter((m) => m.event === 'missed').length, 0, 'nothing of the history');
        assert.deepEqual(positionOf(live), { epoch: from.epoch, offset: from.offset + 21 }, 'the live message carries the next offset');
        // A made-up epoch: the home says the epoch changed.
        const stranger = recoveringChannel(clientOn(nodes[x], tenant), sub, { recover: { epoch: '00000000000000aa', offset: 3 } });
        await joinChannel(stranger.channel);
        const strangerReply = await stranger.replies.next(() => true, 5000, 'the join reply');
        assert.deepEqual([strangerReply.response.recovered, strangerReply.response.reason], [false, 'epoch changed']);
    });

    test('replay.since on a public channel joined on a node that is not the home: the home\'s messages since then, the newest `limit`, with their positions; then live ones', async () => {
        const tenant = 'recall';
        const { home, others: [x] } = await placeTenant(tenant);
        const sub = unique('replay');
        const live = recoveringChannel(clientOn(nodes[home], tenant), sub);
        await joinChannel(live.channel);
        const publish = httpOn(nodes[x], tenant);
        for (let i = 1; i <= 3; ++i) await publish([{ topic: sub, event: 'a', payload: { i } }]);
        await live.got.next((m) => m.event === 'a' && m.payload.i === 3, 5000, 'the last message before since');
        const lastA = Date.now();
        await waitFor(() => Date.now() > lastA, 1000, 'the clock to pass the last message before since');
        const since = Date.now();
        for (let i = 1; i <= 4; ++i) await publish([{ topic: sub, event: 'b', payload: { i } }]);
        await live.got.next((m) => m.event === 'b' && m.payload.i === 4, 5000, 'the last message after since');
        // realtime-js refuses replay on public channels itself: a raw client asks.
        const raw = await RawClient.connect(nodes[x], { vsn: '2.0.0', token: token(SECRET), host: nodes[x].hostFor(tenant) });
        rawClients.push(raw);
        const topic = `realtime:${sub}`;
        const reply = await raw.join(topic, { config: { broadcast: { self: false, replay: { since, limit: 3 } } } });
        assert.equal(reply.payload.status, 'ok', reply.text);
        await publish([{ topic: sub, event: 'c', payload: { i: 1 } }]);
        await raw.frames.next((f) => rawBroadcast(f, topic)?.event === 'c', 5000, 'the live message after the replay');
        const view = (m) => ({ event: m.event, i: m.payload.i, ...positionOf(m) });
        const got = rawBroadcasts(raw, topic);
        const expected = live.got.items.filter((m) => m.event === 'b').slice(-3).map(view);
        assert.deepEqual(got.slice(0, 3).map(view), expected, 'the newest 3 since then, oldest first, with the home\'s positions');
        assert.deepEqual(got.slice(3).map((m) => m.event), ['c'], 'then live ones only');
    });

    // Last: it kills a node.
    test('the subscriber\'s node is killed (-9) mid-stream and the client reconnects to the home: every message once, in order, recovered', { timeout: 120_000 }, async (t) => {
        const tenant = 'recall';
        const { home, others: [x, y] } = await placeTenant(tenant);
        await streamWithCut(t, {
            tenant, subscriberNode: x, publisherNode: y, reconnectNode: home,
            cut: async () => nodes[x].kill('SIGKILL'),
        });
        delete nodes[x];
    });
});

const pgSkip = !pgBinariesPresent() && `PostgreSQL 15 binaries not found in ${PG_BIN}`;
const DB_TENANT = 'recdb';
/** The tenant database's region (lib/pg.mjs): the nodes run there, so all three are candidates. */
const DB_REGION = 'us-east-1';
const FIRST_JOIN_MS = 30_000;
const DELIVERY_MS = 10_000;

describe('positions and recovery of database messages on a three-node cluster', { skip: pgSkip }, () => {
    let dir;
    let etcd;
    let pg;
    let db;
    const nodes = {};
    const pools = [];

    before(async () => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rt-e2e-recdb-'));
        pg = await startPgCluster(path.join(dir, 'pg'));
        await createDatabase(pg.env, 'rt_recdb');
        db = psqlAs(pg.env, { database: 'rt_recdb' });
        await db.exec(`CREATE TABLE items (id int PRIMARY KEY, v text);
                       GRANT SELECT ON items TO anon, authenticated;
                       CREATE PUBLICATION supabase_realtime FOR TABLE items;`);
        etcd = await startEtcd(path.join(dir, 'etcd'));
        const prefix = `/e2e-recdb-${process.pid}`;
        const tenants = [tenantSeed(DB_TENANT, SECRET, pg.env, 'rt_recdb', {
            settings: { slot_name: 'rt_e2e_recdb_slot' }, max_events_per_second: 1_000_000, history_size: 1000,
        })];
        for (const name of ['node-a', 'node-b', 'node-c']) {
            nodes[name] = await startNode(etcd, { name, prefix, region: DB_REGION, tenants });
        }
        for (const node of Object.values(nodes)) {
            await waitFor(async () => (await memberIds(node)).length === 3, 8000, 'every node sees 3 members');
        }
    });

    afterEach(async () => {
        await Promise.all(pools.splice(0).map((p) => p.cleanup()));
    });

    after(async () => {
        await Promise.all(pools.splice(0).map((p) => p.cleanup()));
        await Promise.all(Object.values(nodes).map((n) => n.stop()));
        await etcd?.stop();
        await pg?.stop?.();
        if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    function clientOn(node, opts = {}) {
        const pool = new ClientPool(node);
        pools.push(pool);
        return pool.client({ tenant: DB_TENANT, token: token(SECRET), timeout: FIRST_JOIN_MS, ...opts });
    }

    /** A channel on `sub` at `name` with an INSERT binding on items; SUBSCRIBED and "Subscribed to PostgreSQL". */
    async function changesChannel(name, sub) {
        const client = clientOn(nodes[name]);
        const ch = client.channel(sub);
        const changes = new Recorder(`changes at ${name}`);
        const system = new Recorder(`system at ${name}`);
        ch.on('postgres_changes', { event: 'INSERT', schema: 'public', table: 'items' }, changes.fn);
        ch.on('system', {}, system.fn);
        await subscribe(ch, FIRST_JOIN_MS).next((x) => x.status === 'SUBSCRIBED', FIRST_JOIN_MS * 2, `${name} SUBSCRIBED`);
        await system.next((m) => m?.extension === 'postgres_changes', FIRST_JOIN_MS, `${name}: Subscribed to PostgreSQL`);
        return { client, ch, changes };
    }

    /** The postgres_changes pushes of `sub` a client received (realtime-js drops their meta: read the wire). */
    function changePushes(client, sub) {
        return client.wire.items
            .filter((f) => f.dir === 'in' && typeof f.data === 'string')
            .map((f) => JSON.parse(f.data))
            .filter((m) => m[2] === `realtime:${sub}` && m[3] === 'postgres_changes')
            .map((m) => ({ id: m[4].data?.record?.id, epoch: m[4].meta?.epoch, offset: m[4].meta?.offset }));
    }

    test('postgres_changes: subscribers on all three nodes get each change with the same epoch and offset, rising in commit order', { timeout: 120_000 }, async () => {
        const sub = unique('changes');
        const subs = {};
        for (const name of Object.keys(nodes)) subs[name] = await changesChannel(name, sub);
        const home = await homeOf(nodes, DB_TENANT);
        for (let id = 1; id <= 5; ++id) await db.exec(`INSERT INTO items VALUES (${id}, 'v${id}')`);
        for (const [name, s] of Object.entries(subs)) {
            await waitFor(() => changePushes(s.client, sub).length >= 5, DELIVERY_MS, `5 changes at ${name}`, () => changePushes(s.client, sub));
        }
        const atHome = changePushes(subs[home].client, sub);
        assert.deepEqual(atHome.map((c) => c.id), [1, 2, 3, 4, 5], 'commit order');
        assert.ok(atHome.every((c) => /^[0-9a-f]{16}$/.test(c.epoch) && c.epoch === atHome[0].epoch), show(atHome));
        assert.ok(atHome.every((c, i) => i === 0 || c.offset > atHome[i - 1].offset), `offsets rise: ${show(atHome)}`);
        for (const [name, s] of Object.entries(subs)) {
            assert.deepEqual(changePushes(s.client, sub), atHome, `${name} sees the home's positions (home ${home})`);
        }
    });

    test('one transaction of realtime.send calls: every node gets them in call order with consecutive offsets; a join recovering from before them on a node that is not the home gets them again', { timeout: 120_000 }, async () => {
        // Any channel of the tenant opens its stream; the home is the stream's owner.
        await changesChannel('node-a', unique('warm'));
        const home = await homeOf(nodes, DB_TENANT);
        const [x] = Object.keys(nodes).filter((n) => n !== home);
        const sub = unique('dbsend');
        const subs = {};
        for (const name of Object.keys(nodes)) {
            subs[name] = recoveringChannel(clientOn(nodes[name]), sub);
            await joinChannel(subs[name].channel);
        }
        await db.exec(`SELECT realtime.send('{"k":0}'::jsonb, 'before', ${literal(sub)}, false)`);
        const before0 = await subs[x].got.next((m) => m.event === 'before', DELIVERY_MS, 'the message before the transaction');
        const start = positionOf(before0);
        await db.exec(`BEGIN;
            ${[1, 2, 3, 4, 5].map((k) => `SELECT realtime.send('{"k":${k}}'::jsonb, 'ev', ${literal(sub)}, false);`).join('\n')}
            COMMIT;`);
        const view = (m) => ({ event: m.event, k: m.payload.k, ...positionOf(m) });
        for (const [name, s] of Object.entries(subs)) {
            await s.got.next((m) => m.payload?.k === 5, DELIVERY_MS, `the last message at ${name}`);
        }
        for (const [name, s] of Object.entries(subs)) {
            assert.deepEqual(s.got.items.filter((m) => m.event === 'ev').map((m) => m.payload.k), [1, 2, 3, 4, 5], `call order at ${name}`);
            assertConsecutive(s.got.items, start.offset, `${name}`);
            assert.deepEqual(s.got.items.map(view), subs[home].got.items.map(view), `${name} sees the home's positions`);
        }
        const late = recoveringChannel(clientOn(nodes[x]), sub, { recover: start });
        await joinChannel(late.channel);
        assert.equal(late.replies.items[0].response.recovered, true, `join reply ${show(late.replies.items[0].response)}`);
        await db.exec(`SELECT realtime.send('{"k":6}'::jsonb, 'live', ${literal(sub)}, false)`);
        await late.got.next((m) => m.event === 'live', DELIVERY_MS, 'the live message after the recovery');
        assert.deepEqual(late.got.items.slice(0, -1).map(view), subs[x].got.items.filter((m) => m.event === 'ev').map(view),
            'the transaction again, in call order, with its positions');
        assert.deepEqual(positionOf(late.got.items.at(-1)), { epoch: start.epoch, offset: start.offset + 6 }, 'then the live one');
        assert.equal(late.got.items.length, 6, show(late.got.items.map(view)));
    });

    test('persist from a node that is not the home: the ack carries the row id, subscribers on every node get it once with that id and the home\'s position; one stored row', { timeout: 120_000 }, async () => {
        await changesChannel('node-a', unique('warm'));
        const su = psqlAs(pg.env, { database: 'rt_recdb', superuser: true });
        await waitFor(async () => (await su.value("SELECT to_regclass('realtime.messages') IS NOT NULL")) === 't',
            30_000, 'realtime.messages (tenant migrations)');
        await su.exec(`DROP POLICY IF EXISTS rec_read ON realtime.messages;
            DROP POLICY IF EXISTS rec_write ON realtime.messages;
            CREATE POLICY rec_read ON realtime.messages FOR SELECT TO authenticated USING (realtime.topic() LIKE 'saved-%');
            CREATE POLICY rec_write ON realtime.messages FOR INSERT TO authenticated
                WITH CHECK (realtime.topic() LIKE 'saved-%' AND realtime.messages.extension IN ('broadcast', 'persistence'));`);
        const home = await homeOf(nodes, DB_TENANT);
        const [x] = Object.keys(nodes).filter((n) => n !== home);
        const topic = `saved-${unique('persist')}`;
        const authed = (sub) => token(SECRET, { role: 'authenticated', sub });
        const privateChannel = async (name, sub) => {
            const c = clientOn(nodes[name], { token: authed(sub) });
            const ch = c.channel(topic, { config: { private: true, broadcast: { ack: true, self: false } } });
            const got = new Recorder(`broadcasts at ${name}`);
            ch.on('broadcast', { event: '*' }, got.fn);
            const first = await subscribe(ch, 10_000).next(() => true, 15_000, `a status at ${name}`);
            assert.equal(first.status, 'SUBSCRIBED', `${name}: ${first.err?.message}`);
            return { c, ch, got };
        };
        const sender = await privateChannel(x, 'writer');
        const receivers = {};
        for (const name of Object.keys(nodes)) receivers[name] = await privateChannel(name, `reader-${name}`);
        assert.equal(await sender.ch.send({ type: 'broadcast', event: 'note', payload: { kept: true }, persist: true }), 'ok');
        const ack = sender.c.wire.items
            .filter((f) => f.dir === 'in' && typeof f.data === 'string')
            .map((f) => JSON.parse(f.data))
            .filter((m) => m[2] === `realtime:${topic}` && m[3] === 'phx_reply')
            .at(-1);
        const rowId = ack?.[4]?.response?.id;
        assert.match(String(rowId), /^[0-9a-f-]{36}$/, `the ack carries the row id: ${show(ack)}`);
        const views = {};
        for (const [name, r] of Object.entries(receivers)) {
            const msg = await r.got.next((m) => m.event === 'note', DELIVERY_MS, `the persisted message at ${name}`);
            views[name] = { id: msg.meta?.id, ...positionOf(msg) };
            assert.equal(views[name].id, rowId, `${name}: meta.id is the stored row's id`);
        }
        for (const name of Object.keys(nodes)) assert.deepEqual(views[name], views[home], `${name} sees the home's position`);
        assert.match(String(views[home].epoch), /^[0-9a-f]{16}$/);
        assert.equal(await su.value(`SELECT count(*) FROM realtime.messages WHERE topic = ${literal(topic)}`), '1', 'one stored row');
        // A database sentinel on the topic, committed after the row: a second delivery would come first.
        await su.exec(`SELECT realtime.send('{"end":true}'::jsonb, 'end', ${literal(topic)}, true)`);
        for (const [name, r] of Object.entries(receivers)) {
            await r.got.next((m) => m.event === 'end', DELIVERY_MS, `the sentinel at ${name}`);
            assert.equal(r.got.items.filter((m) => m.event === 'note').length, 1, `${name} got it once`);
        }
        assert.equal(sender.got.items.filter((m) => m.event === 'note').length, 0, 'not echoed to the sender (self: false)');
    });

    test('100 joins with postgres_changes_options.wait on a node that is not the stream\'s owner, each followed at once by its write: every row arrives', { timeout: 240_000 }, async () => {
        await changesChannel('node-a', unique('warm'));
        const home = await homeOf(nodes, DB_TENANT);
        const [x] = Object.keys(nodes).filter((n) => n !== home);
        const client = clientOn(nodes[x]);
        const channels = [];
        for (let k = 0; k < 100; k++) {
            const id = 10_000 + k;
            const ch = client.channel(unique('wait'), { config: { postgres_changes_options: { wait: true } } });
            const rows = new Recorder(`row ${id}`);
            ch.on('postgres_changes', { event: 'INSERT', schema: 'public', table: 'items', filter: `id=eq.${id}` }, rows.fn);
            const first = await subscribe(ch, 40_000).next(() => true, 45_000, `a status for row ${id}'s channel`);
            assert.equal(first.status, 'SUBSCRIBED', `trial ${k} on ${x}: ${first.err?.message}`);
            await db.exec(`INSERT INTO items VALUES (${id}, 'trial')`);
            channels.push({ id, rows });
        }
        for (const { id, rows } of channels) {
            const row = await rows.next((c) => c.new.id === id, 15_000, `row ${id}`);
            assert.equal(row.new.v, 'trial');
        }
    });
});
