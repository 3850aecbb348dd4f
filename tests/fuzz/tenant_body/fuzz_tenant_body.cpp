// libFuzzer target for the tenant API's request bodies (POST /api/tenants, PUT and PATCH
// /api/tenants/<id>): the raw body through readTenantWriteBody, exactly as TenantRoutes reads
// it, and the "tenant" object also through tenantInputFromJson (the seed-file reading of the
// same fields).
//
// The input is the body. Besides crashes, the target aborts when a promise breaks: the status
// agrees with Qt's parse of the body; a read external id is non-blank, without '.' or
// surrounding blanks; integer fields are in 0..2,000,000,000; broadcast_adapter is phoenix or
// gen_rpc; a JWKS is an object with a "keys" array; accepted extensions have non-blank,
// distinct types, and a postgres_cdc_rls one carries its required settings as strings and its
// defaults; errors are lists of messages (per extension: one object each); a seed input exists
// exactly when there are no errors and has an external id, a name and a secret or JWKS.
#include "server/tenants/tenant_input.h"

#include <QJsonArray>
#include <QJsonDocument>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

namespace {

using namespace rt::tenants;

void require(bool condition)
{
    if (!condition) {
        std::abort();
    }
}

bool inRange(const std::optional<int> &value)
{
    return !value || (*value >= 0 && *value <= 2'000'000'000);
}

bool inRange(const std::optional<std::optional<int>> &value)
{
    return !value || inRange(*value);
}

void checkExternalId(const QByteArray &id)
{
    const QString text = QString::fromUtf8(id);
    require(!text.trimmed().isEmpty() && text.trimmed() == text && !text.contains(u'.'));
}

void checkExtensions(const QList<Extension> &extensions)
{
    QStringList types;
    for (const Extension &extension : extensions) {
        require(!extension.type.trimmed().isEmpty() && !types.contains(extension.type));
        types.append(extension.type);
        require(!extension.settings.contains(QLatin1String("postgres_changes_pool")));
        if (extension.type != QLatin1String("postgres_cdc_rls")) {
            continue;
        }
        for (const char *key :
             { "region", "db_host", "db_port", "db_name", "db_user", "db_password" }) {
            require(extension.settings.value(QLatin1String(key)).isString());
        }
        for (const char *key : { "poll_interval_ms", "poll_max_changes", "poll_max_record_bytes",
                                 "publication", "slot_name" }) {
            require(extension.settings.contains(QLatin1String(key)));
        }
    }
}

void checkErrors(const QJsonObject &errors)
{
    for (auto it = errors.constBegin(); it != errors.constEnd(); ++it) {
        require(it.value().isArray() && !it.value().toArray().isEmpty());
        const bool perExtension =
                it.key() == QLatin1String("extensions") && it.value().toArray().first().isObject();
        for (const QJsonValue item : it.value().toArray()) {
            require(perExtension ? item.isObject() : item.isString());
        }
    }
}

void checkPatch(const TenantPatchResult &parsed)
{
    const TenantPatch &patch = parsed.patch;
    if (parsed.externalId) {
        checkExternalId(*parsed.externalId);
    }
    for (const auto *limit :
         { &patch.maxConcurrentUsers, &patch.maxEventsPerSecond, &patch.maxBytesPerSecond,
           &patch.maxChannelsPerClient, &patch.maxJoinsPerSecond, &patch.maxPresenceEventsPerSecond,
           &patch.maxPayloadSizeInKb, &patch.migrationsRan }) {
        require(inRange(*limit));
    }
    require(inRange(patch.maxClientPresenceEventsPerWindow));
    require(inRange(patch.clientPresenceWindowMs));
    require(!patch.broadcastAdapter || *patch.broadcastAdapter == QLatin1String("phoenix")
            || *patch.broadcastAdapter == QLatin1String("gen_rpc"));
    if (patch.jwtJwks && !patch.jwtJwks->isEmpty()) {
        const QJsonDocument jwks = QJsonDocument::fromJson(*patch.jwtJwks);
        require(jwks.isObject() && jwks.object().value(QLatin1String("keys")).isArray());
    }
    if (patch.extensions) {
        require(!parsed.errors.contains(QLatin1String("extensions")));
        checkExtensions(*patch.extensions);
    }
    checkErrors(parsed.errors);
}

void checkSeed(const QJsonObject &tenant)
{
    const TenantInputResult result = tenantInputFromJson(tenant);
    require(result.input.has_value() == result.errors.isEmpty());
    checkErrors(result.errors);
    if (!result.input) {
        return;
    }
    const TenantInput &input = *result.input;
    checkExternalId(input.externalId);
    require(!input.name.isEmpty());
    require(!input.jwtSecret.isEmpty() || !input.jwtJwks.isEmpty());
    checkExtensions(input.extensions);
    const TenantPatch patch = input.toPatch();
    require(patch.name == input.name && patch.jwtSecret == input.jwtSecret);
    require(patch.maxConcurrentUsers == input.maxConcurrentUsers);
    require(patch.clientPresenceWindowMs
            == std::optional<std::optional<int>>(input.clientPresenceWindowMs));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArray body(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    const TenantWriteBody read = readTenantWriteBody(body);
    QJsonParseError error{};
    const QJsonDocument document = QJsonDocument::fromJson(body, &error);
    const QJsonValue tenant = document.object().value(QLatin1String("tenant"));
    if (error.error != QJsonParseError::NoError) {
        require(read.status == TenantWriteBody::Status::NotJson);
    } else if (!document.isObject() || !tenant.isObject()) {
        require(read.status == TenantWriteBody::Status::NoTenantObject);
    } else {
        require(read.status == TenantWriteBody::Status::Read);
        checkPatch(read.parsed);
        checkSeed(tenant.toObject());
    }
    // The raw scan runs on every body, JSON or not.
    const QStringList floats = floatLiteralTenantFields(body);
    require(floats.size() <= body.count('.') + body.count('e') + body.count('E'));
    return 0;
}
