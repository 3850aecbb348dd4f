// The real realtime-dashboard binary against a real cluster (issue 6 part 5): three nodes on a
// real etcd (two in eu, one in us), realtime-js clients of one tenant on node-a and node-b
// broadcasting to each other with presence, a second tenant's clients on node-c; the dashboard's
// report mode (--connect --token --screenshot DIR, offscreen) must exit 0 with the five PNGs and
// a summary.json in which its models show the nodes, the placement and non-zero flows. Then a
// fourth node the dashboard connects to is killed (-9) right after the dashboard joined its live
// feed: the report still completes, answered by another node. Over TLS (issue 18 part 5): two
// nodes on https/wss only, the dashboard with --ca-file (their cluster CA): the report
// completes, and again after the node it connected to died, answered by the other https node.
//
// The binary: RT_DASHBOARD_BIN (default: realtime-dashboard next to RT_SERVER_BIN). A missing
// binary fails the file; only RT_DASHBOARD_SKIP (set by CMake when the dashboard is not built,
// RT_BUILD_DASHBOARD=OFF) skips it. RT_DASHBOARD_SCREENSHOT_DIR: copy the first report's PNGs
// there (scripts/dashboard-screenshots.sh uses it for docs/screenshots/).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { operatorToken } from '../lib/admin.mjs';
import { makeCertificateAuthority } from '../lib/certs.mjs';
import { ClientPool, joinChannel } from '../lib/clients.mjs';
import { flowsThroughHome, homeOf, memberIds, startEtcd, startNode } from '../lib/cluster.mjs';
import { token as hsToken } from '../lib/jwt.mjs';
import { SELF_HOST_SECRET, SELF_HOST_TENANT, serverBin } from '../lib/server.mjs';
import { httpRequest, Recorder, sleep, waitFor } from '../lib/util.mjs';

const dashboardBin = process.env.RT_DASHBOARD_BIN || path.join(path.dirname(serverBin), 'realtime-dashboard');
const skipReason = process.env.RT_DASHBOARD_SKIP;
const TOKEN = operatorToken(SELF_HOST_SECRET);
const OTHER_TENANT = 'dash-other';
const OTHER_SECRET = 'dash-other-secret-with-at-least-32-characters';
const TENANTS = [{ external_id: OTHER_TENANT, jwt_secret: OTHER_SECRET }];
const PNGS = ['nodes.png', 'placement.png', 'message-flow.png', 'configuration.png', 'tenants.png'];
const REPORT_TIMEOUT_MS = 60_000;

/**
 * Runs the dashboard's report mode against `node`; resolves { code, signal, stderr, dir }.
 * `onStderr(text so far, child)` sees its log as it comes. Its settings live in a fresh
 * XDG_CONFIG_HOME, so nothing remembered from another run (endpoints, language) takes part.
 */
function runReport(node, { onStderr, args = [] } = {}) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rt-e2e-dashboard-'));
    const out = path.join(dir, 'report');
    const child = spawn(dashboardBin, [
        '--connect', node.httpBase, '--token', TOKEN, '--screenshot', out, '--language', 'en', ...args,
    ], {
        env: {
            ...process.env,
            QT_QPA_PLATFORM: 'offscreen',
            XDG_CONFIG_HOME: path.join(dir, 'config'),
            HOME: dir,
            QT_LOGGING_RULES: 'rt.*.info=true',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stdout.resume();
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk) => {
        stderr += chunk;
        onStderr?.(stderr, child);
    });
    return new Promise((resolve) => {
        const timer = setTimeout(() => child.kill('SIGKILL'), REPORT_TIMEOUT_MS + 10_000);
        child.on('exit', (code, signal) => {
            clearTimeout(timer);
            resolve({ code, signal, stderr, dir, out });
        });
    });
}

/** Width and height from a PNG's IHDR chunk; throws when `file` is no PNG. */
function pngSize(file) {
    const bytes = fs.readFileSync(file);
    assert.ok(bytes.length > 24, `${file}: ${bytes.length} bytes`);
    assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], `${file}: PNG signature`);
    assert.equal(bytes.toString('latin1', 12, 16), 'IHDR', `${file}: IHDR first`);
    return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20), bytes: bytes.length };
}

function checkReport(result) {
    const why = `exit ${result.code} (signal ${result.signal}); stderr:\n${result.stderr}`;
    assert.equal(result.signal, null, why);
    assert.equal(result.code, 0, why);
    for (const name of PNGS) {
        const file = path.join(result.out, name);
        assert.ok(fs.existsSync(file), `${name} written; ${why}`);
        const { width, height, bytes } = pngSize(file);
        assert.ok(width >= 600 && width <= 4000 && height >= 400 && height <= 4000,
            `${name}: ${width}x${height} is not a window's size`);
        assert.ok(bytes > 5_000, `${name}: only ${bytes} bytes`);
    }
    const file = path.join(result.out, 'summary.json');
    assert.ok(fs.existsSync(file), `summary.json written; ${why}`);
    return JSON.parse(fs.readFileSync(file, 'utf8'));
}

