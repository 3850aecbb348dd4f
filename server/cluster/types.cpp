#include "server/cluster/types.h"

#include <QJsonDocument>
#include <QJsonParseError>
#include <QJsonValue>

#include <cmath>

namespace rt::cluster {

namespace {

const QLatin1String IdField("id");
const QLatin1String RegionField("region");
const QLatin1String ClientAddressField("client_address");
const QLatin1String LinkAddressField("link_address");
const QLatin1String StartedAtField("started_at");
const QLatin1String LoadField("load");
const QLatin1String OwnerField("owner");
const QLatin1String MetadataField("metadata");

Result<QJsonObject> parseObject(QByteArrayView json)
{
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(json.toByteArray(), &error);
    if (error.error != QJsonParseError::NoError) {
        return Error{ QStringLiteral("invalid JSON: ") + error.errorString() };
    }
    if (!document.isObject()) {
        return Error{ QStringLiteral("not a JSON object") };
    }
    return document.object();
}

// An optional string field: absent → empty, present with another type → error.
bool readString(const QJsonObject &object, QLatin1String field, QString &out)
{
    const QJsonValue value = object.value(field);
    if (value.isUndefined() || value.isNull()) {
        return true;
    }
    if (!value.isString()) {
        return false;
    }
    out = value.toString();
    return true;
}

} // namespace

QJsonObject NodeInfo::toJson() const
{
    QJsonObject object{ { IdField, id },
                        { RegionField, region },
                        { ClientAddressField, clientAddress },
                        { LinkAddressField, linkAddress },
                        { StartedAtField, startedAtMs } };
    object.insert(LoadField, load ? QJsonValue(*load) : QJsonValue(QJsonValue::Null));
    return object;
}

QByteArray NodeInfo::toJsonBytes() const
{
    return QJsonDocument(toJson()).toJson(QJsonDocument::Compact);
}

Result<NodeInfo> NodeInfo::fromJson(QByteArrayView json)
{
    auto object = parseObject(json);
    if (!object) {
        return object.error();
    }
    return fromJson(*object);
}

Result<NodeInfo> NodeInfo::fromJson(const QJsonObject &object)
{
    NodeInfo node;
    const QJsonValue id = object.value(IdField);
    if (!id.isString() || id.toString().isEmpty()) {
        return Error{ QStringLiteral("node record without an id") };
    }
    node.id = id.toString();
    if (!readString(object, RegionField, node.region)
        || !readString(object, ClientAddressField, node.clientAddress)
        || !readString(object, LinkAddressField, node.linkAddress)) {
        return Error{
            QStringLiteral("node record %1: an address or the region is not a string").arg(node.id)
        };
    }
    const QJsonValue started = object.value(StartedAtField);
    if (!started.isUndefined() && !started.isNull()) {
        // Wall-clock milliseconds fit a double exactly (< 2^53); reject fractions and overflow.
        const double ms = started.toDouble(-1);
        if (!started.isDouble() || !std::isfinite(ms) || ms < 0 || ms > 9.0e15
            || std::floor(ms) != ms) {
            return Error{ QStringLiteral("node record %1: bad started_at").arg(node.id) };
        }
        node.startedAtMs = static_cast<qint64>(ms);
    }
    const QJsonValue load = object.value(LoadField);
    if (!load.isUndefined() && !load.isNull()) {
        const double value = load.toDouble(-1);
        if (!load.isDouble() || !std::isfinite(value) || value < 0) {
            return Error{ QStringLiteral("node record %1: bad load").arg(node.id) };
        }
        node.load = value;
    }
    return node;
}

bool claimWins(const Claim &candidate, const Claim &other)
{
    if (candidate.createRevision != other.createRevision) {
        return candidate.createRevision < other.createRevision;
    }
    return candidate.owner < other.owner;
}

QByteArray encodeClaimValue(const QString &owner, const QByteArray &metadata)
{
    const QJsonObject object{ { OwnerField, owner },
                              { MetadataField, QString::fromUtf8(metadata) } };
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

Result<ClaimValue> decodeClaimValue(QByteArrayView value)
{
    auto object = parseObject(value);
    if (!object) {
        return object.error();
    }
    const QJsonValue owner = object->value(OwnerField);
    const QJsonValue metadata = object->value(MetadataField);
    if (!owner.isString() || owner.toString().isEmpty()) {
        return Error{ QStringLiteral("claim without an owner") };
    }
    if (!metadata.isUndefined() && !metadata.isString()) {
        return Error{ QStringLiteral("claim metadata is not a string") };
    }
    return ClaimValue{ owner.toString(), metadata.toString().toUtf8() };
}

std::optional<ConfigEntry> ConfigSnapshot::find(const QString &key) const
{
    const auto it = entries.constFind(key);
    if (it == entries.constEnd()) {
        return std::nullopt;
    }
    return *it;
}

} // namespace rt::cluster
