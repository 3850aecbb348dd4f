#include "server/tenants/tenant_input.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace rt::tenants {

namespace {

const QString CantBeBlank = QStringLiteral("can't be blank");
const QString IsInvalid = QStringLiteral("is invalid");
const QString DatabaseExtension = QStringLiteral("postgres_cdc_rls");

void addError(QJsonObject &errors, const QString &field, const QString &message)
{
    QJsonArray list = errors.value(field).toArray();
    list.append(message);
    errors.insert(field, list);
}

// Upstream's casting treats an empty or blank string as null for every field type.
bool isNullish(const QJsonValue &value)
{
    return value.isUndefined() || value.isNull()
            || (value.isString() && value.toString().trimmed().isEmpty());
}

// A cursor over one request object that records errors under each field's name.
class Reader
{
public:
    Reader(const QJsonObject &object, QJsonObject &errors) : m_object(object), m_errors(errors) { }

    bool has(const char *field) const { return m_object.contains(QLatin1String(field)); }
    QJsonValue value(const char *field) const { return m_object.value(QLatin1String(field)); }
    void invalid(const char *field) { addError(m_errors, QString::fromLatin1(field), IsInvalid); }

    // An integer: a JSON number without fraction or a string that parses fully. Negative limits
    // make no sense and are refused (upstream accepts them).
    std::optional<std::optional<int>> integer(const char *field)
    {
        if (!has(field)) {
            return std::nullopt;
        }
        const QJsonValue raw = value(field);
        if (isNullish(raw)) {
            return std::make_optional(std::optional<int>(std::nullopt));
        }
        qint64 number = -1;
        bool ok = false;
        if (raw.isDouble()) {
            // Only a JSON integer literal: QJsonValue keeps those as integers, while 1.0 or 1e2
            // are doubles, which upstream's casting refuses.
            const bool isIntegerLiteral = raw.toVariant().metaType().id() == QMetaType::LongLong;
            const double real = raw.toDouble();
            ok = isIntegerLiteral && real >= 0 && real <= 2'000'000'000;
            number = ok ? raw.toInteger() : -1;
        } else if (raw.isString()) {
            // Elixir's Integer.parse must consume the whole string: no surrounding blanks.
            const QString text = raw.toString();
            const bool blanks = text.trimmed().size() != text.size();
            number = text.size() < 32 && !blanks ? text.toLongLong(&ok) : -1;
            ok = ok && number >= 0 && number <= 2'000'000'000;
        }
        if (!ok) {
            invalid(field);
            return std::nullopt;
        }
        return std::optional<int>(static_cast<int>(number));
    }

    // A NOT NULL integer column: null means "leave as is / default".
    std::optional<int> limit(const char *field)
    {
        const std::optional<std::optional<int>> read = integer(field);
        return read ? *read : std::nullopt;
    }

    // The same, at most `max`.
    std::optional<int> bounded(const char *field, int max)
    {
        const std::optional<int> read = limit(field);
        if (read && *read > max) {
            invalid(field);
            return std::nullopt;
        }
        return read;
    }

    std::optional<bool> boolean(const char *field)
    {
        if (!has(field) || isNullish(value(field))) {
            return std::nullopt;
        }
        const QJsonValue raw = value(field);
        if (raw.isBool()) {
            return raw.toBool();
        }
        // Ecto's boolean cast: exactly these four strings, case-sensitive.
        const QString text = raw.toString();
        if (raw.isString() && (text == QLatin1String("true") || text == QLatin1String("1"))) {
            return true;
        }
        if (raw.isString() && (text == QLatin1String("false") || text == QLatin1String("0"))) {
            return false;
        }
        invalid(field);
        return std::nullopt;
    }

