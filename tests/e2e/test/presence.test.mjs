// Presence (server-protocol §5, client-protocol §9) and presence-visible socket lifecycle.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { startServer } from '../lib/server.mjs';
import { token } from '../lib/jwt.mjs';
import { ClientPool, disconnect, joinChannel, selfHostToken } from '../lib/clients.mjs';
import { RawClient } from '../lib/raw.mjs';
import { Recorder, VSNS, waitFor } from '../lib/util.mjs';

const SMALL_SECRET = 'small-payload-tenant-secret-0123456789abcd';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

let server;
let pool;
let seq = 0;
const unique = (name) => `${name}-${++seq}`;

before(async () => {
    server = await startServer({
        tenants: [
            { external_id: 'small', jwt_secret: SMALL_SECRET, max_payload_size_in_kb: 1 },
            { external_id: 'presence-on', jwt_secret: SMALL_SECRET, presence_enabled: true },
        ],
    });
    pool = new ClientPool(server);
});
afterEach(() => pool.cleanup());
after(async () => {
    const result = await server.stop();
    assert.equal(result.crashedBeforeStop, null, `server exited during the tests:\n${result.stderr}`);
});

/**
 * A realtime-js channel with presence listeners; records join/leave/sync payloads.
 * opts.key: presence key ('' → server generated); opts.listen=false: no presence listeners.
 */
async function presenceMember(vsn, sub, { key, listen = true, tenant, token: tok } = {}) {
    const client = pool.client({ vsn, tenant, token: tok });
    const config = key === undefined ? {} : { presence: { key } };
    const ch = client.channel(sub, { config });
    const joins = new Recorder(`presence joins (${vsn} ${key})`);
    const leaves = new Recorder(`presence leaves (${vsn} ${key})`);
    const syncs = new Recorder(`presence syncs (${vsn} ${key})`);
    const system = new Recorder('system');
    if (listen) {
        ch.on('presence', { event: 'join' }, joins.fn);
        ch.on('presence', { event: 'leave' }, leaves.fn);
        ch.on('presence', { event: 'sync' }, () => syncs.push(ch.presenceState()));
    }
    ch.on('system', {}, system.fn);
    await joinChannel(ch);
    return { client, ch, joins, leaves, syncs, system };
}

async function raw(vsn, { tenant, token: tok = selfHostToken() } = {}) {
    return pool.track(await RawClient.connect(server, { vsn, token: tok, host: tenant ? server.hostFor(tenant) : undefined }));
}

const strip = (metas) => metas.map(({ presence_ref: ref, ...rest }) => {
    assert.equal(typeof ref, 'string', 'every meta has a presence_ref string');
    assert.ok(ref.length > 0);
    return rest;
});

