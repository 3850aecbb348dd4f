// Broadcast and presence across the nodes of a cluster (issue 5 parts 6 and 7), with the
// unchanged realtime-js: clients on different nodes of one etcd cluster talk as if they shared a
// node; a node that dies takes its presences along.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import { ClientPool, joinChannel, selfHostToken } from '../lib/clients.mjs';
import { clusterView, homeOf, LEASE_TTL_S, memberIds, startEtcd, startNode } from '../lib/cluster.mjs';
import { positionOf, withoutPosition } from '../lib/positions.mjs';
import { SELF_HOST_TENANT } from '../lib/server.mjs';
import { sentinelBroadcast, withoutSentinels } from '../lib/sentinel.mjs';
import { httpRequest, Recorder, waitFor } from '../lib/util.mjs';

let counter = 0;
const unique = (name) => `${name}-${process.pid}-${++counter}`;

describe('broadcast and presence across nodes', () => {
    let dir;
    let etcd;
    const nodes = {};
    const pools = [];

    before(async () => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rt-e2e-fanout-'));
        etcd = await startEtcd(dir);
        const prefix = `/e2e-fanout-${process.pid}`;
        for (const name of ['node-a', 'node-b', 'node-c']) {
            nodes[name] = await startNode(etcd, { name, prefix });
        }
        for (const node of Object.values(nodes)) {
            await waitFor(async () => (await memberIds(node)).length === 3, 8000, 'every node sees 3 members');
        }
    });

    afterEach(async () => {
        await Promise.all(pools.splice(0).map((p) => p.cleanup()));
    });

    after(async () => {
        await Promise.all(Object.values(nodes).map((n) => n.stop()));
        await etcd?.stop();
        if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    function poolOn(node) {
        const pool = new ClientPool(node);
        pools.push(pool);
        return pool;
    }

    async function member(node, sub, { self = false, presenceKey } = {}) {
        const client = poolOn(node).client();
        const config = { broadcast: { self, ack: true } };
        if (presenceKey) config.presence = { key: presenceKey };
        const ch = client.channel(sub, { config });
        const got = new Recorder(`broadcasts on ${sub} at ${node.port}`);
        ch.on('broadcast', { event: '*' }, got.fn);
        const joins = new Recorder('presence joins');
        const leaves = new Recorder('presence leaves');
        ch.on('presence', { event: 'join' }, joins.fn);
        ch.on('presence', { event: 'leave' }, leaves.fn);
        await joinChannel(ch);
        return { client, ch, got, joins, leaves };
    }

    /** Until every node knows that no other node holds clients of the tenant. */
    async function nobodyHoldsTheTenant() {
        for (const [name, node] of Object.entries(nodes)) {
            let links;
            await waitFor(async () => {
                links = Object.values((await clusterView(node)).links ?? {});
                return links.length === 2 && links.every((l) => l.interest_known && l.tenants === 0);
            }, 5000, `${name} knows that the others hold no clients`, () => links);
        }
    }

    // A join is answered once the peers have acknowledged the node's interest in the tenant (see
    // the next test), so a broadcast right after SUBSCRIBED reaches every node's clients.
    test('a broadcast from a client on one node reaches clients of the topic on the others, once', async () => {
        const sub = unique('room');
        const a = await member(nodes['node-a'], sub);
        const b = await member(nodes['node-b'], sub);
        const c = await member(nodes['node-c'], sub);
        assert.equal(await a.ch.send({ type: 'broadcast', event: 'hello', payload: { from: 'a' } }), 'ok');
        const atB = await b.got.next((m) => m.event === 'hello', 3000, 'b receives a');
        assert.deepEqual(withoutPosition(atB), { type: 'broadcast', event: 'hello', payload: { from: 'a' } });
        const atC = await c.got.next((m) => m.event === 'hello', 3000, 'c receives a');
        // Numbered once, at the tenant's home: the same position on every node.
        assert.deepEqual(positionOf(atC), positionOf(atB), 'the same epoch and offset on b and c');
        assert.equal(await c.ch.send({ type: 'broadcast', event: 'back', payload: { from: 'c' } }), 'ok');
        await a.got.next((m) => m.event === 'back', 3000, 'a receives c');
        await b.got.next((m) => m.event === 'back', 3000, 'b receives c');
        // Sentinels from both senders, waited for on every node. (An echo of a's own message would
        // have gone out on a's socket before the ack a already has.)
        await sentinelBroadcast(a.ch, [b.got, c.got]);
        await sentinelBroadcast(c.ch, [a.got, b.got]);
        // Exactly once each, and no echo to the sender (self: false).
        assert.equal(b.got.filter((m) => m.event === 'hello').length, 1);
        assert.equal(c.got.filter((m) => m.event === 'hello').length, 1);
        assert.equal(a.got.filter((m) => m.event === 'hello').length, 0);
        assert.equal(a.got.filter((m) => m.event === 'back').length, 1);
    });

    test('a broadcast sent the moment a client on another node has joined reaches it', async () => {
        // The joining node announces the tenant at once and answers the join only when its
        // peers acknowledged, so a broadcast sent from another node right after SUBSCRIBED is
        // not lost. Each round starts from no client of the tenant anywhere.
        for (let round = 0; round < 10; ++round) {
            await Promise.all(pools.splice(0).map((p) => p.cleanup()));
            await nobodyHoldsTheTenant();
            const sub = unique('right-away');
            const a = await member(nodes['node-a'], sub);
            const b = await member(nodes['node-b'], sub);
            assert.equal(await a.ch.send({ type: 'broadcast', event: 'now', payload: { round } }), 'ok');
            await b.got.next((m) => m.event === 'now', 3000, `round ${round}: b receives the broadcast sent right after it joined`);
        }
    });

    test('other topics and other tenants stay apart; a broadcast keeps its order across the hop', async () => {
        const sub = unique('ordered');
        const other = unique('other');
        const a = await member(nodes['node-a'], sub);
        const b = await member(nodes['node-b'], sub);
        const bOther = await member(nodes['node-b'], other);
        // A's socket also joins the other topic, for a sentinel to bOther from the same sender.
        const aOther = a.client.channel(other, { config: { broadcast: { self: false, ack: true } } });
        await joinChannel(aOther);
        for (let i = 0; i < 50; ++i) {
            a.ch.send({ type: 'broadcast', event: 'n', payload: { i } });
        }
        await waitFor(() => b.got.items.length === 50, 5000, '50 broadcasts at b');
        assert.deepEqual(b.got.items.map((m) => m.payload.i), [...Array(50).keys()]);
        await sentinelBroadcast(aOther, [bOther.got]);
        assert.equal(withoutSentinels(bOther.got.items).length, 0);
    });

    test('the HTTP broadcast API on one node reaches clients on the others', async () => {
        const sub = unique('http');
        const a = await member(nodes['node-a'], sub);
        const b = await member(nodes['node-b'], sub);
        const res = await httpRequest(nodes['node-c'], {
            method: 'POST',
            path: '/api/broadcast',
            headers: { apikey: selfHostToken(), Authorization: `Bearer ${selfHostToken()}` },
            body: { messages: [{ topic: sub, event: 'from-http', payload: { ok: true } }] },
        });
        assert.equal(res.status, 202, res.body);
        await a.got.next((m) => m.event === 'from-http', 3000, 'a receives the HTTP broadcast');
        await b.got.next((m) => m.event === 'from-http', 3000, 'b receives the HTTP broadcast');
    });

    test('a broadcast goes only to the nodes that hold clients of its tenant', async () => {
        // After the earlier tests' clients left, no node holds the tenant. The home numbers every
        // broadcast and sends it on: watched from the home, with clients there only, nothing
        // leaves it; with a client on a second node too, one link message per broadcast goes
        // there and still none to the third.
        const sub = unique('targeted');
        const probePool = new ClientPool(nodes['node-a']);
        const probe = probePool.client();
        await joinChannel(probe.channel(unique('probe')));
        const homeName = await homeOf(nodes, SELF_HOST_TENANT);
        const [second, third] = Object.keys(nodes).filter((n) => n !== homeName);
        const home = nodes[homeName];
        const local = await member(home, sub, { self: true });
        await probePool.cleanup(); // the home's own client keeps the tenant there
        const linksOfHome = async () => (await clusterView(home)).links;
        await waitFor(async () => {
            const links = await linksOfHome();
            return links[second]?.interest_known && links[third]?.interest_known
                && links[second].tenants === 0 && links[third].tenants === 0;
        }, 5000, `${homeName} knows that ${second} and ${third} hold no clients`);
        const before = await linksOfHome();
        for (let i = 0; i < 10; ++i) {
            await local.ch.send({ type: 'broadcast', event: 'only-here', payload: { i } });
        }
        await waitFor(() => local.got.items.length === 10, 3000, 'the sender gets its own 10');
        const quiet = await linksOfHome();
        assert.equal(quiet[second].messages_out, before[second].messages_out, `nothing sent to ${second}`);
        assert.equal(quiet[third].messages_out, before[third].messages_out, `nothing sent to ${third}`);

        // A client of the tenant on a second node: from now on it gets them, the third does not.
        const remote = await member(nodes[second], sub);
        await waitFor(async () => (await linksOfHome())[second].tenants === 1, 3000, `the home learns that ${second} holds the tenant`);
        for (let i = 0; i < 10; ++i) {
            await local.ch.send({ type: 'broadcast', event: 'both', payload: { i } });
        }
        await waitFor(() => remote.got.items.length === 10, 3000, `${second} receives the 10`);
        const after = await linksOfHome();
        assert.equal(after[second].messages_out - quiet[second].messages_out, 10, `one link message per broadcast to ${second}`);
        assert.equal(after[third].messages_out, quiet[third].messages_out, `still nothing to ${third}`);
    });

    test('presence: a track on one node shows on the others; late joiners get the whole state', async () => {
        const sub = unique('presence');
        const alice = await member(nodes['node-a'], sub, { presenceKey: 'alice' });
        const bob = await member(nodes['node-b'], sub, { presenceKey: 'bob' });
        assert.equal(await alice.ch.track({ name: 'Alice' }), 'ok');
        await bob.joins.next((j) => j.key === 'alice', 3000, 'bob sees alice join');
        assert.equal(await bob.ch.track({ name: 'Bob' }), 'ok');
        await alice.joins.next((j) => j.key === 'bob', 3000, 'alice sees bob join');
        const carol = await member(nodes['node-c'], sub, { presenceKey: 'carol' });
        await waitFor(() => {
            const state = carol.ch.presenceState();
            return state.alice && state.bob;
        }, 3000, 'carol has alice and bob in presenceState()');
        assert.equal(carol.ch.presenceState().alice[0].name, 'Alice');
        assert.equal(carol.ch.presenceState().bob[0].name, 'Bob');
        // Untrack on one node: a leave everywhere.
        await alice.ch.untrack();
        await bob.leaves.next((l) => l.key === 'alice', 3000, 'bob sees alice leave');
        await waitFor(() => !carol.ch.presenceState().alice, 3000, 'alice gone at carol');
    });
});

describe('a node that dies', () => {
    test('takes its presences along: the others see the leaves within the lease TTL', async () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rt-e2e-death-'));
        const etcd = await startEtcd(dir);
        const prefix = `/e2e-death-${process.pid}`;
        const a = await startNode(etcd, { name: 'node-a', prefix });
        const b = await startNode(etcd, { name: 'node-b', prefix });
        const pool = new ClientPool(a);
        const poolB = new ClientPool(b);
        try {
            await waitFor(async () => (await memberIds(a)).length === 2, 8000, 'a sees b');
            const sub = unique('doomed');
            const watcher = pool.client().channel(sub, { config: { presence: { key: 'watcher' } } });
            const leaves = new Recorder('leaves at a');
            watcher.on('presence', { event: 'leave' }, leaves.fn);
            await joinChannel(watcher);
            const victim = poolB.client().channel(sub, { config: { presence: { key: 'victim' } } });
            await joinChannel(victim);
            assert.equal(await victim.track({ on: 'b' }), 'ok');
            await waitFor(() => watcher.presenceState().victim, 3000, 'a sees the victim');
            const killedAt = Date.now();
            await b.kill('SIGKILL');
            await leaves.next((l) => l.key === 'victim', (LEASE_TTL_S + 5) * 1000, 'the victim leaves at a');
            assert.ok(Date.now() - killedAt <= (LEASE_TTL_S + 3) * 1000, `left after ${Date.now() - killedAt} ms`);
            assert.equal(watcher.presenceState().victim, undefined);
        } finally {
            await pool.cleanup();
            await poolB.cleanup().catch(() => {});
            await a.stop();
            await b.stop();
            await etcd.stop();
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });
});
