#pragma once

#include <QByteArray>
#include <QJsonArray>
#include <QJsonObject>

#include <optional>

namespace rt::channels {

// The phx_join payload (spec §3.2), validated leniently like upstream: a field of the wrong type
// falls back to its default and the join continues. Booleans also accept "true"/"false" strings
// in any letter case.
// Upstream's default wait for postgres_changes_options and its cap (postgres_changes_wait_max_timeout).
inline constexpr int DefaultPostgresChangesWaitMs = 15'000;
inline constexpr int MaxPostgresChangesWaitMs = 20'000;

struct JoinConfig
{
    bool hasConfig = false; // false: the legacy API (no `config` key at all)
    bool broadcastSelf = false;
    bool broadcastAck = false;
    bool replicationReady = false;
    std::optional<QJsonValue> replay; // config.broadcast.replay as sent, if any
    // config.broadcast.recover {epoch, offset}: the last position the client saw. `valid` false:
    // present but not a position (answered recovered:false, "invalid position").
    struct Recover
    {
        bool valid = false;
        quint64 epoch = 0;
        quint64 offset = 0;
    };
    std::optional<Recover> recover;
    bool presenceEnabled = false;
    QByteArray presenceKey; // as a string; empty means "generate one"
    QJsonArray postgresChanges; // object entries only, in order (null entries dropped)
    bool isPrivate = false;
    // config.postgres_changes_options {wait, timeout} (realtime-js 2.119.1, upstream PR #2109):
    // hold the join reply until the channel's changes are matched on the live stream.
    bool postgresChangesWait = false;
    int postgresChangesTimeoutMs = DefaultPostgresChangesWaitMs; // clamped to the maximum
    // user_token wins over access_token; absent or not a string: nullopt.
    std::optional<QByteArray> accessToken;
};

JoinConfig parseJoinConfig(const QJsonObject &payload);
// config.broadcast.recover as sent: {epoch: 16 hex digits, offset: integer >= 0}.
JoinConfig::Recover parseRecover(const QJsonValue &recover);

// The join reply's postgres_changes list: each entry echoed verbatim plus an integer "id" that
// depends only on the entry (identical entries get identical ids, spec §3.4).
QJsonArray postgresChangesWithIds(const QJsonArray &entries);
qint64 postgresChangeId(const QJsonObject &entry);

} // namespace rt::channels
