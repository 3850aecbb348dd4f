// Broadcast over the socket and through realtime-js' HTTP paths (server-protocol §2.4, §4.1-4.3,
// §4.5 delivery; client-protocol §8; upstream's Deno suite §10.3).
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { startServer } from '../lib/server.mjs';
import { token } from '../lib/jwt.mjs';
import { ClientPool, joinChannel, selfHostToken } from '../lib/clients.mjs';
import { positionOf, withoutPosition } from '../lib/positions.mjs';
import { encodeKind3, RawClient } from '../lib/raw.mjs';
import { httpConnection, rawHeartbeat, sentinelBroadcast, withoutSentinels } from '../lib/sentinel.mjs';
import { Recorder, VSNS } from '../lib/util.mjs';

const OTHER_SECRET = 'other-tenant-secret-0123456789abcdefghijkl';
const SMALL_SECRET = 'small-payload-tenant-secret-0123456789abcd';

let server;
let pool;
let seq = 0;
const unique = (name) => `${name}-${++seq}`;

before(async () => {
    server = await startServer({
        tenants: [
            { external_id: 'other', jwt_secret: OTHER_SECRET },
            { external_id: 'small', jwt_secret: SMALL_SECRET, max_payload_size_in_kb: 1 },
        ],
    });
    pool = new ClientPool(server);
});
afterEach(() => pool.cleanup());
after(async () => {
    const result = await server.stop();
    assert.equal(result.crashedBeforeStop, null, `server exited during the tests:\n${result.stderr}`);
});

/** A joined realtime-js channel recording every broadcast; returns { client, ch, got }. */
async function member(vsn, sub, { self = false, ack = false, tenant, token: tok, isPrivate } = {}) {
    const client = pool.client({ vsn, tenant, token: tok });
    const ch = client.channel(sub, { config: { broadcast: { self, ack }, ...(isPrivate ? { private: true } : {}) } });
    const got = new Recorder(`broadcasts of ${vsn} on ${sub}`);
    ch.on('broadcast', { event: '*' }, got.fn);
    await joinChannel(ch);
    return { client, ch, got };
}

async function raw(vsn, { tenant, token: tok = selfHostToken() } = {}) {
    return pool.track(await RawClient.connect(server, { vsn, token: tok, host: tenant ? server.hostFor(tenant) : undefined }));
}

const bytes = (ab) => [...new Uint8Array(ab)];