    // A string field: present with a value, present as null (empty optional inside), or absent.
    std::optional<std::optional<QString>> string(const char *field)
    {
        if (!has(field)) {
            return std::nullopt;
        }
        const QJsonValue raw = value(field);
        if (isNullish(raw)) {
            return std::optional<QString>();
        }
        if (!raw.isString()) {
            invalid(field);
            return std::nullopt;
        }
        return std::optional<QString>(raw.toString());
    }

private:
    const QJsonObject &m_object;
    QJsonObject &m_errors;
};

// Validates one element of `extensions`; returns its errors ({} when valid).
QJsonObject readExtension(const QJsonValue &value, Extension &extension)
{
    QJsonObject errors;
    if (!value.isObject()) {
        addError(errors, QStringLiteral("type"), CantBeBlank);
        addError(errors, QStringLiteral("settings"), CantBeBlank);
        return errors;
    }
    const QJsonObject object = value.toObject();
    const QJsonValue type = object.value(QLatin1String("type"));
    const QJsonValue settings = object.value(QLatin1String("settings"));
    if (isNullish(type)) {
        addError(errors, QStringLiteral("type"), CantBeBlank);
    } else if (!type.isString()) {
        addError(errors, QStringLiteral("type"), IsInvalid);
    }
    if (settings.isUndefined() || settings.isNull()) {
        addError(errors, QStringLiteral("settings"), CantBeBlank);
    } else if (!settings.isObject()) {
        addError(errors, QStringLiteral("settings"), IsInvalid);
    }
    if (!errors.isEmpty()) {
        return errors;
    }
    extension.type = type.toString();
    if (extension.type == QLatin1String("postgres")) {
        extension.type = DatabaseExtension; // upstream's alias
    }
    extension.settings = settings.toObject();
    // The public name of the pool size is postgres_changes_pool; upstream stores it under its
    // internal (misspelt) key, for an extension of any type.
    if (extension.settings.contains(QLatin1String("postgres_changes_pool"))) {
        extension.settings.insert(QStringLiteral("subcriber_pool_size"),
                                  extension.settings.take(QLatin1String("postgres_changes_pool")));
    }
    if (extension.type != DatabaseExtension) {
        return errors; // other types are stored as given
    }
    const QJsonObject defaults{
        { QStringLiteral("poll_interval_ms"), 100 },
        { QStringLiteral("poll_max_changes"), 100 },
        { QStringLiteral("poll_max_record_bytes"), 1048576 },
        { QStringLiteral("publication"), QStringLiteral("supabase_realtime") },
        { QStringLiteral("slot_name"), QStringLiteral("supabase_realtime_replication_slot") },
    };
    for (auto it = defaults.begin(); it != defaults.end(); ++it) {
        if (!extension.settings.contains(it.key())) {
            extension.settings.insert(it.key(), it.value());
        }
    }
    // Required settings, in the order upstream's validation reports them (the reverse of its
    // field list: region, db_host, db_port, db_name, db_user, db_password).
    const QStringList required{ QStringLiteral("db_password"), QStringLiteral("db_user"),
                                QStringLiteral("db_name"),     QStringLiteral("db_port"),
                                QStringLiteral("db_host"),     QStringLiteral("region") };
    for (const QString &name : required) {
        const QJsonValue setting = extension.settings.value(name);
        if (setting.isUndefined() || setting.isNull()) {
            addError(errors, QStringLiteral("settings"), name + QStringLiteral(" can't be blank"));
        } else if (!setting.isString()) {
            addError(errors, QStringLiteral("settings"), name + QStringLiteral(" is invalid"));
        }
    }
    return errors;
}

} // namespace

