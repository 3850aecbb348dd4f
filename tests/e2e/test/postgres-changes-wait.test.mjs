// config.postgres_changes_options {wait, timeout} (issue 19 part 5; realtime-js 2.119.1 sends it,
// upstream PR #2109 answers it): the join reply comes only once the channel's bindings are
// matched on the live change stream, so a row written right after SUBSCRIBED is always
// delivered, even on a tenant whose stream and slot do not exist yet; when the stream cannot
// go live in time the join fails with upstream's text. Real realtime-js, real PostgreSQL 15.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import { startPgCluster } from '../lib/admin.mjs';
import { ClientPool, subscribe } from '../lib/clients.mjs';
import { token } from '../lib/jwt.mjs';
import { createDatabase, PG_BIN, pgBinariesPresent, psqlAs, tenantSeed } from '../lib/pg.mjs';
import { startServer } from '../lib/server.mjs';
import { Recorder } from '../lib/util.mjs';

const skip = !pgBinariesPresent() && `PostgreSQL 15 binaries not found in ${PG_BIN}`;
const SECRET = 'pg-wait-tenant-secret-0123456789abcdefghijklm';
const TRIALS = 100;
let counter = 0;
const unique = (name) => `${name}-${process.pid}-${++counter}`;

describe('postgres_changes_options.wait: no write after SUBSCRIBED is missed', { skip }, () => {
    let dir;
    let pg;
    let db;
    const servers = [];
    const pools = [];

    before(async () => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rt-e2e-pgwait-'));
        pg = await startPgCluster(path.join(dir, 'pg'));
        await createDatabase(pg.env, 'rt_pgwait');
        db = psqlAs(pg.env, { database: 'rt_pgwait' });
        await db.exec(`CREATE TABLE w (id int PRIMARY KEY, v text);
                       GRANT SELECT ON w TO anon, authenticated;
                       CREATE PUBLICATION supabase_realtime FOR TABLE w;`);
    });
    afterEach(async () => {
        await Promise.all(pools.splice(0).map((p) => p.cleanup()));
    });
    after(async () => {
        for (const s of servers) await s.stop();
        await pg?.stop();
        if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    async function server(slot) {
        const s = await startServer({
            tenants: [tenantSeed('pgwait', SECRET, pg.env, 'rt_pgwait', { settings: { slot_name: slot } })],
        });
        servers.push(s);
        return s;
    }

    /** A channel that waits for its one-row binding; resolves with its first status. */
    async function waitingChannel(client, id, options = { wait: true }) {
        const ch = client.channel(unique('wait'), { config: { postgres_changes_options: options } });
        const rows = new Recorder(`row ${id}`);
        const system = new Recorder(`system messages for row ${id}`);
        ch.on('postgres_changes', { event: 'INSERT', schema: 'public', table: 'w', filter: `id=eq.${id}` }, rows.fn);
        ch.on('system', {}, system.fn);
        const statuses = subscribe(ch, 40_000);
        const first = await statuses.next(() => true, 45_000, `a status for row ${id}'s channel`);
        return { ch, rows, system, first };
    }

    test(`${TRIALS} joins with wait, each followed at once by its write: every row arrives (the first on a tenant with no stream yet)`, { timeout: 180_000 }, async () => {
        const s = await server('rt_e2e_wait_slot');
        const pool = new ClientPool(s);
        pools.push(pool);
        const client = pool.client({ tenant: 'pgwait', token: token(SECRET, {}) });
        const channels = [];
        for (let k = 0; k < TRIALS; k++) {
            const id = 1000 + k;
            const joined = await waitingChannel(client, id);
            assert.equal(joined.first.status, 'SUBSCRIBED', `trial ${k}: ${joined.first.err?.message}`);
            // The join was answered once the bindings were live: "Subscribed to PostgreSQL" has
            // been sent already (it follows the reply), and the write goes out at once.
            await db.exec(`INSERT INTO w VALUES (${id}, 'trial')`);
            channels.push({ id, ...joined });
        }
        for (const { id, rows, system } of channels) {
            const row = await rows.next((c) => c.new.id === id, 15_000, `row ${id}`);
            assert.equal(row.new.v, 'trial');
            const subscribed = system.items.find((m) => m?.extension === 'postgres_changes');
            assert.equal(subscribed?.message, 'Subscribed to PostgreSQL', `system message for row ${id}`);
        }
    });

    test('a stream that cannot go live in time: the join fails with upstream\'s timeout text', { timeout: 120_000 }, async () => {
        // One server streams the slot; a second one with the same tenant and slot cannot (a
        // slot has one reader, and an unclustered server never takes it from another).
        const holder = await server('rt_e2e_wait_busy_slot');
        const holderPool = new ClientPool(holder);
        pools.push(holderPool);
        const held = await waitingChannel(holderPool.client({ tenant: 'pgwait', token: token(SECRET, {}) }), 1);
        assert.equal(held.first.status, 'SUBSCRIBED', held.first.err?.message);
        const blocked = await server('rt_e2e_wait_busy_slot');
        const pool = new ClientPool(blocked);
        pools.push(pool);
        const client = pool.client({ tenant: 'pgwait', token: token(SECRET, {}) });
        const startedAt = Date.now();
        const refused = await waitingChannel(client, 2, { wait: true, timeout: 1500 });
        assert.equal(refused.first.status, 'CHANNEL_ERROR');
        assert.match(refused.first.err?.message ?? '',
            /^PostgresChangesSubscribeTimeout: Timed out after 1500ms waiting for the postgres_changes subscription$/);
        assert.ok(Date.now() - startedAt >= 1500, 'not before the timeout');
        refused.ch.unsubscribe();
        // Without wait the same join succeeds at once (the stream is simply not live yet).
        const plain = await waitingChannel(client, 3, { wait: false });
        assert.equal(plain.first.status, 'SUBSCRIBED');
    });
});
