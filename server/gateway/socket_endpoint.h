#pragma once

#include "server/gateway/tenant_sessions.h"
#include "server/transport/http_connection.h"

namespace rt::channels {
class ChannelService;
}

namespace rt::gateway {

class ConnectGate;

// The WebSocket route (/socket/websocket, /realtime/v1/websocket): validates the handshake,
// runs the connect checks and either upgrades the connection to a PhoenixSession or answers
// upstream's HTTP error after the connect-error backoff. One per worker; worker thread.
class SocketEndpoint
{
public:
    SocketEndpoint(const ConnectGate &gate, channels::ChannelService &service);

    void handle(const wire::HttpRequest &request, const transport::HttpResponder &responder);

    // "Server requested disconnect" and close 1012 for every socket of the tenant on this worker.
    // Returns how many sockets were told.
    int disconnectTenant(const QByteArray &tenantId);
    // Open client sockets on this worker.
    qsizetype sessionCount() const { return m_sessions.count(); }

private:
    const ConnectGate &m_gate;
    channels::ChannelService &m_service;
    TenantSessions m_sessions;
};

} // namespace rt::gateway
