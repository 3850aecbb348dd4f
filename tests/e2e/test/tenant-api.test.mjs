// Tenant management API (server-protocol §9.1, §1.6; upstream tenants-limits-metrics §1, §2, §3.4,
// §8): operator auth, CRUD on both control planes (embedded SQLite and PostgreSQL), the tenant
// JSON object, 422 shapes, secrets at rest, and the side effects seen by realtime-js clients
// ("Server requested disconnect" + close 1012 on credential changes, delete and reload; nothing on
// other changes; other tenants never touched).
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import { startServer, SELF_HOST_SECRET, SELF_HOST_TENANT, WORKERS } from '../lib/server.mjs';
import { token } from '../lib/jwt.mjs';
import { ClientPool, joinChannel } from '../lib/clients.mjs';
import { RawClient } from '../lib/raw.mjs';
import { rawHeartbeat } from '../lib/sentinel.mjs';
import { Recorder, upgradeRequest, waitFor } from '../lib/util.mjs';
import { adminApi, expiredOperatorToken, operatorToken, pgClusterScript, rawHttp, startPgCluster } from '../lib/admin.mjs';

const API_SECRET = SELF_HOST_SECRET; // startServer sets API_JWT_SECRET to it
const NEXT_SECRET = 'e2e-api-next-secret-0123456789abcdefghijklm';
const BYSTANDER = 'bystander';
const BYSTANDER_SECRET = 'bystander-tenant-secret-0123456789abcdefgh';
const BLOCKED = operatorToken(API_SECRET, { sub: 'blocked-operator' });
const REGION = 'e2e-region';
const NODE_NAME = 'e2e-node-1';
const DISCONNECT = { extension: 'system', status: 'ok', message: 'Server requested disconnect' };

const TENANT_KEYS = [
    'client_presence_window_ms', 'extensions', 'external_id', 'id', 'inserted_at', 'max_channels_per_client',
    'max_client_presence_events_per_window', 'max_concurrent_users', 'max_events_per_second', 'max_joins_per_second',
    'name', 'presence_enabled', 'private_only',
];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const NAIVE_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/;

let seq = 0;
const uniqueId = (prefix) => `${prefix}-${process.pid % 1000}-${++seq}`;
const secretFor = (id) => `jwt-secret-of-${id}-0123456789abcdefghijklmnopqrstuvwxyz`;

/** Plaintext settings of a postgres_cdc_rls extension; values chosen to be findable in files. */
function cdcSettings(id, extra = {}) {
    return {
        db_host: `db-host-${id}.example.internal`,
        db_port: '6543',
        db_name: `db-name-${id}`,
        db_user: `db-user-${id}`,
        db_password: `db-password-${id}`,
        region: 'us-east-1',
        ...extra,
    };
}

/** AES-128-ECB, PKCS#7, base64: upstream's legacy secret format (tenants-limits-metrics §4.3). */
function ecb(key, plaintext) {
    const cipher = crypto.createCipheriv('aes-128-ecb', Buffer.from(key), null);
    return Buffer.concat([cipher.update(Buffer.from(plaintext)), cipher.final()]).toString('base64');
}

function assertEmpty403(res, what) {
    assert.equal(res.status, 403, `${what}: status (body ${JSON.stringify(res.body)})`);
    assert.equal(res.body, '', `${what}: empty body`);
    assert.equal(res.headers['content-type'], undefined, `${what}: no content-type`);
}

function assertJson(res, status, body, what = '') {
    assert.equal(res.status, status, `${what} status; body ${res.body}`);
    assert.match(String(res.headers['content-type']), /^application\/json/, `${what} content-type`);
    if (body !== undefined) assert.deepEqual(res.json, body, what);
}

function assertNoContent(res, what = '') {
    assert.equal(res.status, 204, `${what} status; body ${res.body}`);
    assert.equal(res.body, '', `${what} empty body`);
}

/** Every file under dir, concatenated (SQLite database, WAL, journal, keys). */
function readTree(dir) {
    const out = [];
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, entry.name);
        if (entry.isDirectory()) out.push(readTree(p));
        else if (entry.isFile()) out.push(fs.readFileSync(p));
    }
    return Buffer.concat(out);
}

// ---------------------------------------------------------------------------------------------
// The main server: embedded SQLite control plane.

let server;
let api;
let pool;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rt-e2e-tenant-api-'));

before(async () => {
    server = await startServer({
        tenants: [{ external_id: BYSTANDER, jwt_secret: BYSTANDER_SECRET }],
        env: {
            DATA_DIR: dataDir,
            API_JWT_SECRET_NEXT: NEXT_SECRET,
            API_TOKEN_BLOCKLIST: ` not-a-token , ${BLOCKED} `,
            REGION,
            NODE_NAME,
        },
    });
    api = adminApi(server, { token: operatorToken(API_SECRET) });
    pool = new ClientPool(server);
});
afterEach(() => pool.cleanup());
after(async () => {
    const result = await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
    assert.equal(result.crashedBeforeStop, null, `server exited during the tests:\n${result.stderr}`);
});

/** A tenant usable by realtime-js right away (no tenant database; upstream needs migrations_ran ≥ 81 then). */
async function createTenant(prefix = 'rt', extra = {}) {
    const id = uniqueId(prefix);
    const secret = secretFor(id);
    const res = await api.create({ external_id: id, jwt_secret: secret, extensions: [], migrations_ran: 81, ...extra });
    assertJson(res, 201, undefined, `create ${id}`);
    return { id, secret, tenant: res.json.data };
}

/**
 * A realtime-js client (vsn 2.0.0) of `tenant` joined on `channels` channels (broadcast self on),
 * recording system messages, broadcasts and the socket close in one ordered log.
 */
async function member(tenant, secret, { channels = 2, vsn = '2.0.0' } = {}) {
    const client = pool.client({ vsn, tenant, token: token(secret) });
    const log = new Recorder(`events of a ${tenant} client`);
    client.socketAdapter.getSocket().onClose((event) => log.push({ kind: 'close', code: event?.code }));
    const chans = [];
    for (let i = 0; i < channels; ++i) {
        const sub = uniqueId('room');
        const ch = client.channel(sub, { config: { broadcast: { self: true } } });
        ch.on('system', {}, (payload) => log.push({ kind: 'system', topic: ch.topic, payload }));
        ch.on('broadcast', { event: '*' }, (msg) => log.push({ kind: 'broadcast', topic: ch.topic, msg }));
        await joinChannel(ch);
        chans.push(ch);
    }
    return { client, log, chans };
}

