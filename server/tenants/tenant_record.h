#pragma once

#include "server/tenants/tenant.h"
#include "server/tenants/tenant_input.h"
#include "shared/core/result.h"

#include <QJsonObject>
#include <QLatin1StringView>
#include <QVariant>

#include <functional>
#include <vector>

namespace rt::tenants {

// A tenant record as the tenant API changes it and as the control plane stores it, with no
// database in sight: the new record a patch makes of the old one, and the one table of stored
// columns from which the control plane writes its SQL and its bound values. Pure; any thread.

struct PatchContext
{
    // Replace (seeds): the record becomes exactly the input over the defaults, keeping only the
    // old id and inserted_at. Otherwise (tenant API) a missing record is created and an existing
    // one keeps every field the patch leaves out.
    bool replace = false;
    QByteArray externalId; // the record's (when it is created)
    QString newId; // the id of a record created now
    QDateTime now; // inserted_at of a new record, updated_at of every written one (UTC, seconds)
};

// The record after `patch` (`before` is null when there is none), or upstream's 422 errors
// ({"jwt_secret": ["either jwt_secret or jwt_jwks must be provided"]}). Extensions are copied as
// given; their stored (encrypted) settings and timestamps are the control plane's to fill.
Result<Tenant, QJsonObject> applyPatch(const Tenant *before, const TenantPatch &patch,
                                       const TenantDefaults &defaults, const PatchContext &context);

// Whether two loads of a tenant differ in anything stored (updated_at has only second
// precision, so it cannot tell on its own; other writers may not even touch it).
bool storedDiffer(const Tenant &a, const Tenant &b);

// Whether two tenants differ in what authorises sockets (so they must reconnect).
bool credentialsDiffer(const Tenant &before, const Tenant &after);

// One column of the tenants table that a write sets (all but id, external_id and inserted_at,
// which only an insert sets): its name and the value bound for a record. The encrypt function
// turns a secret (the JWT secret) into its stored form, given the column it is stored in.
using EncryptSecret = std::function<QByteArray(QLatin1StringView column, const QByteArray &)>;
struct TenantColumn
{
    QLatin1StringView name;
    std::function<QVariant(const Tenant &, const EncryptSecret &)> value;
};
const std::vector<TenantColumn> &writtenTenantColumns();

} // namespace rt::tenants
