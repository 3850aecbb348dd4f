// Where tenant change streams run when an operator scales out (issue 15): nodes started one after
// another on one etcd and a PostgreSQL control plane, twelve tenants created through the tenant
// API on the first node before the last node joins, every realtime-js client on the first node.
// Each stream must run on the node the picker (seed 000) chose, computed here by an independent
// model of its rules (lib/placement.mjs): consistent hashing while the nodes are young, the lower
// of two candidates' loads once they publish one. The deciding node may run a stream itself only
// when the chosen node does not start it, and every decision and fallback is counted in /metrics.
//
// The nodes re-read the control plane only every 10 minutes here, so the second node has not
// seen the tenants created through the first one when it is asked to run their streams: that is
// the default 30 s cache at work, made deterministic.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { adminApi, operatorToken, startPgCluster } from '../lib/admin.mjs';
import { ClientPool, subscribe } from '../lib/clients.mjs';
import { clusterView, memberIds, startEtcd, startNode } from '../lib/cluster.mjs';
import { token } from '../lib/jwt.mjs';
import { metricSeries, sumWhere } from '../lib/metrics.mjs';
import { bucketOf, consistentNode, pickedNodes } from '../lib/placement.mjs';
import { cdcSettings, createDatabase, PG_BIN, pgBinariesPresent, psqlAs } from '../lib/pg.mjs';
import { SELF_HOST_SECRET } from '../lib/server.mjs';
import { Recorder, waitFor } from '../lib/util.mjs';

const skip = !pgBinariesPresent() && `PostgreSQL 15 binaries not found in ${PG_BIN}`;
const SECRET = 'cluster-placement-secret-0123456789abcdefghij';
const METRICS_SECRET = 'cluster-placement-metrics-secret-0123456789';
const DB_ENC_KEY = '0123456789abcdef';
const REGION = 'local';
const COUNT = 12;
const NODES = ['node1', 'node2', 'node3'];
const SUBSCRIBED_MS = 30_000;

/** Starts the scenario's cluster; `loads` (node -> 5-minute load) makes the nodes publish one. */
async function startScenario(label, loads) {
    const ctx = { nodes: {}, pools: [], tenants: Array.from({ length: COUNT }, (_, k) => `scale${k}`) };
    ctx.dir = fs.mkdtempSync(path.join(os.tmpdir(), `rt-e2e-${label}-`));
    ctx.pg = await startPgCluster(path.join(ctx.dir, 'pg'));
    ctx.database = `rt_${label}`;
    await createDatabase(ctx.pg.env, ctx.database);
    ctx.db = psqlAs(ctx.pg.env, { database: ctx.database });
    await ctx.db.exec(`CREATE TABLE items (id int PRIMARY KEY, v text);
                       GRANT SELECT ON items TO anon, authenticated;
                       CREATE PUBLICATION supabase_realtime FOR TABLE items;`);
    ctx.etcd = await startEtcd(path.join(ctx.dir, 'etcd'));
    const prefix = `/e2e-${label}-${process.pid}`;
    ctx.start = async (name) => {
        const env = {
            ...ctx.pg.serverEnv,
            DB_ENC_KEY,
            TENANT_CACHE_EXPIRATION_IN_MS: '600000',
            METRICS_JWT_SECRET: METRICS_SECRET,
            LOG_LEVEL: 'info',
        };
        if (loads) {
            const file = path.join(ctx.dir, `${name}.loadavg`);
            fs.writeFileSync(file, `${loads[name]} ${loads[name]} ${loads[name]} 1/100 4242\n`);
            Object.assign(env, { CLUSTER_LOADAVG_FILE: file, CLUSTER_LOAD_MIN_UPTIME_S: '0' });
        }
        ctx.nodes[name] = await startNode(ctx.etcd, { name, prefix, region: REGION, env });
        const count = Object.keys(ctx.nodes).length;
        for (const node of Object.values(ctx.nodes)) {
            await waitFor(async () => (await memberIds(node)).length === count, 8000, `every node sees ${count} members`);
        }
    };
    return ctx;
}

async function tearDown(ctx) {
    if (!ctx) return;
    await Promise.all(ctx.pools.splice(0).map((p) => p.cleanup()));
    await Promise.all(Object.values(ctx.nodes).map((n) => n.stop()));
    await ctx.etcd?.stop();
    await ctx.pg?.stop?.();
    if (ctx.dir) fs.rmSync(ctx.dir, { recursive: true, force: true });
}

