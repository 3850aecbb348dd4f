#pragma once

#include "shared/core/result.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QString>

#include <optional>
#include <variant>

// The CopyData messages of PostgreSQL's streaming replication protocol (PostgreSQL 15 docs,
// "Streaming Replication Protocol", START_REPLICATION): what the walsender sends inside COPY BOTH
// ('w' XLogData, 'k' primary keepalive) and what we answer ('r' standby status update). Pure
// functions over bytes; every integer on the wire is big-endian. The bytes come from a tenant's
// database server and are not trusted: parsing never reads out of bounds and answers malformed
// input with an error value.
namespace rt::replication {

// An LSN (WAL position) is a 64-bit byte offset; PostgreSQL writes it as two 32-bit hex halves,
// "16/B374D848". 0 is InvalidXLogRecPtr ("0/0").
using Lsn = quint64;

// 'w': WAL data. For logical replication the walsender sets walStart and walEnd to the LSN the
// output plugin attributed to the message (a change's record, a commit's end_lsn; 0 for pgoutput's
// 'R' relation messages). payload (pgoutput bytes) points into the parsed buffer: it is valid only
// as long as that buffer is.
struct XLogData
{
    Lsn walStart = 0;
    Lsn walEnd = 0;
    qint64 serverTimeMicros = 0; // µs since 2000-01-01 00:00 UTC
    QByteArrayView payload;
};

// 'k': the walsender's keepalive. walEnd is the position it has sent up to; replyRequested asks
// for an immediate standby status update (otherwise it disconnects after wal_sender_timeout).
struct PrimaryKeepalive
{
    Lsn walEnd = 0;
    qint64 serverTimeMicros = 0;
    bool replyRequested = false;
};

using CopyDataMessage = std::variant<XLogData, PrimaryKeepalive>;

struct CopyDataError
{
    enum class Code {
        Empty, // a CopyData message without even a type byte
        Truncated, // shorter than its type's fixed header
        UnknownType, // a type byte other than 'w' and 'k'
    };
    Code code = Code::Empty;
    QString message; // one line for logs: what was wrong, never the payload bytes
};

// Header sizes: type byte + fields; XLogData's payload starts at offset 25.
inline constexpr qsizetype XLogDataHeaderSize = 1 + 8 + 8 + 8;
inline constexpr qsizetype KeepaliveSize = 1 + 8 + 8 + 1;
inline constexpr qsizetype StandbyStatusUpdateSize = 1 + 8 + 8 + 8 + 8 + 1;

// Parses one CopyData message body (what PQgetCopyData returns). A keepalive longer than 18 bytes
// is accepted and the extra bytes ignored, so that a later server adding fields does not break
// the stream; a shorter one is Truncated.
Result<CopyDataMessage, CopyDataError> parseCopyData(QByteArrayView bytes);

// 'r': the standby status update, always StandbyStatusUpdateSize bytes. For logical replication
// the flush position is what the server keeps as the slot's confirmed_flush_lsn: everything
// committed before it is never sent again.
struct StandbyStatusUpdate
{
    Lsn writeLsn = 0;
    Lsn flushLsn = 0;
    Lsn applyLsn = 0;
    qint64 clockMicros = 0; // µs since 2000-01-01 00:00 UTC (postgresEpochMicros)
    bool replyRequested = false; // ask the server to answer with a keepalive at once
};

QByteArray buildStandbyStatusUpdate(const StandbyStatusUpdate &update);

// The current wall clock as PostgreSQL's protocol counts it: µs since 2000-01-01 00:00 UTC.
qint64 postgresEpochMicros();
// Unix epoch milliseconds converted to that count (for tests and fixed clocks).
qint64 postgresEpochMicrosFromUnixMs(qint64 unixMs);

// "X/Y" with uppercase hex halves, no leading zeros, as PostgreSQL prints pg_lsn.
QByteArray formatLsn(Lsn lsn);
// Parses "X/Y" (1..8 hex digits each, either case, nothing else); std::nullopt otherwise.
std::optional<Lsn> parseLsn(QByteArrayView text);

} // namespace rt::replication
