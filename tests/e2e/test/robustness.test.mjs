// Races a well-behaved server must survive: channels and sockets that go away while the server is
// still working on them.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { startServer } from '../lib/server.mjs';
import { ClientPool, joinChannel, selfHostToken } from '../lib/clients.mjs';
import { RawClient } from '../lib/raw.mjs';
import { VSNS } from '../lib/util.mjs';

let server;
let pool;
let seq = 0;

// One server per test: a crash must not take the other tests down with it. A crash is reported by
// the test that caused it (assertServerAlive).
beforeEach(async () => {
    server = await startServer();
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
        test('a presence-enabled channel left or closed right after its join does not crash the server', {
            todo: 'server: SIGSEGV in PresenceStore::requestStateAsync (FINDINGS.md #1)',
        }, async () => {
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

        test('a socket dropped right after a track (presence turned on by the track) does not crash the server', {
            todo: 'server: SIGSEGV in PresenceStore::requestStateAsync (FINDINGS.md #1)',
        }, async () => {
            await dropSockets('realtime:tracker-drop', { track: true });
            await new Promise((r) => setTimeout(r, 100));
            await assertServerAlive(vsn, 'after sockets dropped right after a track');
        });
    });
}
