#pragma once

#include "server/http/router.h"

namespace rt::http {

class TenantApiAuth;

// GET /healthcheck (no auth, "ok") and GET /api/ping (tenant from Host).
void registerHealthRoutes(Router &router, const TenantApiAuth &auth);

} // namespace rt::http
