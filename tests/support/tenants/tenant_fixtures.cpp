#include "tests/support/tenants/tenant_fixtures.h"

#include "server/auth/jwt.h"

#include <QDateTime>
#include <QJsonDocument>

namespace rt::testsupport {

QJsonObject object(QByteArrayView json)
{
    return QJsonDocument::fromJson(json.toByteArray()).object();
}

QJsonObject json(const char *text)
{
    QByteArray bytes(text);
    bytes.replace('`', '"');
    return QJsonDocument::fromJson(bytes).object();
}

QByteArray compact(const QJsonObject &value)
{
    return QJsonDocument(value).toJson(QJsonDocument::Compact);
}

tenants::TenantInput seed(const QByteArray &externalId, const QByteArray &secret)
{
    tenants::TenantInput input;
    input.externalId = externalId;
    input.jwtSecret = secret;
    return input;
}

tenants::TenantDefaults customDefaults()
{
    tenants::TenantDefaults defaults;
    defaults.maxConcurrentUsers = 11;
    defaults.maxEventsPerSecond = 12;
    defaults.maxBytesPerSecond = 13;
    defaults.maxChannelsPerClient = 14;
    defaults.maxJoinsPerSecond = 15;
    defaults.maxPresenceEventsPerSecond = 16;
    defaults.maxPayloadSizeInKb = 17;
    return defaults;
}

qint64 nowSeconds()
{
    return QDateTime::currentSecsSinceEpoch();
}

QByteArray hsToken(const QByteArray &secret)
{
    QJsonObject claims;
    claims.insert(QStringLiteral("role"), QStringLiteral("anon"));
    claims.insert(QStringLiteral("exp"), nowSeconds() + 3600);
    return auth::signHmac(claims, secret);
}

} // namespace rt::testsupport
