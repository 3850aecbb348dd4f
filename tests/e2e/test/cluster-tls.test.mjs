// Node links with mutual TLS (issue 18 part 2), with the unchanged realtime-js over wss:// on
// each node: broadcasts and presence cross nodes over links that are encrypted and whose peers
// prove their node id with a certificate of the cluster's CA (lib/certs.mjs: real OpenSSL). A
// node whose certificate names another node refuses to start; a node with a certificate of
// another CA joins etcd but gets no link to the others.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import { makeCertificateAuthority } from '../lib/certs.mjs';
import { ClientPool, joinChannel } from '../lib/clients.mjs';
import { memberIds, startEtcd, startNode } from '../lib/cluster.mjs';
import { Recorder, waitFor } from '../lib/util.mjs';

let counter = 0;
const unique = (name) => `${name}-${process.pid}-${++counter}`;

describe('mutual TLS between nodes', () => {
    let dir;
    let etcd;
    let ca;
    let otherCa;
    let clientLeaf;
    const prefix = `/e2e-cluster-tls-${process.pid}`;
    const nodes = {};
    const pools = [];

    /** The environment of a node whose link certificate names `certName`, issued by `authority`. */
    function linkEnv(name, certName = name, authority = ca) {
        const leaf = authority.issue(`link-${name}-${certName}`, { dns: [certName] });
        return {
            CLUSTER_TLS_CA_FILE: authority.caFile,
            CLUSTER_TLS_CERT_FILE: leaf.certFile,
            CLUSTER_TLS_KEY_FILE: leaf.keyFile,
            CLUSTER_PLAINTEXT_LINKS: 'false',
            CLUSTER_SECRET: '',
        };
    }

    function tls() {
        return { certFile: clientLeaf.certFile, keyFile: clientLeaf.keyFile, caPem: ca.caPem };
    }

    before(async () => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rt-e2e-cluster-tls-'));
        ca = makeCertificateAuthority('e2e cluster CA');
        otherCa = makeCertificateAuthority('someone else\'s CA');
        clientLeaf = ca.issue('clients', { dns: ['localhost'], ips: ['127.0.0.1'] });
        etcd = await startEtcd(dir);
        for (const name of ['node-a', 'node-b']) {
            nodes[name] = await startNode(etcd, { name, prefix, env: linkEnv(name), tls: tls() });
        }
        for (const node of Object.values(nodes)) {
            await waitFor(async () => (await memberIds(node)).length === 2, 8000, 'both nodes see 2 members');
        }
    });

    afterEach(async () => {
        await Promise.all(pools.splice(0).map((p) => p.cleanup()));
    });

    after(async () => {
        await Promise.all(Object.values(nodes).map((n) => n.stop()));
        await etcd?.stop();
        ca?.remove();
        otherCa?.remove();
        if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    async function member(node, sub, presenceKey) {
        const pool = new ClientPool(node);
        pools.push(pool);
        const ch = pool.client().channel(sub, { config: { broadcast: { ack: true }, presence: { key: presenceKey } } });
        const got = new Recorder(`broadcasts on ${sub} at ${node.port}`);
        ch.on('broadcast', { event: '*' }, got.fn);
        const joins = new Recorder(`presence joins at ${node.port}`);
        ch.on('presence', { event: 'join' }, joins.fn);
        await joinChannel(ch);
        return { ch, got, joins };
    }

    test('broadcast and presence cross the nodes over mutual-TLS links', async () => {
        const sub = unique('tls-cross');
        const a = await member(nodes['node-a'], sub, 'on-a');
        const b = await member(nodes['node-b'], sub, 'on-b');
        // The first broadcasts may go out before b's interest reached a: repeat until one lands.
        await waitFor(async () => {
            await a.ch.send({ type: 'broadcast', event: 'hello', payload: { from: 'a' } });
            return b.got.items.some((m) => m.event === 'hello');
        }, 10_000, 'a broadcast from node-a at node-b');
        assert.equal(await a.ch.track({ on: 'a' }), 'ok');
        await b.joins.next((j) => j.key === 'on-a', 10_000, 'node-a\'s presence at node-b');
        assert.doesNotMatch(nodes['node-a'].stderr() + nodes['node-b'].stderr(), /closed: TLS|certificate names/);
    });

    test('a node whose certificate names another node refuses to start', async () => {
        await assert.rejects(startNode(etcd, { name: 'node-c', prefix, env: linkEnv('node-c', 'node-z') }),
            /CLUSTER_TLS_CERT_FILE names node-z, not this node's name node-c \(NODE_NAME\): peers would refuse this node/);
    });

    test('a node with a certificate of another CA gets no link to the others', async () => {
        const env = { ...linkEnv('node-x', 'node-x', otherCa), CLUSTER_TLS_CA_FILE: otherCa.caFile };
        const x = await startNode(etcd, { name: 'node-x', prefix, env, tls: tls() });
        try {
            await waitFor(async () => (await memberIds(nodes['node-a'])).includes('node-x'), 8000, 'node-x in the membership');
            // node-a dials node-x and cannot verify its certificate; node-x cannot verify node-a's.
            await waitFor(() => /link dialer node-x .* closed: TLS: /.test(nodes['node-a'].stderr()), 10_000,
                'node-a refusing node-x\'s certificate', () => nodes['node-a'].stderr().slice(-2000));
            await waitFor(() => /closed: TLS: /.test(x.stderr()), 10_000, 'node-x refusing the cluster\'s certificates',
                () => x.stderr().slice(-2000));
        } finally {
            await x.stop();
        }
    });
});
