#include "server/http/logging.h"

namespace rt::http {

Q_LOGGING_CATEGORY(lcHttp, "rt.http")

} // namespace rt::http
