#include "shared/api/tenant_summary.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>

#include <cmath>

namespace rt::api {

namespace {

const QString TimestampFormat = QStringLiteral("yyyy-MM-ddTHH:mm:ss");

// Reads typed fields off an untrusted JSON object, remembering the first problem with the path
// of the field (e.g. "data[2].max_concurrent_users"). Absent fields keep the caller's default.
// TODO(dashboard): share one reader with cluster_snapshot.cpp #6
class Reader
{
public:
    Reader(const QJsonObject &object, QString path, std::optional<QString> &error)
        : m_object(object),
          m_path(std::move(path)),
          m_error(error)
    { }

    void text(const char *key, QString &out) const
    {
        const QJsonValue value = m_object.value(QLatin1String(key));
        if (value.isUndefined() || value.isNull()) {
            return;
        }
        if (!value.isString()) {
            fail(key, "a string");
            return;
        }
        out = value.toString();
    }
    void optionalText(const char *key, std::optional<QString> &out) const
    {
        const QJsonValue value = m_object.value(QLatin1String(key));
        if (value.isUndefined()) {
            return;
        }
        if (value.isNull()) {
            out.reset();
            return;
        }
        if (!value.isString()) {
            fail(key, "a string or null");
            return;
        }
        out = value.toString();
    }
    void integer(const char *key, qint64 &out) const
    {
        const QJsonValue value = m_object.value(QLatin1String(key));
        if (value.isUndefined()) {
            return;
        }
        if (std::optional<qint64> parsed = toInteger(value)) {
            out = *parsed;
        } else {
            fail(key, "an integer");
        }
    }
    void optionalInteger(const char *key, std::optional<qint64> &out) const
    {
        const QJsonValue value = m_object.value(QLatin1String(key));
        if (value.isUndefined()) {
            return;
        }
        if (value.isNull()) {
            out.reset();
            return;
        }
        if (std::optional<qint64> parsed = toInteger(value)) {
            out = *parsed;
        } else {
            fail(key, "an integer or null");
        }
    }
    void boolean(const char *key, bool &out) const
    {
        const QJsonValue value = m_object.value(QLatin1String(key));
        if (value.isUndefined()) {
            return;
        }
        if (!value.isBool()) {
            fail(key, "a boolean");
            return;
        }
        out = value.toBool();
    }
    void timestamp(const char *key, QDateTime &out) const
    {
        QString text;
        this->text(key, text);
        if (text.isEmpty()) {
            return;
        }
        // Date and time apart: read as one, they would be a local time, which a DST gap can
        // make invalid.
        const QDate date = text.size() == 19 && text.at(10) == u'T'
                ? QDate::fromString(text.first(10), QStringLiteral("yyyy-MM-dd"))
                : QDate();
        const QTime time = QTime::fromString(text.sliced(std::min<qsizetype>(11, text.size())),
                                             QStringLiteral("HH:mm:ss"));
        if (!date.isValid() || !time.isValid()) {
            fail(key, "a date and time (YYYY-MM-DDTHH:MM:SS)");
            return;
        }
        out = QDateTime(date, time, Qt::UTC);
    }
    void object(const char *key, QJsonObject &out) const
    {
        const QJsonValue value = m_object.value(QLatin1String(key));
        if (value.isUndefined() || value.isNull()) {
            return;
        }
        if (!value.isObject()) {
            fail(key, "an object");
            return;
        }
        out = value.toObject();
    }
    // Calls `each(object, path)` for every element, which must be an object.
    template <typename Each>
    void objects(const char *key, Each each) const
    {
        const QJsonValue value = m_object.value(QLatin1String(key));
        if (value.isUndefined()) {
            return;
        }
        if (!value.isArray()) {
            fail(key, "an array");
            return;
        }
        const QJsonArray array = value.toArray();
        for (qsizetype i = 0; i < array.size() && !m_error; ++i) {
            const QString path = field(key) + u'[' + QString::number(i) + u']';
            if (!array.at(i).isObject()) {
                m_error = path + QStringLiteral(" must be an object");
                return;
            }
            each(array.at(i).toObject(), path);
        }
    }
    QString field(const char *key) const
    {
        return m_path.isEmpty() ? QString(QLatin1String(key))
                                : QString(m_path + u'.' + QLatin1String(key));
    }

private:
    static std::optional<qint64> toInteger(const QJsonValue &value)
    {
        if (!value.isDouble()) {
            return std::nullopt;
        }
        const double number = value.toDouble();
        // Beyond 2^53 a JSON number is not an exact integer any more.
        if (number != std::floor(number) || number < -9.0e15 || number > 9.0e15) {
            return std::nullopt;
        }
        return static_cast<qint64>(number);
    }
    void fail(const char *key, const char *expected) const
    {
        if (!m_error) {
            m_error = field(key) + QStringLiteral(" must be ") + QLatin1String(expected);
        }
    }

    QJsonObject m_object;
    QString m_path;
    std::optional<QString> &m_error;
};

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
    const Reader r(object, path, error);
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
        const Reader e(item, itemPath, error);
        TenantExtensionSummary extension;
        e.text("type", extension.type);
        e.timestamp("inserted_at", extension.insertedAt);
        e.timestamp("updated_at", extension.updatedAt);
        e.object("settings", extension.settings);
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
