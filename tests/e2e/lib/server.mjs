// Starts one realtime-server process for a test file and stops it afterwards.
//
//   const server = await startServer({ tenants: [{ external_id: 'other', jwt_secret: '...' }] });
//   server.port, server.wsUrl(), server.httpBase, server.hostFor('other')
//   await server.stop();   // SIGTERM, then SIGKILL after 3 s; returns { code, signal, stderr }
//
// The binary comes from RT_SERVER_BIN (default <repo>/build/bin/realtime-server).
// Debugging: RT_E2E_LOG_LEVEL (server LOG_LEVEL, default warning), RT_E2E_SERVER_LOG (append the
// server's stderr to this file).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const repoRoot = path.resolve(here, '..', '..', '..');
export const serverBin =
    process.env.RT_SERVER_BIN || path.join(repoRoot, 'build', 'bin', 'realtime-server');

/** JWT secret of the self-host tenant `realtime-dev`. */
export const SELF_HOST_SECRET = 'e2e-self-host-secret-with-at-least-32-characters';
export const SELF_HOST_TENANT = 'realtime-dev';
/** Delays the tests configure; assertions about the backoff use these. */
export const CONNECT_ERROR_BACKOFF_MS = 100;
export const CHANNEL_ERROR_BACKOFF_MS = 100;
/** I/O loops of a test server (WORKERS); the listener hands accepted connections to them in turn. */
export const WORKERS = 2;

async function freePort() {
    return await new Promise((resolve, reject) => {
        const srv = net.createServer();
        srv.unref();
        srv.on('error', reject);
        srv.listen(0, '127.0.0.1', () => {
            const { port } = srv.address();
            srv.close(() => resolve(port));
        });
    });
}

function healthy(host, port, tls) {
    return new Promise((resolve) => {
        const get = tls ? https.get : http.get;
        const options = { host, port, path: '/healthcheck', timeout: 500, ...(tls ? { ca: tls.caPem } : {}) };
        const req = get(options, (res) => {
            res.resume();
            resolve(res.statusCode === 200);
        });
        req.on('timeout', () => req.destroy());
        req.on('error', () => resolve(false));
    });
}

