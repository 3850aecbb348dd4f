#pragma once

#include <QLoggingCategory>

namespace rt::cdc {

// The module's log category ("rt.cdc"). Enable its debug output with
// QT_LOGGING_RULES="rt.cdc.debug=true" or LOG_LEVEL=debug.
Q_DECLARE_LOGGING_CATEGORY(lcCdc)

} // namespace rt::cdc
