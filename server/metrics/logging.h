#pragma once

#include <QLoggingCategory>

namespace rt::metrics {

// The module's log category ("rt.metrics"). Enable its debug output with
// QT_LOGGING_RULES="rt.metrics.debug=true" or LOG_LEVEL=debug.
Q_DECLARE_LOGGING_CATEGORY(lcMetrics)

} // namespace rt::metrics
