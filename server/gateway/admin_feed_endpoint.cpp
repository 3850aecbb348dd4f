#include "server/gateway/admin_feed_endpoint.h"

#include "server/gateway/logging.h"
#include "shared/protocol/phoenix_codec.h"

#include <QLoggingCategory>

namespace rt::gateway {

void AdminFeedEndpoint::handle(const wire::HttpRequest &request,
                               const transport::HttpResponder &responder) const
{
    wire::HttpResponse handshakeError = transport::checkWebSocketHandshake(request);
    if (handshakeError.status != 0) {
        responder.respond(handshakeError);
        return;
    }
    const QByteArray vsnText = wire::queryValue(wire::parseQuery(request.query), "vsn");
    const std::optional<protocol::Vsn> vsn = protocol::parseVsn(vsnText, !vsnText.isNull());
    if (!vsn || !m_parts.authorise || !m_parts.authorise(request)) {
        qCInfo(lcGateway) << "admin feed refused:" << (vsn ? "not authorised" : "bad vsn");
        responder.respond(wire::HttpResponse::empty(403));
        return;
    }
    responder.acceptWebSocket(
            request, std::make_unique<AdminSession>(*vsn, m_parts.source, m_parts.pushIntervalMs));
}

} // namespace rt::gateway
