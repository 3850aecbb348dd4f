#pragma once

#include <QLoggingCategory>

namespace rt::limits {

// The module's log category ("rt.limits"). Enable its debug output with
// QT_LOGGING_RULES="rt.limits.debug=true" or LOG_LEVEL=debug.
Q_DECLARE_LOGGING_CATEGORY(lcLimits)

} // namespace rt::limits