/** Creates tenant `id` (the k-th) through `node`'s tenant API, its database on ctx's PostgreSQL. */
async function createTenant(ctx, node, id, k) {
    const api = adminApi(node, { token: operatorToken(SELF_HOST_SECRET) });
    const res = await api.create({
        external_id: id,
        name: id,
        jwt_secret: SECRET,
        extensions: [{
            type: 'postgres_cdc_rls',
            settings: cdcSettings(ctx.pg.env, ctx.database, { region: REGION, slot_name: `rt_e2e_scale_${k}` }),
        }],
    });
    assert.equal(res.status, 201, `create ${id}: ${res.body}`);
}

/** node1 and node2, the tenants through node1's tenant API, then node3. */
async function scaleOut(ctx) {
    await ctx.start('node1');
    await ctx.start('node2');
    for (const [k, id] of ctx.tenants.entries()) await createTenant(ctx, ctx.nodes.node1, id, k);
    await ctx.start('node3');
}

/** A realtime-js client of `tenant` on node1, subscribed to postgres_changes on items. */
async function subscribeOnNode1(ctx, tenant) {
    const pool = new ClientPool(ctx.nodes.node1);
    ctx.pools.push(pool);
    const client = pool.client({ tenant, token: token(SECRET, {}) });
    const ch = client.channel(`items-${tenant}`);
    const changes = new Recorder(`changes of ${tenant}`);
    const system = new Recorder(`system messages of ${tenant}`);
    ch.on('postgres_changes', { event: 'INSERT', schema: 'public', table: 'items' }, changes.fn);
    ch.on('system', {}, system.fn);
    const statuses = subscribe(ch, 20_000);
    await statuses.next((s) => s.status === 'SUBSCRIBED', SUBSCRIBED_MS, `${tenant} SUBSCRIBED`);
    const msg = await system.next((m) => m?.extension === 'postgres_changes', SUBSCRIBED_MS,
        `the postgres_changes system message of ${tenant}`);
    assert.equal(msg.message, 'Subscribed to PostgreSQL', `${tenant}: ${JSON.stringify(msg)}`);
    return { tenant, changes };
}

/** One client per tenant on node1, all subscribing at once. */
const subscribeAllOnNode1 = (ctx) => Promise.all(ctx.tenants.map((tenant) => subscribeOnNode1(ctx, tenant)));

/** Node -> the tenants whose stream it owns, once every stream has exactly one owner. */
async function placedStreams(ctx) {
    let owned;
    await waitFor(async () => {
        owned = {};
        for (const name of NODES) owned[name] = ((await clusterView(ctx.nodes[name])).streams_owned || []).sort();
        return Object.values(owned).flat().length === COUNT;
    }, 30_000, `all ${COUNT} streams placed`, () => owned);
    assert.deepEqual(Object.values(owned).flat().sort(), [...ctx.tenants].sort(), 'each stream runs once');
    return owned;
}

/** The metrics every node must show: decisions on node1, claims by cause, no fallback. */
async function assertCounted(ctx, owned) {
    const placements = await metricSeries(ctx.nodes.node1, METRICS_SECRET, 'qtrealtime_stream_placements_total');
    assert.equal(sumWhere(placements), COUNT, `node1 decided every stream once: ${JSON.stringify(placements)}`);
    assert.equal(sumWhere(placements, { target: 'self' }), owned.node1.length, 'decisions for node1 itself');
    assert.equal(sumWhere(placements, { target: 'peer' }), COUNT - owned.node1.length, 'decisions for other nodes');
    for (const name of NODES) {
        const claims = await metricSeries(ctx.nodes[name], METRICS_SECRET, 'qtrealtime_stream_claims_total');
        const expected = name === 'node1' ? { placed_here: owned.node1.length } : { asked_by_peer: owned[name].length };
        for (const [cause, count] of Object.entries(expected)) {
            assert.equal(sumWhere(claims, { cause }), count, `${name} claims (${cause}): ${JSON.stringify(claims)}`);
        }
        assert.equal(sumWhere(claims), owned[name].length, `${name}: no claim for another cause: ${JSON.stringify(claims)}`);
        const fallbacks = await metricSeries(ctx.nodes[name], METRICS_SECRET, 'qtrealtime_stream_placement_fallbacks_total');
        assert.equal(sumWhere(fallbacks), 0, `${name} took no stream over: ${JSON.stringify(fallbacks)}`);
    }
}

/** One row reaches every tenant's subscriber on node1, wherever its stream runs. */
async function assertDelivered(ctx, subscribers, id = 1) {
    await ctx.db.exec(`INSERT INTO items VALUES (${id}, 'row ${id}')`);
    await Promise.all(subscribers.map(({ tenant, changes }) =>
        changes.next((c) => c.new?.id === id, 15_000, `the insert at ${tenant}'s subscriber`)));
}

