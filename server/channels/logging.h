#pragma once

#include <QLoggingCategory>

namespace rt::channels {

// The module's log category ("rt.channels"). Enable its debug output with
// QT_LOGGING_RULES="rt.channels.debug=true" or LOG_LEVEL=debug.
Q_DECLARE_LOGGING_CATEGORY(lcChannels)

} // namespace rt::channels