/** Sends a broadcast on each channel and waits for its own echo (broadcast self). */
async function assertAlive(m, what) {
    for (const ch of m.chans) {
        const n = crypto.randomUUID();
        const status = await ch.send({ type: 'broadcast', event: 'alive', payload: { n } });
        assert.equal(status, 'ok', `${what}: send on ${ch.topic}`);
        await m.log.next((e) => e.kind === 'broadcast' && e.topic === ch.topic && e.msg.payload?.n === n, 2000,
            `${what}: echo on ${ch.topic}`);
        assert.equal(ch.state, 'joined', `${what}: ${ch.topic} still joined`);
    }
    assert.deepEqual(m.log.filter((e) => e.kind !== 'broadcast'), [], `${what}: no system message, no close`);
}

/** A raw vsn 1.0.0 socket of `tenant` joined on one topic (exact frames and the close code). */
async function rawMember(tenant, secret) {
    const raw = pool.track(await RawClient.connect(server, { vsn: '1.0.0', token: token(secret), host: server.hostFor(tenant) }));
    const topic = `realtime:${uniqueId('raw')}`;
    const reply = await raw.join(topic);
    assert.equal(reply.payload.status, 'ok', JSON.stringify(reply.payload));
    return { raw, topic };
}

/**
 * Sentinel for "a tenant change disconnected nobody (else)". The server posts a change's
 * disconnects to every I/O loop before it answers the API request, and each loop runs its posts in
 * order. So a later disconnecting change of a fresh sentinel tenant that has a socket on every loop
 * (the listener hands connections to the loops in turn: WORKERS connections in a row cover them
 * all) is handled after it on each loop; once all its sockets are closed, every loop has handled
 * the change under test. Callers then check their sockets with a round trip on each.
 */
async function tenantChangeSentinel() {
    const s = await createTenant('sentinel');
    const sockets = [];
    for (let i = 0; i < WORKERS; ++i) sockets.push(await rawMember(s.id, s.secret));
    assertJson(await api.patch(s.id, { jwt_secret: `${s.secret}-rotated` }), 200, undefined, 'the sentinel change');
    for (const { raw } of sockets) {
        await waitFor(() => raw.closed, 3000, 'a socket of the sentinel tenant closed');
        assert.equal(raw.closed.code, 1012, 'the sentinel change disconnected its tenant');
    }
}

/** assertAlive for a rawMember: a heartbeat round trip, no system message, not closed. */
async function assertRawAlive(r, what) {
    await rawHeartbeat(r.raw);
    assert.equal(r.raw.closed, null, `${what}: raw socket still open`);
    assert.deepEqual(r.raw.frames.filter((f) => f.event === 'system'), [], `${what}: no system message on the raw socket`);
}

/** Asserts the §1.6 sequence on a realtime-js member and a raw v1 member. */
async function assertDisconnected(m, r, what, timeoutMs = 3000) {
    const close = await m.log.next((e) => e.kind === 'close', timeoutMs, `${what}: realtime-js socket close`);
    assert.equal(close.code, 1012, `${what}: realtime-js close code`);
    const before = m.log.items.slice(0, m.log.items.indexOf(close));
    for (const ch of m.chans) {
        const systems = before.filter((e) => e.kind === 'system' && e.topic === ch.topic);
        assert.equal(systems.length, 1, `${what}: one system message on ${ch.topic} before the close; log ${JSON.stringify(m.log.items)}`);
        assert.deepEqual(systems[0].payload, DISCONNECT, `${what}: system payload on ${ch.topic}`);
        // Fastlane: join_ref and ref null, no channel key (vsn 2.0.0 array on the wire).
        const frames = m.client.wire.filter((f) => f.dir === 'in' && typeof f.data === 'string' && f.data.includes('"system"'))
            .map((f) => JSON.parse(f.data)).filter((a) => a[2] === ch.topic && a[3] === 'system');
        assert.deepEqual(frames, [[null, null, ch.topic, 'system', DISCONNECT]], `${what}: wire frame on ${ch.topic}`);
    }
    await waitFor(() => r.raw.closed, timeoutMs, `${what}: raw socket close`);
    assert.equal(r.raw.closed.code, 1012, `${what}: raw close code`);
    const items = r.raw.frames.items;
    const closeAt = items.findIndex((f) => f.closed);
    const sys = items.findIndex((f) => f.event === 'system');
    assert.ok(sys >= 0 && sys < closeAt, `${what}: raw system frame before the close; frames ${JSON.stringify(items)}`);
    assert.deepEqual(JSON.parse(items[sys].text), { topic: r.topic, event: 'system', payload: DISCONNECT, ref: null },
        `${what}: exact vsn 1.0.0 frame`);
}

// ---------------------------------------------------------------------------------------------

