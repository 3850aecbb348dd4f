// Tenant HTTP APIs (server-protocol §4.4 batch, §4.5 single, §9.2 ping/healthcheck). HTTP-only, so
// these run once; deliveries are checked on v1 and v2 subscribers.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { startServer, SELF_HOST_SECRET } from '../lib/server.mjs';
import { expiredClaims, sign, token } from '../lib/jwt.mjs';
import { ClientPool, joinChannel, selfHostToken } from '../lib/clients.mjs';
import { positionOf, withoutPosition } from '../lib/positions.mjs';
import { RawClient } from '../lib/raw.mjs';
import { httpConnection, withoutSentinels } from '../lib/sentinel.mjs';
import { httpRequest, Recorder } from '../lib/util.mjs';

const OTHER_SECRET = 'other-tenant-secret-0123456789abcdefghijkl';
const SUSPENDED_SECRET = 'suspended-tenant-secret-0123456789abcdef';
const SMALL_SECRET = 'small-payload-tenant-secret-0123456789abcd';
const NOHISTORY_SECRET = 'no-history-tenant-secret-0123456789abcdef';

let server;
let pool;
let seq = 0;
const unique = (name) => `${name}-${++seq}`;

before(async () => {
    server = await startServer({
        tenants: [
            { external_id: 'other', jwt_secret: OTHER_SECRET },
            { external_id: 'suspended', jwt_secret: SUSPENDED_SECRET, suspend: true },
            { external_id: 'small', jwt_secret: SMALL_SECRET, max_payload_size_in_kb: 1 },
            // Keeps no history: its deliveries carry no position (upstream's exact bytes).
            { external_id: 'nohistory', jwt_secret: NOHISTORY_SECRET, history_size: 0 },
        ],
    });
    pool = new ClientPool(server);
});
afterEach(() => pool.cleanup());
after(async () => {
    const result = await server.stop();
    assert.equal(result.crashedBeforeStop, null, `server exited during the tests:\n${result.stderr}`);
});

async function member(vsn, sub, { tenant, token: tok } = {}) {
    const client = pool.client({ vsn, tenant, token: tok });
    const ch = client.channel(sub);
    const got = new Recorder(`broadcasts of ${vsn} on ${sub}`);
    ch.on('broadcast', { event: '*' }, got.fn);
    await joinChannel(ch);
    return { client, ch, got };
}

const bearer = (tok = selfHostToken()) => ({ Authorization: `Bearer ${tok}` });
/** POST of a batch; `conn` (an httpConnection) sends it over that connection. */
const batch = (body, { headers = bearer(), host, path = '/realtime/v1/api/broadcast', conn } = {}) =>
    (conn ? conn.request.bind(conn) : (opts) => httpRequest(server, opts))({ method: 'POST', path, headers, host, body });
/** A sentinel message on `topic` for a batch. */
const sentinelMessage = (topic) => ({ topic, event: 'sentinel', payload: { sentinel: topic } });

function assertJsonBody(res, status, body) {
    assert.equal(res.status, status, `status; body ${res.body}`);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.deepEqual(res.json, body);
}

