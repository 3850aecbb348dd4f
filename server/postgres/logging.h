#pragma once

#include <QLoggingCategory>

namespace rt::postgres {

// The module's log category ("rt.postgres"). Enable its debug output with
// QT_LOGGING_RULES="rt.postgres.debug=true" or LOG_LEVEL=debug.
Q_DECLARE_LOGGING_CATEGORY(lcPostgres)

} // namespace rt::postgres
