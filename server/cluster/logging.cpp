#include "server/cluster/logging.h"

namespace rt::cluster {

Q_LOGGING_CATEGORY(lcCluster, "rt.cluster")

} // namespace rt::cluster