describe('batch POST /api/broadcast', () => {
    // On a tenant that keeps history each message also carries its position (after meta.id); on
    // one with history_size 0 the messages are upstream's exactly.
    for (const tenant of [undefined, 'nohistory']) {
        test(`202 with an empty body; messages reach v1 and v2 subscribers, id → meta.id${tenant ? ` (${tenant}: no position)` : ''}`, async () => {
            const sub = unique('batch');
            const tok = tenant ? token(NOHISTORY_SECRET) : undefined;
            const host = tenant ? server.hostFor(tenant) : undefined;
            const v1 = await member('1.0.0', sub, { tenant, token: tok });
            const v2 = await member('2.0.0', sub, { tenant, token: tok });
            const conn = httpConnection(server);
            let res;
            try {
                res = await batch({
                    messages: [
                        { topic: sub, event: 'one', payload: { n: 1 } },
                        { topic: sub, event: 'two', payload: { n: 2 }, id: 'msg-2' },
                        { topic: unique('elsewhere'), event: 'three', payload: {} },
                    ],
                }, { conn, host, headers: bearer(tok) });
                // A sentinel batch over the same connection: delivered after the batch under test.
                assert.equal((await batch({ messages: [sentinelMessage(sub)] }, { conn, host, headers: bearer(tok) })).status, 202);
            } finally {
                conn.close();
            }
            assert.equal(res.status, 202);
            assert.equal(res.body, '');
            assert.equal(res.headers['access-control-allow-origin'], '*', 'CORS is open');
            const positioned = (msg, offset) => (tenant ? msg : withoutPosition(msg, { offset }));
            for (const m of [v1, v2]) {
                const one = await m.got.next((x) => x.event === 'one', 2000, 'one');
                assert.deepEqual(positioned(one, 1), { type: 'broadcast', event: 'one', payload: { n: 1 } });
                const two = await m.got.next((x) => x.event === 'two', 2000, 'two');
                assert.deepEqual(positioned(two, 2), { type: 'broadcast', event: 'two', payload: { n: 2 }, meta: { id: 'msg-2' } });
                if (!tenant) {
                    assert.deepEqual(Object.keys(two.meta), ['id', 'epoch', 'offset'], 'the position after meta.id');
                    assert.equal(positionOf(two).epoch, positionOf(one).epoch, 'one epoch on the topic');
                }
                await m.got.next((x) => x.event === 'sentinel', 2000, 'the sentinel');
            }
            assert.deepEqual(withoutSentinels(v1.got.items).map((m) => m.event), ['one', 'two']);
            assert.deepEqual(withoutSentinels(v2.got.items).map((m) => m.event), ['one', 'two']);
        });
    }

    test('works without the /realtime/v1 prefix, with the apikey header, and with the URL query kept', async () => {
        const sub = unique('batch-paths');
        const v2 = await member('2.0.0', sub);
        const a = await batch({ messages: [{ topic: sub, event: 'a', payload: {} }] }, { path: '/api/broadcast' });
        assert.equal(a.status, 202, a.body);
        const b = await batch({ messages: [{ topic: sub, event: 'b', payload: {} }] }, { headers: { apikey: selfHostToken() } });
        assert.equal(b.status, 202, b.body);
        const c = await batch({ messages: [{ topic: sub, event: 'c', payload: {} }] },
            { path: `/realtime/v1/api/broadcast?apikey=${selfHostToken()}&vsn=2.0.0` });
        assert.equal(c.status, 202, c.body);
        const d = await batch({ messages: [{ topic: sub, event: 'd', payload: {} }] }, { headers: { Authorization: `bearer ${selfHostToken()}` } });
        assert.equal(d.status, 202, `lower-case bearer scheme: ${d.body}`);
        for (const e of ['a', 'b', 'c', 'd']) await v2.got.next((m) => m.event === e, 2000, `message ${e}`);
    });

    test('422 shapes: missing messages, per-message blanks, oversized payload', async () => {
        assertJsonBody(await batch({}), 422, { errors: { messages: ["can't be blank"] } });
        assertJsonBody(await batch({ messages: [{ payload: {} }, { topic: 't', event: 'e', payload: {} }] }), 422,
            { errors: { messages: [{ topic: ["can't be blank"], event: ["can't be blank"] }, {}] } });
        const big = await batch({ messages: [{ topic: 't', event: 'e', payload: { big: 'x'.repeat(2000) } }] },
            { host: server.hostFor('small'), headers: bearer(token(SMALL_SECRET)) });
        assertJsonBody(big, 422, { errors: { messages: [{ payload: ['Payload size exceeds tenant limit'] }] } });
    });

    test('an invalid batch delivers nothing', async () => {
        const sub = unique('batch-invalid');
        const v2 = await member('2.0.0', sub);
        // The barrier goes over the same connection, so it is delivered after anything the invalid batch published.
        const conn = httpConnection(server);
        try {
            const res = await batch({ messages: [{ topic: sub, event: 'valid', payload: {} }, { topic: sub, payload: {} }] }, { conn });
            assert.equal(res.status, 422);
            assert.equal((await batch({ messages: [{ topic: sub, event: 'barrier', payload: {} }] }, { conn })).status, 202);
        } finally {
            conn.close();
        }
        await v2.got.next((m) => m.event === 'barrier', 2000, 'barrier');
        assert.deepEqual(v2.got.items.map((m) => m.event), ['barrier']);
    });

    test('401 {"message":"Unauthorized"} without a token, with a bad, expired or claimless token', async () => {
        const body = { messages: [{ topic: 't', event: 'e', payload: {} }] };
        assertJsonBody(await batch(body, { headers: {} }), 401, { message: 'Unauthorized' });
        assertJsonBody(await batch(body, { headers: bearer('garbage') }), 401, { message: 'Unauthorized' });
        assertJsonBody(await batch(body, { headers: bearer(token('wrong-secret-0123456789abcdefghijklmnop')) }), 401, { message: 'Unauthorized' });
        assertJsonBody(await batch(body, { headers: bearer(sign(expiredClaims(10), { secret: SELF_HOST_SECRET })) }), 401, { message: 'Unauthorized' });
        assertJsonBody(await batch(body, { headers: bearer(sign({ exp: Math.floor(Date.now() / 1000) + 60 }, { secret: SELF_HOST_SECRET })) }),
            401, { message: 'Unauthorized' });
        assertJsonBody(await batch(body, { headers: { 'x-api-key': selfHostToken() } }), 401, { message: 'Unauthorized' });
    });

    test('a Bearer token takes precedence over the apikey header', async () => {
        const body = { messages: [{ topic: 't', event: 'e', payload: {} }] };
        assertJsonBody(await batch(body, { headers: { ...bearer('garbage'), apikey: selfHostToken() } }), 401, { message: 'Unauthorized' });
        const ok = await batch(body, { headers: { ...bearer(selfHostToken()), apikey: 'garbage' } });
        assert.equal(ok.status, 202, ok.body);
    });

    test('401 Tenant not found in database; 403 Tenant is suspended', async () => {
        const body = { messages: [{ topic: 't', event: 'e', payload: {} }] };
        assertJsonBody(await batch(body, { host: server.hostFor('nosuchtenant') }), 401, { message: 'Tenant not found in database' });
        assertJsonBody(await batch(body, { host: server.hostFor('suspended'), headers: bearer(token(SUSPENDED_SECRET)) }), 403,
            { message: 'Tenant is suspended' });
    });

    test('another tenant is addressed by Host and authenticated with its own secret', async () => {
        const sub = unique('batch-other');
        const other = await member('1.0.0', sub, { tenant: 'other', token: token(OTHER_SECRET) });
        const body = { messages: [{ topic: sub, event: 'hi', payload: {} }] };
        assertJsonBody(await batch(body, { host: server.hostFor('other') }), 401, { message: 'Unauthorized' });
        assert.equal((await batch(body, { host: server.hostFor('other'), headers: bearer(token(OTHER_SECRET)) })).status, 202);
        await other.got.next((m) => m.event === 'hi', 2000, 'delivery on tenant other');
    });
});

