#include "server/presence/logging.h"

namespace rt::presence {

Q_LOGGING_CATEGORY(lcPresence, "rt.presence")

} // namespace rt::presence
