// access_token refresh and expiry (server-protocol §3.5, §3.6).
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { startServer, SELF_HOST_SECRET } from '../lib/server.mjs';
import { expiredClaims, sign } from '../lib/jwt.mjs';
import { ClientPool, joinChannel, selfHostToken, waitStatus } from '../lib/clients.mjs';
import { RawClient } from '../lib/raw.mjs';
import { Recorder, sleep, VSNS, waitFor } from '../lib/util.mjs';

let server;
let pool;
let seq = 0;
const unique = (name) => `${name}-${++seq}`;
const nowSec = () => Math.floor(Date.now() / 1000);

before(async () => {
    server = await startServer();
    pool = new ClientPool(server);
});
afterEach(() => pool.cleanup());
after(async () => {
    const result = await server.stop();
    assert.equal(result.crashedBeforeStop, null, `server exited during the tests:\n${result.stderr}`);
});

async function raw(vsn, tok = selfHostToken()) {
    return pool.track(await RawClient.connect(server, { vsn, token: tok }));
}

/** Waits for the shutdown pair: system error with `message` (string or RegExp), then phx_close. */
async function expectShutdown(c, { topic, sub, joinRef, message, from = 0, timeoutMs = 2000 }) {
    const system = await c.frames.next((f) => f.event === 'system' && f.topic === topic, timeoutMs, `system on ${topic}`, from);
    assert.equal(system.payload.extension, 'system');
    assert.equal(system.payload.status, 'error');
    assert.equal(system.payload.channel, sub);
    if (message instanceof RegExp) assert.match(system.payload.message, message);
    else assert.equal(system.payload.message, message);
    assert.equal(system.ref, null);
    if (c.vsn === '2.0.0') assert.equal(system.join_ref, joinRef);
    const close = await c.frames.next((f) => f.event === 'phx_close' && f.topic === topic, 1000, `phx_close on ${topic}`, from);
    assert.ok(c.frames.items.indexOf(close) > c.frames.items.indexOf(system), 'phx_close follows the system message');
    assert.equal(close.ref, joinRef);
    if (c.vsn === '2.0.0') assert.equal(close.join_ref, joinRef);
    assert.deepEqual(close.payload, {});
    // The channel is gone: further pushes are unmatched.
    const ref = c.push(topic, 'broadcast', { type: 'broadcast', event: 'x', payload: {} }, { joinRef });
    assert.deepEqual((await c.reply(ref)).payload, { status: 'error', response: { reason: 'unmatched topic' } });
    return system;
}

/** The token of an outgoing access_token push frame (v1 or v2 text), else undefined. */
function accessTokenPush(data) {
    if (typeof data !== 'string') return undefined;
    const msg = JSON.parse(data);
    const [event, payload] = Array.isArray(msg) ? [msg[3], msg[4]] : [msg.event, msg.payload];
    return event === 'access_token' ? payload.access_token : undefined;
}

/** Round-trips an acked self broadcast: the channel is alive and earlier pushes were processed. */
async function assertAlive(ch, got) {
    const n = Math.random();
    assert.equal(await ch.send({ type: 'broadcast', event: 'alive', payload: { n } }), 'ok');
    await got.next((m) => m.payload.n === n, 2000, 'self echo');
    assert.equal(ch.state, 'joined');
}

