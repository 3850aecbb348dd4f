// Socket lifecycle (server-protocol §1.1, §1.6): the idle timeout closes sockets that send no
// frame; heartbeating clients stay; an idle-closed member's presence leaves. The timeout is 60 s
// upstream; the server is started with WEBSOCKET_IDLE_TIMEOUT_MS=1000 to keep this fast.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, afterEach, before, describe, test } from 'node:test';
import { serverBin, startServer } from '../lib/server.mjs';
import { ClientPool, joinChannel, selfHostToken } from '../lib/clients.mjs';
import { RawClient } from '../lib/raw.mjs';
import { Recorder, sleep, VSNS } from '../lib/util.mjs';

const IDLE_MS = 1000;

function supportsIdleOption() {
    try {
        return execFileSync(serverBin, ['--help'], { encoding: 'utf8' }).includes('WEBSOCKET_IDLE_TIMEOUT_MS');
    } catch {
        return false;
    }
}
const skip = supportsIdleOption() ? false : 'realtime-server has no WEBSOCKET_IDLE_TIMEOUT_MS option (60 s idle timeout is too slow to test)';

let server;
let pool;
let seq = 0;

before(async () => {
    if (skip) return;
    server = await startServer({ env: { WEBSOCKET_IDLE_TIMEOUT_MS: String(IDLE_MS) } });
    pool = new ClientPool(server);
});
afterEach(() => pool?.cleanup());
after(async () => {
    if (!server) return;
    const result = await server.stop();
    assert.equal(result.crashedBeforeStop, null, `server exited during the tests:\n${result.stderr}`);
});

for (const vsn of VSNS) {
    describe(`socket lifecycle vsn ${vsn}`, { skip }, () => {
        test('a socket that sends no frame is closed after the idle timeout', async () => {
            const c = pool.track(await RawClient.connect(server, { vsn, token: selfHostToken() }));
            const join = await c.join(`realtime:idle-${++seq}`);
            assert.equal(join.payload.status, 'ok');
            const quietSince = Date.now();
            await c.frames.next((f) => f.closed, IDLE_MS * 4, 'the server to close the idle socket', 0);
            const elapsed = Date.now() - quietSince;
            assert.ok(elapsed >= IDLE_MS - 50, `closed after ${elapsed} ms, before the ${IDLE_MS} ms idle timeout`);
        });

        test('a client that heartbeats stays connected past the idle timeout', async () => {
            const client = pool.client({ vsn, heartbeatIntervalMs: IDLE_MS / 4 });
            const ch = client.channel(`heartbeating-${++seq}`, { config: { broadcast: { self: true, ack: true } } });
            const got = new Recorder('broadcasts');
            ch.on('broadcast', { event: 'e' }, got.fn);
            const statuses = await joinChannel(ch);
            const joinedAt = Date.now();
            await sleep(IDLE_MS * 2.5); // time passing is the behaviour here
            assert.ok(Date.now() - joinedAt >= IDLE_MS * 2, 'connected for more than twice the idle timeout');
            assert.ok(client.isConnected(), 'still connected');
            assert.deepEqual(statuses.items.map((s) => s.status), ['SUBSCRIBED']);
            assert.equal(await ch.send({ type: 'broadcast', event: 'e', payload: {} }), 'ok');
            await got.next(() => true, 2000, 'self echo');
        });

        test('an idle-closed member\'s presence leaves for the others', async () => {
            const sub = `idle-presence-${++seq}`;
            const topic = `realtime:${sub}`;
            const watcherClient = pool.client({ vsn, heartbeatIntervalMs: IDLE_MS / 4 });
            const watcher = watcherClient.channel(sub, { config: { presence: { key: 'watcher' } } });
            const joins = new Recorder('joins');
            const leaves = new Recorder('leaves');
            watcher.on('presence', { event: 'join' }, joins.fn);
            watcher.on('presence', { event: 'leave' }, leaves.fn);
            await joinChannel(watcher);
            const idle = pool.track(await RawClient.connect(server, { vsn, token: selfHostToken() }));
            const j = await idle.join(topic, { config: { presence: { key: 'idler', enabled: true } } });
            await idle.frames.next((f) => f.event === 'presence_state', 2000, 'presence_state', 0);
            idle.push(topic, 'presence', { type: 'presence', event: 'track', payload: { idle: true } }, { joinRef: j.joinRef });
            await joins.next((x) => x.key === 'idler', 2000, 'join of the idler');
            await idle.frames.next((f) => f.closed, IDLE_MS * 4, 'idle close', 0);
            const leave = await leaves.next((x) => x.key === 'idler', 2000, 'leave of the idler');
            assert.equal(leave.leftPresences[0].idle, true);
        });
    });
}
