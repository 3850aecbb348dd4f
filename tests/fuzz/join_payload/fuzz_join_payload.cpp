// libFuzzer target for the phx_join payload: the raw JSON text a client sends with a join,
// parsed the way ChannelService::join does (QJsonDocument, then parseJoinConfig), with the
// join reply's postgres_changes ids (postgresChangesWithIds) and the replay parameters
// (cdc::parseReplayParams) read from the result.
//
// The input is the payload's JSON text. Besides crashes, the target aborts when a promise
// breaks: the config depends only on the payload's JSON value (parsing its compact
// re-serialisation gives the same config); without a `config` key every option keeps its
// default; user_token wins over access_token; postgres_changes holds objects only; a string
// presence key is kept as its UTF-8 and a numeric one prints as a number that reads back as
// the same value; every reply entry is the join's entry plus an "id" in [0, 2^27) that depends
// only on the entry; accepted replay parameters have a limit in 1..ReplayLimitMax; an accepted
// recover position has a non-zero epoch and an offset of at most 2^53.
#include "server/cdc/channel_authorization.h"
#include "server/channels/join_payload.h"

#include <QJsonDocument>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

namespace {

using rt::channels::JoinConfig;

void require(bool condition)
{
    if (!condition) {
        std::abort();
    }
}

JoinConfig parse(const QByteArray &json)
{
    return rt::channels::parseJoinConfig(QJsonDocument::fromJson(json).object());
}

bool sameConfig(const JoinConfig &a, const JoinConfig &b)
{
    return a.hasConfig == b.hasConfig && a.broadcastSelf == b.broadcastSelf
            && a.broadcastAck == b.broadcastAck && a.replicationReady == b.replicationReady
            && a.replay == b.replay && a.presenceEnabled == b.presenceEnabled
            && a.presenceKey == b.presenceKey && a.postgresChanges == b.postgresChanges
            && a.isPrivate == b.isPrivate && a.accessToken == b.accessToken
            && a.recover.has_value() == b.recover.has_value()
            && (!a.recover
                || (a.recover->valid == b.recover->valid && a.recover->epoch == b.recover->epoch
                    && a.recover->offset == b.recover->offset));
}

// A recover position that is accepted names a real epoch and an offset a JSON number carries
// exactly; one that is not carries nothing.
void checkRecover(const JoinConfig &config)
{
    if (!config.recover) {
        return;
    }
    if (config.recover->valid) {
        require(config.recover->epoch != 0 && config.recover->offset <= (quint64(1) << 53));
    } else {
        require(config.recover->epoch == 0 && config.recover->offset == 0);
    }
}

void checkDefaults(const JoinConfig &config)
{
    require(!config.broadcastSelf && !config.broadcastAck && !config.replicationReady);
    require(!config.replay && !config.presenceEnabled && config.presenceKey.isEmpty());
    require(config.postgresChanges.isEmpty() && !config.isPrivate);
}

void checkToken(const QJsonObject &payload, const JoinConfig &config)
{
    const QJsonValue user = payload.value(QLatin1String("user_token"));
    const QJsonValue access = payload.value(QLatin1String("access_token"));
    if (user.isString()) {
        require(config.accessToken == user.toString().toUtf8());
    } else if (access.isString()) {
        require(config.accessToken == access.toString().toUtf8());
    } else {
        require(!config.accessToken);
    }
}

void checkPresenceKey(const QJsonObject &payload, const JoinConfig &config)
{
    const QJsonValue key = payload.value(QLatin1String("config"))
                                   .toObject()
                                   .value(QLatin1String("presence"))
                                   .toObject()
                                   .value(QLatin1String("key"));
    if (key.isString()) {
        require(config.presenceKey == key.toString().toUtf8());
    } else if (key.isDouble()) {
        bool ok = false;
        const double read = config.presenceKey.toDouble(&ok);
        require(ok && read == key.toDouble());
    } else if (key.isNull() || key.isUndefined()) {
        require(config.presenceKey.isEmpty());
    }
}

void checkChanges(const QJsonObject &payload, const JoinConfig &config)
{
    const QJsonValue raw = payload.value(QLatin1String("config"))
                                   .toObject()
                                   .value(QLatin1String("postgres_changes"));
    require(config.postgresChanges.size() <= raw.toArray().size());
    const QJsonArray echoed = rt::channels::postgresChangesWithIds(config.postgresChanges);
    require(echoed.size() == config.postgresChanges.size());
    for (qsizetype i = 0; i < echoed.size(); ++i) {
        require(config.postgresChanges.at(i).isObject() && echoed.at(i).isObject());
        const QJsonObject entry = config.postgresChanges.at(i).toObject();
        QJsonObject reply = echoed.at(i).toObject();
        const QJsonValue id = reply.take(QLatin1String("id"));
        const qint64 expected = rt::channels::postgresChangeId(entry);
        require(expected >= 0 && expected < (qint64(1) << 27));
        require(id.isDouble() && id.toInteger(-1) == expected);
        QJsonObject withoutId = entry;
        withoutId.remove(QLatin1String("id"));
        require(reply == withoutId);
    }
}

void checkReplay(const JoinConfig &config)
{
    if (!config.replay) {
        return;
    }
    const auto replay = rt::cdc::parseReplayParams(*config.replay);
    if (replay.ok()) {
        require(replay->second >= 1 && replay->second <= rt::cdc::ReplayLimitMax);
    } else {
        require(!replay.error().isEmpty());
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArray json(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    const QJsonObject payload = QJsonDocument::fromJson(json).object();
    const JoinConfig config = parse(json);
    require(config.hasConfig == payload.contains(QLatin1String("config")));
    if (!config.hasConfig) {
        checkDefaults(config);
    }
    checkToken(payload, config);
    checkPresenceKey(payload, config);
    checkChanges(payload, config);
    checkReplay(config);
    checkRecover(config);
    const JoinConfig again = parse(QJsonDocument(payload).toJson(QJsonDocument::Compact));
    require(sameConfig(config, again));
    return 0;
}
