// Channel joins (server-protocol §3.1-3.5, §8): join replies, postgres_changes echo, join errors
// with their exact reasons and backoff, tenant limits, private-only, join tokens.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { startServer, SELF_HOST_SECRET, CHANNEL_ERROR_BACKOFF_MS } from '../lib/server.mjs';
import { claims, expiredClaims, generateKeys, sign, token } from '../lib/jwt.mjs';
import { ClientPool, joinChannel, selfHostToken, subscribe } from '../lib/clients.mjs';
import { RawClient } from '../lib/raw.mjs';
import { Recorder, upgradeRequest, VSNS, waitFor } from '../lib/util.mjs';

const LIMITED_SECRET = 'limited-tenant-secret-0123456789abcdefghij';
const SINGLE_SECRET = 'single-user-tenant-secret-0123456789abcdef';
const PRIVONLY_SECRET = 'private-only-tenant-secret-0123456789abcde';
const keys = generateKeys('channels');

let server;
let pool;
let seq = 0;
const unique = (name) => `${name}-${++seq}`;

before(async () => {
    server = await startServer({
        tenants: [
            { external_id: 'limited', jwt_secret: LIMITED_SECRET, max_channels_per_client: 1 },
            // One tenant per vsn so the two runs of the concurrent-users test cannot interfere.
            { external_id: 'single-v1', jwt_secret: SINGLE_SECRET, max_concurrent_users: 1 },
            { external_id: 'single-v2', jwt_secret: SINGLE_SECRET, max_concurrent_users: 1 },
            { external_id: 'privonly', jwt_secret: PRIVONLY_SECRET, private_only: true },
            { external_id: 'jwks', jwt_secret: LIMITED_SECRET, jwt_jwks: keys.jwks },
            // Keeps no history: public channels have nothing to replay from.
            { external_id: 'nohistory', jwt_secret: LIMITED_SECRET, history_size: 0 },
        ],
    });
    pool = new ClientPool(server);
});
afterEach(() => pool.cleanup());
after(async () => {
    const result = await server.stop();
    assert.equal(result.crashedBeforeStop, null, `server exited during the tests:\n${result.stderr}`);
});

async function raw(vsn, { tenant, token: tok = selfHostToken() } = {}) {
    return pool.track(await RawClient.connect(server, { vsn, token: tok, host: tenant ? server.hostFor(tenant) : undefined }));
}

/** Joins with a raw client and asserts an error reply with `reason`, delayed by the backoff. */
async function assertJoinError(c, topic, reason, opts = {}) {
    const started = Date.now();
    const reply = await c.join(topic, opts);
    const elapsed = Date.now() - started;
    assert.deepEqual(reply.payload, { status: 'error', response: { reason } }, `join reply ${reply.text}`);
    assert.ok(elapsed >= CHANNEL_ERROR_BACKOFF_MS - 10,
        `a join error must be delayed by CHANNEL_ERROR_BACKOFF_MS (${CHANNEL_ERROR_BACKOFF_MS} ms); answered after ${elapsed} ms`);
    return reply;
}

/** Subscribes a realtime-js channel and asserts CHANNEL_ERROR with err.message = reason. */
async function assertClientJoinError(ch, reason) {
    const statuses = subscribe(ch);
    const first = await statuses.next(() => true, 4000, `a subscribe status for ${ch.topic}`);
    assert.equal(first.status, 'CHANNEL_ERROR', `expected CHANNEL_ERROR, got ${first.status}`);
    assert.equal(first.err.message, reason);
    assert.deepEqual(first.err.cause, { reason });
}

