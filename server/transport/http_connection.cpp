#include "server/transport/http_connection.h"

#include "server/transport/io_loop.h"
#include "server/transport/logging.h"
#include "server/transport/websocket_connection.h"

#include <QLoggingCategory>
#include <QTimer>

namespace rt::transport {

HttpResponder::HttpResponder(HttpConnection *connection, quint64 requestNumber)
    : m_connection(connection),
      m_requestNumber(requestNumber)
{ }

bool HttpResponder::isConnected() const
{
    return !m_connection.isNull() && m_connection->tcp().isOpen();
}

void HttpResponder::respond(const wire::HttpResponse &response) const
{
    if (isConnected()) {
        m_connection->respond(m_requestNumber, response);
    }
}

void HttpResponder::respondAfter(int delayMs, wire::HttpResponse response) const
{
    if (delayMs <= 0) {
        respond(response);
        return;
    }
    if (m_connection.isNull()) {
        return;
    }
    // The HTTP connection is the timer's context: if it goes first, nothing is sent.
    QTimer::singleShot(
            delayMs, m_connection.data(),
            [responder = *this, response = std::move(response)] { responder.respond(response); });
}

void HttpResponder::acceptWebSocket(const wire::HttpRequest &request,
                                    std::unique_ptr<WebSocketSession> session) const
{
    if (isConnected()) {
        m_connection->acceptWebSocket(m_requestNumber, request, std::move(session));
    }
}

DeferredResponder::DeferredResponder(runtime::MailboxPtr mailbox,
                                     QPointer<HttpConnection> connection, quint64 requestNumber)
    : m_mailbox(std::move(mailbox)),
      m_connection(std::move(connection)),
      m_requestNumber(requestNumber)
{ }

void DeferredResponder::respond(wire::HttpResponse response) const
{
    if (!m_mailbox) {
        return;
    }
    m_mailbox->post(
            [connection = m_connection, number = m_requestNumber, response = std::move(response)] {
                HttpResponder(connection.data(), number).respond(response);
            });
}

DeferredResponder HttpResponder::deferred() const
{
    if (m_connection.isNull()) {
        return {};
    }
    return { m_connection->tcp().loop().mailbox(), m_connection, m_requestNumber };
}

HttpConnection::HttpConnection(TcpConnection &connection, HttpService &service,
                               const Limits &limits)
    : m_connection(connection),
      m_service(service),
      m_limits(limits),
      m_parser(limits.parser)
{
    m_requestStartedMs = connection.loop().nowMs();
}

void HttpConnection::onReceived(QByteArrayView data)
{
    m_sawBytes = true;
    if (m_awaitingResponse) {
        if (m_pendingInput.size() + data.size() > m_limits.maxBufferedInput) {
            m_connection.close();
            return;
        }
        m_pendingInput.append(data);
        return;
    }
    if (m_pendingInput.isEmpty()) {
        m_pendingInput = data.toByteArray();
    } else {
        m_pendingInput.append(data);
    }
    processInput();
}

void HttpConnection::processInput()
{
    while (!m_awaitingResponse && !m_pendingInput.isEmpty() && m_connection.isOpen()) {
        const wire::HttpRequestParser::Outcome outcome = m_parser.feed(m_pendingInput);
        if (outcome.status == wire::HttpRequestParser::Status::Error) {
            fail(outcome.errorStatus == 0 ? 400 : outcome.errorStatus);
            return;
        }
        if (outcome.status == wire::HttpRequestParser::Status::NeedMore) {
            m_pendingInput.clear();
            return;
        }
        m_pendingInput.remove(0, outcome.consumed);
        wire::HttpRequest request = m_parser.takeRequest();
        m_parser.reset();
        m_keepAlive = request.keepAlive && !request.upgrade;
        m_answeringHead = request.method == "HEAD";
        if (request.upgrade) {
            // Whatever follows the head belongs to the upgraded protocol.
            m_upgradeLeftover = m_pendingInput;
            m_pendingInput.clear();
        }
        m_awaitingResponse = true;
        ++m_requestNumber;
        m_service.handle(std::move(request), HttpResponder(this, m_requestNumber));
    }
}

void HttpConnection::respond(quint64 requestNumber, const wire::HttpResponse &response)
{
    if (!m_awaitingResponse || requestNumber != m_requestNumber) {
        return; // answered twice, or a stale responder: ignore
    }
    m_awaitingResponse = false;
    m_connection.send(wire::serializeResponse(response, m_keepAlive,
                                              m_answeringHead ? wire::BodyMode::Omit
                                                              : wire::BodyMode::Include));
    if (!m_keepAlive) {
        m_connection.closeAfterFlush();
        return;
    }
    m_sawBytes = !m_pendingInput.isEmpty();
    m_requestStartedMs = m_connection.loop().nowMs();
    processInput();
}

void HttpConnection::acceptWebSocket(quint64 requestNumber, const wire::HttpRequest &request,
                                     std::unique_ptr<WebSocketSession> session)
{
    if (!m_awaitingResponse || requestNumber != m_requestNumber) {
        return;
    }
    m_awaitingResponse = false;
    m_connection.admission().establish(); // no longer a pending connection of its address
    wire::HttpResponse response;
    response.status = 101;
    response.headers = { { QByteArrayLiteral("upgrade"), QByteArrayLiteral("websocket") },
                         { QByteArrayLiteral("connection"), QByteArrayLiteral("Upgrade") },
                         { QByteArrayLiteral("sec-websocket-accept"),
                           wire::websocketAcceptKey(request.header("sec-websocket-key")) } };
    QByteArray head = QByteArrayLiteral("HTTP/1.1 101 Switching Protocols\r\n");
    for (const auto &header : std::as_const(response.headers)) {
        head += header.first + QByteArrayLiteral(": ") + header.second + QByteArrayLiteral("\r\n");
    }
    head += QByteArrayLiteral("\r\n");
    m_connection.send(head);

    const QByteArray leftover = m_upgradeLeftover;
    auto websocket = std::make_unique<WebSocketConnection>(m_connection, std::move(session),
                                                           m_limits.websocket);
    WebSocketConnection *raw = websocket.get();
    // This HttpConnection is destroyed once the current callback returns.
    m_connection.switchHandler(std::move(websocket));
    raw->start(leftover);
}

void HttpConnection::fail(int status)
{
    m_keepAlive = false;
    m_awaitingResponse = false;
    m_pendingInput.clear();
    m_connection.send(wire::serializeResponse(wire::HttpResponse::empty(status), false));
    m_connection.closeAfterFlush();
}

void HttpConnection::onTick(qint64 nowMs)
{
    if (m_awaitingResponse) {
        return; // the service owns the timing (e.g. a delayed error response)
    }
    const qint64 elapsed = nowMs - m_requestStartedMs;
    if (m_sawBytes && elapsed > m_limits.headerTimeoutMs) {
        fail(408);
    } else if (!m_sawBytes && elapsed > m_limits.idleTimeoutMs) {
        m_connection.close();
    }
}

} // namespace rt::transport
