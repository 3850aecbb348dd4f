#include "server/tls/logging.h"

namespace rt::tls {

Q_LOGGING_CATEGORY(lcTls, "rt.tls")

} // namespace rt::tls