describe('operator auth (upstream §1)', () => {
    test('403 with an empty body and no content-type: no header, wrong scheme, garbage, wrong secret, expired, blocklisted', async () => {
        const cases = {
            'no authorization header': {},
            'lower-case bearer': { Authorization: `bearer ${operatorToken(API_SECRET)}` },
            'Basic scheme': { Authorization: `Basic ${Buffer.from('a:b').toString('base64')}` },
            'Bearer without a space': { Authorization: `Bearer${operatorToken(API_SECRET)}` },
            'garbage token': { Authorization: 'Bearer not.a.jwt' },
            'empty token': { Authorization: 'Bearer ' },
            'wrong secret': { Authorization: `Bearer ${operatorToken('some-other-secret-0123456789abcdefghijklmno')}` },
            'expired': { Authorization: `Bearer ${expiredOperatorToken(API_SECRET, 30)}` },
            'expired, signed with the next secret': { Authorization: `Bearer ${expiredOperatorToken(NEXT_SECRET, 30)}` },
            'blocklisted': { Authorization: `Bearer ${BLOCKED}` },
            'non-numeric iat': { Authorization: `Bearer ${operatorToken(API_SECRET, { iat: 'yesterday' })}` },
            'a socket token (x-api-key / apikey) is not operator auth': { apikey: operatorToken(API_SECRET), 'x-api-key': operatorToken(API_SECRET) },
        };
        for (const [what, headers] of Object.entries(cases)) {
            assertEmpty403(await api.list({ headers }), `GET /api/tenants, ${what}`);
        }
        // Every route is guarded, also the mutating ones; nothing happens.
        const headers = {};
        assertEmpty403(await api.show(SELF_HOST_TENANT, { headers }), 'show');
        assertEmpty403(await api.create({ external_id: 'x-unauth', jwt_secret: 's', extensions: [] }, { headers }), 'create');
        assertEmpty403(await api.put(SELF_HOST_TENANT, { name: 'hacked' }, { headers }), 'put');
        assertEmpty403(await api.patch(SELF_HOST_TENANT, { name: 'hacked' }, { headers }), 'patch');
        assertEmpty403(await api.del(SELF_HOST_TENANT, { headers }), 'delete');
        assertEmpty403(await api.reload(SELF_HOST_TENANT, { headers }), 'reload');
        assertEmpty403(await api.shutdown(SELF_HOST_TENANT, { headers }), 'shutdown');
        assertEmpty403(await api.health(SELF_HOST_TENANT, { headers }), 'health');
        const still = await api.show(SELF_HOST_TENANT);
        assertJson(still, 200);
        assert.equal(still.json.data.name, SELF_HOST_TENANT);
        assertJson(await api.show('x-unauth'), 404, { message: 'not found' });
    });

    test('a client token signed with API_JWT_SECRET (the self-host anon key, a user token, no role) is refused on every operator endpoint, both prefixes', async () => {
        const now = Math.floor(Date.now() / 1000);
        const clientTokens = {
            'the self-host anon key': token(API_SECRET, { role: 'anon', exp: now + 3600 }),
            'an authenticated user': token(API_SECRET, { role: 'authenticated', sub: 'u-1', exp: now + 3600 }),
            'no role': operatorToken(API_SECRET, { role: undefined }),
            'a role that only looks like one': operatorToken(API_SECRET, { role: 'Service_Role' }),
            'a non-string role': operatorToken(API_SECRET, { role: ['service_role'] }),
            'signed with API_JWT_SECRET_NEXT, anon': operatorToken(NEXT_SECRET, { role: 'anon' }),
        };
        const routes = [
            ['GET', '/api/tenants'], ['POST', '/api/tenants'], ['GET', `/api/tenants/${SELF_HOST_TENANT}`],
            ['PATCH', `/api/tenants/${SELF_HOST_TENANT}`], ['DELETE', `/api/tenants/${SELF_HOST_TENANT}`],
            ['POST', `/api/tenants/${SELF_HOST_TENANT}/reload`], ['GET', '/api/cluster'],
            ['GET', '/api/cluster/config'], ['PUT', '/api/cluster/config/region_mapping'],
            ['GET', '/api/admin/snapshot'],
        ];
        for (const [what, tok] of Object.entries(clientTokens)) {
            for (const prefix of ['', '/realtime/v1']) {
                for (const [method, p] of routes) {
                    const body = method === 'GET' || method === 'DELETE' ? undefined : { tenant: { name: 'hacked' }, value: {} };
                    const res = await api.request(method, `${prefix}${p}`, { headers: { Authorization: `Bearer ${tok}` }, body });
                    assertEmpty403(res, `${method} ${prefix}${p}, ${what}`);
                }
                for (const headers of [{ Authorization: `Bearer ${tok}` }, {}]) {
                    const q = Object.keys(headers).length ? '' : `&apikey=${tok}`;
                    const feed = await upgradeRequest(server, { path: `${prefix}/api/admin/live/websocket?vsn=1.0.0${q}`, headers });
                    assert.equal(feed.status, 403, `admin live feed ${prefix}, ${what}`);
                }
            }
        }
        // Nothing was changed, and the anon key still is what it is for: a client's connection.
        const still = await api.show(SELF_HOST_TENANT);
        assertJson(still, 200);
        assert.equal(still.json.data.name, SELF_HOST_TENANT);
        const feed = await upgradeRequest(server, { path: `/api/admin/live/websocket?vsn=1.0.0&apikey=${operatorToken(API_SECRET)}` });
        assert.equal(feed.status, 101, 'an operator token opens the live feed');
        const anon = clientTokens['the self-host anon key'];
        const client = await upgradeRequest(server, { path: `/socket/websocket?vsn=2.0.0&apikey=${anon}` });
        assert.equal(client.status, 101, 'the anon key still opens a client socket');
    });

    test('exactly one authorization header: two valid Bearer headers → 403', async () => {
        const bearer = `authorization: Bearer ${operatorToken(API_SECRET)}`;
        const one = await rawHttp(server, { path: '/api/tenants', headerLines: [bearer] });
        assert.equal(one.status, 200, one.raw.slice(0, 300));
        const two = await rawHttp(server, { path: '/api/tenants', headerLines: [bearer, bearer] });
        assert.equal(two.status, 403, two.raw.slice(0, 300));
        assert.equal(two.body, '');
        assert.equal(two.headers['content-type'], undefined);
    });

    test('accepted: HS256/384/512 with API_JWT_SECRET, API_JWT_SECRET_NEXT, an operator role and no exp, a future exp, whitespace inside', async () => {
        const now = Math.floor(Date.now() / 1000);
        const tokens = {
            'HS256, only the role': operatorToken(API_SECRET, {}),
            'the other default operator role': operatorToken(API_SECRET, { role: 'supabase_admin' }),
            HS384: operatorToken(API_SECRET, { sub: 'op' }, 'HS384'),
            HS512: operatorToken(API_SECRET, { sub: 'op' }, 'HS512'),
            'API_JWT_SECRET_NEXT': operatorToken(NEXT_SECRET, {}),
            'API_JWT_SECRET_NEXT, HS512': operatorToken(NEXT_SECRET, { iat: now }, 'HS512'),
            'future exp': operatorToken(API_SECRET, { exp: now + 60 }),
            'role and exp': operatorToken(API_SECRET, { role: 'service_role', exp: now + 60, iat: now }),
            'same claims as the blocklisted token but another token': operatorToken(API_SECRET, { sub: 'blocked-operator', iat: now }),
        };
        for (const [what, tok] of Object.entries(tokens)) {
            const res = await api.list({ headers: { Authorization: `Bearer ${tok}` } });
            assertJson(res, 200, undefined, what);
            assert.ok(Array.isArray(res.json.data), what);
        }
        const t = operatorToken(API_SECRET);
        const spaced = await api.list({ headers: { Authorization: `Bearer ${t.slice(0, 20)} \t${t.slice(20)}` } });
        assertJson(spaced, 200, undefined, 'whitespace removed from the token');
    });

    test('406 when Accept does not allow JSON, before the auth check; */* and application/json are fine', async () => {
        for (const headers of [{}, { Authorization: `Bearer ${operatorToken(API_SECRET)}` }]) {
            const res = await api.list({ headers: { ...headers, Accept: 'text/html' } });
            assert.equal(res.status, 406, `Accept text/html (${Object.keys(headers).length ? 'with' : 'without'} auth): ${res.body}`);
        }
        for (const accept of ['application/json', '*/*', 'text/html, application/json;q=0.9', 'application/*']) {
            assertJson(await api.list({ extraHeaders: { Accept: accept } }), 200, undefined, `Accept ${accept}`);
        }
    });

    test('HEAD behaves like GET without a body (upstream Plug.Head; RFC 9110 §9.3.2)',
        async () => {
            const auth = `authorization: Bearer ${operatorToken(API_SECRET)}`;
            const get = await rawHttp(server, { path: `/api/tenants/${SELF_HOST_TENANT}`, headerLines: [auth] });
            const head = await rawHttp(server, { method: 'HEAD', path: `/api/tenants/${SELF_HOST_TENANT}`, headerLines: [auth] });
            assert.equal(head.status, 200);
            assert.deepEqual(head.headers['content-type'], get.headers['content-type']);
            assert.equal(head.body, '', 'no content after the HEAD response headers');
        });

    test('the routes also answer under /realtime/v1', async () => {
        const prefixed = adminApi(server, { token: operatorToken(API_SECRET), prefix: '/realtime/v1' });
        const list = await prefixed.list();
        assertJson(list, 200);
        assert.ok(list.json.data.some((t) => t.external_id === SELF_HOST_TENANT));
        assertJson(await prefixed.show(SELF_HOST_TENANT), 200);
        assertEmpty403(await prefixed.list({ headers: {} }), 'prefixed, no auth');
        const { id } = await createTenant('prefixed');
        assertJson(await prefixed.patch(id, { max_concurrent_users: 5 }), 200);
        assertJson(await prefixed.health(id), 200);
        assertNoContent(await prefixed.reload(id), 'prefixed reload');
        assertNoContent(await prefixed.del(id), 'prefixed delete');
        assertJson(await prefixed.show(id), 404, { message: 'not found' });
    });
});

