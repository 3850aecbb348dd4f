#include "server/replication/logging.h"

namespace rt::replication {

Q_LOGGING_CATEGORY(lcReplication, "rt.replication")

} // namespace rt::replication