describe('placement when scaling out, young nodes: consistent hashing', { skip }, () => {
    let ctx;
    before(async () => {
        ctx = await startScenario('scale', null);
        await scaleOut(ctx);
    });
    after(() => tearDown(ctx));

    test('every stream runs on the node consistent hashing picks, none taken over', { timeout: 180_000 }, async () => {
        const subscribers = await subscribeAllOnNode1(ctx);
        const owned = await placedStreams(ctx);
        const expected = Object.fromEntries(NODES.map((n) => [n, []]));
        for (const tenant of ctx.tenants) expected[pickedNodes(tenant, NODES, {}, [0])[0]].push(tenant);
        for (const list of Object.values(expected)) list.sort();
        console.log(`# placement when scaling out (young nodes): ${JSON.stringify(owned)}`);
        assert.deepEqual(owned, expected, 'each node owns exactly what the picker gives it');
        for (const name of NODES) assert.ok(expected[name].length >= 3, `the hash gives ${name} 3 or more`);
        await assertCounted(ctx, owned);
        await assertDelivered(ctx, subscribers);
        const log = ctx.nodes.node1.stderr();
        const tenantOfNode2 = expected.node2[0];
        assert.match(log, new RegExp(`placement of tenant ${tenantOfNode2}: node2 \\(consistent_hash`),
            'node1 logs the decision and its reason at info');
    });

    test('a chosen node that hangs: the deciding node starts the stream after the start timeout and says why', { timeout: 120_000 }, async () => {
        // A new tenant that the hash gives node2; node2 stops answering (SIGSTOP) just before
        // node1 needs the stream, while it is still a member (its lease outlives the decision).
        const late = Array.from({ length: 50 }, (_, k) => `late${k}`).find((t) => consistentNode(t, NODES) === 'node2');
        await createTenant(ctx, ctx.nodes.node1, late, COUNT);
        const node1 = ctx.nodes.node1;
        const before = sumWhere(await metricSeries(node1, METRICS_SECRET, 'qtrealtime_stream_placement_fallbacks_total'),
            { reason: 'timeout' });
        ctx.nodes.node2.signal('SIGSTOP');
        try {
            const subscriber = await subscribeOnNode1(ctx, late);
            await waitFor(async () => ((await clusterView(node1)).streams_owned || []).includes(late), 20_000,
                `node1 runs the stream of ${late}`);
            assert.match(node1.stderr(), new RegExp(`placement of tenant ${late}: node2 \\(consistent_hash`),
                'the picker chose node2');
            assert.match(node1.stderr(),
                new RegExp(`change stream of tenant ${late}: node node2 did not start it within 3000 ms; starting it here \\(timeout\\)`),
                'node1 says why it runs the stream');
            const fallbacks = await metricSeries(node1, METRICS_SECRET, 'qtrealtime_stream_placement_fallbacks_total');
            assert.ok(sumWhere(fallbacks, { reason: 'timeout' }) >= before + 1, `a timeout fallback is counted: ${JSON.stringify(fallbacks)}`);
            const claims = await metricSeries(node1, METRICS_SECRET, 'qtrealtime_stream_claims_total');
            assert.ok(sumWhere(claims, { cause: 'fallback' }) >= 1, `a fallback claim is counted: ${JSON.stringify(claims)}`);
            await assertDelivered(ctx, [subscriber], 2);
        } finally {
            ctx.nodes.node2.signal('SIGCONT');
        }
    });
});

describe('placement when scaling out, nodes with loads: the lower of two candidates', { skip }, () => {
    // node1, where every client is, is the most loaded: the picker never gives it a stream.
    const LOADS = { node1: 9.0, node2: 0.5, node3: 1.5 };
    let ctx;
    before(async () => {
        ctx = await startScenario('scaleload', LOADS);
        await scaleOut(ctx);
    });
    after(() => tearDown(ctx));

    test('every stream runs on the less loaded of its two candidates, none taken over', { timeout: 180_000 }, async () => {
        const firstBucket = bucketOf(Date.now());
        const subscribers = await subscribeAllOnNode1(ctx);
        const owned = await placedStreams(ctx);
        const buckets = [];
        for (let b = firstBucket; b <= bucketOf(Date.now()); b++) buckets.push(b);
        console.log(`# placement when scaling out (loads ${JSON.stringify(LOADS)}): ${JSON.stringify(owned)}`);
        for (const [name, tenants] of Object.entries(owned)) {
            for (const tenant of tenants) {
                const allowed = pickedNodes(tenant, NODES, LOADS, buckets);
                assert.ok(allowed.includes(name), `${tenant} runs on ${name}; the picker gives it ${allowed.join(' or ')}`);
            }
        }
        assert.deepEqual(owned.node1, [], 'the most loaded node runs no stream');
        await assertCounted(ctx, owned);
        await assertDelivered(ctx, subscribers);
    });
});
