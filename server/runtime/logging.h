#pragma once

#include <QLoggingCategory>

namespace rt::runtime {

// The module's log category ("rt.runtime"). Enable its debug output with
// QT_LOGGING_RULES="rt.runtime.debug=true" or LOG_LEVEL=debug.
Q_DECLARE_LOGGING_CATEGORY(lcRuntime)

} // namespace rt::runtime
