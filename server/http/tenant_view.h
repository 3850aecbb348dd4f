#pragma once

#include "server/tenants/tenant.h"

#include <QByteArray>
#include <QList>

namespace rt::http {

// The tenant object of the tenant management API (spec §9, docs/upstream/tenants-limits-metrics.md
// §2.2), as compact JSON: id, external_id, name, four limits, inserted_at (UTC, seconds, no zone),
// private_only, presence_enabled, the two client presence fields and `extensions`, each with
// exactly type, inserted_at, updated_at and settings in that order, settings as stored (secrets
// encrypted) without db_password. Secrets, JWKS and the other limits are never rendered. Pure.
QByteArray renderTenant(const tenants::Tenant &tenant);

// {"data": <tenant>} and {"data": [<tenant>, ...]}.
QByteArray renderTenantData(const tenants::Tenant &tenant);
QByteArray renderTenantList(const QList<tenants::TenantPtr> &tenants);

// Upstream's NaiveDateTime rendering: "YYYY-MM-DDTHH:MM:SS" in UTC.
QString naiveUtc(const QDateTime &time);

} // namespace rt::http
