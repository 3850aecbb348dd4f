#pragma once

#include "server/tenants/tenant_input.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QJsonObject>

namespace rt::testsupport {

// The small pieces the control-plane suites (unit, integration, conformance) share.

// The JSON object in `json` (an empty object if it is not one).
QJsonObject object(QByteArrayView json);
// JSON written with ` for " (no raw string literals for moc to trip on).
QJsonObject json(const char *text);
QByteArray compact(const QJsonObject &value);

// A seed tenant with only its external id and JWT secret set.
tenants::TenantInput seed(const QByteArray &externalId, const QByteArray &secret);
// Defaults that differ from the built-in ones (11 … 17), to see that the control plane applies
// the ones it is given.
tenants::TenantDefaults customDefaults();

qint64 nowSeconds();
// An HS256 token for role anon, valid for an hour, signed with `secret`.
QByteArray hsToken(const QByteArray &secret);

} // namespace rt::testsupport
