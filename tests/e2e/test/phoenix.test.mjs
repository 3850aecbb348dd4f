// Phoenix protocol behaviour (server-protocol §2, §2.6): heartbeats, malformed frames, unmatched
// topics, leave/rejoin, join_ref leniency and byte-exact ref echo.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { startServer } from '../lib/server.mjs';
import { ClientPool, joinChannel, selfHostToken } from '../lib/clients.mjs';
import { withoutPosition } from '../lib/positions.mjs';
import { encodeKind3, RawClient } from '../lib/raw.mjs';
import { Recorder, VSNS } from '../lib/util.mjs';

let server;
let pool;
let topicSeq = 0;
const uniqueTopic = (name) => `realtime:${name}-${++topicSeq}`;

before(async () => {
    server = await startServer();
    pool = new ClientPool(server);
});
afterEach(() => pool.cleanup());
after(async () => {
    const result = await server.stop();
    assert.equal(result.crashedBeforeStop, null, `server exited during the tests:\n${result.stderr}`);
});

async function raw(vsn) {
    return pool.track(await RawClient.connect(server, { vsn, token: selfHostToken() }));
}

/** The exact frame a server sends for a reply, in the socket's serializer. */
function expectedReply(vsn, { joinRef, ref, topic, status, response }) {
    return vsn === '2.0.0'
        ? [joinRef, ref, topic, 'phx_reply', { status, response }]
        : { topic, event: 'phx_reply', payload: { status, response }, ref };
}

/** The parsed frame in the form expectedReply() builds. */
const parsed = (vsn, frame) => (vsn === '2.0.0' ? frame.array : frame.object);

/** Sends a heartbeat and waits for its reply: proves the socket is alive and past earlier frames. */
async function heartbeat(client, ref = client.nextRef()) {
    client.push('phoenix', 'heartbeat', {}, { ref, omitJoinRef: true });
    return await client.reply(ref, 2000, 'phoenix');
}

