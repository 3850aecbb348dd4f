#pragma once

#include <QByteArrayView>

#include <optional>

// Values of the column types postgres_changes filters compare, read and compared as PostgreSQL
// does after casting the filter's text to the column's type (upstream's check_equality_op):
// integers, floats, numeric, bool, uuid, dates and times, bpchar, citext, json(b), text, and
// arrays of them. Internal to server/subscriptions (the matcher); pure, any thread.
namespace rt::subscriptions::pg {

enum class TypeClass {
    Int2,
    Int4,
    Int8,
    Oid,
    Float4,
    Float8,
    Numeric,
    Bool,
    Uuid,
    Date,
    Timestamp,
    TimestampTz,
    Time,
    Bpchar,
    Citext,
    Jsonb,
    Json,
    Text,
};

struct TypeInfo
{
    TypeClass element = TypeClass::Text;
    bool isArray = false;
};

// A column type by its name (as pgoutput reports it: "int4", "_text", "timestamptz", ...).
TypeInfo classify(QByteArrayView name);

// boolin: true/false, yes/no, on/off, 1/0 and their prefixes; nullopt if it is none.
std::optional<bool> parseBool(QByteArrayView text);

// Compares two texts as values of `type`: nullopt when a side does not cast to it, or the type
// has no ordering (json; jsonb outside equality). With `equalityOnly`, any non-zero value just
// means "different".
std::optional<int> compareTyped(const TypeInfo &type, QByteArrayView a, QByteArrayView b,
                                bool equalityOnly);

} // namespace rt::subscriptions::pg
