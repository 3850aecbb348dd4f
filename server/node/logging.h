#pragma once

#include <QLoggingCategory>

namespace rt::node {

// The module's log category ("rt.node"). Enable its debug output with
// QT_LOGGING_RULES="rt.node.debug=true" or LOG_LEVEL=debug.
Q_DECLARE_LOGGING_CATEGORY(lcNode)

} // namespace rt::node
