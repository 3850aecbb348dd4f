#include "server/postgres/logging.h"

namespace rt::postgres {

Q_LOGGING_CATEGORY(lcPostgres, "rt.postgres")

} // namespace rt::postgres