// ---------------------------------------------------------------------------------------------
// CRUD, run on both control planes. `ctx` gives the api and a check of the secrets at rest.

function crudTests(ctx, prefix) {
    test('POST creates: 201, location /api/tenants/<uuid>, the exact tenant object, name forced to external_id', async () => {
        const id = uniqueId(prefix);
        const secret = secretFor(id);
        const settings = cdcSettings(id, { ssl_enforced: false, postgres_changes_pool: 2 });
        const res = await ctx.api().create({
            external_id: id, name: 'a name that is ignored on create', jwt_secret: secret, max_concurrent_users: 7,
            extensions: [{ type: 'postgres_cdc_rls', settings }],
        });
        assertJson(res, 201, undefined, 'create');
        assert.match(res.headers['content-type'], /^application\/json; charset=utf-8$/i);
        const data = res.json.data;
        assert.deepEqual(Object.keys(res.json), ['data']);
        assert.deepEqual(Object.keys(data).sort(), TENANT_KEYS, 'tenant keys (no jwt_secret, jwt_jwks, suspend, …)');
        assert.match(data.id, UUID);
        assert.equal(res.headers.location, `/api/tenants/${data.id}`);
        assert.equal(data.external_id, id);
        assert.equal(data.name, id, 'name is forced to external_id on create');
        assert.equal(data.max_concurrent_users, 7);
        assert.equal(data.max_channels_per_client, 100);
        assert.equal(data.max_events_per_second, 100);
        assert.equal(data.max_joins_per_second, 100);
        assert.equal(data.private_only, false);
        assert.equal(data.presence_enabled, false);
        assert.equal(data.max_client_presence_events_per_window, null);
        assert.equal(data.client_presence_window_ms, null);
        assert.match(data.inserted_at, NAIVE_UTC);
        assert.ok(Math.abs(Date.parse(`${data.inserted_at}Z`) - Date.now()) < 120_000, `inserted_at ${data.inserted_at} is now (UTC)`);

        assert.equal(data.extensions.length, 1);
        const ext = data.extensions[0];
        assert.deepEqual(Object.keys(ext), ['type', 'inserted_at', 'updated_at', 'settings'], 'extension keys in upstream order');
        assert.equal(ext.type, 'postgres_cdc_rls');
        assert.match(ext.inserted_at, NAIVE_UTC);
        assert.match(ext.updated_at, NAIVE_UTC);
        const s = ext.settings;
        assert.equal('db_password' in s, false, 'db_password is never returned');
        for (const key of ['db_host', 'db_port', 'db_name', 'db_user']) {
            assert.equal(typeof s[key], 'string', key);
            assert.notEqual(s[key], settings[key], `${key} is returned as ciphertext, not plaintext`);
            assert.ok(!s[key].includes(settings[key]), `${key} ciphertext does not contain the plaintext`);
            assert.match(s[key], /^(g1:)?[A-Za-z0-9+/]+={0,2}$/, `${key} looks like base64 ciphertext`);
        }
        assert.equal(s.region, 'us-east-1');
        assert.equal(s.ssl_enforced, false);
        assert.equal(s.publication, 'supabase_realtime');
        assert.equal(s.slot_name, 'supabase_realtime_replication_slot');
        assert.equal(s.poll_interval_ms, 100);
        assert.equal(s.poll_max_changes, 100);
        assert.equal(s.poll_max_record_bytes, 1048576);
        assert.equal(s.subcriber_pool_size, 2, 'postgres_changes_pool is stored as subcriber_pool_size');
        assert.equal('postgres_changes_pool' in s, false);
        assert.deepEqual(Object.keys(s), Object.keys(s).slice().sort(), 'settings keys sorted');
        assert.equal(JSON.stringify(res.json).includes(secret), false, 'the jwt_secret appears nowhere');
        assert.equal(JSON.stringify(res.json).includes(settings.db_password), false, 'the db_password appears nowhere');

        const shown = await ctx.api().show(id);
        assertJson(shown, 200, { data }, 'show returns the same object');
        await ctx.assertEncryptedAtRest(id, secret, settings, ext.settings);
    });

    test('POST on an existing external_id updates (200 + location); PUT on a new id creates (201) with the path id as external_id and name', async () => {
        const id = uniqueId(prefix);
        const first = await ctx.api().create({ external_id: id, jwt_secret: secretFor(id), extensions: [], migrations_ran: 81 });
        assertJson(first, 201);
        const again = await ctx.api().create({ external_id: id, name: 'renamed by post', max_channels_per_client: 3 });
        assertJson(again, 200, undefined, 'second POST');
        assert.equal(again.headers.location, `/api/tenants/${first.json.data.id}`);
        assert.equal(again.json.data.id, first.json.data.id);
        assert.equal(again.json.data.name, 'renamed by post', 'the name applies on update');
        assert.equal(again.json.data.max_channels_per_client, 3);
        assert.equal(again.json.data.inserted_at, first.json.data.inserted_at);

        const putId = uniqueId(prefix);
        const put = await ctx.api().put(putId, {
            external_id: 'body-external-id-is-ignored', name: 'ignored', jwt_secret: secretFor(putId), extensions: [], migrations_ran: 81,
        });
        assertJson(put, 201, undefined, 'PUT create');
        assert.equal(put.json.data.external_id, putId);
        assert.equal(put.json.data.name, putId);
        assert.equal(put.headers.location, `/api/tenants/${put.json.data.id}`);
        assertJson(await ctx.api().show('body-external-id-is-ignored'), 404, { message: 'not found' });
        const patchId = uniqueId(prefix);
        const patchCreate = await ctx.api().patch(patchId, { jwt_secret: secretFor(patchId), extensions: [], migrations_ran: 81 });
        assertJson(patchCreate, 201, undefined, 'PATCH create');
        assert.equal(patchCreate.json.data.name, patchId);
    });

    test('PUT/PATCH update → 200 + location; omitted fields (including extensions) are kept', async () => {
        const id = uniqueId(prefix);
        const created = await ctx.api().create({
            external_id: id, jwt_secret: secretFor(id), max_concurrent_users: 11, extensions: [{ type: 'postgres', settings: cdcSettings(id) }],
        });
        assertJson(created, 201);
        const base = created.json.data;
        assert.equal(base.extensions[0].type, 'postgres_cdc_rls', '"postgres" is an alias of postgres_cdc_rls');

        const put = await ctx.api().put(id, { name: 'new name', max_channels_per_client: 4 });
        assertJson(put, 200, undefined, 'PUT');
        assert.equal(put.headers.location, `/api/tenants/${base.id}`);
        assert.deepEqual(put.json.data, { ...base, name: 'new name', max_channels_per_client: 4 });

        const patch = await ctx.api().patch(id, { max_concurrent_users: '12', presence_enabled: true, client_presence_window_ms: 5000 });
        assertJson(patch, 200, undefined, 'PATCH');
        assert.equal(patch.headers.location, `/api/tenants/${base.id}`);
        assert.deepEqual(patch.json.data, {
            ...base, name: 'new name', max_channels_per_client: 4, max_concurrent_users: 12, presence_enabled: true, client_presence_window_ms: 5000,
        }, 'only the given fields changed; extensions (ciphertexts, timestamps) kept');
        assertJson(await ctx.api().show(id), 200, { data: patch.json.data }, 'show after PATCH');

        // extensions, when given, replace the whole list.
        const replaced = await ctx.api().patch(id, { extensions: [{ type: 'postgres_cdc_rls', settings: cdcSettings(id, { region: 'eu-west-2' }) }] });
        assertJson(replaced, 200, undefined, 'PATCH extensions');
        assert.equal(replaced.json.data.extensions.length, 1);
        assert.equal(replaced.json.data.extensions[0].settings.region, 'eu-west-2');
        assert.equal(replaced.json.data.max_concurrent_users, 12);
    });

    test('GET /api/tenants lists every tenant with the same objects as show', async () => {
        const { id } = await ctx.createTenant(prefix);
        const list = await ctx.api().list();
        assertJson(list, 200);
        assert.deepEqual(Object.keys(list.json), ['data']);
        const mine = list.json.data.filter((t) => t.external_id === id);
        assert.equal(mine.length, 1);
        assert.deepEqual(mine[0], (await ctx.api().show(id)).json.data);
        assert.ok(list.json.data.some((t) => t.external_id === SELF_HOST_TENANT), 'the self-host tenant is listed');
        for (const t of list.json.data) assert.deepEqual(Object.keys(t).sort(), TENANT_KEYS, `keys of ${t.external_id}`);
    });

    test('404 {"message":"not found"} for show, reload, shutdown and health of an unknown tenant', async () => {
        const id = uniqueId('unknown');
        assertJson(await ctx.api().show(id), 404, { message: 'not found' }, 'show');
        assertJson(await ctx.api().reload(id), 404, { message: 'not found' }, 'reload');
        assertJson(await ctx.api().shutdown(id), 404, { message: 'not found' }, 'shutdown');
        assertJson(await ctx.api().health(id), 404, { message: 'not found' }, 'health');
    });

    test('422 shapes (upstream §3.4) and nothing is written', async () => {
        const id = uniqueId(prefix);
        const a = ctx.api();
        assertJson(await a.create({ jwt_secret: 's', extensions: [] }), 422, { errors: { external_id: ["can't be blank"] } }, 'missing external_id');
        assertJson(await a.create({ external_id: '  ', jwt_secret: 's', extensions: [] }), 422, { errors: { external_id: ["can't be blank"] } }, 'blank external_id');
        assertJson(await a.create({ external_id: id, jwt_secret: 's', extensions: [], max_concurrent_users: 1.5, private_only: 'maybe' }), 422,
            { errors: { max_concurrent_users: ['is invalid'], private_only: ['is invalid'] } }, 'bad integer and boolean');
        assertJson(await a.create({ external_id: id, jwt_secret: 's', extensions: [], max_events_per_second: '1.5' }), 422,
            { errors: { max_events_per_second: ['is invalid'] } }, 'integer string with a fraction');
        assertJson(await a.create({ external_id: id, extensions: [], migrations_ran: 81 }), 422,
            { errors: { jwt_secret: ['either jwt_secret or jwt_jwks must be provided'] } }, 'neither jwt_secret nor jwt_jwks');
        assertJson(await a.create({ external_id: id, jwt_secret: 's', extensions: [{ type: 'postgres_cdc_rls', settings: {} }] }), 422,
            { errors: { extensions: [{ settings: ["db_password can't be blank", "db_user can't be blank", "db_name can't be blank", "db_port can't be blank", "db_host can't be blank", "region can't be blank"] }] } },
            'extension without its required settings');
        assertJson(await a.create({ external_id: id, jwt_secret: 's', extensions: [{ type: 'postgres_cdc_rls', settings: cdcSettings(id, { region: 5 }) }] }), 422,
            { errors: { extensions: [{ settings: ['region is invalid'] }] } }, 'non-string region');
        assertJson(await a.create({ external_id: id, jwt_secret: 's', extensions: [{ settings: cdcSettings(id) }] }), 422,
            { errors: { extensions: [{ type: ["can't be blank"] }] } }, 'extension without type');
        assertJson(await a.create({ external_id: id, jwt_secret: 's', extensions: [{}] }), 422,
            { errors: { extensions: [{ type: ["can't be blank"], settings: ["can't be blank"] }] } }, 'empty extension');
        const ext = { type: 'postgres_cdc_rls', settings: cdcSettings(id) };
        assertJson(await a.create({ external_id: id, jwt_secret: 's', extensions: [ext, ext] }), 422,
            { errors: { extensions: [{}, { tenant_external_id: ['has already been taken'] }] } }, 'two extensions of one type');
        assertJson(await a.create({ external_id: id, name: 5, jwt_secret: 's', extensions: [] }), 422, { errors: { name: ['is invalid'] } }, 'numeric name');
        assertJson(await a.create({ external_id: id, jwt_secret: 's', extensions: [], broadcast_adapter: 'carrier-pigeon' }), 422,
            { errors: { broadcast_adapter: ['is invalid'] } }, 'unknown broadcast_adapter');
        assertJson(await a.show(id), 404, { message: 'not found' }, 'no tenant was created by a 422');

        const { id: existing } = await ctx.createTenant(prefix);
        assertJson(await a.patch(existing, { max_joins_per_second: 'many' }), 422, { errors: { max_joins_per_second: ['is invalid'] } }, 'update with a bad integer');
        assertJson(await a.patch(existing, { suspend: 'perhaps' }), 422, { errors: { suspend: ['is invalid'] } }, 'update with a bad boolean');
        for (const cleared of [null, '']) {
            assertJson(await a.patch(existing, { jwt_secret: cleared }), 422,
                { errors: { jwt_secret: ['either jwt_secret or jwt_jwks must be provided'] } }, `jwt_secret ${JSON.stringify(cleared)} without jwt_jwks`);
        }
        assertJson(await a.show(existing), 200, undefined);
    });

    test('a JSON float is not an integer: 1.0 and 1e2 → 422 "is invalid" (Ecto integer cast)',
        async () => {
            const id = uniqueId(prefix);
            for (const number of ['1.0', '1e2']) {
                const res = await ctx.api().request('POST', '/api/tenants', {
                    body: `{"tenant":{"external_id":"${id}","jwt_secret":"s","extensions":[],"max_concurrent_users":${number}}}`,
                    extraHeaders: { 'Content-Type': 'application/json' },
                });
                assertJson(res, 422, { errors: { max_concurrent_users: ['is invalid'] } }, `max_concurrent_users ${number}`);
            }
        });

    test('422 on the update path lists the replaced extension first: [{}, {"settings":[…]}]',
        async () => {
        const id = uniqueId(prefix);
        assertJson(await ctx.api().create({ external_id: id, jwt_secret: secretFor(id), extensions: [{ type: 'postgres_cdc_rls', settings: cdcSettings(id) }] }), 201);
        const res = await ctx.api().put(id, { extensions: [{ type: 'postgres_cdc_rls', settings: { region: 'us-east-1' } }] });
        assertJson(res, 422, {
            errors: { extensions: [{}, { settings: ["db_password can't be blank", "db_user can't be blank", "db_name can't be blank", "db_port can't be blank", "db_host can't be blank"] }] },
        });
        assert.equal((await ctx.api().show(id)).json.data.extensions[0].settings.region, 'us-east-1');
    });

    test('400 for a body without a "tenant" object', async () => {
        const a = ctx.api();
        const { id } = await ctx.createTenant(prefix);
        for (const [what, body] of [['{}', {}], ['tenant is a string', { tenant: 'x' }], ['an array', [1]], ['other key', { external_id: id }]]) {
            const post = await a.request('POST', '/api/tenants', { body });
            assert.equal(post.status, 400, `POST ${what}: ${post.body}`);
            const put = await a.request('PUT', `/api/tenants/${id}`, { body });
            assert.equal(put.status, 400, `PUT ${what}: ${put.body}`);
        }
        const res = await a.request('POST', '/api/tenants', { body: {} });
        assertJson(res, 400, 'Bad Request', 'JSON string of the phrase');
    });

    test('DELETE → 204 (empty), then show 404 and the tenant is gone from the list; DELETE again → 204', async () => {
        const { id } = await ctx.createTenant(prefix);
        const del = await ctx.api().del(id);
        assertNoContent(del, 'delete');
        assert.equal(del.headers['content-type'], undefined);
        assertJson(await ctx.api().show(id), 404, { message: 'not found' });
        assert.equal((await ctx.api().list()).json.data.some((t) => t.external_id === id), false);
        assertNoContent(await ctx.api().del(id), 'second delete');
        assertNoContent(await ctx.api().del(uniqueId('never-existed')), 'delete of an unknown tenant');
    });

    test('reload and shutdown of an existing tenant → 204 and it stays', async () => {
        const { id } = await ctx.createTenant(prefix);
        assertNoContent(await ctx.api().reload(id), 'reload');
        assertNoContent(await ctx.api().shutdown(id), 'shutdown');
        assertJson(await ctx.api().show(id), 200);
    });
}

