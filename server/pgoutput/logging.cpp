#include "server/pgoutput/logging.h"

namespace rt::pgoutput {

Q_LOGGING_CATEGORY(lcPgoutput, "rt.pgoutput")

} // namespace rt::pgoutput
