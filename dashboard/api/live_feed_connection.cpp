#include "dashboard/api/live_feed_connection.h"

#include <QLoggingCategory>
#include <QNetworkRequest>
#include <QWebSocket>

namespace rt::dashboard {

namespace {

Q_LOGGING_CATEGORY(lcLiveFeed, "rt.dashboard.livefeed")

} // namespace

LiveFeedConnection::LiveFeedConnection(QObject *parent)
    : QObject(parent),
      m_heartbeatTimer(this),
      m_silenceTimer(this)
{
    m_silenceTimer.setSingleShot(true);
    connect(&m_heartbeatTimer, &QTimer::timeout, this, &LiveFeedConnection::onHeartbeatDue);
    connect(&m_silenceTimer, &QTimer::timeout, this, &LiveFeedConnection::onSilence);
}

LiveFeedConnection::~LiveFeedConnection()
{
    dropSocket();
}

void LiveFeedConnection::open(quint64 generation, const QUrl &url, const QByteArray &token,
                              LiveFeedTiming timing, const QSslConfiguration &ssl)
{
    dropSocket();
    m_generation = generation;
    m_timing = timing;
    m_url = url;
    m_protocol.reset();
    m_socket = new QWebSocket(QString(), QWebSocketProtocol::VersionLatest, this);
    connect(m_socket, &QWebSocket::connected, this, &LiveFeedConnection::onConnected);
    connect(m_socket, &QWebSocket::textMessageReceived, this, &LiveFeedConnection::onTextMessage);
    connect(m_socket, &QWebSocket::disconnected, this, &LiveFeedConnection::onDisconnected);
    connect(m_socket, qOverload<QAbstractSocket::SocketError>(&QWebSocket::error), this,
            &LiveFeedConnection::onSocketError);
    m_socket->setSslConfiguration(ssl);
    QNetworkRequest request(url);
    request.setRawHeader(QByteArrayLiteral("Authorization"), QByteArrayLiteral("Bearer ") + token);
    qCDebug(lcLiveFeed) << "opening" << url.toDisplayString();
    // The handshake is bounded by the silence timer as well.
    m_silenceTimer.start(m_timing.silenceTimeout);
    m_socket->open(request);
}

void LiveFeedConnection::close()
{
    dropSocket();
}

void LiveFeedConnection::dropSocket()
{
    m_heartbeatTimer.stop();
    m_silenceTimer.stop();
    if (!m_socket) {
        return;
    }
    QWebSocket *socket = std::exchange(m_socket, nullptr);
    // No signal of the old socket may reach us any more (abort() emits disconnected()).
    socket->disconnect(this);
    socket->abort();
    socket->deleteLater();
    m_protocol.reset();
}

void LiveFeedConnection::onConnected()
{
    m_silenceTimer.start(m_timing.silenceTimeout);
    m_heartbeatTimer.start(m_timing.heartbeatInterval);
    sendFrame(m_protocol.joinFrame());
}

void LiveFeedConnection::onTextMessage(const QString &message)
{
    m_silenceTimer.start(m_timing.silenceTimeout);
    LiveFeedProtocol::Event event = m_protocol.handleFrame(message.toUtf8());
    using Kind = LiveFeedProtocol::Event::Kind;
    switch (event.kind) {
    case Kind::Joined:
        qCInfo(lcLiveFeed) << "joined admin:cluster on" << m_url.toDisplayString();
        Q_EMIT joined(m_generation);
        break;
    case Kind::Snapshot:
        Q_EMIT snapshotReceived(m_generation, event.snapshot);
        break;
    case Kind::JoinRefused:
    case Kind::ChannelClosed:
        fail(event.text);
        break;
    case Kind::SnapshotRejected:
    case Kind::Malformed:
        qCWarning(lcLiveFeed).noquote() << event.text;
        Q_EMIT problemOccurred(m_generation, event.text);
        break;
    case Kind::HeartbeatAcknowledged:
    case Kind::Ignored:
        break;
    }
}

void LiveFeedConnection::onDisconnected()
{
    if (!m_socket) {
        return;
    }
    if (m_socket->error() != QAbstractSocket::UnknownSocketError) {
        onSocketError();
        return;
    }
    const QString reason = m_socket->closeReason();
    const int code = m_socket->closeCode();
    fail(reason.isEmpty() ? tr("The node closed the live feed (code %1).").arg(code)
                          : tr("The node closed the live feed (code %1): %2")
                                    .arg(QString::number(code), reason));
}

void LiveFeedConnection::onSocketError()
{
    if (!m_socket) {
        return;
    }
    // Before the join the node may be down or refuse the token (HTTP 403 at the upgrade).
    fail(m_protocol.isJoined()
                 ? tr("The live feed failed: %1").arg(m_socket->errorString())
                 : tr("The live feed could not be opened: %1").arg(m_socket->errorString()));
}

void LiveFeedConnection::onHeartbeatDue()
{
    if (m_protocol.isHeartbeatPending()) {
        fail(tr("The node did not answer the last heartbeat within %1 s.")
                     .arg(std::chrono::duration<double>(m_timing.heartbeatInterval).count()));
        return;
    }
    sendFrame(m_protocol.heartbeatFrame());
}

void LiveFeedConnection::onSilence()
{
    fail(m_socket && m_socket->state() == QAbstractSocket::ConnectedState
                 ? tr("The node sent nothing for %1 s.")
                           .arg(std::chrono::duration<double>(m_timing.silenceTimeout).count())
                 : tr("The node did not accept the live feed's connection within %1 s.")
                           .arg(std::chrono::duration<double>(m_timing.silenceTimeout).count()));
}

void LiveFeedConnection::sendFrame(const QByteArray &frame)
{
    if (m_socket) {
        m_socket->sendTextMessage(QString::fromUtf8(frame));
    }
}

void LiveFeedConnection::fail(const QString &reason)
{
    if (!m_socket) {
        return;
    }
    qCWarning(lcLiveFeed).noquote() << m_url.toDisplayString() << "lost:" << reason;
    dropSocket();
    Q_EMIT lost(m_generation, reason);
}

} // namespace rt::dashboard
