// libFuzzer target for the cluster configuration read from etcd (server/node/cluster_config.h):
// parseClusterSettings over a whole snapshot, validateConfigEntry / validateConfigKeyName as
// the admin API calls them, and each value as every kind of value (parseRegionMapping,
// tenants::parseLimitOverrides, tenants::parseTenantFlags). The values are whatever anyone
// with write access to etcd stored.
//
// The input is a snapshot: entries separated by NUL bytes, each "key\nvalue" (the key as
// UTF-8; no newline: an empty value); a later entry replaces an earlier one of the same key.
// Besides crashes, the target aborts when a promise breaks: an entry is valid for
// validateConfigEntry exactly when it is no problem in a snapshot of its own, and its key then
// passes validateConfigKeyName; problems come in key order with a message each; a valid
// region mapping names regions of 1 to 64 characters without spaces or control characters and
// survives a round trip through JSON, as do accepted limits (positive, no flags) and flags (no
// limits) through overridesToJson; the settings hold exactly the valid entries' mapping and
// overrides, merged per tenant, never an empty override, never an external id with '.'.
#include "server/node/cluster_config.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

namespace {

using namespace rt::node;
using rt::tenants::LimitOverrides;

void require(bool condition)
{
    if (!condition) {
        std::abort();
    }
}

bool goodRegion(const QString &name)
{
    if (name.isEmpty() || name.size() > 64) {
        return false;
    }
    for (const QChar c : name) {
        if (c.isSpace() || c.category() == QChar::Other_Control) {
            return false;
        }
    }
    return true;
}

void checkRegionMapping(QByteArrayView value)
{
    const auto mapping = parseRegionMapping(value);
    if (!mapping) {
        require(!mapping.error().message.isEmpty());
        return;
    }
    QJsonObject object;
    for (auto it = mapping->cbegin(); it != mapping->cend(); ++it) {
        require(goodRegion(it.key()) && goodRegion(it.value()));
        object.insert(it.key(), it.value());
    }
    const auto again = parseRegionMapping(QJsonDocument(object).toJson(QJsonDocument::Compact));
    require(again.ok() && *again == *mapping);
}

bool hasLimits(const LimitOverrides &o)
{
    return o.maxConcurrentUsers || o.maxEventsPerSecond || o.maxBytesPerSecond
            || o.maxChannelsPerClient || o.maxJoinsPerSecond || o.maxPresenceEventsPerSecond
            || o.maxPayloadSizeInKb;
}

bool hasFlags(const LimitOverrides &o)
{
    return o.suspend || o.privateOnly || o.presenceEnabled;
}

void checkOverrides(QByteArrayView value)
{
    const QByteArray emptyObject = QByteArrayLiteral("{}");
    const auto limits = rt::tenants::parseLimitOverrides(value);
    if (limits) {
        require(!hasFlags(*limits));
        for (const auto *field :
             { &limits->maxConcurrentUsers, &limits->maxEventsPerSecond, &limits->maxBytesPerSecond,
               &limits->maxChannelsPerClient, &limits->maxJoinsPerSecond,
               &limits->maxPresenceEventsPerSecond, &limits->maxPayloadSizeInKb }) {
            require(!*field || **field > 0);
        }
        const QByteArray json =
                QJsonDocument(rt::tenants::overridesToJson(*limits)).toJson(QJsonDocument::Compact);
        const auto again = rt::tenants::parseLimitOverrides(json);
        require(again.ok() && *again == *limits);
        require(rt::tenants::parseTenantFlags(json).ok() == (json == emptyObject));
    } else {
        require(!limits.error().message.isEmpty());
    }
    const auto flags = rt::tenants::parseTenantFlags(value);
    if (flags) {
        require(!hasLimits(*flags));
        const QByteArray json =
                QJsonDocument(rt::tenants::overridesToJson(*flags)).toJson(QJsonDocument::Compact);
        const auto again = rt::tenants::parseTenantFlags(json);
        require(again.ok() && *again == *flags);
    } else {
        require(!flags.error().message.isEmpty());
    }
}

rt::cluster::ConfigSnapshot snapshotOf(QByteArrayView input)
{
    rt::cluster::ConfigSnapshot snapshot;
    snapshot.revision = input.size();
    for (const QByteArray &part : input.toByteArray().split('\0')) {
        const qsizetype newline = part.indexOf('\n');
        rt::cluster::ConfigEntry entry;
        entry.key = QString::fromUtf8(newline < 0 ? part : part.left(newline));
        entry.value = newline < 0 ? QByteArray() : part.mid(newline + 1);
        snapshot.entries.insert(entry.key, entry);
    }
    return snapshot;
}

// The overrides the valid entries describe, merged per tenant as the settings should hold them.
QHash<QByteArray, LimitOverrides> expectedOverrides(const rt::cluster::ConfigSnapshot &snapshot,
                                                    const QSet<QString> &invalid)
{
    QHash<QByteArray, LimitOverrides> expected;
    for (const rt::cluster::ConfigEntry &entry : snapshot.entries) {
        if (invalid.contains(entry.key)) {
            continue;
        }
        for (const QLatin1StringView prefix : { TenantLimitsPrefix, TenantFlagsPrefix }) {
            if (!entry.key.startsWith(prefix)) {
                continue;
            }
            const auto parsed = prefix == TenantLimitsPrefix
                    ? rt::tenants::parseLimitOverrides(entry.value)
                    : rt::tenants::parseTenantFlags(entry.value);
            require(parsed.ok());
            if (!parsed->isEmpty()) {
                LimitOverrides &slot = expected[entry.key.sliced(prefix.size()).toUtf8()];
                slot = rt::tenants::mergeOverrides(slot, *parsed);
            }
        }
    }
    return expected;
}

void checkSettings(const rt::cluster::ConfigSnapshot &snapshot)
{
    const ClusterSettings settings = parseClusterSettings(snapshot);
    require(settings.revision == snapshot.revision);
    QSet<QString> invalid;
    QString previous;
    for (const ConfigProblem &problem : settings.problems) {
        require(snapshot.entries.contains(problem.key) && !problem.message.isEmpty());
        require(invalid.isEmpty() || previous < problem.key);
        previous = problem.key;
        invalid.insert(problem.key);
    }
    for (const rt::cluster::ConfigEntry &entry : snapshot.entries) {
        const std::optional<QString> why = validateConfigEntry(entry.key, entry.value);
        require(why.has_value() == invalid.contains(entry.key));
        if (!why) {
            require(!validateConfigKeyName(entry.key));
        }
    }
    const auto mapping = snapshot.entries.constFind(QString(RegionMappingKey));
    if (mapping != snapshot.entries.cend() && !invalid.contains(mapping.key())) {
        require(settings.regionMapping == *parseRegionMapping(mapping->value));
    } else {
        require(settings.regionMapping.isEmpty());
    }
    require(settings.tenantOverrides == expectedOverrides(snapshot, invalid));
    for (auto it = settings.tenantOverrides.cbegin(); it != settings.tenantOverrides.cend(); ++it) {
        require(!it.key().isEmpty() && !it.key().contains('.') && !it.value().isEmpty());
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArrayView input(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    const rt::cluster::ConfigSnapshot snapshot = snapshotOf(input);
    checkSettings(snapshot);
    for (const rt::cluster::ConfigEntry &entry : snapshot.entries) {
        checkRegionMapping(entry.value);
        checkOverrides(entry.value);
        // A key name that is refused is refused for every value.
        if (validateConfigKeyName(entry.key)) {
            require(validateConfigEntry(entry.key, QByteArrayLiteral("{}")).has_value());
        }
    }
    return 0;
}
