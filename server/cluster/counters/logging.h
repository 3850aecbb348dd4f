#pragma once

#include <QLoggingCategory>

namespace rt::cluster::counters {

// The module's log category ("rt.cluster.counters"). Enable its debug output with
// QT_LOGGING_RULES="rt.cluster.counters.debug=true" or LOG_LEVEL=debug.
Q_DECLARE_LOGGING_CATEGORY(lcCounters)

} // namespace rt::cluster::counters
