#include "server/gateway/socket_endpoint.h"

#include "server/gateway/connect_gate.h"
#include "server/gateway/phoenix_session.h"
#include "server/transport/websocket_connection.h"

namespace rt::gateway {

SocketEndpoint::SocketEndpoint(const ConnectGate &gate, channels::ChannelService &service)
    : m_gate(gate),
      m_service(service)
{ }

void SocketEndpoint::handle(const wire::HttpRequest &request,
                            const transport::HttpResponder &responder)
{
    wire::HttpResponse handshakeError = transport::checkWebSocketHandshake(request);
    if (handshakeError.status != 0) {
        responder.respond(handshakeError);
        return;
    }
    ConnectGate::Decision decision = m_gate.check(request);
    if (!decision.accepted) {
        responder.respondAfter(decision.delayed ? m_gate.settings().connectErrorBackoffMs : 0,
                               std::move(decision.refusal));
        return;
    }
    responder.acceptWebSocket(request,
                              std::make_unique<PhoenixSession>(
                                      m_service, std::move(*decision.accepted), &m_sessions));
}

int SocketEndpoint::disconnectTenant(const QByteArray &tenantId)
{
    const QList<PhoenixSession *> sessions = m_sessions.sessionsOf(tenantId);
    for (PhoenixSession *session : sessions) {
        session->disconnectByServer();
    }
    return static_cast<int>(sessions.size());
}

} // namespace rt::gateway