for (const vsn of VSNS) {
    describe(`phoenix protocol vsn ${vsn}`, () => {
        test('heartbeat reply echoes the ref on topic phoenix', async () => {
            const c = await raw(vsn);
            const reply = await heartbeat(c, 'hb-1');
            assert.deepEqual(parsed(vsn, reply), expectedReply(vsn, { joinRef: null, ref: 'hb-1', topic: 'phoenix', status: 'ok', response: {} }));
        });

        test('realtime-js heartbeats are answered (onHeartbeat sees ok, sendHeartbeat works)', async () => {
            const beats = new Recorder('heartbeat callbacks');
            const client = pool.client({ vsn, heartbeatIntervalMs: 150, heartbeatCallback: beats.fn });
            const ch = client.channel('hb-room');
            await joinChannel(ch);
            await beats.next((s) => s === 'ok', 2000, 'first automatic heartbeat ok');
            const manual = new Recorder('manual heartbeat');
            client.onHeartbeat(manual.fn);
            client.sendHeartbeat();
            await manual.next((s) => s === 'ok', 2000, 'heartbeat ok after sendHeartbeat()');
            assert.deepEqual(manual.filter((s) => s === 'timeout' || s === 'error'), []);
            assert.ok(client.isConnected());
        });

        test('malformed frames are dropped and the connection stays open', async () => {
            const c = await raw(vsn);
            const garbage = [
                'garbage',
                '{',
                '',
                '42',
                'null',
                '[1,2]',
                '{"topic":"realtime:x"}',
                '{"topic":"realtime:x","event":"phx_join","payload":{}}',
                '["1","1","realtime:x"]',
                vsn === '2.0.0' ? '{"topic":"realtime:x","event":"phx_join","payload":{},"ref":"1"}' : '[null,"1","realtime:x","phx_join",{}]',
            ];
            for (const text of garbage) c.sendText(text);
            c.sendBinary(Buffer.from([9, 1, 2, 3]));
            c.sendBinary(Buffer.from([3, 200, 200, 200, 200, 0, 1, 0x41]));
            const reply = await heartbeat(c);
            assert.equal(reply.payload.status, 'ok');
            assert.equal(c.closed, null, 'connection must stay open');
            const unexpected = c.frames.items.filter((f) => f.event !== 'phx_reply' || f.topic !== 'phoenix');
            assert.deepEqual(unexpected, [], 'malformed frames must not be answered');
        });

        test('a text message split into continuation frames is reassembled; ping gets a pong', async () => {
            const c = await raw(vsn);
            const msg = vsn === '2.0.0'
                ? JSON.stringify([null, 'frag-1', 'phoenix', 'heartbeat', {}])
                : JSON.stringify({ topic: 'phoenix', event: 'heartbeat', payload: {}, ref: 'frag-1' });
            c.sendFragments([msg.slice(0, 5), msg.slice(5, 12), msg.slice(12)]);
            assert.equal((await c.reply('frag-1')).payload.status, 'ok');
            const pong = new Promise((resolve) => c.ws.once('pong', (data) => resolve(data.toString())));
            c.ws.ping('are-you-there');
            assert.equal(await pong, 'are-you-there');
        });

        test('a 4.5 MB frame is accepted; a frame over 5 MB closes the connection', async () => {
            const c = await raw(vsn);
            const pad = 'x'.repeat(4_500_000);
            c.sendText(vsn === '2.0.0'
                ? JSON.stringify([null, 'big-1', 'phoenix', 'heartbeat', { pad }])
                : JSON.stringify({ topic: 'phoenix', event: 'heartbeat', payload: { pad }, ref: 'big-1' }));
            assert.equal((await c.reply('big-1', 5000)).payload.status, 'ok');
            const tooBig = 'y'.repeat(5_100_000);
            c.sendText(vsn === '2.0.0'
                ? JSON.stringify([null, 'big-2', 'phoenix', 'heartbeat', { tooBig }])
                : JSON.stringify({ topic: 'phoenix', event: 'heartbeat', payload: { tooBig }, ref: 'big-2' }));
            const closed = await c.frames.next((f) => f.closed, 5000, 'close after an oversized frame', 0);
            assert.ok(closed.closed.code === 1009 || closed.closed.code === 1006, `close code ${closed.closed.code}`);
            assert.deepEqual(c.frames.items.filter((f) => f.ref === 'big-2'), [], 'the oversized frame is not processed');
            const again = await raw(vsn);
            assert.equal((await heartbeat(again)).payload.status, 'ok', 'the server keeps serving');
        });

        test('a client close frame is answered with a close frame', async () => {
            const c = await raw(vsn);
            const closed = new Promise((resolve) => c.ws.once('close', (code) => resolve(code)));
            const started = Date.now();
            c.ws.close(1000, 'bye');
            assert.equal(await closed, 1000);
            assert.ok(Date.now() - started < 1000, 'the server answers the close handshake promptly');
        });

        test(vsn === '2.0.0' ? 'extra array elements are ignored' : 'extra object keys are ignored', async () => {
            const c = await raw(vsn);
            c.sendText(vsn === '2.0.0'
                ? JSON.stringify([null, 'x-1', 'phoenix', 'heartbeat', {}, 'extra', 7])
                : JSON.stringify({ topic: 'phoenix', event: 'heartbeat', payload: {}, ref: 'x-1', extra: 7 }));
            assert.equal((await c.reply('x-1')).payload.status, 'ok');
        });

        test('a push on a topic that is not joined → error reply "unmatched topic"', async () => {
            const c = await raw(vsn);
            const topic = uniqueTopic('unjoined');
            const ref = c.push(topic, 'broadcast', { type: 'broadcast', event: 'x', payload: {} }, { joinRef: '5' });
            const reply = await c.reply(ref);
            assert.equal(reply.topic, topic);
            assert.deepEqual(reply.payload, { status: 'error', response: { reason: 'unmatched topic' } });
            const ref2 = c.push(topic, 'presence', { type: 'presence', event: 'track', payload: {} }, { joinRef: null });
            assert.deepEqual((await c.reply(ref2)).payload, { status: 'error', response: { reason: 'unmatched topic' } });
        });

        test('phx_join on a topic without the realtime: prefix → "unmatched topic"', async () => {
            const c = await raw(vsn);
            for (const topic of ['room1', 'foo:bar', 'REALTIME:room1', 'phoenix']) {
                const ref = c.nextRef();
                c.push(topic, 'phx_join', { config: {} }, { ref, joinRef: ref });
                const reply = await c.reply(ref);
                assert.equal(reply.topic, topic);
                assert.deepEqual(reply.payload, { status: 'error', response: { reason: 'unmatched topic' } }, `topic ${topic}`);
            }
        });

        test('phx_leave → ok reply, then phx_close with join_ref = ref = the join ref', async () => {
            const c = await raw(vsn);
            const topic = uniqueTopic('leave');
            const join = await c.join(topic);
            assert.equal(join.payload.status, 'ok');
            const jr = join.joinRef;
            const mark = c.frames.mark();
            const leaveRef = c.push(topic, 'phx_leave', {}, { joinRef: jr });
            const reply = await c.reply(leaveRef);
            assert.deepEqual(parsed(vsn, reply), expectedReply(vsn, { joinRef: jr, ref: leaveRef, topic, status: 'ok', response: {} }));
            const close = await c.frames.next((f) => f.event === 'phx_close', 2000, 'phx_close', mark);
            assert.deepEqual(parsed(vsn, close),
                vsn === '2.0.0' ? [jr, jr, topic, 'phx_close', {}] : { topic, event: 'phx_close', payload: {}, ref: jr });
            const order = c.frames.items.slice(mark).map((f) => f.event);
            assert.deepEqual(order, ['phx_reply', 'phx_close'], 'the leave reply comes before phx_close');
            // After the leave the topic is unjoined again.
            const ref = c.push(topic, 'broadcast', { type: 'broadcast', event: 'x', payload: {} }, { joinRef: jr });
            assert.deepEqual((await c.reply(ref)).payload, { status: 'error', response: { reason: 'unmatched topic' } });
        });

        test('realtime-js unsubscribe() gets ok and the channel closes', async () => {
            const client = pool.client({ vsn });
            const ch = client.channel('unsub-room');
            const statuses = await joinChannel(ch);
            assert.equal(await ch.unsubscribe(), 'ok');
            await statuses.next((s) => s.status === 'CLOSED', 2000, 'CLOSED');
            assert.equal(ch.state, 'closed');
        });

        test('phx_leave with a stale join_ref is ignored (channel stays joined)', async () => {
            const c = await raw(vsn);
            const topic = uniqueTopic('stale-leave');
            const join = await c.join(topic, { config: { broadcast: { ack: true } } });
            assert.equal(join.payload.status, 'ok');
            const mark = c.frames.mark();
            c.push(topic, 'phx_leave', {}, { joinRef: '999' });
            const ref = c.push(topic, 'broadcast', { type: 'broadcast', event: 'e', payload: {} }, { joinRef: join.joinRef });
            assert.deepEqual((await c.reply(ref)).payload, { status: 'ok', response: {} }, 'still joined');
            assert.deepEqual(c.frames.items.slice(mark).filter((f) => f.event === 'phx_close'), []);
        });

        test('phx_leave on a topic that is not joined → ok', async () => {
            const c = await raw(vsn);
            const topic = uniqueTopic('never-joined');
            const ref = c.push(topic, 'phx_leave', {}, { joinRef: '77' });
            const reply = await c.reply(ref);
            assert.equal(reply.topic, topic);
            assert.deepEqual(reply.payload, { status: 'ok', response: {} });
            await heartbeat(c);
            assert.deepEqual(c.frames.items.filter((f) => f.event === 'phx_close'), [], 'no phx_close for a topic that was never joined');
        });

        test('a second phx_join on a joined topic closes the old join (phx_close old join_ref) then replies ok', async () => {
            const c = await raw(vsn);
            const topic = uniqueTopic('rejoin');
            const first = await c.join(topic, { config: { broadcast: { ack: true, self: true } } });
            assert.equal(first.payload.status, 'ok');
            const mark = c.frames.mark();
            const second = await c.join(topic, { config: { broadcast: { ack: true, self: true } } });
            assert.deepEqual(second.payload, { status: 'ok', response: { postgres_changes: [] } });
            const frames = c.frames.items.slice(mark);
            const closeIdx = frames.findIndex((f) => f.event === 'phx_close');
            const replyIdx = frames.findIndex((f) => f.event === 'phx_reply' && f.ref === second.joinRef);
            assert.ok(closeIdx >= 0, `phx_close for the old join expected; frames ${JSON.stringify(frames.map((f) => f.text))}`);
            assert.ok(closeIdx < replyIdx, 'phx_close of the old join comes before the new join reply');
            assert.deepEqual(parsed(vsn, frames[closeIdx]),
                vsn === '2.0.0' ? [first.joinRef, first.joinRef, topic, 'phx_close', {}] : { topic, event: 'phx_close', payload: {}, ref: first.joinRef });
            if (vsn === '2.0.0') assert.equal(frames[replyIdx].join_ref, second.joinRef);
            // The new join works: an acked broadcast is answered and echoed once.
            const mark2 = c.frames.mark();
            const ref = c.push(topic, 'broadcast', { type: 'broadcast', event: 'after-rejoin', payload: { n: 1 } }, { joinRef: second.joinRef });
            assert.equal((await c.reply(ref)).payload.status, 'ok');
            await c.frames.next((f) => f.event === 'broadcast', 2000, 'self echo after rejoin', mark2);
            await heartbeat(c);
            assert.equal(c.frames.items.slice(mark2).filter((f) => f.event === 'broadcast').length, 1, 'exactly one channel instance on the topic');
        });

        test('presence track with a stale or missing join_ref is still processed', async () => {
            const c = await raw(vsn);
            const topic = uniqueTopic('lenient-presence');
            const join = await c.join(topic, { config: { presence: { key: 'k1', enabled: true } } });
            assert.equal(join.payload.status, 'ok');
            await c.frames.next((f) => f.event === 'presence_state', 2000, 'presence_state');
            const stale = c.push(topic, 'presence', { type: 'presence', event: 'track', payload: { n: 1 } }, { joinRef: '999' });
            const staleReply = await c.reply(stale);
            assert.deepEqual(staleReply.payload, { status: 'ok', response: {} });
            if (vsn === '2.0.0') assert.equal(staleReply.join_ref, join.joinRef, 'the reply carries the channel join_ref');
            const diff = await c.frames.next((f) => f.event === 'presence_diff' && f.payload.joins.k1, 2000, 'presence_diff join k1');
            assert.equal(diff.payload.joins.k1.metas[0].n, 1);
            const missing = c.push(topic, 'presence', { type: 'presence', event: 'track', payload: { n: 2 } }, { joinRef: null, omitJoinRef: true });
            const missingReply = await c.reply(missing);
            assert.deepEqual(missingReply.payload, { status: 'ok', response: {} });
            if (vsn === '2.0.0') assert.equal(missingReply.join_ref, join.joinRef, 'the reply carries the channel join_ref');
            const diff2 = await c.frames.next((f) => f.event === 'presence_diff' && f.payload.joins.k1?.metas[0].n === 2, 2000, 'presence_diff update n=2');
            assert.equal(diff2.payload.leaves.k1.metas[0].n, 1);
        });

        test('an acked broadcast with a stale or missing join_ref is still processed', async () => {
            const sender = await raw(vsn);
            const receiver = await raw(vsn);
            const topic = uniqueTopic('lenient-broadcast');
            const join = await sender.join(topic, { config: { broadcast: { ack: true, self: false } } });
            assert.equal(join.payload.status, 'ok');
            assert.equal((await receiver.join(topic)).payload.status, 'ok');
            const stale = sender.push(topic, 'broadcast', { type: 'broadcast', event: 'e', payload: { n: 1 } }, { joinRef: '999' });
            const staleReply = await sender.reply(stale);
            assert.deepEqual(staleReply.payload, { status: 'ok', response: {} });
            if (vsn === '2.0.0') assert.equal(staleReply.join_ref, join.joinRef, 'the reply carries the channel join_ref');
            const got = await receiver.frames.next((f) => f.event === 'broadcast' && f.payload.payload?.n === 1, 2000, 'broadcast n=1');
            assert.deepEqual(withoutPosition(got.payload, { offset: 1 }), { type: 'broadcast', event: 'e', payload: { n: 1 } });
            const missing = sender.push(topic, 'broadcast', { type: 'broadcast', event: 'e', payload: { n: 2 } }, { joinRef: null, omitJoinRef: true });
            const missingReply = await sender.reply(missing);
            assert.deepEqual(missingReply.payload, { status: 'ok', response: {} });
            if (vsn === '2.0.0') assert.equal(missingReply.join_ref, join.joinRef, 'the reply carries the channel join_ref');
            await receiver.frames.next((f) => f.event === 'broadcast' && f.payload.payload?.n === 2, 2000, 'broadcast n=2');
        });

        test('refs are echoed as the identical strings', async () => {
            const c = await raw(vsn);
            const topic = uniqueTopic('refs');
            for (const ref of ['007', 'ref-a', '1.0', ' 5', '18446744073709551616']) {
                const reply = await heartbeat(c, ref);
                assert.equal(reply.ref, ref);
                assert.equal(typeof reply.ref, 'string');
            }
            const join = await c.join(topic, { ref: '0042', config: { broadcast: { ack: true } } });
            assert.equal(join.ref, '0042');
            assert.ok(join.text.includes('"0042"'), `join reply must carry "0042" as a string: ${join.text}`);
            if (vsn === '2.0.0') assert.equal(join.join_ref, '0042');
            const bref = c.push(topic, 'broadcast', { type: 'broadcast', event: 'e', payload: {} }, { ref: '00099', joinRef: '0042' });
            const b = await c.reply(bref);
            assert.equal(b.ref, '00099');
            if (vsn === '2.0.0') assert.equal(b.join_ref, '0042');
        });

        test('v1 server frames have no join_ref key; v2 frames are 5-element arrays', async () => {
            const c = await raw(vsn);
            const topic = uniqueTopic('shape');
            const join = await c.join(topic, { config: { broadcast: { self: true, ack: true }, presence: { key: 'x', enabled: true } } });
            c.push(topic, 'broadcast', { type: 'broadcast', event: 'e', payload: {} }, { joinRef: join.joinRef });
            await c.frames.next((f) => f.event === 'broadcast', 2000, 'self broadcast');
            await c.frames.next((f) => f.event === 'presence_state', 2000, 'presence_state', 0);
            for (const f of c.frames.items) {
                if (vsn === '2.0.0') {
                    assert.ok(Array.isArray(f.array) && f.array.length === 5, `v2 frame shape: ${f.text}`);
                    assert.ok(f.join_ref === null || typeof f.join_ref === 'string', `join_ref type: ${f.text}`);
                    assert.ok(f.ref === null || typeof f.ref === 'string', `ref type: ${f.text}`);
                } else {
                    assert.deepEqual(Object.keys(f.object).sort(), ['event', 'payload', 'ref', 'topic'], `v1 frame keys: ${f.text}`);
                }
                assert.ok(f.payload !== null && typeof f.payload === 'object', `payload must be an object: ${f.text}`);
            }
        });

        test('an unknown event on a joined channel gets no reply', async () => {
            const c = await raw(vsn);
            const topic = uniqueTopic('unknown-event');
            const join = await c.join(topic);
            const ref = c.push(topic, 'whatever', { a: 1 }, { joinRef: join.joinRef });
            // Sentinel: the heartbeat reply; replies go out in the order of the pushes.
            await heartbeat(c);
            assert.deepEqual(c.frames.items.filter((f) => f.ref === ref), [], 'no reply to an unknown event');
            assert.equal(c.closed, null);
        });

        if (vsn === '2.0.0') {
            test('binary kind-3 with empty join_ref and ref is accepted as a broadcast', async () => {
                const sender = await raw(vsn);
                const receiver = await raw(vsn);
                const topic = uniqueTopic('kind3-empty-refs');
                await sender.join(topic);
                await receiver.join(topic);
                sender.sendBinary(encodeKind3({ joinRef: '', ref: '', topic, event: 'bin-e', payload: { z: 1 } }));
                const got = await receiver.frames.next((f) => f.binary, 2000, 'kind-4 frame');
                assert.equal(got.kind, 4);
                assert.equal(got.topic, topic);
                assert.equal(got.userEvent, 'bin-e');
                assert.equal(got.encoding, 1);
                assert.deepEqual(got.payload, { z: 1 });
                assert.equal(withoutPosition(got, { offset: 1 }).meta, undefined, 'no metadata but the position on a plain user broadcast');
            });

            test('binary kind-3 with ack: reply carries the ref and the channel join_ref; unjoined topic → unmatched topic', async () => {
                const c = await raw(vsn);
                const topic = uniqueTopic('kind3-ack');
                const join = await c.join(topic, { config: { broadcast: { ack: true } } });
                c.sendBinary(encodeKind3({ joinRef: join.joinRef, ref: 'k3-1', topic, event: 'e', payload: { a: 1 } }));
                const reply = await c.reply('k3-1');
                assert.deepEqual(reply.array, [join.joinRef, 'k3-1', topic, 'phx_reply', { status: 'ok', response: {} }]);
                const other = uniqueTopic('kind3-unjoined');
                c.sendBinary(encodeKind3({ joinRef: '1', ref: 'k3-2', topic: other, event: 'e', payload: {} }));
                const unmatched = await c.reply('k3-2');
                assert.equal(unmatched.topic, other);
                assert.deepEqual(unmatched.payload, { status: 'error', response: { reason: 'unmatched topic' } });
            });
        }
    });
}
