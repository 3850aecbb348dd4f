#include "server/http/tenant_routes.h"

#include "server/http/admin_auth.h"
#include "server/http/logging.h"
#include "server/http/tenant_view.h"
#include "server/runtime/post.h"
#include "server/tenants/control_plane.h"
#include "server/tenants/tenant_directory.h"
#include "server/tenants/tenant_input.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>

namespace rt::http {

namespace {

using transport::HttpResponder;

// The answers of upstream's API carry no CORS headers and JSON as Phoenix renders it.
wire::HttpResponse jsonResponse(int status, QByteArray body)
{
    wire::HttpResponse response = wire::HttpResponse::json(status, std::move(body));
    response.setHeader(QByteArrayLiteral("content-type"),
                       QByteArrayLiteral("application/json; charset=utf-8"));
    return response;
}

wire::HttpResponse messageJson(int status, const QString &message)
{
    return jsonResponse(status,
                        QJsonDocument(QJsonObject{ { QStringLiteral("message"), message } })
                                .toJson(QJsonDocument::Compact));
}

wire::HttpResponse notFound()
{
    return messageJson(404, QStringLiteral("not found"));
}

wire::HttpResponse errors422(const QJsonObject &errors)
{
    return jsonResponse(422,
                        QJsonDocument(QJsonObject{ { QStringLiteral("errors"), errors } })
                                .toJson(QJsonDocument::Compact));
}

// Phoenix renders framework errors inside the JSON pipeline as the JSON string of the phrase.
wire::HttpResponse phrase(int status)
{
    return jsonResponse(status, '"' + wire::reasonPhrase(status).toByteArray() + '"');
}

QByteArray tenantParam(const RouteParams &params)
{
    return params.value(QByteArrayLiteral("tenant_id"));
}

// The read-your-writes session a GET carries back (cookie or header; the later one counts).
tenants::ApiSession readSession(const wire::HttpRequest &request)
{
    return tenants::ApiSession::read(tenants::latestSession(
            tenants::parseSessionCookie(request.header("cookie")),
            tenants::parseSessionTimestamp(request.header(tenants::SessionHeaderName))));
}

// A write went to the primary: with a replica, the response starts (or renews) the session
// whose reads go to the primary for the delay, as Rails' DatabaseSelector does after every
// write request. Without a replica the answer stays exactly upstream's.
void startSession(wire::HttpResponse &response, const tenants::ControlPlane &controlPlane)
{
    if (!controlPlane.hasReplica() || controlPlane.replicaDelayMs() <= 0) {
        return;
    }
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    response.headers.append({ QByteArrayLiteral("set-cookie"),
                              tenants::sessionSetCookie(now, controlPlane.replicaDelayMs()) });
    response.setHeader(QByteArray(tenants::SessionHeaderName), QByteArray::number(now));
}

// Answers a write whose body is invalid with 422 and `errors`.
void refuseInvalidWrite(tenants::ControlPlane *controlPlane, const QByteArray &externalId,
                        bool creating, QJsonObject errors, const HttpResponder &responder)
{
    if (creating || !errors.value(QLatin1String("extensions")).isArray()) {
        responder.respond(errors422(errors));
        return;
    }
    // Updating a tenant replaces its extensions, and upstream lists the replaced ones first
    // (valid, so {}) before the new ones in the 422 body.
    runtime::post(controlPlane,
                  [controlPlane, externalId, errors = std::move(errors),
                   deferred = responder.deferred()]() mutable {
                      const Result<tenants::TenantPtr> existing =
                              controlPlane->fetchTenant(externalId, tenants::ApiSession::write());
                      if (existing && *existing && !(*existing)->extensions.isEmpty()) {
                          QJsonArray list;
                          for (qsizetype i = 0; i < (*existing)->extensions.size(); ++i) {
                              list.append(QJsonObject());
                          }
                          const QJsonArray given =
                                  errors.value(QLatin1String("extensions")).toArray();
                          for (const QJsonValue entry : given) {
                              list.append(entry);
                          }
                          errors.insert(QStringLiteral("extensions"), list);
                      }
                      deferred.respond(errors422(errors));
                  });
}

wire::HttpResponse writtenResponse(const tenants::ControlPlane::Written &written)
{
    wire::HttpResponse response =
            jsonResponse(written.created ? 201 : 200, renderTenantData(*written.tenant));
    // Upstream's location names the row's UUID, a path its own API cannot look up.
    response.setHeader(QByteArrayLiteral("location"),
                       QByteArrayLiteral("/api/tenants/") + written.tenant->id.toUtf8());
    return response;
}

wire::HttpResponse writeFailureResponse(const tenants::ControlPlane::WriteFailure &failure,
                                        const QByteArray &externalId)
{
    if (!failure.errors.isEmpty()) {
        return errors422(failure.errors);
    }
    qCWarning(lcHttp) << "writing tenant" << externalId << "failed:" << failure.message;
    return phrase(failure.status >= 400 ? failure.status : 500);
}

// Creates or updates the tenant on the control plane's thread and answers from there.
void upsertTenant(tenants::ControlPlane *controlPlane, const QByteArray &externalId,
                  tenants::TenantPatch patch, const HttpResponder &responder)
{
    runtime::post(
            controlPlane,
            [controlPlane, externalId, patch = std::move(patch), deferred = responder.deferred()] {
                auto written = controlPlane->writeTenant(externalId, patch,
                                                         tenants::ControlPlane::WriteMode::Upsert);
                wire::HttpResponse response = written
                        ? writtenResponse(*written)
                        : writeFailureResponse(written.error(), externalId);
                // Whether or not it committed, the session reads its outcome from the primary.
                startSession(response, *controlPlane);
                deferred.respond(std::move(response));
            });
}

} // namespace

bool acceptsJson(const QByteArray &accept)
{
    if (accept.trimmed().isEmpty()) {
        return true;
    }
    for (const QByteArray &range : accept.split(',')) {
        const qsizetype semicolon = range.indexOf(';');
        const QByteArray type =
                (semicolon < 0 ? range : range.first(semicolon)).trimmed().toLower();
        if (type == "*/*" || type == "application/*" || type == "application/json") {
            return true;
        }
    }
    return false;
}

TenantRoutes::TenantRoutes(const AdminAuth &auth, tenants::ControlPlane &controlPlane,
                           const tenants::TenantDirectory &directory,
                           tenants::TenantUsageRegistry &usage, NodeInfo node,
                           DisconnectTenant disconnect, TenantDatabases databases)
    : m_auth(auth),
      m_controlPlane(controlPlane),
      m_directory(directory),
      m_usage(usage),
      m_node(std::move(node)),
      m_disconnect(std::move(disconnect)),
      m_databases(std::move(databases))
{ }

bool TenantRoutes::admit(const wire::HttpRequest &request, const HttpResponder &responder) const
{
    // Upstream's pipeline negotiates the format before it checks the token.
    if (!acceptsJson(request.header("accept"))) {
        responder.respond(phrase(406));
        return false;
    }
    if (!m_auth.authorises(request)) {
        responder.respond(AdminAuth::refusal());
        return false;
    }
    return true;
}

void TenantRoutes::registerOn(Router &router) const
{
    // Every route authenticates first; the per-tenant ones then act on the path's tenant id.
    using TenantAction = void (TenantRoutes::*)(const QByteArray &, const HttpResponder &) const;
    const auto onTenant = [this](TenantAction action) {
        return [this, action](const wire::HttpRequest &request, const RouteParams &params,
                              const HttpResponder &responder) {
            if (admit(request, responder)) {
                (this->*action)(tenantParam(params), responder);
            }
        };
    };
    router.add("GET", "/api/tenants",
               [this](const wire::HttpRequest &request, const RouteParams &,
                      const HttpResponder &responder) {
                   if (admit(request, responder)) {
                       list(readSession(request), responder);
                   }
               });
    router.add("POST", "/api/tenants",
               [this](const wire::HttpRequest &request, const RouteParams &,
                      const HttpResponder &responder) {
                   if (admit(request, responder)) {
                       write(request, QByteArray(), responder);
                   }
               });
    for (const char *method : { "PUT", "PATCH" }) {
        router.add(method, "/api/tenants/:tenant_id",
                   [this](const wire::HttpRequest &request, const RouteParams &params,
                          const HttpResponder &responder) {
                       if (admit(request, responder)) {
                           write(request, tenantParam(params), responder);
                       }
                   });
    }
    router.add("GET", "/api/tenants/:tenant_id",
               [this](const wire::HttpRequest &request, const RouteParams &params,
                      const HttpResponder &responder) {
                   if (admit(request, responder)) {
                       show(tenantParam(params), readSession(request), responder);
                   }
               });
    router.add("DELETE", "/api/tenants/:tenant_id", onTenant(&TenantRoutes::remove));
    router.add("POST", "/api/tenants/:tenant_id/reload", onTenant(&TenantRoutes::reload));
    router.add("POST", "/api/tenants/:tenant_id/shutdown", onTenant(&TenantRoutes::shutdown));
    router.add("GET", "/api/tenants/:tenant_id/health", onTenant(&TenantRoutes::health));
}

void TenantRoutes::list(const tenants::ApiSession &session, const HttpResponder &responder) const
{
    tenants::ControlPlane *controlPlane = &m_controlPlane;
    runtime::post(controlPlane, [controlPlane, session, deferred = responder.deferred()] {
        Result<QList<tenants::TenantPtr>> all = controlPlane->fetchAll(session);
        if (!all) {
            qCWarning(lcHttp) << "listing tenants failed:" << all.error().message;
            deferred.respond(phrase(500));
            return;
        }
        deferred.respond(jsonResponse(200, renderTenantList(*all)));
    });
}

void TenantRoutes::show(const QByteArray &externalId, const tenants::ApiSession &session,
                        const HttpResponder &responder) const
{
    tenants::ControlPlane *controlPlane = &m_controlPlane;
    runtime::post(
            controlPlane, [controlPlane, externalId, session, deferred = responder.deferred()] {
                Result<tenants::TenantPtr> tenant = controlPlane->fetchTenant(externalId, session);
                if (!tenant) {
                    qCWarning(lcHttp) << "reading tenant" << externalId
                                      << "failed:" << tenant.error().message;
                    deferred.respond(phrase(500));
                } else if (!*tenant) {
                    deferred.respond(notFound());
                } else {
                    deferred.respond(jsonResponse(200, renderTenantData(**tenant)));
                }
            });
}

void TenantRoutes::write(const wire::HttpRequest &request, QByteArray externalId,
                         const HttpResponder &responder) const
{
    tenants::TenantWriteBody body = tenants::readTenantWriteBody(request.body);
    if (body.status == tenants::TenantWriteBody::Status::NotJson) {
        responder.respond(Router::plainBadRequest());
        return;
    }
    if (body.status == tenants::TenantWriteBody::Status::NoTenantObject) {
        responder.respond(phrase(400));
        return;
    }
    tenants::TenantPatchResult &parsed = body.parsed;
    const bool creating = externalId.isEmpty(); // POST: the id comes from the body
    if (creating) {
        if (parsed.externalId) {
            externalId = *parsed.externalId;
        } else if (!parsed.errors.contains(QLatin1String("external_id"))) {
            parsed.errors.insert(QStringLiteral("external_id"),
                                 QJsonArray{ QStringLiteral("can't be blank") });
        }
    }
    tenants::ControlPlane *controlPlane = &m_controlPlane;
    if (!parsed.errors.isEmpty()) {
        refuseInvalidWrite(controlPlane, externalId, creating, std::move(parsed.errors), responder);
        return;
    }
    upsertTenant(controlPlane, externalId, std::move(parsed.patch), responder);
}

void TenantRoutes::remove(const QByteArray &externalId, const HttpResponder &responder) const
{
    tenants::ControlPlane *controlPlane = &m_controlPlane;
    runtime::post(controlPlane, [controlPlane, externalId, deferred = responder.deferred()] {
        // The control plane announces the deletion (tenantChanged), which disconnects sockets.
        Result<bool> deleted = controlPlane->deleteTenant(externalId);
        wire::HttpResponse response = wire::HttpResponse::empty(204);
        if (!deleted) {
            qCWarning(lcHttp) << "deleting tenant" << externalId
                              << "failed:" << deleted.error().message;
            response = phrase(500);
        }
        startSession(response, *controlPlane);
        deferred.respond(std::move(response));
    });
}

void TenantRoutes::reload(const QByteArray &externalId, const HttpResponder &responder) const
{
    tenants::ControlPlane *controlPlane = &m_controlPlane;
    runtime::post(
            controlPlane,
            [controlPlane, externalId, disconnect = m_disconnect, deferred = responder.deferred()] {
                Result<tenants::TenantPtr> tenant =
                        controlPlane->fetchTenant(externalId, tenants::ApiSession::write());
                if (!tenant) {
                    deferred.respond(phrase(500));
                } else if (!*tenant) {
                    deferred.respond(notFound());
                } else {
                    disconnect(externalId);
                    deferred.respond(wire::HttpResponse::empty(204));
                }
            });
}

void TenantRoutes::shutdown(const QByteArray &externalId, const HttpResponder &responder) const
{
    // Stops the tenant's database connection (the next join opens it again).
    tenants::ControlPlane *controlPlane = &m_controlPlane;
    runtime::post(controlPlane,
                  [controlPlane, externalId, shutdownDatabase = m_databases.shutdown,
                   deferred = responder.deferred()] {
                      Result<tenants::TenantPtr> tenant =
                              controlPlane->fetchTenant(externalId, tenants::ApiSession::write());
                      if (!tenant) {
                          deferred.respond(phrase(500));
                      } else if (!*tenant) {
                          deferred.respond(notFound());
                      } else {
                          if (shutdownDatabase) {
                              shutdownDatabase(externalId);
                          }
                          deferred.respond(wire::HttpResponse::empty(204));
                      }
                  });
}

void TenantRoutes::health(const QByteArray &externalId, const HttpResponder &responder) const
{
    // From the cache, like upstream; answered on the worker.
    const tenants::TenantPtr tenant = m_directory.find(externalId);
    if (!tenant) {
        responder.respond(notFound());
        return;
    }
    const std::shared_ptr<tenants::TenantUsage> usage = m_usage.usage(externalId);
    const int connected = usage->connectedUsers.load(std::memory_order_relaxed);
    const bool dbConnected = m_databases.isConnected && m_databases.isConnected(externalId);
    // Upstream: healthy unless it has users that its database connection cannot serve (this
    // node's users: the connection asked about is this node's).
    const bool healthy = !tenant->hasDatabase() || connected == 0 || dbConnected;
    QJsonObject data{
        { QStringLiteral("healthy"), healthy },
        { QStringLiteral("db_connected"), dbConnected },
        { QStringLiteral("replication_connected"), dbConnected },
        { QStringLiteral("connected_cluster"), usage->clusterUsers() },
        { QStringLiteral("region"), m_node.region },
        { QStringLiteral("node"), m_node.node },
    };
    responder.respond(jsonResponse(200,
                                   QJsonDocument(QJsonObject{ { QStringLiteral("data"), data } })
                                           .toJson(QJsonDocument::Compact)));
}

} // namespace rt::http
