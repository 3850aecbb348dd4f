// An independent model of the stream picker (seed 000; server/cluster/placement/placement.h),
// written from its rules, so that placement tests compare where streams run with where the rules
// say they must run rather than with whatever the server reports.
//
//   const winners = pickedNodes('scale3', ['node1', 'node2', 'node3'], loads, [bucketA, bucketB]);

const MASK = (1n << 64n) - 1n;
const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
/** Width of the picker's time bucket (PlacementSettings::timeBucket). */
export const BUCKET_MS = 60_000;

function fnvBytes(bytes, state = FNV_OFFSET) {
    for (const b of bytes) state = ((state ^ BigInt(b)) * FNV_PRIME) & MASK;
    return state;
}

/** 64-bit FNV-1a of the UTF-8 bytes of `text`. */
export function fnv1a64(text) {
    return fnvBytes(Buffer.from(text, 'utf8'));
}

function fnvU64(value, state) {
    const bytes = [];
    for (let i = 0n; i < 8n; i++) bytes.push(Number((BigInt.asUintN(64, value) >> (8n * i)) & 0xffn));
    return fnvBytes(bytes, state);
}

class SplitMix64 {
    constructor(seed) {
        this.state = seed;
    }

    next() {
        this.state = (this.state + 0x9e3779b97f4a7c15n) & MASK;
        let z = this.state;
        z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK;
        z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK;
        return z ^ (z >> 31n);
    }

    below(bound) {
        return Number((((this.next() >> 32n) * BigInt(bound)) >> 32n));
    }
}

/** The time bucket of an instant (ms since the epoch). */
export const bucketOf = (epochMs) => Math.floor(epochMs / BUCKET_MS);

/** The two candidate indexes drawn for (tenant, bucket) among `count` sorted nodes. */
export function candidatePair(tenantId, bucket, count) {
    let seed = fnvBytes([0xff], fnv1a64(tenantId));
    seed = fnvU64(BigInt(bucket), seed);
    const rng = new SplitMix64(seed);
    const first = rng.below(count);
    let second = rng.below(count);
    if (second === first) second = (first + 1) % count;
    return [first, second];
}

/** The node that consistent hashing gives a tenant among `nodeIds` (any order). */
export function consistentNode(tenantId, nodeIds) {
    const sorted = [...nodeIds].sort();
    return sorted[Number(fnv1a64(tenantId) % BigInt(sorted.length))];
}

/**
 * The node the picker gives `tenantId` among `nodeIds` (one region) in `bucket`. `loads` maps a
 * node id to its 5-minute load; a node without an entry has "not enough data" (young).
 */
export function pickedNode(tenantId, nodeIds, loads, bucket) {
    const sorted = [...nodeIds].sort();
    if (sorted.length === 1) return sorted[0];
    const [i, j] = candidatePair(tenantId, bucket, sorted.length);
    const [a, b] = [sorted[i], sorted[j]];
    if (!(a in loads) || !(b in loads)) return consistentNode(tenantId, sorted);
    return loads[a] <= loads[b] ? a : b;
}

/** The nodes the picker may give a tenant when it decided in any of `buckets`. */
export function pickedNodes(tenantId, nodeIds, loads, buckets) {
    return [...new Set(buckets.map((bucket) => pickedNode(tenantId, nodeIds, loads, bucket)))];
}
