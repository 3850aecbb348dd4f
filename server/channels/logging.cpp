#include "server/channels/logging.h"

namespace rt::channels {

Q_LOGGING_CATEGORY(lcChannels, "rt.channels")

} // namespace rt::channels
