#include "server/http/metrics_routes.h"

#include "server/http/admin_auth.h"
#include "server/metrics/text_format.h"

namespace rt::http {

void registerMetricsRoutes(Router &router, const AdminAuth &auth,
                           std::function<QByteArray()> render)
{
    const auto handler = [&auth, render = std::move(render)](
                                 const wire::HttpRequest &request, const RouteParams &,
                                 const transport::HttpResponder &responder) {
        if (!auth.authorises(request)) {
            responder.respond(AdminAuth::refusal());
            return;
        }
        wire::HttpResponse response;
        response.status = 200;
        response.setHeader(QByteArrayLiteral("content-type"), QByteArray(metrics::ContentType));
        response.body = render();
        responder.respond(response);
    };
    router.add("GET", "/metrics", handler);
    // Upstream aggregates the nodes of a region here; a single node answers for itself.
    router.add("GET", "/metrics/:region", handler);
}

} // namespace rt::http
