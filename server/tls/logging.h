#pragma once

#include <QLoggingCategory>

namespace rt::tls {

// The module's log category ("rt.tls"): handshake failures (debug), certificate loads and
// reloads (info, warning).
Q_DECLARE_LOGGING_CATEGORY(lcTls)

} // namespace rt::tls
