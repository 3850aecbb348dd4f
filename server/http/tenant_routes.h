#pragma once

#include "server/http/router.h"
#include "server/tenants/replica_router.h"

#include <QByteArray>
#include <QString>

#include <functional>

namespace rt::tenants {
class ControlPlane;
class TenantDirectory;
class TenantUsageRegistry;
} // namespace rt::tenants

namespace rt::http {

class AdminAuth;

// The tenant management API (spec §9, docs/upstream/tenants-limits-metrics.md §2):
//   GET /api/tenants, POST /api/tenants, GET|PUT|PATCH|DELETE /api/tenants/:tenant_id,
//   POST /api/tenants/:tenant_id/reload, POST …/shutdown, GET …/health.
// Requests are authenticated and parsed on the worker; reads and writes of the control plane run
// on its database thread and are answered from there through a DeferredResponder, so no worker
// ever waits on the database. One instance serves every worker (it is immutable).
//
// With a control-plane replica (DB_REPLICA_HOST), GETs read the replica unless their API session
// wrote within DB_REPLICA_DELAY_MS: every answer to POST/PUT/PATCH/DELETE of a tenant sets the
// cookie realtime_last_write=<ms since the epoch> (Max-Age = the delay, Path=/api/tenants) and
// the header x-realtime-last-write with the same value; a client sends back either (cookie jar,
// or the header copied into its next request) and reads its own writes from the primary.
class TenantRoutes
{
public:
    struct NodeInfo
    {
        QString region; // REGION
        QString node; // a stable name of this node
    };
    // Called from the database thread with a tenant whose sockets must get "Server requested
    // disconnect" and close (reload); must be thread-safe.
    using DisconnectTenant = std::function<void(const QByteArray &externalId)>;
    // The node's tenant databases, for health and shutdown (thread-safe).
    struct TenantDatabases
    {
        std::function<bool(const QByteArray &externalId)> isConnected;
        std::function<void(const QByteArray &externalId)> shutdown;
    };

    TenantRoutes(const AdminAuth &auth, tenants::ControlPlane &controlPlane,
                 const tenants::TenantDirectory &directory, tenants::TenantUsageRegistry &usage,
                 NodeInfo node, DisconnectTenant disconnect, TenantDatabases databases = {});

    void registerOn(Router &router) const;

private:
    // Runs `handler` if the request may use the API; otherwise answers 406 or 403 like upstream.
    bool admit(const wire::HttpRequest &request, const transport::HttpResponder &responder) const;

    void list(const tenants::ApiSession &session, const transport::HttpResponder &responder) const;
    void show(const QByteArray &externalId, const tenants::ApiSession &session,
              const transport::HttpResponder &responder) const;
    void write(const wire::HttpRequest &request, QByteArray externalId,
               const transport::HttpResponder &responder) const;
    void remove(const QByteArray &externalId, const transport::HttpResponder &responder) const;
    void reload(const QByteArray &externalId, const transport::HttpResponder &responder) const;
    void shutdown(const QByteArray &externalId, const transport::HttpResponder &responder) const;
    void health(const QByteArray &externalId, const transport::HttpResponder &responder) const;

    const AdminAuth &m_auth;
    tenants::ControlPlane &m_controlPlane; // lives on the database thread: only posted to
    const tenants::TenantDirectory &m_directory;
    tenants::TenantUsageRegistry &m_usage;
    NodeInfo m_node;
    DisconnectTenant m_disconnect;
    TenantDatabases m_databases;
};

// Whether an Accept header admits a JSON answer (absent, */*, application/*, application/json).
bool acceptsJson(const QByteArray &accept);

} // namespace rt::http
