#!/usr/bin/env node
'use strict';
// "Supabase Realtime in JavaScript" stand-in for the benchmark.
//
// A Node `ws` server that speaks the Phoenix channel protocol the way @supabase/realtime-js
// expects it (shared/spec/client-protocol.md §2-§5), just enough for the benchmark:
//   - path /socket/websocket (also /realtime/v1/websocket), vsn from the query string:
//     1.0.0 = JSON objects, 2.0.0 = JSON arrays (text frames only; binary kind 3 is ignored);
//   - apikey (query) or x-api-key (header) verified as an HS256 JWT when API_JWT_SECRET is set,
//     401 before the upgrade otherwise (the same per-connection HMAC cost as upstream);
//   - phx_join  -> phx_reply {"status":"ok","response":{"postgres_changes":[]}};
//   - heartbeat on topic "phoenix" -> phx_reply ok;
//   - phx_leave -> phx_reply ok; access_token -> ignored; presence -> phx_reply ok (no state);
//   - broadcast -> re-encoded ONCE per serializer per message and sent to every other member
//     of the topic (and to the sender only if it joined with broadcast.self = true):
//       v1: {"topic":T,"event":"broadcast","payload":P,"ref":null}
//       v2: [null,null,T,"broadcast",P]
//     plus an ack reply to the sender when it joined with broadcast.ack = true.
//
// Usage: node servers/ws-phx.js [port]     (or PORT=...; default 4001; binds 127.0.0.1)
//        API_JWT_SECRET=... to verify tokens (the bench passes the same secret as for ours).
//        TLS_CERT_FILE=... TLS_KEY_FILE=... (PEM) to speak https/wss only, as our server does
//        with the same variables (the wss scenarios of run.sh).

const fs = require('node:fs');
const http = require('node:http');
const https = require('node:https');
const { WebSocketServer } = require('ws');
const { verifyHS256 } = require('../lib/jwt');

const PORT = Number(process.argv[2] || process.env.PORT || 4001);
const HOST = process.env.HOST || '127.0.0.1';
const SECRET = process.env.API_JWT_SECRET || '';
const PATHS = new Set(['/socket/websocket', '/realtime/v1/websocket']);
// Both or neither, like our server: half a TLS configuration must not fall back to plaintext.
const TLS_CERT = process.env.TLS_CERT_FILE || '';
const TLS_KEY = process.env.TLS_KEY_FILE || '';
if (!TLS_CERT !== !TLS_KEY) {
  process.stderr.write('ws-phx: TLS_CERT_FILE and TLS_KEY_FILE go together\n');
  process.exit(64);
}

// topic -> Set<Member>; a member is one (socket, topic) join.
const topics = new Map();

// Pre-built option object for ws.send: text opcode, no compression, no copy.
const SEND_TEXT = { binary: false, compress: false, fin: true };

/** Encode one outgoing Phoenix message in the socket's serializer. */
function encode(vsn, joinRef, ref, topic, event, payload) {
  if (vsn === 2) return JSON.stringify([joinRef, ref, topic, event, payload]);
  // The Phoenix V1 serializer leaves join_ref out of what it sends (spec §5).
  return JSON.stringify({ topic, event, payload, ref });
}

function reply(ws, joinRef, ref, topic, status, response) {
  ws.send(encode(ws.vsn, joinRef, ref, topic, 'phx_reply', { status, response }), SEND_TEXT);
}

/** Decode an incoming text frame into {joinRef, ref, topic, event, payload} or null. */
function decode(vsn, text) {
  let m;
  try {
    m = JSON.parse(text);
  } catch {
    return null;
  }
  if (vsn === 2) {
    if (!Array.isArray(m) || m.length < 5) return null;
    return { joinRef: m[0], ref: m[1], topic: m[2], event: m[3], payload: m[4] };
  }
  if (m === null || typeof m !== 'object' || Array.isArray(m)) return null;
  return { joinRef: m.join_ref ?? null, ref: m.ref ?? null, topic: m.topic, event: m.event, payload: m.payload };
}

function leave(ws, topic) {
  const member = ws.channels.get(topic);
  if (!member) return;
  ws.channels.delete(topic);
  const set = topics.get(topic);
  if (set) {
    set.delete(member);
    if (set.size === 0) topics.delete(topic);
  }
}

function onJoin(ws, msg) {
  const p = msg.payload && typeof msg.payload === 'object' ? msg.payload : {};
  if (SECRET && typeof p.access_token === 'string' && !p.access_token.startsWith('sb_')) {
    const v = verifyHS256(p.access_token, SECRET);
    if (!v.ok) {
      reply(ws, msg.joinRef, msg.ref, msg.topic, 'error', { reason: `InvalidJWTToken: ${v.reason}` });
      return;
    }
  }
  const bc = (p.config && p.config.broadcast) || {};
  leave(ws, msg.topic); // a re-join replaces the old membership
  const member = { ws, joinRef: msg.joinRef, self: bc.self === true, ack: bc.ack === true };
  ws.channels.set(msg.topic, member);
  let set = topics.get(msg.topic);
  if (!set) topics.set(msg.topic, (set = new Set()));
  set.add(member);
  reply(ws, msg.joinRef, msg.ref, msg.topic, 'ok', { postgres_changes: [] });
}

