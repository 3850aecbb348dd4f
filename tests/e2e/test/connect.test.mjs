// Socket connect checks (server-protocol §1.2-1.5): HTTP status and exact JSON bodies of refused
// upgrades, the connect error backoff, both socket paths, and JWKS algorithms.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, afterEach, before, describe, test } from 'node:test';
import { startServer, SELF_HOST_SECRET, CONNECT_ERROR_BACKOFF_MS } from '../lib/server.mjs';
import { claims, expiredClaims, generateKeys, sign, token } from '../lib/jwt.mjs';
import { ClientPool, joinChannel, selfHostToken } from '../lib/clients.mjs';
import { withoutPosition } from '../lib/positions.mjs';
import { RawClient } from '../lib/raw.mjs';
import { Recorder, upgradeRequest, VSNS } from '../lib/util.mjs';

const SUSPENDED_SECRET = 'suspended-tenant-secret-0123456789abcdef';
const JWKS_SECRET = 'jwks-tenant-hs-secret-0123456789abcdefgh';
const keys = generateKeys('connect');
const OCT_SECRET = 'oct-jwk-secret-0123456789abcdefghijklmnopq';
const octJwk = { kty: 'oct', kid: 'oct-1', k: Buffer.from(OCT_SECRET).toString('base64url'), alg: 'HS256' };

let server;
let pool;

before(async () => {
    server = await startServer({
        tenants: [
            { external_id: 'suspended', jwt_secret: SUSPENDED_SECRET, suspend: true },
            { external_id: 'jwks', jwt_secret: JWKS_SECRET, jwt_jwks: { keys: [...keys.jwks.keys, octJwk] } },
        ],
    });
    pool = new ClientPool(server);
});
afterEach(() => pool.cleanup());
after(async () => {
    const result = await server.stop();
    assert.equal(result.crashedBeforeStop, null, `server exited during the tests:\n${result.stderr}`);
});

const q = (tok, vsn) => `?${new URLSearchParams({ ...(tok !== undefined ? { apikey: tok } : {}), vsn })}`;

/** Asserts a refused upgrade: status, JSON content type and exact {"error": text}. */
function assertRefused(res, status, error) {
    assert.equal(res.status, status, `status; body ${res.body}`);
    assert.match(String(res.headers['content-type']), /^application\/json/, 'content-type');
    assert.deepEqual(res.json, { error }, `body ${res.body}`);
    assert.ok(res.elapsedMs >= CONNECT_ERROR_BACKOFF_MS - 10,
        `a refused connect must be delayed by CONNECT_ERROR_BACKOFF_MS (${CONNECT_ERROR_BACKOFF_MS} ms); answered after ${res.elapsedMs} ms`);
}

