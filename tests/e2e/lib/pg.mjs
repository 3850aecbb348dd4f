// SQL against a throwaway cluster (lib/admin.mjs startPgCluster) through its `psql` binary, for
// the postgres_changes and broadcast-from-database tests: tenant databases, tables owned by the
// `realtime` role, writes, and polling of tables such as realtime.subscription.
//
//   const pg = await startPgCluster(dir);
//   await createDatabase(pg.env, 'rt_x');                       // as superuser, OWNER realtime
//   const db = psqlAs(pg.env, { database: 'rt_x' });            // the realtime role
//   await db.exec('CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1)');
//   await db.value('SELECT count(*) FROM t')                    // → '1'
//   tenantSeed('x', secret, pg.env, 'rt_x')                     // SEED_TENANTS_FILE entry
//
// Scripts go through stdin (`-f -`), so every statement runs in its own transaction (autocommit)
// unless the script says BEGIN/COMMIT, and statements that refuse transaction blocks (CREATE
// DATABASE) work. ON_ERROR_STOP makes the first error reject with psql's stderr.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const PG_BIN = process.env.RT_PG_BIN || '/usr/lib/postgresql/15/bin';

/** Are the PostgreSQL 15 server binaries there (initdb, postgres, psql)? */
export function pgBinariesPresent(bin = PG_BIN) {
    return ['initdb', 'postgres', 'psql'].every((tool) => fs.existsSync(path.join(bin, tool)));
}

function psqlPath(env) {
    for (const dir of [env.RT_PG_BIN, PG_BIN]) {
        if (dir && fs.existsSync(path.join(dir, 'psql'))) return path.join(dir, 'psql');
    }
    return 'psql';
}

/** A SQL string literal ('it''s'). */
export function literal(value) {
    return `'${String(value).replace(/'/g, "''")}'`;
}

/** A SQL identifier ("Mixed Case"). */
export function ident(name) {
    return `"${String(name).replace(/"/g, '""')}"`;
}

/**
 * Runs `sql` with psql and resolves its unaligned, tuples-only output (fields separated by `|`,
 * trailing newline removed). Rejects with the exit code and stderr on any SQL error.
 * @param {object} env pg.env of the cluster
 * @param {object} opts { user, password, database, timeoutMs }
 */
export function runPsql(env, sql, { user, password, database, timeoutMs = 60_000 } = {}) {
    const args = ['-X', '-q', '-tA', '-v', 'ON_ERROR_STOP=1', '-h', env.RT_PG_HOST || env.PGHOST,
        '-p', env.RT_PG_PORT || env.PGPORT, '-U', user, '-d', database, '-f', '-'];
    return new Promise((resolve, reject) => {
        const child = spawn(psqlPath(env), args, {
            env: { ...process.env, PGPASSWORD: password ?? '', PGCONNECT_TIMEOUT: '10' },
            stdio: ['pipe', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        child.stdout.setEncoding('utf8');
        child.stderr.setEncoding('utf8');
        child.stdout.on('data', (c) => (stdout += c));
        child.stderr.on('data', (c) => (stderr += c));
        const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
        child.on('error', (err) => {
            clearTimeout(timer);
            reject(err);
        });
        child.on('close', (code, signal) => {
            clearTimeout(timer);
            if (code === 0) {
                resolve(stdout.replace(/\n$/, ''));
            } else {
                const shown = sql.length > 400 ? `${sql.slice(0, 400)}…` : sql;
                reject(new Error(`psql as ${user} on ${database} failed (${signal || `exit ${code}`}): ${stderr.trim()}\n  sql: ${shown}`));
            }
        });
        child.stdin.on('error', () => {}); // psql may exit before reading everything
        child.stdin.end(sql.endsWith(';') || sql.endsWith('\n') ? sql : `${sql};`);
    });
}

/**
 * A psql session factory for one role and database. Defaults to the realtime role (RT_PG_USER)
 * and the cluster's tenant database; `{ superuser: true }` uses the cluster superuser.
 * Returns { exec(sql) → output, value(sql) → first field of the first row, rows(sql) → arrays of
 * fields, user, database }.
 */
export function psqlAs(env, { database = env.RT_PG_TENANT_DB, superuser = false, user, password } = {}) {
    const who = superuser
        ? { user: env.RT_PG_SUPERUSER || env.PGUSER, password: env.RT_PG_SUPERPASSWORD || env.PGPASSWORD }
        : { user: user ?? env.RT_PG_USER, password: password ?? env.RT_PG_PASSWORD };
    const exec = (sql, opts = {}) => runPsql(env, sql, { ...who, database, ...opts });
    return {
        ...who,
        database,
        exec,
        async value(sql) {
            const out = await exec(sql);
            return out.split('\n')[0].split('|')[0];
        },
        async rows(sql) {
            const out = await exec(sql);
            return out === '' ? [] : out.split('\n').map((line) => line.split('|'));
        },
    };
}

/** CREATE DATABASE <name> OWNER <realtime role> (as superuser; drops a leftover first). */
export async function createDatabase(env, name) {
    const su = psqlAs(env, { database: 'postgres', superuser: true });
    await su.exec(`DROP DATABASE IF EXISTS ${ident(name)} WITH (FORCE)`);
    await su.exec(`CREATE DATABASE ${ident(name)} OWNER ${ident(env.RT_PG_USER)}`);
}

/** Settings of a postgres_cdc_rls extension pointing at `database` of the cluster. */
export function cdcSettings(env, database, extra = {}) {
    return {
        region: 'us-east-1',
        db_host: env.RT_PG_HOST,
        db_port: String(env.RT_PG_PORT),
        db_name: database,
        db_user: env.RT_PG_USER,
        db_password: env.RT_PG_PASSWORD,
        ssl_enforced: false,
        ...extra,
    };
}

/** A SEED_TENANTS_FILE entry for a tenant whose database is `database` of the cluster. */
export function tenantSeed(externalId, jwtSecret, env, database, { settings = {}, ...fields } = {}) {
    return {
        external_id: externalId,
        jwt_secret: jwtSecret,
        extensions: [{ type: 'postgres_cdc_rls', settings: cdcSettings(env, database, settings) }],
        ...fields,
    };
}
