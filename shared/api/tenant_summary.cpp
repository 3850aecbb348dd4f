#include "shared/api/tenant_summary.h"

#include "shared/api/json_reader.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>

#include <cmath>

namespace rt::api {

namespace {

const QString TimestampFormat = QStringLiteral("yyyy-MM-ddTHH:mm:ss");

QJsonValue timestampJson(const QDateTime &time)
{
    return time.isValid() ? QJsonValue(time.toUTC().toString(TimestampFormat))
                          : QJsonValue(QJsonValue::Null);
}

QJsonValue optionalJson(const std::optional<qint64> &value)
{
    return value ? QJsonValue(double(*value)) : QJsonValue(QJsonValue::Null);
}

Result<TenantSummary> read(const QJsonObject &object, const QString &path)
{
    std::optional<QString> error;
    TenantSummary tenant;
    const JsonReader r(object, path, error);
    r.text("id", tenant.id);
    r.text("external_id", tenant.externalId);
    r.optionalText("name", tenant.name);
    r.integer("max_concurrent_users", tenant.maxConcurrentUsers);
    r.integer("max_channels_per_client", tenant.maxChannelsPerClient);
    r.integer("max_events_per_second", tenant.maxEventsPerSecond);
    r.integer("max_joins_per_second", tenant.maxJoinsPerSecond);
    r.timestamp("inserted_at", tenant.insertedAt);
    r.boolean("private_only", tenant.privateOnly);
    r.boolean("presence_enabled", tenant.presenceEnabled);
    r.optionalInteger("max_client_presence_events_per_window",
                      tenant.maxClientPresenceEventsPerWindow);
    r.optionalInteger("client_presence_window_ms", tenant.clientPresenceWindowMs);
    r.objects("extensions", [&](const QJsonObject &item, const QString &itemPath) {
        const JsonReader e(item, itemPath, error);
        TenantExtensionSummary extension;
        e.text("type", extension.type);
        e.timestamp("inserted_at", extension.insertedAt);
        e.timestamp("updated_at", extension.updatedAt);
        extension.settings = e.object("settings");
        tenant.extensions.append(std::move(extension));
    });
    if (tenant.externalId.isEmpty() && !error) {
        error = r.field("external_id") + QStringLiteral(" must be a non-empty string");
    }
    if (error) {
        return Error{ *error };
    }
    return tenant;
}

Result<QJsonValue> dataOf(QByteArrayView json)
{
    QJsonParseError parseError{};
    const QJsonDocument document =
            QJsonDocument::fromJson(QByteArray::fromRawData(json.data(), json.size()), &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        return Error{ QStringLiteral("the answer is not JSON: ") + parseError.errorString() };
    }
    if (!document.isObject()) {
        return Error{ QStringLiteral("the answer is not a JSON object") };
    }
    return document.object().value(QLatin1String("data"));
}

} // namespace

QJsonObject TenantSummary::toJson() const
{
    QJsonArray extensionsJson;
    for (const TenantExtensionSummary &extension : extensions) {
        extensionsJson.append(QJsonObject{
                { QStringLiteral("type"), extension.type },
                { QStringLiteral("inserted_at"), timestampJson(extension.insertedAt) },
                { QStringLiteral("updated_at"), timestampJson(extension.updatedAt) },
                { QStringLiteral("settings"), extension.settings },
        });
    }
    return QJsonObject{
        { QStringLiteral("id"), id },
        { QStringLiteral("external_id"), externalId },
        { QStringLiteral("name"), name ? QJsonValue(*name) : QJsonValue(QJsonValue::Null) },
        { QStringLiteral("max_concurrent_users"), double(maxConcurrentUsers) },
        { QStringLiteral("max_channels_per_client"), double(maxChannelsPerClient) },
        { QStringLiteral("max_events_per_second"), double(maxEventsPerSecond) },
        { QStringLiteral("max_joins_per_second"), double(maxJoinsPerSecond) },
        { QStringLiteral("inserted_at"), timestampJson(insertedAt) },
        { QStringLiteral("private_only"), privateOnly },
        { QStringLiteral("presence_enabled"), presenceEnabled },
        { QStringLiteral("max_client_presence_events_per_window"),
          optionalJson(maxClientPresenceEventsPerWindow) },
        { QStringLiteral("client_presence_window_ms"), optionalJson(clientPresenceWindowMs) },
        { QStringLiteral("extensions"), extensionsJson },
    };
}

Result<TenantSummary> TenantSummary::fromJson(const QJsonObject &object)
{
    return read(object, QString());
}

Result<QList<TenantSummary>> TenantSummary::listFromJson(QByteArrayView json)
{
    Result<QJsonValue> data = dataOf(json);
    if (!data) {
        return std::move(data).error();
    }
    if (!data->isArray()) {
        return Error{ QStringLiteral("data must be an array") };
    }
    const QJsonArray array = data->toArray();
    QList<TenantSummary> tenants;
    tenants.reserve(array.size());
    for (qsizetype i = 0; i < array.size(); ++i) {
        const QString path = QStringLiteral("data[") + QString::number(i) + u']';
        if (!array.at(i).isObject()) {
            return Error{ path + QStringLiteral(" must be an object") };
        }
        Result<TenantSummary> tenant = read(array.at(i).toObject(), path);
        if (!tenant) {
            return std::move(tenant).error();
        }
        tenants.append(std::move(tenant).value());
    }
    return tenants;
}

Result<TenantSummary> TenantSummary::dataFromJson(QByteArrayView json)
{
    Result<QJsonValue> data = dataOf(json);
    if (!data) {
        return std::move(data).error();
    }
    if (!data->isObject()) {
        return Error{ QStringLiteral("data must be an object") };
    }
    return read(data->toObject(), QStringLiteral("data"));
}

} // namespace rt::api
