#include "server/subscriptions/logging.h"

namespace rt::subscriptions {

Q_LOGGING_CATEGORY(lcSubscriptions, "rt.subscriptions")

} // namespace rt::subscriptions
