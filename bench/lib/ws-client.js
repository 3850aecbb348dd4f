'use strict';
// The loadgens' raw WebSocket client (RFC 6455, client side only): HTTP upgrade, client frames
// masked with the all-zero key (so the payload bytes stay as they are), a streaming frame parser
// fed by one shared read buffer (net `onread`), no per-chunk allocation. The `ws` client tops out
// near 170k frames/s on this machine and would cap the results (see ../loadgen.js).
// With the `tls` option the same client speaks wss: node:tls under the same framing and the
// same shared read buffer (TLSSocket takes `onread` too), so ws and wss differ only by TLS.

const net = require('node:net');
const tls = require('node:tls');
const crypto = require('node:crypto');
const { performance } = require('node:perf_hooks');

// One read buffer shared by every socket: `onread` callbacks are synchronous, and anything kept
// across reads (a partial frame) is copied out first.
const READ_BUF = Buffer.allocUnsafe(256 * 1024);
const CRLFCRLF = Buffer.from('\r\n\r\n');
const WS_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

/** Build one masked client frame (FIN set) with the all-zero masking key. */
function clientFrame(opcode, payload) {
  const isText = typeof payload === 'string';
  const len = isText ? Buffer.byteLength(payload, 'utf8') : payload.length;
  const hdr = len < 126 ? 2 : len < 65536 ? 4 : 10;
  const out = Buffer.allocUnsafe(hdr + 4 + len);
  out[0] = 0x80 | opcode;
  if (hdr === 2) out[1] = 0x80 | len;
  else if (hdr === 4) {
    out[1] = 0x80 | 126;
    out.writeUInt16BE(len, 2);
  } else {
    out[1] = 0x80 | 127;
    out.writeUInt32BE(Math.floor(len / 2 ** 32), 2);
    out.writeUInt32BE(len >>> 0, 6);
  }
  out.writeUInt32BE(0, hdr); // masking key 0: XOR leaves the payload unchanged
  if (isText) out.write(payload, hdr + 4, 'utf8');
  else payload.copy(out, hdr + 4);
  return out;
}

/**
 * A WebSocket client connection to 127.0.0.1. `owner` gets
 *   owner.onOpen(), owner.onMessage(buf, start, end, now), owner.onClose(reason);
 * `now` is `clock()` at the read that completed the message (one value per read).
 * Options: port, url (path and query), host (the Host header), key (Sec-WebSocket-Key; a
 * random one by default), localAddress (source address), clock (default performance.now),
 * tls (null for ws; for wss the extra options of tls.connect: secureContext, servername, ...).
 * With tls, `owner.onSecure(conn)` (if defined) runs once the TLS handshake is done, before the
 * upgrade request is written.
 */
