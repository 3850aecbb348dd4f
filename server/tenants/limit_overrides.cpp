#include "server/tenants/limit_overrides.h"

#include "shared/core/json_values.h"

#include <QStringList>

#include <array>
#include <limits>

namespace rt::tenants {

namespace {

// One overridable limit: its JSON name and where it lives in LimitOverrides and in Tenant.
struct LimitField
{
    QLatin1String name;
    std::optional<int> LimitOverrides::*override{};
    int Tenant::*tenant{};
};

const std::array<LimitField, 7> &limitFields()
{
    static const std::array<LimitField, 7> Fields{ {
            { QLatin1String("max_concurrent_users"), &LimitOverrides::maxConcurrentUsers,
              &Tenant::maxConcurrentUsers },
            { QLatin1String("max_events_per_second"), &LimitOverrides::maxEventsPerSecond,
              &Tenant::maxEventsPerSecond },
            { QLatin1String("max_bytes_per_second"), &LimitOverrides::maxBytesPerSecond,
              &Tenant::maxBytesPerSecond },
            { QLatin1String("max_channels_per_client"), &LimitOverrides::maxChannelsPerClient,
              &Tenant::maxChannelsPerClient },
            { QLatin1String("max_joins_per_second"), &LimitOverrides::maxJoinsPerSecond,
              &Tenant::maxJoinsPerSecond },
            { QLatin1String("max_presence_events_per_second"),
              &LimitOverrides::maxPresenceEventsPerSecond, &Tenant::maxPresenceEventsPerSecond },
            { QLatin1String("max_payload_size_in_kb"), &LimitOverrides::maxPayloadSizeInKb,
              &Tenant::maxPayloadSizeInKb },
    } };
    return Fields;
}

// One overridable on/off setting (tenant_flags.<id>), like LimitField.
struct FlagField
{
    QLatin1String name;
    std::optional<bool> LimitOverrides::*override{};
    bool Tenant::*tenant{};
};

const std::array<FlagField, 3> &flagFields()
{
    static const std::array<FlagField, 3> Fields{ {
            { QLatin1String("suspend"), &LimitOverrides::suspend, &Tenant::suspend },
            { QLatin1String("private_only"), &LimitOverrides::privateOnly, &Tenant::privateOnly },
            { QLatin1String("presence_enabled"), &LimitOverrides::presenceEnabled,
              &Tenant::presenceEnabled },
    } };
    return Fields;
}

// The names of `fields`, for "unknown field" errors.
template <typename Fields>
QString knownNames(const Fields &fields)
{
    QStringList known;
    for (const auto &field : fields) {
        known.append(field.name);
    }
    return known.join(QLatin1String(", "));
}

template <typename Fields>
const typename Fields::value_type *findField(const Fields &fields, const QString &name)
{
    for (const auto &field : fields) {
        if (name == field.name) {
            return &field;
        }
    }
    return nullptr;
}

QString describeType(const QJsonValue &value)
{
    switch (value.type()) {
    case QJsonValue::Null:
        return QStringLiteral("null");
    case QJsonValue::Bool:
        return QStringLiteral("a boolean");
    case QJsonValue::Double:
        return QStringLiteral("a number");
    case QJsonValue::String:
        return QStringLiteral("a string");
    case QJsonValue::Array:
        return QStringLiteral("an array");
    case QJsonValue::Object:
        return QStringLiteral("an object");
    case QJsonValue::Undefined:
        break;
    }
    return QStringLiteral("undefined");
}

Result<QJsonObject> parseObject(QByteArrayView json)
{
    Result<QJsonObject, json::ObjectError> object = json::parseObject(json);
    if (!object) {
        return Error{ object.error().kind == json::ObjectError::Kind::Syntax
                              ? object.error().message
                              : QStringLiteral("must be a JSON object") };
    }
    return std::move(object).value();
}

} // namespace

Result<LimitOverrides> parseLimitOverrides(QByteArrayView json)
{
    Result<QJsonObject> object = parseObject(json);
    if (!object) {
        return object.error();
    }
    LimitOverrides overrides;
    for (auto it = object->constBegin(); it != object->constEnd(); ++it) {
        const LimitField *field = findField(limitFields(), it.key());
        if (!field) {
            return Error{ QStringLiteral("unknown field \"%1\" (known: %2)")
                                  .arg(it.key(), knownNames(limitFields())) };
        }
        const std::optional<int> number = json::positiveInt(it.value());
        if (!number) {
            const QString got = it.value().isDouble()
                    ? QString::number(it.value().toDouble(), 'g', 17)
                    : describeType(it.value());
            return Error{ QStringLiteral("%1 must be a positive integer (at most %2), not %3")
                                  .arg(it.key())
                                  .arg(std::numeric_limits<int>::max())
                                  .arg(got) };
        }
        overrides.*(field->override) = *number;
    }
    return overrides;
}

Result<LimitOverrides> parseTenantFlags(QByteArrayView json)
{
    Result<QJsonObject> object = parseObject(json);
    if (!object) {
        return object.error();
    }
    LimitOverrides overrides;
    for (auto it = object->constBegin(); it != object->constEnd(); ++it) {
        const FlagField *field = findField(flagFields(), it.key());
        if (!field) {
            return Error{ QStringLiteral("unknown field \"%1\" (known: %2)")
                                  .arg(it.key(), knownNames(flagFields())) };
        }
        if (!it.value().isBool()) {
            return Error{ QStringLiteral("%1 must be a boolean, not %2")
                                  .arg(it.key(), describeType(it.value())) };
        }
        overrides.*(field->override) = it.value().toBool();
    }
    return overrides;
}

LimitOverrides mergeOverrides(LimitOverrides base, const LimitOverrides &more)
{
    for (const LimitField &field : limitFields()) {
        if (more.*(field.override)) {
            base.*(field.override) = more.*(field.override);
        }
    }
    for (const FlagField &field : flagFields()) {
        if (more.*(field.override)) {
            base.*(field.override) = more.*(field.override);
        }
    }
    return base;
}

Tenant applyOverrides(Tenant tenant, const LimitOverrides &overrides)
{
    for (const LimitField &field : limitFields()) {
        if (const std::optional<int> &value = overrides.*(field.override)) {
            tenant.*(field.tenant) = *value;
        }
    }
    for (const FlagField &field : flagFields()) {
        if (const std::optional<bool> &value = overrides.*(field.override)) {
            tenant.*(field.tenant) = *value;
        }
    }
    return tenant;
}

bool overridesChange(const Tenant &tenant, const LimitOverrides &overrides)
{
    for (const LimitField &field : limitFields()) {
        const std::optional<int> &value = overrides.*(field.override);
        if (value && *value != tenant.*(field.tenant)) {
            return true;
        }
    }
    for (const FlagField &field : flagFields()) {
        const std::optional<bool> &value = overrides.*(field.override);
        if (value && *value != tenant.*(field.tenant)) {
            return true;
        }
    }
    return false;
}

LimitOverrides overridableSettings(const Tenant &tenant)
{
    LimitOverrides settings;
    for (const LimitField &field : limitFields()) {
        settings.*(field.override) = tenant.*(field.tenant);
    }
    for (const FlagField &field : flagFields()) {
        settings.*(field.override) = tenant.*(field.tenant);
    }
    return settings;
}

QJsonObject overridesToJson(const LimitOverrides &overrides)
{
    QJsonObject object;
    for (const LimitField &field : limitFields()) {
        if (const std::optional<int> &value = overrides.*(field.override)) {
            object.insert(field.name, *value);
        }
    }
    for (const FlagField &field : flagFields()) {
        if (const std::optional<bool> &value = overrides.*(field.override)) {
            object.insert(field.name, *value);
        }
    }
    return object;
}

} // namespace rt::tenants
