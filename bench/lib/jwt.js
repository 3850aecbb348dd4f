'use strict';
// Minimal HS256 JSON Web Tokens with node:crypto only.
// Used by loadgen.js (to sign the bench token), servers/ws-phx.js (to verify it, so the
// stand-in pays the same per-connection HMAC cost as Supabase Realtime does) and the
// postgres_changes loadgens (one token per user, for row level security).

const crypto = require('node:crypto');

const b64url = (buf) => Buffer.from(buf).toString('base64url');

/** Sign `claims` (an object) with `secret` using HS256; returns the compact JWT string. */
function signHS256(claims, secret) {
  const head = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
  const body = b64url(JSON.stringify(claims));
  const sig = crypto.createHmac('sha256', secret).update(`${head}.${body}`).digest('base64url');
  return `${head}.${body}.${sig}`;
}

/** The token the bench uses: role anon, valid for `ttlSec` seconds. */
function benchToken(secret, ttlSec = 3600) {
  return signHS256({ role: 'anon', exp: Math.floor(Date.now() / 1000) + ttlSec }, secret);
}

/**
 * A signer of per-user tokens {role:"authenticated", sub, exp}, all expiring `ttlSec` seconds
 * from now: `sub` is what RLS policies see as request.jwt.claims->>'sub'.
 */
function userTokens(secret, ttlSec = 3600) {
  const exp = Math.floor(Date.now() / 1000) + ttlSec;
  return (sub) => signHS256({ role: 'authenticated', sub, exp }, secret);
}

/**
 * Verify an HS256 token. Returns { ok: true, claims } or { ok: false, reason } with the
 * upstream error texts (spec/server-protocol.md §1.4), enough for a stand-in.
 */
function verifyHS256(token, secret) {
  if (typeof token !== 'string') return { ok: false, reason: 'API key is missing' };
  const parts = token.split('.');
  if (parts.length !== 3) return { ok: false, reason: 'The token provided is not a valid JWT' };
  let header;
  let claims;
  try {
    header = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8'));
    claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
  } catch {
    return { ok: false, reason: 'The token provided is not a valid JWT' };
  }
  if (header.alg !== 'HS256') {
    return { ok: false, reason: 'Failed to generate JWT signer, check your JWT secret or JWKS configuration' };
  }
  const want = crypto.createHmac('sha256', secret).update(`${parts[0]}.${parts[1]}`).digest();
  const got = Buffer.from(parts[2], 'base64url');
  if (got.length !== want.length || !crypto.timingSafeEqual(got, want)) {
    return { ok: false, reason: 'Failed to validate JWT signature' };
  }
  if (!('role' in claims) || !('exp' in claims)) {
    return { ok: false, reason: 'Fields `role` and `exp` are required in JWT' };
  }
  if (typeof claims.exp !== 'number' || claims.exp <= Date.now() / 1000) {
    return { ok: false, reason: 'Token has expired' };
  }
  return { ok: true, claims };
}

module.exports = { signHS256, benchToken, userTokens, verifyHS256 };
