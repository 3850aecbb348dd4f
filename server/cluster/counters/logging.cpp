#include "server/cluster/counters/logging.h"

namespace rt::cluster::counters {

Q_LOGGING_CATEGORY(lcCounters, "rt.cluster.counters")

} // namespace rt::cluster::counters
