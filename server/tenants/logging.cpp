#include "server/tenants/logging.h"

namespace rt::tenants {

Q_LOGGING_CATEGORY(lcTenants, "rt.tenants")

} // namespace rt::tenants
