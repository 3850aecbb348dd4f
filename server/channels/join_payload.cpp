#include "server/channels/join_payload.h"

#include "server/pubsub/outbound_message.h"

#include <QJsonDocument>
#include <QLocale>

#include <algorithm>
#include <cmath>

namespace rt::channels {

namespace {

bool flexibleBool(const QJsonValue &value, bool fallback)
{
    if (value.isBool()) {
        return value.toBool();
    }
    if (value.isString()) {
        const QString text = value.toString();
        if (text.compare(QLatin1String("true"), Qt::CaseInsensitive) == 0) {
            return true;
        }
        if (text.compare(QLatin1String("false"), Qt::CaseInsensitive) == 0) {
            return false;
        }
    }
    return fallback;
}

QByteArray keyText(const QJsonValue &key)
{
    switch (key.type()) {
    case QJsonValue::String:
        return key.toString().toUtf8();
    case QJsonValue::Double: {
        // Integral values within the exactly representable range print as integers (JSON
        // encoders do); anything else in shortest round-trip form. Range first: casting an
        // out-of-range double to an integer is undefined.
        const double number = key.toDouble();
        constexpr double ExactIntegers = 9007199254740992.0; // 2^53
        if (number > -ExactIntegers && number < ExactIntegers
            && number == static_cast<double>(static_cast<qint64>(number))) {
            return QByteArray::number(static_cast<qint64>(number));
        }
        return QByteArray::number(number, 'g', QLocale::FloatingPointShortest);
    }
    case QJsonValue::Bool:
        return key.toBool() ? QByteArrayLiteral("true") : QByteArrayLiteral("false");
    case QJsonValue::Object:
        return QJsonDocument(key.toObject()).toJson(QJsonDocument::Compact);
    case QJsonValue::Array:
        return QJsonDocument(key.toArray()).toJson(QJsonDocument::Compact);
    case QJsonValue::Null:
    case QJsonValue::Undefined:
        break;
    }
    return {};
}

} // namespace

JoinConfig parseJoinConfig(const QJsonObject &payload)
{
    JoinConfig config;
    const QJsonValue userToken = payload.value(QLatin1String("user_token"));
    const QJsonValue accessToken = payload.value(QLatin1String("access_token"));
    if (userToken.isString()) {
        config.accessToken = userToken.toString().toUtf8();
    } else if (accessToken.isString()) {
        config.accessToken = accessToken.toString().toUtf8();
    }

    if (!payload.contains(QLatin1String("config"))) {
        return config;
    }
    config.hasConfig = true;
    const QJsonObject options = payload.value(QLatin1String("config")).toObject();

    const QJsonObject broadcast = options.value(QLatin1String("broadcast")).toObject();
    config.broadcastSelf = flexibleBool(broadcast.value(QLatin1String("self")), false);
    config.broadcastAck = flexibleBool(broadcast.value(QLatin1String("ack")), false);
    config.replicationReady =
            flexibleBool(broadcast.value(QLatin1String("replication_ready")), false);
    if (broadcast.contains(QLatin1String("replay"))) {
        config.replay = broadcast.value(QLatin1String("replay"));
    }
    // null (or absent) asks nothing: an application that has no position yet may send it so.
    const QJsonValue recover = broadcast.value(QLatin1String("recover"));
    if (!recover.isUndefined() && !recover.isNull()) {
        config.recover = parseRecover(recover);
    }

    const QJsonObject presence = options.value(QLatin1String("presence")).toObject();
    config.presenceEnabled = flexibleBool(presence.value(QLatin1String("enabled")), false);
    config.presenceKey = keyText(presence.value(QLatin1String("key")));

    const QJsonValue changes = options.value(QLatin1String("postgres_changes"));
    if (changes.isArray()) {
        const QJsonArray entries = changes.toArray();
        for (const auto &entry : entries) {
            if (entry.isObject()) {
                config.postgresChanges.append(entry);
            }
        }
    }
    config.isPrivate = flexibleBool(options.value(QLatin1String("private")), false);
    const QJsonObject wait = options.value(QLatin1String("postgres_changes_options")).toObject();
    config.postgresChangesWait = flexibleBool(wait.value(QLatin1String("wait")), false);
    // A timeout that is not a positive integer keeps the default (upstream refuses the changeset;
    // the client sends what its options say, a number).
    const double timeout = wait.value(QLatin1String("timeout")).toDouble(0);
    if (timeout >= 1 && timeout == std::floor(timeout)) {
        config.postgresChangesTimeoutMs =
                static_cast<int>(std::min<double>(timeout, MaxPostgresChangesWaitMs));
    }
    config.postgresChangesTimeoutMs =
            std::min(config.postgresChangesTimeoutMs, MaxPostgresChangesWaitMs);
    return config;
}

JoinConfig::Recover parseRecover(const QJsonValue &recover)
{
    JoinConfig::Recover parsed;
    const QJsonObject object = recover.toObject();
    const std::optional<quint64> epoch =
            pubsub::StreamPosition::parseEpoch(object.value(QLatin1String("epoch")).toString());
    const QJsonValue offset = object.value(QLatin1String("offset"));
    const double number = offset.toDouble(-1);
    // Up to 2^53: what a JSON number carries exactly.
    if (!epoch || !offset.isDouble() || number < 0 || number != std::floor(number)
        || number > 9007199254740992.0) {
        return parsed;
    }
    parsed.valid = true;
    parsed.epoch = *epoch;
    parsed.offset = static_cast<quint64>(number);
    return parsed;
}

qint64 postgresChangeId(const QJsonObject &entry)
{
    // FNV-1a over the canonical (key-sorted, compact) JSON, folded to 27 bits like upstream's
    // phash2 range, so ids are small, stable across nodes and restarts, and equal for equal
    // entries.
    const QByteArray canonical = QJsonDocument(entry).toJson(QJsonDocument::Compact);
    quint64 hash = 14695981039346656037ULL;
    for (const char c : canonical) {
        hash ^= static_cast<quint8>(c);
        hash *= 1099511628211ULL;
    }
    return static_cast<qint64>((hash ^ (hash >> 27) ^ (hash >> 54)) & ((1U << 27) - 1));
}

QJsonArray postgresChangesWithIds(const QJsonArray &entries)
{
    QJsonArray echoed;
    for (const auto &value : entries) {
        QJsonObject entry = value.toObject();
        const qint64 id = postgresChangeId(entry);
        entry.insert(QLatin1String("id"), id);
        echoed.append(entry);
    }
    return echoed;
}

} // namespace rt::channels
