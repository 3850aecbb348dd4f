// The admin API (issue 6 part 1, docs/admin-api.md): GET /api/admin/snapshot answers for the
// whole cluster from any node, and the live feed (/api/admin/live/websocket, a Phoenix V1 socket
// with the topic admin:cluster) pushes a snapshot at once and every second. Three nodes on a real
// etcd; realtime-js clients of one tenant on two of them broadcast to each other.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { operatorToken } from '../lib/admin.mjs';
import { ClientPool, joinChannel } from '../lib/clients.mjs';
import { flowsThroughHome, homeOf, memberIds, startEtcd, startNode } from '../lib/cluster.mjs';
import { RawClient } from '../lib/raw.mjs';
import { SELF_HOST_SECRET, SELF_HOST_TENANT, WORKERS } from '../lib/server.mjs';
import { httpRequest, Recorder, sleep, upgradeRequest, waitFor } from '../lib/util.mjs';

const TOKEN = operatorToken(SELF_HOST_SECRET);
const FEED = '/api/admin/live/websocket';

async function snapshotOf(node, headers = { Authorization: `Bearer ${TOKEN}` }) {
    return await httpRequest(node, { path: '/api/admin/snapshot', headers });
}

async function snapshot(node) {
    const res = await snapshotOf(node);
    assert.equal(res.status, 200, `GET /api/admin/snapshot answered ${res.status}: ${res.body}`);
    return res.json;
}

async function history(node) {
    const res = await httpRequest(node, { path: '/api/admin/history', headers: { Authorization: `Bearer ${TOKEN}` } });
    assert.equal(res.status, 200, `GET /api/admin/history answered ${res.status}: ${res.body}`);
    return res.json;
}

const COLUMNS = ['at', 'cpu', 'rss_bytes', 'connections', 'channels', 'messages_in_per_s',
    'messages_out_per_s', 'loop_lag_ms', 'load'];

/** Checks the shape of one node's samples (docs/admin-api.md); returns their times. */
function checkSamples(samples, what) {
    for (const sample of samples) {
        assert.equal(sample.length, COLUMNS.length, `${what}: one value per column`);
        assert.ok(Number.isInteger(sample[0]) && sample[1] >= 0 && sample[2] > 0, `${what}: ${sample}`);
        assert.ok(sample[8] === null || typeof sample[8] === 'number', `${what}: load ${sample[8]}`);
    }
    const times = samples.map((s) => s[0]);
    assert.deepEqual(times, [...times].sort((x, y) => x - y), `${what}: oldest first`);
    assert.equal(new Set(times).size, times.length, `${what}: one sample per time`);
    return times;
}

