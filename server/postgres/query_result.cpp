#include "server/postgres/query_result.h"

#include <libpq-fe.h>

namespace rt::postgres {

namespace {

QString field(const PGresult *result, int code)
{
    const char *text = PQresultErrorField(result, code);
    return text ? QString::fromUtf8(text) : QString();
}

} // namespace

QString PgError::text() const
{
    if (detail.isEmpty()) {
        return message;
    }
    return message + QLatin1String(": ") + detail;
}

PgError PgError::skipped()
{
    PgError error;
    error.message = QStringLiteral("skipped after an earlier error");
    return error;
}

PgError PgError::fromResult(const pg_result *result)
{
    PgError error;
    if (!result) {
        error.message = QStringLiteral("no result from libpq (out of memory?)");
        return error;
    }
    const char *state = PQresultErrorField(result, PG_DIAG_SQLSTATE);
    error.sqlState = state ? QByteArray(state) : QByteArray();
    error.message = field(result, PG_DIAG_MESSAGE_PRIMARY);
    if (error.message.isEmpty()) {
        // Client-side errors (e.g. a lost connection) carry only the full message.
        error.message = QString::fromUtf8(PQresultErrorMessage(result)).trimmed();
    }
    if (error.message.isEmpty()) {
        error.message = QString::fromUtf8(PQresStatus(PQresultStatus(result)));
    }
    error.detail = field(result, PG_DIAG_MESSAGE_DETAIL);
    return error;
}

QueryResult QueryResult::fromResult(const pg_result *result)
{
    QueryResult out;
    if (!result) {
        return out;
    }
    const int rows = qMax(0, PQntuples(result));
    const int columns = qMax(0, PQnfields(result));
    out.m_rows = rows;
    out.m_columnNames.reserve(columns);
    out.m_columnTypes.reserve(columns);
    for (int column = 0; column < columns; ++column) {
        const char *name = PQfname(result, column);
        out.m_columnNames.append(name ? QByteArray(name) : QByteArray());
        out.m_columnTypes.append(quint32(PQftype(result, column)));
    }
    out.m_values.reserve(qsizetype(rows) * columns);
    out.m_nulls.reserve(qsizetype(rows) * columns);
    for (int row = 0; row < rows; ++row) {
        for (int column = 0; column < columns; ++column) {
            const bool null = PQgetisnull(result, row, column) != 0;
            out.m_nulls.append(null);
            out.m_values.append(null ? QByteArray()
                                     : QByteArray(PQgetvalue(result, row, column),
                                                  qMax(0, PQgetlength(result, row, column))));
        }
    }
    const char *status = PQcmdStatus(const_cast<PGresult *>(result));
    out.m_commandTag = status ? QByteArray(status) : QByteArray();
    const char *tuples = PQcmdTuples(const_cast<PGresult *>(result));
    bool numeric = false;
    const qint64 affected = tuples ? QByteArray(tuples).toLongLong(&numeric) : 0;
    out.m_affectedRows = numeric ? affected : -1;
    return out;
}

bool QueryResult::inRange(int row, int column) const
{
    return row >= 0 && row < m_rows && column >= 0 && column < columnCount();
}

QByteArray QueryResult::columnName(int column) const
{
    return column >= 0 && column < columnCount() ? m_columnNames.at(column) : QByteArray();
}

quint32 QueryResult::columnType(int column) const
{
    return column >= 0 && column < columnCount() ? m_columnTypes.at(column) : 0;
}

int QueryResult::columnIndex(QByteArrayView name) const
{
    for (int column = 0; column < columnCount(); ++column) {
        if (m_columnNames.at(column) == name) {
            return column;
        }
    }
    return -1;
}

bool QueryResult::isNull(int row, int column) const
{
    return !inRange(row, column) || m_nulls.at(qsizetype(row) * columnCount() + column);
}

QByteArray QueryResult::value(int row, int column) const
{
    return inRange(row, column) ? m_values.at(qsizetype(row) * columnCount() + column)
                                : QByteArray();
}

bool SegmentResult::ok() const
{
    return firstError() == nullptr;
}

const PgError *SegmentResult::firstError() const
{
    for (const StatementResult &result : results) {
        if (!result.ok()) {
            return &result.error();
        }
    }
    return nullptr;
}

} // namespace rt::postgres
