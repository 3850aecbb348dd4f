#include "server/pubsub/logging.h"

namespace rt::pubsub {

Q_LOGGING_CATEGORY(lcPubsub, "rt.pubsub")

} // namespace rt::pubsub
