#include "server/cdc/logging.h"

namespace rt::cdc {

Q_LOGGING_CATEGORY(lcCdc, "rt.cdc")

} // namespace rt::cdc
