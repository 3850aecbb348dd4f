// The cluster on etcd (issue 5): nodes of one cluster find each other through etcd, a node that
// leaves or dies disappears from every view, a new node joins without configuration elsewhere,
// and the cluster serves on while etcd is down.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ClientPool, joinChannel } from '../lib/clients.mjs';
import { clusterView, LEASE_TTL_S, memberIds, startEtcd, startNode } from '../lib/cluster.mjs';
import { httpRequest, sleep, waitFor } from '../lib/util.mjs';

describe('cluster membership through etcd', () => {
    let dir;
    let etcd;
    const nodes = [];
    let prefixCounter = 0;
    const prefix = () => `/e2e-${process.pid}-${++prefixCounter}`;

    before(async () => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rt-e2e-etcd-'));
        etcd = await startEtcd(dir);
    });

    after(async () => {
        await Promise.all(nodes.map((n) => n.stop()));
        await etcd?.stop();
        if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    async function start(name, p, opts = {}) {
        const node = await startNode(etcd, { name, prefix: p, ...opts });
        nodes.push(node);
        return node;
    }

    test('three nodes see each other with their addresses and region', async () => {
        const p = prefix();
        const a = await start('node-a', p, { region: 'eu' });
        const b = await start('node-b', p, { region: 'eu' });
        const c = await start('node-c', p, { region: 'us' });
        for (const node of [a, b, c]) {
            await waitFor(async () => (await memberIds(node)).length === 3, 5000, `${node.port} sees 3 nodes`);
        }
        const view = await clusterView(b);
        assert.equal(view.node, 'node-b');
        assert.equal(view.backend, 'etcd');
        assert.equal(view.available, true);
        const byId = Object.fromEntries(view.nodes.map((n) => [n.id, n]));
        assert.deepEqual(Object.keys(byId).sort(), ['node-a', 'node-b', 'node-c']);
        assert.equal(byId['node-a'].client_address, `127.0.0.1:${a.port}`);
        assert.equal(byId['node-c'].client_address, `127.0.0.1:${c.port}`);
        assert.equal(byId['node-a'].region, 'eu');
        assert.equal(byId['node-c'].region, 'us');
        assert.match(byId['node-b'].link_address, /^127\.0\.0\.1:\d+$/);
        assert.ok(byId['node-a'].started_at > 0);
        // Young nodes have no 5-minute load average to report yet ("not enough data").
        assert.equal(byId['node-a'].load, null);
    });

    test('a node that is stopped leaves at once; one that is killed leaves within the lease TTL', async () => {
        const p = prefix();
        const a = await start('node-a', p);
        const b = await start('node-b', p);
        const c = await start('node-c', p);
        await waitFor(async () => (await memberIds(a)).length === 3, 5000, 'a sees 3 nodes');

        const stoppedAt = Date.now();
        await b.stop(); // SIGTERM: revokes its lease
        await waitFor(async () => !(await memberIds(a)).includes('node-b'), 2000, 'b gone after SIGTERM');
        assert.ok(Date.now() - stoppedAt < LEASE_TTL_S * 1000, 'a graceful leave does not wait for the lease');

        const killedAt = Date.now();
        await c.kill('SIGKILL');
        await waitFor(async () => !(await memberIds(a)).includes('node-c'), (LEASE_TTL_S + 3) * 1000, 'c gone after kill -9');
        const tookMs = Date.now() - killedAt;
        assert.ok(tookMs <= (LEASE_TTL_S + 2) * 1000, `left after ${tookMs} ms`);
        assert.deepEqual(await memberIds(a), ['node-a']);
    });

    test('a new node joins with no configuration change elsewhere', async () => {
        const p = prefix();
        const a = await start('node-a', p);
        const b = await start('node-b', p);
        await waitFor(async () => (await memberIds(a)).length === 2, 5000, 'a sees 2 nodes');
        const d = await start('node-d', p);
        for (const node of [a, b, d]) {
            await waitFor(async () => (await memberIds(node)).join() === 'node-a,node-b,node-d', 5000, 'all see node-d');
        }
    });

    test('etcd down: nodes report it and serve on; etcd back: the same cluster again', async () => {
        const p = prefix();
        const a = await start('node-a', p);
        const b = await start('node-b', p);
        await waitFor(async () => (await memberIds(a)).length === 2, 5000, 'a sees 2 nodes');
        const pool = new ClientPool(a);
        try {
            const client = pool.client();
            const channel = client.channel('outage');
            await joinChannel(channel);

            const haltedAt = Date.now();
            await etcd.halt();
            try {
                await waitFor(async () => (await clusterView(a)).available === false, 8000, 'a reports etcd unavailable');
                // Degraded, not down: the members stay as last known, sockets stay open, joins work.
                assert.deepEqual(await memberIds(a), ['node-a', 'node-b']);
                // Time passing is the behaviour here: the outage outlasts the lease TTL.
                await sleep(Math.max(0, haltedAt + (LEASE_TTL_S + 1) * 1000 - Date.now()));
                assert.ok(Date.now() - haltedAt > LEASE_TTL_S * 1000, 'the outage lasted longer than the lease TTL');
                assert.deepEqual(await memberIds(a), ['node-a', 'node-b'], 'members as last known after the lease TTL');
                assert.equal(client.isConnected(), true, 'the socket survived the outage');
                const second = client.channel('during-outage');
                await joinChannel(second);
            } finally {
                await etcd.resume();
            }
            for (const node of [a, b]) {
                await waitFor(async () => {
                    const view = await clusterView(node);
                    return view.available && view.nodes.map((n) => n.id).sort().join() === 'node-a,node-b';
                }, 15000, `node ${node.port} available again with both members`);
            }
            assert.equal(client.isConnected(), true);
        } finally {
            await pool.cleanup();
        }
    });

    test('clusters under different prefixes do not mix', async () => {
        const p1 = prefix();
        const p2 = prefix();
        const one = await start('node-x', p1);
        const two = await start('node-y', p2);
        for (const [node, name] of [[one, 'node-x'], [two, 'node-y']]) {
            await waitFor(async () => (await memberIds(node)).includes(name), 5000, `${name} registered`);
        }
        // Sentinels: a second node in each cluster, registered after the other cluster's node.
        // Once a node lists its sentinel, it has read etcd past the other node's registration.
        await start('node-x2', p1);
        await waitFor(async () => (await memberIds(one)).includes('node-x2'), 5000, 'node-x sees node-x2');
        assert.deepEqual(await memberIds(one), ['node-x', 'node-x2']);
        await start('node-y2', p2);
        await waitFor(async () => (await memberIds(two)).includes('node-y2'), 5000, 'node-y sees node-y2');
        assert.deepEqual(await memberIds(two), ['node-y', 'node-y2']);
    });
});

describe('a single node without etcd', () => {
    test('runs on the embedded in-process backend and lists itself', async () => {
        const { startServer } = await import('../lib/server.mjs');
        const server = await startServer({ env: { NODE_NAME: 'solo' } });
        try {
            await waitFor(async () => (await memberIds(server)).length === 1, 3000, 'solo registered');
            const view = await clusterView(server);
            assert.equal(view.backend, 'in_process');
            assert.equal(view.available, true);
            assert.equal(view.nodes[0].id, 'solo');
            assert.equal(view.nodes[0].client_address.endsWith(`:${server.port}`), true);
            // Operators only: the tenant API's secret signs the token.
            const anonymous = await httpRequest(server, { path: '/api/cluster' });
            assert.equal(anonymous.status, 403);
        } finally {
            await server.stop();
        }
    });
});