describe('admin API on a three-node cluster', () => {
    let dir;
    let etcd;
    const nodes = {};
    const pools = [];
    let traffic;
    let trafficRunning = true;
    let lastSnapshot; // for the timeout messages
    let expectedFlows; // [from, to] node pairs the traffic crosses (through the tenant's home)

    before(async () => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rt-e2e-admin-'));
        etcd = await startEtcd(dir);
        const prefix = `/e2e-admin-${process.pid}`;
        const regions = { 'node-a': 'eu', 'node-b': 'eu', 'node-c': 'us' };
        for (const name of ['node-a', 'node-b', 'node-c']) {
            // Loads are published at once (no minimum uptime), so the history starts now.
            nodes[name] = await startNode(etcd, {
                name, prefix, region: regions[name], env: { CLUSTER_LOAD_MIN_UPTIME_S: '0' },
            });
        }
        for (const node of Object.values(nodes)) {
            await waitFor(async () => (await memberIds(node)).length === 3, 8000, 'every node sees 3 members');
        }
        // One tenant, clients on node-a and node-b, broadcasting to each other all along.
        const topic = `admin-${process.pid}`;
        const members = [];
        for (const name of ['node-a', 'node-b']) {
            const pool = new ClientPool(nodes[name]);
            pools.push(pool);
            const client = pool.client({ vsn: '1.0.0' });
            const ch = client.channel(topic, { config: { broadcast: { self: false } } });
            const got = new Recorder(`broadcasts at ${name}`);
            ch.on('broadcast', { event: '*' }, got.fn);
            await joinChannel(ch);
            members.push({ ch, got });
        }
        // Traffic until the end of the file (the waits below are for its first deliveries).
        traffic = (async () => {
            for (let i = 0; trafficRunning; ++i) {
                members[i % 2].ch.send({ type: 'broadcast', event: 'tick', payload: { i } });
                await sleep(20); // the traffic's pace, not a wait for anything
            }
        })();
        await members[1].got.next((m) => m.event === 'tick', 3000, 'node-b receives node-a');
        await members[0].got.next((m) => m.event === 'tick', 3000, 'node-a receives node-b');
        expectedFlows = flowsThroughHome(['node-a', 'node-b'], await homeOf(nodes, SELF_HOST_TENANT));
    });

    after(async () => {
        trafficRunning = false;
        await traffic;
        await Promise.all(pools.splice(0).map((p) => p.cleanup()));
        await Promise.all(Object.values(nodes).map((n) => n.stop()));
        await etcd?.stop();
        if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    test('every node answers for the whole cluster: nodes, users, flows, configuration', async () => {
        for (const [name, node] of Object.entries(nodes)) {
            // Figures of other nodes arrive every 500 ms and rates are averaged over 2 s.
            const snap = await waitFor(async () => {
                const s = await snapshot(node);
                lastSnapshot = s;
                const byId = Object.fromEntries(s.nodes.map((n) => [n.id, n]));
                const ok = s.nodes.length === 3
                    && byId['node-a']?.connections > 0 && byId['node-b']?.connections > 0
                    // Broadcasts travel through the tenant's home (it numbers them).
                    && expectedFlows.every(([from, to]) => s.links.some((l) => l.from === from && l.to === to && l.messages_per_s > 0))
                    && s.tenant_flows.some((f) => f.node === 'node-a' && f.messages_in_per_s > 0)
                    && s.tenant_flows.some((f) => f.node === 'node-b' && f.messages_out_per_s > 0)
                    && s.tenants.some((t) => t.tenant === SELF_HOST_TENANT
                        && t.users['node-a'] > 0 && t.users['node-b'] > 0);
                return ok && s;
            }, 10_000, `a complete snapshot from ${name}`, () => lastSnapshot);
            assert.equal(snap.answered_by, name);
            assert.equal(snap.available, true);
            assert.ok(Math.abs(snap.taken_at - Date.now()) < 10_000);
            assert.deepEqual(snap.nodes.map((n) => n.id), ['node-a', 'node-b', 'node-c']);
            const byId = Object.fromEntries(snap.nodes.map((n) => [n.id, n]));
            assert.equal(byId['node-a'].region, 'eu');
            assert.equal(byId['node-c'].region, 'us');
            for (const n of snap.nodes) {
                assert.match(n.client_address, /^127\.0\.0\.1:\d+$/);
                assert.match(n.link_address, /^127\.0\.0\.1:\d+$/);
                assert.ok(n.started_at > 0);
                assert.ok(Array.isArray(n.load_history));
                assert.equal(n.available, true);
            }
            assert.equal(byId['node-c'].connections, 0);
            assert.ok(byId['node-a'].channels > 0);
            const tenant = snap.tenants.find((t) => t.tenant === SELF_HOST_TENANT);
            assert.equal(tenant.users['node-a'], 1);
            assert.equal(tenant.users['node-b'], 1);
            assert.equal(tenant.users['node-c'], undefined);
            for (const [from, to] of expectedFlows) {
                const link = snap.links.find((l) => l.from === from && l.to === to);
                assert.ok(link.bytes_per_s > 0, `bytes from ${from} to ${to}`);
            }
            assert.ok(snap.tenant_flows.every((f) => f.tenant === SELF_HOST_TENANT));
            assert.equal(typeof snap.config.revision, 'number');
            assert.ok(Array.isArray(snap.config.entries));
        }
    });

    test("each node's own figures: its process's CPU, memory and workers, not the host's", async () => {
        // Every node reported at its start; the figures of the others arrive every 500 ms.
        const snap = await waitFor(async () => {
            lastSnapshot = await snapshot(nodes['node-c']);
            return lastSnapshot.nodes.every((n) => typeof n.cpu === 'number' && n.workers?.length === WORKERS) && lastSnapshot;
        }, 5000, 'CPU and workers of every node', () => lastSnapshot?.nodes);
        for (const n of snap.nodes) {
            assert.ok(n.cpu >= 0 && n.cpu <= n.cpu_count * 1.1, `${n.id}: cpu ${n.cpu} of ${n.cpu_count} cores`);
            assert.ok(n.cpu_count >= 1);
            assert.ok(n.rss_bytes > 4 << 20 && n.rss_bytes < 4 * 2 ** 30, `${n.id}: rss ${n.rss_bytes}`);
            for (const w of n.workers) {
                assert.ok(w.cpu >= 0 && w.loop_lag_ms >= 0 && w.loop_lag_ms < 10_000, `${n.id}: worker ${JSON.stringify(w)}`);
            }
        }
        // Three processes on one host: their resident sets are their own (the host's load
        // average, the placement load, is one figure for all three).
        assert.equal(new Set(snap.nodes.map((n) => n.rss_bytes)).size, 3, 'three resident sets');
        // node-a and node-b carry the traffic: their CPU adds up over time, node-c's stays idle.
        const busy = await waitFor(async () => {
            lastSnapshot = await snapshot(nodes['node-a']);
            const byId = Object.fromEntries(lastSnapshot.nodes.map((n) => [n.id, n]));
            return byId['node-a'].cpu > 0 && byId['node-b'].cpu > 0 && byId;
        }, 10_000, 'CPU on the nodes with traffic', () => lastSnapshot?.nodes);
        assert.ok(busy['node-a'].workers.some((w) => w.cpu > 0), 'a worker of node-a does the work');
    });

    test('the last hour of every node: GET /api/admin/history', async () => {
        // node-b samples every 5 s what it holds: itself at once, the others once their figures
        // have arrived.
        let first;
        await waitFor(async () => {
            first = await history(nodes['node-b']);
            return first.nodes.length === 3;
        }, 12_000, 'a sample of every node', () => first?.nodes.map((n) => n.id));
        assert.equal(first.answered_by, 'node-b');
        assert.equal(first.interval_ms, 5000);
        assert.deepEqual(first.columns, COLUMNS);
        assert.deepEqual(first.nodes.map((n) => n.id), ['node-a', 'node-b', 'node-c']);
        const counts = Object.fromEntries(first.nodes.map((n) => [n.id, checkSamples(n.samples, n.id).length]));
        assert.ok(counts['node-b'] >= 1, 'the answering node has sampled itself since its start');
        // One sample every 5 s, for every member.
        let last;
        await waitFor(async () => {
            last = await history(nodes['node-b']);
            return last.nodes.every((n) => n.samples.length > counts[n.id]);
        }, 12_000, 'a longer history of every node', () => last?.nodes.map((n) => [n.id, n.samples.length]));
        for (const n of last.nodes) checkSamples(n.samples, n.id);
        const a = last.nodes.find((n) => n.id === 'node-a').samples.at(-1);
        assert.ok(a[3] >= 1, `node-a's connections in its last sample: ${a}`);
    });

    test('a node that joins later has the hour of the others at once', async () => {
        let aBefore;
        await waitFor(async () => {
            const before = await history(nodes['node-a']);
            aBefore = before.nodes.find((n) => n.id === 'node-a').samples;
            return aBefore.length >= 2;
        }, 12_000, 'node-a has sampled itself for a while', () => aBefore?.length);
        const joinedAt = Date.now();
        const late = await startNode(etcd, { name: 'node-d', prefix: `/e2e-admin-${process.pid}`, region: 'us' });
        try {
            // node-a sends its own hour when its link to node-d comes up: node-d's history of
            // node-a starts before node-d did.
            let seen;
            await waitFor(async () => {
                seen = await history(late);
                const a = seen.nodes.find((n) => n.id === 'node-a');
                return a && a.samples.length > 0 && a.samples[0][0] < joinedAt;
            }, 10_000, "node-a's earlier samples at node-d", () => seen?.nodes.map((n) => [n.id, n.samples.length]));
            const a = seen.nodes.find((n) => n.id === 'node-a');
            checkSamples(a.samples, 'node-a at node-d');
            // The same samples node-a keeps; the node link carries figures to 1/1000.
            const [theirs, own] = [a.samples[0], aBefore[0]];
            assert.equal(theirs.length, own.length);
            theirs.forEach((value, i) => {
                if (value === null || own[i] === null) assert.equal(value, own[i], `column ${i}`);
                else assert.ok(Math.abs(value - own[i]) <= 0.001, `column ${i}: ${value} vs ${own[i]}`);
            });
        } finally {
            await late.stop();
        }
        await waitFor(async () => (await memberIds(nodes['node-a'])).length === 3, 20_000, 'node-d gone again');
    });

    test('the load history grows', async () => {
        const first = await snapshot(nodes['node-c']);
        const lengths = Object.fromEntries(first.nodes.map((n) => [n.id, n.load_history.length]));
        assert.ok(first.nodes.every((n) => n.load !== null), 'loads are published');
        // One sample every 5 s.
        await waitFor(async () => {
            lastSnapshot = await snapshot(nodes['node-c']);
            return lastSnapshot.nodes.every((n) => n.load_history.length > lengths[n.id]);
        }, 12_000, 'a longer load history for every node', () => lastSnapshot.nodes.map((n) => n.load_history));
        for (const n of lastSnapshot.nodes) {
            const times = n.load_history.map((s) => s.at);
            assert.deepEqual(times, [...times].sort((x, y) => x - y), 'oldest first');
            assert.ok(n.load_history.every((s) => typeof s.load === 'number'));
        }
    });

    test('the snapshot refuses a missing or bad token like /api/cluster', async () => {
        assert.equal((await snapshotOf(nodes['node-a'], {})).status, 403);
        assert.equal((await snapshotOf(nodes['node-a'], { Authorization: 'Bearer nope' })).status, 403);
        const wrong = operatorToken('a-different-secret-of-at-least-32-characters!');
        assert.equal((await snapshotOf(nodes['node-a'], { Authorization: `Bearer ${wrong}` })).status, 403);
    });

    test('the live feed pushes a snapshot at once and every second', async () => {
        const raw = await RawClient.connect(nodes['node-b'], { vsn: '1.0.0', path: FEED, token: TOKEN });
        try {
            const started = Date.now();
            const ref = raw.push('admin:cluster', 'phx_join', {}, { joinRef: '1', ref: '1' });
            const reply = await raw.reply(ref, 2000, 'admin:cluster');
            assert.deepEqual(reply.payload, { status: 'ok', response: {} });
            await waitFor(() => raw.frames.filter((f) => f.event === 'snapshot').length >= 2, 2500,
                'two snapshot pushes', () => raw.frames.items.map((f) => f.event));
            assert.ok(Date.now() - started <= 2600);
            const pushes = raw.frames.filter((f) => f.event === 'snapshot');
            assert.equal(pushes[0].topic, 'admin:cluster');
            assert.equal(pushes[0].ref, null);
            assert.equal(pushes[0].payload.answered_by, 'node-b');
            assert.equal(pushes[0].payload.nodes.length, 3);
            // Heartbeats are answered as on the client socket.
            const hb = raw.push('phoenix', 'heartbeat', {});
            assert.deepEqual((await raw.reply(hb, 2000, 'phoenix')).payload, { status: 'ok', response: {} });
            // Other topics are not served here.
            const other = raw.push('realtime:room', 'phx_join', {}, { joinRef: '2' });
            assert.deepEqual((await raw.reply(other, 2000, 'realtime:room')).payload,
                { status: 'error', response: { reason: 'unmatched topic' } });
        } finally {
            raw.close();
        }
    });

    test('the live feed takes the token from the Authorization header too', async () => {
        const raw = await RawClient.connect(nodes['node-c'], {
            vsn: '1.0.0', path: FEED, headers: { Authorization: `Bearer ${TOKEN}` },
        });
        try {
            const ref = raw.push('admin:cluster', 'phx_join', {}, { joinRef: '1' });
            assert.equal((await raw.reply(ref, 2000)).payload.status, 'ok');
            const push = await raw.frames.next((f) => f.event === 'snapshot', 2000, 'a snapshot push');
            assert.equal(push.payload.answered_by, 'node-c');
        } finally {
            raw.close();
        }
    });

    test('the live feed refuses a missing or bad token with 403 at the upgrade', async () => {
        const node = nodes['node-a'];
        assert.equal((await upgradeRequest(node, { path: `${FEED}?vsn=1.0.0` })).status, 403);
        assert.equal((await upgradeRequest(node, { path: `${FEED}?vsn=1.0.0&apikey=bad` })).status, 403);
        assert.equal((await upgradeRequest(node, {
            path: `${FEED}?vsn=1.0.0`, headers: { Authorization: 'Bearer bad' },
        })).status, 403);
        const ok = await upgradeRequest(node, { path: `${FEED}?vsn=1.0.0&apikey=${TOKEN}` });
        assert.equal(ok.status, 101);
    });
});

describe('admin API on a single node (no etcd)', () => {
    test('the snapshot lists the node itself', async () => {
        const { startServer } = await import('../lib/server.mjs');
        const node = await startServer({ env: { NODE_NAME: 'solo', REGION: 'local' } });
        const pool = new ClientPool(node);
        try {
            const ch = pool.client({ vsn: '1.0.0' }).channel(`solo-${process.pid}`);
            await joinChannel(ch);
            const snap = await waitFor(async () => {
                const s = await snapshot(node);
                return s.nodes[0]?.connections > 0 && s.tenants.length > 0 && s;
            }, 5000, 'the single node with its client');
            assert.equal(snap.answered_by, 'solo');
            assert.deepEqual(snap.nodes.map((n) => n.id), ['solo']);
            assert.equal(snap.nodes[0].region, 'local');
            assert.deepEqual(snap.tenants.map((t) => [t.tenant, t.users]), [[SELF_HOST_TENANT, { solo: 1 }]]);
            assert.deepEqual(snap.links, []);
            assert.equal(typeof snap.nodes[0].cpu, 'number');
            const own = await history(node);
            assert.deepEqual(own.nodes.map((n) => n.id), ['solo']);
            assert.ok(own.nodes[0].samples.length >= 1, 'sampled from its start');
            checkSamples(own.nodes[0].samples, 'solo');
        } finally {
            await pool.cleanup();
            await node.stop();
        }
    });

    test('channels counts joined channels: one per socket and topic, whichever worker holds them', async () => {
        const { startServer } = await import('../lib/server.mjs');
        const node = await startServer({ env: { NODE_NAME: 'solo', REGION: 'local', WORKERS: '2' } });
        const pool = new ClientPool(node);
        try {
            // Four sockets (spread over the workers): three on one topic, one of them also on a
            // second topic, and one on a third: 3 + 1 + 1 = 5 channels of 3 topics.
            const shared = `shared-${process.pid}`;
            const clients = [pool.client(), pool.client(), pool.client(), pool.client()];
            await Promise.all([
                joinChannel(clients[0].channel(shared)),
                joinChannel(clients[1].channel(shared)),
                joinChannel(clients[2].channel(shared)),
                joinChannel(clients[2].channel(`second-${process.pid}`)),
                joinChannel(clients[3].channel(`third-${process.pid}`)),
            ]);
            let last;
            await waitFor(async () => {
                last = (await snapshot(node)).nodes[0];
                return last?.connections === 4 && last?.channels === 5;
            }, 5000, '4 connections and 5 channels', () => last);
        } finally {
            await pool.cleanup();
            await node.stop();
        }
    });
});
