#pragma once

#include <QLoggingCategory>

namespace rt::cluster::links {

// The module's log category ("rt.cluster.links"). Enable its debug output with
// QT_LOGGING_RULES="rt.cluster.links.debug=true".
Q_DECLARE_LOGGING_CATEGORY(lcLinks)

} // namespace rt::cluster::links
