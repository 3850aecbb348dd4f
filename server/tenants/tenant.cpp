#include "server/tenants/tenant.h"

namespace rt::tenants {

const Extension *Tenant::databaseExtension() const
{
    for (const Extension &extension : extensions) {
        // "postgres" is upstream's alias of the postgres_cdc_rls type.
        if (extension.type == QLatin1String("postgres_cdc_rls")
            || extension.type == QLatin1String("postgres")) {
            return &extension;
        }
    }
    return nullptr;
}

} // namespace rt::tenants