describe('CRUD on the embedded (SQLite) control plane', () => {
    crudTests({
        api: () => api,
        createTenant: (p) => createTenant(p),
        async assertEncryptedAtRest(id, secret, settings) {
            // The key lives in DATA_DIR as well, but no file there may hold a secret in plain text.
            const bytes = readTree(dataDir);
            assert.ok(bytes.includes(Buffer.from(id)), 'the tenant is in DATA_DIR (sanity check of the scan)');
            for (const [what, plain] of [['jwt_secret', secret], ...['db_host', 'db_name', 'db_user', 'db_password'].map((k) => [k, settings[k]])]) {
                assert.equal(bytes.includes(Buffer.from(plain)), false, `${what} is stored in plain text under DATA_DIR`);
            }
        },
    }, 'sq');
});

// ---------------------------------------------------------------------------------------------

describe('a tenant created through the API is served at once', () => {
    test('realtime-js connects (Host), joins and round-trips a broadcast; after DELETE new connections get 404 Tenant not found', async () => {
        const { id, secret } = await createTenant('live');
        const m = await member(id, secret);
        await assertAlive(m, 'new tenant');
        const r = await rawMember(id, secret);
        assertNoContent(await api.del(id), 'delete');
        await assertDisconnected(m, r, 'delete');
        const refused = await upgradeRequest(server, { host: server.hostFor(id), path: `/realtime/v1/websocket?apikey=${token(secret)}&vsn=2.0.0` });
        assert.equal(refused.status, 404);
        assert.deepEqual(refused.json, { error: 'Tenant not found' });

        // realtime-js sees the refusal as a failed connection: the channel never joins.
        const late = pool.client({ tenant: id, token: token(secret) });
        const closes = new Recorder('late closes');
        late.socketAdapter.getSocket().onClose((e) => closes.push(e?.code));
        const ch = late.channel(uniqueId('late'));
        const statuses = new Recorder('late statuses');
        ch.subscribe((status) => statuses.push(status));
        await closes.next(() => true, 3000, 'the refused socket closing');
        assert.notEqual(ch.state, 'joined');
        assert.equal(statuses.filter((s) => s === 'SUBSCRIBED').length, 0);
    });

    test('a tenant re-created after DELETE is served with its new secret', async () => {
        const { id, secret } = await createTenant('again');
        assertNoContent(await api.del(id));
        const secret2 = `${secret}-second-life`;
        assertJson(await api.create({ external_id: id, jwt_secret: secret2, extensions: [], migrations_ran: 81 }), 201);
        const old = await upgradeRequest(server, { host: server.hostFor(id), path: `/realtime/v1/websocket?apikey=${token(secret)}&vsn=2.0.0` });
        assert.equal(old.status, 401, old.body);
        await assertAlive(await member(id, secret2, { channels: 1 }), 're-created tenant');
    });
});

