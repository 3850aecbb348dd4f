// A raw Phoenix-protocol client over `ws`, speaking vsn 1.0.0 (JSON objects) or 2.0.0 (JSON arrays
// plus binary kinds 3/4). It records every frame exactly as received so tests can check the wire.
import WebSocket from 'ws';
import { Recorder, show } from './util.mjs';

/**
 * Encodes a v2 kind-3 "user broadcast push". `payload` is an object (JSON) or a Buffer (raw);
 * `payloadText` sends that exact JSON text with encoding 1.
 */
export function encodeKind3({ joinRef = '', ref = '', topic, event, meta = '', payload, payloadText }) {
    const raw = payloadText === undefined && (Buffer.isBuffer(payload) || payload instanceof Uint8Array);
    const body = payloadText !== undefined ? Buffer.from(payloadText) : raw ? Buffer.from(payload) : Buffer.from(JSON.stringify(payload));
    const parts = [joinRef, ref, topic, event, meta].map((s) => Buffer.from(s, 'utf8'));
    const header = Buffer.from([3, ...parts.map((p) => p.length), raw ? 0 : 1]);
    return Buffer.concat([header, ...parts, body]);
}

/** Decodes a server → client binary frame (kind 4 expected); returns a description object. */
export function decodeBinary(buf) {
    const kind = buf[0];
    if (kind !== 4) return { kind, raw: buf };
    const [tl, el, ml, enc] = [buf[1], buf[2], buf[3], buf[4]];
    let o = 5;
    const topic = buf.subarray(o, (o += tl)).toString('utf8');
    const event = buf.subarray(o, (o += el)).toString('utf8');
    const meta = ml ? JSON.parse(buf.subarray(o, (o += ml)).toString('utf8')) : undefined;
    const payloadBytes = buf.subarray(o);
    return {
        kind,
        topic,
        userEvent: event,
        encoding: enc,
        meta,
        payloadBytes,
        payload: enc === 1 ? JSON.parse(payloadBytes.toString('utf8')) : payloadBytes,
    };
}

export class RawClient {
    /**
     * @param {object} server from startServer()
     * @param {object} opts { vsn, token, path, host, headers, query, omitVsn }
     *   omitVsn: leave vsn out of the URL (the server must then use 1.0.0; `vsn` still picks the codec)
     */
    static async connect(server, { vsn = '2.0.0', token, path = '/socket/websocket', host, headers = {}, query = '', omitVsn = false } = {}) {
        const params = new URLSearchParams();
        if (token !== undefined) params.set('apikey', token);
        if (!omitVsn) params.set('vsn', vsn);
        const url = `ws://127.0.0.1:${server.port}${path}?${params}${query}`;
        const h = { ...headers };
        if (host) h.Host = host;
        const ws = new WebSocket(url, { headers: h });
        const client = new RawClient(ws, vsn);
        await new Promise((resolve, reject) => {
            ws.once('open', resolve);
            ws.once('unexpected-response', (req, res) => reject(new Error(`upgrade refused: HTTP ${res.statusCode}`)));
            ws.once('error', reject);
        });
        return client;
    }

    constructor(ws, vsn) {
        this.ws = ws;
        this.vsn = vsn;
        this.refCounter = 100;
        this.frames = new Recorder(`raw ${vsn} frames`);
        this.closed = null;
        ws.on('message', (data, isBinary) => this.onMessage(data, isBinary));
        ws.on('close', (code, reason) => {
            this.closed = { code, reason: reason.toString() };
            this.frames.push({ closed: this.closed });
        });
        ws.on('error', () => {});
    }

    onMessage(data, isBinary) {
        if (isBinary) {
            const bin = decodeBinary(Buffer.from(data));
            this.frames.push({ binary: true, ...bin, event: bin.kind === 4 ? 'broadcast' : undefined });
            return;
        }
        const text = data.toString('utf8');
        let parsed;
        try {
            parsed = JSON.parse(text);
        } catch {
            this.frames.push({ text, invalid: true });
            return;
        }
        if (this.vsn === '2.0.0') {
            if (!Array.isArray(parsed)) {
                this.frames.push({ text, wrongShape: true, parsed });
                return;
            }
            const [join_ref, ref, topic, event, payload] = parsed;
            this.frames.push({ text, join_ref, ref, topic, event, payload, array: parsed });
        } else {
            if (Array.isArray(parsed) || parsed === null || typeof parsed !== 'object') {
                this.frames.push({ text, wrongShape: true, parsed });
                return;
            }
            this.frames.push({ text, ...parsed, object: parsed, hasJoinRefKey: 'join_ref' in parsed });
        }
    }

    nextRef() {
        return String(++this.refCounter);
    }

    /** Sends one message in this socket's serializer; returns the ref used. */
    push(topic, event, payload, { ref, joinRef = null, omitJoinRef = false } = {}) {
        const r = ref === undefined ? this.nextRef() : ref;
        if (this.vsn === '2.0.0') {
            this.ws.send(JSON.stringify([joinRef, r, topic, event, payload]));
        } else {
            const msg = { topic, event, payload, ref: r };
            if (!omitJoinRef) msg.join_ref = joinRef;
            this.ws.send(JSON.stringify(msg));
        }
        return r;
    }

    sendText(text) {
        this.ws.send(text, { binary: false });
    }

    /** Sends one text message split into WebSocket fragments (continuation frames). */
    sendFragments(parts) {
        parts.forEach((part, i) => this.ws.send(part, { binary: false, fin: i === parts.length - 1 }));
    }

    sendBinary(buf) {
        this.ws.send(buf, { binary: true });
    }

    /** Waits for the phx_reply with `ref` (and topic if given). */
    reply(ref, timeoutMs = 2000, topic) {
        return this.frames.next((f) => f.event === 'phx_reply' && f.ref === ref && (topic === undefined || f.topic === topic),
            timeoutMs, `phx_reply ref=${show(ref)}${topic ? ` topic=${topic}` : ''}`);
    }

    /** Joins `topic` with the default realtime-js join payload merged with `config`; returns the reply frame. */
    async join(topic, { config = {}, accessToken, ref, extra = {}, timeoutMs = 2000 } = {}) {
        const r = ref || this.nextRef();
        const payload = {
            config: {
                broadcast: { ack: false, self: false },
                presence: { key: '', enabled: false },
                postgres_changes: [],
                private: false,
                ...config,
            },
            ...(accessToken !== undefined ? { access_token: accessToken } : {}),
            ...extra,
        };
        this.push(topic, 'phx_join', payload, { ref: r, joinRef: r });
        const reply = await this.reply(r, timeoutMs, topic);
        reply.joinRef = r;
        return reply;
    }

    /** Next frame after now (or any recorded if fromStart) matching predicate. */
    next(predicate, timeoutMs = 2000, what, fromStart = false) {
        return fromStart ? this.frames.next(predicate, timeoutMs, what) : this.frames.nextNew(predicate, timeoutMs, what);
    }

    close() {
        try {
            this.ws.terminate();
        } catch {
            // already closed
        }
    }
}
