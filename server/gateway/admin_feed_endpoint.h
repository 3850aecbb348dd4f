#pragma once

#include "server/gateway/admin_session.h"
#include "server/transport/http_connection.h"

#include <functional>

namespace rt::gateway {

// The admin live feed's WebSocket route (/api/admin/live/websocket, docs/admin-api.md):
// validates the handshake and the serializer (`vsn`, 1.0.0 when absent), asks `authorise`
// (the operator token, from the Authorization header or the `apikey` query parameter) and
// upgrades to an AdminSession; a bad serializer or token gets 403 with an empty body. One per
// worker; worker thread.
class AdminFeedEndpoint
{
public:
    struct Parts
    {
        std::function<bool(const wire::HttpRequest &)> authorise; // thread-safe
        AdminSnapshotSource source;
        int pushIntervalMs = 1000;
    };

    explicit AdminFeedEndpoint(Parts parts) : m_parts(std::move(parts)) { }

    void handle(const wire::HttpRequest &request, const transport::HttpResponder &responder) const;

private:
    Parts m_parts;
};

} // namespace rt::gateway
