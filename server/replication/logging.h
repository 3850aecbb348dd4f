#pragma once

#include <QLoggingCategory>

namespace rt::replication {

// The module's log category ("rt.replication"). Enable its debug output with
// QT_LOGGING_RULES="rt.replication.debug=true" or LOG_LEVEL=debug.
Q_DECLARE_LOGGING_CATEGORY(lcReplication)

} // namespace rt::replication
