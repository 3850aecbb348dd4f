// Tenant API writes through one node apply on every node at once (the node tells its peers over
// the links; each re-reads the tenant from the shared PostgreSQL control plane). The nodes
// re-read the control plane only every 10 minutes here, so without the notice every step below
// would wait that long: a tenant created through node-a is refused on node-b with "Tenant not
// found", a suspend leaves node-b's clients connected, a delete keeps admitting them.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { adminApi, operatorToken, startPgCluster } from '../lib/admin.mjs';
import { ClientPool, joinChannel } from '../lib/clients.mjs';
import { memberIds, startEtcd, startNode } from '../lib/cluster.mjs';
import { token } from '../lib/jwt.mjs';
import { PG_BIN, pgBinariesPresent } from '../lib/pg.mjs';
import { SELF_HOST_SECRET } from '../lib/server.mjs';
import { Recorder, upgradeRequest, waitFor } from '../lib/util.mjs';

const skip = !pgBinariesPresent() && `PostgreSQL 15 binaries not found in ${PG_BIN}`;
const SECRET = 'cluster-tenants-secret-0123456789abcdefghijklm';
const DB_ENC_KEY = '0123456789abcdef';
const DISCONNECT = { extension: 'system', status: 'ok', message: 'Server requested disconnect' };
// Far below the 10-minute cache: only the notice can make a node see the write this soon.
const APPLIED_MS = 5000;

describe('tenant API writes through one node apply on every node at once', { skip }, () => {
    let dir;
    let etcd;
    let pg;
    const nodes = {};
    const pools = [];

    before(async () => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rt-e2e-cltenants-'));
        pg = await startPgCluster(path.join(dir, 'pg'));
        etcd = await startEtcd(path.join(dir, 'etcd'));
        const prefix = `/e2e-cltenants-${process.pid}`;
        const env = { ...pg.serverEnv, DB_ENC_KEY, TENANT_CACHE_EXPIRATION_IN_MS: '600000' };
        for (const name of ['node-a', 'node-b']) nodes[name] = await startNode(etcd, { name, prefix, env });
        for (const node of Object.values(nodes)) {
            await waitFor(async () => (await memberIds(node)).length === 2, 8000, 'both nodes see both');
        }
    });

    after(async () => {
        await Promise.all(pools.splice(0).map((p) => p.cleanup()));
        await Promise.all(Object.values(nodes).map((n) => n.stop()));
        await etcd?.stop();
        await pg?.stop?.();
        if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    const api = () => adminApi(nodes['node-a'], { token: operatorToken(SELF_HOST_SECRET) });
    /** The status of a WebSocket upgrade for `tenant` on `node` (101 when admitted). */
    const upgradeStatus = async (node, tenant) => (await upgradeRequest(node, {
        path: `/socket/websocket?vsn=2.0.0&apikey=${token(SECRET, {})}`, host: node.hostFor(tenant),
    })).status;

    test('created through node-a: node-b admits its clients; suspended: node-b drops them; deleted: node-b refuses them', { timeout: 60_000 }, async () => {
        const tenant = `written-${process.pid}`;
        const nodeB = nodes['node-b'];
        assert.equal(await upgradeStatus(nodeB, tenant), 404, 'unknown before it is created');

        const created = await api().create({ external_id: tenant, name: tenant, jwt_secret: SECRET, extensions: [] });
        assert.equal(created.status, 201, created.body);
        await waitFor(async () => (await upgradeStatus(nodeB, tenant)) === 101, APPLIED_MS,
            `node-b admits clients of ${tenant}`);

        const pool = new ClientPool(nodeB);
        pools.push(pool);
        const client = pool.client({ tenant, token: token(SECRET, {}) });
        const ch = client.channel('room');
        const system = new Recorder('system messages on node-b');
        ch.on('system', {}, system.fn);
        await joinChannel(ch);

        assert.equal((await api().patch(tenant, { suspend: true })).status, 200);
        const message = await system.next((m) => m?.message === DISCONNECT.message, APPLIED_MS,
            'node-b disconnects the suspended tenant\'s client');
        assert.deepEqual(message, DISCONNECT);
        await waitFor(async () => (await upgradeStatus(nodeB, tenant)) === 403, APPLIED_MS,
            'node-b refuses the suspended tenant (403)');

        assert.equal((await api().del(tenant)).status, 204);
        await waitFor(async () => (await upgradeStatus(nodeB, tenant)) === 404, APPLIED_MS,
            'node-b refuses the deleted tenant (404)');
    });
});
