#include "server/http/health_routes.h"

#include "server/http/api_auth.h"

namespace rt::http {

void registerHealthRoutes(Router &router, const TenantApiAuth &auth)
{
    router.add("GET", "/healthcheck",
               [](const wire::HttpRequest &, const RouteParams &,
                  const transport::HttpResponder &responder) {
                   wire::HttpResponse response;
                   response.status = 200;
                   response.setHeader(QByteArrayLiteral("content-type"),
                                      QByteArrayLiteral("text/plain; charset=utf-8"));
                   response.body = QByteArrayLiteral("ok");
                   responder.respond(response);
               });
    router.add("GET", "/api/ping",
               [&auth](const wire::HttpRequest &request, const RouteParams &,
                       const transport::HttpResponder &responder) {
                   const TenantApiAuth::Outcome admitted = auth.admit(request);
                   if (!admitted.tenant) {
                       responder.respond(admitted.refusal);
                       return;
                   }
                   responder.respond(admitted.withRateHeaders(
                           messageResponse(200, QStringLiteral("Success"))));
               });
}

} // namespace rt::http