/** Fan a broadcast out: encode once per serializer (lazily), share the Buffer with every recipient. */
function onBroadcast(ws, msg, sender) {
  const set = topics.get(msg.topic);
  let v1 = null;
  let v2 = null;
  for (const m of set) {
    if (m === sender && !m.self) continue;
    const out = m.ws;
    if (out.readyState !== 1) continue;
    if (out.vsn === 2) {
      if (v2 === null) v2 = Buffer.from(JSON.stringify([null, null, msg.topic, 'broadcast', msg.payload]));
      out.send(v2, SEND_TEXT);
    } else {
      if (v1 === null) {
        v1 = Buffer.from(JSON.stringify({ topic: msg.topic, event: 'broadcast', payload: msg.payload, ref: null }));
      }
      out.send(v1, SEND_TEXT);
    }
  }
  if (sender.ack) reply(ws, msg.joinRef, msg.ref, msg.topic, 'ok', {});
}

function onMessage(ws, data, isBinary) {
  if (isBinary) return; // binary kind 3 (v2 user broadcast) is not needed by the bench
  const msg = decode(ws.vsn, data.toString('utf8'));
  if (!msg || typeof msg.topic !== 'string' || typeof msg.event !== 'string') return;

  if (msg.topic === 'phoenix') {
    if (msg.event === 'heartbeat') reply(ws, null, msg.ref, 'phoenix', 'ok', {});
    return;
  }
  if (msg.event === 'phx_join') return onJoin(ws, msg);

  const member = ws.channels.get(msg.topic);
  if (!member) {
    // What Phoenix answers for a push on a topic the socket has not joined.
    reply(ws, msg.joinRef, msg.ref, msg.topic, 'error', { reason: 'unmatched topic' });
    return;
  }
  switch (msg.event) {
    case 'broadcast':
      return onBroadcast(ws, msg, member);
    case 'phx_leave':
      leave(ws, msg.topic);
      return reply(ws, msg.joinRef, msg.ref, msg.topic, 'ok', {});
    case 'presence':
      return reply(ws, msg.joinRef, msg.ref, msg.topic, 'ok', {});
    default:
      return; // access_token and anything else: no reply (as upstream)
  }
}

// ---- HTTP + upgrade ------------------------------------------------------------------------

const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 1 << 20 });

function liveness(req, res) {
  // Plain GET: a liveness answer, handy for humans; the bench waits on TCP accept only.
  res.writeHead(200, { 'content-type': 'text/plain' });
  res.end('ws-phx ok\n');
}
// With TLS: Node's defaults (TLS 1.2 and 1.3, its cipher list), ALPN http/1.1 as our server
// offers; Node's session tickets stay on, but the bench's clients never offer a session.
const server = TLS_CERT
  ? https.createServer({ cert: fs.readFileSync(TLS_CERT), key: fs.readFileSync(TLS_KEY), ALPNProtocols: ['http/1.1'] }, liveness)
  : http.createServer(liveness);

function refuse(socket, status, message) {
  const body = JSON.stringify({ message });
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\ncontent-type: application/json\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

server.on('upgrade', (req, socket, head) => {
  const url = new URL(req.url, 'http://x');
  if (!PATHS.has(url.pathname)) return refuse(socket, 404, 'Not Found');
  const vsnParam = url.searchParams.get('vsn') || '2.0.0'; // realtime-js default
  if (vsnParam !== '1.0.0' && vsnParam !== '2.0.0') return refuse(socket, 400, 'Unsupported serializer version');
  if (SECRET) {
    const token = req.headers['x-api-key'] || url.searchParams.get('apikey');
    if (!token) return refuse(socket, 401, 'API key is missing');
    const v = verifyHS256(token, SECRET);
    if (!v.ok) return refuse(socket, 401, v.reason);
  }
  socket.setNoDelay(true);
  wss.handleUpgrade(req, socket, head, (ws) => {
    ws.vsn = vsnParam === '1.0.0' ? 1 : 2;
    ws.channels = new Map();
    ws.on('message', (data, isBinary) => onMessage(ws, data, isBinary));
    ws.on('close', () => {
      for (const topic of [...ws.channels.keys()]) leave(ws, topic);
    });
    ws.on('error', () => {}); // a reset client must not crash the server
  });
});

server.listen({ host: HOST, port: PORT, backlog: 4096 }, () => {
  const scheme = TLS_CERT ? 'wss' : 'ws';
  process.stderr.write(`ws-phx listening on ${scheme}://${HOST}:${PORT} (jwt ${SECRET ? 'verified' : 'not checked'})\n`);
});

for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(0));
