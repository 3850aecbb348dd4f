#include "server/cluster/links/link_connection.h"

#include "server/cluster/links/link_tls.h"
#include "server/cluster/links/logging.h"

#include <QHostAddress>
#include <QSslSocket>
#include <QTcpSocket>

#include <algorithm>

namespace rt::cluster::links {

namespace {

// Bytes read from the socket per step: bounds the copy held outside the decoder.
constexpr qint64 ReadChunkBytes = qint64{ 256 } * 1024;
// How long a closing socket may take to deliver its Reject frame before it is aborted.
constexpr int LingerMs = 1000;

const char *roleName(HandshakeRole role)
{
    return role == HandshakeRole::Dialer ? "dialer" : "acceptor";
}

// Hello and Proof fit many times over; more is not read until the peer is authenticated.
constexpr qint64 PreAuthReadBufferBytes = qint64{ 16 } * 1024;

HandshakeRole otherRole(HandshakeRole role)
{
    return role == HandshakeRole::Dialer ? HandshakeRole::Acceptor : HandshakeRole::Dialer;
}

} // namespace

LinkConnection::LinkConnection(const LinkSettings &settings, HandshakeRole role, QObject *parent)
    : QObject(parent),
      m_settings(settings),
      m_role(role),
      m_decoder(std::min(settings.maxFramePayloadBytes, PreAuthMaxFramePayloadBytes))
{
    m_handshakeTimer.setSingleShot(true);
    m_handshakeTimer.setInterval(settings.handshakeTimeout);
    connect(&m_handshakeTimer, &QTimer::timeout, this, [this] {
        finish(QStringLiteral("handshake not completed within %1 ms")
                       .arg(m_settings.handshakeTimeout.count()),
               CloseCause::Timeout, true);
    });
    m_heartbeatTimer.setInterval(settings.heartbeatInterval);
    connect(&m_heartbeatTimer, &QTimer::timeout, this, &LinkConnection::onHeartbeat);
}

LinkConnection::~LinkConnection()
{
    if (m_socket) {
        // Owner deleted us without close(): drop the connection without ceremony.
        m_socket->disconnect(this);
        m_socket->abort();
    }
}

void LinkConnection::dial(const QString &host, quint16 port, const QString &expectedPeerId)
{
    Q_ASSERT(m_role == HandshakeRole::Dialer && m_state == State::Idle);
    m_expectedPeerId = expectedPeerId;
    m_peerLabel = QStringLiteral("%1 (%2:%3)").arg(expectedPeerId, host).arg(port);
    m_state = State::Connecting;
    m_handshakeTimer.start();
    if (m_settings.tls) {
        auto *socket = new QSslSocket(this);
        attachSocket(socket);
        startTls(socket);
        socket->connectToHostEncrypted(host, port);
        return;
    }
    auto *socket = new QTcpSocket(this);
    attachSocket(socket);
    connect(socket, &QTcpSocket::connected, this, &LinkConnection::onConnected);
    socket->connectToHost(host, port);
}

// The Hello waits for the encrypted channel; the certificate's names are checked against the
// Hello's node id (handleHello), not against the host dialled.
void LinkConnection::startTls(QSslSocket *socket)
{
    socket->setSslConfiguration(*m_settings.tls);
    connect(socket, &QSslSocket::encrypted, this, &LinkConnection::onConnected);
    connect(socket, &QSslSocket::sslErrors, this, &LinkConnection::onSslErrors);
}

void LinkConnection::onSslErrors(const QList<QSslError> &errors)
{
    QList<QSslError> hostNameOnly;
    QStringList fatal;
    for (const QSslError &error : errors) {
        if (error.error() == QSslError::HostNameMismatch) {
            hostNameOnly.append(error);
        } else {
            fatal.append(error.errorString());
        }
    }
    if (!fatal.isEmpty()) {
        finish(QStringLiteral("TLS: %1").arg(fatal.join(QStringLiteral("; "))),
               CloseCause::AuthFailure, false);
        return;
    }
    if (auto *socket = qobject_cast<QSslSocket *>(m_socket)) {
        socket->ignoreSslErrors(hostNameOnly);
    }
}

bool LinkConnection::peerCertificateNamesPeer(const QString &claimedId)
{
    auto *socket = qobject_cast<QSslSocket *>(m_socket);
    if (!m_settings.tls) {
        return true;
    }
    const QSslCertificate certificate =
            socket != nullptr ? socket->peerCertificate() : QSslCertificate();
    if (socket != nullptr && certificateNamesNode(certificate, claimedId)) {
        return true;
    }
    finish(QStringLiteral("the peer's certificate names %1, not the node %2 it claims to be")
                   .arg(certificateNames(certificate).join(QStringLiteral(", ")), claimedId),
           CloseCause::AuthFailure, true);
    return false;
}

void LinkConnection::accept(QTcpSocket *socket)
{
    Q_ASSERT(m_role == HandshakeRole::Acceptor && m_state == State::Idle);
    socket->setParent(this);
    m_peerLabel =
            QStringLiteral("%1:%2").arg(socket->peerAddress().toString()).arg(socket->peerPort());
    attachSocket(socket);
    m_handshakeTimer.start();
    if (m_settings.tls) {
        auto *secure = qobject_cast<QSslSocket *>(socket);
        if (secure == nullptr) {
            finish(QStringLiteral("a plain socket reached a TLS link server"), CloseCause::Local,
                   false);
            return;
        }
        startTls(secure);
        secure->startServerEncryption();
        return;
    }
    onConnected();
}

void LinkConnection::attachSocket(QTcpSocket *socket)
{
    m_socket = socket;
    // Until the handshake is done, Qt must not buffer what an unauthenticated peer sends.
    m_socket->setReadBufferSize(PreAuthReadBufferBytes);
    connect(socket, &QTcpSocket::readyRead, this, &LinkConnection::onReadyRead);
    connect(socket, &QTcpSocket::disconnected, this, &LinkConnection::onDisconnected);
    connect(socket, &QTcpSocket::errorOccurred, this, &LinkConnection::onErrorOccurred);
    connect(socket, &QTcpSocket::bytesWritten, this, &LinkConnection::bytesWritten);
}

qint64 LinkConnection::bytesToWrite() const
{
    return m_socket ? m_socket->bytesToWrite() : 0;
}

void LinkConnection::onConnected()
{
    if (m_state == State::Closed) {
        return;
    }
    // Latency matters more than packet count for cluster traffic (the +1 ms hop target).
    m_socket->setSocketOption(QAbstractSocket::LowDelayOption, 1);
    m_socket->setSocketOption(QAbstractSocket::KeepAliveOption, 1);
    m_state = State::AwaitHello;
    m_sinceReceived.start();
    m_ownHello = encodeHello(makeHello(m_settings.nodeId));
    writeControl(ControlKind::Hello, m_ownHello);
    // Bytes may have arrived before we took the socket over.
    if (m_socket->bytesAvailable() > 0) {
        onReadyRead();
    }
}

void LinkConnection::onReadyRead()
{
    while (m_socket && m_state != State::Closed && m_socket->bytesAvailable() > 0) {
        const QByteArray chunk = m_socket->read(ReadChunkBytes);
        if (chunk.isEmpty()) {
            break;
        }
        m_sinceReceived.start();
        m_decoder.feed(chunk);
        while (m_state != State::Closed) {
            std::optional<Frame> frame = m_decoder.next();
            if (!frame) {
                break;
            }
            handleFrame(*frame);
        }
        if (m_decoder.hasError() && m_state != State::Closed) {
            finish(QStringLiteral("malformed stream: %1").arg(m_decoder.error()->message),
                   m_state == State::Ready ? CloseCause::ProtocolError : CloseCause::AuthFailure,
                   true);
        }
    }
}

void LinkConnection::handleFrame(const Frame &frame)
{
    const bool handshaking = m_state == State::AwaitHello || m_state == State::AwaitProof;
    if (frame.kind == static_cast<quint8>(ControlKind::Reject)) {
        finish(QStringLiteral("peer refused the link: %1").arg(decodeRejectReason(frame.payload)),
               handshaking ? CloseCause::AuthFailure : CloseCause::Network, false);
        return;
    }
    switch (m_state) {
    case State::AwaitHello:
        if (frame.kind != static_cast<quint8>(ControlKind::Hello)) {
            finish(QStringLiteral("expected a hello, got frame kind %1").arg(frame.kind),
                   CloseCause::AuthFailure, true);
            return;
        }
        handleHello(frame.payload);
        return;
    case State::AwaitProof:
        if (frame.kind != static_cast<quint8>(ControlKind::Proof)) {
            finish(QStringLiteral("expected a proof, got frame kind %1").arg(frame.kind),
                   CloseCause::AuthFailure, true);
            return;
        }
        handleProof(frame.payload);
        return;
    case State::Ready:
        if (frame.kind == static_cast<quint8>(ControlKind::Ping)) {
            return;
        }
        if (isControlKind(frame.kind)) {
            finish(QStringLiteral("unexpected control frame kind %1 after the handshake")
                           .arg(frame.kind),
                   CloseCause::ProtocolError, true);
            return;
        }
        Q_EMIT frameReceived(frame.kind, frame.payload);
        return;
    case State::Idle:
    case State::Connecting:
    case State::Closed:
        return;
    }
}

void LinkConnection::handleHello(const QByteArray &payload)
{
    auto hello = decodeHello(payload);
    if (!hello.ok()) {
        finish(hello.error().message, CloseCause::AuthFailure, true);
        return;
    }
    if (m_role == HandshakeRole::Dialer && hello->nodeId != m_expectedPeerId) {
        finish(QStringLiteral("dialed %1 but reached %2").arg(m_expectedPeerId, hello->nodeId),
               CloseCause::AuthFailure, true);
        return;
    }
    if (hello->nodeId == m_settings.nodeId) {
        finish(QStringLiteral("the peer claims this node's own name %1").arg(hello->nodeId),
               CloseCause::AuthFailure, true);
        return;
    }
    if (!peerCertificateNamesPeer(hello->nodeId)) {
        return;
    }
    m_peerNodeId = hello->nodeId;
    m_peerHello = payload;
    m_state = State::AwaitProof;
    if (m_role == HandshakeRole::Dialer) {
        // The dialer proves itself first; the acceptor answers only once convinced.
        writeControl(
                ControlKind::Proof,
                computeProof(m_settings.secret, HandshakeRole::Dialer, m_ownHello, m_peerHello));
    }
}

void LinkConnection::handleProof(const QByteArray &payload)
{
    const QByteArrayView dialerHello = m_role == HandshakeRole::Dialer ? m_ownHello : m_peerHello;
    const QByteArrayView acceptorHello = m_role == HandshakeRole::Dialer ? m_peerHello : m_ownHello;
    const QByteArray expected =
            computeProof(m_settings.secret, otherRole(m_role), dialerHello, acceptorHello);
    if (!proofMatches(expected, payload)) {
        // Do not say more than this to an unauthenticated peer.
        finish(QStringLiteral("authentication failed (node %1 does not share the cluster secret)")
                       .arg(m_peerNodeId),
               CloseCause::AuthFailure, true);
        return;
    }
    if (m_role == HandshakeRole::Acceptor) {
        writeControl(ControlKind::Proof,
                     computeProof(m_settings.secret, HandshakeRole::Acceptor, dialerHello,
                                  acceptorHello));
    }
    becomeReady();
}

void LinkConnection::becomeReady()
{
    m_state = State::Ready;
    m_decoder.setMaxPayloadBytes(m_settings.maxFramePayloadBytes);
    m_socket->setReadBufferSize(0); // an authenticated peer's frames are read as they come
    m_handshakeTimer.stop();
    m_heartbeatTimer.start();
    qCDebug(lcLinks) << "link" << roleName(m_role) << "ready with node" << m_peerNodeId << "at"
                     << m_peerLabel;
    Q_EMIT ready(m_peerNodeId);
}

void LinkConnection::onHeartbeat()
{
    if (m_state != State::Ready) {
        return;
    }
    if (m_sinceReceived.elapsed() > 3 * m_settings.heartbeatInterval.count()) {
        finish(QStringLiteral("peer silent for %1 ms").arg(m_sinceReceived.elapsed()),
               CloseCause::Timeout, false);
        return;
    }
    writeControl(ControlKind::Ping, {});
}

void LinkConnection::sendFrame(quint8 kind, const QByteArray &payload)
{
    if (m_state != State::Ready || isControlKind(kind) || kind == 0) {
        return;
    }
    // Header and payload are appended back to back within this call, so nothing else (a
    // heartbeat) can land between them.
    m_socket->write(encodeFrameHeader(kind, static_cast<quint32>(payload.size())));
    m_socket->write(payload);
}

void LinkConnection::writeControl(ControlKind kind, const QByteArray &payload)
{
    if (m_socket) {
        m_socket->write(encodeFrame(static_cast<quint8>(kind), payload));
    }
}

void LinkConnection::close(const QString &reason)
{
    finish(reason, CloseCause::Local, true);
}

void LinkConnection::onDisconnected()
{
    finish(QStringLiteral("connection closed by %1").arg(m_peerLabel), CloseCause::Network, false);
}

void LinkConnection::onErrorOccurred()
{
    if (m_socket && m_socket->error() == QAbstractSocket::RemoteHostClosedError) {
        return; // disconnected() follows and says it better
    }
    const QString what = m_socket ? m_socket->errorString() : QStringLiteral("socket error");
    // A TLS handshake that failed (no certificate, a plaintext peer) is refused authentication.
    const bool tlsRefused =
            m_socket && m_socket->error() == QAbstractSocket::SslHandshakeFailedError;
    finish(QStringLiteral("%1: %2").arg(m_peerLabel, what),
           tlsRefused ? CloseCause::AuthFailure : CloseCause::Network, false);
}

void LinkConnection::finish(const QString &reason, CloseCause cause, bool notifyPeer)
{
    if (m_state == State::Closed) {
        return;
    }
    const bool wasReady = m_state == State::Ready;
    const bool handshaking = m_state == State::AwaitHello || m_state == State::AwaitProof;
    m_state = State::Closed;
    m_handshakeTimer.stop();
    m_heartbeatTimer.stop();
    if (cause == CloseCause::AuthFailure || cause == CloseCause::ProtocolError) {
        qCWarning(lcLinks).noquote()
                << "link" << roleName(m_role) << m_peerLabel << "closed:" << reason;
    } else if (wasReady) {
        qCInfo(lcLinks).noquote() << "link" << roleName(m_role) << "to node" << m_peerNodeId
                                  << "closed:" << reason;
    } else {
        qCDebug(lcLinks).noquote()
                << "link" << roleName(m_role) << m_peerLabel << "closed:" << reason;
    }
    if (QTcpSocket *socket = m_socket) {
        m_socket = nullptr;
        socket->disconnect(this);
        if (notifyPeer && (handshaking || wasReady)
            && socket->state() == QAbstractSocket::ConnectedState) {
            // Tell the peer why, then let the socket linger on its own until the frame is out
            // (deleting it now would abort and discard the frame).
            socket->write(encodeFrame(static_cast<quint8>(ControlKind::Reject),
                                      encodeRejectReason(reason)));
            // Parented to our owner (which outlives us) so that shutdown still frees it.
            socket->setParent(parent());
            connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
            QTimer::singleShot(LingerMs, socket, [socket] {
                socket->abort();
                socket->deleteLater();
            });
            socket->disconnectFromHost();
        } else {
            socket->abort();
            socket->deleteLater();
        }
    }
    Q_EMIT closed(reason, cause);
}

} // namespace rt::cluster::links