describe('realtime-dashboard report mode on a three-node cluster', { skip: skipReason }, () => {
    let dir;
    let etcd;
    let prefix;
    const nodes = {};
    const pools = [];
    const traffic = [];
    let trafficRunning = true;
    let lastSnapshot;
    let expectedFlows; // [from, to] node pairs the traffic crosses (through the tenant's home)
    const reports = [];

    before(async () => {
        if (!fs.existsSync(dashboardBin)) {
            throw new Error(`realtime-dashboard binary not found at ${dashboardBin}: build it `
                + '(cmake --build build --target realtime-dashboard) or set RT_DASHBOARD_BIN');
        }
        dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rt-e2e-dash-'));
        etcd = await startEtcd(dir);
        prefix = `/e2e-dashboard-${process.pid}`;
        const regions = { 'node-a': 'eu-west', 'node-b': 'eu-west', 'node-c': 'us-east' };
        for (const name of ['node-a', 'node-b', 'node-c']) {
            nodes[name] = await startNode(etcd, {
                name, prefix, region: regions[name], tenants: TENANTS,
                env: { CLUSTER_LOAD_MIN_UPTIME_S: '0' },
            });
        }
        for (const node of Object.values(nodes)) {
            await waitFor(async () => (await memberIds(node)).length === 3, 8000, 'every node sees 3 members');
        }
        // Configuration to show: a permanent key and a temporary override (10 minutes).
        const config = [
            ['region_mapping', { value: { 'ap-southeast-1': 'us-east' }, expected_revision: 0 }],
            [`tenant_limits.${OTHER_TENANT}`, { value: { max_concurrent_users: 500 }, expected_revision: 0, ttl_seconds: 600 }],
        ];
        for (const [key, body] of config) {
            const res = await httpRequest(nodes['node-a'], {
                method: 'PUT', path: `/api/cluster/config/${key}`, headers: { Authorization: `Bearer ${TOKEN}` }, body,
            });
            assert.equal(res.status, 200, `PUT /api/cluster/config/${key} answered ${res.status}: ${res.body}`);
        }
        // realtime-dev: one client on node-a and one on node-b, present and broadcasting.
        const topic = `dashboard-${process.pid}`;
        const members = [];
        for (const name of ['node-a', 'node-b']) {
            const pool = new ClientPool(nodes[name]);
            pools.push(pool);
            const ch = pool.client({ vsn: '1.0.0' }).channel(topic, {
                config: { broadcast: { self: false }, presence: { key: `user-${name}` } },
            });
            const got = new Recorder(`broadcasts at ${name}`);
            ch.on('broadcast', { event: '*' }, got.fn);
            ch.on('presence', { event: 'sync' }, () => {});
            await joinChannel(ch);
            await ch.track({ node: name });
            members.push({ ch, got });
        }
        // dash-other: two clients on node-c talking to each other.
        const otherPool = new ClientPool(nodes['node-c']);
        pools.push(otherPool);
        const others = [];
        for (let i = 0; i < 2; ++i) {
            const ch = otherPool.client({ vsn: '1.0.0', tenant: OTHER_TENANT, token: hsToken(OTHER_SECRET) })
                .channel(`other-${process.pid}`, { config: { broadcast: { self: false } } });
            await joinChannel(ch);
            others.push(ch);
        }
        await sleep(200);
        const loop = (channels, pause) => (async () => {
            for (let i = 0; trafficRunning; ++i) {
                channels[i % channels.length].send({ type: 'broadcast', event: 'tick', payload: { i } });
                await sleep(pause);
            }
        })();
        traffic.push(loop(members.map((m) => m.ch), 20), loop(others, 50));
        await members[1].got.next((m) => m.event === 'tick', 3000, 'node-b receives node-a');
        await members[0].got.next((m) => m.event === 'tick', 3000, 'node-a receives node-b');
        expectedFlows = flowsThroughHome(['node-a', 'node-b'], await homeOf(nodes, SELF_HOST_TENANT));
        // The cluster's own figures first: rates are averaged over 2 s and reach node-a every 500 ms.
        await waitFor(async () => {
            const res = await httpRequest(nodes['node-a'], {
                path: '/api/admin/snapshot', headers: { Authorization: `Bearer ${TOKEN}` },
            });
            assert.equal(res.status, 200, `GET /api/admin/snapshot answered ${res.status}: ${res.body}`);
            lastSnapshot = res.json;
            const s = res.json;
            return s.nodes.length === 3
                // Broadcasts travel through the tenant's home (it numbers them).
                && expectedFlows.every(([from, to]) => s.links.some((l) => l.from === from && l.to === to && l.messages_per_s > 0))
                && s.tenant_flows.some((f) => f.tenant === OTHER_TENANT && f.messages_in_per_s > 0)
                && s.tenants.some((t) => t.tenant === SELF_HOST_TENANT && t.users['node-a'] > 0 && t.users['node-b'] > 0)
                // The temporary override's end, learned from its etcd lease (10 minutes from now).
                && s.config.entries.some((e) => e.key === `tenant_limits.${OTHER_TENANT}` && e.temporary
                    && e.expires_at > Date.now() + 590_000 && e.expires_at <= Date.now() + 601_000);
        }, 10_000, 'flows, users and the end of the override in the admin snapshot', () => lastSnapshot);
        const permanent = lastSnapshot.config.entries.find((e) => e.key === 'region_mapping');
        assert.equal(permanent.temporary, false);
        assert.equal(permanent.expires_at, null, 'a permanent entry has no end');
    });

    after(async () => {
        trafficRunning = false;
        await Promise.all(traffic);
        await Promise.all(pools.splice(0).map((p) => p.cleanup()));
        await Promise.all(Object.values(nodes).map((n) => n.stop()));
        await etcd?.stop();
        for (const report of reports) fs.rmSync(report.dir, { recursive: true, force: true });
        if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    test('writes the five views and a summary whose models show nodes, placement and flows', async () => {
        const started = Date.now();
        const result = await runReport(nodes['node-a']);
        reports.push(result);
        const summary = checkReport(result);
        assert.ok(Date.now() - started < REPORT_TIMEOUT_MS, `took ${Date.now() - started} ms`);
        const shown = JSON.stringify(summary, null, 1);

        assert.equal(summary.answered_by, 'node-a', shown);
        assert.match(summary.connection, /node-a/, shown);
        assert.deepEqual(summary.nodes.map((n) => [n.id, n.region]),
            [['node-a', 'eu-west'], ['node-b', 'eu-west'], ['node-c', 'us-east']], shown);
        const node = Object.fromEntries(summary.nodes.map((n) => [n.id, n]));
        assert.ok(node['node-a'].connections >= 1 && node['node-b'].connections >= 1, shown);
        assert.ok(node['node-c'].connections >= 2, shown);
        assert.ok(summary.nodes.every((n) => n.available), shown);
        assert.ok(node['node-a'].messages_in_per_s > 0 && node['node-b'].messages_in_per_s > 0, shown);

        const dev = summary.placement.find((p) => p.tenant === SELF_HOST_TENANT);
        assert.ok(dev, shown);
        assert.deepEqual(dev.nodes, ['node-a', 'node-b'], shown);
        assert.deepEqual(dev.users, { 'node-a': 1, 'node-b': 1 }, shown);
        assert.equal(dev.total_users, 2, shown);
        const other = summary.placement.find((p) => p.tenant === OTHER_TENANT);
        assert.deepEqual(other?.nodes, ['node-c'], shown);
        assert.equal(other.users['node-c'], 2, shown);

        const link = (from, to) => summary.links.find((l) => l.from === from && l.to === to);
        for (const [from, to] of expectedFlows) assert.ok(link(from, to)?.messages_per_s > 0, `${from} -> ${to}: ${shown}`);
        const flow = (tenant, at) => summary.tenant_flows.find((f) => f.tenant === tenant && f.node === at);
        for (const at of ['node-a', 'node-b']) {
            const f = flow(SELF_HOST_TENANT, at);
            assert.ok(f && f.messages_in_per_s > 0 && f.messages_out_per_s > 0, `${at}: ${shown}`);
        }
        assert.ok(flow(OTHER_TENANT, 'node-c')?.messages_in_per_s > 0, shown);

        assert.equal(typeof summary.config.revision, 'number', shown);
        assert.ok(summary.config.revision > 0, shown);
        assert.deepEqual(summary.config.keys, ['region_mapping', `tenant_limits.${OTHER_TENANT}`], shown);
        assert.ok(summary.tenants.includes(SELF_HOST_TENANT) && summary.tenants.includes(OTHER_TENANT), shown);

        const copyTo = process.env.RT_DASHBOARD_SCREENSHOT_DIR;
        if (copyTo) {
            fs.mkdirSync(copyTo, { recursive: true });
            for (const name of PNGS) fs.copyFileSync(path.join(result.out, name), path.join(copyTo, name));
        }
    });

    test('the node it connected to dies (-9) right after the live feed joined: another node finishes the report', async () => {
        const doomed = await startNode(etcd, {
            name: 'node-d', prefix, region: 'us-east', tenants: TENANTS,
            env: { CLUSTER_LOAD_MIN_UPTIME_S: '0' },
        });
        nodes['node-d'] = doomed;
        await waitFor(async () => (await memberIds(doomed)).length === 4, 8000, 'node-d sees 4 members');
        let killedAt = null;
        const result = await runReport(doomed, {
            onStderr: (text) => {
                // Logged once its first snapshot (the probe) arrived and the feed joined.
                if (killedAt === null && /joined admin:cluster on/.test(text)) {
                    killedAt = Date.now();
                    doomed.kill('SIGKILL');
                }
            },
        });
        reports.push(result);
        assert.ok(killedAt, `the dashboard never joined node-d's live feed:\n${result.stderr}`);
        const summary = checkReport(result);
        const shown = JSON.stringify(summary, null, 1);
        assert.ok(['node-a', 'node-b', 'node-c'].includes(summary.answered_by), shown);
        assert.doesNotMatch(summary.connection, /node-d/, shown);
        assert.ok(summary.nodes.some((n) => n.id === 'node-a') && summary.nodes.some((n) => n.id === 'node-c'), shown);
        assert.ok(summary.placement.some((p) => p.tenant === SELF_HOST_TENANT), shown);
        assert.match(result.stderr, /lost/, 'the dashboard noticed the loss');
    });
});

describe('realtime-dashboard over https/wss with the cluster\'s CA file', { skip: skipReason }, () => {
    let dir;
    let etcd;
    let ca;
    const prefix = `/e2e-dashboard-tls-${process.pid}`;
    const nodes = {};
    const reports = [];

    /** The first report's failure is the likely cause of the second's: kill after the join. */
    async function killAfterJoin(doomed, args) {
        let killedAt = null;
        const result = await runReport(doomed, {
            args,
            onStderr: (text) => {
                if (killedAt === null && /joined admin:cluster on/.test(text)) {
                    killedAt = Date.now();
                    doomed.kill('SIGKILL');
                }
            },
        });
        reports.push(result);
        assert.ok(killedAt, `the dashboard never joined ${doomed.httpBase}'s live feed:\n${result.stderr}`);
        return result;
    }

    before(async () => {
        if (!fs.existsSync(dashboardBin)) throw new Error(`realtime-dashboard binary not found at ${dashboardBin}`);
        dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rt-e2e-dash-tls-'));
        ca = makeCertificateAuthority('e2e dashboard CA');
        // The nodes advertise 127.0.0.1 (CLUSTER_ADVERTISE_HOST): the name the dashboard verifies.
        const leaf = ca.issue('nodes', { dns: ['localhost'], ips: ['127.0.0.1'] });
        const tls = { certFile: leaf.certFile, keyFile: leaf.keyFile, caPem: ca.caPem };
        etcd = await startEtcd(dir);
        for (const name of ['node-a', 'node-b']) {
            nodes[name] = await startNode(etcd, { name, prefix, tls, env: { CLUSTER_LOAD_MIN_UPTIME_S: '0' } });
        }
        for (const node of Object.values(nodes)) {
            await waitFor(async () => (await memberIds(node)).length === 2, 8000, 'both nodes see 2 members');
        }
    });

    after(async () => {
        await Promise.all(Object.values(nodes).map((n) => n.stop()));
        await etcd?.stop();
        ca?.remove();
        for (const report of reports) fs.rmSync(report.dir, { recursive: true, force: true });
        if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    test('without the CA file the nodes cannot be verified: the report fails and says why', async () => {
        const result = await runReport(nodes['node-a'], { args: [] });
        reports.push(result);
        assert.notEqual(result.code, 0, result.stderr);
        assert.match(result.stderr, /The node could not be verified \(SSL handshake failed: /, result.stderr);
        assert.ok(!fs.existsSync(path.join(result.out, 'summary.json')), 'no report without a verified node');
    });

    test('with --ca-file it reports over https/wss, and fails over to the other https node', async () => {
        const args = ['--ca-file', ca.caFile];
        assert.ok(nodes['node-a'].httpBase.startsWith('https://'));
        const first = await runReport(nodes['node-a'], { args });
        reports.push(first);
        const summary = checkReport(first);
        assert.equal(summary.answered_by, 'node-a', JSON.stringify(summary));
        assert.deepEqual(summary.nodes.map((n) => n.id).sort(), ['node-a', 'node-b']);

        const failedOver = checkReport(await killAfterJoin(nodes['node-a'], args));
        assert.equal(failedOver.answered_by, 'node-b', JSON.stringify(failedOver));
        assert.match(failedOver.connection, /node-b/);
    });
});
