// JWT signing with node:crypto for every algorithm the server supports.
import crypto from 'node:crypto';

const b64url = (buf) => Buffer.from(buf).toString('base64url');
const nowSec = () => Math.floor(Date.now() / 1000);

/** Default claims: role anon, valid for an hour. */
export function claims(extra = {}) {
    return { role: 'anon', exp: nowSec() + 3600, iat: nowSec(), ...extra };
}

/**
 * Signs `payload` (an object) as a compact JWS.
 * @param {object} payload claims
 * @param {object} opts { alg: 'HS256'|'HS384'|'HS512'|'RS256'|'ES256'|'EdDSA', secret?, key?, kid?, header? }
 */
export function sign(payload, { alg = 'HS256', secret, key, kid, header = {} } = {}) {
    const head = { alg, typ: 'JWT', ...(kid !== undefined ? { kid } : {}), ...header };
    const input = `${b64url(JSON.stringify(head))}.${b64url(JSON.stringify(payload))}`;
    let sig;
    switch (alg) {
        case 'HS256':
        case 'HS384':
        case 'HS512':
            sig = crypto.createHmac(`sha${alg.slice(2)}`, secret).update(input).digest();
            break;
        case 'RS256':
        case 'RS384':
        case 'RS512':
            sig = crypto.sign(`sha${alg.slice(2)}`, Buffer.from(input), key);
            break;
        case 'ES256':
            sig = crypto.sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' });
            break;
        case 'ES384':
            sig = crypto.sign('sha384', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' });
            break;
        case 'EdDSA':
            sig = crypto.sign(null, Buffer.from(input), key);
            break;
        default:
            throw new Error(`unsupported alg ${alg}`);
    }
    return `${input}.${b64url(sig)}`;
}

/** HS256 token with default claims (overridable) for `secret`. */
export function token(secret, extraClaims = {}, opts = {}) {
    return sign(claims(extraClaims), { alg: 'HS256', secret, ...opts });
}

/** Claims that expired `secondsAgo` seconds ago. */
export function expiredClaims(secondsAgo = 60, extra = {}) {
    return { role: 'anon', exp: nowSec() - secondsAgo, iat: nowSec() - secondsAgo - 60, ...extra };
}

/**
 * Generates RSA, EC P-256 and Ed25519 key pairs with kids.
 * Returns { rsa, ec, ed } each { kid, privateKey, jwk } and `jwks` = { keys: [public JWKs] }.
 */
export function generateKeys(prefix = 'e2e') {
    const make = (type, opts, kid, alg) => {
        const { privateKey, publicKey } = crypto.generateKeyPairSync(type, opts);
        const jwk = { ...publicKey.export({ format: 'jwk' }), kid, alg, use: 'sig' };
        return { kid, privateKey, jwk };
    };
    const rsa = make('rsa', { modulusLength: 2048 }, `${prefix}-rsa`, 'RS256');
    const ec = make('ec', { namedCurve: 'P-256' }, `${prefix}-ec`, 'ES256');
    const ed = make('ed25519', {}, `${prefix}-ed`, 'EdDSA');
    return { rsa, ec, ed, jwks: { keys: [rsa.jwk, ec.jwk, ed.jwk] } };
}
