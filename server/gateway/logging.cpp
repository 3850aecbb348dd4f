#include "server/gateway/logging.h"

namespace rt::gateway {

Q_LOGGING_CATEGORY(lcGateway, "rt.gateway")

} // namespace rt::gateway
