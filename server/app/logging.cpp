#include "server/app/logging.h"

namespace rt::app {

Q_LOGGING_CATEGORY(lcApp, "rt.app")

} // namespace rt::app
