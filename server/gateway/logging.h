#pragma once

#include <QLoggingCategory>

namespace rt::gateway {

// The module's log category ("rt.gateway"). Enable its debug output with
// QT_LOGGING_RULES="rt.gateway.debug=true" or LOG_LEVEL=debug.
Q_DECLARE_LOGGING_CATEGORY(lcGateway)

} // namespace rt::gateway
