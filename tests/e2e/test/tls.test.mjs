// TLS on the client port (issue 18 part 1), with the unchanged realtime-js client over wss://
// and real OpenSSL certificates (lib/certs.mjs): channels, broadcast, presence and the REST API
// over TLS; a plaintext request refused; untrusted certificates, old protocol versions and bad
// files refused with clear errors; SIGHUP reloads the certificate without dropping a connection.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import { after, before, describe, test } from 'node:test';
import { makeCertificateAuthority } from '../lib/certs.mjs';
import { ClientPool, joinChannel, selfHostToken } from '../lib/clients.mjs';
import { startServer } from '../lib/server.mjs';
import { httpRequest, Recorder, waitFor } from '../lib/util.mjs';

/** The certificate a fresh TLS connection to `port` is shown, and the negotiated protocol. */
function peerCertificate(port, caPem, options = {}) {
    return new Promise((resolve, reject) => {
        const socket = tls.connect({ host: '127.0.0.1', port, ca: caPem, ...options }, () => {
            const certificate = socket.getPeerCertificate();
            const protocol = socket.getProtocol();
            socket.end();
            resolve({ certificate, protocol });
        });
        socket.on('error', reject);
    });
}

/** Sends `text` on a plain TCP connection and resolves everything read until the server closes. */
function plaintextExchange(port, text) {
    return new Promise((resolve, reject) => {
        const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
        const chunks = [];
        socket.on('data', (chunk) => chunks.push(chunk));
        socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
        socket.on('error', reject);
    });
}