for (const vsn of VSNS) {
    describe(`broadcast vsn ${vsn}`, () => {
        test('self:true echoes to the sender; self:false does not, other members still receive', async () => {
            const sub = unique('self');
            const a = await member(vsn, sub, { self: true, ack: true });
            const b = await member(vsn, sub, { self: false, ack: true });
            assert.equal(await a.ch.send({ type: 'broadcast', event: 'from-a', payload: { n: 1 } }), 'ok');
            assert.deepEqual(withoutPosition(await a.got.next((m) => m.event === 'from-a', 2000, 'self echo to a')),
                { type: 'broadcast', event: 'from-a', payload: { n: 1 } });
            await b.got.next((m) => m.event === 'from-a', 2000, 'b receives a');
            assert.equal(await b.ch.send({ type: 'broadcast', event: 'from-b', payload: { n: 2 } }), 'ok');
            assert.deepEqual(withoutPosition(await a.got.next((m) => m.event === 'from-b', 2000, 'a receives b')),
                { type: 'broadcast', event: 'from-b', payload: { n: 2 } });
            // b cannot receive its own sentinel (self:false): an echo of from-b would go out on b's
            // socket before the ack of from-b, which b already has.
            // Sentinels from each sender: whatever it sent before has reached the other by then.
            await sentinelBroadcast(b.ch, [a.got]);
            await sentinelBroadcast(a.ch, [b.got, a.got]);
            assert.deepEqual(b.got.filter((m) => m.event === 'from-b'), [], 'self:false: no echo to the sender');
            assert.equal(withoutSentinels(a.got.items).length, 2);
            assert.equal(withoutSentinels(b.got.items).length, 1);
        });

        test('ack:true → send() resolves ok after the server reply; raw reply is {"status":"ok","response":{}}', async () => {
            const sub = unique('ack');
            const { ch, client } = await member(vsn, sub, { ack: true });
            assert.equal(await ch.send({ type: 'broadcast', event: 'e', payload: { x: 1 } }), 'ok');
            const replies = client.wire.filter((f) => f.dir === 'in' && typeof f.data === 'string' && f.data.includes('phx_reply'));
            assert.equal(replies.length, 2, 'join reply and ack reply');

            const c = await raw(vsn);
            const topic = `realtime:${unique('ack-raw')}`;
            const join = await c.join(topic, { config: { broadcast: { ack: true } } });
            const ref = c.push(topic, 'broadcast', { type: 'broadcast', event: 'e', payload: {} }, { joinRef: join.joinRef });
            const reply = await c.reply(ref);
            assert.deepEqual(reply.payload, { status: 'ok', response: {} });
            if (vsn === '2.0.0') assert.equal(reply.join_ref, join.joinRef);
        });

        test('several channels on one socket each get only their own topic', async () => {
            const client = pool.client({ vsn });
            const subs = [unique('multi-a'), unique('multi-b'), unique('multi-c')];
            const recs = [];
            for (const sub of subs) {
                const ch = client.channel(sub, { config: { broadcast: { self: true, ack: true } } });
                const got = new Recorder(sub);
                ch.on('broadcast', { event: '*' }, got.fn);
                await joinChannel(ch);
                recs.push({ ch, got, sub });
            }
            for (const { ch, sub } of recs) assert.equal(await ch.send({ type: 'broadcast', event: 'e', payload: { sub } }), 'ok');
            for (const { got, sub } of recs) await got.next((m) => m.payload.sub === sub, 2000, `own message on ${sub}`);
            // A sentinel on each channel, from the same socket that sent the three messages.
            for (const { ch, got } of recs) await sentinelBroadcast(ch, [got]);
            for (const { got, sub } of recs) assert.deepEqual(withoutSentinels(got.items).map((m) => m.payload.sub), [sub]);
        });

        test('a removed channel can be subscribed again with a new instance', async () => {
            const client = pool.client({ vsn });
            const sub = unique('again');
            const first = client.channel(sub);
            await joinChannel(first);
            assert.equal(await client.removeChannel(first), 'ok');
            const second = client.channel(sub, { config: { broadcast: { self: true, ack: true } } });
            assert.notEqual(second, first);
            const got = new Recorder('broadcasts');
            second.on('broadcast', { event: 'e' }, got.fn);
            await joinChannel(second);
            assert.equal(await second.send({ type: 'broadcast', event: 'e', payload: { n: 2 } }), 'ok');
            assert.deepEqual((await got.next()).payload, { n: 2 });
        });

        test('ack:false → no reply to a broadcast push', async () => {
            const c = await raw(vsn);
            const topic = `realtime:${unique('noack')}`;
            const join = await c.join(topic, { config: { broadcast: { ack: false, self: true } } });
            const ref = c.push(topic, 'broadcast', { type: 'broadcast', event: 'e', payload: { q: 1 } }, { joinRef: join.joinRef });
            await c.frames.next((f) => f.event === 'broadcast', 2000, 'self echo');
            // Replies go out in the order of the pushes: one to the broadcast would precede this one.
            await rawHeartbeat(c);
            assert.deepEqual(c.frames.items.filter((f) => f.ref === ref), []);
        });

        test('payload over max_payload_size_in_kb → ack error (string payload_size_exceeded), not delivered', async () => {
            const tok = token(SMALL_SECRET);
            const sub = unique('big');
            const sender = await member(vsn, sub, { ack: true, self: true, tenant: 'small', token: tok });
            const other = await member(vsn, sub, { tenant: 'small', token: tok });
            const big = 'x'.repeat(2000); // limit is 1 KB → 1000 * 1 + 500 bytes
            assert.equal(await sender.ch.send({ type: 'broadcast', event: 'big', payload: { big } }), 'error');
            assert.equal(await sender.ch.send({ type: 'broadcast', event: 'small', payload: { s: 'y'.repeat(900) } }), 'ok');
            // The small message, sent after the big one by the same sender, is the sentinel.
            await other.got.next((m) => m.event === 'small', 2000, 'the small message');
            await sender.got.next((m) => m.event === 'small', 2000, 'self echo of the small message');
            assert.deepEqual(other.got.filter((m) => m.event === 'big'), [], 'oversized message not delivered');
            assert.deepEqual(sender.got.filter((m) => m.event === 'big'), [], 'oversized message not echoed');

            const c = await raw(vsn, { tenant: 'small', token: tok });
            const topic = `realtime:${unique('big-raw')}`;
            const join = await c.join(topic, { config: { broadcast: { ack: true } } });
            const ref = c.push(topic, 'broadcast', { type: 'broadcast', event: 'big', payload: { big } }, { joinRef: join.joinRef });
            const reply = await c.reply(ref);
            assert.deepEqual(reply.payload, { status: 'error', response: 'payload_size_exceeded' });
            if (vsn === '2.0.0') {
                const ref3 = c.nextRef();
                c.sendBinary(encodeKind3({ joinRef: join.joinRef, ref: ref3, topic, event: 'big', payload: { big } }));
                assert.deepEqual((await c.reply(ref3)).payload, { status: 'error', response: 'payload_size_exceeded' }, 'kind 3');
            }
        });

        test('oversized payload without ack is dropped silently and the channel stays usable', async () => {
            const tok = token(SMALL_SECRET);
            const c = await raw(vsn, { tenant: 'small', token: tok });
            const topic = `realtime:${unique('big-noack')}`;
            const join = await c.join(topic, { config: { broadcast: { self: true } } });
            c.push(topic, 'broadcast', { type: 'broadcast', event: 'big', payload: { big: 'x'.repeat(3000) } }, { joinRef: join.joinRef });
            c.push(topic, 'broadcast', { type: 'broadcast', event: 'ok', payload: {} }, { joinRef: join.joinRef });
            await c.frames.next((f) => f.event === 'broadcast' && f.payload.event === 'ok', 2000, 'the small message');
            assert.deepEqual(c.frames.items.filter((f) => f.payload?.event === 'big' || f.event === 'phx_reply' && f.ref !== join.joinRef || f.event === 'phx_close'), []);
        });

        test('public and private namespaces never mix (private join answer recorded)', async () => {
            const x = unique('ns');
            const publicPrivX = await member(vsn, `private:${x}`);
            const publicX = await member(vsn, x);
            // A private join of x: without a tenant database it cannot be authorised.
            const c = await raw(vsn);
            const reply = await c.join(`realtime:${x}`, { config: { private: true } });
            assert.deepEqual(reply.payload, {
                status: 'error',
                response: { reason: 'UnableToConnectToProject: Realtime was unable to connect to the project database' },
            });
            // A private HTTP broadcast to x reaches neither public channel. Every request goes over
            // one connection, so the server handles them, and delivers what they publish, in order.
            const conn = httpConnection(server);
            try {
                const auth = { apikey: selfHostToken(), Authorization: `Bearer ${selfHostToken()}` };
                const res = await conn.request({
                    method: 'POST', path: '/realtime/v1/api/broadcast', headers: auth,
                    body: { messages: [{ topic: x, event: 'secret', payload: { p: 1 }, private: true }] },
                });
                assert.equal(res.status, 202);
                const single = await conn.request({
                    method: 'POST', path: `/realtime/v1/api/broadcast/${encodeURIComponent(x)}/events/secret2?private=true`, headers: auth,
                    body: { p: 2 },
                });
                assert.notEqual(single.status, 202, 'a private single broadcast without write permission is refused');
                // Public messages on both topics, then a sentinel on both.
                for (const topic of [x, `private:${x}`]) {
                    const pub = await conn.request({
                        method: 'POST', path: '/realtime/v1/api/broadcast', headers: auth,
                        body: { messages: [{ topic, event: 'public', payload: { topic } }] },
                    });
                    assert.equal(pub.status, 202);
                }
                const sentinel = await conn.request({
                    method: 'POST', path: '/realtime/v1/api/broadcast', headers: auth,
                    body: { messages: [x, `private:${x}`].map((topic) => ({ topic, event: 'sentinel', payload: { sentinel: 'ns' } })) },
                });
                assert.equal(sentinel.status, 202);
            } finally {
                conn.close();
            }
            await publicX.got.next((m) => m.event === 'sentinel', 2000, 'the sentinel on x');
            await publicPrivX.got.next((m) => m.event === 'sentinel', 2000, 'the sentinel on private:x');
            assert.deepEqual(withoutSentinels(publicX.got.items).map((m) => m.payload), [{ topic: x }]);
            assert.deepEqual(withoutSentinels(publicPrivX.got.items).map((m) => m.payload), [{ topic: `private:${x}` }]);
        });

        test('tenants never see each other (same topic on realtime-dev and other)', async () => {
            const sub = unique('iso');
            const dev = await member(vsn, sub, { self: true, ack: true });
            const other = await member(vsn, sub, { self: true, ack: true, tenant: 'other', token: token(OTHER_SECRET) });
            assert.equal(await dev.ch.send({ type: 'broadcast', event: 'dev', payload: {} }), 'ok');
            assert.equal(await other.ch.send({ type: 'broadcast', event: 'other', payload: {} }), 'ok');
            await dev.got.next((m) => m.event === 'dev', 2000, 'dev self echo');
            await other.got.next((m) => m.event === 'other', 2000, 'other self echo');
            // HTTP broadcasts stay in their tenant too. All requests go over one connection (the
            // Host header names the tenant), so they are handled and delivered in order: the last
            // two are sentinels for each tenant.
            const conn = httpConnection(server);
            const devHttp = (event, payload = {}) => conn.request({
                method: 'POST', path: '/api/broadcast', headers: { apikey: selfHostToken() },
                body: { messages: [{ topic: sub, event, payload }] },
            });
            const otherHttp = (event, payload = {}) => conn.request({
                method: 'POST', path: '/api/broadcast', host: server.hostFor('other'), headers: { apikey: token(OTHER_SECRET) },
                body: { messages: [{ topic: sub, event, payload }] },
            });
            try {
                assert.equal((await devHttp('dev-http')).status, 202);
                assert.equal((await otherHttp('other-http')).status, 202);
                assert.equal((await devHttp('sentinel', { sentinel: 'dev' })).status, 202);
                assert.equal((await otherHttp('sentinel', { sentinel: 'other' })).status, 202);
            } finally {
                conn.close();
            }
            await dev.got.next((m) => m.event === 'sentinel', 2000, 'dev http sentinel');
            await other.got.next((m) => m.event === 'sentinel', 2000, 'other http sentinel');
            // The socket paths: the other tenant's sender cannot reach dev at all, so each socket's
            // own self echo is its sentinel. The other's send was handled, and anything it published
            // queued, before it was acked; the sentinel is sent after that ack.
            await sentinelBroadcast(dev.ch, [dev.got]);
            await sentinelBroadcast(other.ch, [other.got]);
            assert.deepEqual(withoutSentinels(dev.got.items).map((m) => m.event), ['dev', 'dev-http']);
            assert.deepEqual(withoutSentinels(other.got.items).map((m) => m.event), ['other', 'other-http']);
        });

        test('httpSend() → {success:true} and reaches v1 and v2 subscribers', async () => {
            const sub = unique('httpsend');
            const v1 = await member('1.0.0', sub);
            const v2 = await member('2.0.0', sub);
            const sender = pool.client({ vsn });
            const ch = sender.channel(sub);
            assert.deepEqual(await ch.httpSend('hs', { from: vsn }), { success: true });
            const expected = { type: 'broadcast', event: 'hs', payload: { from: vsn } };
            const got1 = await v1.got.next(() => true, 2000, 'v1 receives httpSend');
            const got2 = await v2.got.next(() => true, 2000, 'v2 receives httpSend');
            assert.deepEqual(withoutPosition(got1, { offset: 1 }, 'v1'), expected);
            assert.deepEqual(withoutPosition(got2, positionOf(got1), 'v2'), expected, 'the same position for both');
            // The v2 subscriber gets it as a kind-4 user broadcast.
            const bin = v2.client.wire.filter((f) => f.dir === 'in' && Buffer.isBuffer(f.data));
            assert.equal(bin.length, 1, 'one binary frame to the v2 subscriber');
            assert.equal(bin[0].data[0], 4, 'kind 4');
        });

        test('a 200 KB payload round-trips intact (64-bit frame lengths)', async () => {
            const sub = unique('large');
            const a = await member(vsn, sub, { self: true, ack: true });
            const b = await member(vsn === '1.0.0' ? '2.0.0' : '1.0.0', sub);
            const text = 'ä'.repeat(50_000) + 'x'.repeat(100_000);
            assert.equal(await a.ch.send({ type: 'broadcast', event: 'large', payload: { text } }), 'ok');
            for (const m of [a, b]) {
                const got = await m.got.next((x) => x.event === 'large', 3000, 'the large message');
                assert.equal(got.payload.text.length, text.length);
                assert.ok(got.payload.text === text, 'payload must be identical');
            }
        });

        test('messages from one sender arrive in order at v1 and v2 receivers', async () => {
            const sub = unique('order');
            const sender = await member(vsn, sub);
            const r1 = await member('1.0.0', sub);
            const r2 = await member('2.0.0', sub);
            const count = 200;
            for (let i = 0; i < count; ++i) sender.ch.send({ type: 'broadcast', event: 'seq', payload: { i } });
            for (const r of [r1, r2]) {
                await r.got.next((m) => m.payload.i === count - 1, 5000, 'the last message');
                assert.deepEqual(r.got.items.map((m) => m.payload.i), [...Array(count).keys()]);
                // The topic's positions: one epoch, offsets 1, 2, … in the same order.
                const { epoch } = positionOf(r.got.items[0]);
                assert.deepEqual(r.got.items.map((m) => positionOf(m, { epoch }).offset), [...Array(count).keys()].map((i) => i + 1));
            }
        });

        test('httpSend() with URL-special characters in topic and event', async () => {
            const sub = `room a/b?c#d%e+f&${unique('odd')}`;
            const receiver = await member(vsn, sub);
            const sender = pool.client({ vsn });
            assert.deepEqual(await sender.channel(sub).httpSend('ev/ent?#%', { odd: true }), { success: true });
            assert.deepEqual(withoutPosition(await receiver.got.next(() => true, 2000, 'delivery on the odd topic')),
                { type: 'broadcast', event: 'ev/ent?#%', payload: { odd: true } });
        });

        test('REST fallback: send() on an unjoined channel goes over HTTP and is delivered', async () => {
            const sub = unique('fallback');
            const v1 = await member('1.0.0', sub);
            const v2 = await member('2.0.0', sub);
            const sender = pool.client({ vsn });
            const ch = sender.channel(sub);
            const warn = console.warn;
            console.warn = () => {};
            let result;
            try {
                result = await ch.send({ type: 'broadcast', event: 'fb', payload: { via: 'rest' } });
            } finally {
                console.warn = warn;
            }
            assert.equal(result, 'ok');
            assert.equal(sender.isConnected(), false, 'the fallback must not need a socket');
            const expected = { type: 'broadcast', event: 'fb', payload: { via: 'rest' } };
            assert.deepEqual(withoutPosition(await v1.got.next(() => true, 2000, 'v1 receives fallback')), expected);
            assert.deepEqual(withoutPosition(await v2.got.next(() => true, 2000, 'v2 receives fallback')), expected);
        });
    });
}

