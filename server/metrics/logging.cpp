#include "server/metrics/logging.h"

namespace rt::metrics {

Q_LOGGING_CATEGORY(lcMetrics, "rt.metrics")

} // namespace rt::metrics
