#pragma once

#include "shared/core/result.h"

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QMetaType>
#include <QString>

#include <optional>

namespace rt::cluster {

// What a node publishes about itself under its lease (etcd: <prefix>/nodes/<id>). Plain value;
// safe to copy across threads.
struct NodeInfo
{
    QString id; // unique in the cluster (NODE_NAME)
    QString region; // REGION, "local" by default
    QString clientAddress; // where clients reach this node (host:port or URL)
    QString linkAddress; // node-link listener, host:port
    qint64 startedAtMs = 0; // wall clock, ms since the epoch
    std::optional<double> load; // 5-minute load average; nullopt = "not enough data" yet

    QJsonObject toJson() const;
    QByteArray toJsonBytes() const; // compact
    // Untrusted bytes (another node's record): any malformation is an error value. `id` must be
    // a non-empty string; the other fields default when absent but must have the right type.
    static Result<NodeInfo> fromJson(QByteArrayView json);
    static Result<NodeInfo> fromJson(const QJsonObject &object);

    friend bool operator==(const NodeInfo &, const NodeInfo &) = default;
};

// Exclusive ownership of a named resource (e.g. "cdc/<tenant>"), bound to the owner's lease:
// it vanishes when the owner's lease ends.
struct Claim
{
    QString resource;
    QString owner; // node id
    QByteArray metadata; // opaque JSON chosen by the owner (state starting/ready, how to reach it)
    qint64 createRevision = 0; // when this ownership began (cluster revision); lower = older
    qint64 modRevision = 0; // last metadata change

    friend bool operator==(const Claim &, const Claim &) = default;
};

// The ownership rule when two claims of one resource are ever seen at once: the older claim
// (lower createRevision) wins, the owner's node id breaks a tie. Both backends create claims
// atomically ("create if absent"), so the existing claim always wins a race; this function
// keeps the rule in one place for any code that compares claims.
bool claimWins(const Claim &candidate, const Claim &other);

// How a claim is stored as a value: {"owner":"<node>","metadata":"<metadata bytes as text>"}.
// The metadata is kept as a JSON string so that the owner's bytes come back unchanged.
QByteArray encodeClaimValue(const QString &owner, const QByteArray &metadata);
struct ClaimValue
{
    QString owner;
    QByteArray metadata;
};
Result<ClaimValue> decodeClaimValue(QByteArrayView value);

// One configuration key (etcd: <prefix>/config/<key>).
struct ConfigEntry
{
    QString key;
    QByteArray value;
    qint64 modRevision = 0;
    bool temporary = false; // bound to a lease: it expires by itself

    friend bool operator==(const ConfigEntry &, const ConfigEntry &) = default;
};

// Every configuration entry as of `revision` (the cluster revision the snapshot reflects). A
// node keeps its last snapshot while the backend is unreachable ("last known good").
struct ConfigSnapshot
{
    QMap<QString, ConfigEntry> entries; // by key
    qint64 revision = 0;

    std::optional<ConfigEntry> find(const QString &key) const;
    friend bool operator==(const ConfigSnapshot &, const ConfigSnapshot &) = default;
};

// Why a configuration write was not applied.
struct ConfigWriteError
{
    enum class Kind {
        Conflict, // expectedModRevision did not match; `current` is what is stored (nullopt: absent)
        Unavailable, // the backend could not be reached or refused the request; nothing is known
        Invalid, // bad arguments (empty key, negative TTL ...)
    };
    Kind kind = Kind::Unavailable;
    std::optional<ConfigEntry> current;
    QString message;
};

// putConfig()/deleteConfig() answer with the cluster revision of the write, or an error.
using ConfigWriteResult = Result<qint64, ConfigWriteError>;

} // namespace rt::cluster

Q_DECLARE_METATYPE(rt::cluster::NodeInfo)
Q_DECLARE_METATYPE(rt::cluster::Claim)
Q_DECLARE_METATYPE(std::optional<rt::cluster::Claim>)
Q_DECLARE_METATYPE(rt::cluster::ConfigSnapshot)
