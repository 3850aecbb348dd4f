#pragma once

#include "server/cluster/links/frame_codec.h"

#include <QByteArray>
#include <QList>
#include <QMetaType>
#include <QSslConfiguration>
#include <QString>

#include <chrono>
#include <cstddef>
#include <optional>

namespace rt::cluster::links {

// How this node's links behave. Defaults suit a LAN cluster; CLUSTER_LINKS_PER_PEER and
// CLUSTER_SECRET come from the configuration (issue 5's contract).
struct LinkSettings
{
    QString nodeId; // this node (NODE_NAME); sent in the handshake
    // Mutual TLS (CLUSTER_TLS_*; link_tls.h): every link is encrypted and each side's
    // certificate must name the node id it claims. Without it links are plaintext, authenticated
    // by the HMAC handshake only (then the secret must have at least MinPlaintextSecretBytes).
    std::optional<QSslConfiguration> tls;
    QByteArray secret; // CLUSTER_SECRET; never sent, never logged; optional with tls
    // Outgoing connections per peer (CLUSTER_LINKS_PER_PEER). Each peer dials its own, so a
    // node pair has this many connections in each direction.
    int linksPerPeer = 2;
    // Largest payload accepted or sent; a peer announcing more is disconnected.
    quint32 maxFramePayloadBytes = DefaultMaxFramePayloadBytes;
    // Bound on frames waiting for one peer (queued while it is unreachable or slow, plus what
    // sits in the socket buffers beyond socketHighWaterBytes). Beyond it new frames are dropped
    // and counted.
    qint64 maxQueuedBytesPerPeer = 64LL * 1024 * 1024;
    qint64 maxQueuedFramesPerPeer = 100'000;
    // Frames move from a link's queue into its socket while the socket holds less than this.
    qint64 socketHighWaterBytes = 1024LL * 1024;
    // Reconnect delays: initial, doubling per failed attempt up to max, each with jitter in
    // [delay/2, delay] so peers that lost each other do not retry in lockstep.
    std::chrono::milliseconds reconnectInitialDelay{ 100 };
    std::chrono::milliseconds reconnectMaxDelay{ 5000 };
    // Connect + Hello + Proof must complete within this.
    std::chrono::milliseconds handshakeTimeout{ 5000 };
    // A ready link sends a Ping this often; one that hears nothing for 3 intervals is closed
    // (catches peers that vanished without a FIN, e.g. a host that lost power).
    std::chrono::milliseconds heartbeatInterval{ 2000 };
    // Incoming connections still in their handshake, in all and from one address; further ones
    // are closed at once (one host cannot keep the real peers out).
    int maxPendingHandshakes = 64;
    int maxPendingHandshakesPerAddress = 16;
};

// Plaintext links rest on the secret alone: one sniffed handshake allows guessing it offline.
constexpr qsizetype MinPlaintextSecretBytes = 32;

// Why settings cannot be used (empty node id, empty secret, ...), or nullopt when they can.
std::optional<QString> validateLinkSettings(const LinkSettings &settings);

// Where a peer listens for links.
struct PeerAddress
{
    QString nodeId;
    QString host;
    quint16 port = 0;

    friend bool operator==(const PeerAddress &a, const PeerAddress &b)
    {
        return a.nodeId == b.nodeId && a.host == b.host && a.port == b.port;
    }
};

// Per-peer figures for the admin view. Bytes are wire bytes (5-byte header + payload) of
// application frames; handshake and heartbeat frames are not counted.
struct PeerCounters
{
    bool connected = false; // at least one outgoing link is ready
    int linksUp = 0; // outgoing links ready
    int linksIn = 0; // incoming links from this peer that passed the handshake
    quint64 framesOut = 0; // handed to the kernel (a link that breaks may lose some of these)
    quint64 bytesOut = 0;
    quint64 framesIn = 0; // received on this peer's incoming links
    quint64 bytesIn = 0;
    quint64 framesDropped = 0; // refused by send(): queue full or frame too large
    quint64 bytesDropped = 0;
    quint64 connectsSucceeded = 0; // outgoing handshakes completed (first connect included)
    quint64 connectsFailed = 0; // outgoing dials that closed before their handshake completed
    qint64 queuedFrames = 0; // waiting in our queues now
    qint64 queuedBytes = 0;
    QList<quint64> framesOutPerLink; // index = link number
};

// Node-wide figures.
struct LinkTotals
{
    quint64 authFailures = 0; // handshakes refused either way (bad secret, bad hello)
    quint64 protocolErrors = 0; // links closed for malformed frames
    quint64 unroutableFrames = 0; // send() to a node that is not a peer
    quint64 refusedConnections = 0; // incoming beyond maxPendingHandshakes
};

} // namespace rt::cluster::links

Q_DECLARE_METATYPE(rt::cluster::links::PeerAddress)
