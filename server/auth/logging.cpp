#include "server/auth/logging.h"

namespace rt::auth {

Q_LOGGING_CATEGORY(lcAuth, "rt.auth")

} // namespace rt::auth
