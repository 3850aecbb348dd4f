#include "tests/support/tenants/control_plane_start.h"

#include <QSignalSpy>

namespace rt::testsupport {

StartOutcome startControlPlane(const tenants::ControlPlaneSettings &settings,
                               const QList<tenants::TenantInput> &seeds,
                               tenants::TenantDirectory &directory,
                               const tenants::TenantDefaults &defaults)
{
    tenants::ControlPlane plane(settings, defaults, directory);
    QSignalSpy ready(&plane, &tenants::ControlPlane::ready);
    QSignalSpy failed(&plane, &tenants::ControlPlane::failed);
    plane.start(seeds);
    StartOutcome outcome;
    outcome.readySignals = static_cast<int>(ready.size());
    outcome.failedSignals = static_cast<int>(failed.size());
    if (!ready.isEmpty()) {
        outcome.readyCount = ready.constFirst().constFirst().toInt();
    }
    if (!failed.isEmpty()) {
        outcome.failure = failed.constFirst().constFirst().toString();
    }
    return outcome;
}

} // namespace rt::testsupport
