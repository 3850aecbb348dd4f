// Stream positions on delivered messages: every broadcast and postgres_changes push of a tenant
// that keeps history (history_size > 0) carries `meta.epoch` (16 lowercase hex digits) and
// `meta.offset` (1, 2, … per topic). Tests that compare a delivered message exactly check the
// position with these helpers and then compare the rest as before.
//
//   assert.deepEqual(withoutPosition(msg), { type: 'broadcast', event: 'e', payload: {} });
//
// `obj` is whatever holds the `meta` key: a realtime-js broadcast ({ type, event, payload, meta }),
// a raw binary frame (decodeBinary: { …, meta }), the payload of a raw text broadcast
// (frame.payload: { type, event, payload, …, meta }) or of a raw postgres_changes push
// ({ ids, data, meta }).
import assert from 'node:assert/strict';
import { show } from './util.mjs';

export const EPOCH_RE = /^[0-9a-f]{16}$/;

/**
 * Asserts that `obj.meta` carries a well-formed position and returns it: { epoch, offset }.
 * `expected` ({ epoch, offset }, either optional) is compared too.
 */
export function positionOf(obj, expected = {}, what = 'delivered message') {
    const meta = obj?.meta;
    assert.ok(meta !== null && typeof meta === 'object' && !Array.isArray(meta), `${what}: meta must be an object carrying the position: ${show(obj)}`);
    assert.equal(typeof meta.epoch, 'string', `${what}: meta.epoch must be a string: ${show(obj)}`);
    assert.match(meta.epoch, EPOCH_RE, `${what}: meta.epoch must be 16 lowercase hex digits: ${show(obj)}`);
    assert.ok(Number.isSafeInteger(meta.offset) && meta.offset >= 1, `${what}: meta.offset must be a positive integer: ${show(obj)}`);
    if (expected.epoch !== undefined) assert.equal(meta.epoch, expected.epoch, `${what}: epoch`);
    if (expected.offset !== undefined) assert.equal(meta.offset, expected.offset, `${what}: offset`);
    return { epoch: meta.epoch, offset: meta.offset };
}

/**
 * Asserts the position (see positionOf) and returns a shallow copy of `obj` whose `meta` lacks
 * epoch and offset; `meta` itself is left out when nothing else was in it. Key order is kept.
 */
export function withoutPosition(obj, expected = {}, what) {
    positionOf(obj, expected, what);
    const { epoch, offset, ...rest } = obj.meta;
    const copy = { ...obj };
    if (Object.keys(rest).length === 0) delete copy.meta;
    else copy.meta = rest;
    return copy;
}
