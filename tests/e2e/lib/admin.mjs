// Helpers for the tenant management API (server-protocol §9.1, upstream tenants-limits-metrics
// §1/§2): operator tokens, an API client, raw HTTP for exact header control, and a throwaway
// PostgreSQL cluster (tests/support/postgres/pg-cluster.sh) with psql.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { sign } from './jwt.mjs';
import { repoRoot } from './server.mjs';
import { httpRequest } from './util.mjs';

const run = promisify(execFile);
const nowSec = () => Math.floor(Date.now() / 1000);

/** The role an operator token carries unless told otherwise (one of API_JWT_OPERATOR_ROLES). */
export const OPERATOR_ROLE = 'service_role';

/**
 * An HS* operator token: role service_role and no exp (allowed for the admin API). `claims` are
 * added; `{ role: undefined }` leaves the role out, `{ role: 'anon' }` makes a client's token.
 */
export function operatorToken(secret, claims = {}, alg = 'HS256') {
    return sign({ role: OPERATOR_ROLE, ...claims }, { alg, secret });
}

/** An operator token that expired `secondsAgo` seconds ago. */
export function expiredOperatorToken(secret, secondsAgo = 60) {
    return sign({ role: OPERATOR_ROLE, exp: nowSec() - secondsAgo, iat: nowSec() - secondsAgo - 60 }, { secret });
}

/**
 * The tenant API of one server.
 *   const api = adminApi(server, { token }); await api.create({ external_id: 'x', ... })
 * Every call resolves { status, headers, body, json } (util.httpRequest). `headers` replaces the
 * Authorization header when given (pass {} for none).
 */
export function adminApi(server, { token, prefix = '' } = {}) {
    const auth = (headers) => headers ?? { Authorization: `Bearer ${token}` };
    const req = (method, p, { body, headers, extraHeaders = {} } = {}) =>
        httpRequest(server, { method, path: `${prefix}${p}`, headers: { ...auth(headers), ...extraHeaders }, body });
    const id = (externalId) => encodeURIComponent(externalId);
    return {
        request: req,
        list: (opts) => req('GET', '/api/tenants', opts),
        show: (externalId, opts) => req('GET', `/api/tenants/${id(externalId)}`, opts),
        create: (tenant, opts) => req('POST', '/api/tenants', { body: { tenant }, ...opts }),
        put: (externalId, tenant, opts) => req('PUT', `/api/tenants/${id(externalId)}`, { body: { tenant }, ...opts }),
        patch: (externalId, tenant, opts) => req('PATCH', `/api/tenants/${id(externalId)}`, { body: { tenant }, ...opts }),
        del: (externalId, opts) => req('DELETE', `/api/tenants/${id(externalId)}`, opts),
        reload: (externalId, opts) => req('POST', `/api/tenants/${id(externalId)}/reload`, opts),
        shutdown: (externalId, opts) => req('POST', `/api/tenants/${id(externalId)}/shutdown`, opts),
        health: (externalId, opts) => req('GET', `/api/tenants/${id(externalId)}/health`, opts),
    };
}

/**
 * Sends an HTTP/1.1 request written byte for byte (repeated headers, odd casing) and resolves
 * { status, headers (lower-case name → array of values), body }.
 */
export function rawHttp(server, { method = 'GET', path: p, headerLines = [], body = '' }) {
    return new Promise((resolve, reject) => {
        const socket = net.connect(server.port, '127.0.0.1');
        const chunks = [];
        socket.setTimeout(5000, () => socket.destroy(new Error(`raw ${method} ${p} timed out`)));
        socket.on('data', (c) => chunks.push(c));
        socket.on('error', reject);
        socket.on('close', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            const split = text.indexOf('\r\n\r\n');
            const head = split < 0 ? text : text.slice(0, split);
            const lines = head.split('\r\n');
            const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0])?.[1]);
            const headers = {};
            for (const line of lines.slice(1)) {
                const colon = line.indexOf(':');
                if (colon < 0) continue;
                const name = line.slice(0, colon).trim().toLowerCase();
                (headers[name] ||= []).push(line.slice(colon + 1).trim());
            }
            resolve({ status, headers, body: split < 0 ? '' : text.slice(split + 4), raw: text });
        });
        const lines = [`${method} ${p} HTTP/1.1`, `Host: 127.0.0.1:${server.port}`, 'Connection: close', ...headerLines];
        if (body) lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
        socket.write(`${lines.join('\r\n')}\r\n\r\n${body}`);
    });
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL

export const pgClusterScript = path.join(repoRoot, 'tests', 'support', 'postgres', 'pg-cluster.sh');

function psqlBinary(env) {
    const candidates = [env.RT_PG_BIN && path.join(env.RT_PG_BIN, 'psql'), '/usr/lib/postgresql/15/bin/psql'];
    for (const c of candidates) if (c && fs.existsSync(c)) return c;
    return 'psql';
}

/** Parses pg.env (KEY=value lines written with printf %q; the values used need no unquoting). */
export function parseEnvFile(file) {
    const env = {};
    for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
        const m = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line);
        if (m) env[m[1]] = m[2].replace(/^'(.*)'$/, '$1');
    }
    return env;
}

/**
 * Starts a throwaway cluster in `dir` (pg-cluster.sh start; it drops to the postgres user when run
 * as root). Resolves { env, serverEnv, psql(sql) → stdout, stop() } or throws with the script's
 * output.
 */
export async function startPgCluster(dir, { launcher = [], listenAddress } = {}) {
    const [command, ...prefixArgs] = [...launcher, 'bash'];
    const extra = listenAddress ? { RT_PG_LISTEN_ADDRESS: listenAddress } : {};
    try {
        await run(command, [...prefixArgs, pgClusterScript, 'start', dir], { timeout: 90_000, env: { ...process.env, ...extra } });
    } catch (err) {
        throw new Error(`pg-cluster.sh start ${dir} failed: ${err.message}\n${err.stdout || ''}${err.stderr || ''}`);
    }
    const env = parseEnvFile(path.join(dir, 'pg.env'));
    const psql = psqlBinary(env);
    return {
        env,
        /** Control-plane variables for the server (the realtime role and its database). */
        serverEnv: {
            DB_HOST: env.RT_PG_HOST,
            DB_PORT: env.RT_PG_PORT,
            DB_NAME: env.RT_PG_CONTROL_DB,
            DB_USER: env.RT_PG_USER,
            DB_PASSWORD: env.RT_PG_PASSWORD,
        },
        /** Runs `sql` as the superuser in the control database; resolves the unaligned output. */
        async psql(sql) {
            const { stdout } = await run(psql, ['-X', '-q', '-tA', '-v', 'ON_ERROR_STOP=1', '-h', env.PGHOST, '-p', env.PGPORT,
                '-U', env.PGUSER, '-d', env.RT_PG_CONTROL_DB, '-c', sql], { env: { ...process.env, PGPASSWORD: env.PGPASSWORD }, timeout: 15_000 });
            return stdout.replace(/\n$/, '');
        },
        async stop() {
            await run('bash', [pgClusterScript, 'stop', dir], { timeout: 60_000 }).catch(() => {});
        },
    };
}
