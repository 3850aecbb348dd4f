#pragma once

#include <QLoggingCategory>

namespace rt::app {

// The module's log category ("rt.app"). Enable its debug output with
// QT_LOGGING_RULES="rt.app.debug=true" or LOG_LEVEL=debug.
Q_DECLARE_LOGGING_CATEGORY(lcApp)

} // namespace rt::app
