// The tenant database connection's lifecycle (server-protocol §3.3 step 9, §3.4, §3.5, §9.1) with
// the unchanged realtime-js client and raw clients, against a throwaway PostgreSQL 15 cluster:
// unreachable databases and the connect-retry window, wrong passwords, migrations on the first
// join, tenant health, the idle stop (TENANT_DB_IDLE_TIMEOUT_IN_MS), the tenant API's shutdown,
// tenants without a database, persistent replication slots (slot_name, SLOT_NAME_SUFFIX) and the
// query pool size (TENANT_DB_POOL_SIZE).
//
// One cluster for the file, two servers:
//   - "failures": TENANT_DB_CONNECT_RETRY_MS=3000 and SLOT_NAME_SUFFIX; tenants whose database is
//     a closed port, a listener that holds connections and then drops them (so a connect attempt
//     takes SLOW_MS and can be counted), a wrong password, a database-less tenant and a reachable
//     one without slot_name.
//   - "lifecycle": TENANT_DB_IDLE_TIMEOUT_IN_MS=1000 and TENANT_DB_POOL_SIZE=2; two reachable
//     tenants (one with slot_name) whose tables and publication exist before the server starts.
// The server's connections are read from pg_stat_activity (application_name 'qtrealtime', one
// database per tenant).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import { adminApi, operatorToken, startPgCluster } from '../lib/admin.mjs';
import { ClientPool, joinChannel, subscribe } from '../lib/clients.mjs';
import { token } from '../lib/jwt.mjs';
import { cdcSettings, createDatabase, literal, PG_BIN, pgBinariesPresent, psqlAs, tenantSeed } from '../lib/pg.mjs';
import { RawClient } from '../lib/raw.mjs';
import { CHANNEL_ERROR_BACKOFF_MS, SELF_HOST_SECRET, SELF_HOST_TENANT, startServer } from '../lib/server.mjs';
import { Recorder, show, sleep, waitFor } from '../lib/util.mjs';

const skip = !pgBinariesPresent() && `PostgreSQL 15 binaries not found in ${PG_BIN} (install postgresql-15 or set RT_PG_BIN)`;

const SECRET = 'tenant-db-e2e-secret-0123456789abcdefghijklmn';
const UNABLE = 'UnableToConnectToProject: Realtime was unable to connect to the project database';
const NO_DB = 'Unable to subscribe to changes with given parameters. This tenant has no database configured';
const CONNECT_RETRY_MS = 3000;
const IDLE_TIMEOUT_MS = 1000;
const POOL_SIZE = 2;
const SLOT_SUFFIX = `e2e${process.pid % 10000}`;
/** How long the fake database listener holds a connection before dropping it. */
const SLOW_MS = 1500;
/** The same for the connect that must outlast the idle sweep (timeout 1000 ms, sweep every 1000 ms). */
const HANG_MS = 4000;
/** The first join of a tenant connects, runs the migrations and starts the stream. */
const FIRST_JOIN_MS = 20_000;
const SUBSCRIBED_TIMEOUT_MS = 20_000;
const DELIVERY_MS = 8_000;
/** Idle sweep every max(1000, timeout/4) ms, closing after `timeout` idle: ≤ ~2 s, plus slack. */
const IDLE_CLOSE_MS = 6_000;

const DB_OK = 'rt_tdb_ok';
const DB_SHUT = 'rt_tdb_shut';
const DB_SFX = 'rt_tdb_sfx';
const SLOT_OK = 'rt_e2e_tdb_slot';

const SCHEMA_SQL = `
CREATE TABLE items (id int PRIMARY KEY, label text);
GRANT SELECT ON items TO anon, authenticated;
CREATE PUBLICATION supabase_realtime FOR TABLE items;
`;

let seq = 0;
const unique = (name) => `${name}-${++seq}-${process.pid}`;
const tokenFor = (claims = {}) => token(SECRET, claims);

/** A port on 127.0.0.1 that nothing listens on (bound once, then released). */
async function closedPort() {
    return await new Promise((resolve, reject) => {
        const srv = net.createServer();
        srv.on('error', reject);
        srv.listen(0, '127.0.0.1', () => {
            const { port } = srv.address();
            srv.close(() => resolve(port));
        });
    });
}

