#pragma once

#include "shared/core/result.h"

#include <QByteArray>
#include <QList>
#include <QMetaType>
#include <QString>

#include <functional>
#include <optional>

struct pg_result; // libpq's PGresult

namespace rt::postgres {

// One error of the database or of the connection to it. A value type.
struct PgError
{
    QByteArray
            sqlState; // five characters from the server (e.g. "23505"); empty for client-side errors
    QString message; // the primary message
    QString detail; // the server's DETAIL, if any
    // True when the connection failed or was closed: the statement's outcome is unknown (it may
    // or may not have committed) and the Connection is unusable until open() again.
    bool connectionLost = false;

    // "message", or "message: detail" when there is a detail.
    QString text() const;

    // The error of a statement skipped because an earlier statement of its segment failed.
    static PgError skipped();
    // An error carried by a result of status PGRES_FATAL_ERROR (or any status with an error).
    static PgError fromResult(const pg_result *result);
};

// The text-format result of one statement, copied out of libpq's PGresult (which is freed right
// after). A value type, cheap to copy (implicitly shared Qt containers). Out-of-range rows and
// columns read as NULL: never a crash on unexpected result shapes.
class QueryResult
{
public:
    QueryResult() = default;
    // Copies everything out of a PGresult of status TUPLES_OK / COMMAND_OK / EMPTY_QUERY.
    static QueryResult fromResult(const pg_result *result);

    int rowCount() const { return m_rows; }
    int columnCount() const { return int(m_columnNames.size()); }
    QByteArray columnName(int column) const;
    // The column's type OID (e.g. 25 = text, 23 = int4); 0 when out of range.
    quint32 columnType(int column) const;
    // The index of the first column with this name, or -1.
    int columnIndex(QByteArrayView name) const;
    bool isNull(int row, int column) const;
    // The value in PostgreSQL's text format; empty for NULL or out of range.
    QByteArray value(int row, int column) const;
    // The rows a INSERT/UPDATE/DELETE/MERGE/SELECT/... affected (PQcmdTuples); -1 when the command
    // does not report a count (e.g. CREATE TABLE).
    qint64 affectedRows() const { return m_affectedRows; }
    // The command tag, e.g. "INSERT 0 1", "SELECT 3", "CREATE TABLE".
    QByteArray commandTag() const { return m_commandTag; }

private:
    bool inRange(int row, int column) const;

    int m_rows = 0;
    QList<QByteArray> m_columnNames;
    QList<quint32> m_columnTypes;
    QList<QByteArray> m_values; // row-major, m_rows * columnCount()
    QList<bool> m_nulls; // same layout
    qint64 m_affectedRows = -1;
    QByteArray m_commandTag;
};

// One statement of a segment: SQL with $1..$n placeholders and their values in PostgreSQL's text
// format (std::nullopt = NULL). Exactly one SQL statement (extended query protocol).
struct Statement
{
    QByteArray sql;
    QList<std::optional<QByteArray>> params;
    // Prepared once per connection under a name of its own, so PostgreSQL parses and plans it
    // once and reuses the plan (a generic plan after a few runs, or at once under
    // plan_cache_mode = force_generic_plan) instead of planning at every run. For statements
    // that run very often with the same text; parameters must then carry their types in the SQL
    // ($1::bigint[]), since a generic plan cannot fold casts of constants.
    bool keepPlan = false;
};

using StatementResult = rt::Result<QueryResult, PgError>;
using StatementCallback = std::function<void(StatementResult)>;

// The outcome of one segment: one entry per statement, in order. After a failed statement the
// rest of the segment is skipped (PgError::skipped()), and the whole segment's implicit
// transaction was rolled back, including the effects of statements that had succeeded.
struct SegmentResult
{
    QList<StatementResult> results;

    // True when every statement succeeded.
    bool ok() const;
    // The first failed statement's error (skipped statements come after it), or nullptr.
    const PgError *firstError() const;
};

using SegmentCallback = std::function<void(SegmentResult)>;

} // namespace rt::postgres

Q_DECLARE_METATYPE(rt::postgres::PgError)
