#pragma once

#include <QByteArray>

#include <functional>

namespace rt::http {

class AdminAuth;
class Router;

// Produces the admin API's cluster snapshot (docs/admin-api.md) as compact JSON. Called on any
// thread; it must not block: it calls `done` later, on a thread of its choosing, with the JSON,
// or with empty bytes when the node cannot answer (not in the cluster yet, or stopping).
using AdminSnapshotSource = std::function<void(std::function<void(QByteArray json)> done)>;

// GET /api/admin/snapshot: the whole cluster as this node sees it (rt::api::ClusterSnapshot),
// and GET /api/admin/history: the last hour of every member's figures (rt::api::ClusterHistory),
// authorised like /api/cluster (a JWT signed with API_JWT_SECRET). 503 when a source has
// nothing to give.
void registerAdminRoutes(Router &router, const AdminAuth &auth, AdminSnapshotSource snapshot,
                         AdminSnapshotSource history);

} // namespace rt::http