describe('broadcast across vsn', () => {
    test('a v1 and a v2 client on one topic see each other\'s broadcasts', async () => {
        const sub = unique('mixed');
        const v1 = await member('1.0.0', sub, { self: true, ack: true });
        const v2 = await member('2.0.0', sub, { self: true, ack: true });
        assert.equal(await v1.ch.send({ type: 'broadcast', event: 'from-v1', payload: { a: [1, 'two', { three: 3 }] } }), 'ok');
        assert.equal(await v2.ch.send({ type: 'broadcast', event: 'from-v2', payload: { b: 'é✓', n: 1.5 } }), 'ok');
        const fromV1 = { type: 'broadcast', event: 'from-v1', payload: { a: [1, 'two', { three: 3 }] } };
        const fromV2 = { type: 'broadcast', event: 'from-v2', payload: { b: 'é✓', n: 1.5 } };
        // One topic: from-v1 (acked before from-v2 was sent) is its first message, from-v2 the second.
        assert.deepEqual(withoutPosition(await v2.got.next((m) => m.event === 'from-v1', 2000, 'v2 gets v1'), { offset: 1 }), fromV1);
        assert.deepEqual(withoutPosition(await v1.got.next((m) => m.event === 'from-v2', 2000, 'v1 gets v2'), { offset: 2 }), fromV2);
        assert.deepEqual(withoutPosition(await v1.got.next((m) => m.event === 'from-v1', 2000, 'v1 self'), { offset: 1 }), fromV1);
        assert.deepEqual(withoutPosition(await v2.got.next((m) => m.event === 'from-v2', 2000, 'v2 self'), { offset: 2 }), fromV2);
    });

    test('raw: text pushes are forwarded as pushed (extra keys kept); kind 3 → kind 4 (v2) / JSON (v1), client metadata ignored', async () => {
        const topic = `realtime:${unique('raw-mixed')}`;
        const r1 = await raw('1.0.0');
        const r2 = await raw('2.0.0');
        const s1 = await raw('1.0.0');
        const s2 = await raw('2.0.0');
        for (const c of [r1, r2, s1, s2]) assert.equal((await c.join(topic)).payload.status, 'ok');
        const pushed = { type: 'broadcast', event: 'txt', payload: { t: 1 }, foo: 'bar' };
        s1.push(topic, 'broadcast', pushed, { joinRef: '1' });
        const t1 = await r1.frames.next((f) => f.event === 'broadcast' && f.payload.event === 'txt', 2000, 'v1 gets text push');
        const t2 = await r2.frames.next((f) => f.event === 'broadcast' && f.payload?.event === 'txt', 2000, 'v2 gets text push');
        // The pushed object plus a top-level meta with the position (the topic's first message).
        const txtPosition = positionOf(t1.payload, { offset: 1 }, 'v1 text push');
        assert.deepEqual({ ...t1.object, payload: withoutPosition(t1.object.payload) }, { topic, event: 'broadcast', payload: pushed, ref: null });
        assert.deepEqual([...t2.array.slice(0, 4), withoutPosition(t2.array[4], txtPosition, 'v2 text push')], [null, null, topic, 'broadcast', pushed]);

        const text = '{ "k" : "v",\n  "a":[1, 2.50, "\\u00e9"], "z":{} }';
        // Client metadata other than persist (which asks to store the message, private channels
        // only: broadcast-persistence.test.mjs) is not forwarded.
        s2.sendBinary(encodeKind3({ joinRef: '1', ref: '2', topic, event: 'bin-json', meta: '{"note":"mine","persist":false}', payloadText: text }));
        const b2 = await r2.frames.next((f) => f.binary && f.userEvent === 'bin-json', 2000, 'v2 gets kind 4');
        assert.equal(b2.kind, 4);
        assert.equal(b2.topic, topic);
        assert.equal(b2.encoding, 1);
        // The metadata is the position only (the topic's second message).
        assert.equal(withoutPosition(b2, { epoch: txtPosition.epoch, offset: 2 }, 'kind 4').meta, undefined, 'client metadata is not forwarded');
        assert.equal(b2.payloadBytes.toString(), text, 'JSON payload forwarded byte for byte');
        const b1 = await r1.frames.next((f) => f.event === 'broadcast' && f.payload.event === 'bin-json', 2000, 'v1 gets converted JSON');
        assert.deepEqual({ ...b1.object, payload: withoutPosition(b1.object.payload, positionOf(b2), 'v1 conversion') },
            { topic, event: 'broadcast', payload: { event: 'bin-json', payload: JSON.parse(text), type: 'broadcast' }, ref: null });
    });

    test('multi-byte topic, event and payload: lengths are UTF-8 byte counts (kind 3/4)', async () => {
        const sub = `ünï-✓-${unique('utf8')}`;
        const sender = await member('2.0.0', sub, { self: true, ack: true });
        const v2 = await member('2.0.0', sub);
        const v1 = await member('1.0.0', sub, { self: true, ack: true });
        const payload = { text: 'Grüße 👋 ✓', emoji: '🎉' };
        assert.equal(await sender.ch.send({ type: 'broadcast', event: 'évt-✓', payload }), 'ok');
        for (const m of [sender, v2, v1]) {
            assert.deepEqual(withoutPosition(await m.got.next((x) => x.event === 'évt-✓', 2000, 'unicode message')),
                { type: 'broadcast', event: 'évt-✓', payload });
        }
        assert.equal(await v1.ch.send({ type: 'broadcast', event: 'ëvt-v1', payload }), 'ok');
        assert.deepEqual(withoutPosition(await v2.got.next((x) => x.event === 'ëvt-v1', 2000, 'unicode from v1')),
            { type: 'broadcast', event: 'ëvt-v1', payload });
    });

    test('binary (ArrayBuffer) broadcast on v2 round-trips as ArrayBuffer to v2 and is not delivered to v1', async () => {
        const sub = unique('binary');
        const sender = await member('2.0.0', sub, { self: true, ack: true });
        const v2 = await member('2.0.0', sub);
        const v1 = await member('1.0.0', sub);
        const data = new Uint8Array([0, 1, 2, 253, 254, 255]).buffer;
        assert.equal(await sender.ch.send({ type: 'broadcast', event: 'bin', payload: data }), 'ok');
        const self = await sender.got.next((m) => m.event === 'bin', 2000, 'binary self echo');
        const got = await v2.got.next((m) => m.event === 'bin', 2000, 'binary to v2');
        for (const m of [self, got]) {
            assert.ok(m.payload instanceof ArrayBuffer, `payload must be an ArrayBuffer, got ${Object.prototype.toString.call(m.payload)}`);
            assert.deepEqual(bytes(m.payload), [0, 1, 2, 253, 254, 255]);
            assert.equal(m.type, 'broadcast');
        }
        // Sentinel: a JSON broadcast afterwards from the same sender reaches v1; the binary one never does.
        assert.equal(await sender.ch.send({ type: 'broadcast', event: 'json-after', payload: { j: 1 } }), 'ok');
        await v1.got.next((m) => m.event === 'json-after', 2000, 'JSON sentinel to v1');
        assert.deepEqual(v1.got.items.map((m) => m.event), ['json-after']);
        assert.ok(v1.client.wire.items.every((f) => typeof f.data === 'string'), 'a v1 socket never receives binary frames');
    });
});
