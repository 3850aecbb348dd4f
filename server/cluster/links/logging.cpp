#include "server/cluster/links/logging.h"

namespace rt::cluster::links {

Q_LOGGING_CATEGORY(lcLinks, "rt.cluster.links")

} // namespace rt::cluster::links