describe('TLS on the client port', () => {
    let ca;
    let leaf;
    let server;
    let pool;

    before(async () => {
        ca = makeCertificateAuthority();
        leaf = ca.issue('server', { dns: ['localhost'], ips: ['127.0.0.1'] });
        server = await startServer({ tls: { certFile: leaf.certFile, keyFile: leaf.keyFile, caPem: ca.caPem } });
        pool = new ClientPool(server);
    });

    after(async () => {
        await pool?.cleanup();
        await server?.stop();
        ca?.remove();
    });

    test('realtime-js over wss: broadcast and presence between two clients', async () => {
        assert.match(server.wsUrl(), /^wss:\/\//);
        const a = pool.client();
        const b = pool.client();
        const topic = `tls-${Date.now()}`;
        const chA = a.channel(topic, { config: { broadcast: { self: true }, presence: { key: 'a' } } });
        const chB = b.channel(topic, { config: { presence: { key: 'b' } } });
        const gotA = new Recorder('broadcasts of a');
        const gotB = new Recorder('broadcasts of b');
        chA.on('broadcast', { event: '*' }, gotA.fn);
        chB.on('broadcast', { event: '*' }, gotB.fn);
        const syncsB = new Recorder('presence syncs of b');
        chB.on('presence', { event: 'sync' }, () => syncsB.push(chB.presenceState()));
        await joinChannel(chA);
        await joinChannel(chB);
        assert.equal(await chA.track({ who: 'a' }), 'ok');
        await syncsB.next((state) => state.a?.[0]?.who === 'a', 5000, 'a in the presence state of b');
        assert.equal(await chA.send({ type: 'broadcast', event: 'hello', payload: { n: 1 } }), 'ok');
        const atB = await gotB.next((m) => m.event === 'hello', 5000, 'the broadcast at b');
        assert.deepEqual(atB.payload, { n: 1 });
        await gotA.next((m) => m.event === 'hello', 5000, 'the broadcast echoed to a (self)');
    });

    test('one broadcast reaches many wss subscribers (encoded once, encrypted per socket)', async () => {
        const topic = `tls-fanout-${Date.now()}`;
        const receivers = [];
        for (let i = 0; i < 8; ++i) {
            const client = pool.client();
            const ch = client.channel(topic);
            const got = new Recorder(`broadcasts of ${i}`);
            ch.on('broadcast', { event: '*' }, got.fn);
            await joinChannel(ch);
            receivers.push(got);
        }
        const sender = pool.client().channel(topic);
        await joinChannel(sender);
        const payload = { text: 'x'.repeat(40_000) }; // more than two records' worth
        assert.equal(await sender.send({ type: 'broadcast', event: 'big', payload }), 'ok');
        for (const got of receivers) {
            const message = await got.next((m) => m.event === 'big', 5000, 'the large broadcast');
            assert.equal(message.payload.text.length, 40_000);
        }
    });

    test('the REST API answers over https', async () => {
        const health = await httpRequest(server, { path: '/healthcheck' });
        assert.equal(health.status, 200);
        const sent = await httpRequest(server, {
            method: 'POST',
            path: '/api/broadcast',
            headers: { apikey: selfHostToken(), Authorization: `Bearer ${selfHostToken()}` },
            body: { messages: [{ topic: 'rest-over-tls', event: 'e', payload: { ok: true } }] },
        });
        assert.equal(sent.status, 202, sent.body);
    });

    test('a plaintext request on the TLS port gets a plaintext 400 and the close', async () => {
        const answer = await plaintextExchange(server.port, 'GET /healthcheck HTTP/1.1\r\nHost: realtime-dev.localhost\r\n\r\n');
        assert.match(answer, /^HTTP\/1\.1 400 Bad Request\r\n/);
        assert.match(answer, /This port speaks TLS only: connect with https:\/\/ or wss:\/\/\n$/);
    });

    test('a client that does not trust the CA refuses the server', async () => {
        await assert.rejects(peerCertificate(server.port, undefined), /self[- ]signed|unable to (get|verify)/i);
        // The server stays healthy after the aborted handshake.
        assert.equal((await httpRequest(server, { path: '/healthcheck' })).status, 200);
    });

    test('TLS 1.2 and 1.3 are both accepted by default, TLS 1.1 is not', async () => {
        assert.equal((await peerCertificate(server.port, ca.caPem, { maxVersion: 'TLSv1.2' })).protocol, 'TLSv1.2');
        assert.equal((await peerCertificate(server.port, ca.caPem)).protocol, 'TLSv1.3');
        await assert.rejects(peerCertificate(server.port, ca.caPem, { minVersion: 'TLSv1', maxVersion: 'TLSv1.1' }));
    });

    test('SIGHUP reloads the certificate; open sockets stay; a broken renewal keeps the old one', async () => {
        const old = pool.client();
        const topic = `tls-reload-${Date.now()}`;
        const ch = old.channel(topic);
        const got = new Recorder('broadcasts after the reload');
        ch.on('broadcast', { event: '*' }, got.fn);
        await joinChannel(ch);
        const before = (await peerCertificate(server.port, ca.caPem)).certificate.serialNumber;

        // A half-written renewal (a certificate without its key) is refused; the old pair stays.
        const renewed = ca.issue('renewed', { dns: ['localhost'], ips: ['127.0.0.1'], cn: 'renewed.localhost' });
        fs.writeFileSync(leaf.certFile, renewed.certPem);
        server.signal('SIGHUP');
        await waitFor(() => /the certificate was not reloaded/.test(server.stderr()), 5000, 'the refused reload in the log');
        assert.equal((await peerCertificate(server.port, ca.caPem)).certificate.serialNumber, before);

        fs.writeFileSync(leaf.keyFile, renewed.keyPem);
        server.signal('SIGHUP');
        await waitFor(async () => (await peerCertificate(server.port, ca.caPem)).certificate.subject.CN === 'renewed.localhost',
            5000, 'the renewed certificate on a new connection');

        // The socket opened before both reloads still works.
        const sender = pool.client().channel(topic);
        await joinChannel(sender);
        assert.equal(await sender.send({ type: 'broadcast', event: 'after-reload', payload: {} }), 'ok');
        await got.next((m) => m.event === 'after-reload', 5000, 'a broadcast on the socket opened before the reload');
        assert.equal(old.isConnected(), true);
        assert.equal(server.exitInfo(), null);
    });
});

describe('TLS options', () => {
    let ca;
    let leaf;

    before(() => {
        ca = makeCertificateAuthority();
        leaf = ca.issue('server', { dns: ['localhost'], ips: ['127.0.0.1'] });
    });

    after(() => ca?.remove());

    test('TLS_MIN_VERSION=1.3 refuses a TLS 1.2 client', async () => {
        const server = await startServer({
            tls: { certFile: leaf.certFile, keyFile: leaf.keyFile, caPem: ca.caPem },
            env: { TLS_MIN_VERSION: '1.3' },
        });
        try {
            assert.equal((await peerCertificate(server.port, ca.caPem)).protocol, 'TLSv1.3');
            await assert.rejects(peerCertificate(server.port, ca.caPem, { maxVersion: 'TLSv1.2' }), /version|alert/i);
        } finally {
            await server.stop();
        }
    });

    test('a certificate without its key, a missing file and a foreign key fail the start with one clear line', async () => {
        await assert.rejects(startServer({ env: { TLS_CERT_FILE: leaf.certFile } }),
            /TLS_CERT_FILE \(--tls-cert-file\) and TLS_KEY_FILE \(--tls-key-file\) go together/);
        await assert.rejects(startServer({ env: { TLS_CERT_FILE: `${ca.dir}/missing.crt`, TLS_KEY_FILE: leaf.keyFile } }),
            /TLS_CERT_FILE \/ TLS_KEY_FILE: cannot read the certificate file .*missing\.crt/);
        const other = ca.issue('other', { dns: ['other'] });
        await assert.rejects(startServer({ env: { TLS_CERT_FILE: leaf.certFile, TLS_KEY_FILE: other.keyFile } }),
            /TLS_CERT_FILE \/ TLS_KEY_FILE: .*(does not belong|cannot be used)/);
        await assert.rejects(startServer({ env: { TLS_MIN_VERSION: '1.0' } }),
            /invalid TLS_MIN_VERSION \(--tls-min-version\): "1\.0"; expected 1\.2 or 1\.3/);
    });

    test('https clients reach the server by host name too', async () => {
        const server = await startServer({ tls: { certFile: leaf.certFile, keyFile: leaf.keyFile, caPem: ca.caPem } });
        try {
            const status = await new Promise((resolve, reject) => {
                https.get({ host: 'localhost', port: server.port, path: '/healthcheck', ca: ca.caPem, family: 4 }, (res) => {
                    res.resume();
                    resolve(res.statusCode);
                }).on('error', reject);
            });
            assert.equal(status, 200);
        } finally {
            await server.stop();
        }
    });
});
