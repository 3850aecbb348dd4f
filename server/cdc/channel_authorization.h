#pragma once

#include "shared/core/result.h"

#include <QByteArray>
#include <QJsonValue>
#include <QList>
#include <QString>

#include <functional>
#include <optional>
#include <utility>

namespace rt::postgres {
class Pool;
struct PgError;
} // namespace rt::postgres

// The database side of private channels (spec §7): RLS read and write checks on
// realtime.messages evaluated as the JWT's role, their failures as join reasons and shutdown
// texts, and the replay query of config.broadcast.replay (spec §4.7).
//
// Everything here is asynchronous over a postgres::Pool: the callback runs later on the thread
// that owns the pool (never from inside the call), and nothing blocks. A check never leaves a
// trace in the database: each runs inside an explicit transaction that is rolled back, and an
// error rolls it back too (the Connection ends any transaction left open).
namespace rt::cdc {

// Who asks for what (spec §7.1). All values come from a verified JWT and the request; they are
// sent as statement parameters, never spliced into SQL.
struct AuthorizationRequest
{
    QByteArray topic; // the sub-topic (realtime.topic() in policies)
    QByteArray role; // the JWT `role` claim: an existing database role
    QByteArray claimsJson; // every claim, as a JSON object
    QByteArray sub; // the `sub` claim (may be empty)
    QByteArray headersJson = QByteArrayLiteral("{}"); // JSON object of headers; empty = "{}"
};

// The outcome of checks: std::nullopt = not checked (e.g. presence when presence is disabled).
// The request for `claims` (the JWT's) on `topic`, with `headers` (the WebSocket's x-* headers,
// or all headers of an HTTP API request) as request.headers (spec §7.1).
AuthorizationRequest authorizationRequestFor(const QJsonObject &claims, const QByteArray &topic,
                                             const QJsonObject &headers);

struct Permissions
{
    std::optional<bool> broadcastRead;
    std::optional<bool> presenceRead;
    std::optional<bool> broadcastWrite;
    std::optional<bool> presenceWrite;

