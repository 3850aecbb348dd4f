#include "server/transport/logging.h"

namespace rt::transport {

Q_LOGGING_CATEGORY(lcTransport, "rt.transport")

} // namespace rt::transport
