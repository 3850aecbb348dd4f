#pragma once

#include <QLoggingCategory>

namespace rt::auth {

// The module's log category ("rt.auth"). Enable its debug output with
// QT_LOGGING_RULES="rt.auth.debug=true" or LOG_LEVEL=debug.
Q_DECLARE_LOGGING_CATEGORY(lcAuth)

} // namespace rt::auth
