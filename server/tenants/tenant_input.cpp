#include "server/tenants/tenant_input.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace rt::tenants {

namespace {

const QString CantBeBlank = QStringLiteral("can't be blank");
const QString IsInvalid = QStringLiteral("is invalid");

void addError(QJsonObject &errors, const QString &field, const QString &message)
{
    QJsonArray list = errors.value(field).toArray();
    list.append(message);
    errors.insert(field, list);
}

std::optional<int> readLimit(const QJsonObject &object, const char *field, QJsonObject &errors)
{
    const QString key = QString::fromLatin1(field);
    const QJsonValue value = object.value(key);
    if (value.isUndefined() || value.isNull()) {
        return std::nullopt;
    }
    // Like upstream's casting: a number, or a string holding one ("100").
    double number = -1;
    if (value.isDouble()) {
        number = value.toDouble();
    } else if (value.isString()) {
        bool ok = false;
        const qlonglong parsed = value.toString().trimmed().toLongLong(&ok);
        number = ok ? static_cast<double>(parsed) : -1;
    }
    if (number < 0 || number > 2'000'000'000
        || number != static_cast<double>(static_cast<int>(number))) {
        addError(errors, key, IsInvalid);
        return std::nullopt;
    }
    return static_cast<int>(number);
}

bool readBool(const QJsonObject &object, const char *field, QJsonObject &errors)
{
    const QString key = QString::fromLatin1(field);
    const QJsonValue value = object.value(key);
    if (value.isUndefined() || value.isNull()) {
        return false;
    }
    if (value.isBool()) {
        return value.toBool();
    }
    // Like upstream's casting: "true"/"false" strings count as booleans.
    const QString text = value.toString().trimmed().toLower();
    if (value.isString() && (text == QLatin1String("true") || text == QLatin1String("false"))) {
        return text == QLatin1String("true");
    }
    addError(errors, key, IsInvalid);
    return false;
}

} // namespace

TenantInputResult tenantInputFromJson(const QJsonObject &object)
{
    TenantInputResult result;
    QJsonObject &errors = result.errors;
    TenantInput input;

    const QJsonValue externalId = object.value(QLatin1String("external_id"));
    if (!externalId.isUndefined() && !externalId.isNull() && !externalId.isString()) {
        addError(errors, QStringLiteral("external_id"), IsInvalid);
    } else if (!externalId.isString() || externalId.toString().trimmed().isEmpty()) {
        addError(errors, QStringLiteral("external_id"), CantBeBlank);
    } else if (externalId.toString().contains(u'.')) {
        addError(errors, QStringLiteral("external_id"), IsInvalid);
    } else {
        input.externalId = externalId.toString().trimmed().toUtf8();
    }
    const QJsonValue name = object.value(QLatin1String("name"));
    input.name = name.isString() ? name.toString() : QString::fromUtf8(input.externalId);

    const QJsonValue secret = object.value(QLatin1String("jwt_secret"));
    if (secret.isString()) {
        input.jwtSecret = secret.toString().toUtf8();
    } else if (!secret.isUndefined() && !secret.isNull()) {
        addError(errors, QStringLiteral("jwt_secret"), IsInvalid);
    }
    const QJsonValue jwks = object.value(QLatin1String("jwt_jwks"));
    if (jwks.isObject() && jwks.toObject().value(QLatin1String("keys")).isArray()) {
        input.jwtJwks = QJsonDocument(jwks.toObject()).toJson(QJsonDocument::Compact);
    } else if (!jwks.isUndefined() && !jwks.isNull()) {
        addError(errors, QStringLiteral("jwt_jwks"), IsInvalid);
    }
    if (input.jwtSecret.isEmpty() && input.jwtJwks.isEmpty()
        && !errors.contains(QLatin1String("jwt_secret"))
        && !errors.contains(QLatin1String("jwt_jwks"))) {
        addError(errors, QStringLiteral("jwt_secret"), CantBeBlank);
    }

    input.maxConcurrentUsers = readLimit(object, "max_concurrent_users", errors);
    input.maxEventsPerSecond = readLimit(object, "max_events_per_second", errors);
    input.maxBytesPerSecond = readLimit(object, "max_bytes_per_second", errors);
    input.maxChannelsPerClient = readLimit(object, "max_channels_per_client", errors);
    input.maxJoinsPerSecond = readLimit(object, "max_joins_per_second", errors);
    input.maxPresenceEventsPerSecond = readLimit(object, "max_presence_events_per_second", errors);
    input.maxPayloadSizeInKb = readLimit(object, "max_payload_size_in_kb", errors);
    input.maxClientPresenceEventsPerWindow =
            readLimit(object, "max_client_presence_events_per_window", errors);
    input.clientPresenceWindowMs = readLimit(object, "client_presence_window_ms", errors);
    input.suspend = readBool(object, "suspend", errors);
    input.privateOnly = readBool(object, "private_only", errors);
    input.presenceEnabled = readBool(object, "presence_enabled", errors);

    const QJsonValue extensions = object.value(QLatin1String("extensions"));
    if (extensions.isArray()) {
        const QJsonArray list = extensions.toArray();
        for (const QJsonValue &value : list) {
            const QJsonObject extension = value.toObject();
            const QString type = extension.value(QLatin1String("type")).toString();
            if (type.isEmpty() || !extension.value(QLatin1String("settings")).isObject()) {
                addError(errors, QStringLiteral("extensions"), IsInvalid);
                continue;
            }
            input.extensions.append(Extension{
                    type, extension.value(QLatin1String("settings")).toObject(), {}, {} });
        }
    } else if (!extensions.isUndefined() && !extensions.isNull()) {
        addError(errors, QStringLiteral("extensions"), IsInvalid);
    }

    if (errors.isEmpty()) {
        result.input = std::move(input);
    }
    return result;
}

} // namespace rt::tenants
