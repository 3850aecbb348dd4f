// Waiting, event recording and plain HTTP helpers.
import crypto from 'node:crypto';
import http from 'node:http';
import https from 'node:https';

export const VSNS = ['1.0.0', '2.0.0'];

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Short human-readable form of a value for timeout messages. */
export function show(value, max = 600) {
    let text;
    try {
        text = JSON.stringify(value, (k, v) =>
            v instanceof ArrayBuffer ? `ArrayBuffer(${Buffer.from(v).toString('hex')})` : v);
    } catch {
        text = String(value);
    }
    if (text === undefined) text = String(value);
    return text.length > max ? `${text.slice(0, max)}…` : text;
}

/**
 * Polls `predicate` every 5 ms until it returns a truthy value (returned) or the timeout expires.
 * `what` describes the awaited condition; `context` (optional function) adds state to the error.
 */
export async function waitFor(predicate, timeoutMs = 2000, what = 'condition', context) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
        const value = await predicate();
        if (value) return value;
        if (Date.now() >= deadline) {
            const extra = context ? `\n  state: ${show(context())}` : '';
            throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${extra}`);
        }
        await sleep(5);
    }
}

/** Waits for an EventEmitter/EventTarget-like `on(event, cb)` event. */
export function waitForEvent(emitter, event, timeoutMs = 2000) {
    return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for event '${event}'`)), timeoutMs);
        emitter.once(event, (...args) => {
            clearTimeout(timer);
            resolve(args.length > 1 ? args : args[0]);
        });
    });
}

/**
 * Records items (frames, callbacks, statuses) and lets tests await the first matching one.
 *   const rec = new Recorder('broadcasts'); ch.on('broadcast', {event:'*'}, rec.fn);
 *   const msg = await rec.next((m) => m.event === 'x', 1000);
 */
export class Recorder {
    constructor(name = 'events') {
        this.name = name;
        this.items = [];
        this.waiters = [];
        /** Records the first argument of each call (callbacks like on('broadcast') get extra args). */
        this.fn = (first) => this.push(first);
    }

    push(item) {
        this.items.push(item);
        for (const w of [...this.waiters]) {
            if (w.index <= this.items.length - 1) this.check(w);
        }
    }

    check(w) {
        while (w.index < this.items.length) {
            const item = this.items[w.index++];
            let ok = false;
            try {
                ok = w.predicate(item);
            } catch {
                ok = false;
            }
            if (ok) {
                clearTimeout(w.timer);
                this.waiters = this.waiters.filter((x) => x !== w);
                w.resolve(item);
                return true;
            }
        }
        return false;
    }

    /**
     * First recorded item (from index `from`, default 0) matching `predicate`.
     * @param {(item:any)=>boolean} [predicate]
     */
    next(predicate = () => true, timeoutMs = 2000, what, from = 0) {
        return new Promise((resolve, reject) => {
            const w = { predicate, resolve, index: from };
            w.timer = setTimeout(() => {
                this.waiters = this.waiters.filter((x) => x !== w);
                reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what || 'a matching item'} in ${this.name}; recorded: ${show(this.items, 1500)}`));
            }, timeoutMs);
            this.waiters.push(w);
            this.check(w);
        });
    }

    /** Like next() but only considers items recorded after this call. */
    nextNew(predicate, timeoutMs, what) {
        return this.next(predicate, timeoutMs, what, this.items.length);
    }

    filter(predicate) {
        return this.items.filter(predicate);
    }

    /** Index to pass as `from` to next() so only later items are considered. */
    mark() {
        return this.items.length;
    }
}

/**
 * Plain HTTP request with node:http (lets tests set Host; `agent` picks the connection pool, see
 * sentinel.mjs httpConnection). Resolves { status, headers, body (string), json (parsed or
 * undefined), buffer, localPort (the client side of the TCP connection used) }.
 */
export function httpRequest(server, { method = 'GET', path, headers = {}, body, host, agent } = {}) {
    return new Promise((resolve, reject) => {
        const h = { ...headers };
        if (host) h.Host = host;
        let data = body;
        if (data !== undefined && typeof data !== 'string' && !Buffer.isBuffer(data)) {
            data = JSON.stringify(data);
            if (!Object.keys(h).some((k) => k.toLowerCase() === 'content-type')) {
                h['Content-Type'] = 'application/json';
            }
        }
        if (data !== undefined) h['Content-Length'] = Buffer.byteLength(data);
        // A TLS server (server.caPem) is asked over https, trusting its CA.
        const request = server.caPem ? https.request : http.request;
        const tls = server.caPem ? { ca: server.caPem } : {};
        const req = request({ host: server.host ?? '127.0.0.1', port: server.port, method, path, headers: h, ...tls, ...(agent ? { agent } : {}) }, (res) => {
            const localPort = res.socket?.localPort;
            const chunks = [];
            res.on('data', (c) => chunks.push(c));
            res.on('end', () => {
                const buffer = Buffer.concat(chunks);
                const text = buffer.toString('utf8');
                let json;
                try {
                    json = text.length ? JSON.parse(text) : undefined;
                } catch {
                    json = undefined;
                }
                resolve({ status: res.statusCode, headers: res.headers, body: text, json, buffer, localPort });
            });
        });
        req.setTimeout(5000, () => req.destroy(new Error(`HTTP ${method} ${path} timed out`)));
        req.on('error', reject);
        if (data !== undefined) req.write(data);
        req.end();
    });
}

/**
 * Sends a WebSocket upgrade request and resolves with the HTTP answer:
 * { status, headers, body, json, elapsedMs, socket? } — status 101 when accepted (socket is then
 * destroyed unless keep is true).
 */
export function upgradeRequest(server, { path = '/socket/websocket?vsn=2.0.0', headers = {}, host, keep = false } = {}) {
    return new Promise((resolve, reject) => {
        const started = Date.now();
        const req = http.request({
            host: server.host ?? '127.0.0.1',
            port: server.port,
            path,
            headers: {
                Connection: 'Upgrade',
                Upgrade: 'websocket',
                'Sec-WebSocket-Key': crypto.randomBytes(16).toString('base64'),
                'Sec-WebSocket-Version': '13',
                ...(host ? { Host: host } : {}),
                ...headers,
            },
        });
        req.setTimeout(5000, () => req.destroy(new Error(`upgrade ${path} timed out`)));
        req.on('upgrade', (res, socket) => {
            const out = { status: res.statusCode, headers: res.headers, body: '', elapsedMs: Date.now() - started };
            if (keep) out.socket = socket;
            else socket.destroy();
            resolve(out);
        });
        req.on('response', (res) => {
            const chunks = [];
            res.on('data', (c) => chunks.push(c));
            res.on('end', () => {
                const text = Buffer.concat(chunks).toString('utf8');
                let json;
                try {
                    json = text.length ? JSON.parse(text) : undefined;
                } catch {
                    json = undefined;
                }
                resolve({ status: res.statusCode, headers: res.headers, body: text, json, elapsedMs: Date.now() - started });
            });
        });
        req.on('error', reject);
        req.end();
    });
}