QStringList floatLiteralTenantFields(QByteArrayView body)
{
    struct Level
    {
        bool isObject = false;
        QByteArray key; // the member whose value is being read (objects)
    };
    QList<Level> stack;
    QStringList fields;
    QByteArray lastString;
    bool expectKey = false;
    const qsizetype size = body.size();
    for (qsizetype i = 0; i < size; ++i) {
        const char c = body[i];
        switch (c) {
        case '{':
        case '[':
            stack.append(Level{ c == '{', {} });
            expectKey = c == '{';
            break;
        case '}':
        case ']':
            if (stack.isEmpty()) {
                return fields;
            }
            stack.removeLast();
            expectKey = false;
            break;
        case ',':
            expectKey = !stack.isEmpty() && stack.last().isObject;
            break;
        case ':':
            if (!stack.isEmpty()) {
                stack.last().key = lastString;
            }
            expectKey = false;
            break;
        case '"': {
            QByteArray text;
            for (++i; i < size && body[i] != '"'; ++i) {
                if (body[i] == '\\') {
                    ++i; // the escaped character is part of the string, never its end
                }
                if (i < size) {
                    text += body[i];
                }
            }
            lastString = expectKey ? text : QByteArray();
            break;
        }
        default:
            if (c == '-' || (c >= '0' && c <= '9')) {
                bool isFloat = false;
                for (; i < size; ++i) {
                    const char d = body[i];
                    if (d == '.' || d == 'e' || d == 'E') {
                        isFloat = true;
                    } else if (!(d == '-' || d == '+' || (d >= '0' && d <= '9'))) {
                        break;
                    }
                }
                --i;
                if (isFloat && stack.size() == 2 && stack[0].isObject && stack[1].isObject
                    && stack[0].key == "tenant") {
                    fields.append(QString::fromUtf8(stack[1].key));
                }
            }
            break;
        }
    }
    return fields;
}

void refuseFloatIntegers(const QStringList &fields, QJsonObject &errors)
{
    static const QStringList IntegerFields{
        QStringLiteral("max_concurrent_users"),
        QStringLiteral("max_events_per_second"),
        QStringLiteral("max_bytes_per_second"),
        QStringLiteral("max_channels_per_client"),
        QStringLiteral("max_joins_per_second"),
        QStringLiteral("max_presence_events_per_second"),
        QStringLiteral("max_payload_size_in_kb"),
        QStringLiteral("max_client_presence_events_per_window"),
        QStringLiteral("client_presence_window_ms"),
        QStringLiteral("history_size"),
        QStringLiteral("history_ttl_seconds"),
        QStringLiteral("migrations_ran"),
    };
    for (const QString &field : fields) {
        if (IntegerFields.contains(field) && !errors.contains(field)) {
            addError(errors, field, IsInvalid);
        }
    }
}

const QStringList &encryptedSettingKeys()
{
    static const QStringList Keys{ QStringLiteral("db_host"), QStringLiteral("db_port"),
                                   QStringLiteral("db_name"), QStringLiteral("db_user"),
                                   QStringLiteral("db_password") };
    return Keys;
}