describe('tenant changes and sockets (spec §1.6, upstream §8)', () => {
    const jwks = { keys: [{ kty: 'oct', kid: 'e2e-oct', k: Buffer.from('a jwks secret for the e2e tests 0123456789').toString('base64url') }] };
    const disconnecting = [
        ['a new jwt_secret', (t) => api.patch(t.id, { jwt_secret: `${t.secret}-rotated` }), 200],
        ['suspend: true', (t) => api.patch(t.id, { suspend: true }), 200],
        ['private_only: true', (t) => api.put(t.id, { private_only: true }), 200],
        ['a new jwt_jwks', (t) => api.patch(t.id, { jwt_jwks: jwks }), 200],
        ['DELETE', (t) => api.del(t.id), 204],
        ['POST …/reload', (t) => api.reload(t.id), 204],
    ];
    for (const [what, change, status] of disconnecting) {
        test(`${what} → "Server requested disconnect" on every joined channel, then close 1012; other tenants untouched`, async () => {
            const t = await createTenant('dc');
            const m = await member(t.id, t.secret, { channels: 2 });
            const r = await rawMember(t.id, t.secret);
            const bystander = await member(BYSTANDER, BYSTANDER_SECRET, { channels: 1 });
            const selfHost = await member(SELF_HOST_TENANT, SELF_HOST_SECRET, { channels: 1 });
            const res = await change(t);
            assert.equal(res.status, status, res.body);
            await assertDisconnected(m, r, what);
            await tenantChangeSentinel();
            await assertAlive(bystander, `bystander after ${what}`);
            await assertAlive(selfHost, `self-host tenant after ${what}`);
        });
    }

    test('after the change new connections follow the new configuration (suspended → 403, rotated secret → old token 401, new token ok)', async () => {
        const t = await createTenant('after');
        const url = (secret) => `/realtime/v1/websocket?apikey=${token(secret)}&vsn=2.0.0`;
        const rotated = `${t.secret}-rotated`;
        assertJson(await api.patch(t.id, { jwt_secret: rotated }), 200);
        const old = await upgradeRequest(server, { host: server.hostFor(t.id), path: url(t.secret) });
        assert.equal(old.status, 401);
        assert.deepEqual(old.json, { error: 'Failed to validate JWT signature' });
        assert.equal((await upgradeRequest(server, { host: server.hostFor(t.id), path: url(rotated) })).status, 101);
        assertJson(await api.patch(t.id, { suspend: true }), 200);
        const suspended = await upgradeRequest(server, { host: server.hostFor(t.id), path: url(rotated) });
        assert.equal(suspended.status, 403);
        assert.deepEqual(suspended.json, { error: 'Realtime was disabled for this tenant' });
        assertJson(await api.patch(t.id, { suspend: false }), 200);
        assert.equal((await upgradeRequest(server, { host: server.hostFor(t.id), path: url(rotated) })).status, 101);
    });

    const harmless = [
        ['max_concurrent_users', { max_concurrent_users: 50 }],
        ['name', { name: 'a new display name' }],
        ['max_channels_per_client, presence settings', { max_channels_per_client: 20, presence_enabled: true, max_client_presence_events_per_window: 9 }],
        ['max_events_per_second and max_joins_per_second', { max_events_per_second: 500, max_joins_per_second: 400 }],
        ['suspend/private_only set to their current values', { suspend: false, private_only: false }],
        ['jwt_jwks set to its current value', { jwt_jwks: jwks }, { jwt_jwks: jwks }],
    ];
    for (const [what, body, createExtra = {}] of harmless) {
        test(`a change of ${what} does not disconnect`, async () => {
            const t = await createTenant('keep', createExtra);
            const m = await member(t.id, t.secret, { channels: 2 });
            const r = await rawMember(t.id, t.secret);
            const res = await api.patch(t.id, body);
            assertJson(res, 200, undefined, what);
            for (const [k, v] of Object.entries(body)) {
                if (k in res.json.data) assert.equal(res.json.data[k], v, k);
            }
            await tenantChangeSentinel();
            await assertAlive(m, `after changing ${what}`);
            await assertRawAlive(r, `after changing ${what}`);
        });
    }

    test('a request that resends the unchanged jwt_secret disconnects, as upstream (its ciphertext/plaintext comparison always sees a change, §4.1/§8)',
        async () => {
            const t = await createTenant('resend');
            const m = await member(t.id, t.secret, { channels: 2 });
            const r = await rawMember(t.id, t.secret);
            assertJson(await api.patch(t.id, { jwt_secret: t.secret }), 200);
            await assertDisconnected(m, r, 'resent jwt_secret', 1000);
        });

    test('shutdown does not disconnect sockets', async () => {
        const t = await createTenant('shut');
        const m = await member(t.id, t.secret, { channels: 1 });
        assertNoContent(await api.shutdown(t.id));
        await tenantChangeSentinel();
        await assertAlive(m, 'after shutdown');
    });
});

