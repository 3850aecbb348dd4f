#pragma once

#include <QLoggingCategory>

namespace rt::subscriptions {

// The module's log category ("rt.subscriptions"). Enable its debug output with
// QT_LOGGING_RULES="rt.subscriptions.debug=true" or LOG_LEVEL=debug.
Q_DECLARE_LOGGING_CATEGORY(lcSubscriptions)

} // namespace rt::subscriptions