async function spawnOnce({ tenants, env, jwks, launcher = [], tls, host = '127.0.0.1' }) {
    if (!fs.existsSync(serverBin)) {
        throw new Error(`realtime-server binary not found at ${serverBin}; build it or set RT_SERVER_BIN`);
    }
    const port = await freePort();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rt-e2e-'));
    const childEnv = {
        ...process.env,
        PORT: String(port),
        LISTEN_ADDRESS: host,
        DATA_DIR: dataDir,
        SEED_SELF_HOST: 'true',
        API_JWT_SECRET: SELF_HOST_SECRET,
        SELF_HOST_TENANT_NAME: SELF_HOST_TENANT,
        CONNECT_ERROR_BACKOFF_MS: String(CONNECT_ERROR_BACKOFF_MS),
        CHANNEL_ERROR_BACKOFF_MS: String(CHANNEL_ERROR_BACKOFF_MS),
        WORKERS: String(WORKERS),
        LOG_LEVEL: process.env.RT_E2E_LOG_LEVEL || 'warning',
        ...(tls ? { TLS_CERT_FILE: tls.certFile, TLS_KEY_FILE: tls.keyFile } : {}),
        ...env,
    };
    if (jwks) {
        childEnv.API_JWT_JWKS = JSON.stringify(jwks);
    }
    if (tenants && tenants.length > 0) {
        const file = path.join(dataDir, 'seed-tenants.json');
        fs.writeFileSync(file, JSON.stringify({ tenants }));
        childEnv.SEED_TENANTS_FILE = file;
    }
    // A launcher (e.g. prlimit) runs the server as its last argument and must exec it, so that
    // the pid is the server's.
    const [command, ...args] = [...launcher, serverBin];
    const proc = spawn(command, args, { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    proc.stderr.setEncoding('utf8');
    const logFile = process.env.RT_E2E_SERVER_LOG;
    proc.stderr.on('data', (chunk) => {
        if (logFile) fs.appendFileSync(logFile, chunk);
        stderr += chunk;
        if (stderr.length > 200_000) stderr = stderr.slice(-100_000);
    });
    proc.stdout.resume();
    const exited = new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
    let exitInfo = null;
    exited.then((info) => (exitInfo = info));

    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
        if (exitInfo) break;
        if (stderr.includes('listening on') || (await healthy(host, port, tls))) {
            return { proc, port, dataDir, exited, getStderr: () => stderr, getExit: () => exitInfo };
        }
        await new Promise((r) => setTimeout(r, 25));
    }
    proc.kill('SIGKILL');
    await exited;
    fs.rmSync(dataDir, { recursive: true, force: true });
    return { failed: true, port, stderr, exitInfo };
}

/**
 * @param {object} [opts]
 * @param {object[]} [opts.tenants] extra tenants (SEED_TENANTS_FILE format, spec §9.1 fields)
 * @param {object} [opts.env] extra environment for the server
 * @param {object} [opts.jwks] JWKS for the self-host tenant (API_JWT_JWKS)
 * @param {string[]} [opts.launcher] command that execs the server (e.g. ['prlimit', '--nofile=256:4096', '--'])
 * @param {object} [opts.tls] { certFile, keyFile, caPem }: PORT speaks https/wss (lib/certs.mjs)
 * @param {string} [opts.host] the address the server listens on and is reached at (default
 *   127.0.0.1; e.g. a network namespace's address, with a launcher that enters it: netns.mjs)
 */
export async function startServer(opts = {}) {
    let last;
    for (let attempt = 0; attempt < 3; ++attempt) {
        last = await spawnOnce(opts);
        if (!last.failed) break;
        // A port race or a bad configuration: retry the race, report the rest.
        if (!/address|in use|bind/i.test(last.stderr)) {
            throw new Error(`realtime-server did not start (exit ${JSON.stringify(last.exitInfo)}):\n${last.stderr}`);
        }
    }
    if (last.failed) {
        throw new Error(`realtime-server did not start after 3 attempts:\n${last.stderr}`);
    }
    const { proc, port, dataDir, exited, getStderr, getExit } = last;
    const tls = opts.tls;
    let stopped = null;
    const server = {
        port,
        pid: proc.pid,
        host: opts.host ?? '127.0.0.1',
        /** Host header value addressing a tenant by its first DNS label. */
        hostFor: (tenant) => `${tenant}.localhost:${port}`,
        /** Base WebSocket endpoint for realtime-js (it appends /websocket). */
        wsUrl: (prefix = '/realtime/v1') => `${tls ? 'wss' : 'ws'}://${opts.host ?? '127.0.0.1'}:${port}${prefix}`,
        httpBase: `${tls ? 'https' : 'http'}://${opts.host ?? '127.0.0.1'}:${port}`,
        /** The CA clients must trust (PEM), when the port speaks TLS. */
        caPem: tls?.caPem,
        stderr: getStderr,
        /** null while running, else { code, signal } */
        exitInfo: getExit,
        /** Sends `signal` without waiting (e.g. 'SIGSTOP' / 'SIGCONT': a node that hangs, then resumes). */
        signal(signal) {
            if (!getExit()) proc.kill(signal);
        },
        /** Sends `signal` (e.g. 'SIGKILL': a crash) and resolves { code, signal } once it exited. */
        async kill(signal = 'SIGKILL') {
            if (!getExit()) proc.kill(signal);
            return await exited;
        },
        async stop() {
            if (stopped) return stopped;
            const before = getExit();
            if (!before) {
                proc.kill('SIGTERM');
                const timer = setTimeout(() => proc.kill('SIGKILL'), 3000);
                await exited;
                clearTimeout(timer);
            }
            fs.rmSync(dataDir, { recursive: true, force: true });
            stopped = { crashedBeforeStop: before, exit: getExit(), stderr: getStderr() };
            return stopped;
        },
    };
    return server;
}
