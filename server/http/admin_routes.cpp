#include "server/http/admin_routes.h"

#include "server/http/admin_auth.h"
#include "server/http/router.h"
#include "server/transport/http_connection.h"
#include "server/wire/http_message.h"

namespace rt::http {

namespace {

void addJsonRoute(Router &router, const AdminAuth &auth, const QByteArray &path,
                  AdminSnapshotSource source)
{
    router.add(QByteArrayLiteral("GET"), path,
               [&auth, source = std::move(source)](const wire::HttpRequest &request,
                                                   const RouteParams &,
                                                   const transport::HttpResponder &responder) {
                   if (!auth.authorises(request)) {
                       responder.respond(AdminAuth::refusal());
                       return;
                   }
                   // Built on the thread that owns the figures; answered from there.
                   const transport::DeferredResponder deferred = responder.deferred();
                   source([deferred](const QByteArray &json) {
                       deferred.respond(json.isEmpty() ? wire::HttpResponse::json(
                                                503,
                                                QByteArrayLiteral("{\"error\":\"the cluster "
                                                                  "view is not available\"}"))
                                                       : wire::HttpResponse::json(200, json));
                   });
               });
}

} // namespace

void registerAdminRoutes(Router &router, const AdminAuth &auth, AdminSnapshotSource snapshot,
                         AdminSnapshotSource history)
{
    addJsonRoute(router, auth, QByteArrayLiteral("/api/admin/snapshot"), std::move(snapshot));
    addJsonRoute(router, auth, QByteArrayLiteral("/api/admin/history"), std::move(history));
}

} // namespace rt::http
