#include "server/transport/websocket_connection.h"

#include "server/transport/io_loop.h"
#include "server/transport/logging.h"

#include <QLoggingCategory>

namespace rt::transport {

namespace {

// The frame header for an unmasked server frame with FIN set (RFC 6455 §5.2).
qsizetype writeHeader(char (&header)[10], wire::WsOpcode opcode, qsizetype length)
{
    header[0] = static_cast<char>(0x80 | static_cast<quint8>(opcode));
    if (length < 126) {
        header[1] = static_cast<char>(length);
        return 2;
    }
    if (length <= 0xFFFF) {
        header[1] = 126;
        header[2] = static_cast<char>((length >> 8) & 0xFF);
        header[3] = static_cast<char>(length & 0xFF);
        return 4;
    }
    header[1] = 127;
    for (int i = 0; i < 8; ++i) {
        header[2 + i] = static_cast<char>((static_cast<quint64>(length) >> (56 - 8 * i)) & 0xFF);
    }
    return 10;
}

} // namespace

WebSocketConnection::WebSocketConnection(TcpConnection &connection,
                                         std::unique_ptr<WebSocketSession> session, Limits limits)
    : m_connection(connection),
      m_session(std::move(session)),
      m_limits(limits),
      m_parser(wire::WebSocketParser::Limits{ limits.maxMessageBytes })
{ }

WebSocketConnection::~WebSocketConnection() = default;

void WebSocketConnection::start(QByteArrayView leftover)
{
    m_session->onOpen(*this);
    if (!leftover.isEmpty()) {
        onReceived(leftover);
    }
}

bool WebSocketConnection::sendFrame(wire::WsOpcode opcode, const QByteArray &payload)
{
    if (m_closeSent) {
        return false;
    }
    char header[10];
    const qsizetype headerSize = writeHeader(header, opcode, payload.size());
    return m_connection.send(payload, QByteArrayView(header, headerSize));
}

bool WebSocketConnection::sendText(const QByteArray &payload)
{
    return sendFrame(wire::WsOpcode::Text, payload);
}

bool WebSocketConnection::sendBinary(const QByteArray &payload)
{
    return sendFrame(wire::WsOpcode::Binary, payload);
}

void WebSocketConnection::close(quint16 code, QByteArrayView reason)
{
    if (m_closeSent) {
        return;
    }
    sendFrame(wire::WsOpcode::Close, wire::closePayload(code, reason));
    m_closeSent = true;
    m_closeSentMs = m_connection.loop().nowMs();
    m_closeCode = code;
    // The session is told now: from its point of view the socket is gone.
    notifyClosed(code);
}

void WebSocketConnection::abort()
{
    notifyClosed(1006);
    m_connection.close();
}

void WebSocketConnection::notifyClosed(quint16 code)
{
    if (m_sessionNotified) {
        return;
    }
    m_sessionNotified = true;
    m_session->onClosed(code);
}

void WebSocketConnection::onReceived(QByteArrayView data)
{
    m_parser.feed(data, *this);
}

void WebSocketConnection::onMessage(wire::WsOpcode opcode, QByteArray message)
{
    if (m_closeSent) {
        return; // after our close frame, only the peer's close frame matters
    }
    if (opcode == wire::WsOpcode::Text) {
        m_session->onText(std::move(message));
    } else {
        m_session->onBinary(std::move(message));
    }
}

void WebSocketConnection::onPing(QByteArray payload)
{
    sendFrame(wire::WsOpcode::Pong, payload);
}

void WebSocketConnection::onPong(QByteArray payload)
{
    Q_UNUSED(payload)
}

void WebSocketConnection::onClose(quint16 code, QByteArray reason)
{
    Q_UNUSED(reason)
    if (!m_closeSent) {
        // Echo the peer's code (RFC 6455 §5.5.1); a close without a code is answered with 1000.
        const quint16 reply = code == wire::ws_close::NoStatus ? wire::ws_close::Normal : code;
        sendFrame(wire::WsOpcode::Close, wire::closePayload(reply, {}));
        m_closeSent = true;
    }
    notifyClosed(code);
    m_connection.closeAfterFlush(500);
}

void WebSocketConnection::onProtocolError(quint16 closeCode, const char *reason)
{
    qCInfo(lcTransport) << "websocket protocol error from" << m_connection.peerAddress() << ":"
                        << reason;
    close(closeCode, QByteArrayView(reason));
    m_connection.closeAfterFlush(500);
}

void WebSocketConnection::onClosed()
{
    notifyClosed(m_closeSent ? m_closeCode : 1006);
}

void WebSocketConnection::onTick(qint64 nowMs)
{
    if (m_closeSent) {
        if (nowMs - m_closeSentMs > m_limits.closeTimeoutMs) {
            m_connection.close();
        }
        return;
    }
    if (nowMs - m_connection.lastReceivedMs() > m_limits.idleTimeoutMs) {
        // Phoenix's transport timeout: the client stopped sending (even heartbeats).
        close(wire::ws_close::Normal, "idle timeout");
        m_connection.closeAfterFlush(500);
        return;
    }
    m_session->onTick(nowMs);
}

bool WebSocketConnection::onSlowConsumer(qsizetype dropped)
{
    if (m_closeSent) {
        return false;
    }
    m_session->onSlowConsumer(dropped);
    // The close handshake's timeout bounds how long a peer that reads nothing keeps the socket.
    close(wire::ws_close::PolicyViolation, "slow consumer");
    return true;
}

void WebSocketConnection::onServerShutdown()
{
    close(m_session ? m_session->shutdownCloseCode() : wire::ws_close::ServiceRestart,
          "server shutting down");
}

wire::HttpResponse checkWebSocketHandshake(const wire::HttpRequest &request)
{
    wire::HttpResponse ok;
    ok.status = 0;
    if (request.method != "GET") {
        return wire::HttpResponse::empty(400);
    }
    const QByteArray upgrade = request.header("upgrade").toLower();
    const QByteArray connection = request.header("connection").toLower();
    const QByteArray key = request.header("sec-websocket-key");
    if (!upgrade.contains("websocket") || !connection.contains("upgrade") || key.isEmpty()
        || QByteArray::fromBase64(key).size() != 16) {
        return wire::HttpResponse::empty(400);
    }
    if (request.header("sec-websocket-version").trimmed() != "13") {
        wire::HttpResponse response = wire::HttpResponse::empty(426);
        response.setHeader(QByteArrayLiteral("sec-websocket-version"), QByteArrayLiteral("13"));
        return response;
    }
    return ok;
}

} // namespace rt::transport
