// The cluster on a secured etcd 3.4 (issue 18 part 3): https only, client certificates required
// (--client-cert-auth), authentication on, and the nodes' user allowed to read and write only
// the cluster's ETCD_PREFIX. Nodes join and see each other; they keep working after etcd
// invalidates every token (authentication switched off and on again: each node's next call is
// refused and it authenticates again, else its lease would lapse); a wrong password, a missing client certificate, or a prefix outside the role leave the
// node unavailable with a log line that says why.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { clusterView, memberIds, startEtcd, startNode } from '../lib/cluster.mjs';
import { waitFor } from '../lib/util.mjs';

const TOKEN_TTL_S = 2;
const run = promisify(execFile);

describe('the cluster on a secured etcd', () => {
    let dir;
    let etcd;
    const prefix = `/e2e-secure-${process.pid}`;
    const nodes = [];

    before(async () => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rt-e2e-etcd-secure-'));
        etcd = await startEtcd(dir, { secure: true, prefix, tokenTtlS: TOKEN_TTL_S });
        assert.match(etcd.endpoints, /^https:\/\//);
    });

    after(async () => {
        await Promise.all(nodes.map((n) => n.stop()));
        await etcd?.stop();
        if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    async function node(name, env = {}, nodePrefix = prefix) {
        const started = await startNode(etcd, { name, prefix: nodePrefix, env: { ...etcd.accessEnv, ...env } });
        nodes.push(started);
        return started;
    }

    /** etcdctl as etcd's root user over the client certificate. */
    function etcdctl(...args) {
        const e = etcd.env;
        return run('etcdctl', ['--endpoints', e.RT_ETCD_ENDPOINTS, '--cacert', e.RT_ETCD_CA_FILE, '--cert', e.RT_ETCD_CERT_FILE,
            '--key', e.RT_ETCD_KEY_FILE, '--user', 'root:etcd-root-password', ...args], { timeout: 15_000 });
    }

    test('nodes join over TLS with a token and keep working after etcd invalidates their tokens', async () => {
        const a = await node('node-a');
        const b = await node('node-b');
        for (const n of [a, b]) {
            await waitFor(async () => (await memberIds(n)).length === 2, 10_000, 'both nodes in the membership');
        }
        // Every token etcd issued becomes invalid. The nodes' next keepalives are refused: a node
        // that did not authenticate again would lose its lease (3 s) and leave the membership.
        await etcdctl('auth', 'disable');
        await etcdctl('auth', 'enable');
        const invalidatedAt = Date.now();
        await waitFor(() => Date.now() - invalidatedAt > 2 * 3000, 10_000, 'two lease lifetimes after the invalidation');
        const c = await node('node-c');
        for (const n of [a, b, c]) {
            await waitFor(async () => (await memberIds(n)).length === 3, 10_000, 'node-c seen by every node (their watches renewed their tokens)');
            await waitFor(async () => (await clusterView(n)).available === true, 10_000, 'every node available');
        }
        assert.doesNotMatch(a.stderr() + b.stderr(), /authentication as .* failed|permission denied/);
    });

    test('a wrong password, no client certificate, or a prefix outside the role: unavailable, and said why', async () => {
        const wrong = await node('node-wrong', { ETCD_PASSWORD: 'not-the-password' });
        await waitFor(() => /etcd authentication as realtime failed: .*invalid user ID or password/.test(wrong.stderr()), 10_000,
            'the failed authentication in the log', () => wrong.stderr().slice(-1500));
        assert.equal((await clusterView(wrong)).available, false);

        const anonymous = await node('node-nocert', { ETCD_CERT_FILE: '', ETCD_KEY_FILE: '' });
        await waitFor(() => /etcd:/.test(anonymous.stderr()), 10_000, 'an etcd error in the log', () => anonymous.stderr().slice(-1500));
        assert.equal((await clusterView(anonymous)).available, false);

        const outside = await node('node-outside', {}, `/elsewhere-${process.pid}`);
        await waitFor(() => /permission denied/.test(outside.stderr()), 10_000, 'permission denied in the log',
            () => outside.stderr().slice(-1500));
        assert.equal((await clusterView(outside)).available, false);
    });

    test('ETCD_* options that cannot work fail the start with one clear line', async () => {
        await assert.rejects(startNode(etcd, { name: 'x', prefix, env: { ...etcd.accessEnv, ETCD_KEY_FILE: '' } }),
            /ETCD_CERT_FILE \(--etcd-cert-file\) and ETCD_KEY_FILE \(--etcd-key-file\) go together/);
        await assert.rejects(startNode(etcd, { name: 'x', prefix, env: { ...etcd.accessEnv, ETCD_PASSWORD: '' } }),
            /ETCD_USERNAME \(--etcd-username\) and ETCD_PASSWORD \(--etcd-password\) go together/);
        await assert.rejects(startNode(etcd, { name: 'x', prefix, endpoints: 'http://10.0.0.1:2379', env: { ETCD_USERNAME: 'u', ETCD_PASSWORD: 'p' } }),
            /ETCD_PASSWORD would cross the network in clear to http:\/\/10\.0\.0\.1:2379: use https:\/\/ endpoints/);
        await assert.rejects(startNode(etcd, { name: 'x', prefix, endpoints: 'http://127.0.0.1:2379', env: { ETCD_CA_FILE: etcd.env.RT_ETCD_CA_FILE } }),
            /ETCD_CA_FILE, ETCD_CERT_FILE and ETCD_KEY_FILE need https:\/\/ endpoints/);
    });
});
