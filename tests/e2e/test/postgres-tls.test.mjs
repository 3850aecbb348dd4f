// TLS to PostgreSQL (issue 18 part 4) against a real PostgreSQL 15 with ssl = on and a throwaway
// CA (tests/support/postgres/pg-cluster.sh: the server's certificate names only `localhost`):
// the control plane with DB_SSLMODE=verify-full and DB_SSLROOTCERT connects over TLS and refuses
// a host name the certificate does not carry; a tenant database with ssl_enforced is verified
// against TENANT_DB_SSLROOTCERT (verify-full), postgres_changes flow over it, and a wrong host
// name is refused with upstream's UnableToConnectToProject.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startPgCluster } from '../lib/admin.mjs';
import { ClientPool, subscribe } from '../lib/clients.mjs';
import { token } from '../lib/jwt.mjs';
import { createDatabase, PG_BIN, pgBinariesPresent, psqlAs, tenantSeed } from '../lib/pg.mjs';
import { startServer } from '../lib/server.mjs';
import { Recorder } from '../lib/util.mjs';

const skip = !pgBinariesPresent() && `PostgreSQL 15 binaries not found in ${PG_BIN}`;
const SECRET = 'postgres-tls-tenant-secret-0123456789abcdef';
const DB_ENC_KEY = '0123456789abcdef';
const DB = 'rt_pg_tls';
const UNABLE = 'UnableToConnectToProject: Realtime was unable to connect to the project database';

describe('TLS to PostgreSQL', { skip }, () => {
    let dir;
    let pg;

    before(async () => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rt-e2e-pgtls-'));
        pg = await startPgCluster(path.join(dir, 'pg'));
        await createDatabase(pg.env, DB);
        await psqlAs(pg.env, { database: DB }).exec(`
CREATE TABLE items (id int PRIMARY KEY, label text);
GRANT SELECT ON items TO anon, authenticated;
CREATE PUBLICATION supabase_realtime FOR TABLE items;`);
    });

    after(async () => {
        await pg?.stop();
        if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    /** Connections of application_name `app` to `database`, and how many of them use TLS. */
    async function connections(database, app = 'qtrealtime') {
        const out = await pg.psql(`SELECT count(*), count(*) FILTER (WHERE s.ssl) FROM pg_stat_activity a
            JOIN pg_stat_ssl s USING (pid) WHERE a.datname = '${database}' AND a.application_name = '${app}'`);
        const [all, tls] = out.split('|').map(Number);
        return { all, tls };
    }

    function controlPlane(extra) {
        return { ...pg.serverEnv, DB_HOST: 'localhost', DB_ENC_KEY, DB_SSLMODE: 'verify-full', DB_SSLROOTCERT: pg.env.RT_PG_SSL_ROOT_CERT, ...extra };
    }

    test('the control plane connects with verify-full, over TLS', async () => {
        const server = await startServer({ env: controlPlane() });
        try {
            const seen = await connections(pg.env.RT_PG_CONTROL_DB);
            assert.ok(seen.all >= 1, `control-plane connections: ${JSON.stringify(seen)}`);
            assert.equal(seen.tls, seen.all, 'every control-plane connection uses TLS');
        } finally {
            await server.stop();
        }
    });

    test('the control plane refuses a host name the certificate does not name, and verify-full needs a CA', async () => {
        await assert.rejects(startServer({ env: controlPlane({ DB_HOST: '127.0.0.1' }) }),
            /does not match host name "127\.0\.0\.1"/);
        await assert.rejects(startServer({ env: controlPlane({ DB_SSLROOTCERT: '' }) }),
            /DB_SSLMODE=verify-full \(--db-sslmode\) needs DB_SSLROOTCERT \(--db-sslrootcert\)/);
        await assert.rejects(startServer({ env: controlPlane({ DB_SSLMODE: 'sometimes' }) }),
            /invalid DB_SSLMODE \(--db-sslmode\): "sometimes"; expected disable, allow, prefer, require, verify-ca or verify-full/);
    });

    describe('tenant databases with ssl_enforced', () => {
        let server;
        let pool;

        before(async () => {
            const tenants = [
                tenantSeed('pgtls', SECRET, pg.env, DB, { settings: { db_host: 'localhost', ssl_enforced: true } }),
                tenantSeed('pgtlswrong', SECRET, pg.env, DB, { settings: { db_host: '127.0.0.1', ssl_enforced: true } }),
            ];
            server = await startServer({ tenants, env: { TENANT_DB_SSLROOTCERT: pg.env.RT_PG_SSL_ROOT_CERT } });
            pool = new ClientPool(server);
        });

        after(async () => {
            await pool?.cleanup();
            await server?.stop();
        });

        test('postgres_changes flow over a verified TLS connection', async () => {
            const client = pool.client({ tenant: 'pgtls', token: token(SECRET, { role: 'anon' }) });
            const ch = client.channel('items');
            const changes = new Recorder('changes over TLS');
            ch.on('postgres_changes', { event: 'INSERT', schema: 'public', table: 'items' }, changes.fn);
            const system = new Recorder('system messages');
            ch.on('system', {}, system.fn);
            const statuses = subscribe(ch, 20_000);
            assert.equal((await statuses.next(() => true, 21_000, 'a subscribe status')).status, 'SUBSCRIBED');
            await system.next((m) => m?.message === 'Subscribed to PostgreSQL', 20_000, 'Subscribed to PostgreSQL');
            await psqlAs(pg.env, { database: DB }).exec(`INSERT INTO items VALUES (1, 'over tls')`);
            const change = await changes.next(() => true, 10_000, 'the insert');
            assert.deepEqual(change.new, { id: 1, label: 'over tls' });
            const seen = await connections(DB);
            assert.ok(seen.all >= 2, `tenant connections: ${JSON.stringify(seen)}`);
            assert.equal(seen.tls, seen.all, 'every tenant connection (queries and replication) uses TLS');
        });

        test('a tenant database whose certificate does not name db_host is refused', async () => {
            const client = pool.client({ tenant: 'pgtlswrong', token: token(SECRET, { role: 'anon' }) });
            const ch = client.channel('items-wrong');
            ch.on('postgres_changes', { event: '*', schema: 'public', table: 'items' }, () => {});
            const statuses = subscribe(ch, 20_000);
            const first = await statuses.next(() => true, 21_000, 'a subscribe status');
            client.removeChannel(ch).catch(() => {});
            assert.equal(first.status, 'CHANNEL_ERROR');
            assert.equal(first.err.message, UNABLE);
            assert.match(server.stderr(), /does not match host name "127\.0\.0\.1"|certificate/);
        });
    });
});