class WsConn {
  constructor(owner, { port, url, host, key, localAddress, clock, tls: tlsOptions = null }) {
    this.owner = owner;
    this.upgraded = false;
    this.closed = false;
    this.pend = null; // unparsed bytes (copied) carried to the next read
    this.frag = null; // fragmented message parts
    this.key = key || crypto.randomBytes(16).toString('base64');
    this.clock = clock || (() => performance.now());
    const upgrade = () =>
      this.sock.write(
        `GET ${url} HTTP/1.1\r\nHost: ${host}\r\nUpgrade: websocket\r\n` +
          `Connection: Upgrade\r\nSec-WebSocket-Key: ${this.key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      );
    const onread = { buffer: READ_BUF, callback: (n, buf) => this.onRead(n, buf) };
    if (tlsOptions === null) {
      this.sock = net.connect({ host: '127.0.0.1', port, localAddress, noDelay: true, onread });
      this.sock.on('connect', upgrade);
    } else {
      // No `session` is passed, so no connection resumes another's session: every one is a
      // full handshake (certificate signature and key exchange), which is what a storm of
      // new clients costs a server. rejectUnauthorized stays on: the server's chain is checked
      // against `ca` and its name against `servername`, as a real client does.
      this.sock = tls.connect({ host: '127.0.0.1', port, localAddress, onread, ...tlsOptions });
      this.sock.setNoDelay(true);
      this.sock.on('secureConnect', () => {
        if (this.owner.onSecure) this.owner.onSecure(this);
        upgrade();
      });
    }
    this.sock.on('error', (e) => this.close(e.code || e.message));
    this.sock.on('close', () => this.close('socket closed'));
  }

  close(reason) {
    if (this.closed) return;
    this.closed = true;
    this.sock.destroy();
    this.owner.onClose(reason);
  }

  send(str) {
    if (!this.closed) this.sock.write(clientFrame(0x1, str));
  }

  /** Write a ready-made client frame (shared Buffer, not copied). */
  sendFrame(frame) {
    if (!this.closed) this.sock.write(frame);
  }

  onRead(n, readBuf) {
    this.handleRead(n, readBuf);
    // Closed-loop modes: refill the window at once, not on the next timer tick.
    if (WsConn.afterRead !== null) WsConn.afterRead();
  }

  handleRead(n, readBuf) {
    const now = this.clock();
    let buf = readBuf.subarray(0, n);
    if (this.pend) {
      buf = Buffer.concat([this.pend, buf]);
      this.pend = null;
    }
    if (!this.upgraded) {
      const end = buf.indexOf(CRLFCRLF);
      if (end === -1) {
        if (buf.length > 16384) return this.close('oversized HTTP response');
        this.pend = Buffer.from(buf);
        return;
      }
      const head = buf.toString('latin1', 0, end);
      if (!/^HTTP\/1\.1 101/.test(head)) {
        const body = buf.toString('utf8', end + 4, Math.min(buf.length, end + 300));
        return this.close(`upgrade refused: ${head.split('\r\n')[0]} ${body}`);
      }
      const accept = /\r\nsec-websocket-accept:\s*(\S+)/i.exec(head);
      const want = crypto.createHash('sha1').update(this.key + WS_GUID).digest('base64');
      if (!accept || accept[1] !== want) return this.close('bad Sec-WebSocket-Accept');
      this.upgraded = true;
      this.owner.onOpen();
      buf = buf.subarray(end + 4);
      if (buf.length === 0) return;
    }
    this.parse(buf, now);
  }

  parse(buf, now) {
    const len = buf.length;
    let off = 0;
    while (len - off >= 2) {
      const b0 = buf[off];
      const b1 = buf[off + 1];
      let plen = b1 & 0x7f;
      let hdr = 2;
      if (plen === 126) {
        if (len - off < 4) break;
        plen = buf.readUInt16BE(off + 2);
        hdr = 4;
      } else if (plen === 127) {
        if (len - off < 10) break;
        plen = buf.readUInt32BE(off + 2) * 2 ** 32 + buf.readUInt32BE(off + 6);
        hdr = 10;
      }
      const masked = (b1 & 0x80) !== 0; // servers must not mask, but be tolerant
      if (masked) hdr += 4;
      if (len - off < hdr + plen) break;
      const start = off + hdr;
      const end = start + plen;
      if (masked) for (let i = 0; i < plen; i++) buf[start + i] ^= buf[off + hdr - 4 + (i & 3)];
      off = end;
      const op = b0 & 0x0f;
      const fin = (b0 & 0x80) !== 0;
      if (op === 0x1 || op === 0x2) {
        if (fin) this.owner.onMessage(buf, start, end, now);
        else this.frag = [Buffer.from(buf.subarray(start, end))];
      } else if (op === 0x0) {
        if (!this.frag) return this.close('continuation without start');
        this.frag.push(Buffer.from(buf.subarray(start, end)));
        if (fin) {
          const whole = Buffer.concat(this.frag);
          this.frag = null;
          this.owner.onMessage(whole, 0, whole.length, now);
        }
      } else if (op === 0x9) {
        this.sock.write(clientFrame(0xa, Buffer.from(buf.subarray(start, end)))); // ping -> pong
      } else if (op === 0x8) {
        const code = plen >= 2 ? buf.readUInt16BE(start) : 1005;
        const reason = buf.toString('utf8', start + 2, end);
        return this.close(`close frame ${code} ${reason}`);
      } // 0xA pong: ignore
      if (this.closed) return;
    }
    if (off < len) this.pend = Buffer.from(buf.subarray(off));
  }
}

/** Hook run after every socket read, or null (window modes set it to their pump). */
WsConn.afterRead = null;

module.exports = { WsConn, clientFrame };
