#pragma once

#include <QLoggingCategory>

namespace rt::transport {

// The module's log category ("rt.transport"). Enable its debug output with
// QT_LOGGING_RULES="rt.transport.debug=true" or LOG_LEVEL=debug.
Q_DECLARE_LOGGING_CATEGORY(lcTransport)

} // namespace rt::transport
