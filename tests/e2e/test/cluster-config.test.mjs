// Cluster configuration in etcd (issue 5 part 9): edits through any node's admin API are
// compare-and-swap, reach every node within a second, temporary overrides expire by themselves,
// and per-tenant limit overrides and flags take effect on every node.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { operatorToken } from '../lib/admin.mjs';
import { ClientPool, joinChannel, selfHostToken, subscribe, waitStatus } from '../lib/clients.mjs';
import { clusterView, memberIds, startEtcd, startNode } from '../lib/cluster.mjs';
import { RawClient } from '../lib/raw.mjs';
import { SELF_HOST_SECRET } from '../lib/server.mjs';
import { httpRequest, sleep, waitFor } from '../lib/util.mjs';

const auth = { Authorization: `Bearer ${operatorToken(SELF_HOST_SECRET)}` };
const config = (node) => httpRequest(node, { path: '/api/cluster/config', headers: auth });
const put = (node, key, body) => httpRequest(node, { method: 'PUT', path: `/api/cluster/config/${key}`, headers: auth, body });
const del = (node, key, query = '') => httpRequest(node, { method: 'DELETE', path: `/api/cluster/config/${key}${query}`, headers: auth });

describe('cluster configuration in etcd', () => {
    let dir;
    let etcd;
    let nodes = [];

    before(async () => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rt-e2e-config-'));
        etcd = await startEtcd(dir);
        const prefix = `/e2e-config-${process.pid}`;
        for (const name of ['node-a', 'node-b', 'node-c', 'node-d']) {
            nodes.push(await startNode(etcd, { name, prefix }));
        }
        for (const node of nodes) {
            await waitFor(async () => (await memberIds(node)).length === 4, 8000, 'every node sees 4 members');
        }
    });

    after(async () => {
        await Promise.all(nodes.map((n) => n.stop()));
        await etcd?.stop();
        if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    test('an edit on one node is applied on all four within 1 s; a conflicting edit gets 409 and overwrites nothing', async () => {
        const [a, b] = nodes;
        const key = 'tenant_limits.realtime-dev';
        const created = await put(a, key, { value: { max_events_per_second: 500 }, expected_revision: 0 });
        assert.equal(created.status, 200, created.body);
        const revision = created.json.revision;
        assert.ok(revision > 0);
        const startedAt = Date.now();
        const seenAfter = await Promise.all(nodes.map(async (node) => {
            await waitFor(async () => (await config(node)).json.revision >= revision, 3000, `node ${node.port} at the revision`);
            return Date.now() - startedAt;
        }));
        assert.ok(Math.max(...seenAfter) < 1000, `applied everywhere after ${seenAfter.join(', ')} ms`);
        const shown = (await config(b)).json;
        const entry = shown.entries.find((e) => e.key === key);
        assert.deepEqual(entry.value, { max_events_per_second: 500 });
        assert.equal(entry.mod_revision, revision);
        assert.equal(entry.temporary, false);
        assert.equal(shown.available, true);

        // A second writer that read nothing (expects the key absent) and one with a stale revision.
        const absent = await put(b, key, { value: { max_events_per_second: 1 }, expected_revision: 0 });
        assert.equal(absent.status, 409, absent.body);
        assert.deepEqual(absent.json.current.value, { max_events_per_second: 500 });
        assert.equal(absent.json.current.mod_revision, revision);
        const stale = await put(b, key, { value: { max_events_per_second: 2 }, expected_revision: revision - 1 });
        assert.equal(stale.status, 409);
        // The right revision wins.
        const updated = await put(b, key, { value: { max_events_per_second: 600 }, expected_revision: revision });
        assert.equal(updated.status, 200, updated.body);
        await waitFor(async () => (await config(a)).json.entries.find((e) => e.key === key)?.value.max_events_per_second === 600,
            1000, 'the update at a');
        assert.equal((await del(a, key, `?expected_revision=${revision}`)).status, 409, 'delete with a stale revision');
        assert.equal((await del(a, key, `?expected_revision=${updated.json.revision}`)).status, 200);
        await waitFor(async () => !(await config(b)).json.entries.some((e) => e.key === key), 1000, 'deleted at b');
    });

    test('invalid values are refused with 422 before they reach etcd; no token, no access', async () => {
        const [a] = nodes;
        const bad = await put(a, 'tenant_limits.realtime-dev', { value: { max_events_per_second: -5 } });
        assert.equal(bad.status, 422, bad.body);
        const unknown = await put(a, 'no_such_setting', { value: {} });
        assert.equal(unknown.status, 422, unknown.body);
        const anonymous = await httpRequest(a, { path: '/api/cluster/config' });
        assert.equal(anonymous.status, 403);
    });

    test('a temporary override expires by itself on every node', async () => {
        const [a, , c] = nodes;
        const key = 'region_mapping';
        const res = await put(a, key, { value: { 'eu-west-1': 'eu' }, expected_revision: 0, ttl_seconds: 2 });
        assert.equal(res.status, 200, res.body);
        await waitFor(async () => (await config(c)).json.entries.find((e) => e.key === key)?.temporary === true, 1000, 'temporary at c');
        // etcd expires leases in whole seconds, a little after the TTL.
        await waitFor(async () => !(await config(c)).json.entries.some((e) => e.key === key), 8000, 'expired at c');
        await waitFor(async () => !(await config(a)).json.entries.some((e) => e.key === key), 1000, 'expired at a');
    });

    test('tenant flags apply on every node: private_only drops public channels and refuses new ones, presence_enabled gives every join presence', async () => {
        const [a, b, c, d] = nodes;
        const key = 'tenant_flags.realtime-dev';
        const DISCONNECT = { extension: 'system', status: 'ok', message: 'Server requested disconnect' };
        const raws = [];
        const connect = async (node) => {
            const raw = await RawClient.connect(node, { vsn: '1.0.0', token: selfHostToken() });
            raws.push(raw);
            return raw;
        };
        const unique = (what) => `realtime:flags-${what}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
        try {
            // A public channel on b, open before the flag.
            const early = await connect(b);
            const earlyTopic = unique('early');
            assert.equal((await early.join(earlyTopic)).payload.status, 'ok');

            const res = await put(a, key, { value: { private_only: true }, expected_revision: 0 });
            assert.equal(res.status, 200, res.body);
            // b drops its public channel as for a stored private_only change: the system
            // message on the channel, then close 1012.
            await waitFor(() => early.closed, 3000, 'b closes the public channel\'s socket');
            assert.equal(early.closed.code, 1012);
            const system = early.frames.items.find((f) => f.event === 'system');
            assert.deepEqual(system?.object, { topic: earlyTopic, event: 'system', payload: DISCONNECT, ref: null },
                JSON.stringify(early.frames.items));
            // Every node refuses public joins now (c and d only had to watch etcd).
            for (const node of [c, d]) {
                await waitFor(async () => (await config(node)).json.revision >= res.json.revision, 1000, `node ${node.port} has the flag`);
                const refused = await (await connect(node)).join(unique('public'));
                assert.deepEqual(refused.payload, { status: 'error', response: { reason: 'PrivateOnly: This project only allows private channels' } },
                    `public join at node ${node.port}`);
            }

            // presence_enabled instead (private_only left out: the stored false applies again).
            const flagged = await put(a, key, { value: { presence_enabled: true }, expected_revision: res.json.revision });
            assert.equal(flagged.status, 200, flagged.body);
            await waitFor(async () => (await config(d)).json.revision >= flagged.json.revision, 1000, 'd has presence_enabled');
            const member = await connect(d);
            const topic = unique('presence');
            const joined = await member.join(topic); // presence: { enabled: false } in the join
            assert.equal(joined.payload.status, 'ok', JSON.stringify(joined.payload));
            const state = await member.next((f) => f.event === 'presence_state' && f.topic === topic, 2000, 'presence_state after the join', true);
            assert.deepEqual(state.payload, {});

            // Without the flag, a join that does not ask for presence gets none again.
            const removed = await del(a, key, `?expected_revision=${flagged.json.revision}`);
            assert.equal(removed.status, 200, removed.body);
            await waitFor(async () => (await config(d)).json.revision >= removed.json.revision, 1000, 'd dropped the flags');
            const plain = await connect(d);
            const plainTopic = unique('plain');
            assert.equal((await plain.join(plainTopic, { config: { broadcast: { ack: true, self: false } } })).payload.status, 'ok');
            // The ack of a push sent after the join comes after any presence_state would have.
            const ref = plain.push(plainTopic, 'broadcast', { type: 'broadcast', event: 'mark', payload: {} });
            await plain.reply(ref);
            assert.ok(!plain.frames.items.some((f) => f.event === 'presence_state'), JSON.stringify(plain.frames.items));
        } finally {
            for (const raw of raws) raw.close();
            await del(a, key);
        }
    });

    test('a limit override applies on every node: max_concurrent_users = 1 refuses a second user elsewhere', async () => {
        const [a, b] = nodes;
        const key = 'tenant_limits.realtime-dev';
        const res = await put(a, key, { value: { max_concurrent_users: 1 }, expected_revision: 0 });
        assert.equal(res.status, 200, res.body);
        const poolA = new ClientPool(a);
        const poolB = new ClientPool(b);
        try {
            await waitFor(async () => (await config(b)).json.revision >= res.json.revision, 1000, 'b has the override');
            // The earlier tests' users have left every node's count (the nodes exchange them every 500 ms).
            await waitFor(async () => Object.values((await clusterView(a)).users?.['realtime-dev'] ?? {}).every((n) => n === 0),
                3000, "a counts nobody's users of realtime-dev");
            await joinChannel(poolA.client().channel('first'));
            // The limit holds across the cluster: once b knows of a's user (GET /api/cluster shows
            // it), b's first user is refused at connect.
            await waitFor(async () => (await clusterView(b)).users?.['realtime-dev']?.['node-a'] === 1,
                2000, "b counts a's user");
            const second = poolB.client().channel('second');
            subscribe(second);
            await waitStatus(second, 'CHANNEL_ERROR', 5000);
            assert.ok(!second.statuses.items.some((st) => st.status === 'SUBSCRIBED'), 'the over-limit user never joined');
            // Without the override the default limit applies again, on b too.
            const removed = await del(a, key);
            assert.equal(removed.status, 200);
            await waitFor(async () => (await config(b)).json.revision >= removed.json.revision, 1000, 'b dropped the override');
            await joinChannel(poolB.client().channel('fourth'));
        } finally {
            await poolA.cleanup();
            await poolB.cleanup();
            await del(a, key);
        }
    });
});
