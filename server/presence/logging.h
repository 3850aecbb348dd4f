#pragma once

#include <QLoggingCategory>

namespace rt::presence {

// The module's log category ("rt.presence"). Enable its debug output with
// QT_LOGGING_RULES="rt.presence.debug=true" or LOG_LEVEL=debug.
Q_DECLARE_LOGGING_CATEGORY(lcPresence)

} // namespace rt::presence
