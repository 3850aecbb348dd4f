#include "server/runtime/logging.h"

namespace rt::runtime {

Q_LOGGING_CATEGORY(lcRuntime, "rt.runtime")

} // namespace rt::runtime
