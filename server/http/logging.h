#pragma once

#include <QLoggingCategory>

namespace rt::http {

// The module's log category ("rt.http"). Enable its debug output with
// QT_LOGGING_RULES="rt.http.debug=true" or LOG_LEVEL=debug.
Q_DECLARE_LOGGING_CATEGORY(lcHttp)

} // namespace rt::http