for (const vsn of VSNS) {
    describe(`channels vsn ${vsn}`, () => {
        test('join reply is {"postgres_changes":[]} and realtime-js reports SUBSCRIBED', async () => {
            const c = await raw(vsn);
            const topic = `realtime:${unique('plain')}`;
            const reply = await c.join(topic);
            assert.deepEqual(reply.payload, { status: 'ok', response: { postgres_changes: [] } });
            if (vsn === '2.0.0') assert.equal(reply.join_ref, reply.joinRef);

            const client = pool.client({ vsn });
            const ch = client.channel(unique('plain'));
            await joinChannel(ch);
            assert.equal(ch.state, 'joined');
        });

        test('postgres_changes are echoed in order with integer ids, then a system error (no database)', async () => {
            const c = await raw(vsn);
            const sub = unique('pg');
            const topic = `realtime:${sub}`;
            const bindings = [
                { event: 'INSERT', schema: 'public', table: 'messages' },
                { event: '*', schema: 'public', table: 'todos', filter: 'id=eq.1' },
                { event: 'DELETE', schema: 'public' },
                { event: 'UPDATE', schema: 'public', table: 't', filter: 'status=eq."a,b",id=in.(1,2)', select: ['id', 'status'] },
                { event: 'insert', table: 'only_table' },
                { event: '*', schema: 'public', table: 'x', filter: '' },
            ];
            const reply = await c.join(topic, { config: { postgres_changes: bindings } });
            assert.equal(reply.payload.status, 'ok', reply.text);
            const echoed = reply.payload.response.postgres_changes;
            assert.equal(echoed.length, bindings.length);
            echoed.forEach((entry, i) => {
                const { id, ...rest } = entry;
                assert.deepEqual(rest, bindings[i], `entry ${i} must echo the client's element verbatim`);
                assert.ok(Number.isInteger(id), `entry ${i} id must be an integer, got ${JSON.stringify(id)}`);
            });
            const system = await c.frames.next((f) => f.event === 'system', 2000, 'system message');
            assert.equal(system.payload.extension, 'postgres_changes');
            assert.equal(system.payload.status, 'error');
            assert.equal(system.payload.channel, sub);
            assert.match(system.payload.message, /^Unable to subscribe to changes with given parameters\./);
            assert.equal(system.ref, null);
            if (vsn === '2.0.0') assert.equal(system.join_ref, reply.joinRef);
            assert.ok(c.frames.items.indexOf(system) > c.frames.items.indexOf(reply), 'system comes after the join reply');
        });

        test('realtime-js postgres_changes bindings match the echo (SUBSCRIBED) and on(system) sees the error', async () => {
            const client = pool.client({ vsn });
            const sub = unique('pg-js');
            const ch = client.channel(sub);
            const system = new Recorder('system');
            ch.on('postgres_changes', { event: 'INSERT', schema: 'public', table: 'messages' }, () => {});
            ch.on('postgres_changes', { event: '*', schema: 'public', table: 'todos', filter: 'id=eq.1' }, () => {});
            ch.on('system', {}, system.fn);
            await joinChannel(ch);
            const msg = await system.next(() => true, 2000, 'system callback');
            assert.equal(msg.extension, 'postgres_changes');
            assert.equal(msg.status, 'error');
            assert.equal(msg.channel, sub);
            assert.equal(ch.state, 'joined');
        });

        test('postgres_changes [null] → ok join with [] and no system message', async () => {
            const c = await raw(vsn);
            const reply = await c.join(`realtime:${unique('pg-null')}`, { config: { postgres_changes: [null] } });
            assert.deepEqual(reply.payload, { status: 'ok', response: { postgres_changes: [] } });
            c.push('phoenix', 'heartbeat', {}, { ref: 'hb', omitJoinRef: true });
            await c.reply('hb');
            await new Promise((r) => setTimeout(r, 100));
            assert.deepEqual(c.frames.items.filter((f) => f.event === 'system'), []);
        });

        test('realtime-js private channel: CHANNEL_ERROR with the server reason (no tenant database)', async () => {
            const client = pool.client({ vsn });
            await assertClientJoinError(client.channel(unique('private-js'), { config: { private: true } }),
                'UnableToConnectToProject: Realtime was unable to connect to the project database');
        });

        test('topic "realtime:" → TopicNameRequired', async () => {
            const c = await raw(vsn);
            await assertJoinError(c, 'realtime:', 'TopicNameRequired: You must provide a topic name');
            const client = pool.client({ vsn });
            await assertClientJoinError(client.channel(''), 'TopicNameRequired: You must provide a topic name');
        });

        test('max_channels_per_client 1 → ChannelRateLimitReached on the second channel', async () => {
            const tok = token(LIMITED_SECRET);
            const c = await raw(vsn, { tenant: 'limited', token: tok });
            assert.equal((await c.join(`realtime:${unique('first')}`)).payload.status, 'ok');
            await assertJoinError(c, `realtime:${unique('second')}`, 'ChannelRateLimitReached: Too many channels');

            const client = pool.client({ vsn, tenant: 'limited', token: tok });
            await joinChannel(client.channel(unique('one')));
            await assertClientJoinError(client.channel(unique('two')), 'ChannelRateLimitReached: Too many channels');
        });

        test('leaving a channel frees its slot under max_channels_per_client', async () => {
            const c = await raw(vsn, { tenant: 'limited', token: token(LIMITED_SECRET) });
            const first = `realtime:${unique('first')}`;
            const join = await c.join(first);
            assert.equal(join.payload.status, 'ok');
            const leaveRef = c.push(first, 'phx_leave', {}, { joinRef: join.joinRef });
            assert.equal((await c.reply(leaveRef)).payload.status, 'ok');
            assert.equal((await c.join(`realtime:${unique('second')}`)).payload.status, 'ok');
        });

        test('max_concurrent_users 1 → ConnectionRateLimitReached on a second socket, 429 at connect', async () => {
            const tenant = vsn === '1.0.0' ? 'single-v1' : 'single-v2';
            const tok = token(SINGLE_SECRET);
            // Both sockets connect before anyone joins: sockets without channels are not users.
            const a = await raw(vsn, { tenant, token: tok });
            const b = await raw(vsn, { tenant, token: tok });
            assert.equal((await a.join(`realtime:${unique('a')}`)).payload.status, 'ok');
            await assertJoinError(b, `realtime:${unique('b')}`, 'ConnectionRateLimitReached: Too many connected users');

            const res = await upgradeRequest(server, { path: `/socket/websocket?apikey=${tok}&vsn=${vsn}`, host: server.hostFor(tenant) });
            assert.equal(res.status, 429, `connect while the tenant is full: ${res.status} ${res.body}`);
            assert.deepEqual(res.json, { error: 'Too many connected users' });

            // The joined socket keeps its slot for further channels.
            assert.equal((await a.join(`realtime:${unique('a2')}`)).payload.status, 'ok');

            // Once the user disconnects, the slot is free again.
            a.close();
            await waitFor(async () => (await b.join(`realtime:${unique('b-retry')}`)).payload.status === 'ok',
                3000, 'the second socket to be admitted after the first disconnected');
        });

        test('realtime-js: the second client sees CHANNEL_ERROR ConnectionRateLimitReached', async () => {
            const tenant = vsn === '1.0.0' ? 'single-v1' : 'single-v2';
            const tok = token(SINGLE_SECRET);
            const first = pool.client({ vsn, tenant, token: tok });
            const second = pool.client({ vsn, tenant, token: tok });
            // Wait until the slot of the previous test's sockets is released.
            await waitFor(async () => (await upgradeRequest(server, {
                path: `/socket/websocket?apikey=${tok}&vsn=${vsn}`, host: server.hostFor(tenant),
            })).status === 101, 3000, 'the tenant to have a free user slot');
            second.connect();
            await waitFor(() => second.isConnected(), 2000, 'second client connected');
            await joinChannel(first.channel(unique('first')));
            await assertClientJoinError(second.channel(unique('second')), 'ConnectionRateLimitReached: Too many connected users');
        });

        test('private_only tenant → PrivateOnly for a public join', async () => {
            const tok = token(PRIVONLY_SECRET);
            const c = await raw(vsn, { tenant: 'privonly', token: tok });
            await assertJoinError(c, `realtime:${unique('pub')}`, 'PrivateOnly: This project only allows private channels');
            const client = pool.client({ vsn, tenant: 'privonly', token: tok });
            await assertClientJoinError(client.channel(unique('pub')), 'PrivateOnly: This project only allows private channels');
        });

        test('private join on a private_only tenant is not refused with PrivateOnly (records the answer)', async () => {
            const c = await raw(vsn, { tenant: 'privonly', token: token(PRIVONLY_SECRET) });
            const reply = await c.join(`realtime:${unique('priv')}`, { config: { private: true } });
            // Without a tenant database private channels cannot be authorised (spec §3.3 step 9/10).
            assert.notDeepEqual(reply.payload.response, { reason: 'PrivateOnly: This project only allows private channels' });
            assert.deepEqual(reply.payload, {
                status: 'error',
                response: { reason: 'UnableToConnectToProject: Realtime was unable to connect to the project database' },
            });
        });

        test('join with an expired access_token → InvalidJWTToken: Token has expired N seconds ago', async () => {
            const expired = sign(expiredClaims(30), { secret: SELF_HOST_SECRET });
            const c = await raw(vsn);
            const reply = await c.join(`realtime:${unique('exp')}`, { accessToken: expired });
            assert.equal(reply.payload.status, 'error');
            const m = /^InvalidJWTToken: Token has expired (\d+) seconds ago$/.exec(reply.payload.response.reason);
            assert.ok(m, `reason: ${reply.payload.response.reason}`);
            assert.ok(Number(m[1]) >= 29 && Number(m[1]) <= 40, `N should be about 30, got ${m[1]}`);

            const client = pool.client({ vsn });
            await client.setAuth(expired);
            const ch = client.channel(unique('exp-js'));
            const statuses = subscribe(ch);
            const first = await statuses.next(() => true, 4000);
            assert.equal(first.status, 'CHANNEL_ERROR');
            assert.match(first.err.message, /^InvalidJWTToken: Token has expired \d+ seconds ago$/);
        });

        test('join with a garbage access_token → MalformedJWT', async () => {
            const c = await raw(vsn);
            await assertJoinError(c, `realtime:${unique('garbage')}`, 'MalformedJWT: The token provided is not a valid JWT', { accessToken: 'garbage' });
            const client = pool.client({ vsn });
            await client.setAuth('garbage');
            await assertClientJoinError(client.channel(unique('garbage-js')), 'MalformedJWT: The token provided is not a valid JWT');
        });

        test('join with a claimless access_token → InvalidJWTToken: Fields `role` and `exp` are required', async () => {
            const noRole = sign({ exp: Math.floor(Date.now() / 1000) + 3600 }, { secret: SELF_HOST_SECRET });
            const c = await raw(vsn);
            await assertJoinError(c, `realtime:${unique('claimless')}`, 'InvalidJWTToken: Fields `role` and `exp` are required in JWT', { accessToken: noRole });
            const client = pool.client({ vsn });
            await client.setAuth(noRole);
            await assertClientJoinError(client.channel(unique('claimless-js')), 'InvalidJWTToken: Fields `role` and `exp` are required in JWT');
        });

        test('join with a wrongly signed access_token → JwtSignatureError', async () => {
            const c = await raw(vsn);
            await assertJoinError(c, `realtime:${unique('badsig')}`, 'JwtSignatureError: Failed to validate JWT signature',
                { accessToken: token('another-secret-0123456789abcdefghijklmn') });
        });

        test('join with RS256 and an unknown kid → JwtSignerError naming the kid', async () => {
            const c = await raw(vsn, { tenant: 'jwks', token: token(LIMITED_SECRET) });
            const tok = sign(claims(), { alg: 'RS256', key: keys.rsa.privateKey, kid: 'missing-kid' });
            await assertJoinError(c, `realtime:${unique('kid')}`,
                'JwtSignerError: Failed to generate JWT signer for key ID (kid) "missing-kid", check your JWT secret or JWKS configuration',
                { accessToken: tok });
        });

        test('an sb_ access_token falls back to the socket token', async () => {
            const c = await raw(vsn);
            const reply = await c.join(`realtime:${unique('sb')}`, { accessToken: 'sb_publishable_abc123' });
            assert.deepEqual(reply.payload, { status: 'ok', response: { postgres_changes: [] } });
            const client = pool.client({ vsn });
            await client.setAuth('sb_publishable_abc123');
            await joinChannel(client.channel(unique('sb-js')));
        });

        test('user_token wins over access_token', async () => {
            const c = await raw(vsn);
            await assertJoinError(c, `realtime:${unique('user-token')}`, 'MalformedJWT: The token provided is not a valid JWT',
                { accessToken: selfHostToken(), extra: { user_token: 'garbage' } });
        });

        test('the first failing check wins (TopicNameRequired, PrivateOnly before token errors)', async () => {
            const c = await raw(vsn);
            await assertJoinError(c, 'realtime:', 'TopicNameRequired: You must provide a topic name', { accessToken: 'garbage' });
            const p = await raw(vsn, { tenant: 'privonly', token: token(PRIVONLY_SECRET) });
            await assertJoinError(p, `realtime:${unique('order')}`, 'PrivateOnly: This project only allows private channels', { accessToken: 'garbage' });
            const l = await raw(vsn, { tenant: 'limited', token: token(LIMITED_SECRET) });
            assert.equal((await l.join(`realtime:${unique('first')}`)).payload.status, 'ok');
            await assertJoinError(l, `realtime:${unique('second')}`, 'ChannelRateLimitReached: Too many channels', { accessToken: 'garbage' });
        });

        test('a failed join sends only the error reply (no phx_close) and leaves the topic unjoined', async () => {
            const c = await raw(vsn);
            const topic = `realtime:${unique('failed')}`;
            const reply = await assertJoinError(c, topic, 'MalformedJWT: The token provided is not a valid JWT', { accessToken: 'garbage' });
            const ref = c.push(topic, 'broadcast', { type: 'broadcast', event: 'x', payload: {} }, { joinRef: reply.joinRef });
            assert.deepEqual((await c.reply(ref)).payload, { status: 'error', response: { reason: 'unmatched topic' } });
            assert.deepEqual(c.frames.items.filter((f) => f.event === 'phx_close'), []);
        });

        test('re-join of a joined topic with an expired token → phx_close of the old join and the join error', async () => {
            const c = await raw(vsn);
            const topic = `realtime:${unique('rejoin-bad')}`;
            const first = await c.join(topic);
            assert.equal(first.payload.status, 'ok');
            const mark = c.frames.mark();
            const reply = await c.join(topic, { accessToken: sign(expiredClaims(5), { secret: SELF_HOST_SECRET }) });
            assert.equal(reply.payload.status, 'error');
            assert.match(reply.payload.response.reason, /^InvalidJWTToken: Token has expired \d+ seconds ago$/);
            const close = c.frames.items.slice(mark).find((f) => f.event === 'phx_close');
            assert.ok(close, 'the previous join is closed');
            assert.equal(close.ref, first.joinRef);
        });

        test('realtime-js retries a failed join with backoff and reports CHANNEL_ERROR each time', async () => {
            const client = pool.client({ vsn });
            await client.setAuth('garbage');
            const ch = client.channel(unique('retry'));
            const statuses = subscribe(ch);
            await statuses.next((s) => s.status === 'CHANNEL_ERROR', 3000, 'first CHANNEL_ERROR');
            await statuses.next((s) => s.status === 'CHANNEL_ERROR', 3000, 'second CHANNEL_ERROR (rejoin after ~1 s)', 1);
            const errors = statuses.filter((s) => s.status === 'CHANNEL_ERROR');
            assert.ok(errors[1].at - errors[0].at >= 900, 'the client waits about 1 s before rejoining');
            assert.equal(errors[1].err.message, 'MalformedJWT: The token provided is not a valid JWT');
        });

        test('lenient join payload: string booleans, wrong types and missing config keys', async () => {
            const c = await raw(vsn);
            const topic = `realtime:${unique('lenient')}`;
            const ref = c.nextRef();
            c.push(topic, 'phx_join', {
                config: { broadcast: { self: 'TRUE', ack: 'true' }, presence: 42, private: 'false', postgres_changes: null, unknown: 1 },
                version: 'x',
            }, { ref, joinRef: ref });
            const reply = await c.reply(ref);
            assert.deepEqual(reply.payload, { status: 'ok', response: { postgres_changes: [] } });
            const bref = c.push(topic, 'broadcast', { type: 'broadcast', event: 'e', payload: { v: 1 } }, { joinRef: ref });
            assert.deepEqual((await c.reply(bref)).payload, { status: 'ok', response: {} }, 'ack "true" honoured');
            await c.frames.next((f) => f.event === 'broadcast' && f.payload.payload?.v === 1, 2000, 'self echo ("TRUE" honoured)');
        });

        test('replay on a public channel of a tenant without history → UnableToReplayMessages', async () => {
            const c = await raw(vsn, { tenant: 'nohistory', token: token(LIMITED_SECRET) });
            await assertJoinError(c, `realtime:${unique('replay')}`, 'UnableToReplayMessages: Replay is not allowed for public channels',
                { config: { broadcast: { replay: { since: Date.now() - 1000, limit: 5 } } } });
        });

        test('replay on a public channel with invalid params → UnableToReplayMessages', async () => {
            const c = await raw(vsn);
            await assertJoinError(c, `realtime:${unique('replay')}`, 'UnableToReplayMessages: Replay params are not valid',
                { config: { broadcast: { replay: { since: 'yesterday' } } } });
        });

    });
}
