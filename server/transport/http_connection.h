#pragma once

#include "server/runtime/mailbox.h"
#include "server/transport/tcp_connection.h"
#include "server/transport/websocket_connection.h"
#include "server/wire/http_message.h"

#include <QObject>
#include <QPointer>

#include <memory>

namespace rt::transport {

class HttpConnection;

// Answers one HTTP request from any thread: respond() posts the answer to the connection's worker
// loop. Used when the answer comes from another thread (the control plane's database thread).
// A default-constructed one, or one whose loop has stopped, drops the answer.
class DeferredResponder
{
public:
    DeferredResponder() = default;
    DeferredResponder(runtime::MailboxPtr mailbox, QPointer<HttpConnection> connection,
                      quint64 requestNumber);

    void respond(wire::HttpResponse response) const;

private:
    runtime::MailboxPtr m_mailbox;
    QPointer<HttpConnection> m_connection; // read only on the connection's worker thread
    quint64 m_requestNumber = 0;
};

// Answers one HTTP request, now or later, from the connection's worker thread. A cheap handle:
// copy it into callbacks. If the client went away meanwhile, every call is a no-op. Exactly one
// of respond(), respondAfter() or acceptWebSocket() must be called per request.
class HttpResponder
{
public:
    HttpResponder() = default;
    HttpResponder(HttpConnection *connection, quint64 requestNumber);

    bool isConnected() const;
    void respond(const wire::HttpResponse &response) const;
    // Answers after delayMs (the connect-error backoff); the connection stays open meanwhile.
    void respondAfter(int delayMs, wire::HttpResponse response) const;
    // Completes a WebSocket handshake (101) and hands the connection to `session`.
    void acceptWebSocket(const wire::HttpRequest &request,
                         std::unique_ptr<WebSocketSession> session) const;
    // A handle to answer later from another thread.
    DeferredResponder deferred() const;

private:
    QPointer<HttpConnection> m_connection; // null once the HTTP phase of the connection ended
    quint64 m_requestNumber = 0;
};

// What a server does with requests. Implemented by the HTTP router; called on the worker thread
// of the connection, one request at a time per connection (requests pipelined behind it wait).
class HttpService
{
public:
    virtual ~HttpService() = default;
    virtual void handle(wire::HttpRequest request, const HttpResponder &responder) = 0;
};

// HTTP/1.1 server side of a TcpConnection: parses requests, hands each to the HttpService,
// writes responses in order, keeps the connection alive when both sides agree, and enforces
// timeouts (a request head must arrive within headerTimeoutMs; idle keep-alive connections
// close after idleTimeoutMs). A QObject only so that responders can track its lifetime; it lives
// on the connection's worker thread and is owned by the TcpConnection.
class HttpConnection final : public QObject, public TcpConnection::Handler
{
    Q_OBJECT
public:
    struct Limits
    {
        wire::HttpRequestParser::Limits parser;
        int headerTimeoutMs = 15'000;
        int idleTimeoutMs = 60'000;
        qsizetype maxBufferedInput =
                qsizetype{ 1024 } * 1024; // pipelined bytes held while a request runs
        WebSocketConnection::Limits websocket; // for connections upgraded to WebSocket
    };

    HttpConnection(TcpConnection &connection, HttpService &service, const Limits &limits);

    void onReceived(QByteArrayView data) override;
    void onTick(qint64 nowMs) override;

    // For HttpResponder.
    void respond(quint64 requestNumber, const wire::HttpResponse &response);
    void acceptWebSocket(quint64 requestNumber, const wire::HttpRequest &request,
                         std::unique_ptr<WebSocketSession> session);
    TcpConnection &tcp() const { return m_connection; }

private:
    void processInput();
    void fail(int status);

    TcpConnection &m_connection;
    HttpService &m_service;
    Limits m_limits;
    wire::HttpRequestParser m_parser;
    QByteArray m_pendingInput; // received while a request is being answered
    QByteArray m_upgradeLeftover; // bytes after an upgrade request's head
    quint64 m_requestNumber = 0; // of the request in flight, or of the last one answered
    qint64 m_requestStartedMs = 0;
    bool m_awaitingResponse = false;
    bool m_keepAlive = true;
    bool m_answeringHead = false; // the current request is a HEAD: headers only
    bool m_sawBytes = false; // a request has started arriving
};

} // namespace rt::transport