namespace {

std::optional<QByteArray> readExternalId(Reader &read, QJsonObject &errors)
{
    if (!read.has("external_id")) {
        return std::nullopt;
    }
    const QJsonValue externalId = read.value("external_id");
    if (isNullish(externalId)) {
        addError(errors, QStringLiteral("external_id"), CantBeBlank);
    } else if (!externalId.isString() || externalId.toString().contains(u'.')
               || externalId.toString().trimmed() != externalId.toString()) {
        // It is the first DNS label of the tenant's host name.
        read.invalid("external_id");
    } else {
        return externalId.toString().toUtf8();
    }
    return std::nullopt;
}

void readCredentials(Reader &read, TenantPatch &patch)
{
    if (const auto name = read.string("name")) {
        patch.name = name->value_or(QString());
    }
    if (const auto secret = read.string("jwt_secret")) {
        patch.jwtSecret = secret->value_or(QString()).toUtf8();
    }
    if (read.has("jwt_jwks")) {
        const QJsonValue jwks = read.value("jwt_jwks");
        if (isNullish(jwks)) {
            patch.jwtJwks = QByteArray();
        } else if (jwks.isObject() && jwks.toObject().value(QLatin1String("keys")).isArray()) {
            patch.jwtJwks = QJsonDocument(jwks.toObject()).toJson(QJsonDocument::Compact);
        } else {
            read.invalid("jwt_jwks");
        }
    }
}

void readLimitsAndFlags(Reader &read, TenantPatch &patch)
{
    patch.maxConcurrentUsers = read.limit("max_concurrent_users");
    patch.maxEventsPerSecond = read.limit("max_events_per_second");
    patch.maxBytesPerSecond = read.limit("max_bytes_per_second");
    patch.maxChannelsPerClient = read.limit("max_channels_per_client");
    patch.maxJoinsPerSecond = read.limit("max_joins_per_second");
    patch.maxPresenceEventsPerSecond = read.limit("max_presence_events_per_second");
    patch.maxPayloadSizeInKb = read.limit("max_payload_size_in_kb");
    patch.maxClientPresenceEventsPerWindow = read.integer("max_client_presence_events_per_window");
    patch.clientPresenceWindowMs = read.integer("client_presence_window_ms");
    patch.historySize = read.bounded("history_size", MaxHistorySize);
    patch.historyTtlSeconds = read.bounded("history_ttl_seconds", MaxHistoryTtlSeconds);
    patch.migrationsRan = read.limit("migrations_ran");
    patch.suspend = read.boolean("suspend");
    patch.privateOnly = read.boolean("private_only");
    patch.presenceEnabled = read.boolean("presence_enabled");
}

void readAdapters(Reader &read, TenantPatch &patch)
{
    if (const auto cdc = read.string("postgres_cdc_default")) {
        if (*cdc) {
            patch.postgresCdcDefault = **cdc;
        }
    }
    if (const auto adapter = read.string("broadcast_adapter")) {
        if (*adapter && **adapter != QLatin1String("phoenix")
            && **adapter != QLatin1String("gen_rpc")) {
            read.invalid("broadcast_adapter");
        } else if (*adapter) {
            patch.broadcastAdapter = **adapter;
        }
    }
    if (read.has("feature_flags") && !read.value("feature_flags").isNull()) {
        if (read.value("feature_flags").isObject()) {
            patch.featureFlags = read.value("feature_flags").toObject();
        } else {
            read.invalid("feature_flags");
        }
    }
}

// The extensions, each checked on its own (upstream's per-element errors); a type given twice is
// "has already been taken".
void readExtensions(Reader &read, TenantPatch &patch, QJsonObject &resultErrors)
{
    if (!read.has("extensions") || read.value("extensions").isNull()) {
        return;
    }
    const QJsonValue list = read.value("extensions");
    if (!list.isArray()) {
        read.invalid("extensions");
        return;
    }
    QList<Extension> extensions;
    QJsonArray perExtension;
    bool anyError = false;
    QStringList types;
    const QJsonArray elements = list.toArray();
    for (const QJsonValue element : elements) {
        Extension extension;
        QJsonObject errors = readExtension(element, extension);
        if (errors.isEmpty() && types.contains(extension.type)) {
            addError(errors, QStringLiteral("tenant_external_id"),
                     QStringLiteral("has already been taken"));
        }
        if (errors.isEmpty()) {
            types.append(extension.type);
            extensions.append(extension);
        }
        anyError = anyError || !errors.isEmpty();
        perExtension.append(errors);
    }
    if (anyError) {
        resultErrors.insert(QStringLiteral("extensions"), perExtension);
    } else {
        patch.extensions = extensions;
    }
}

} // namespace

TenantPatchResult parseTenantPatch(const QJsonObject &object)
{
    TenantPatchResult result;
    Reader read(object, result.errors);
    result.externalId = readExternalId(read, result.errors);
    readCredentials(read, result.patch);
    readLimitsAndFlags(read, result.patch);
    readAdapters(read, result.patch);
    readExtensions(read, result.patch, result.errors);
    return result;
}

TenantWriteBody readTenantWriteBody(const QByteArray &body)
{
    TenantWriteBody read;
    QJsonParseError parseError{};
    const QJsonDocument document = QJsonDocument::fromJson(body, &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        read.status = TenantWriteBody::Status::NotJson;
        return read;
    }
    // Upstream's controller actions match only a body with a "tenant" object.
    const QJsonValue tenantValue = document.object().value(QLatin1String("tenant"));
    if (!document.isObject() || !tenantValue.isObject()) {
        read.status = TenantWriteBody::Status::NoTenantObject;
        return read;
    }
    read.parsed = parseTenantPatch(tenantValue.toObject());
    refuseFloatIntegers(floatLiteralTenantFields(body), read.parsed.errors);
    return read;
}

