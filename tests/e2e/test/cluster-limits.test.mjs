// Cluster-wide counters (issue 5 part 8): max_concurrent_users and max_events_per_second hold
// across the nodes of a cluster, not per node, and GET /api/cluster shows every node's users of
// every tenant. Three nodes on a throwaway etcd per describe.
//
// Users: a tenant limited to 2 users gets one on node a and one on node b, so a third is refused
// on any node until one of them leaves; a node that leaves the cluster takes its users' figures
// along.
//
// Events: a tenant limited to 20 events/s gets the same burst of broadcast pushes on a and then on
// b. One burst alone leaves every node's average under the limit (checked on all three nodes
// before the second burst); both together put every node over it, node c included, where the
// tenant's clients sent nothing: HTTP broadcasts are refused and a receiving channel is closed.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { adminApi, operatorToken } from '../lib/admin.mjs';
import { ClientPool, disconnect, joinChannel, subscribe, waitStatus } from '../lib/clients.mjs';
import { clusterView, memberIds, startEtcd, startNode } from '../lib/cluster.mjs';
import { token } from '../lib/jwt.mjs';
import { assertRateHeaders, channelLog, pollUntil, subscribed } from '../lib/limits-helpers.mjs';
import { RawClient } from '../lib/raw.mjs';
import { heartbeatBarrier } from '../lib/sentinel.mjs';
import { SELF_HOST_SECRET } from '../lib/server.mjs';
import { httpRequest, show, sleep, upgradeRequest, waitFor } from '../lib/util.mjs';

const TENANT = 'two-users';
const SECRET = `${TENANT}-cluster-limits-secret-0123456789abcdef`;
const TENANTS = [{ external_id: TENANT, jwt_secret: SECRET, max_concurrent_users: 2 }];

/** The tenant's users per node as `node` shows them ({} when none). */
async function usersOf(node) {
    return (await clusterView(node)).users?.[TENANT] ?? {};
}

/** Waits until every node in `nodes` shows exactly `expected` (node name -> users). */
async function waitUsers(nodes, expected, what) {
    const canonical = (users) => JSON.stringify(Object.entries(users).sort());
    for (const node of nodes) {
        let shown;
        await waitFor(async () => {
            shown = await usersOf(node);
            return canonical(shown) === canonical(expected);
        }, 5000, `${what} at ${node.name}`, () => shown);
    }
}