for (const vsn of VSNS) {
    describe(`presence vsn ${vsn}`, () => {
        test('track → join event with the configured key and the tracked fields (self and others)', async () => {
            const sub = unique('track');
            const alice = await presenceMember(vsn, sub, { key: 'alice' });
            const bob = await presenceMember(vsn, sub, { key: 'bob' });
            assert.equal(await alice.ch.track({ name: 'Alice', online_at: '2024-05-01T12:00:00Z' }), 'ok');
            for (const m of [alice, bob]) {
                const join = await m.joins.next((j) => j.key === 'alice', 2000, 'join of alice');
                assert.equal(join.event, 'join');
                assert.deepEqual(strip(join.newPresences), [{ name: 'Alice', online_at: '2024-05-01T12:00:00Z' }]);
                assert.deepEqual(join.currentPresences, []);
                await waitFor(() => m.ch.presenceState().alice, 1000, 'alice in presenceState()');
                assert.deepEqual(strip(m.ch.presenceState().alice), [{ name: 'Alice', online_at: '2024-05-01T12:00:00Z' }]);
            }
        });

        test('a track made while joining is flushed after the join reply and succeeds', async () => {
            const sub = unique('early-track');
            const watcher = await presenceMember(vsn, sub, { key: 'watcher' });
            const client = pool.client({ vsn });
            const ch = client.channel(sub, { config: { presence: { key: 'early' } } });
            const joins = new Recorder('joins');
            ch.on('presence', { event: 'join' }, joins.fn);
            ch.subscribe();
            const tracked = ch.track({ early: true }); // pushed before SUBSCRIBED
            assert.equal(await tracked, 'ok');
            await watcher.joins.next((j) => j.key === 'early', 2000, 'watcher sees the early tracker');
            await joins.next((j) => j.key === 'early', 2000, 'the tracker sees itself');
        });

        test('presence_state after join: sync fires with the existing members', async () => {
            const sub = unique('state');
            const alice = await presenceMember(vsn, sub, { key: 'alice' });
            assert.equal(await alice.ch.track({ name: 'Alice' }), 'ok');
            await alice.joins.next((j) => j.key === 'alice', 2000, 'own join');
            const carol = await presenceMember(vsn, sub, { key: 'carol' });
            const state = await carol.syncs.next((s) => s.alice, 2000, 'sync containing alice');
            assert.deepEqual(Object.keys(state), ['alice']);
            assert.deepEqual(strip(state.alice), [{ name: 'Alice' }]);
            const join = await carol.joins.next((j) => j.key === 'alice', 1000, 'join of alice from presence_state');
            assert.deepEqual(strip(join.newPresences), [{ name: 'Alice' }]);
        });

        test('raw: presence_state is a channel push (join_ref, ref null) of {key:{metas:[{phx_ref,...}]}}', async () => {
            const sub = unique('state-raw');
            const topic = `realtime:${sub}`;
            const a = await raw(vsn);
            const ja = await a.join(topic, { config: { presence: { key: 'ka', enabled: true } } });
            const emptyState = await a.frames.next((f) => f.event === 'presence_state', 2000, 'presence_state for a', 0);
            assert.deepEqual(emptyState.payload, {});
            assert.ok(a.frames.items.indexOf(emptyState) > a.frames.items.indexOf(ja), 'presence_state after the join reply');
            const tref = a.push(topic, 'presence', { type: 'presence', event: 'track', payload: { v: 1 } }, { joinRef: ja.joinRef });
            assert.deepEqual((await a.reply(tref)).payload, { status: 'ok', response: {} });
            const diff = await a.frames.next((f) => f.event === 'presence_diff', 2000, 'own presence_diff');
            assert.equal(diff.ref, null);
            if (vsn === '2.0.0') assert.equal(diff.join_ref, null, 'presence_diff is fastlane (join_ref null)');
            assert.deepEqual(Object.keys(diff.payload).sort(), ['joins', 'leaves']);
            assert.deepEqual(diff.payload.leaves, {});
            const [meta] = diff.payload.joins.ka.metas;
            assert.equal(typeof meta.phx_ref, 'string');
            assert.deepEqual({ ...meta, phx_ref: undefined }, { v: 1, phx_ref: undefined });

            const b = await raw(vsn);
            const jb = await b.join(topic, { config: { presence: { key: 'kb', enabled: true } } });
            const state = await b.frames.next((f) => f.event === 'presence_state', 2000, 'presence_state for b', 0);
            assert.equal(state.ref, null);
            if (vsn === '2.0.0') assert.equal(state.join_ref, jb.joinRef, 'presence_state carries the join_ref');
            assert.deepEqual(state.payload, { ka: { metas: [{ phx_ref: meta.phx_ref, v: 1 }] } });
        });

        test('two channels tracking under the same key → one key with two metas; one leaves → one meta', async () => {
            const sub = unique('same-key');
            const a = await presenceMember(vsn, sub, { key: 'shared' });
            const b = await presenceMember(vsn, sub, { key: 'shared' });
            const watcher = await presenceMember(vsn, sub, { key: 'watcher' });
            assert.equal(await a.ch.track({ device: 'phone' }), 'ok');
            assert.equal(await b.ch.track({ device: 'laptop' }), 'ok');
            await waitFor(() => watcher.ch.presenceState().shared?.length === 2, 2000, 'two metas under "shared"',
                () => watcher.ch.presenceState());
            assert.deepEqual(strip(watcher.ch.presenceState().shared).map((m) => m.device).sort(), ['laptop', 'phone']);
            assert.equal(await a.ch.untrack(), 'ok');
            const leave = await watcher.leaves.next((l) => l.key === 'shared', 2000, 'leave of one meta');
            assert.deepEqual(strip(leave.leftPresences), [{ device: 'phone' }]);
            assert.deepEqual(strip(leave.currentPresences), [{ device: 'laptop' }], 'the other meta remains');
            assert.deepEqual(strip(watcher.ch.presenceState().shared), [{ device: 'laptop' }]);
            // A late joiner's presence_state has the remaining meta only.
            const late = await presenceMember(vsn, sub, { key: 'late' });
            const state = await late.syncs.next((st) => st.shared, 2000, 'sync with shared');
            assert.deepEqual(strip(state.shared), [{ device: 'laptop' }]);
        });

        test('raw: a rejoin gets a fresh presence_state carrying the new join_ref', async () => {
            const topic = `realtime:${unique('rejoin-presence')}`;
            const c = await raw(vsn);
            const first = await c.join(topic, { config: { presence: { key: 'k', enabled: true } } });
            await c.frames.next((f) => f.event === 'presence_state', 2000, 'first presence_state', 0);
            c.push(topic, 'presence', { type: 'presence', event: 'track', payload: { n: 1 } }, { joinRef: first.joinRef });
            await c.frames.next((f) => f.event === 'presence_diff', 2000, 'own diff', 0);
            const mark = c.frames.mark();
            const second = await c.join(topic, { config: { presence: { key: 'k', enabled: true } } });
            const state = await c.frames.next((f) => f.event === 'presence_state', 2000, 'presence_state after rejoin', mark);
            if (vsn === '2.0.0') assert.equal(state.join_ref, second.joinRef);
            assert.ok(c.frames.items.indexOf(state) > c.frames.items.indexOf(second), 'after the new join reply');
            // The old join's meta goes away with the old channel: either the new state no longer
            // lists it, or a leave diff for it follows.
            if (state.payload.k) {
                await c.frames.next((f) => f.event === 'presence_diff' && f.payload.leaves.k, 1000,
                    `leave of the replaced channel's meta (state was ${state.text})`, mark);
            } else {
                assert.deepEqual(state.payload, {});
            }
        });

        test('raw: tenant presence_enabled → presence_state even without presence in the join', async () => {
            const c = await raw(vsn, { tenant: 'presence-on', token: token(SMALL_SECRET) });
            const j = await c.join(`realtime:${unique('tenant-presence')}`);
            assert.equal(j.payload.status, 'ok');
            const state = await c.frames.next((f) => f.event === 'presence_state', 2000, 'presence_state', 0);
            assert.deepEqual(state.payload, {});
        });

        test('raw: a non-string presence key is used as a string key', async () => {
            const topic = `realtime:${unique('numeric-key')}`;
            const c = await raw(vsn);
            const j = await c.join(topic, { config: { presence: { key: 123, enabled: true } } });
            await c.frames.next((f) => f.event === 'presence_state', 2000, 'presence_state', 0);
            c.push(topic, 'presence', { type: 'presence', event: 'track', payload: { a: 1 } }, { joinRef: j.joinRef });
            const diff = await c.frames.next((f) => f.event === 'presence_diff', 2000, 'diff', 0);
            assert.deepEqual(Object.keys(diff.payload.joins), ['123']);
        });

        test('untrack → leave event for everyone', async () => {
            const sub = unique('untrack');
            const alice = await presenceMember(vsn, sub, { key: 'alice' });
            const bob = await presenceMember(vsn, sub, { key: 'bob' });
            assert.equal(await alice.ch.track({ name: 'Alice' }), 'ok');
            await bob.joins.next((j) => j.key === 'alice', 2000, 'join of alice');
            await alice.joins.next((j) => j.key === 'alice', 2000, 'own join');
            assert.equal(await alice.ch.untrack(), 'ok');
            for (const m of [alice, bob]) {
                const leave = await m.leaves.next((l) => l.key === 'alice', 2000, 'leave of alice');
                assert.equal(leave.event, 'leave');
                assert.deepEqual(strip(leave.leftPresences), [{ name: 'Alice' }]);
                await waitFor(() => !m.ch.presenceState().alice, 1000, 'alice gone from presenceState()');
            }
        });

        test('a second track with a changed payload → update (leave + join); identical payload → nothing', async () => {
            const sub = unique('update');
            const alice = await presenceMember(vsn, sub, { key: 'alice' });
            const bob = await presenceMember(vsn, sub, { key: 'bob' });
            assert.equal(await alice.ch.track({ status: 'online' }), 'ok');
            const first = await bob.joins.next((j) => j.key === 'alice', 2000, 'first join');
            const firstRef = first.newPresences[0].presence_ref;
            assert.equal(await alice.ch.track({ status: 'away' }), 'ok');
            const second = await bob.joins.next((j) => j.key === 'alice' && j.newPresences[0].status === 'away', 2000, 'update join');
            assert.notEqual(second.newPresences[0].presence_ref, firstRef, 'a new phx_ref per update');
            const leave = await bob.leaves.next((l) => l.key === 'alice', 2000, 'update leave');
            assert.deepEqual(strip(leave.leftPresences), [{ status: 'online' }]);
            await waitFor(() => bob.ch.presenceState().alice?.length === 1 && bob.ch.presenceState().alice[0].status === 'away',
                1000, 'only the new meta in presenceState()', () => bob.ch.presenceState());

            assert.equal(await alice.ch.track({ status: 'away' }), 'ok');
            // Sentinel: bob's own track. The presence store handles tracks in the order they were
            // pushed (alice's was acked before bob pushed his) and sends its diffs in that order,
            // so a diff of alice's identical track would reach bob before his own join.
            assert.equal(await bob.ch.track({ b: 1 }), 'ok');
            await bob.joins.next((j) => j.key === 'bob', 2000, 'bob own join');
            assert.equal(bob.joins.filter((j) => j.key === 'alice').length, 2, 'the identical track produced no diff');
            assert.equal(bob.leaves.filter((l) => l.key === 'alice').length, 1);
        });

        test('raw: an update diff has the new meta with phx_ref_prev in joins and the old meta in leaves', async () => {
            const topic = `realtime:${unique('update-raw')}`;
            const a = await raw(vsn);
            const ja = await a.join(topic, { config: { presence: { key: 'k', enabled: true } } });
            await a.frames.next((f) => f.event === 'presence_state', 2000, 'presence_state', 0);
            a.push(topic, 'presence', { type: 'presence', event: 'track', payload: { n: 1 } }, { joinRef: ja.joinRef });
            const d1 = await a.frames.next((f) => f.event === 'presence_diff', 2000, 'first diff', 0);
            const ref1 = d1.payload.joins.k.metas[0].phx_ref;
            const mark = a.frames.mark();
            a.push(topic, 'presence', { type: 'presence', event: 'track', payload: { n: 2 } }, { joinRef: ja.joinRef });
            const d2 = await a.frames.next((f) => f.event === 'presence_diff', 2000, 'update diff', mark);
            const [joined] = d2.payload.joins.k.metas;
            assert.equal(joined.n, 2);
            assert.equal(joined.phx_ref_prev, ref1);
            assert.notEqual(joined.phx_ref, ref1);
            assert.deepEqual(d2.payload.leaves, { k: { metas: [{ phx_ref: ref1, n: 1 }] } });
        });

        test('disconnecting a tracked client → leave seen by the others', async () => {
            const sub = unique('disconnect');
            const alice = await presenceMember(vsn, sub, { key: 'alice' });
            const bob = await presenceMember(vsn, sub, { key: 'bob' });
            assert.equal(await alice.ch.track({ name: 'Alice' }), 'ok');
            await bob.joins.next((j) => j.key === 'alice', 2000, 'join of alice');
            await disconnect(alice.client);
            const leave = await bob.leaves.next((l) => l.key === 'alice', 2000, 'leave after disconnect');
            assert.deepEqual(strip(leave.leftPresences), [{ name: 'Alice' }]);
            await waitFor(() => Object.keys(bob.ch.presenceState()).length === 0, 1000, 'empty presenceState()');
        });

        test('a dropped connection (no close frame) → leave seen by the others', async () => {
            const sub = unique('drop');
            const topic = `realtime:${sub}`;
            const bob = await presenceMember(vsn, sub, { key: 'bob' });
            const a = await raw(vsn);
            const ja = await a.join(topic, { config: { presence: { key: 'dropper', enabled: true } } });
            a.push(topic, 'presence', { type: 'presence', event: 'track', payload: {} }, { joinRef: ja.joinRef });
            await bob.joins.next((j) => j.key === 'dropper', 2000, 'join of dropper');
            a.ws._socket.destroy();
            await bob.leaves.next((l) => l.key === 'dropper', 3000, 'leave after the TCP connection dropped');
        });

        test('unsubscribe() of a tracked channel → leave seen by the others', async () => {
            const sub = unique('unsub');
            const alice = await presenceMember(vsn, sub, { key: 'alice' });
            const bob = await presenceMember(vsn, sub, { key: 'bob' });
            assert.equal(await alice.ch.track({}), 'ok');
            await bob.joins.next((j) => j.key === 'alice', 2000, 'join of alice');
            assert.equal(await alice.ch.unsubscribe(), 'ok');
            await bob.leaves.next((l) => l.key === 'alice', 2000, 'leave after unsubscribe');
        });

        test('without a configured key the server generates a UUID key', async () => {
            const sub = unique('uuid');
            const anon = await presenceMember(vsn, sub, { key: '' });
            assert.equal(await anon.ch.track({ who: 'anon' }), 'ok');
            const join = await anon.joins.next(() => true, 2000, 'own join');
            assert.match(join.key, UUID);
            assert.deepEqual(strip(join.newPresences), [{ who: 'anon' }]);
            const other = await presenceMember(vsn, sub);
            assert.equal(await other.ch.track({ who: 'other' }), 'ok');
            const join2 = await anon.joins.next((j) => j.key !== join.key, 2000, 'join of the second anonymous member');
            assert.match(join2.key, UUID);
            assert.notEqual(join2.key, join.key, 'each channel gets its own generated key');
        });

        test('track on a channel joined without presence works; the tracker gets presence_state and sees itself', async () => {
            const sub = unique('auto-enable');
            const watcher = await presenceMember(vsn, sub, { key: 'watcher' });
            const client = pool.client({ vsn });
            const ch = client.channel(sub, { config: { presence: { key: 'late' } } });
            await joinChannel(ch);
            const joinFrame = client.wire.items.find((f) => f.dir === 'out' && typeof f.data === 'string' && f.data.includes('phx_join'));
            assert.match(joinFrame.data, /"enabled":false/, 'joined without presence');
            assert.equal(await ch.track({ late: true }), 'ok');
            const join = await watcher.joins.next((j) => j.key === 'late', 2000, 'watcher sees the late tracker');
            assert.deepEqual(strip(join.newPresences), [{ late: true }]);
            await waitFor(() => ch.presenceState().late, 2000, 'the tracking client sees itself in presenceState()',
                () => ({ state: ch.presenceState(), wire: client.wire.items.map((f) => String(f.data)).slice(-4) }));
            assert.deepEqual(strip(ch.presenceState().late), [{ late: true }]);
        });

        test('raw: presence enabled:false → no presence_state; presence_diff still delivered on public channels', async () => {
            const topic = `realtime:${unique('disabled')}`;
            const quiet = await raw(vsn);
            const jq = await quiet.join(topic);
            assert.equal(jq.payload.status, 'ok');
            const tracker = await raw(vsn);
            const jt = await tracker.join(topic, { config: { presence: { key: 't', enabled: true } } });
            tracker.push(topic, 'presence', { type: 'presence', event: 'track', payload: { x: 1 } }, { joinRef: jt.joinRef });
            // The diff is the sentinel: a presence_state for quiet would have been asked of the
            // presence store at its join, before the track, and the store answers in order.
            const diff = await quiet.frames.next((f) => f.event === 'presence_diff', 2000, 'presence_diff to the member without presence');
            assert.equal(diff.payload.joins.t.metas[0].x, 1);
            assert.deepEqual(quiet.frames.items.filter((f) => f.event === 'presence_state'), []);
        });

        test('raw: track payload that is not an object → "Presence track payload must be a map"', async () => {
            const topic = `realtime:${unique('not-a-map')}`;
            const c = await raw(vsn);
            const j = await c.join(topic, { config: { presence: { key: 'k', enabled: true } } });
            for (const payload of ['str', 42, [1, 2]]) {
                const ref = c.push(topic, 'presence', { type: 'presence', event: 'track', payload }, { joinRef: j.joinRef });
                assert.deepEqual((await c.reply(ref)).payload,
                    { status: 'error', response: { reason: 'Presence track payload must be a map' } }, `payload ${JSON.stringify(payload)}`);
            }
        });

        test('raw: unknown presence event → error {}; missing event → ok; TRACK is case-insensitive', async () => {
            const topic = `realtime:${unique('presence-events')}`;
            const c = await raw(vsn);
            const j = await c.join(topic, { config: { presence: { key: 'k', enabled: true } } });
            const unknown = c.push(topic, 'presence', { type: 'presence', event: 'dance', payload: {} }, { joinRef: j.joinRef });
            assert.deepEqual((await c.reply(unknown)).payload, { status: 'error', response: {} });
            const missing = c.push(topic, 'presence', { type: 'presence', payload: {} }, { joinRef: j.joinRef });
            assert.deepEqual((await c.reply(missing)).payload, { status: 'ok', response: {} });
            const upper = c.push(topic, 'presence', { type: 'presence', event: 'TRACK', payload: { up: 1 } }, { joinRef: j.joinRef });
            assert.deepEqual((await c.reply(upper)).payload, { status: 'ok', response: {} });
            const diff = await c.frames.next((f) => f.event === 'presence_diff', 2000, 'diff from TRACK');
            assert.equal(diff.payload.joins.k.metas[0].up, 1);
        });

        test('a meta larger than the payload limit → system "Track message size exceeded" + phx_close', async () => {
            const sub = unique('big-meta');
            const topic = `realtime:${sub}`;
            const c = await raw(vsn, { tenant: 'small', token: token(SMALL_SECRET) });
            const j = await c.join(topic, { config: { presence: { key: 'k', enabled: true } } });
            // Wait for presence_state so the shutdown is the only thing under test here; a shutdown
            // racing presence_state is covered by robustness.test.mjs.
            await c.frames.next((f) => f.event === 'presence_state', 2000, 'presence_state', 0);
            c.push(topic, 'presence', { type: 'presence', event: 'track', payload: { big: 'x'.repeat(3000) } }, { joinRef: j.joinRef });
            const system = await c.frames.next((f) => f.event === 'system', 2000, 'system message');
            assert.deepEqual(system.payload, { extension: 'system', status: 'error', message: 'Track message size exceeded', channel: sub });
            const close = await c.frames.next((f) => f.event === 'phx_close', 1000, 'phx_close', 0);
            assert.equal(close.ref, j.joinRef);
        });

        test('more than 5 presence pushes in the window → system "Client presence rate limit exceeded" + phx_close', async () => {
            const sub = unique('presence-rate');
            const topic = `realtime:${sub}`;
            const c = await raw(vsn);
            const j = await c.join(topic, { config: { presence: { key: 'k', enabled: true } } });
            await c.frames.next((f) => f.event === 'presence_state', 2000, 'presence_state', 0);
            const refs = [];
            for (let i = 1; i <= 7; ++i) {
                refs.push(c.push(topic, 'presence', { type: 'presence', event: 'track', payload: { i } }, { joinRef: j.joinRef }));
            }
            const system = await c.frames.next((f) => f.event === 'system', 2000, 'system message');
            assert.deepEqual(system.payload, { extension: 'system', status: 'error', message: 'Client presence rate limit exceeded', channel: sub });
            await c.frames.next((f) => f.event === 'phx_close', 1000, 'phx_close', 0);
            for (const ref of refs.slice(0, 5)) {
                const reply = c.frames.items.find((f) => f.event === 'phx_reply' && f.ref === ref);
                assert.ok(reply, `push ${ref} within the limit is answered`);
                assert.equal(reply.payload.status, 'ok');
            }
        });
    });
}
