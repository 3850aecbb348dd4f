// Cluster-wide counters (issue 5 part 8): max_concurrent_users holds across the nodes of a
// cluster, not per node, and GET /api/cluster shows every node's users of every tenant. Three
// nodes on a throwaway etcd; a tenant limited to 2 users gets one on node a and one on node b,
// so a third is refused on any node until one of them leaves; a node that leaves the cluster
// takes its users' figures along.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { adminApi, operatorToken } from '../lib/admin.mjs';
import { ClientPool, disconnect, joinChannel, subscribe, waitStatus } from '../lib/clients.mjs';
import { clusterView, memberIds, startEtcd, startNode } from '../lib/cluster.mjs';
import { token } from '../lib/jwt.mjs';
import { SELF_HOST_SECRET } from '../lib/server.mjs';
import { upgradeRequest, waitFor } from '../lib/util.mjs';

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
