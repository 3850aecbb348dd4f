// Races a well-behaved server must survive: channels and sockets that go away while the server is
// still working on them.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { startServer } from '../lib/server.mjs';
import { ClientPool, joinChannel, selfHostToken } from '../lib/clients.mjs';
import { RawClient } from '../lib/raw.mjs';
import { Recorder, VSNS, waitFor } from '../lib/util.mjs';

let server;
let pool;
let seq = 0;

// One server per test: a crash must not take the other tests down with it. A crash is reported by
// the test that caused it (assertServerAlive).
// These tests flood on purpose: the tenant's events limit (default 100/s, which closes receiving
// channels with "Too many messages per second") is raised so that they test consistency, not it.
beforeEach(async () => {
    server = await startServer({ env: { TENANT_MAX_EVENTS_PER_SECOND: '1000000' } });
    pool = new ClientPool(server);
});
afterEach(async () => {
    await pool.cleanup();
    await server.stop();
});

/** The server process is running and answers a fresh socket's heartbeat. */
async function assertServerAlive(vsn, what) {
    assert.equal(server.exitInfo(), null, `server exited ${what}: ${JSON.stringify(server.exitInfo())}\n${server.stderr()}`);
    const c = pool.track(await RawClient.connect(server, { vsn, token: selfHostToken() }));
    c.push('phoenix', 'heartbeat', {}, { ref: 'alive', omitJoinRef: true });
    assert.equal((await c.reply('alive')).payload.status, 'ok');
}

for (const vsn of VSNS) {
    describe(`robustness vsn ${vsn}`, () => {
        // Regression test for FINDINGS.md #1 (fixed in 6330dc9).
        test('a presence-enabled channel left or closed right after its join does not crash the server', async () => {
            for (let round = 0; round < 15 && server.exitInfo() === null; ++round) {
                const c = pool.track(await RawClient.connect(server, { vsn, token: selfHostToken() }));
                for (let i = 0; i < 20; ++i) {
                    const topic = `realtime:race-${++seq}`;
                    const ref = c.nextRef();
                    c.push(topic, 'phx_join', { config: { presence: { key: 'k', enabled: true } } }, { ref, joinRef: ref });
                    if (round % 2 === 0) c.push(topic, 'phx_leave', {}, { joinRef: ref });
                }
                c.close();
            }
            await assertServerAlive(vsn, 'after presence joins raced by leaves and closes');
        });

        /** Ten sockets that join the topic, push, and drop the TCP connection without a close frame. */
        async function dropSockets(topic, { track }) {
            for (let round = 0; round < 10; ++round) {
                const c = pool.track(await RawClient.connect(server, { vsn, token: selfHostToken() }));
                const ref = c.nextRef();
                c.push(topic, 'phx_join', { config: { broadcast: { ack: true } } }, { ref, joinRef: ref });
                c.push(topic, 'broadcast', { type: 'broadcast', event: 'e', payload: { round } }, { joinRef: ref });
                if (track) c.push(topic, 'presence', { type: 'presence', event: 'track', payload: { round } }, { joinRef: ref });
                c.ws._socket.destroy();
            }
        }

        test('sockets dropped in the middle of joins and broadcasts do not disturb others', async () => {
            const client = pool.client({ vsn });
            const ch = client.channel('survivor', { config: { broadcast: { self: true, ack: true } } });
            await joinChannel(ch);
            await dropSockets('realtime:survivor', { track: false });
            assert.equal(await ch.send({ type: 'broadcast', event: 'still-here', payload: {} }), 'ok');
            await assertServerAlive(vsn, 'after dropped sockets');
        });

        test('members joining and leaving during a broadcast flood: the server stays consistent', async () => {
            const topic = 'realtime:flood';
            const stable = pool.client({ vsn });
            const ch = stable.channel('flood');
            const got = new Recorder('stable member');
            ch.on('broadcast', { event: '*' }, got.fn);
            await joinChannel(ch);
            const sender = pool.track(await RawClient.connect(server, { vsn, token: selfHostToken() }));
            const sj = await sender.join(topic);
            let sending = true;
            let sent = 0;
            const flood = (async () => {
                while (sending) {
                    for (let i = 0; i < 20; ++i) {
                        sender.push(topic, 'broadcast', { type: 'broadcast', event: 'f', payload: { n: sent++ } }, { joinRef: sj.joinRef });
                    }
                    await new Promise((r) => setImmediate(r));
                }
            })();
            const churn = async () => {
                for (let k = 0; k < 8; ++k) {
                    const c = pool.track(await RawClient.connect(server, { vsn, token: selfHostToken() }));
                    const j = await c.join(topic);
                    assert.equal(j.payload.status, 'ok');
                    if (k % 2) c.push(topic, 'phx_leave', {}, { joinRef: j.joinRef });
                    c.close();
                }
            };
            await Promise.all([churn(), churn(), churn()]);
            sending = false;
            await flood;
            sender.push(topic, 'broadcast', { type: 'broadcast', event: 'last', payload: {} }, { joinRef: sj.joinRef });
            await got.next((m) => m.event === 'last', 5000, 'the last broadcast');
            const ns = got.filter((m) => m.event === 'f').map((m) => m.payload.n);
            assert.equal(ns.length, sent, 'the stable member got every flood message');
            assert.ok(ns.every((n, i) => n === i), 'in order');
            await assertServerAlive(vsn, 'after the flood');
        });

        test('presence churn across workers ends in a consistent state', async () => {
            const sub = 'churn';
            const watcherClient = pool.client({ vsn });
            const watcher = watcherClient.channel(sub, { config: { presence: { key: 'watcher' } } });
            const syncs = new Recorder('syncs');
            watcher.on('presence', { event: 'sync' }, () => syncs.push(Object.keys(watcher.presenceState()).sort()));
            await joinChannel(watcher);
            assert.equal(await watcher.track({ w: 1 }), 'ok');
            const churner = async (id) => {
                for (let k = 0; k < 4; ++k) {
                    const client = pool.client({ vsn });
                    const ch = client.channel(sub, { config: { presence: { key: `c${id}` } } });
                    await joinChannel(ch);
                    assert.equal(await ch.track({ k }), 'ok');
                    if (k % 2) assert.equal(await ch.untrack(), 'ok');
                    await client.removeChannel(ch);
                }
            };
            await Promise.all([0, 1, 2, 3, 4].map(churner));
            await waitFor(() => {
                const keys = Object.keys(watcher.presenceState());
                return keys.length === 1 && keys[0] === 'watcher';
            }, 3000, 'only the watcher left in presenceState()', () => watcher.presenceState());
            // A fresh member's presence_state agrees.
            const late = pool.client({ vsn });
            const lateCh = late.channel(sub, { config: { presence: { key: 'late' } } });
            const lateSync = new Recorder('late sync');
            lateCh.on('presence', { event: 'sync' }, () => lateSync.push(Object.keys(lateCh.presenceState()).sort()));
            await joinChannel(lateCh);
            assert.deepEqual(await lateSync.next(() => true, 2000, 'late sync'), ['watcher']);
            await assertServerAlive(vsn, 'after presence churn');
        });

        test('a socket dropped right after a track (presence turned on by the track) does not crash the server', async () => {
            await dropSockets('realtime:tracker-drop', { track: true });
            await new Promise((r) => setTimeout(r, 100));
            await assertServerAlive(vsn, 'after sockets dropped right after a track');
        });
    });
}