for (const vsn of VSNS) {
    describe(`connect vsn ${vsn}`, () => {
        test('unknown tenant → 404 Tenant not found', async () => {
            const res = await upgradeRequest(server, { path: `/socket/websocket${q(selfHostToken(), vsn)}`, host: server.hostFor('nosuchtenant') });
            assertRefused(res, 404, 'Tenant not found');
        });

        test('suspended tenant → 403 Realtime was disabled for this tenant', async () => {
            const res = await upgradeRequest(server, { path: `/socket/websocket${q(token(SUSPENDED_SECRET), vsn)}`, host: server.hostFor('suspended') });
            assertRefused(res, 403, 'Realtime was disabled for this tenant');
        });

        test('no token → 401 API key is missing', async () => {
            const res = await upgradeRequest(server, { path: `/socket/websocket${q(undefined, vsn)}` });
            assertRefused(res, 401, 'API key is missing');
        });

        test('malformed token → 401 The token provided is not a valid JWT', async () => {
            const res = await upgradeRequest(server, { path: `/socket/websocket${q('not-a-jwt', vsn)}` });
            assertRefused(res, 401, 'The token provided is not a valid JWT');
        });

        test('bad signature → 401 Failed to validate JWT signature', async () => {
            const res = await upgradeRequest(server, { path: `/socket/websocket${q(token('some-other-secret-0123456789abcdefghij'), vsn)}` });
            assertRefused(res, 401, 'Failed to validate JWT signature');
        });

        test('expired token → 401 Token has expired', async () => {
            const tok = sign(expiredClaims(30), { secret: SELF_HOST_SECRET });
            const res = await upgradeRequest(server, { path: `/socket/websocket${q(tok, vsn)}` });
            assertRefused(res, 401, 'Token has expired');
        });

        test('missing role or exp → 401 Fields `role` and `exp` are required in JWT', async () => {
            const noRole = sign({ exp: Math.floor(Date.now() / 1000) + 3600 }, { secret: SELF_HOST_SECRET });
            assertRefused(await upgradeRequest(server, { path: `/socket/websocket${q(noRole, vsn)}` }),
                401, 'Fields `role` and `exp` are required in JWT');
            const noExp = sign({ role: 'anon' }, { secret: SELF_HOST_SECRET });
            assertRefused(await upgradeRequest(server, { path: `/socket/websocket${q(noExp, vsn)}` }),
                401, 'Fields `role` and `exp` are required in JWT');
        });

        test('RS256 with an unknown kid on a JWKS tenant → 401 naming the kid', async () => {
            const tok = sign(claims(), { alg: 'RS256', key: keys.rsa.privateKey, kid: 'no-such-kid' });
            const res = await upgradeRequest(server, { path: `/socket/websocket${q(tok, vsn)}`, host: server.hostFor('jwks') });
            assertRefused(res, 401,
                'Failed to generate JWT signer for key ID (kid) "no-such-kid", check your JWT secret or JWKS configuration');
        });

        test('RS256 on a tenant without JWKS → 401 Failed to generate JWT signer', async () => {
            const tok = sign(claims(), { alg: 'RS256', key: keys.rsa.privateKey, kid: keys.rsa.kid });
            const res = await upgradeRequest(server, { path: `/socket/websocket${q(tok, vsn)}` });
            assertRefused(res, 401, 'Failed to generate JWT signer, check your JWT secret or JWKS configuration');
        });

        test('connect checks run in order: tenant, suspension, then the token', async () => {
            assertRefused(await upgradeRequest(server, { path: `/socket/websocket${q(undefined, vsn)}`, host: server.hostFor('nosuchtenant') }),
                404, 'Tenant not found');
            assertRefused(await upgradeRequest(server, { path: `/socket/websocket${q('garbage', vsn)}`, host: server.hostFor('suspended') }),
                403, 'Realtime was disabled for this tenant');
            assertRefused(await upgradeRequest(server, { path: `/socket/websocket${q(undefined, vsn)}`, host: server.hostFor('suspended') }),
                403, 'Realtime was disabled for this tenant');
        });

        test('x-api-key header takes precedence over the apikey query parameter', async () => {
            const good = await upgradeRequest(server, {
                path: `/socket/websocket${q('garbage', vsn)}`,
                headers: { 'x-api-key': selfHostToken() },
            });
            assert.equal(good.status, 101, `valid x-api-key + garbage apikey must connect; got ${good.status} ${good.body}`);
            const bad = await upgradeRequest(server, {
                path: `/socket/websocket${q(selfHostToken(), vsn)}`,
                headers: { 'x-api-key': 'garbage' },
            });
            assertRefused(bad, 401, 'The token provided is not a valid JWT');
        });

        test('a valid token connects on /socket/websocket and /realtime/v1/websocket', async () => {
            for (const path of ['/socket/websocket', '/realtime/v1/websocket']) {
                const res = await upgradeRequest(server, { path: `${path}${q(selfHostToken(), vsn)}` });
                assert.equal(res.status, 101, `${path}: ${res.status} ${res.body}`);
            }
        });

        for (const prefix of ['/socket', '/realtime/v1']) {
            test(`realtime-js joins and broadcasts through ${prefix}/websocket`, async () => {
                const client = pool.client({ vsn, path: prefix });
                const ch = client.channel(`path-${prefix.replace(/\//g, '_')}`, { config: { broadcast: { self: true, ack: true } } });
                const got = new Recorder('broadcasts');
                ch.on('broadcast', { event: 'ping' }, got.fn);
                await joinChannel(ch);
                assert.equal(await ch.send({ type: 'broadcast', event: 'ping', payload: { via: prefix } }), 'ok');
                const msg = await got.next();
                assert.deepEqual(withoutPosition(msg), { type: 'broadcast', event: 'ping', payload: { via: prefix } });
            });
        }

        for (const [alg, key] of [['RS256', keys.rsa], ['ES256', keys.ec], ['EdDSA', keys.ed]]) {
            test(`${alg} token verified through the tenant JWKS connects and joins`, async () => {
                const tok = sign(claims(), { alg, key: key.privateKey, kid: key.kid });
                const res = await upgradeRequest(server, { path: `/socket/websocket${q(tok, vsn)}`, host: server.hostFor('jwks') });
                assert.equal(res.status, 101, `raw upgrade with ${alg}: ${res.status} ${res.body}`);

                const client = pool.client({ vsn, token: tok, tenant: 'jwks' });
                await client.setAuth(tok); // the join carries access_token = the same token
                const ch = client.channel(`jwks-${alg}`, { config: { broadcast: { self: true, ack: true } } });
                const got = new Recorder('broadcasts');
                ch.on('broadcast', { event: 'e' }, got.fn);
                await joinChannel(ch);
                assert.equal(await ch.send({ type: 'broadcast', event: 'e', payload: { alg } }), 'ok');
                assert.deepEqual((await got.next()).payload, { alg });
            });
        }

        test('HS256 on a JWKS tenant: oct JWK by kid, else the jwt_secret', async () => {
            const path = (tok) => `/socket/websocket${q(tok, vsn)}`;
            const host = server.hostFor('jwks');
            const viaJwk = sign(claims(), { secret: OCT_SECRET, kid: 'oct-1' });
            assert.equal((await upgradeRequest(server, { path: path(viaJwk), host })).status, 101, 'kid oct-1 → the JWK secret');
            const fallback = sign(claims(), { secret: JWKS_SECRET, kid: 'not-in-jwks' });
            assert.equal((await upgradeRequest(server, { path: path(fallback), host })).status, 101, 'unknown kid → jwt_secret');
            const noKid = sign(claims(), { secret: JWKS_SECRET });
            assert.equal((await upgradeRequest(server, { path: path(noKid), host })).status, 101, 'no kid → jwt_secret');
            const wrong = sign(claims(), { secret: JWKS_SECRET, kid: 'oct-1' });
            assertRefused(await upgradeRequest(server, { path: path(wrong), host }), 401, 'Failed to validate JWT signature');
        });

        test('tokens are cleaned before verification: whitespace removed, URL-decoded', async () => {
            const tok = selfHostToken();
            const withSpaces = `${tok.slice(0, 10)} \n${tok.slice(10, 40)}\t ${tok.slice(40)}\n`;
            const spaced = await upgradeRequest(server, { path: `/socket/websocket${q(withSpaces, vsn)}` });
            assert.equal(spaced.status, 101, `whitespace inside the token: ${spaced.status} ${spaced.body}`);
            const encodedDots = tok.replace(/\./g, '%2E');
            const encoded = await upgradeRequest(server, { path: `/socket/websocket${q(encodedDots, vsn)}` });
            assert.equal(encoded.status, 101, `URL-encoded token: ${encoded.status} ${encoded.body}`);
            const header = await upgradeRequest(server, { path: `/socket/websocket?vsn=${vsn}`, headers: { 'x-api-key': ` ${tok.slice(0, 20)} ${tok.slice(20)} ` } });
            assert.equal(header.status, 101, `spaces in x-api-key: ${header.status} ${header.body}`);
        });

        test('a non-numeric iat → 500 Error connecting to Realtime; decimal exp is accepted', async () => {
            const badIat = sign({ role: 'anon', exp: Math.floor(Date.now() / 1000) + 3600, iat: 'yesterday' }, { secret: SELF_HOST_SECRET });
            assertRefused(await upgradeRequest(server, { path: `/socket/websocket${q(badIat, vsn)}` }), 500, 'Error connecting to Realtime');
            const decimalExp = sign({ role: 'anon', exp: Date.now() / 1000 + 3600.5 }, { secret: SELF_HOST_SECRET });
            assert.equal((await upgradeRequest(server, { path: `/socket/websocket${q(decimalExp, vsn)}` })).status, 101);
        });

        test('HS384 and HS512 tokens signed with the tenant secret connect', async () => {
            for (const alg of ['HS384', 'HS512']) {
                const tok = sign(claims(), { alg, secret: SELF_HOST_SECRET });
                const res = await upgradeRequest(server, { path: `/socket/websocket${q(tok, vsn)}` });
                assert.equal(res.status, 101, `${alg}: ${res.status} ${res.body}`);
            }
        });

        test('unknown query parameters (log_level, custom params) are ignored', async () => {
            const client = pool.client({ vsn, params: { apikey: selfHostToken(), foo: 'bar' }, logLevel: 'info' });
            assert.match(client.endpointURL(), /log_level=info/);
            const ch = client.channel('extra-params');
            await joinChannel(ch);
            assert.equal(ch.state, 'joined');
        });
    });
}

