// libFuzzer target for server/postgres/query_result.h: what reaches us of a statement's answer
// from PostgreSQL. libpq parses the protocol bytes into a PGresult; QueryResult::fromResult and
// PgError::fromResult copy it out before it is freed, and every reader of rows (cdc, tenant
// databases) goes through QueryResult's accessors. The target builds PGresults of any shape with
// libpq's own constructors (PQmakeEmptyPGresult, PQsetResultAttrs, PQsetvalue): any status,
// column names with any bytes, any type OIDs, binary values, NULLs, partial rows.
//
// Input: status selector, column count (0-15), per column a name (length byte, bytes) and a
// 4-byte type OID, then cells in row-major order, each a length byte (255: NULL) and the bytes;
// a last partial row keeps NULLs in its missing cells. Besides crashes (and reads of freed
// memory: the PGresult is cleared before the QueryResult is read), the target aborts when a
// promise breaks: shape, names (as C strings), types, NULLs and values (binary-safe) equal what
// was stored; out-of-range cells read as NULL and empty, out-of-range columns as no name and
// type 0; columnIndex finds the first column of a name; a result without a command tag has
// affectedRows -1; an error always has a message, and a segment's first error is found.
// libpq has no public setter for command tags or error fields, so those are only seen empty.
#include "server/postgres/query_result.h"

#include <libpq-fe.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <optional>
#include <utility>

namespace {

using rt::postgres::PgError;
using rt::postgres::QueryResult;

void require(bool condition)
{
    if (!condition) {
        std::abort();
    }
}

constexpr ExecStatusType Statuses[] = {
    PGRES_TUPLES_OK,    PGRES_COMMAND_OK,     PGRES_EMPTY_QUERY,  PGRES_FATAL_ERROR,
    PGRES_BAD_RESPONSE, PGRES_NONFATAL_ERROR, PGRES_SINGLE_TUPLE, PGRES_COPY_OUT,
};
constexpr int MaxRows = 512;

// What the input describes, read with bounds checks.
struct Shape
{
    ExecStatusType status = PGRES_TUPLES_OK;
    QList<QByteArray> names; // as given (may hold NUL bytes)
    QList<quint32> types;
    QList<QList<std::optional<QByteArray>>> rows;
};

class Input
{
public:
    Input(const uint8_t *data, size_t size) : m_data(data), m_size(size) { }
    bool atEnd() const { return m_at >= m_size; }
    quint8 byte() { return atEnd() ? 0 : m_data[m_at++]; }
    QByteArray bytes(size_t count)
    {
        const size_t n = std::min(count, m_size - std::min(m_at, m_size));
        QByteArray out(reinterpret_cast<const char *>(m_data + m_at), static_cast<qsizetype>(n));
        m_at += n;
        return out;
    }

private:
    const uint8_t *m_data;
    size_t m_size;
    size_t m_at = 0;
};

Shape readShape(Input &in)
{
    Shape shape;
    shape.status = Statuses[in.byte() % std::size(Statuses)];
    const int columns = in.byte() % 16;
    for (int c = 0; c < columns; ++c) {
        shape.names.append(in.bytes(in.byte() % 32));
        quint32 type = 0;
        for (int i = 0; i < 4; ++i) {
            type = (type << 8) | in.byte();
        }
        shape.types.append(type);
    }
    while (columns > 0 && !in.atEnd() && shape.rows.size() < MaxRows) {
        QList<std::optional<QByteArray>> row(columns);
        for (int c = 0; c < columns && !in.atEnd(); ++c) {
            const quint8 length = in.byte();
            if (length != 0xFF) {
                row[c] = in.bytes(length);
            }
        }
        shape.rows.append(row);
    }
    return shape;
}

PGresult *build(const Shape &shape)
{
    PGresult *result = PQmakeEmptyPGresult(nullptr, shape.status);
    require(result != nullptr);
    const qsizetype columns = shape.names.size();
    if (columns > 0) {
        QList<QByteArray> names = shape.names; // NUL-terminated copies libpq may read
        QList<PGresAttDesc> descs(columns);
        for (qsizetype c = 0; c < columns; ++c) {
            descs[c] = PGresAttDesc{ names[c].data(), 0, 0, 0, shape.types[c], -1, -1 };
        }
        require(PQsetResultAttrs(result, int(columns), descs.data()) != 0);
    }
    for (qsizetype r = 0; r < shape.rows.size(); ++r) {
        for (qsizetype c = 0; c < columns; ++c) {
            std::optional<QByteArray> cell = shape.rows[r][c];
            char *value = cell ? cell->data() : nullptr;
            const int length = cell ? int(cell->size()) : 0;
            require(PQsetvalue(result, int(r), int(c), value, length) != 0);
        }
    }
    return result;
}

// The name libpq keeps: a C string, so cut at the first NUL.
QByteArray storedName(const QByteArray &name)
{
    const qsizetype nul = name.indexOf('\0');
    return nul < 0 ? name : name.left(nul);
}

void checkCopy(const QueryResult &copy, const Shape &shape)
{
    const int columns = int(shape.names.size());
    require(copy.rowCount() == shape.rows.size() && copy.columnCount() == columns);
    for (int c = 0; c < columns; ++c) {
        const QByteArray name = storedName(shape.names[c]);
        require(copy.columnName(c) == name && copy.columnType(c) == shape.types[c]);
        int first = 0;
        while (storedName(shape.names[first]) != name) {
            ++first;
        }
        require(copy.columnIndex(name) == first);
    }
    for (int r = 0; r < copy.rowCount(); ++r) {
        for (int c = 0; c < columns; ++c) {
            const std::optional<QByteArray> &cell = shape.rows[r][c];
            require(copy.isNull(r, c) == !cell);
            require(copy.value(r, c) == cell.value_or(QByteArray()));
        }
    }
    for (const int r : { -1, copy.rowCount(), INT_MAX, INT_MIN }) {
        require(copy.isNull(r, 0) && copy.value(r, 0).isEmpty());
    }
    for (const int c : { -1, columns, INT_MAX, INT_MIN }) {
        require(copy.isNull(0, c) && copy.value(0, c).isEmpty());
        require(copy.columnName(c).isEmpty() && copy.columnType(c) == 0);
    }
    require(copy.commandTag().isEmpty() && copy.affectedRows() == -1);
}

void checkErrors(const PGresult *result)
{
    const PgError error = PgError::fromResult(result);
    require(!error.message.isEmpty() && !error.text().isEmpty() && !error.connectionLost);
    require(!PgError::fromResult(nullptr).message.isEmpty());
    rt::postgres::SegmentResult segment;
    segment.results = { rt::postgres::StatementResult(QueryResult()),
                        rt::postgres::StatementResult(error),
                        rt::postgres::StatementResult(PgError::skipped()) };
    require(!segment.ok() && segment.firstError() == &std::as_const(segment.results)[1].error());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Input in(data, size);
    const Shape shape = readShape(in);
    PGresult *result = build(shape);
    checkErrors(result);
    const QueryResult copy = QueryResult::fromResult(result);
    PQclear(result); // everything below reads the copy only
    checkCopy(copy, shape);
    const QueryResult empty = QueryResult::fromResult(nullptr);
    require(empty.rowCount() == 0 && empty.columnCount() == 0 && empty.isNull(0, 0));
    return 0;
}