/** A TCP listener that accepts, says nothing, and drops each connection after `holdMs`. */
async function droppingListener(holdMs) {
    const sockets = new Set();
    const state = { accepted: 0, port: 0 };
    const srv = net.createServer((sock) => {
        state.accepted += 1;
        sockets.add(sock);
        sock.on('error', () => {});
        sock.on('close', () => sockets.delete(sock));
        sock.resume();
        setTimeout(() => sock.destroy(), holdMs);
    });
    await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
    state.port = srv.address().port;
    state.close = () => new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        srv.close(() => resolve());
    });
    return state;
}

/** The server's connections to `database`: { client, walsender, other, total }. */
async function serverConnections(su, database) {
    const rows = await su.rows(`SELECT backend_type, count(*) FROM pg_stat_activity
        WHERE application_name = 'qtrealtime' AND datname = ${literal(database)} GROUP BY 1`);
    const out = { client: 0, walsender: 0, other: 0, total: 0 };
    for (const [type, n] of rows) {
        const count = Number(n);
        if (type === 'client backend') out.client += count;
        else if (type === 'walsender') out.walsender += count;
        else out.other += count;
        out.total += count;
    }
    return out;
}

async function waitNoConnections(su, database, timeoutMs, what) {
    let last;
    await waitFor(async () => {
        last = await serverConnections(su, database);
        return last.total === 0;
    }, timeoutMs, `no qtrealtime connections to ${database} ${what}`, () => last);
}

/** GET /api/tenants/<id>/health → data (asserts 200). */
async function health(api, id) {
    const res = await api.health(id);
    assert.equal(res.status, 200, `health of ${id}: ${res.status} ${res.body}`);
    return res.json.data;
}

/** A raw join whose reply must be the error `reason`; resolves the elapsed ms. */
async function rawJoinError(raw, topic, reason, timeoutMs = 5000) {
    const started = Date.now();
    const reply = await raw.join(topic, { timeoutMs });
    const elapsed = Date.now() - started;
    assert.deepEqual(reply.payload, { status: 'error', response: { reason } }, `join reply ${reply.text}`);
    return elapsed;
}

/** realtime-js: subscribes and asserts CHANNEL_ERROR with `reason`, then stops the channel's rejoins. */
async function clientJoinError(client, ch, reason, timeoutMs = 5000) {
    const statuses = subscribe(ch, timeoutMs);
    const first = await statuses.next(() => true, timeoutMs + 1000, `a subscribe status for ${ch.topic}`);
    client.removeChannel(ch).catch(() => {});
    assert.equal(first.status, 'CHANNEL_ERROR', `expected CHANNEL_ERROR on ${ch.topic}, got ${first.status} ${first.err?.message ?? ''}`);
    assert.equal(first.err.message, reason);
    assert.deepEqual(first.err.cause, { reason });
}

/** Sends a heartbeat on a raw socket and waits for its ok reply: the socket is alive. */
async function assertAlive(raw, what) {
    const ref = raw.nextRef();
    raw.push('phoenix', 'heartbeat', {}, { ref, omitJoinRef: true });
    const reply = await raw.reply(ref, 2000, 'phoenix');
    assert.deepEqual(reply.payload, { status: 'ok', response: {} }, `heartbeat ${what}`);
    assert.equal(raw.closed, null, `socket closed ${what}`);
}

/** Joins a realtime-js channel with postgres_changes on items and waits for Subscribed to PostgreSQL. */
async function itemsChannel(client, name, { joinTimeoutMs = FIRST_JOIN_MS } = {}) {
    const ch = client.channel(name);
    const changes = new Recorder(`changes on ${name}`);
    const system = new Recorder(`system messages of ${name}`);
    ch.on('postgres_changes', { event: 'INSERT', schema: 'public', table: 'items' }, changes.fn);
    ch.on('system', {}, system.fn);
    const statuses = subscribe(ch, joinTimeoutMs);
    const first = await statuses.next(() => true, joinTimeoutMs + 1000, `a subscribe status for ${name}`);
    assert.equal(first.status, 'SUBSCRIBED', `join of ${name}: ${first.status} ${first.err ? first.err.message : ''}`);
    const msg = await system.next((m) => m?.extension === 'postgres_changes', SUBSCRIBED_TIMEOUT_MS,
        `a postgres_changes system message on ${name}`);
    assert.deepEqual(msg, { extension: 'postgres_changes', status: 'ok', message: 'Subscribed to PostgreSQL', channel: name });
    return { ch, changes, system };
}