describe('single POST /api/broadcast/:topic/events/:event', () => {
    const single = (topic, event, { body, contentType = 'application/json', headers = bearer(), host, query = '', conn } = {}) =>
        (conn ? conn.request.bind(conn) : (opts) => httpRequest(server, opts))({
            method: 'POST',
            path: `/realtime/v1/api/broadcast/${encodeURIComponent(topic)}/events/${encodeURIComponent(event)}${query}`,
            headers: { ...(contentType ? { 'Content-Type': contentType } : {}), ...headers },
            host,
            body: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
        });

    // With history: the metadata (kind 4) and payload.meta (v1) are the position and nothing else;
    // with history_size 0 there is no metadata at all (upstream's bytes).
    for (const tenant of [undefined, 'nohistory']) {
        test(`JSON body → 202 empty; v2 gets kind 4 (encoding 1, ${tenant ? 'no meta' : 'meta = position only'}), v1 the JSON broadcast${tenant ? ` (${tenant})` : ''}`, async () => {
            const sub = unique('single');
            const topic = `realtime:${sub}`;
            const tok = tenant ? token(NOHISTORY_SECRET) : selfHostToken();
            const host = tenant ? server.hostFor(tenant) : undefined;
            const r1 = pool.track(await RawClient.connect(server, { vsn: '1.0.0', token: tok, host }));
            const r2 = pool.track(await RawClient.connect(server, { vsn: '2.0.0', token: tok, host }));
            await r1.join(topic);
            await r2.join(topic);
            const res = await single(sub, 'ev', { body: { a: 1 }, host, headers: bearer(tok) });
            assert.equal(res.status, 202, res.body);
            assert.equal(res.body, '');
            const b2 = await r2.frames.next((f) => f.binary, 2000, 'kind 4');
            assert.equal(b2.kind, 4);
            assert.equal(b2.topic, topic);
            assert.equal(b2.userEvent, 'ev');
            assert.equal(b2.encoding, 1);
            assert.equal((tenant ? b2 : withoutPosition(b2, { offset: 1 }, 'kind 4')).meta, undefined);
            assert.deepEqual(b2.payload, { a: 1 });
            const b1 = await r1.frames.next((f) => f.event === 'broadcast', 2000, 'v1 broadcast');
            const payload1 = tenant ? b1.object.payload : withoutPosition(b1.object.payload, positionOf(b2), 'v1 JSON');
            assert.deepEqual({ ...b1.object, payload: payload1 },
                { topic, event: 'broadcast', payload: { event: 'ev', payload: { a: 1 }, type: 'broadcast' }, ref: null });
        });
    }

    test('content type with parameters and a missing content type are accepted', async () => {
        const sub = unique('single-ct');
        const v2 = await member('2.0.0', sub);
        assert.equal((await single(sub, 'a', { body: { x: 1 }, contentType: 'application/json; charset=utf-8' })).status, 202);
        assert.equal((await single(sub, 'b', { body: { x: 2 }, contentType: null })).status, 202);
        await v2.got.next((m) => m.event === 'a', 2000, 'a');
        await v2.got.next((m) => m.event === 'b', 2000, 'b');
    });

    test('a non-object JSON body arrives wrapped as {"_json": value}', async () => {
        const sub = unique('single-json');
        const v2 = await member('2.0.0', sub);
        assert.equal((await single(sub, 'arr', { body: '[1,2,3]' })).status, 202);
        assert.deepEqual(withoutPosition(await v2.got.next((m) => m.event === 'arr', 2000, 'wrapped array')),
            { type: 'broadcast', event: 'arr', payload: { _json: [1, 2, 3] } });
    });

    test('415 for text/plain', async () => {
        const res = await single('t', 'e', { body: 'hello', contentType: 'text/plain' });
        assertJsonBody(res, 415, { error: 'Unsupported Media Type. Use application/json or application/octet-stream' });
        // The media type is checked before authentication.
        const unauth = await single('t', 'e', { body: 'hello', contentType: 'text/plain', headers: {} });
        assert.equal(unauth.status, 415);
    });

    test('octet-stream payload → ArrayBuffer to v2 subscribers, nothing to v1', async () => {
        const sub = unique('single-bin');
        const v1 = await member('1.0.0', sub);
        const v2 = await member('2.0.0', sub);
        // Both requests over one connection: the JSON one after it is the sentinel for v1.
        const conn = httpConnection(server);
        try {
            const res = await single(sub, 'raw', { body: Buffer.from([9, 8, 7, 0, 255]), contentType: 'application/octet-stream', conn });
            assert.equal(res.status, 202, res.body);
            const got = await v2.got.next((m) => m.event === 'raw', 2000, 'binary to v2');
            assert.ok(got.payload instanceof ArrayBuffer, 'payload must be an ArrayBuffer');
            assert.deepEqual([...new Uint8Array(got.payload)], [9, 8, 7, 0, 255]);
            assert.equal((await single(sub, 'json-after', { body: {}, conn })).status, 202);
        } finally {
            conn.close();
        }
        await v1.got.next((m) => m.event === 'json-after', 2000, 'JSON sentinel to v1');
        assert.deepEqual(v1.got.items.map((m) => m.event), ['json-after']);
    });

    test('realtime-js httpSend() with an ArrayBuffer payload → {success:true}, ArrayBuffer to v2', async () => {
        const sub = unique('httpsend-bin');
        const v2 = await member('2.0.0', sub);
        const sender = pool.client({ vsn: '2.0.0' });
        const data = new Uint8Array([1, 2, 3]).buffer;
        assert.deepEqual(await sender.channel(sub).httpSend('bin', data), { success: true });
        const got = await v2.got.next((m) => m.event === 'bin', 2000, 'binary httpSend');
        assert.deepEqual([...new Uint8Array(got.payload)], [1, 2, 3]);
    });

    test('401/403/422 responses', async () => {
        assertJsonBody(await single('t', 'e', { body: {}, headers: {} }), 401, { message: 'Unauthorized' });
        assertJsonBody(await single('t', 'e', { body: {}, headers: bearer('garbage') }), 401, { message: 'Unauthorized' });
        assertJsonBody(await single('t', 'e', { body: {}, host: server.hostFor('nosuchtenant') }), 401, { message: 'Tenant not found in database' });
        assertJsonBody(await single('t', 'e', { body: {}, host: server.hostFor('suspended'), headers: bearer(token(SUSPENDED_SECRET)) }), 403,
            { message: 'Tenant is suspended' });
        assertJsonBody(await single('t', 'e', { body: '' }), 422, { errors: { payload: ["can't be blank"] } });
        assertJsonBody(await single('t', 'e', { body: { big: 'x'.repeat(2000) }, host: server.hostFor('small'), headers: bearer(token(SMALL_SECRET)) }),
            422, { errors: { payload: ['Payload size exceeds tenant limit'] } });
    });

    test('realtime-js httpSend() surfaces the server message on errors', async () => {
        const sender = pool.client({ vsn: '2.0.0', token: 'garbage-apikey' });
        await assert.rejects(sender.channel(unique('hs-err')).httpSend('e', { a: 1 }), { message: 'Unauthorized' });
    });
});

describe('other tenant endpoints', () => {
    test('GET /api/ping → 200 {"message":"Success"}; unknown tenant → 401', async () => {
        assertJsonBody(await httpRequest(server, { path: '/api/ping' }), 200, { message: 'Success' });
        assertJsonBody(await httpRequest(server, { path: '/realtime/v1/api/ping' }), 200, { message: 'Success' });
        assertJsonBody(await httpRequest(server, { path: '/api/ping', host: server.hostFor('nosuchtenant') }), 401,
            { message: 'Tenant not found in database' });
    });

    test('GET /healthcheck → 200 text/plain ok', async () => {
        const res = await httpRequest(server, { path: '/healthcheck' });
        assert.equal(res.status, 200);
        assert.match(String(res.headers['content-type']), /^text\/plain/);
        assert.equal(res.body, 'ok');
    });
});