describe('cluster-wide max_concurrent_users', () => {
    let dir;
    let etcd;
    let nodes = []; // the live ones
    const all = [];
    const pools = [];
    const poolOf = (node) => {
        const pool = new ClientPool(node);
        pools.push(pool);
        return pool;
    };
    const client = (node) => poolOf(node).client({ tenant: TENANT, token: token(SECRET) });
    const connectRaw = (node) => upgradeRequest(node, {
        path: `/realtime/v1/websocket?apikey=${token(SECRET)}&vsn=2.0.0`,
        host: node.hostFor(TENANT),
    });

    before(async () => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rt-e2e-limits-'));
        etcd = await startEtcd(dir);
        const prefix = `/e2e-limits-${process.pid}`;
        for (const name of ['node-a', 'node-b', 'node-c']) {
            const node = await startNode(etcd, { name, prefix, tenants: TENANTS });
            node.name = name;
            nodes.push(node);
            all.push(node);
        }
        for (const node of nodes) {
            await waitFor(async () => (await memberIds(node)).length === 3, 8000, 'every node sees 3 members');
        }
    });

    after(async () => {
        await Promise.all(pools.map((p) => p.cleanup()));
        await Promise.all(all.map((n) => n.stop()));
        await etcd?.stop();
        if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    test('one user on a and one on b fill the tenant everywhere; a leave frees a place on any node', async () => {
        const [a, b, c] = nodes;
        await waitUsers(nodes, {}, 'no users yet');
        const first = client(a);
        await joinChannel(first.channel('first'));
        const second = client(b);
        await joinChannel(second.channel('second'));
        // Every node sees both, per node.
        await waitUsers(nodes, { 'node-a': 1, 'node-b': 1 }, 'one user on a and one on b');
        // The tenant's health counts the cluster's users (upstream's connected_cluster), even on
        // the node that has none.
        const health = await adminApi(c, { token: operatorToken(SELF_HOST_SECRET) }).health(TENANT);
        assert.equal(health.status, 200, health.body);
        assert.equal(health.json.data.connected_cluster, 2, `health at c: ${health.body}`);

        // A third user is refused at connect on the node that has none (the gate counts the
        // users of the other nodes) and on the nodes that have one.
        for (const node of [c, a, b]) {
            const res = await connectRaw(node);
            assert.equal(res.status, 429, `connect at ${node.name}: ${res.status} ${res.body}`);
            assert.deepEqual(res.json, { error: 'Too many connected users' });
        }
        // The unchanged realtime-js client sees its channel fail and never joins.
        const third = client(c).channel('third');
        subscribe(third);
        await waitStatus(third, 'CHANNEL_ERROR', 5000);
        assert.ok(!third.statuses.items.some((st) => st.status === 'SUBSCRIBED'), 'the over-limit user never joined');

        // b's user leaves: a place is free, on c as well.
        await disconnect(second);
        await waitUsers(nodes, { 'node-a': 1 }, 'b has no user any more');
        const accepted = (await connectRaw(c)).status;
        assert.equal(accepted, 101, 'a connect at c is upgraded');
        const fourth = client(c);
        await joinChannel(fourth.channel('fourth'));
        await waitUsers(nodes, { 'node-a': 1, 'node-c': 1 }, 'users on a and c');
        assert.equal((await connectRaw(b)).status, 429, 'full again: refused at b');
        await disconnect(fourth);
        await disconnect(first);
        await waitUsers(nodes, {}, 'everybody left');
    });

    test('a node that leaves the cluster takes its users along', async () => {
        const [a, b, c] = nodes;
        await joinChannel(client(a).channel('on-a'));
        await joinChannel(client(c).channel('on-c'));
        await waitUsers([a, b, c], { 'node-a': 1, 'node-c': 1 }, 'users on a and c');
        assert.equal((await connectRaw(b)).status, 429, 'full: refused at b');

        // c dies without a word: its lease expires and the others forget its user.
        await c.kill('SIGKILL');
        nodes = [a, b];
        await waitFor(async () => (await memberIds(b)).length === 2, 10_000, 'c left the membership');
        await waitUsers([a, b], { 'node-a': 1 }, 'only a has a user');
        await joinChannel(client(b).channel('on-b'));
        await waitUsers([a, b], { 'node-a': 1, 'node-b': 1 }, 'users on a and b');
    });
});

// -------------------------------------------------------------------------------------------------
// max_events_per_second across the cluster.
//
// The tenant's events counter on each node (server/limits: RateCounterOptions::forKind) ticks every
// 5 s and keeps the last 12 samples; its average is (sum of the samples) / samples / 5, so with the
// same events in the window it only falls as samples are added, and never below sum / 60. A
// broadcast push counts once on its node, refused or not, plus one per delivery; the pumped topics
// have no member on any node, so a burst of SHARE pushes adds exactly SHARE. At each tick a node
// notes the local part of the sample (never what its peers reported), sends it to its peers within
// 500 ms (server/app/cluster_counters.cpp), and each peer adds it to its own counter, if it has one
// already, at its next tick (RateCounter::addRemote). So a burst shows in its node's window at the
// next tick and in the other nodes' windows about one tick later.
//
// The probe, a POST /api/broadcast of n private messages: the tenant has no database, so nothing
// is sent or counted, and the answer reads the node's events average (server/http/
// broadcast_routes.cpp): 429 "You have exceeded your rate limit" when avg > max, else 429 "Too many
// messages to broadcast" when n + avg > max, else 202. A receiving channel is closed at its next
// delivery once a tick found avg >= max. (Probes also count in the node's own HTTP request counter,
// limited at trunc(requests/s) >= max; polling every 250 ms stays far below 20.)
//
// The arithmetic, with max 20 and SHARE 720: the counters are created on all three nodes first and
// left to fill their windows for WARM_UP_MS, so that a burst lands in a sample >= 11 (>= 8 even if a
// loaded machine lost three ticks). One share alone then averages at most 720 / 8 / 5 = 18 (12 with
// a full window) on any node: a probe of 1 is accepted (18 + 1 <= 20) and the channel limit is not
// reached (18 < 20), while a probe of ARRIVAL_BATCH = 10 tells that the share has arrived (> 10 + 10
// = 20). Both shares in one window average at least 1440 / 60 = 24 > 20 whatever the number of
// samples, and a's share stays in every window for a minute after it lands, much longer than the
// test waits for b's to join it (at most 2 x 25 s). The one message sent and delivered on c
// during the control adds 2 events (0.05/s). Were the counts not shared, a and b would stay at
// their own share and c at nearly nothing, and the test would fail from the first arrival check on
// another node.
const EVENTS_TENANT = 'events-20';
const EVENTS_SECRET = `${EVENTS_TENANT}-cluster-limits-secret-0123456789abcdef`;
const EVENTS_MAX = 20;
const SHARE = 720;
const ARRIVAL_BATCH = 10;
const WARM_UP_MS = 46_000; // the counters' ticks 1..10 (t0 .. t0 + 45 s) have run
/** Kinds of a channelLog's items, in order. */
const kindsOf = (log) => log.items.map((e) => (e.kind === 'status' ? `status:${e.status}` : e.kind));
const EXCEEDED = { message: 'You have exceeded your rate limit' };
const TOO_MANY = { message: 'Too many messages to broadcast, please reduce the batch size' };

describe('cluster-wide max_events_per_second', () => {
    let dir;
    let etcd;
    const nodes = [];
    const pools = [];
    const poolOf = (node) => {
        const pool = new ClientPool(node);
        pools.push(pool);
        return pool;
    };

    before(async () => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rt-e2e-events-'));
        etcd = await startEtcd(dir);
        const prefix = `/e2e-events-${process.pid}`;
        const tenants = [{ external_id: EVENTS_TENANT, jwt_secret: EVENTS_SECRET, max_events_per_second: EVENTS_MAX }];
        for (const name of ['node-a', 'node-b', 'node-c']) {
            const node = await startNode(etcd, { name, prefix, tenants });
            node.name = name;
            nodes.push(node);
        }
        for (const node of nodes) {
            await waitFor(async () => (await memberIds(node)).length === 3, 8000, 'every node sees 3 members');
        }
    });

    after(async () => {
        await Promise.all(pools.map((p) => p.cleanup()));
        const results = await Promise.all(nodes.map((n) => n.stop()));
        await etcd?.stop();
        if (dir) fs.rmSync(dir, { recursive: true, force: true });
        for (const [i, result] of results.entries()) {
            assert.equal(result?.crashedBeforeStop ?? null, null, `${nodes[i].name} exited during the tests:\n${result?.stderr}`);
        }
    });

    /** POST /api/broadcast of n private messages at `node` (see above: reads the average, counts nothing). */
    const probe = (node, n = 1) => httpRequest(node, {
        method: 'POST',
        path: '/api/broadcast',
        host: node.hostFor(EVENTS_TENANT),
        headers: { Authorization: `Bearer ${token(EVENTS_SECRET)}` },
        body: { messages: Array.from({ length: n }, (_, i) => ({ topic: 'probe', event: 'probe', payload: { i }, private: true })) },
    });
    const answer = (res) => (res.status === 202 ? 202 : `${res.status} ${res.body}`);
    const isExceeded = (res) => res.status === 429 && isDeepStrictEqual(res.json, EXCEEDED);
    const isTooMany = (res) => res.status === 429 && isDeepStrictEqual(res.json, TOO_MANY);

    /**
     * Bounds of the node's average from the smallest batch n (1..max) that no longer fits:
     * max - n < avg <= max - n + 1 (n = 1 refused: avg > max - 1; none refused: avg <= 0).
     */
    async function averageAt(node) {
        let lo = 1;
        let hi = EVENTS_MAX + 1; // the smallest refused batch is in [lo, hi]; hi: none refused
        while (lo < hi) {
            const mid = Math.floor((lo + hi) / 2);
            if ((await probe(node, mid)).status === 202) lo = mid + 1;
            else hi = mid;
        }
        return { above: EVENTS_MAX - lo, atMost: EVENTS_MAX - lo + 1 };
    }

    /** A raw v2 client on `node` joined to `topic` with acks; push(count) sends count broadcasts and awaits their acks. */
    async function pumpOn(node, topic) {
        const raw = poolOf(node).track(await RawClient.connect(node, { token: token(EVENTS_SECRET), host: node.hostFor(EVENTS_TENANT) }));
        const joined = await raw.join(`realtime:${topic}`, { config: { broadcast: { ack: true, self: false } } });
        assert.equal(joined.payload.status, 'ok', `join ${topic} at ${node.name}: ${show(joined.payload)}`);
        return async (count) => {
            const refs = Array.from({ length: count }, (_, i) =>
                raw.push(joined.topic, 'broadcast', { type: 'broadcast', event: 'pump', payload: { i } }, { joinRef: joined.joinRef }));
            for (const ref of refs) assert.equal((await raw.reply(ref, 10_000)).payload.status, 'ok', `ack of a push at ${node.name}`);
        };
    }

    test('bursts on a and on b that each stay under the limit exceed it together, on every node', async (t) => {
        const [a, b, c] = nodes;
        const started = Date.now();
        const at = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;

        // The counters of every node, created by a first probe each (average 0: accepted).
        for (const node of nodes) assert.equal(answer(await probe(node)), 202, `first probe at ${node.name}`);
        const t0 = Date.now();
        // Nothing observable marks the ticks of an idle counter: wait for the windows to fill
        // (time passing is the behaviour here).
        await sleep(t0 + WARM_UP_MS - Date.now());

        const pumpA = await pumpOn(a, 'pump-a');
        const pumpB = await pumpOn(b, 'pump-b');
        // A sender and a receiver on c, where the tenant's clients send nothing else.
        const cPool = poolOf(c);
        const senderClient = cPool.client({ tenant: EVENTS_TENANT, token: token(EVENTS_SECRET) });
        const sender = senderClient.channel('room-c', { config: { broadcast: { ack: true } } });
        await subscribed(sender);
        const receiverClient = cPool.client({ tenant: EVENTS_TENANT, token: token(EVENTS_SECRET) });
        const receiver = receiverClient.channel('room-c');
        const log = channelLog(receiver);
        await subscribed(receiver, log);

        // a's share, alone.
        await pumpA(SHARE);
        t.diagnostic(`${at()}: ${SHARE} pushes acknowledged at node-a`);
        for (const node of [a, b, c]) {
            // The share has arrived once a batch of 10 no longer fits (avg > 10); it is a's own
            // traffic at a and reported traffic at b and c.
            const arrived = await pollUntil(() => probe(node, ARRIVAL_BATCH), {
                until: (r) => r.status !== 202, intervalMs: 250, timeoutMs: 25_000, what: `a's share at ${node.name}`,
            });
            t.diagnostic(`${at()}: a's share counted at ${node.name}`);
            assert.ok(isTooMany(arrived), `a's share alone at ${node.name}: expected 10 < avg <= 20 ("Too many messages to broadcast"), got ${answer(arrived)}`);
            assert.equal(answer(await probe(node)), 202, `a's share alone at ${node.name}: a probe of 1 still fits (avg <= 19)`);
            // Closer: the share counted once (720 / samples / 5 with 8..12 samples: 12 .. 18).
            const avg = await averageAt(node);
            t.diagnostic(`${at()}: average at ${node.name} in (${avg.above}, ${avg.atMost}]`);
            assert.ok(avg.atMost >= SHARE / 60 && avg.above < SHARE / 40, `average of a's share alone at ${node.name}: (${avg.above}, ${avg.atMost}]`);
        }
        // ... and the counter of c is not triggered: a delivery there does not close the receiver.
        assert.equal(await sender.send({ type: 'broadcast', event: 'msg', payload: { seq: 1 } }), 'ok');
        await log.next((e) => e.kind === 'broadcast' && e.payload.seq === 1, 3000, 'the first message on c');
        // A shutdown caused by that delivery would be queued on the receiver's own I/O loop at
        // delivery and run before the loop reads more frames: a heartbeat round trip on the
        // receiver's socket is the sentinel (a broadcast one would add to the counted events).
        await heartbeatBarrier(receiverClient);
        assert.deepEqual(kindsOf(log), ['status:SUBSCRIBED', 'broadcast'], 'a\'s share alone does not close a receiver on c');
        assert.equal(answer(await probe(c)), 202, 'still under the limit at c');

        // b's share: together over the limit, on every node.
        await pumpB(SHARE);
        t.diagnostic(`${at()}: ${SHARE} pushes acknowledged at node-b`);
        for (const node of [c, a, b]) {
            const over = await pollUntil(async () => {
                const res = await probe(node);
                assert.ok(res.status === 202 || isTooMany(res) || isExceeded(res), `probe at ${node.name}: ${answer(res)}`);
                return res;
            }, { until: isExceeded, intervalMs: 250, timeoutMs: 25_000, what: `"You have exceeded your rate limit" at ${node.name}` });
            assertRateHeaders(over, EVENTS_MAX, `on the 429 at ${node.name}`);
            t.diagnostic(`${at()}: both shares counted at ${node.name} (exceeded)`);
        }
        // The counter of c is triggered: the next delivery there closes the receiver; the sender stays.
        assert.equal(await sender.send({ type: 'broadcast', event: 'msg', payload: { seq: 2 } }), 'ok');
        const system = await log.next((e) => e.kind === 'system', 3000, 'system message on the receiver at c');
        assert.deepEqual(system.payload, { extension: 'system', status: 'error', message: 'Too many messages per second', channel: 'room-c' });
        await log.next((e) => e.kind === 'status' && e.status === 'CLOSED', 2000, 'receiver closed');
        assert.deepEqual(kindsOf(log), ['status:SUBSCRIBED', 'broadcast', 'broadcast', 'system', 'status:CLOSED'], `receiver at c: ${show(log.items)}`);
        assert.equal(sender.state, 'joined', 'the sender (no self) is not closed');
    });
});