test('a non-GET upgrade request → 400 with an empty body', async () => {
    const res = await new Promise((resolve, reject) => {
        const req = http.request({
            host: '127.0.0.1', port: server.port, method: 'POST',
            path: `/socket/websocket${q(selfHostToken(), '2.0.0')}`,
            headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Version': '13', 'Content-Length': 0 },
        });
        req.on('upgrade', (r, socket) => {
            socket.destroy();
            resolve({ status: r.statusCode, body: '' });
        });
        req.on('response', (r) => {
            let body = '';
            r.on('data', (c) => (body += c));
            r.on('end', () => resolve({ status: r.statusCode, body }));
        });
        req.on('error', reject);
        req.end();
    });
    assert.equal(res.status, 400);
    assert.equal(res.body, '');
});

test('unsupported vsn → 403 with an empty body', async () => {
    for (const vsn of ['3.0.0', 'abc', '0.9.0']) {
        const res = await upgradeRequest(server, { path: `/socket/websocket${q(selfHostToken(), vsn)}` });
        assert.equal(res.status, 403, `vsn=${vsn}: ${res.status} ${res.body}`);
        assert.equal(res.body, '', `vsn=${vsn} body`);
    }
});

test('missing vsn is treated as 1.0.0 (JSON object frames)', async () => {
    const raw = pool.track(await RawClient.connect(server, { vsn: '1.0.0', token: selfHostToken(), omitVsn: true }));
    raw.push('phoenix', 'heartbeat', {}, { ref: '1', omitJoinRef: true });
    const reply = await raw.reply('1');
    assert.deepEqual(JSON.parse(reply.text), { topic: 'phoenix', event: 'phx_reply', payload: { status: 'ok', response: {} }, ref: '1' });
});

