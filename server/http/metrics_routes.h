#pragma once

#include "server/http/router.h"

#include <functional>

namespace rt::http {

class AdminAuth;

// GET /metrics and GET /metrics/:region (Prometheus text format 0.0.4), authenticated like
// upstream with a Bearer JWT signed by METRICS_JWT_SECRET (403 with an empty body otherwise).
// `render` produces the body on the worker that serves the request; it must be thread-safe.
void registerMetricsRoutes(Router &router, const AdminAuth &auth,
                           std::function<QByteArray()> render);

} // namespace rt::http