describe('GET /api/tenants/:id/health', () => {
    test('200 with the exact shape; connected_cluster counts sockets that joined a channel', async () => {
        const t = await createTenant('health');
        const health = async () => {
            const res = await api.health(t.id);
            assertJson(res, 200);
            assert.deepEqual(Object.keys(res.json), ['data']);
            return res.json.data;
        };
        const idle = await health();
        assert.deepEqual(Object.keys(idle).sort(), ['connected_cluster', 'db_connected', 'healthy', 'node', 'region', 'replication_connected']);
        assert.deepEqual(idle, { healthy: true, db_connected: false, replication_connected: false, connected_cluster: 0, region: REGION, node: NODE_NAME });

        // A socket that has not joined anything is not counted.
        const raw = pool.track(await RawClient.connect(server, { vsn: '2.0.0', token: token(t.secret), host: server.hostFor(t.id) }));
        // A heartbeat round trip: the server has done what it does for a new socket (counting a
        // user included) before it answers the socket's frames.
        await rawHeartbeat(raw);
        assert.equal((await health()).connected_cluster, 0, 'an unjoined socket is not a user');
        await raw.join(`realtime:${uniqueId('h')}`);
        await waitFor(async () => (await health()).connected_cluster === 1, 2000, 'connected_cluster 1 after a join');
        const m = await member(t.id, t.secret, { channels: 2 });
        await waitFor(async () => (await health()).connected_cluster === 2, 2000, 'connected_cluster 2 (one per socket, not per channel)');
        assert.equal((await health()).connected_cluster, 2);
        raw.close();
        await waitFor(async () => (await health()).connected_cluster === 1, 2000, 'connected_cluster back to 1 after a close');
        assert.ok(m.chans.every((ch) => ch.state === 'joined'));
        // Other tenants are counted separately.
        const other = await api.health(BYSTANDER);
        assertJson(other, 200);
        assert.equal(other.json.data.connected_cluster, 0);
    });
});

