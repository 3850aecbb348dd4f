#pragma once

#include <QJsonObject>

#include <functional>

namespace rt::http {

class AdminAuth;
class Router;

// GET /api/cluster: this node's view of the cluster (members with region, addresses, uptime
// and load; whether the cluster backend is reachable), for operators and the dashboard.
// Authorised like the tenant management API (a JWT signed with API_JWT_SECRET). `view` is
// called on the worker thread that serves the request; it must be thread-safe.
void registerClusterRoutes(Router &router, const AdminAuth &auth,
                           std::function<QJsonObject()> view);

} // namespace rt::http
