#pragma once

#include "server/subscriptions/filter.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringView>

#include <optional>
#include <type_traits>

// Evaluation of a subscription's filters against one row of a change, replicating
// realtime.is_visible_through_filters / realtime.check_equality_op (spec/server-protocol.md
// §6.5 step 5) without a database round trip. Pure functions, callable from any thread; runs for
// every change × subscription, so it allocates only for regex/pattern work.
//
// Semantics kept from the SQL functions:
//  - every filter's column must be present in the row, else the row is not visible;
//  - the column text is cast to the column type and so is the filter value (for `in`, to an
//    array of it); a comparison involving NULL is NULL and NULL is "not visible", also after
//    `not.` (NOT NULL is NULL) — except `is` and `isdistinct`, which never yield NULL;
//  - `in` is `= ANY(array)`: true if an element equals; NULL if none does but one is NULL.
// Typed comparison by column type:
//  - int2/int4/int8/oid: 64-bit integers; float4 (rounded to float)/float8 with PostgreSQL's
//    NaN ordering (NaN equals NaN and sorts above everything); numeric exactly (decimal digits
//    and exponent, NaN and ±Infinity);
//  - bool: PostgreSQL's boolean input spellings (t, true, yes, on, 1, unique prefixes…), false < true;
//  - uuid: 16 bytes (case and hyphens do not matter);
//  - date, timestamp, timestamptz: parsed instants ("2024-01-01", "2024-01-01 10:00:00.5",
//    "2024-01-01T10:00:00+02:00", "infinity"); timestamptz values without an offset are taken as
//    UTC (upstream uses the session TimeZone, UTC on Supabase); timestamp ignores an offset, as
//    PostgreSQL does; time: time of day;
//  - bpchar: trailing spaces are insignificant; citext: case-insensitive;
//  - arrays (type name starting with '_'): element-wise by the element type;
//  - jsonb: eq/neq/isdistinct by JSON value (objects key-order insensitive), no ordering;
//  - every other type (text, varchar, name, enums, …): its text, compared bytewise in UTF-8,
//    which is PostgreSQL's "C" collation. A column with another collation orders lt/lte/gt/gte
//    differently in PostgreSQL (equality is the same for deterministic collations).
//  - like/ilike: SQL patterns (% _ and backslash escape); ilike folds case with Unicode simple
//    case folding (PostgreSQL uses the database locale);
//  - match/imatch: RE2 (RegexPattern) in place of PostgreSQL's POSIX ARE, in linear time; the
//    constructs where the two differ are refused when subscribing, and a refused pattern is
//    not visible here;
// A value that does not cast to the column type (upstream rejects those when subscribing) and an
// `is true/false/unknown` on a non-boolean column evaluate as not visible.
namespace rt::subscriptions {

struct ColumnValue
{
    // pg_type.typname, e.g. "int4", "text", "_int4", "timestamptz". Common SQL spellings
    // ("integer", "character varying", "timestamp with time zone", …) are accepted too.
    QByteArray typeName;
    // PostgreSQL text output form (e.g. "t", "2024-05-01 12:00:00+00", "{1,2}"); nullopt = NULL.
    std::optional<QByteArray> text;
};

// A non-owning view of one row: looks a column up by name. Wraps any callable
// `const ColumnValue *(QStringView name)` (which must outlive the view) without allocating.
class RowView
{
public:
    template <typename Lookup,
              typename = std::enable_if_t<!std::is_same_v<std::decay_t<Lookup>, RowView>>>
    RowView(const Lookup &lookup) // implicit on purpose, views are passed inline
        : m_context(&lookup),
          m_call([](const void *context, QStringView name) -> const ColumnValue * {
              return (*static_cast<const Lookup *>(context))(name);
          })
    { }

    // nullptr when the row has no such column.
    const ColumnValue *find(QStringView name) const { return m_call(m_context, name); }

private:
    const void *m_context;
    const ColumnValue *(*m_call)(const void *, QStringView);
};

// A ready-made row (tests, small callers): linear lookup by name.
struct NamedColumn
{
    QString name;
    ColumnValue value;
};

class ColumnList
{
public:
    explicit ColumnList(const QList<NamedColumn> &columns) : m_columns(&columns) { }
    const ColumnValue *operator()(QStringView name) const
    {
        for (const NamedColumn &column : *m_columns) {
            if (column.name == name) {
                return &column.value;
            }
        }
        return nullptr;
    }

private:
    const QList<NamedColumn> *m_columns;
};

// realtime.is_visible_through_filters: true for an empty filter list.
bool visibleThroughFilters(const QList<Filter> &filters, RowView row);

// realtime.check_equality_op(op, type, column, filter value, negate) with SQL's three-valued
// result: nullopt = NULL (which is_visible_through_filters counts as not visible).
std::optional<bool> checkFilter(const Filter &filter, const ColumnValue &column);

} // namespace rt::subscriptions
