#include "server/node/logging.h"

namespace rt::node {

Q_LOGGING_CATEGORY(lcNode, "rt.node")

} // namespace rt::node