describe('self-host tenant with API_JWT_JWKS', () => {
    let jwksServer;
    before(async () => {
        jwksServer = await startServer({ jwks: keys.jwks });
    });
    after(async () => {
        const result = await jwksServer.stop();
        assert.equal(result.crashedBeforeStop, null, `server exited during the tests:\n${result.stderr}`);
    });

    for (const vsn of VSNS) {
        test(`RS256, ES256 and EdDSA tokens connect, HS256 with API_JWT_SECRET still works (vsn ${vsn})`, async () => {
            for (const [alg, key] of [['RS256', keys.rsa], ['ES256', keys.ec], ['EdDSA', keys.ed]]) {
                const tok = sign(claims(), { alg, key: key.privateKey, kid: key.kid });
                const res = await upgradeRequest(jwksServer, { path: `/socket/websocket${q(tok, vsn)}` });
                assert.equal(res.status, 101, `${alg}: ${res.status} ${res.body}`);
            }
            const hs = await upgradeRequest(jwksServer, { path: `/socket/websocket${q(selfHostToken(), vsn)}` });
            assert.equal(hs.status, 101, `HS256: ${hs.status} ${hs.body}`);
            const wrongKey = sign(claims(), { alg: 'ES256', key: keys.ec.privateKey, kid: keys.rsa.kid });
            assertRefused(await upgradeRequest(jwksServer, { path: `/socket/websocket${q(wrongKey, vsn)}` }),
                401, `Failed to generate JWT signer for key ID (kid) "${keys.rsa.kid}", check your JWT secret or JWKS configuration`);
        });
    }
});

describe('JWT_CLAIM_VALIDATORS', () => {
    let validating;
    before(async () => {
        validating = await startServer({ env: { JWT_CLAIM_VALIDATORS: JSON.stringify({ iss: 'e2e-issuer' }) } });
    });
    after(async () => {
        const result = await validating.stop();
        assert.equal(result.crashedBeforeStop, null, `server exited during the tests:\n${result.stderr}`);
    });

    for (const vsn of VSNS) {
        test(`a configured claim must match when present (vsn ${vsn})`, async () => {
            const path = (extra) => `/socket/websocket${q(sign(claims(extra), { secret: SELF_HOST_SECRET }), vsn)}`;
            assert.equal((await upgradeRequest(validating, { path: path({ iss: 'e2e-issuer' }) })).status, 101, 'matching iss');
            assert.equal((await upgradeRequest(validating, { path: path({}) })).status, 101, 'iss absent is not validated');
            assertRefused(await upgradeRequest(validating, { path: path({ iss: 'someone-else' }) }), 500, 'Error connecting to Realtime');
        });
    }
});