    bool operator==(const Permissions &) const = default;
};

// Why a check could not decide (upstream's error atoms of Authorization).
enum class AuthorizationFailure {
    RlsPolicyError, // the database refused: a policy raised, the role does not exist, ...
    QueryCanceled, // SQLSTATE 57014 (statement_timeout, pg_cancel_backend)
    MissingPartition, // no realtime.messages partition for now (check_violation on messages)
    DatabaseUnavailable, // the connection failed or was lost
    ConnectionPoolExhausted, // no connection in time (reported by callers that enforce a limit)
};

struct AuthorizationError
{
    AuthorizationFailure kind = AuthorizationFailure::RlsPolicyError;
    QString detail; // PostgreSQL's message (for logs and QueryCanceled reasons)
    QByteArray sqlState; // five characters, or empty for client-side errors
};

// Read check (spec §7.2): as the connection's own user, insert one probe row per extension
// (broadcast always, presence when checkPresence), switch to the JWT role with the settings of
// §7.1, select the probe ids back through RLS, roll everything back. The result has
// broadcastRead set, presenceRead set iff checkPresence, the write fields unset.
void checkRead(postgres::Pool &pool, const AuthorizationRequest &request, bool checkPresence,
               std::function<void(rt::Result<Permissions, AuthorizationError>)> done);

// Write check (spec §7.3) for one extension ("broadcast" or "presence"): with the settings of
// §7.1, insert a row as the JWT role, then roll back. true = allowed; false = refused by RLS or
// missing privilege (SQLSTATE 42501); anything else is an AuthorizationError. An extension other
// than broadcast/presence is refused without a query (RlsPolicyError).
void checkWrite(postgres::Pool &pool, const AuthorizationRequest &request, QByteArray extension,
                std::function<void(rt::Result<bool, AuthorizationError>)> done);

// How a PostgreSQL error of a check is classified (exposed for tests and for callers that run
// their own statements): 57014 → QueryCanceled; check_violation on realtime.messages (its "no
// partition of relation" error) → MissingPartition; a lost connection → DatabaseUnavailable;
// everything else → RlsPolicyError.
AuthorizationError classifyError(const postgres::PgError &error);

// The join error reason (spec §3.4) for a failed read check on `topic`. A policy error is
// reported as Unauthorized, as upstream does.
QString joinErrorReason(const AuthorizationError &error, const QByteArray &topic);
// The join reason when the check succeeded but neither read permission was granted.
QString unauthorizedReason(const QByteArray &topic);
// The `system` shutdown message (spec §3.5) for a failed read check on `topic` during an
// access_token refresh (upstream reports a policy error as "You do not have permissions to read
// from this Channel topic: <topic>", hence the topic).
QString refreshShutdownMessage(const AuthorizationError &error, const QByteArray &topic);

// The status and JSON body of the single-message broadcast API (spec §4.5) for a failed write
// check.
struct HttpFailure
{
    int status = 500;
    QByteArray body;
};
HttpFailure httpFailure(const AuthorizationError &error);

// Broadcast persistence (realtime-js 2.119.1's `persist`, upstream PR #2022): what a sender
// asked for. The kind-3 metadata {"persist": true | {"ttl": n}}, or the HTTP API's
// persist=true / persist[ttl]=n.
struct PersistOption
{
    bool asked = false;
    bool valid = true; // false: asked with a bad ttl (or a value that is neither)
    std::optional<int> ttlSeconds; // none: kept as long as its partition (72 h)
};
inline constexpr int MaxPersistTtlSeconds = 259'200; // realtime.messages keeps 72 hours
PersistOption persistFromMetadata(const QByteArray &metadataJson);
PersistOption persistFromQuery(const QByteArray &persist, const QByteArray &ttl, bool hasPersist,
                               bool hasTtl);
QString invalidPersistReason(); // the ack's error for a bad ttl
QString persistOnPublicReason(); // the ack's error on a public channel
QString persistRefusedReason(const QByteArray &topic); // the ack's error when RLS refuses

// A message to persist on a private topic.
struct PersistRequest
{
    AuthorizationRequest authorization; // the sender's (topic = the sub-topic)
    QByteArray event;
    QByteArray payload; // JSON text, or raw bytes when isBinary
    bool isBinary = false;
    std::optional<int> ttlSeconds;
};
// The persistence check (upstream's: an INSERT of extension 'persistence' as the JWT's role,
// rolled back to a savepoint), then the row, stored as the connection's user with
// skip_broadcast (the caller broadcasts it; the WAL must not again) and its ttl as expires_at.
// true and the row's id; false: refused by RLS (nothing stored); or an AuthorizationError.
struct PersistOutcome
{
    bool stored = false;
    QByteArray id;
};
void persist(postgres::Pool &pool, const PersistRequest &request,
             std::function<void(rt::Result<PersistOutcome, AuthorizationError>)> done);

// One replayed row of realtime.messages (spec §4.7).
struct StoredMessage
{
    QByteArray id; // uuid, text form
    QByteArray event; // null QByteArray when the column is NULL
    // The jsonb text of `payload` ("null" when NULL), or the raw bytes of `binary_payload` when
    // isBinary.
    QByteArray payload;
    bool isBinary = false;

    bool operator==(const StoredMessage &) const = default;
};

// The hard limit of replayed messages (upstream's @hard_limit).
inline constexpr int ReplayLimitMax = 25;

// The private broadcasts of `topic` with inserted_at (UTC) in [sinceMs, now + 1 minute): the
// newest `limit` (clamped to 1..25), delivered oldest first. Errors: DatabaseUnavailable when
// the connection failed, RlsPolicyError for any other database error (the join reports both as
// "UnableToReplayMessages: Realtime was unable to replay messages", replayFailedReason()).
void replay(postgres::Pool &pool, const QByteArray &topic, qint64 sinceMs, int limit,
            std::function<void(rt::Result<QList<StoredMessage>, AuthorizationError>)> done);

// config.broadcast.replay validated as upstream does: an object with an integer `since` (Unix
// milliseconds within years -9999..9999) and `limit` an integer (absent, null or false = 25,
// then clamped to 1..25). The error is the join reason
// "UnableToReplayMessages: Replay params are not valid". Qt's JSON parser cannot tell 1.0 from 1,
// so an integral number written with a fraction or exponent is accepted (upstream refuses it).
rt::Result<std::pair<qint64, int>, QString> parseReplayParams(const QJsonValue &replay);

QString replayFailedReason(); // "UnableToReplayMessages: Realtime was unable to replay messages"
QString replayOnPublicChannelReason(); // "UnableToReplayMessages: Replay is not allowed for ..."

} // namespace rt::cdc
