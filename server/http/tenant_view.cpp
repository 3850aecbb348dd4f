#include "server/http/tenant_view.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>

namespace rt::http {

namespace {

QByteArray compact(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

// A JSON value as text (QJsonDocument only serializes objects and arrays).
QByteArray valueJson(const QJsonValue &value)
{
    QByteArray array = QJsonDocument(QJsonArray{ value }).toJson(QJsonDocument::Compact);
    return array.sliced(1, array.size() - 2);
}

QJsonValue nullable(const std::optional<int> &value)
{
    return value ? QJsonValue(*value) : QJsonValue(QJsonValue::Null);
}

// Upstream derives the extension's encoder with a fixed key order; QJsonObject would sort them.
QByteArray renderExtension(const tenants::Extension &extension)
{
    QJsonObject settings = extension.storedSettings;
    settings.remove(QLatin1String("db_password"));
    return QByteArrayLiteral("{\"type\":") + valueJson(extension.type)
            + QByteArrayLiteral(",\"inserted_at\":") + valueJson(naiveUtc(extension.insertedAt))
            + QByteArrayLiteral(",\"updated_at\":") + valueJson(naiveUtc(extension.updatedAt))
            + QByteArrayLiteral(",\"settings\":") + compact(settings) + '}';
}

} // namespace

QString naiveUtc(const QDateTime &time)
{
    return time.toUTC().toString(QStringLiteral("yyyy-MM-ddTHH:mm:ss"));
}

QByteArray renderTenant(const tenants::Tenant &tenant)
{
    QJsonObject object;
    object.insert(QLatin1String("id"), tenant.id);
    object.insert(QLatin1String("external_id"), QString::fromUtf8(tenant.externalId));
    object.insert(QLatin1String("name"),
                  tenant.name.isNull() ? QJsonValue(QJsonValue::Null) : QJsonValue(tenant.name));
    object.insert(QLatin1String("max_concurrent_users"), tenant.maxConcurrentUsers);
    object.insert(QLatin1String("max_channels_per_client"), tenant.maxChannelsPerClient);
    object.insert(QLatin1String("max_events_per_second"), tenant.maxEventsPerSecond);
    object.insert(QLatin1String("max_joins_per_second"), tenant.maxJoinsPerSecond);
    object.insert(QLatin1String("inserted_at"), naiveUtc(tenant.insertedAt));
    object.insert(QLatin1String("private_only"), tenant.privateOnly);
    object.insert(QLatin1String("presence_enabled"), tenant.presenceEnabled);
    object.insert(QLatin1String("max_client_presence_events_per_window"),
                  nullable(tenant.maxClientPresenceEventsPerWindow));
    object.insert(QLatin1String("client_presence_window_ms"),
                  nullable(tenant.clientPresenceWindowMs));

    QByteArray extensions = "[";
    for (const tenants::Extension &extension : tenant.extensions) {
        if (extensions.size() > 1) {
            extensions += ',';
        }
        extensions += renderExtension(extension);
    }
    extensions += ']';

    QByteArray json = compact(object);
    json.chop(1); // the closing brace
    return json + QByteArrayLiteral(",\"extensions\":") + extensions + '}';
}

QByteArray renderTenantData(const tenants::Tenant &tenant)
{
    return QByteArrayLiteral("{\"data\":") + renderTenant(tenant) + '}';
}

QByteArray renderTenantList(const QList<tenants::TenantPtr> &tenants)
{
    QByteArray json = QByteArrayLiteral("{\"data\":[");
    bool first = true;
    for (const tenants::TenantPtr &tenant : tenants) {
        if (!first) {
            json += ',';
        }
        first = false;
        json += renderTenant(*tenant);
    }
    return json + "]}";
}

} // namespace rt::http
