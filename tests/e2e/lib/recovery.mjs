// Recovery scenarios shared by the single-node and the cluster tests (issue 19): the README's
// recovering channel, a paced publisher, and checks of what a subscriber received.
import assert from 'node:assert/strict';
import { Recorder, show, sleep } from './util.mjs';

const EPOCH = /^[0-9a-f]{16}$/;

/**
 * The README pattern: a channel on `sub` whose broadcast callback keeps the last position in the
 * channel's own join config, so that realtime-js' rejoins carry it:
 *   channel.on('broadcast', { event: '*' }, (msg) => {
 *     if (msg.meta?.offset) channel.params.config.broadcast.recover = { epoch: msg.meta.epoch, offset: msg.meta.offset }
 *   })
 * `recover` starts it from a saved position. Records the broadcasts (got) and every ok join reply
 * (replies: { response, received }, received = broadcasts recorded before that reply); the hook
 * is registered before subscribe and survives rejoins.
 */
export function recoveringChannel(client, sub, { recover, isPrivate = false, broadcast = {} } = {}) {
    const config = { broadcast: { self: false, ...broadcast, ...(recover ? { recover } : {}) }, ...(isPrivate ? { private: true } : {}) };
    const channel = client.channel(sub, { config });
    const got = new Recorder(`broadcasts on ${sub}`);
    const replies = new Recorder(`join replies on ${sub}`);
    channel.joinPush.receive('ok', (response) => replies.push({ response, received: got.items.length }));
    channel.on('broadcast', { event: '*' }, (msg) => {
        if (msg.meta?.offset) channel.params.config.broadcast.recover = { epoch: msg.meta.epoch, offset: msg.meta.offset };
        got.push(msg);
    });
    return { channel, got, replies };
}

/** { epoch, offset } of a message's meta. */
export const positionOf = (msg) => ({ epoch: msg?.meta?.epoch, offset: msg?.meta?.offset });

/** Asserts that `msgs` carry one epoch of the right form and offsets first, first+1, …; returns the epoch. */
export function assertConsecutive(msgs, first, what) {
    const positions = msgs.map(positionOf);
    const epoch = positions[0]?.epoch;
    assert.match(String(epoch), EPOCH, `${what}: epoch of the first message ${show(positions[0])}`);
    assert.deepEqual(positions, msgs.map((_, i) => ({ epoch, offset: first + i })), `${what}: one epoch, consecutive offsets from ${first}`);
    return epoch;
}

/** A short description of what is wrong with a sequence that should be 0..total-1. */
export function sequenceReport(seqs, total) {
    const counts = new Map();
    for (const s of seqs) counts.set(s, (counts.get(s) ?? 0) + 1);
    const missing = [];
    for (let i = 0; i < total; ++i) if (!counts.has(i)) missing.push(i);
    const duplicated = [...counts].filter(([, n]) => n > 1).map(([s]) => s);
    const firstDisorder = seqs.findIndex((s, i) => i > 0 && s <= seqs[i - 1]);
    return `${seqs.length} received of ${total}; missing ${missing.length} ${show(missing.slice(0, 20))}; `
        + `duplicated ${duplicated.length} ${show(duplicated.slice(0, 20))}; first out of order at index ${firstDisorder}`
        + (firstDisorder > 0 ? ` (${seqs[firstDisorder - 1]} then ${seqs[firstDisorder]})` : '');
}

/**
 * Publishes `total` broadcasts { event: 'n', payload: { seq } } on `channel` at `perSecond`
 * (kind-3 pushes, no ack). Returns { sent, done }: `sent` counts what went out so far, `done`
 * settles when all did.
 */
export function pacedPublisher(channel, total, perSecond) {
    const publisher = { sent: 0 };
    publisher.done = (async () => {
        const started = Date.now();
        while (publisher.sent < total) {
            const due = Math.min(total, Math.floor(((Date.now() - started) * perSecond) / 1000) + 1);
            while (publisher.sent < due) {
                const n = publisher.sent++;
                channel.send({ type: 'broadcast', event: 'n', payload: { seq: n } });
            }
            await sleep(10); // the pace of the stream, not a wait for quiet
        }
    })();
    return publisher;
}

/** The broadcast on `topic` a raw frame carries (kind-4 binary or text), as { event, payload, meta }. */
export function rawBroadcast(frame, topic) {
    if (frame.binary && frame.kind === 4 && frame.topic === topic) return { event: frame.userEvent, payload: frame.payload, meta: frame.meta };
    if (!frame.binary && frame.event === 'broadcast' && frame.topic === topic) {
        return { event: frame.payload?.event, payload: frame.payload?.payload, meta: frame.payload?.meta };
    }
    return undefined;
}

/** The broadcasts on `topic` among a raw client's frames from index `from`. */
export const rawBroadcasts = (raw, topic, from = 0) => raw.frames.items.slice(from).map((f) => rawBroadcast(f, topic)).filter(Boolean);
