#pragma once

#include <QLoggingCategory>

namespace rt::tenants {

// The module's log category ("rt.tenants"). Enable its debug output with
// QT_LOGGING_RULES="rt.tenants.debug=true" or LOG_LEVEL=debug.
Q_DECLARE_LOGGING_CATEGORY(lcTenants)

} // namespace rt::tenants
