// A test bed of network namespaces (tests/support/netns/netns-bed.sh): one namespace per "host",
// a back network for the cluster (etcd, PostgreSQL, node links) and a front network for the
// clients, the test process itself on both.
//
//   const bed = await makeBed(dir, ['etcd', 'pg', 'node-a']);
//   bed.hosts['node-a']     // { ns, back, front, launcher: ['ip', 'netns', 'exec', ns] }
//   await bed.link('node-a', 'down');   // a partition of node-a's back network; 'up' heals it
//   await bed.block('node-b', bed.hosts.etcd.back);  // node-b alone can no longer reach etcd
//   await bed.down();       // kills what still runs in the bed, removes it
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseEnvFile } from './admin.mjs';
import { repoRoot } from './server.mjs';

const run = promisify(execFile);
export const bedScript = path.join(repoRoot, 'tests', 'support', 'netns', 'netns-bed.sh');

/**
 * Why a bed cannot be built here (a reason to report), or null. Root and iproute2 are needed;
 * CI runs as root, so there this is null and the suite runs.
 */
export async function bedUnavailable() {
    if (process.getuid?.() !== 0) return 'network namespaces need root';
    try {
        await run('ip', ['netns', 'list'], { timeout: 10_000 });
    } catch (err) {
        return `ip netns does not work here (${err.message}); install iproute2`;
    }
    return null;
}

async function script(...args) {
    try {
        const { stderr } = await run('bash', [bedScript, ...args], {
            timeout: 60_000,
            env: { ...process.env, RT_BED_OWNER_PID: String(process.pid) },
        });
        return stderr;
    } catch (err) {
        throw new Error(`netns-bed.sh ${args.join(' ')} failed: ${err.message}\n${err.stdout || ''}${err.stderr || ''}`);
    }
}

const envKey = (host) => host.toUpperCase().replace(/-/g, '_');

/** Builds a bed of `hosts` in `dir`; see the header for what it resolves. */
export async function makeBed(dir, hosts) {
    await script('up', dir, ...hosts);
    const env = parseEnvFile(path.join(dir, 'bed.env'));
    const entries = hosts.map((host) => {
        const ns = env[`RT_BED_${envKey(host)}_NS`];
        return [host, { ns, back: env[`RT_BED_${envKey(host)}_BACK`], front: env[`RT_BED_${envKey(host)}_FRONT`], launcher: ['ip', 'netns', 'exec', ns] }];
    });
    let removed = false;
    const bed = {
        env,
        hosts: Object.fromEntries(entries),
        /** The test process's own address on the back network (the client net of PostgreSQL). */
        operatorBack: env.RT_BED_OPERATOR_BACK,
        link: (host, state) => script('link', dir, host, state),
        block: (host, address) => script('block', dir, host, address),
        unblock: (host, address) => script('unblock', dir, host, address),
        /** Runs `command` on `host`; resolves { stdout, stderr }. */
        exec: (host, command, args = [], opts = {}) => run('ip', ['netns', 'exec', bed.hosts[host].ns, command, ...args], { timeout: 30_000, ...opts }),
        async down() {
            if (removed) return;
            removed = true;
            await script('down', dir);
        },
    };
    return bed;
}
