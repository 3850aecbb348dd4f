#include "server/http/cluster_routes.h"

#include "server/http/admin_auth.h"
#include "server/http/router.h"
#include "server/transport/http_connection.h"
#include "server/wire/http_message.h"

#include <QJsonDocument>

namespace rt::http {

void registerClusterRoutes(Router &router, const AdminAuth &auth, std::function<QJsonObject()> view)
{
    router.add(QByteArrayLiteral("GET"), QByteArrayLiteral("/api/cluster"),
               [&auth, view = std::move(view)](const wire::HttpRequest &request,
                                               const RouteParams &,
                                               const transport::HttpResponder &responder) {
                   if (!auth.authorises(request)) {
                       responder.respond(AdminAuth::refusal());
                       return;
                   }
                   responder.respond(wire::HttpResponse::json(
                           200, QJsonDocument(view()).toJson(QJsonDocument::Compact)));
               });
}

} // namespace rt::http
