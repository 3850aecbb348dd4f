#include "server/node/cluster_config.h"

#include "server/tenants/tenant_directory.h"
#include "server/tenants/tenant_rates.h"
#include "shared/core/json_values.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>

#include <algorithm>
#include <cstddef>

namespace rt::node {

namespace {

constexpr qsizetype MaxKeyBytes = 256;
constexpr qsizetype MaxRegionChars = 64;
constexpr int SnapshotFormat = 1;
// A snapshot holds a few kilobytes; anything far larger is not ours.
constexpr qint64 MaxSnapshotFileBytes = qint64{ 64 } * 1024 * 1024;

bool isKeyCharacter(QChar c)
{
    const char16_t u = c.unicode();
    return u > 0x20 && u < 0x7f && u != u'/' && u != u'%';
}

// The external id in tenant_limits.<id> / tenant_flags.<id>. Tenant ids are the first DNS label
// of a host name, so they never contain '.'; the rest is what a key name allows.
std::optional<QString> validateExternalId(const QString &key, QLatin1StringView prefix)
{
    const QStringView id = QStringView(key).sliced(prefix.size());
    if (id.isEmpty()) {
        return QStringLiteral("the key must name a tenant: %1<external_id>").arg(prefix);
    }
    if (id.contains(u'.')) {
        return QStringLiteral("a tenant external id cannot contain '.'");
    }
    return std::nullopt;
}

std::optional<QString> validRegionName(const QString &name)
{
    if (name.isEmpty()) {
        return QStringLiteral("a region name cannot be empty");
    }
    if (name.size() > MaxRegionChars) {
        return QStringLiteral("region name \"%1…\" is longer than %2 characters")
                .arg(name.left(16))
                .arg(MaxRegionChars);
    }
    for (const QChar c : name) {
        if (c.isSpace() || c.category() == QChar::Other_Control) {
            return QStringLiteral("region name \"%1\" contains a space or a control character")
                    .arg(name);
        }
    }
    return std::nullopt;
}

// Applies one entry to `settings`; returns why it cannot be applied instead.
std::optional<QString> applyEntry(const QString &key, QByteArrayView value,
                                  ClusterSettings &settings)
{
    if (std::optional<QString> bad = validateConfigKeyName(key)) {
        return bad;
    }
    if (key == RegionMappingKey) {
        Result<QHash<QString, QString>> mapping = parseRegionMapping(value);
        if (!mapping) {
            return mapping.error().message;
        }
        settings.regionMapping = *std::move(mapping);
        return std::nullopt;
    }
    for (const QLatin1StringView prefix : { TenantLimitsPrefix, TenantFlagsPrefix }) {
        if (!key.startsWith(prefix)) {
            continue;
        }
        if (std::optional<QString> bad = validateExternalId(key, prefix)) {
            return bad;
        }
        Result<tenants::LimitOverrides> parsed = prefix == TenantLimitsPrefix
                ? tenants::parseLimitOverrides(value)
                : tenants::parseTenantFlags(value);
        if (!parsed) {
            return parsed.error().message;
        }
        if (!parsed->isEmpty()) {
            const QByteArray externalId = QStringView(key).sliced(prefix.size()).toUtf8();
            tenants::LimitOverrides &slot = settings.tenantOverrides[externalId];
            slot = tenants::mergeOverrides(slot, *parsed);
        }
        return std::nullopt;
    }
    return QStringLiteral("unknown key (known: %1, %2<external_id>, %3<external_id>)")
            .arg(RegionMappingKey, TenantLimitsPrefix, TenantFlagsPrefix);
}

SnapshotFileError corrupt(const QString &path, const QString &why)
{
    return { SnapshotFileError::Kind::Corrupt,
             QStringLiteral("%1 is not a configuration snapshot: %2").arg(path, why) };
}

// The whole snapshot file, refused when larger than any snapshot.
Result<QByteArray, SnapshotFileError> readSnapshotFile(const QString &path)
{
    QFile file(path);
    if (!file.exists()) {
        return SnapshotFileError{ SnapshotFileError::Kind::Missing,
                                  QStringLiteral("%1 does not exist").arg(path) };
    }
    if (!file.open(QIODevice::ReadOnly)) {
        return SnapshotFileError{
            SnapshotFileError::Kind::Unreadable,
            QStringLiteral("cannot read %1: %2").arg(path, file.errorString())
        };
    }
    if (file.size() > MaxSnapshotFileBytes) {
        return corrupt(path, QStringLiteral("larger than %1 bytes").arg(MaxSnapshotFileBytes));
    }
    QByteArray bytes = file.read(MaxSnapshotFileBytes + 1);
    if (file.error() != QFileDevice::NoError) {
        return SnapshotFileError{
            SnapshotFileError::Kind::Unreadable,
            QStringLiteral("cannot read %1: %2").arg(path, file.errorString())
        };
    }
    if (bytes.size() > MaxSnapshotFileBytes) {
        return corrupt(path, QStringLiteral("larger than %1 bytes").arg(MaxSnapshotFileBytes));
    }
    return bytes;
}

// A snapshot entry's value: exactly one of "value" (its text) and "value_base64".
Result<QByteArray> readEntryValue(const QJsonObject &object)
{
    const QJsonValue text = object.value(QLatin1String("value"));
    const QJsonValue base64 = object.value(QLatin1String("value_base64"));
    if (text.isString() && base64.isUndefined()) {
        return text.toString().toUtf8();
    }
    if (base64.isString() && text.isUndefined()) {
        QByteArray::FromBase64Result decoded = QByteArray::fromBase64Encoding(
                base64.toString().toLatin1(), QByteArray::AbortOnBase64DecodingErrors);
        if (!decoded) {
            return Error{ QStringLiteral("\"value_base64\" is not base64") };
        }
        return std::move(*decoded);
    }
    return Error{ QStringLiteral("needs exactly one of \"value\" (a string) and "
                                 "\"value_base64\" (a string)") };
}

// One element of a snapshot's "entries"; the error does not say which element it is.
Result<cluster::ConfigEntry> readSnapshotEntry(const QJsonValue &value,
                                               const QMap<QString, cluster::ConfigEntry> &earlier)
{
    if (!value.isObject()) {
        return Error{ QStringLiteral("not an object") };
    }
    const QJsonObject object = value.toObject();
    cluster::ConfigEntry entry;
    const QJsonValue key = object.value(QLatin1String("key"));
    if (!key.isString() || key.toString().isEmpty()) {
        return Error{ QStringLiteral("\"key\" is not a non-empty string") };
    }
    entry.key = key.toString();
    if (earlier.contains(entry.key)) {
        return Error{ QStringLiteral("key \"%1\" appears twice").arg(entry.key) };
    }
    Result<QByteArray> bytes = readEntryValue(object);
    if (!bytes) {
        return std::move(bytes).error();
    }
    entry.value = std::move(bytes).value();
    const std::optional<qint64> modRevision =
            json::nonNegativeInteger(object.value(QLatin1String("mod_revision")));
    if (!modRevision) {
        return Error{ QStringLiteral("\"mod_revision\" is not a non-negative integer") };
    }
    entry.modRevision = *modRevision;
    const QJsonValue temporary = object.value(QLatin1String("temporary"));
    if (!temporary.isUndefined() && !temporary.isBool()) {
        return Error{ QStringLiteral("\"temporary\" is not a boolean") };
    }
    entry.temporary = temporary.toBool(false);
    return entry;
}

} // namespace

std::optional<QString> validateConfigKeyName(const QString &key)
{
    if (key.isEmpty()) {
        return QStringLiteral("the key cannot be empty");
    }
    if (key.toUtf8().size() > MaxKeyBytes) {
        return QStringLiteral("the key is longer than %1 bytes").arg(MaxKeyBytes);
    }
    if (!std::all_of(key.cbegin(), key.cend(), isKeyCharacter)) {
        return QStringLiteral("the key may only contain printable ASCII characters other than "
                              "space, '/' and '%'");
    }
    return std::nullopt;
}

Result<QHash<QString, QString>> parseRegionMapping(QByteArrayView json)
{
    const Result<QJsonObject, json::ObjectError> parsed = json::parseObject(json);
    if (!parsed) {
        return Error{ parsed.error().kind == json::ObjectError::Kind::Syntax
                              ? parsed.error().message
                              : QStringLiteral("must be a JSON object {\"<tenant region>\": "
                                               "\"<platform region>\"}") };
    }
    const QJsonObject &object = *parsed;
    QHash<QString, QString> mapping;
    for (auto it = object.constBegin(); it != object.constEnd(); ++it) {
        if (const std::optional<QString> bad = validRegionName(it.key())) {
            return Error{ *bad };
        }
        if (!it.value().isString()) {
            return Error{
                QStringLiteral("the platform region of \"%1\" must be a string").arg(it.key())
            };
        }
        const QString target = it.value().toString();
        if (const std::optional<QString> bad = validRegionName(target)) {
            return Error{ *bad };
        }
        mapping.insert(it.key(), target);
    }
    return mapping;
}

ClusterSettings parseClusterSettings(const cluster::ConfigSnapshot &snapshot)
{
    ClusterSettings settings;
    settings.revision = snapshot.revision;
    // QMap: entries come sorted by key, and so do the problems.
    for (auto it = snapshot.entries.cbegin(); it != snapshot.entries.cend(); ++it) {
        const QString &key = it.key();
        if (std::optional<QString> problem = applyEntry(key, it->value, settings)) {
            settings.problems.append({ key, *std::move(problem) });
        }
    }
    return settings;
}

QList<QByteArray>
applyTenantOverrides(const ClusterSettings &settings, tenants::TenantDirectory &directory,
                     const tenants::TenantRates &rates,
                     const std::function<void(const QByteArray &)> &disconnectTenant)
{
    QList<QByteArray> changed;
    for (const tenants::TenantDirectory::OverrideChange &change :
         directory.setLimitOverrides(settings.tenantOverrides)) {
        if (change.disconnectSockets && disconnectTenant) {
            disconnectTenant(change.externalId);
        }
        rates.applyTenantChange(change.externalId, directory.find(change.externalId));
        changed.append(change.externalId);
    }
    return changed;
}

std::optional<QString> validateConfigEntry(const QString &key, QByteArrayView value)
{
    ClusterSettings scratch;
    return applyEntry(key, value, scratch);
}

std::optional<QString> saveSnapshot(const QString &path, const cluster::ConfigSnapshot &snapshot)
{
    QJsonArray entries;
    for (const cluster::ConfigEntry &entry : snapshot.entries) {
        QJsonObject object{
            { QStringLiteral("key"), entry.key },
            { QStringLiteral("mod_revision"), static_cast<double>(entry.modRevision) },
            { QStringLiteral("temporary"), entry.temporary },
        };
        // Values are JSON text, kept readable; bytes that are not UTF-8 survive as base64.
        const QString text = QString::fromUtf8(entry.value);
        if (text.toUtf8() == entry.value) {
            object.insert(QStringLiteral("value"), text);
        } else {
            object.insert(QStringLiteral("value_base64"),
                          QString::fromLatin1(entry.value.toBase64()));
        }
        entries.append(object);
    }
    const QJsonObject root{
        { QStringLiteral("format"), SnapshotFormat },
        { QStringLiteral("revision"), static_cast<double>(snapshot.revision) },
        { QStringLiteral("saved_at"), QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs) },
        { QStringLiteral("entries"), entries },
    };
    const QFileInfo info(path);
    if (!QDir().mkpath(info.absolutePath())) {
        return QStringLiteral("cannot create the directory %1").arg(info.absolutePath());
    }
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) {
        return QStringLiteral("cannot write %1: %2").arg(path, file.errorString());
    }
    // DATA_DIR is the node's own (0700); its files are too, whatever the umask.
    file.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    const QByteArray bytes = QJsonDocument(root).toJson(QJsonDocument::Indented);
    if (file.write(bytes) != bytes.size() || !file.commit()) {
        return QStringLiteral("cannot write %1: %2").arg(path, file.errorString());
    }
    return std::nullopt;
}

