#pragma once

#include "server/cluster/links/frame_codec.h"
#include "server/cluster/links/handshake.h"
#include "server/cluster/links/link_settings.h"

#include <QElapsedTimer>
#include <QObject>
#include <QPointer>
#include <QTimer>

QT_BEGIN_NAMESPACE
class QSslError;
class QSslSocket;
class QTcpSocket;
QT_END_NAMESPACE

namespace rt::cluster::links {

// Why a link closed, for counters and for the reconnect decision.
enum class CloseCause {
    Network, // connect failed, reset, or the peer closed the connection
    AuthFailure, // secret mismatch, wrong node, bad hello; either side refused
    ProtocolError, // malformed or unexpected frame
    Timeout, // handshake too slow, or the peer went silent
    Local, // closed by its owner
};

// One TCP connection between two nodes (inside mutual TLS when the settings carry it: the
// peer's certificate must name the node id its Hello claims): runs the handshake (handshake.h), then carries frames
// both ways and exchanges heartbeats. Dialers send application frames; acceptors deliver them
// (links are one-way for application traffic, so each direction has its own ordered links).
// Lives on the cluster thread; owned by PeerLinks (outgoing) or LinkServer (incoming), which
// connect to its signals before calling dial()/accept() and deleteLater() it after closed().
// Never blocks: no waitFor*, everything is driven by socket signals and timers.
class LinkConnection : public QObject
{
    Q_OBJECT

public:
    LinkConnection(const LinkSettings &settings, HandshakeRole role, QObject *parent = nullptr);
    ~LinkConnection() override;

    // Dialer: connect to host:port and expect to reach `expectedPeerId`.
    void dial(const QString &host, quint16 port, const QString &expectedPeerId);
    // Acceptor: take over an accepted, connected socket (reparented to this object); with TLS
    // it must be a QSslSocket that has not started encryption.
    void accept(QTcpSocket *socket);

    bool isReady() const { return m_state == State::Ready; }
    bool isClosed() const { return m_state == State::Closed; }
    HandshakeRole role() const { return m_role; }
    // The authenticated peer's node id (empty before ready).
    QString peerNodeId() const { return isReady() ? m_peerNodeId : QString(); }
    // Bytes handed to the socket and not yet to the kernel.
    qint64 bytesToWrite() const;

    // Writes one application frame (ready links only; ignored otherwise). The payload is
    // shared, not copied, until the socket buffers it.
    void sendFrame(quint8 kind, const QByteArray &payload);
    // Closes the link; `reason` is logged and, if the handshake is under way or done, sent to
    // the peer in a Reject frame. closed() follows (synchronously).
    void close(const QString &reason);

Q_SIGNALS:
    void ready(const QString &peerNodeId);
    void frameReceived(quint8 kind, const QByteArray &payload);
    // Some queued bytes reached the kernel: room to write more.
    void bytesWritten();
    // Emitted once; the link is unusable afterwards.
    void closed(const QString &reason, rt::cluster::links::CloseCause cause);

private:
    enum class State { Idle, Connecting, AwaitHello, AwaitProof, Ready, Closed };

    void attachSocket(QTcpSocket *socket);
    void onConnected();
    void onReadyRead();
    void onDisconnected();
    void onErrorOccurred();
    void onSslErrors(const QList<QSslError> &errors);
    void startTls(QSslSocket *socket);
    bool peerCertificateNamesPeer(const QString &claimedId);
    void onHeartbeat();
    void handleFrame(const Frame &frame);
    void handleHello(const QByteArray &payload);
    void handleProof(const QByteArray &payload);
    void becomeReady();
    void writeControl(ControlKind kind, const QByteArray &payload);
    void finish(const QString &reason, CloseCause cause, bool notifyPeer);

    LinkSettings m_settings;
    HandshakeRole m_role;
    State m_state = State::Idle;
    QTcpSocket *m_socket = nullptr; // child while attached
    FrameDecoder m_decoder;
    QByteArray m_ownHello; // encoded payload as sent
    QByteArray m_peerHello; // encoded payload as received
    QString m_peerNodeId;
    QString m_expectedPeerId; // dialer only
    QString m_peerLabel; // host:port for logs
    QTimer m_handshakeTimer;
    QTimer m_heartbeatTimer;
    QElapsedTimer m_sinceReceived;
};

} // namespace rt::cluster::links
