#pragma once

#include "server/tenants/control_plane.h"
#include "server/tenants/tenant_directory.h"

#include <QList>
#include <QString>

namespace rt::testsupport {

// What one control-plane start reported: ready(count) or failed(message), and how often.
struct StartOutcome
{
    int readyCount = -1; // -1: ready() was not emitted
    QString failure; // empty: failed() was not emitted
    int readySignals = 0;
    int failedSignals = 0;
};

// Starts a control plane with `settings` and `seeds` into `directory`, as the server does, and
// destroys it again; the calling thread plays the database thread.
StartOutcome startControlPlane(const tenants::ControlPlaneSettings &settings,
                               const QList<tenants::TenantInput> &seeds,
                               tenants::TenantDirectory &directory,
                               const tenants::TenantDefaults &defaults);

} // namespace rt::testsupport
