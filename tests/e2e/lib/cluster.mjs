// Clusters of realtime-server processes on one machine, coordinated by a throwaway etcd 3.4
// (tests/support/etcd/etcd-cluster.sh, the same script the C++ integration suites use).
//
//   const etcd = await startEtcd(dir);
//   const a = await startNode(etcd, { name: 'node-a', prefix });   // a startServer() handle
//   await clusterView(a)        // GET /api/cluster → { node, backend, available, nodes: [...] }
//   await etcd.stop();
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { operatorToken, parseEnvFile } from './admin.mjs';
import { repoRoot, SELF_HOST_SECRET, startServer } from './server.mjs';
import { httpRequest } from './util.mjs';

const run = promisify(execFile);
export const etcdScript = path.join(repoRoot, 'tests', 'support', 'etcd', 'etcd-cluster.sh');
// Plaintext links (loopback only) need an explicit choice and a secret of at least 32 bytes.
export const CLUSTER_SECRET = 'e2e-cluster-secret-for-plaintext-node-links';
/** Lease TTL of the test nodes: a killed node leaves within this many seconds. */
export const LEASE_TTL_S = 3;

/**
 * Starts etcd in `dir`; resolves { endpoints, env, stop(), halt(), resume() }. With `secure`, an
 * etcd with TLS, client certificates and authentication (etcd-cluster.sh, RT_ETCD_SECURE): its
 * `env` has the CA, client certificate and the user restricted to `prefix` + '/'. On a host of
 * a network namespace test bed (netns.mjs): `launcher` enters the namespace (etcd and its
 * health checks run there, also on resume()), `listenAddress` is the address etcd serves.
 */
export async function startEtcd(dir, { secure = false, prefix, tokenTtlS, launcher = [], listenAddress } = {}) {
    const extra = {
        ...(secure ? { RT_ETCD_SECURE: '1', ...(prefix ? { RT_ETCD_SECURE_PREFIX: `${prefix}/` } : {}), ...(tokenTtlS ? { RT_ETCD_AUTH_TOKEN_TTL: String(tokenTtlS) } : {}) } : {}),
        ...(listenAddress ? { RT_ETCD_LISTEN_ADDRESS: listenAddress } : {}),
    };
    const [command, ...prefixArgs] = [...launcher, 'bash'];
    const script = (action) => run(command, [...prefixArgs, etcdScript, action, dir], { timeout: 60_000, env: { ...process.env, ...extra } });
    try {
        await script('start');
    } catch (err) {
        throw new Error(`etcd-cluster.sh start ${dir} failed: ${err.message}\n${err.stdout || ''}${err.stderr || ''}`);
    }
    const env = parseEnvFile(path.join(dir, 'etcd.env'));
    return {
        endpoints: env.RT_ETCD_ENDPOINTS,
        env,
        /** The ETCD_* variables a node needs for a secure etcd (none for a plain one). */
        accessEnv: secure
            ? { ETCD_CA_FILE: env.RT_ETCD_CA_FILE, ETCD_CERT_FILE: env.RT_ETCD_CERT_FILE, ETCD_KEY_FILE: env.RT_ETCD_KEY_FILE,
                ETCD_USERNAME: env.RT_ETCD_USER, ETCD_PASSWORD: env.RT_ETCD_PASSWORD }
            : {},
        stop: () => script('stop').catch(() => {}),
        /** An outage: etcd stops (data, ports and env kept); resume() starts it again. */
        halt: () => script('halt'),
        resume: () => script('resume'),
    };
}

/**
 * Starts one node of the cluster kept in `etcd` under `prefix`. `endpoints` replaces the etcd
 * URLs the node uses (e.g. a proxy's, see tcp-proxy.mjs, to cut this node off from etcd).
 */
export async function startNode(etcd, { name, prefix, region = 'local', env = {}, tenants, endpoints, tls, launcher, host } = {}) {
    return await startServer({
        tenants,
        tls,
        launcher,
        host,
        env: {
            ETCD_ENDPOINTS: endpoints ?? etcd.endpoints,
            ETCD_PREFIX: prefix,
            NODE_NAME: name,
            REGION: region,
            CLUSTER_SECRET,
            CLUSTER_PLAINTEXT_LINKS: 'true',
            CLUSTER_ADVERTISE_HOST: '127.0.0.1',
            CLUSTER_LEASE_TTL_S: String(LEASE_TTL_S),
            ...env,
        },
    });
}

/** GET /api/cluster of `server` (operator token signed with API_JWT_SECRET). */
export async function clusterView(server, token = operatorToken(SELF_HOST_SECRET)) {
    const res = await httpRequest(server, { path: '/api/cluster', headers: { Authorization: `Bearer ${token}` } });
    if (res.status !== 200) throw new Error(`GET /api/cluster answered ${res.status}: ${res.body}`);
    return res.json;
}

/** The sorted node ids `server` sees. */
export async function memberIds(server) {
    return (await clusterView(server)).nodes.map((n) => n.id).sort();
}

/**
 * The name of the node that is `tenant`'s home (numbers its topics: GET /api/cluster `homes`),
 * once exactly one of `nodes` ({ name: server }) says it is, within `timeoutMs`.
 */
export async function homeOf(nodes, tenant, timeoutMs = 8000) {
    const deadline = Date.now() + timeoutMs;
    let seen = [];
    while (Date.now() < deadline) {
        seen = [];
        for (const [name, node] of Object.entries(nodes)) {
            if (((await clusterView(node)).homes ?? []).includes(tenant)) seen.push(name);
        }
        if (seen.length === 1) return seen[0];
        await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`no single home of ${tenant} within ${timeoutMs} ms (claimed by: ${seen.join(', ') || 'none'})`);
}

/**
 * The node-to-node flows that broadcasts among clients on `memberNodes` travel when `home` numbers
 * them: each member node other than the home sends to the home, and the home sends to each of
 * them ([from, to] pairs; none when every client is on the home).
 */
export function flowsThroughHome(memberNodes, home) {
    const others = [...new Set(memberNodes)].filter((n) => n !== home);
    return others.flatMap((n) => [[n, home], [home, n]]);
}