// ---------------------------------------------------------------------------------------------
// PostgreSQL control plane (tables in schema _realtime, secrets AES-128-ECB with DB_ENC_KEY).

const PG_BIN = process.env.RT_PG_BIN || '/usr/lib/postgresql/15/bin';
const pgAvailable = fs.existsSync(path.join(PG_BIN, 'initdb')) && fs.existsSync(pgClusterScript);
const DB_ENC_KEY = '0123456789abcdef';
const PG_CACHE_TTL_MS = 400;

describe('CRUD on the PostgreSQL control plane', { skip: !pgAvailable && `PostgreSQL 15 binaries not found in ${PG_BIN}` }, () => {
    let pgDir;
    let pg;
    let pgServer;
    let pgApi;
    let pgPool;

    before(async () => {
        pgDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rt-e2e-tenant-pg-'));
        pg = await startPgCluster(pgDir);
        pgServer = await startServer({
            env: { ...pg.serverEnv, DB_ENC_KEY, TENANT_CACHE_EXPIRATION_IN_MS: String(PG_CACHE_TTL_MS) },
        });
        pgApi = adminApi(pgServer, { token: operatorToken(API_SECRET) });
        pgPool = new ClientPool(pgServer);
    });
    afterEach(() => pgPool?.cleanup());
    after(async () => {
        let result;
        if (pgServer) result = await pgServer.stop();
        if (pg) await pg.stop();
        if (pgDir) fs.rmSync(pgDir, { recursive: true, force: true });
        if (result) assert.equal(result.crashedBeforeStop, null, `server exited during the tests:\n${result.stderr}`);
    });

    const sql = (s) => s.replace(/'/g, "''");

    crudTests({
        api: () => pgApi,
        async createTenant(p) {
            const id = uniqueId(p);
            const res = await pgApi.create({ external_id: id, jwt_secret: secretFor(id), extensions: [], migrations_ran: 81 });
            assertJson(res, 201);
            return { id, secret: secretFor(id) };
        },
        async assertEncryptedAtRest(id, secret, settings, shownSettings) {
            const stored = await pg.psql(`SELECT jwt_secret FROM _realtime.tenants WHERE external_id = '${sql(id)}'`);
            assert.notEqual(stored, '', 'a row in _realtime.tenants');
            assert.notEqual(stored, secret, 'jwt_secret is not stored in plain text');
            assert.equal(stored, ecb(DB_ENC_KEY, secret), 'jwt_secret is AES-128-ECB with DB_ENC_KEY, base64 (upstream format)');
            const raw = JSON.parse(await pg.psql(`SELECT settings::text FROM _realtime.extensions WHERE tenant_external_id = '${sql(id)}'`));
            for (const key of ['db_host', 'db_port', 'db_name', 'db_user', 'db_password']) {
                assert.equal(raw[key], ecb(DB_ENC_KEY, settings[key]), `stored ${key}`);
            }
            for (const key of ['db_host', 'db_port', 'db_name', 'db_user']) {
                assert.equal(shownSettings[key], raw[key], `the API shows the stored ciphertext of ${key}`);
            }
            assert.equal(raw.region, 'us-east-1', 'region is plain text');
        },
    }, 'pg');

    test('a tenant created on PostgreSQL is served to realtime-js, and DELETE disconnects it', async () => {
        const id = uniqueId('pglive');
        assertJson(await pgApi.create({ external_id: id, jwt_secret: secretFor(id), extensions: [], migrations_ran: 81 }), 201);
        const client = pgPool.client({ tenant: id, token: token(secretFor(id)) });
        const log = new Recorder('pg client');
        client.socketAdapter.getSocket().onClose((e) => log.push({ kind: 'close', code: e?.code }));
        const ch = client.channel(uniqueId('room'), { config: { broadcast: { self: true } } });
        ch.on('system', {}, (p) => log.push({ kind: 'system', p }));
        ch.on('broadcast', { event: '*' }, (msg) => log.push({ kind: 'broadcast', msg }));
        await joinChannel(ch);
        assert.equal(await ch.send({ type: 'broadcast', event: 'hi', payload: { x: 1 } }), 'ok');
        await log.next((e) => e.kind === 'broadcast' && e.msg.payload?.x === 1, 2000, 'echo');
        assertNoContent(await pgApi.del(id));
        const close = await log.next((e) => e.kind === 'close', 3000, 'close');
        assert.equal(close.code, 1012);
        assert.deepEqual(log.filter((e) => e.kind === 'system').map((e) => e.p), [DISCONNECT]);
        assert.equal(await pg.psql(`SELECT count(*) FROM _realtime.tenants WHERE external_id = '${sql(id)}'`), '0');
    });

    test('changes written to _realtime.tenants by someone else are picked up within TENANT_CACHE_EXPIRATION_IN_MS', async () => {
        const id = uniqueId('pgttl');
        assertJson(await pgApi.create({ external_id: id, jwt_secret: secretFor(id), extensions: [], migrations_ran: 81 }), 201);
        const url = `/realtime/v1/websocket?apikey=${token(secretFor(id))}&vsn=2.0.0`;
        assert.equal((await upgradeRequest(pgServer, { host: pgServer.hostFor(id), path: url })).status, 101);
        await pg.psql(`UPDATE _realtime.tenants SET suspend = true, name = 'renamed in sql' WHERE external_id = '${sql(id)}'`);
        // The admin routes read the database, not the cache.
        assert.equal((await pgApi.show(id)).json.data.name, 'renamed in sql');
        const started = Date.now();
        await waitFor(async () => (await upgradeRequest(pgServer, { host: pgServer.hostFor(id), path: url })).status === 403,
            PG_CACHE_TTL_MS * 5 + 2000, 'the suspension to reach the tenant cache');
        assert.ok(Date.now() - started < PG_CACHE_TTL_MS * 5 + 2000);
    });
});