for (const vsn of VSNS) {
    describe(`access_token vsn ${vsn}`, () => {
        test('setAuth(new valid token) pushes access_token and keeps the channel joined', async () => {
            const client = pool.client({ vsn });
            await client.setAuth(selfHostToken());
            const ch = client.channel(unique('refresh'), { config: { broadcast: { self: true, ack: true } } });
            const got = new Recorder('broadcasts');
            const system = new Recorder('system');
            ch.on('broadcast', { event: 'alive' }, got.fn);
            ch.on('system', {}, system.fn);
            const statuses = await joinChannel(ch);
            const fresh = selfHostToken({ sub: 'user-2' });
            await client.setAuth(fresh);
            await client.wire.next((f) => f.dir === 'out' && typeof f.data === 'string' && f.data.includes('"access_token"') && f.data.includes(fresh),
                1000, 'access_token push on the wire');
            await assertAlive(ch, got);
            assert.deepEqual(system.items, [], 'no system message for a valid refresh');
            assert.deepEqual(statuses.items.map((s) => s.status), ['SUBSCRIBED']);
        });

        test('accessToken callback (supabase-js style): refreshed tokens are pushed on heartbeats, channel stays joined', async () => {
            let calls = 0;
            const tokens = [];
            const client = pool.client({
                vsn,
                heartbeatIntervalMs: 150,
                accessToken: async () => {
                    calls += 1;
                    const t = selfHostToken({ sub: `refresh-${calls}` });
                    tokens.push(t);
                    return t;
                },
            });
            const ch = client.channel(unique('callback'), { config: { broadcast: { self: true, ack: true } } });
            const got = new Recorder('broadcasts');
            const system = new Recorder('system');
            ch.on('broadcast', { event: 'alive' }, got.fn);
            ch.on('system', {}, system.fn);
            await joinChannel(ch);
            // Refreshed tokens go out as access_token pushes while the channel is joined.
            const pushed = () => client.wire.filter((f) => f.dir === 'out').map((f) => accessTokenPush(f.data)).filter(Boolean);
            await waitFor(() => pushed().length >= 2, 2000, 'two access_token pushes', () => ({ calls, pushed: pushed().length }));
            for (const t of pushed()) assert.ok(tokens.includes(t), 'each pushed token came from the callback');
            await assertAlive(ch, got);
            assert.deepEqual(system.items, []);
        });

        test('setAuth(expired token) → system "Token has expired N seconds ago", then CLOSED', async () => {
            const client = pool.client({ vsn });
            const sub = unique('expired');
            const ch = client.channel(sub);
            const system = new Recorder('system');
            ch.on('system', {}, system.fn);
            await joinChannel(ch);
            await client.setAuth(sign(expiredClaims(30), { secret: SELF_HOST_SECRET }));
            const msg = await system.next(() => true, 2000, 'system message');
            assert.equal(msg.extension, 'system');
            assert.equal(msg.status, 'error');
            assert.equal(msg.channel, sub);
            const m = /^Token has expired (\d+) seconds ago$/.exec(msg.message);
            assert.ok(m, `message: ${msg.message}`);
            assert.ok(Number(m[1]) >= 29 && Number(m[1]) <= 40, `N should be about 30, got ${m[1]}`);
            await waitStatus(ch, 'CLOSED', 2000);
            assert.equal(ch.state, 'closed');
        });

        test('raw: expired access_token → system error + phx_close with the join ref', async () => {
            const c = await raw(vsn);
            const sub = unique('expired-raw');
            const topic = `realtime:${sub}`;
            const join = await c.join(topic);
            const mark = c.frames.mark();
            c.push(topic, 'access_token', { access_token: sign(expiredClaims(10), { secret: SELF_HOST_SECRET }) }, { joinRef: join.joinRef });
            await expectShutdown(c, { topic, sub, joinRef: join.joinRef, message: /^Token has expired \d+ seconds ago$/, from: mark });
        });

        test('setAuth(garbage) → "The token provided is not a valid JWT", then CLOSED', async () => {
            const client = pool.client({ vsn });
            const sub = unique('garbage');
            const ch = client.channel(sub);
            const system = new Recorder('system');
            ch.on('system', {}, system.fn);
            await joinChannel(ch);
            await client.setAuth('garbage');
            const msg = await system.next(() => true, 2000, 'system message');
            assert.deepEqual(msg, { extension: 'system', status: 'error', message: 'The token provided is not a valid JWT', channel: sub });
            await waitStatus(ch, 'CLOSED', 2000);
        });

        test('raw: empty access_token → "The token provided is not a valid JWT" + phx_close', async () => {
            const c = await raw(vsn);
            const sub = unique('empty');
            const topic = `realtime:${sub}`;
            const join = await c.join(topic);
            const mark = c.frames.mark();
            c.push(topic, 'access_token', { access_token: '' }, { joinRef: join.joinRef });
            await expectShutdown(c, { topic, sub, joinRef: join.joinRef, message: 'The token provided is not a valid JWT', from: mark });
        });

        test('raw: access_token without role → "Fields `role` and `exp` are required in JWT" + phx_close', async () => {
            const c = await raw(vsn);
            const sub = unique('claimless');
            const topic = `realtime:${sub}`;
            const join = await c.join(topic);
            const mark = c.frames.mark();
            c.push(topic, 'access_token', { access_token: sign({ exp: nowSec() + 3600 }, { secret: SELF_HOST_SECRET }) }, { joinRef: join.joinRef });
            await expectShutdown(c, { topic, sub, joinRef: join.joinRef, message: 'Fields `role` and `exp` are required in JWT', from: mark });
        });

        test('raw: access_token pushes get no reply; null, non-string and sb_ values are ignored', async () => {
            const c = await raw(vsn);
            const topic = `realtime:${unique('ignored')}`;
            const join = await c.join(topic, { config: { broadcast: { ack: true, self: true } } });
            const refs = [
                c.push(topic, 'access_token', { access_token: selfHostToken({ sub: 'x' }) }, { joinRef: join.joinRef }),
                c.push(topic, 'access_token', { access_token: null }, { joinRef: join.joinRef }),
                c.push(topic, 'access_token', { access_token: 42 }, { joinRef: join.joinRef }),
                c.push(topic, 'access_token', {}, { joinRef: join.joinRef }),
                c.push(topic, 'access_token', { access_token: 'sb_secret_abc' }, { joinRef: join.joinRef }),
            ];
            // Sentinel: the ack of a later push. Replies (and a shutdown) go out in the order of the pushes.
            const bref = c.push(topic, 'broadcast', { type: 'broadcast', event: 'e', payload: { ok: 1 } }, { joinRef: join.joinRef });
            assert.deepEqual((await c.reply(bref)).payload, { status: 'ok', response: {} });
            assert.deepEqual(c.frames.items.filter((f) => refs.includes(f.ref)), [], 'access_token pushes are never answered');
            assert.deepEqual(c.frames.items.filter((f) => f.event === 'system' || f.event === 'phx_close'), []);
        });

        test('a token that expires while joined closes the channel at expiry; a refreshed one does not', async () => {
            const exp = nowSec() + 2;
            const shortLived = sign({ role: 'anon', exp }, { secret: SELF_HOST_SECRET });
            // Socket token and channel token are both short-lived.
            const client = pool.client({ vsn, token: shortLived });
            await client.setAuth(shortLived);
            const subA = unique('short-a');
            const a = client.channel(subA);
            const systemA = new Recorder('system A');
            a.on('system', {}, systemA.fn);
            await joinChannel(a);

            // A second socket whose channel refreshes to a long-lived token before expiry.
            const c = await raw(vsn, shortLived);
            const topicB = `realtime:${unique('short-b')}`;
            const joinB = await c.join(topicB, { accessToken: shortLived, config: { broadcast: { ack: true } } });
            assert.equal(joinB.payload.status, 'ok');
            c.push(topicB, 'access_token', { access_token: selfHostToken() }, { joinRef: joinB.joinRef });
            // And a third whose sb_ refresh is ignored: the original expiry still applies.
            const topicC = `realtime:${unique('short-c')}`;
            const subC = topicC.slice('realtime:'.length);
            const joinC = await c.join(topicC, { accessToken: shortLived });
            c.push(topicC, 'access_token', { access_token: 'sb_publishable_x' }, { joinRef: joinC.joinRef });

            const msg = await systemA.next(() => true, 4500, 'expiry system message');
            const closedAt = Date.now() / 1000;
            assert.equal(msg.extension, 'system');
            assert.equal(msg.status, 'error');
            assert.equal(msg.channel, subA);
            assert.match(msg.message, /^Token has expired \d+ seconds ago$/);
            assert.ok(closedAt >= exp - 0.05 && closedAt <= exp + 1.6, `closed at ${closedAt}, exp ${exp}`);
            await waitStatus(a, 'CLOSED', 2000);

            await expectShutdown(c, { topic: topicC, sub: subC, joinRef: joinC.joinRef, message: /^Token has expired \d+ seconds ago$/, timeoutMs: 2500 });

            // B outlives the original expiry by more than a tick (time passing is the behaviour here).
            await sleep(Math.max(0, (exp + 1.2) * 1000 - Date.now()));
            assert.ok(Date.now() / 1000 >= exp + 1, 'checked more than a second after the original expiry');
            const bref = c.push(topicB, 'broadcast', { type: 'broadcast', event: 'e', payload: {} }, { joinRef: joinB.joinRef });
            assert.deepEqual((await c.reply(bref)).payload, { status: 'ok', response: {} }, 'refreshed channel still joined');
            assert.deepEqual(c.frames.items.filter((f) => f.topic === topicB && (f.event === 'system' || f.event === 'phx_close')), []);
        });
    });
}