TenantPatch TenantInput::toPatch() const
{
    TenantPatch patch;
    patch.name = name.isEmpty() ? QString::fromUtf8(externalId) : name;
    patch.jwtSecret = jwtSecret;
    patch.jwtJwks = jwtJwks;
    patch.maxConcurrentUsers = maxConcurrentUsers;
    patch.maxEventsPerSecond = maxEventsPerSecond;
    patch.maxBytesPerSecond = maxBytesPerSecond;
    patch.maxChannelsPerClient = maxChannelsPerClient;
    patch.maxJoinsPerSecond = maxJoinsPerSecond;
    patch.maxPresenceEventsPerSecond = maxPresenceEventsPerSecond;
    patch.maxPayloadSizeInKb = maxPayloadSizeInKb;
    patch.maxClientPresenceEventsPerWindow = maxClientPresenceEventsPerWindow;
    patch.clientPresenceWindowMs = clientPresenceWindowMs;
    patch.historySize = historySize;
    patch.historyTtlSeconds = historyTtlSeconds;
    patch.suspend = suspend;
    patch.privateOnly = privateOnly;
    patch.presenceEnabled = presenceEnabled;
    patch.extensions = extensions;
    return patch;
}

TenantInputResult tenantInputFromJson(const QJsonObject &object)
{
    TenantInputResult result;
    TenantPatchResult parsed = parseTenantPatch(object);
    result.errors = parsed.errors;
    if (!parsed.externalId && !result.errors.contains(QLatin1String("external_id"))) {
        addError(result.errors, QStringLiteral("external_id"), CantBeBlank);
    }
    const TenantPatch &patch = parsed.patch;
    const bool hasSecret = patch.jwtSecret && !patch.jwtSecret->isEmpty();
    const bool hasJwks = patch.jwtJwks && !patch.jwtJwks->isEmpty();
    if (!hasSecret && !hasJwks && !result.errors.contains(QLatin1String("jwt_secret"))
        && !result.errors.contains(QLatin1String("jwt_jwks"))) {
        addError(result.errors, QStringLiteral("jwt_secret"),
                 QStringLiteral("either jwt_secret or jwt_jwks must be provided"));
    }
    if (!result.errors.isEmpty()) {
        return result;
    }
    TenantInput input;
    input.externalId = *parsed.externalId;
    input.name = patch.name.value_or(QString());
    if (input.name.isEmpty()) {
        input.name = QString::fromUtf8(input.externalId);
    }
    input.jwtSecret = patch.jwtSecret.value_or(QByteArray());
    input.jwtJwks = patch.jwtJwks.value_or(QByteArray());
    input.maxConcurrentUsers = patch.maxConcurrentUsers;
    input.maxEventsPerSecond = patch.maxEventsPerSecond;
    input.maxBytesPerSecond = patch.maxBytesPerSecond;
    input.maxChannelsPerClient = patch.maxChannelsPerClient;
    input.maxJoinsPerSecond = patch.maxJoinsPerSecond;
    input.maxPresenceEventsPerSecond = patch.maxPresenceEventsPerSecond;
    input.maxPayloadSizeInKb = patch.maxPayloadSizeInKb;
    input.maxClientPresenceEventsPerWindow =
            patch.maxClientPresenceEventsPerWindow.value_or(std::nullopt);
    input.clientPresenceWindowMs = patch.clientPresenceWindowMs.value_or(std::nullopt);
    input.historySize = patch.historySize;
    input.historyTtlSeconds = patch.historyTtlSeconds;
    input.suspend = patch.suspend.value_or(false);
    input.privateOnly = patch.privateOnly.value_or(false);
    input.presenceEnabled = patch.presenceEnabled.value_or(false);
    input.extensions = patch.extensions.value_or(QList<Extension>());
    result.input = input;
    return result;
}

} // namespace rt::tenants
