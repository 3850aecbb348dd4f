#pragma once

#include <QLoggingCategory>

namespace rt::pgoutput {

// The module's log category ("rt.pgoutput"). The decoder itself is pure and silent (errors are
// returned as values); callers log with this category when they drop or reject a message.
Q_DECLARE_LOGGING_CATEGORY(lcPgoutput)

} // namespace rt::pgoutput
