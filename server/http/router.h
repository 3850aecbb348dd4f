#pragma once

#include "server/transport/http_connection.h"

#include <QByteArray>
#include <QHash>

#include <functional>
#include <vector>

namespace rt::http {

// Path parameters of a matched route (":topic" -> value), percent-decoded.
using RouteParams = QHash<QByteArray, QByteArray>;
using RouteHandler = std::function<void(const wire::HttpRequest &, const RouteParams &,
                                        const transport::HttpResponder &)>;

// Routes requests by method and path to handlers. Every route is also served under the
// "/realtime/v1" prefix, because realtime-js derives REST URLs from the socket URL
// (spec client §8.2) and gateways that do not strip it should work too. Unknown paths get 404,
// known paths with another method 405, and CORS preflights (OPTIONS) a permissive 204, as
// upstream's open CORS policy. Immutable after setup; one per worker, worker thread.
class Router final : public transport::HttpService
{
public:
    // pattern: "/api/broadcast/:topic/events/:event"; method "*" matches every method.
    void add(const QByteArray &method, const QByteArray &pattern, RouteHandler handler);

    void handle(wire::HttpRequest request, const transport::HttpResponder &responder) override;

    // Headers every API response carries (CORS).
    static void addCorsHeaders(wire::HttpResponse &response);
    // 400 with the plain-text body "Bad Request", as the reference server answers a body that
    // is not JSON.
    static wire::HttpResponse plainBadRequest();

private:
    struct Route
    {
        QByteArray method;
        QList<QByteArray> segments; // ":name" segments capture
        RouteHandler handler;
    };
    std::vector<Route> m_routes;
};

} // namespace rt::http