Result<cluster::ConfigSnapshot, SnapshotFileError> loadSnapshot(const QString &path)
{
    Result<QByteArray, SnapshotFileError> bytes = readSnapshotFile(path);
    if (!bytes) {
        return std::move(bytes).error();
    }
    const Result<QJsonObject, json::ObjectError> parsed = json::parseObject(*bytes);
    if (!parsed) {
        return corrupt(path, parsed.error().message);
    }
    const QJsonObject &root = *parsed;
    if (root.value(QLatin1String("format")) != QJsonValue(SnapshotFormat)) {
        return corrupt(path, QStringLiteral("unknown format (expected %1)").arg(SnapshotFormat));
    }
    const std::optional<qint64> revision =
            json::nonNegativeInteger(root.value(QLatin1String("revision")));
    if (!revision) {
        return corrupt(path, QStringLiteral("\"revision\" is not a non-negative integer"));
    }
    const QJsonValue entriesValue = root.value(QLatin1String("entries"));
    if (!entriesValue.isArray()) {
        return corrupt(path, QStringLiteral("\"entries\" is not an array"));
    }
    cluster::ConfigSnapshot snapshot;
    snapshot.revision = *revision;
    const QJsonArray entries = entriesValue.toArray();
    for (qsizetype i = 0; i < entries.size(); ++i) {
        const QString where = QStringLiteral("entry %1: ").arg(i);
        Result<cluster::ConfigEntry> entry = readSnapshotEntry(entries.at(i), snapshot.entries);
        if (!entry) {
            return corrupt(path, where + entry.error().message);
        }
        const QString entryKey = entry->key;
        snapshot.entries.insert(entryKey, std::move(entry).value());
    }
    return snapshot;
}

} // namespace rt::node
