#include "server/http/router.h"

#include "server/http/logging.h"

#include <QLoggingCategory>

namespace rt::http {

namespace {

const QByteArray ApiPrefix = QByteArrayLiteral("/realtime/v1");

QList<QByteArray> splitPath(const QByteArray &path)
{
    QList<QByteArray> segments = path.split('/');
    segments.removeAll(QByteArray());
    return segments;
}

bool match(const QList<QByteArray> &pattern, const QList<QByteArray> &path, RouteParams &params)
{
    if (pattern.size() != path.size()) {
        return false;
    }
    for (qsizetype i = 0; i < pattern.size(); ++i) {
        if (pattern[i].startsWith(':')) {
            params.insert(pattern[i].mid(1), wire::percentDecode(path[i]));
        } else if (pattern[i] != path[i]) {
            return false;
        }
    }
    return true;
}

} // namespace

void Router::add(const QByteArray &method, const QByteArray &pattern, RouteHandler handler)
{
    m_routes.push_back(Route{ method, splitPath(pattern), std::move(handler) });
}

void Router::addCorsHeaders(wire::HttpResponse &response)
{
    response.setHeader(QByteArrayLiteral("access-control-allow-origin"), QByteArrayLiteral("*"));
    response.setHeader(QByteArrayLiteral("access-control-expose-headers"),
                       QByteArrayLiteral("x-rate-rolling, x-rate-limit, x-rate-limit-remaining"));
}

void Router::handle(wire::HttpRequest request, const transport::HttpResponder &responder)
{
    QByteArray path = request.path;
    if (path.startsWith(ApiPrefix) && path.size() > ApiPrefix.size()
        && path.at(ApiPrefix.size()) == '/') {
        path = path.mid(ApiPrefix.size());
    }
    const QList<QByteArray> segments = splitPath(path);

    if (request.method == "OPTIONS") {
        wire::HttpResponse response = wire::HttpResponse::empty(204);
        addCorsHeaders(response);
        response.setHeader(QByteArrayLiteral("access-control-allow-methods"),
                           QByteArrayLiteral("GET, POST, PUT, PATCH, DELETE, OPTIONS"));
        const QByteArray requested = request.header("access-control-request-headers");
        response.setHeader(QByteArrayLiteral("access-control-allow-headers"),
                           requested.isEmpty()
                                   ? QByteArrayLiteral("authorization, apikey, content-type, "
                                                       "x-client-info")
                                   : requested);
        response.setHeader(QByteArrayLiteral("access-control-max-age"), QByteArrayLiteral("86400"));
        responder.respond(response);
        return;
    }

    bool pathKnown = false;
    for (const Route &route : m_routes) {
        RouteParams params;
        if (!match(route.segments, segments, params)) {
            continue;
        }
        pathKnown = true;
        // HEAD is answered like GET (the body is dropped by the client).
        if (route.method == request.method || route.method == "*"
            || (route.method == "GET" && request.method == "HEAD")) {
            route.handler(request, params, responder);
            return;
        }
    }
    wire::HttpResponse response = wire::HttpResponse::json(
            pathKnown ? 405 : 404,
            pathKnown ? QByteArrayLiteral("{\"error\":\"Method Not Allowed\"}")
                      : QByteArrayLiteral("{\"error\":\"Not Found\"}"));
    addCorsHeaders(response);
    responder.respond(response);
}

wire::HttpResponse Router::plainBadRequest()
{
    wire::HttpResponse response;
    response.status = 400;
    response.setHeader(QByteArrayLiteral("content-type"),
                       QByteArrayLiteral("text/plain; charset=utf-8"));
    response.body = QByteArrayLiteral("Bad Request");
    return response;
}

} // namespace rt::http
