#pragma once

#include <QLoggingCategory>

namespace rt::cluster {

// The module's log category ("rt.cluster"). Enable its debug output with
// QT_LOGGING_RULES="rt.cluster.debug=true" or LOG_LEVEL=debug.
Q_DECLARE_LOGGING_CATEGORY(lcCluster)

} // namespace rt::cluster
