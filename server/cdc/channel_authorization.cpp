#include "server/cdc/channel_authorization.h"

#include "server/postgres/pool.h"
#include "server/postgres/query_result.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QUuid>
#include <QVariant>

#include <algorithm>
#include <cmath>
#include <limits>

namespace rt::cdc {

namespace {

using postgres::PgError;
using postgres::SegmentResult;
using postgres::Statement;

// §7.1: the JWT role first, then the values policies read. Transaction-local (is_local = true),
// so the ROLLBACK that ends every check also ends them.
const QByteArray SettingsSql = QByteArrayLiteral("SELECT set_config('role', $1, true), "
                                                 "set_config('realtime.topic', $2, true), "
                                                 "set_config('request.jwt.claims', $3, true), "
                                                 "set_config('request.jwt.claim.sub', $4, true), "
                                                 "set_config('request.jwt.claim.role', $5, true), "
                                                 "set_config('request.headers', $6, true)");

const QString UnableToConnect =
        QStringLiteral("Realtime was unable to connect to the project database");

// The range of Elixir's DateTime.from_unix(_, :millisecond): years -9999 .. 9999. Outside it
// upstream answers invalid_replay_params.
constexpr qint64 ElixirMinUnixMs = -377705116800000;
constexpr qint64 ElixirMaxUnixMs = 253402300799999;
// replay() clamps `since` to 0001-01-01 UTC: PostgreSQL's timestamp stops at 4713 BC, and no
// realtime.messages row can be older than its partitions (which start at the server's first day).
constexpr qint64 ReplayMinUnixMs = -62135596800000;
constexpr qint64 MsPerDay = 86400000;

Statement statement(const char *sql, QList<std::optional<QByteArray>> params = {})
{
    return Statement{ QByteArray(sql), std::move(params) };
}

Statement settingsStatement(const AuthorizationRequest &request)
{
    const QByteArray headers =
            request.headersJson.isEmpty() ? QByteArrayLiteral("{}") : request.headersJson;
    const QByteArray claims =
            request.claimsJson.isEmpty() ? QByteArrayLiteral("{}") : request.claimsJson;
    return Statement{ SettingsSql,
                      { request.role, request.topic, claims, request.sub, request.role, headers } };
}

// `SET ROLE none` (and set_config('role', 'none')) means "back to the session user", which owns
// realtime.messages and so passes every policy: a token claiming role "none" must not be
// mistaken for a privileged one. PostgreSQL compares the word case-sensitively.
std::optional<AuthorizationError> refuseRole(const QByteArray &role)
{
    if (role == "none") {
        return AuthorizationError{ AuthorizationFailure::RlsPolicyError,
                                   QStringLiteral("role \"none\" is not allowed in a JWT"),
                                   QByteArrayLiteral("22023") };
    }
    return std::nullopt;
}

// Runs `call` from the pool's event loop, so that callers are never re-entered from inside a
// check even when it is answered without a query. Dropped if the pool is destroyed first, like
// the pool's own callbacks.
void answerLater(postgres::Pool &pool, std::function<void()> call)
{
    QMetaObject::invokeMethod(&pool, std::move(call), Qt::QueuedConnection);
}

// The first error of a segment, classified; a segment that reports success but has fewer
// results than statements (never expected) is treated as a lost connection.
AuthorizationError segmentError(const SegmentResult &result)
{
    if (const PgError *error = result.firstError()) {
        return classifyError(*error);
    }
    return AuthorizationError{ AuthorizationFailure::DatabaseUnavailable,
                               QStringLiteral("incomplete result from the database"),
                               {} };
}

// A JSON number that upstream (Elixir's is_integer/1) would take as an integer. Qt's parser
// stores integral numbers that fit in 64 bits as integers; larger integral values arrive as
// doubles and saturate (they are out of every accepted range anyway).
std::optional<qint64> jsonInteger(const QJsonValue &value)
{
    if (!value.isDouble()) {
        return std::nullopt;
    }
    const QVariant variant = value.toVariant();
    if (variant.typeId() == QMetaType::LongLong) {
        return variant.toLongLong();
    }
    const double d = value.toDouble();
    if (!std::isfinite(d) || std::trunc(d) != d) {
        return std::nullopt;
    }
    if (d >= 9.2e18) {
        return std::numeric_limits<qint64>::max();
    }
    if (d <= -9.2e18) {
        return std::numeric_limits<qint64>::min();
    }
    return static_cast<qint64>(d);
}

// The probe rows of a read check: broadcast always, presence when checkPresence.
Statement probeInsert(const QByteArray &topic, const QByteArray &broadcastId,
                      const QByteArray &presenceId, bool checkPresence)
{
    // Probe and check rows are stamped with the database's UTC time, as upstream stamps them with
    // NaiveDateTime.utc_now(): inserted_at is `timestamp without time zone` and the daily
    // partitions are UTC days, whatever the session's TimeZone is.
    return checkPresence ? statement("INSERT INTO realtime.messages "
                                     "(id, topic, extension, inserted_at, updated_at) VALUES "
                                     "($1::uuid, $3, 'broadcast', "
                                     "timezone('utc', now()), timezone('utc', now())), "
                                     "($2::uuid, $3, 'presence', "
                                     "timezone('utc', now()), timezone('utc', now()))",
                                     { broadcastId, presenceId, topic })
                         : statement("INSERT INTO realtime.messages "
                                     "(id, topic, extension, inserted_at, updated_at) VALUES "
                                     "($1::uuid, $2, 'broadcast', "
                                     "timezone('utc', now()), timezone('utc', now()))",
                                     { broadcastId, topic });
}

// Why a read check's segment failed; `insertIndex` is the probe insert's statement.
AuthorizationError readCheckError(const SegmentResult &result, int insertIndex)
{
    AuthorizationError error = segmentError(result);
    // The probe insert runs before the role switch, so no policy can raise there: its
    // check_violation is the partition (or the table) itself, whatever language the server
    // writes its messages in.
    if (result.results.size() > insertIndex && !result.results[insertIndex].ok()
        && result.results[insertIndex].error().sqlState == "23514") {
        error.kind = AuthorizationFailure::MissingPartition;
    }
    return error;
}

// The read permissions: the probes the JWT role's select saw.
Permissions probesSeen(const postgres::QueryResult &rows, const QByteArray &broadcastId,
                       const QByteArray &presenceId, bool checkPresence)
{
    bool broadcast = false;
    bool presence = false;
    for (int row = 0; row < rows.rowCount(); ++row) {
        const QByteArray id = rows.value(row, 0);
        broadcast = broadcast || id == broadcastId;
        presence = presence || id == presenceId;
    }
    Permissions permissions;
    permissions.broadcastRead = broadcast;
    if (checkPresence) {
        permissions.presenceRead = presence;
    }
    return permissions;
}

} // namespace

AuthorizationError classifyError(const PgError &error)
{
    AuthorizationError out;
    out.detail = error.message;
    out.sqlState = error.sqlState;
    if (error.connectionLost) {
        out.kind = AuthorizationFailure::DatabaseUnavailable;
    } else if (error.sqlState == "57014") {
        out.kind = AuthorizationFailure::QueryCanceled;
    } else if (error.sqlState == "23514"
               && error.message.contains(QLatin1String("relation \"messages\""))) {
        // Upstream matches check_violation whose table is "messages": PostgreSQL's "no partition
        // of relation \"messages\" found for row" (a CHECK failing on a partition names the
        // partition, and a policy raising check_violation names no table). libpq's table field
        // is not carried by PgError, so the relation is read from the (English) message; the
        // read check also maps any check_violation of its privileged probe insert, where no
        // policy runs.
        out.kind = AuthorizationFailure::MissingPartition;
    } else {
        // Upstream: every other Postgrex error (invalid role, a policy raising, permission
        // denied on the SELECT...) is an RLS policy error.
        out.kind = AuthorizationFailure::RlsPolicyError;
    }
    return out;
}

void checkRead(postgres::Pool &pool, const AuthorizationRequest &request, bool checkPresence,
               std::function<void(rt::Result<Permissions, AuthorizationError>)> done)
{
    if (auto refused = refuseRole(request.role)) {
        answerLater(pool, [done = std::move(done), error = *refused] { done(error); });
        return;
    }

    // The probe ids are made here, so the select needs no RETURNING on the insert (RETURNING
    // would apply the SELECT policies to the privileged insert) and the answer maps back to
    // extensions by id.
    const QByteArray broadcastId = QUuid::createUuid().toByteArray(QUuid::WithoutBraces);
    const QByteArray presenceId = QUuid::createUuid().toByteArray(QUuid::WithoutBraces);
    Statement insert = probeInsert(request.topic, broadcastId, presenceId, checkPresence);
    const QByteArray ids = checkPresence ? QByteArray('{' + broadcastId + ',' + presenceId + '}')
                                         : QByteArray('{' + broadcastId + '}');

    // One round trip. The probes are inserted as the connection's own user (owner of the table,
    // or a BYPASSRLS role), before the role switch; the select runs as the JWT role, so RLS
    // decides which probes it sees. ROLLBACK removes the probes and ends the settings; after an
    // error the Connection rolls back itself.
    QList<Statement> segment{
        statement("BEGIN"),
        std::move(insert),
        settingsStatement(request),
        statement("SELECT id::text FROM realtime.messages WHERE id = ANY($1::uuid[])", { ids }),
        statement("ROLLBACK"),
    };
    constexpr int InsertIndex = 1;
    constexpr int SelectIndex = 3;

    pool.run(std::move(segment),
             [done = std::move(done), broadcastId, presenceId,
              checkPresence](const SegmentResult &result) {
                 if (!result.ok() || result.results.size() <= SelectIndex) {
                     done(readCheckError(result, InsertIndex));
                     return;
                 }
                 done(probesSeen(result.results[SelectIndex].value(), broadcastId, presenceId,
                                 checkPresence));
             });
}

void checkWrite(postgres::Pool &pool, const AuthorizationRequest &request, QByteArray extension,
                std::function<void(rt::Result<bool, AuthorizationError>)> done)
{
    std::optional<AuthorizationError> refused = refuseRole(request.role);
    if (!refused && extension != "broadcast" && extension != "presence") {
        refused = AuthorizationError{
            AuthorizationFailure::RlsPolicyError,
            QStringLiteral("unknown extension \"%1\"").arg(QString::fromUtf8(extension)),
            {}
        };
    }
    if (refused) {
        answerLater(pool, [done = std::move(done), error = *refused] { done(error); });
        return;
    }

    // No RETURNING: with it PostgreSQL would also apply the SELECT policies to the new row, and
    // a role allowed to write but not to read would be refused (upstream avoids it too).
    QList<Statement> segment{
        statement("BEGIN"),
        settingsStatement(request),
        statement("INSERT INTO realtime.messages (topic, extension, inserted_at, updated_at) "
                  "VALUES ($1, $2, timezone('utc', now()), timezone('utc', now()))",
                  { request.topic, extension }),
        statement("ROLLBACK"),
    };
    constexpr int InsertIndex = 2;

    pool.run(std::move(segment), [done = std::move(done)](const SegmentResult &result) {
        if (result.ok() && result.results.size() > InsertIndex) {
            done(true);
            return;
        }
        // 42501: "new row violates row-level security policy" or "permission denied for table".
        // Only a refusal of the INSERT itself counts: the same code from the settings (never
        // expected) would not be an answer about writing.
        if (result.results.size() > InsertIndex && !result.results[InsertIndex].ok()
            && result.results[InsertIndex].error().sqlState == "42501") {
            done(false);
            return;
        }
        done(segmentError(result));
    });
}

PersistOption persistFromMetadata(const QByteArray &metadataJson)
{
    PersistOption option;
    if (metadataJson.isEmpty()) {
        return option;
    }
    const QJsonValue persist =
            QJsonDocument::fromJson(metadataJson).object().value(QLatin1String("persist"));
    if (persist.isUndefined() || persist.isNull() || persist == QJsonValue(false)) {
        return option;
    }
    option.asked = true;
    if (persist == QJsonValue(true)) {
        return option;
    }
    const QJsonValue ttl = persist.toObject().value(QLatin1String("ttl"));
    const double seconds = ttl.toDouble(-1);
    if (!persist.isObject() || !ttl.isDouble() || seconds < 1 || seconds > MaxPersistTtlSeconds
        || seconds != std::floor(seconds)) {
        option.valid = false;
        return option;
    }
    option.ttlSeconds = static_cast<int>(seconds);
    return option;
}

PersistOption persistFromQuery(const QByteArray &persist, const QByteArray &ttl, bool hasPersist,
                               bool hasTtl)
{
    PersistOption option;
    if (hasTtl) {
        option.asked = true;
        bool ok = false;
        const int seconds = ttl.toInt(&ok);
        option.valid = ok && seconds >= 1 && seconds <= MaxPersistTtlSeconds
                && ttl == QByteArray::number(seconds);
        if (option.valid) {
            option.ttlSeconds = seconds;
        }
        return option;
    }
    option.asked = hasPersist && persist == "true";
    return option;
}

QString invalidPersistReason()
{
    return QStringLiteral("Invalid persist: ttl must be a positive integer of seconds up to %1")
            .arg(MaxPersistTtlSeconds);
}

QString persistOnPublicReason()
{
    return QStringLiteral("Persistence is only available on private channels");
}

QString persistRefusedReason(const QByteArray &topic)
{
    return QStringLiteral("Unauthorized: You do not have permissions to persist messages on this "
                          "Channel topic: %1")
            .arg(QString::fromUtf8(topic));
}

void persist(postgres::Pool &pool, const PersistRequest &request,
             std::function<void(rt::Result<PersistOutcome, AuthorizationError>)> done)
{
    if (std::optional<AuthorizationError> refused = refuseRole(request.authorization.role)) {
        answerLater(pool, [done = std::move(done), error = *refused] { done(error); });
        return;
    }
    const QByteArray ttl =
            request.ttlSeconds ? QByteArray::number(*request.ttlSeconds) : QByteArray();
    const std::optional<QByteArray> json =
            request.isBinary ? std::nullopt : std::optional<QByteArray>(request.payload);
    const std::optional<QByteArray> hex =
            request.isBinary ? std::optional<QByteArray>(request.payload.toHex()) : std::nullopt;
    // The role and claims are set inside the savepoint: rolling back to it restores the
    // connection's own user for the row itself.
    QList<Statement> segment{
        statement("BEGIN"),
        statement("SAVEPOINT persistence_check"),
        settingsStatement(request.authorization),
        statement("INSERT INTO realtime.messages (topic, extension, inserted_at, updated_at) "
                  "VALUES ($1, 'persistence', timezone('utc', now()), timezone('utc', now()))",
                  { request.authorization.topic }),
        statement("ROLLBACK TO SAVEPOINT persistence_check"),
        statement("INSERT INTO realtime.messages (topic, extension, event, private, payload, "
                  "binary_payload, skip_broadcast, expires_at, inserted_at, updated_at) "
                  "VALUES ($1, 'broadcast', $2, true, $3::jsonb, decode($4, 'hex'), true, "
                  "timezone('utc', now()) + $5::integer * interval '1 second', "
                  "timezone('utc', now()), timezone('utc', now())) RETURNING id::text",
                  { request.authorization.topic, request.event, json, hex,
                    ttl.isEmpty() ? std::nullopt : std::optional<QByteArray>(ttl) }),
        statement("COMMIT"),
    };
    constexpr int CheckIndex = 3;
    constexpr int RowIndex = 5;
    pool.run(std::move(segment), [done = std::move(done)](const SegmentResult &result) {
        if (result.ok() && result.results.size() > RowIndex) {
            done(PersistOutcome{ true, result.results[RowIndex].value().value(0, 0) });
            return;
        }
        if (result.results.size() > CheckIndex && !result.results[CheckIndex].ok()
            && result.results[CheckIndex].error().sqlState == "42501") {
            done(PersistOutcome{});
            return;
        }
        done(segmentError(result));
    });
}

QString unauthorizedReason(const QByteArray &topic)
{
    return QStringLiteral("Unauthorized: You do not have permissions to read from this Channel "
                          "topic: %1")
            .arg(QString::fromUtf8(topic));
}

QString joinErrorReason(const AuthorizationError &error, const QByteArray &topic)
{
    switch (error.kind) {
    case AuthorizationFailure::RlsPolicyError:
        return unauthorizedReason(topic);
    case AuthorizationFailure::QueryCanceled:
        // Upstream appends inspect(%Postgrex.Error{}); the PostgreSQL message is its useful part.
        return QStringLiteral("QueryCanceled: %1").arg(error.detail);
    case AuthorizationFailure::MissingPartition:
        return QStringLiteral(
                "MissingPartition: Realtime was unable to find the expected messages partition");
    case AuthorizationFailure::DatabaseUnavailable:
        return QStringLiteral("UnableToConnectToProject: ") + UnableToConnect;
    case AuthorizationFailure::ConnectionPoolExhausted:
        return QStringLiteral("IncreaseConnectionPool: Please increase your connection pool size");
    }
    return UnableToConnect;
}

QString refreshShutdownMessage(const AuthorizationError &error, const QByteArray &topic)
{
    switch (error.kind) {
    case AuthorizationFailure::RlsPolicyError:
        return QStringLiteral("You do not have permissions to read from this Channel topic: %1")
                .arg(QString::fromUtf8(topic));
    case AuthorizationFailure::QueryCanceled:
        return QStringLiteral("Query was cancelled, please try again");
    case AuthorizationFailure::MissingPartition:
    case AuthorizationFailure::DatabaseUnavailable:
        return UnableToConnect;
    case AuthorizationFailure::ConnectionPoolExhausted:
        // Upstream's catch-all clause renders the error atom with inspect/1.
        return QStringLiteral(":increase_connection_pool");
    }
    return UnableToConnect;
}

HttpFailure httpFailure(const AuthorizationError &error)
{
    switch (error.kind) {
    case AuthorizationFailure::RlsPolicyError:
        return { 422, QByteArrayLiteral(R"({"message":"RLS policy error"})") };
    case AuthorizationFailure::QueryCanceled:
        return { 422, QByteArrayLiteral(R"({"message":"Query canceled"})") };
    case AuthorizationFailure::MissingPartition:
        return { 422, QByteArrayLiteral(R"({"message":"Missing messages partition"})") };
    case AuthorizationFailure::DatabaseUnavailable:
        return { 422, QByteArrayLiteral(R"({"message":"Tenant database unavailable"})") };
    case AuthorizationFailure::ConnectionPoolExhausted:
        return { 429, QByteArrayLiteral(R"({"message":"Connection pool exhausted"})") };
    }
    return { 500, QByteArrayLiteral(R"({"message":"Unable to authorize broadcast"})") };
}

void replay(postgres::Pool &pool, const QByteArray &topic, qint64 sinceMs, int limit,
            std::function<void(rt::Result<QList<StoredMessage>, AuthorizationError>)> done)
{
    limit = std::clamp(limit, 1, ReplayLimitMax);
    sinceMs = std::clamp(sinceMs, ReplayMinUnixMs, ElixirMaxUnixMs);
    // `since` as whole days plus milliseconds: both products are exact in PostgreSQL's interval
    // arithmetic (a single millisecond count times an interval goes through a double).
    qint64 days = sinceMs / MsPerDay;
    qint64 remainder = sinceMs % MsPerDay;
    if (remainder < 0) {
        --days;
        remainder += MsPerDay;
    }

    // inserted_at is UTC wall time (see checkRead); the upper bound keeps the scan out of
    // future partitions, as upstream's now + 1 minute does. The partial index
    // messages_inserted_at_topic_index serves this exact predicate.
    Statement query = statement(
            "SELECT id::text, event, payload::text, encode(binary_payload, 'hex'), "
            "binary_payload IS NOT NULL "
            "FROM realtime.messages "
            "WHERE topic = $1 AND private IS TRUE AND extension = 'broadcast' "
            "AND inserted_at >= timestamp '1970-01-01 00:00:00' + $2::integer * interval '1 day' "
            "+ $3::integer * interval '1 millisecond' "
            "AND inserted_at < timezone('utc', now()) + interval '1 minute' "
            "AND (expires_at IS NULL OR expires_at > timezone('utc', now())) "
            "ORDER BY inserted_at DESC, insertion_order DESC NULLS LAST LIMIT $4::integer",
            { topic, QByteArray::number(days), QByteArray::number(remainder),
              QByteArray::number(limit) });

    pool.run(std::move(query), [done = std::move(done)](const postgres::StatementResult &result) {
        if (!result.ok()) {
            done(classifyError(result.error()));
            return;
        }
        const postgres::QueryResult &rows = result.value();
        QList<StoredMessage> messages;
        messages.reserve(rows.rowCount());
        // Newest first from the query; delivered oldest first.
        for (int row = rows.rowCount() - 1; row >= 0; --row) {
            StoredMessage message;
            message.id = rows.value(row, 0);
            if (!rows.isNull(row, 1)) {
                message.event = rows.value(row, 1);
                if (message.event.isNull()) {
                    message.event = QByteArray(""); // empty text, not NULL
                }
            }
            message.isBinary = rows.value(row, 4) == "t";
            if (message.isBinary) {
                message.payload = QByteArray::fromHex(rows.value(row, 3));
            } else if (rows.isNull(row, 2)) {
                message.payload = QByteArrayLiteral("null");
            } else {
                message.payload = rows.value(row, 2);
            }
            messages.append(std::move(message));
        }
        done(std::move(messages));
    });
}

rt::Result<std::pair<qint64, int>, QString> parseReplayParams(const QJsonValue &replay)
{
    const QString invalid = QStringLiteral("UnableToReplayMessages: Replay params are not valid");
    if (!replay.isObject()) {
        return invalid;
    }
    const QJsonObject object = replay.toObject();

    const std::optional<qint64> since = jsonInteger(object.value(QLatin1String("since")));
    if (!since || *since < ElixirMinUnixMs || *since > ElixirMaxUnixMs) {
        return invalid;
    }

    // Upstream: replay_params["limit"] || 25, so an absent, null or false limit is the default.
    const QJsonValue limitValue = object.value(QLatin1String("limit"));
    qint64 limit = ReplayLimitMax;
    if (!limitValue.isUndefined() && !limitValue.isNull()
        && !(limitValue.isBool() && !limitValue.toBool())) {
        const std::optional<qint64> given = jsonInteger(limitValue);
        if (!given) {
            return invalid;
        }
        limit = *given;
    }
    return std::pair<qint64, int>{ *since, int(std::clamp<qint64>(limit, 1, ReplayLimitMax)) };
}

QString replayFailedReason()
{
    return QStringLiteral("UnableToReplayMessages: Realtime was unable to replay messages");
}

QString replayOnPublicChannelReason()
{
    return QStringLiteral("UnableToReplayMessages: Replay is not allowed for public channels");
}

AuthorizationRequest authorizationRequestFor(const QJsonObject &claims, const QByteArray &topic,
                                             const QJsonObject &headers)
{
    AuthorizationRequest request;
    request.topic = topic;
    request.role = claims.value(QLatin1String("role")).toString().toUtf8();
    request.claimsJson = QJsonDocument(claims).toJson(QJsonDocument::Compact);
    const QJsonValue sub = claims.value(QLatin1String("sub"));
    if (sub.isString()) {
        request.sub = sub.toString().toUtf8();
    } else if (sub.isDouble()) {
        request.sub = QByteArray::number(sub.toDouble(), 'g', 17);
    }
    request.headersJson = QJsonDocument(headers).toJson(QJsonDocument::Compact);
    return request;
}

} // namespace rt::cdc
