#pragma once

// Decoding of one pgoutput message: the bytes that follow the 25-byte XLogData header of a
// CopyData 'w' message on a logical replication connection started with
// `START_REPLICATION SLOT ... LOGICAL ... (proto_version '1', publication_names '...',
// messages 'true')`. Pure and total: any input gives a Message or a DecodeError, nothing is read
// outside the view, and the decoder keeps no state (relation caching belongs to the caller).

#include "server/pgoutput/messages.h"
#include "shared/core/result.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QDateTime>
#include <QString>

#include <optional>

namespace rt::pgoutput {

struct DecodeError
{
    QString message;
    qsizetype offset = 0; // byte offset in the message where decoding stopped
};

// Decodes exactly one message. Rejected: empty input, unknown tags (stream and two-phase
// messages of protocol versions 2+ included), truncated fields, counts that the remaining bytes
// cannot hold, negative lengths, invalid enumerations (replica identity, tuple value kinds,
// update/delete markers) and any byte left over after the message.
rt::Result<Message, DecodeError> decode(QByteArrayView bytes);

// "16/B374D848": the high and low 32 bits in upper-case hex without leading zeros, as
// PostgreSQL's pg_lsn output does.
QString formatLsn(quint64 lsn);

// Parses the pg_lsn text form ("16/B374D848", either case, 1..8 hex digits on each side).
std::optional<quint64> parseLsn(QByteArrayView text);

// Microseconds between 1970-01-01 and 2000-01-01 (PostgreSQL's epoch), UTC.
inline constexpr qint64 PgEpochUnixMicros = 946'684'800'000'000;

// The commit time as a UTC QDateTime (millisecond precision: sub-millisecond digits are
// truncated toward the past).
QDateTime commitDateTime(qint64 pgMicros);

// The commit time in the postgres_changes `commit_timestamp` form: "YYYY-MM-DDTHH:MM:SS.mmmZ",
// UTC, milliseconds truncated toward the past like to_char(..., 'MS'). Years outside 1..9999
// (impossible for a real commit) are written with as many digits as needed and, for years
// before 1 AD, astronomical numbering with a leading '-'. PostgreSQL's timestamp sentinels
// (INT64_MIN / INT64_MAX) give "-infinity" / "infinity".
QByteArray commitTimestampText(qint64 pgMicros);

} // namespace rt::pgoutput
