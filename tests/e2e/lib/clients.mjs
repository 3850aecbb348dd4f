// realtime-js clients for the tests: creation (any tenant, either vsn), wire recording,
// subscribe helpers and cleanup.
import { createRequire } from 'node:module';
import WebSocket from 'ws';
import { SELF_HOST_SECRET, SELF_HOST_TENANT } from './server.mjs';
import { token as hsToken } from './jwt.mjs';
import { Recorder, show } from './util.mjs';

const require = createRequire(import.meta.url);
export const realtime = require('@supabase/realtime-js');
export const { RealtimeClient, REALTIME_SUBSCRIBE_STATES } = realtime;

/**
 * A `ws` WebSocket subclass that connects to 127.0.0.1 but sends `Host: <host>`; with `ca` (PEM)
 * it trusts that CA for wss://.
 */
export function transportForHost(host, ca) {
    return class HostWebSocket extends WebSocket {
        constructor(address, protocols, options) {
            super(address, protocols, {
                ...(options || {}),
                ...(ca ? { ca } : {}),
                headers: { ...(options?.headers || {}), ...(host ? { Host: host } : {}) },
            });
        }
    };
}

/** A token for the self-host tenant with default claims. */
export function selfHostToken(extra = {}) {
    return hsToken(SELF_HOST_SECRET, extra);
}

/**
 * Tracks realtime-js clients and raw clients of one test so they can be closed afterwards.
 *   const pool = new ClientPool(server); afterEach(() => pool.cleanup());
 */
export class ClientPool {
    constructor(server) {
        this.server = server;
        this.clients = [];
        this.raws = [];
    }

    /**
     * Creates a RealtimeClient.
     * @param {object} opts { vsn, token, tenant, path, timeout, heartbeatIntervalMs, wire, ...RealtimeClient options }
     *   wire: record every frame in client.wire (default; false for clients that receive millions)
     */
    client({ vsn = '2.0.0', token, tenant = SELF_HOST_TENANT, path = '/realtime/v1', timeout = 3000, wire = true, ...rest } = {}) {
        const apikey = token ?? selfHostToken();
        const options = {
            params: { apikey },
            vsn,
            timeout,
            transport: tenant === SELF_HOST_TENANT && !this.server.caPem
                ? WebSocket
                : transportForHost(tenant === SELF_HOST_TENANT ? null : this.server.hostFor(tenant), this.server.caPem),
            // The tests never want automatic socket reconnects to hide a server close.
            reconnectAfterMs: () => 60_000,
            ...rest,
        };
        const client = new RealtimeClient(this.server.wsUrl(path), options);
        if (wire) recordWire(client);
        this.clients.push(client);
        return client;
    }

    track(raw) {
        this.raws.push(raw);
        return raw;
    }

    async cleanup() {
        const clients = this.clients.splice(0);
        const raws = this.raws.splice(0);
        for (const raw of raws) raw.close();
        await Promise.all(clients.map(async (client) => {
            for (const ch of [...client.getChannels()]) {
                try {
                    ch.teardown();
                } catch {
                    // ignore
                }
            }
            await disconnect(client);
        }));
    }
}

/**
 * Closes a client's socket and waits for the close. (RealtimeClient.disconnect() leaves a 10 s
 * timer behind that keeps the test process alive, so the phoenix socket is closed directly.)
 */
export function disconnect(client, code, reason) {
    client._cancelPendingDisconnect?.();
    const socket = client.socketAdapter.getSocket();
    return new Promise((resolve) => {
        const timer = setTimeout(resolve, 3000);
        socket.disconnect(() => {
            clearTimeout(timer);
            resolve();
        }, code, reason);
    });
}

/**
 * Wraps the phoenix socket's encode/decode so every frame the client sends or receives is kept in
 * `client.wire` (a Recorder of { dir: 'in'|'out', data }), where data is a string or a Buffer.
 */
function recordWire(client) {
    const wire = new Recorder('client wire');
    client.wire = wire;
    const socket = client.socketAdapter.getSocket();
    const decode = socket.decode;
    const encode = socket.encode;
    socket.decode = (raw, cb) => {
        wire.push({ dir: 'in', data: typeof raw === 'string' ? raw : Buffer.from(raw) });
        return decode(raw, cb);
    };
    socket.encode = (msg, cb) => encode(msg, (out) => {
        wire.push({ dir: 'out', data: typeof out === 'string' ? out : Buffer.from(out) });
        return cb(out);
    });
}

/** Text form of the wire log for assertion messages. */
export function wireLog(client, max = 3000) {
    return show(client.wire.items.map((f) => `${f.dir} ${typeof f.data === 'string' ? f.data : `bin:${f.data.toString('hex')}`}`), max);
}

/**
 * Subscribes `channel` and records every status callback in `channel.statuses`
 * (a Recorder of { status, err }). Returns the recorder.
 */
export function subscribe(channel, timeoutMs) {
    const statuses = new Recorder(`statuses of ${channel.topic}`);
    channel.statuses = statuses;
    channel.subscribe((status, err) => statuses.push({ status, err, at: Date.now() }), timeoutMs);
    return statuses;
}

/** Subscribes and waits for SUBSCRIBED; fails with the first other status. */
export async function joinChannel(channel, { timeoutMs = 3000 } = {}) {
    const statuses = subscribe(channel, timeoutMs);
    const first = await statuses.next(() => true, timeoutMs + 1000, `a subscribe status for ${channel.topic}`);
    if (first.status !== 'SUBSCRIBED') {
        throw new Error(`expected SUBSCRIBED for ${channel.topic}, got ${first.status} ${first.err ? first.err.message : ''}`);
    }
    return statuses;
}

/** Waits for a subscribe status on a channel subscribed with subscribe()/joinChannel(). */
export function waitStatus(channel, status, timeoutMs = 3000) {
    return channel.statuses.next((s) => s.status === status, timeoutMs, `status ${status} on ${channel.topic}`);
}
