#include "server/limits/logging.h"

namespace rt::limits {

Q_LOGGING_CATEGORY(lcLimits, "rt.limits")

} // namespace rt::limits
