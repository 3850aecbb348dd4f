#pragma once

#include <QLoggingCategory>

namespace rt::pubsub {

// The module's log category ("rt.pubsub"). Enable its debug output with
// QT_LOGGING_RULES="rt.pubsub.debug=true" or LOG_LEVEL=debug.
Q_DECLARE_LOGGING_CATEGORY(lcPubsub)

} // namespace rt::pubsub
