// A TCP proxy on 127.0.0.1 that can cut the path to its target: the network between some nodes
// and etcd fails while etcd itself (and the nodes that reach it directly) go on working.
//
//   const proxy = await startTcpProxy({ port: 2379 });     // target 127.0.0.1:2379
//   node ETCD_ENDPOINTS = proxy.url
//   proxy.pause();                 // 'blackhole' (default) or proxy.pause({ mode: 'refuse' })
//   proxy.resume();
//   proxy.retarget({ port: 4001 });  // later connections go there (a client "moving" nodes)
//   await proxy.close();
//
// pause() always destroys the connections open at that moment (both sides see a reset), so a
// long-lived stream such as an etcd watch is cut. New connections are then either
//  - 'blackhole': accepted, and what they send is held but never forwarded and nothing comes
//    back, as in a network partition (callers only learn through their own timeouts); on
//    resume() those still open are connected to the target and get the bytes held for them,
//    like TCP retransmitting once the path heals;
//  - 'refuse': refused (the listener closes; it listens on the same port again on resume()).
import net from 'node:net';

/**
 * @param {object} opts
 * @param {number} opts.port target port
 * @param {string} [opts.host] target host (default 127.0.0.1)
 * @param {number} [opts.listenPort] local port (default: a free one)
 */
export async function startTcpProxy({ port: initialPort, host: initialHost = '127.0.0.1', listenPort = 0 }) {
    if (!Number.isInteger(initialPort) || initialPort <= 0) throw new Error(`bad target port ${initialPort}`);
    let targetPort = initialPort;
    let targetHost = initialHost;
    /** Every client-side socket with its state: { client, upstream, held: Buffer[] } */
    const conns = new Set();
    let mode = 'forward'; // 'forward' | 'blackhole' | 'refuse'
    let server = null;
    let port = listenPort;
    const stats = { accepted: 0, forwarded: 0, held: 0, cut: 0 };

    function dropConn(conn) {
        conns.delete(conn);
        conn.client.destroy();
        conn.upstream?.destroy();
    }

    function connectUpstream(conn) {
        const upstream = net.connect({ host: targetHost, port: targetPort });
        conn.upstream = upstream;
        upstream.setNoDelay(true);
        for (const chunk of conn.held.splice(0)) upstream.write(chunk);
        conn.client.pipe(upstream);
        upstream.pipe(conn.client);
        upstream.on('error', () => dropConn(conn));
        upstream.on('close', () => dropConn(conn));
        stats.forwarded += 1;
    }

    function onConnection(client) {
        stats.accepted += 1;
        client.setNoDelay(true);
        const conn = { client, upstream: null, held: [] };
        conns.add(conn);
        client.on('error', () => dropConn(conn));
        client.on('close', () => dropConn(conn));
        if (mode === 'forward') {
            connectUpstream(conn);
            return;
        }
        // Blackholed: keep what the caller sends for the moment the path heals.
        stats.held += 1;
        const hold = (chunk) => conn.held.push(chunk);
        client.on('data', hold);
        conn.release = () => client.off('data', hold);
    }

    function listen() {
        return new Promise((resolve, reject) => {
            const srv = net.createServer(onConnection);
            srv.once('error', reject);
            srv.listen(port, '127.0.0.1', () => {
                srv.off('error', reject);
                srv.on('error', () => {});
                port = srv.address().port;
                server = srv;
                resolve();
            });
        });
    }

    await listen();

    return {
        get port() {
            return port;
        },
        /** The URL a node gets as ETCD_ENDPOINTS. */
        get url() {
            return `http://127.0.0.1:${port}`;
        },
        get mode() {
            return mode;
        },
        stats,
        /** Connections accepted from now on go to this target; open ones stay where they are. */
        retarget({ port: newPort, host: newHost = '127.0.0.1' }) {
            if (!Number.isInteger(newPort) || newPort <= 0) throw new Error(`bad target port ${newPort}`);
            targetPort = newPort;
            targetHost = newHost;
        },
        /** Cuts the path: open connections are reset, new ones blackholed or refused. */
        pause({ mode: how = 'blackhole' } = {}) {
            if (how !== 'blackhole' && how !== 'refuse') throw new Error(`unknown pause mode ${how}`);
            if (mode !== 'forward') throw new Error(`already paused (${mode})`);
            mode = how;
            for (const conn of [...conns]) {
                stats.cut += 1;
                // resetAndDestroy: the peer sees ECONNRESET at once rather than a clean FIN.
                conn.client.resetAndDestroy?.() ?? conn.client.destroy();
                dropConn(conn);
            }
            if (how === 'refuse') {
                server.close();
                server = null;
            }
        },
        /** Heals the path: new connections are forwarded, held ones get connected and flushed. */
        async resume() {
            if (mode === 'forward') return;
            const was = mode;
            mode = 'forward';
            if (was === 'refuse') {
                await listen();
                return;
            }
            for (const conn of [...conns]) {
                if (conn.upstream) continue;
                conn.release?.();
                connectUpstream(conn);
            }
        },
        async close() {
            mode = 'refuse';
            for (const conn of [...conns]) dropConn(conn);
            if (server) {
                const srv = server;
                server = null;
                await new Promise((resolve) => srv.close(() => resolve()));
            }
        },
    };
}
