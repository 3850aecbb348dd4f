#pragma once

#include "server/transport/tcp_connection.h"
#include "server/wire/http_message.h"
#include "server/wire/websocket_frame.h"

#include <memory>

namespace rt::transport {

class WebSocketConnection;

// The application on top of a WebSocket (the Phoenix socket). Owned by its WebSocketConnection
// and called on the worker thread.
class WebSocketSession
{
public:
    virtual ~WebSocketSession() = default;
    // The handshake response is queued; the session may send.
    virtual void onOpen(WebSocketConnection &connection) = 0;
    virtual void onText(QByteArray message) = 0;
    virtual void onBinary(QByteArray message) = 0;
    // The connection is gone (close handshake, error, timeout or EOF); `code` is the close code
    // received or sent, 1006 if none. No sends after this.
    virtual void onClosed(quint16 code) = 0;
    // Called about once a second (deadlines: heartbeats, token expiry, delayed replies).
    virtual void onTick(qint64 nowMs) { Q_UNUSED(nowMs) }
    // The client read too slowly and `dropped` queued messages were discarded: the last
    // messages the session may send before the connection closes (1008) and onClosed follows.
    virtual void onSlowConsumer(qsizetype dropped) { Q_UNUSED(dropped) }
    // The close code sent when the server shuts down: 1012 (Service Restart) tells clients to
    // reconnect, possibly to another node.
    virtual quint16 shutdownCloseCode() const { return wire::ws_close::ServiceRestart; }
};

// RFC 6455 server side of a TcpConnection: frames in through the pure wire::WebSocketParser, frames
// out as a 2-10 byte header plus the shared payload (never copied per recipient). Handles ping,
// close handshake, the idle timeout and protocol errors.
class WebSocketConnection final : public TcpConnection::Handler,
                                  private wire::WebSocketParser::Visitor
{
public:
    struct Limits
    {
        qsizetype maxMessageBytes = 5'000'000;
        int idleTimeoutMs = 60'000; // no frame from the client for this long: close
        int closeTimeoutMs = 3'000; // wait for the peer's close frame after sending ours
    };

    WebSocketConnection(TcpConnection &connection, std::unique_ptr<WebSocketSession> session,
                        Limits limits);
    ~WebSocketConnection() override;

    // Queues a text/binary message (a complete payload; framed here, payload shared).
    bool sendText(const QByteArray &payload);
    bool sendBinary(const QByteArray &payload);
    // Starts the closing handshake with `code`; the session gets onClosed(code) once.
    void close(quint16 code, QByteArrayView reason = {});
    // Drops the connection without a close frame (e.g. a TCP kill).
    void abort();

    bool isOpen() const { return !m_closeSent && m_connection.isOpen(); }
    qsizetype queuedBytes() const { return m_connection.queuedBytes(); }
    TcpConnection &tcp() const { return m_connection; }

    // Delivers bytes that arrived with the handshake request.
    void start(QByteArrayView leftover);

    void onReceived(QByteArrayView data) override;
    void onClosed() override;
    void onTick(qint64 nowMs) override;
    void onServerShutdown() override;
    bool onSlowConsumer(qsizetype dropped) override;

private:
    bool sendFrame(wire::WsOpcode opcode, const QByteArray &payload);
    void notifyClosed(quint16 code);

    void onMessage(wire::WsOpcode opcode, QByteArray message) override;
    void onPing(QByteArray payload) override;
    void onPong(QByteArray payload) override;
    void onClose(quint16 code, QByteArray reason) override;
    void onProtocolError(quint16 closeCode, const char *reason) override;

    TcpConnection &m_connection;
    std::unique_ptr<WebSocketSession> m_session;
    Limits m_limits;
    wire::WebSocketParser m_parser;
    qint64 m_closeSentMs = 0;
    quint16 m_closeCode = 1006;
    bool m_closeSent = false;
    bool m_sessionNotified = false;
};

// Checks the WebSocket handshake headers of an upgrade request (RFC 6455 §4.2.1). Returns an
// empty response status (0) when acceptable, else the response to send (400, or 426 with
// Sec-WebSocket-Version for a version mismatch).
wire::HttpResponse checkWebSocketHandshake(const wire::HttpRequest &request);

} // namespace rt::transport