/** Inserts a row into items of `db` and waits for it on `changes`. */
async function insertArrives(db, changes, id) {
    await db.exec(`INSERT INTO items VALUES (${id}, 'row ${id}')`);
    const change = await changes.next((c) => c?.new?.id === id, DELIVERY_MS, `the INSERT of id ${id}`);
    assert.equal(change.eventType, 'INSERT');
    assert.deepEqual(change.new, { id, label: `row ${id}` });
}

/** The slot `name` of the cluster: { temporary, slot_type, plugin, database } or undefined. */
async function slot(su, name) {
    const rows = await su.rows(`SELECT temporary, slot_type, plugin, database FROM pg_replication_slots
        WHERE slot_name = ${literal(name)}`);
    if (rows.length === 0) return undefined;
    const [temporary, slotType, plugin, database] = rows[0];
    return { temporary, slot_type: slotType, plugin, database };
}

describe('the tenant database connection', { skip }, () => {
    let pgDir;
    let pg;
    let su; // superuser psql on the postgres database (pg_stat_activity, pg_replication_slots)

    before(async () => {
        pgDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rt-e2e-tdb-'));
        pg = await startPgCluster(pgDir);
        su = psqlAs(pg.env, { database: 'postgres', superuser: true });
        for (const database of [DB_OK, DB_SHUT, DB_SFX]) {
            await createDatabase(pg.env, database);
            await psqlAs(pg.env, { database }).exec(SCHEMA_SQL);
        }
    });
    after(async () => {
        if (pg) await pg.stop();
        if (pgDir) fs.rmSync(pgDir, { recursive: true, force: true });
    });

    describe('failures (TENANT_DB_CONNECT_RETRY_MS, SLOT_NAME_SUFFIX)', () => {
        let server;
        let pool;
        let api;
        let listener;

        before(async () => {
            listener = await droppingListener(SLOW_MS);
            const down = await closedPort();
            server = await startServer({
                tenants: [
                    {
                        external_id: 'tdb-down',
                        jwt_secret: SECRET,
                        extensions: [{ type: 'postgres_cdc_rls', settings: cdcSettings(pg.env, DB_OK, { db_host: '127.0.0.1', db_port: String(down) }) }],
                    },
                    {
                        external_id: 'tdb-slow',
                        jwt_secret: SECRET,
                        extensions: [{ type: 'postgres_cdc_rls', settings: cdcSettings(pg.env, DB_OK, { db_host: '127.0.0.1', db_port: String(listener.port) }) }],
                    },
                    tenantSeed('tdb-badpw', SECRET, pg.env, DB_SFX, { settings: { db_password: 'not-the-password' } }),
                    tenantSeed('tdb-sfx', SECRET, pg.env, DB_SFX),
                    { external_id: 'tdb-none', jwt_secret: SECRET },
                ],
                env: { TENANT_DB_CONNECT_RETRY_MS: String(CONNECT_RETRY_MS), SLOT_NAME_SUFFIX: SLOT_SUFFIX },
            });
            pool = new ClientPool(server);
            api = adminApi(server, { token: operatorToken(SELF_HOST_SECRET) });
        });
        afterEach(() => pool?.cleanup());
        after(async () => {
            let result;
            if (server) result = await server.stop();
            if (listener) await listener.close();
            if (result) assert.equal(result.crashedBeforeStop, null, `server exited during the tests:\n${result.stderr}`);
        });

        const raw = async (tenant) =>
            pool.track(await RawClient.connect(server, { vsn: '2.0.0', token: tokenFor(), host: server.hostFor(tenant) }));

        /** A public join of another tenant (and the self-host one) succeeds and broadcasts round-trip. */
        async function otherTenantsWork(what) {
            const c = pool.client({ tenant: 'tdb-none', token: tokenFor() });
            const ch = c.channel(unique('other'), { config: { broadcast: { self: true, ack: true } } });
            const got = new Recorder('self broadcasts');
            ch.on('broadcast', { event: 'ping' }, got.fn);
            await joinChannel(ch);
            assert.equal(await ch.send({ type: 'broadcast', event: 'ping', payload: { n: 1 } }), 'ok', `ack ${what}`);
            await got.next((m) => m.payload?.n === 1, 2000, `own broadcast ${what}`);
            const self = pool.client({ tenant: SELF_HOST_TENANT });
            await joinChannel(self.channel(unique('self-host')));
        }

        test('unreachable database (closed port): public joins fail with UnableToConnectToProject, the second inside the retry window at once; the socket and other tenants live on', async () => {
            const r = await raw('tdb-down');
            const firstMs = await rawJoinError(r, `realtime:${unique('down')}`, UNABLE);
            const secondMs = await rawJoinError(r, `realtime:${unique('down')}`, UNABLE);
            // Both answers carry the join error backoff; the second makes no new connect attempt.
            assert.ok(firstMs >= CHANNEL_ERROR_BACKOFF_MS - 10, `first join error answered after ${firstMs} ms (backoff ${CHANNEL_ERROR_BACKOFF_MS})`);
            assert.ok(secondMs >= CHANNEL_ERROR_BACKOFF_MS - 10 && secondMs < CHANNEL_ERROR_BACKOFF_MS + 700,
                `second join error answered after ${secondMs} ms (backoff ${CHANNEL_ERROR_BACKOFF_MS})`);
            await assertAlive(r, 'after two failed joins');

            // realtime-js sees the same reason.
            const client = pool.client({ tenant: 'tdb-down', token: tokenFor() });
            await clientJoinError(client, client.channel(unique('down-js')), UNABLE);

            await otherTenantsWork('while tdb-down fails');
            await assertAlive(r, 'after the other tenants joined');
            const h = await health(api, 'tdb-down');
            assert.equal(h.db_connected, false, `health ${show(h)}`);
            assert.equal(h.replication_connected, false, `health ${show(h)}`);
        });

        test('connect-retry window: a join inside TENANT_DB_CONNECT_RETRY_MS after a failed connect fails without a new attempt; after it, the next join tries again', async () => {
            const r = await raw('tdb-slow');
            const before = listener.accepted;
            const topic1 = `realtime:${unique('slow')}`;
            const started = Date.now();
            const pending = rawJoinError(r, topic1, UNABLE, SLOW_MS * 4 + 10_000);

            // While the connect attempt hangs, other tenants' joins are not held up.
            await waitFor(() => listener.accepted > before, 5000, 'the server to connect to the fake database');
            const otherStarted = Date.now();
            await otherTenantsWork('while tdb-slow connects');
            const otherMs = Date.now() - otherStarted;
            assert.ok(otherMs < SLOW_MS, `other tenants took ${otherMs} ms while a connect hung (hold ${SLOW_MS} ms)`);

            const firstMs = await pending;
            const failedAt = Date.now();
            assert.ok(firstMs >= SLOW_MS, `the first join waited for the connect attempt: answered after ${firstMs} ms (hold ${SLOW_MS} ms)`);
            const attempts = listener.accepted;
            assert.ok(attempts > before, 'the first join made a connect attempt');

            const secondMs = await rawJoinError(r, `realtime:${unique('slow')}`, UNABLE);
            assert.ok(secondMs < SLOW_MS, `a join inside the retry window must fail at once; answered after ${secondMs} ms (a connect attempt takes ≥ ${SLOW_MS} ms)`);
            assert.equal(listener.accepted, attempts, 'no connect attempt inside the retry window');
            await assertAlive(r, 'after the failed joins');

            // After the window, a join connects again (and fails again, after the hold). Time
            // passing is the behaviour here: inside the window the join below makes no attempt.
            const wait = failedAt + CONNECT_RETRY_MS + 300 - Date.now();
            if (wait > 0) await sleep(wait);
            const thirdMs = await rawJoinError(r, `realtime:${unique('slow')}`, UNABLE, SLOW_MS * 4 + 10_000);
            assert.ok(listener.accepted > attempts, `a join after the retry window makes a new attempt (accepted ${listener.accepted}, before ${attempts})`);
            assert.ok(thirdMs >= SLOW_MS, `the join after the window waited for the new attempt: ${thirdMs} ms`);
        });

        test('wrong password: public joins fail with UnableToConnectToProject', async () => {
            const r = await raw('tdb-badpw');
            await rawJoinError(r, `realtime:${unique('badpw')}`, UNABLE);
            const client = pool.client({ tenant: 'tdb-badpw', token: tokenFor() });
            await clientJoinError(client, client.channel(unique('badpw-js')), UNABLE);
            await assertAlive(r, 'after the failed joins');
            const conns = await serverConnections(su, DB_SFX);
            assert.equal(conns.total, 0, `no connection was established: ${show(conns)}`);
            assert.equal((await health(api, 'tdb-badpw')).db_connected, false);
        });

        test('a tenant without a database extension joins without any database', async () => {
            const r = await raw('tdb-none');
            const started = Date.now();
            const plain = await r.join(`realtime:${unique('none')}`);
            assert.deepEqual(plain.payload, { status: 'ok', response: { postgres_changes: [] } });
            assert.ok(Date.now() - started < 1000, `public join answered after ${Date.now() - started} ms`);

            // realtime-js: a public channel subscribes.
            const client = pool.client({ tenant: 'tdb-none', token: tokenFor() });
            await joinChannel(client.channel(unique('none-js')));

            // postgres_changes: the join succeeds, then the system error says why nothing will come.
            const name = unique('none-pgc');
            const ch = client.channel(name);
            const system = new Recorder(`system messages of ${name}`);
            ch.on('postgres_changes', { event: '*', schema: 'public', table: 'items' }, () => {});
            ch.on('system', {}, system.fn);
            await joinChannel(ch);
            const msg = await system.next((m) => m?.extension === 'postgres_changes', 5000, 'the postgres_changes system message');
            assert.deepEqual(msg, { extension: 'postgres_changes', status: 'error', message: NO_DB, channel: name });

            // Private channels need the database's RLS policies.
            await clientJoinError(client, client.channel(unique('none-priv'), { config: { private: true } }), UNABLE);
            const priv = await r.join(`realtime:${unique('none-priv-raw')}`, { config: { private: true } });
            assert.deepEqual(priv.payload, { status: 'error', response: { reason: UNABLE } });
            await assertAlive(r, 'after the private join error');

            const h = await health(api, 'tdb-none');
            assert.equal(h.db_connected, false, `health ${show(h)}`);
        });

        test('the persistent slot with SLOT_NAME_SUFFIX: supabase_realtime_replication_slot_<suffix>, temporary = false', async () => {
            const expected = `supabase_realtime_replication_slot_${SLOT_SUFFIX}`;
            assert.equal(await slot(su, expected), undefined, 'no slot before the first join');
            const client = pool.client({ tenant: 'tdb-sfx', token: tokenFor() });
            await itemsChannel(client, unique('sfx'));
            const s = await slot(su, expected);
            assert.deepEqual(s, { temporary: 'f', slot_type: 'logical', plugin: 'pgoutput', database: DB_SFX },
                `slot ${expected}; slots: ${show(await su.rows('SELECT slot_name, temporary, database FROM pg_replication_slots'))}`);
        });
    });

    describe('lifecycle (TENANT_DB_IDLE_TIMEOUT_IN_MS=1000, TENANT_DB_POOL_SIZE=2)', () => {
        let server;
        let pool;
        let api;
        let dbOk; // the realtime role on rt_tdb_ok
        let dbShut;
        let hanging; // a fake database whose connect attempts outlast the idle timeout

        before(async () => {
            dbOk = psqlAs(pg.env, { database: DB_OK });
            dbShut = psqlAs(pg.env, { database: DB_SHUT });
            hanging = await droppingListener(HANG_MS);
            server = await startServer({
                tenants: [
                    tenantSeed('tdb-ok', SECRET, pg.env, DB_OK, { settings: { slot_name: SLOT_OK } }),
                    tenantSeed('tdb-shut', SECRET, pg.env, DB_SHUT),
                    {
                        external_id: 'tdb-hang',
                        jwt_secret: SECRET,
                        extensions: [{ type: 'postgres_cdc_rls', settings: cdcSettings(pg.env, DB_OK, { db_host: '127.0.0.1', db_port: String(hanging.port) }) }],
                    },
                ],
                env: { TENANT_DB_IDLE_TIMEOUT_IN_MS: String(IDLE_TIMEOUT_MS), TENANT_DB_POOL_SIZE: String(POOL_SIZE) },
            });
            pool = new ClientPool(server);
            api = adminApi(server, { token: operatorToken(SELF_HOST_SECRET) });
        });
        afterEach(() => pool?.cleanup());
        after(async () => {
            let result;
            if (server) result = await server.stop();
            if (hanging) await hanging.close();
            if (result) assert.equal(result.crashedBeforeStop, null, `server exited during the tests:\n${result.stderr}`);
        });

        const client = (tenant = 'tdb-ok', opts = {}) => pool.client({ tenant, token: tokenFor(), ...opts });

        test('the first join runs the migrations and succeeds; health reports db_connected while a client is joined; TENANT_DB_POOL_SIZE query connections plus one walsender', async () => {
            assert.equal(await dbOk.value(`SELECT to_regclass('realtime.qtrealtime_migrations') IS NULL`), 't', 'no migrations before the first join');
            assert.equal((await serverConnections(su, DB_OK)).total, 0, 'no connection before the first join');
            const idle = await health(api, 'tdb-ok');
            assert.equal(idle.db_connected, false, `health before the first join ${show(idle)}`);

            const c = client('tdb-ok', { timeout: FIRST_JOIN_MS });
            await joinChannel(c.channel(unique('first')), { timeoutMs: FIRST_JOIN_MS });

            assert.ok(Number(await dbOk.value('SELECT count(*) FROM realtime.qtrealtime_migrations')) > 0, 'realtime.qtrealtime_migrations has rows');
            assert.equal(await dbOk.value(`SELECT to_regclass('realtime.subscription') IS NOT NULL`), 't', 'realtime.subscription exists');
            const h = await health(api, 'tdb-ok');
            assert.equal(h.db_connected, true, `health while joined ${show(h)}`);
            assert.equal(h.connected_cluster, 1, `health while joined ${show(h)}`);

            // Without postgres_changes subscribers the change stream (the walsender) starts 5 s
            // after connecting, so that changes a restart left in the slot wait for the
            // subscribers who rejoin; a subscriber starts it at once.
            let conns;
            await waitFor(async () => {
                conns = await serverConnections(su, DB_OK);
                return conns.client === POOL_SIZE && conns.walsender === 1 && conns.other === 0;
            }, 12_000, `${POOL_SIZE} query connections and one walsender`, () => conns);
        });

        test('the persistent slot: named after the slot_name setting, temporary = false', async () => {
            const c = client();
            await joinChannel(c.channel(unique('slot')), { timeoutMs: FIRST_JOIN_MS });
            let s;
            await waitFor(async () => (s = await slot(su, SLOT_OK)), 10_000, `slot ${SLOT_OK}`, () => s);
            assert.deepEqual(s, { temporary: 'f', slot_type: 'logical', plugin: 'pgoutput', database: DB_OK });
        });

        test('idle stop: after the last client leaves the connections close and health says db_connected false; the next join reconnects and postgres_changes work again', async () => {
            const c = client();
            const first = await itemsChannel(c, unique('idle-a'));
            await insertArrives(dbOk, first.changes, 1);
            // A joined client keeps the connection open well past the idle timeout (time passing is
            // the behaviour here).
            const joinedAt = Date.now();
            await sleep(IDLE_TIMEOUT_MS * 2 + 500);
            assert.ok(Date.now() - joinedAt > IDLE_TIMEOUT_MS * 2, 'checked after twice the idle timeout');
            const busy = await serverConnections(su, DB_OK);
            assert.ok(busy.client > 0 && busy.walsender === 1, `connections while a client is joined: ${show(busy)}`);
            assert.equal((await health(api, 'tdb-ok')).db_connected, true);

            await pool.cleanup();
            const leftAt = Date.now();
            await waitNoConnections(su, DB_OK, IDLE_CLOSE_MS, 'after the last client left');
            const closedAfter = Date.now() - leftAt;
            assert.ok(closedAfter >= IDLE_TIMEOUT_MS - 200, `closed ${closedAfter} ms after the last client left (idle timeout ${IDLE_TIMEOUT_MS} ms)`);
            const h = await health(api, 'tdb-ok');
            assert.equal(h.db_connected, false, `health after the idle stop ${show(h)}`);
            assert.equal(h.replication_connected, false, `health after the idle stop ${show(h)}`);
            const kept = await slot(su, SLOT_OK);
            assert.equal(kept?.temporary, 'f', `the slot stays after the idle stop: ${show(kept)}`);

            const again = await itemsChannel(client(), unique('idle-b'));
            const conns = await serverConnections(su, DB_OK);
            assert.ok(conns.client > 0 && conns.walsender === 1, `connections after the rejoin: ${show(conns)}`);
            assert.equal((await health(api, 'tdb-ok')).db_connected, true);
            await insertArrives(dbOk, again.changes, 2);
        });

        test('POST /api/tenants/<id>/shutdown returns 204 and closes the connections while a client stays joined; the next join reconnects', async () => {
            const c = client('tdb-shut');
            const plain = c.channel(unique('shut-a'));
            await joinChannel(plain, { timeoutMs: FIRST_JOIN_MS });
            let conns;
            await waitFor(async () => (conns = await serverConnections(su, DB_SHUT)).total > 0, 5000, 'connections to rt_tdb_shut',
                () => conns);
            assert.equal((await health(api, 'tdb-shut')).db_connected, true);

            const res = await api.shutdown('tdb-shut');
            assert.equal(res.status, 204, `shutdown: ${res.status} ${res.body}`);
            assert.equal(res.body, '');
            // The client is still joined, so this is the shutdown, not the idle stop.
            await waitNoConnections(su, DB_SHUT, 5000, 'after the shutdown');
            const h = await health(api, 'tdb-shut');
            assert.equal(h.db_connected, false, `health after the shutdown ${show(h)}`);
            assert.equal(h.connected_cluster, 1, `the socket stays: ${show(h)}`);
            assert.equal(plain.state, 'joined', 'the channel stays joined');

            const again = await itemsChannel(c, unique('shut-b'));
            const after = await serverConnections(su, DB_SHUT);
            assert.ok(after.client > 0 && after.walsender === 1, `connections after the rejoin: ${show(after)}`);
            assert.equal((await health(api, 'tdb-shut')).db_connected, true);
            await insertArrives(dbShut, again.changes, 1);
        });

        test('a connect attempt that outlasts the idle timeout still answers the join, and the socket lives on', async () => {
            // The idle sweep sees a tenant with no connected users while its first join waits for
            // the database; it must not drop that database (and the join's answer) mid-connect.
            const r = pool.track(await RawClient.connect(server, { vsn: '2.0.0', token: tokenFor(), host: server.hostFor('tdb-hang') }));
            const before = hanging.accepted;
            const started = Date.now();
            let reply;
            try {
                reply = await r.join(`realtime:${unique('hang')}`, { timeoutMs: HANG_MS + 5000 });
            } catch (err) {
                assert.fail(`no join reply ${Date.now() - started} ms after the join (the fake database drops each connection after ${HANG_MS} ms; idle timeout ${IDLE_TIMEOUT_MS} ms, accepted ${hanging.accepted - before} connection(s)): ${err.message.slice(0, 200)}`);
            }
            assert.deepEqual(reply.payload, { status: 'error', response: { reason: UNABLE } }, `join reply ${reply.text}`);
            assert.ok(hanging.accepted > before, 'the join made a connect attempt');
            await assertAlive(r, 'after the slow failed join');
        });
    });
});
