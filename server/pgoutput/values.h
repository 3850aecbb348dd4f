#pragma once

// JSON typing of column values. pgoutput sends each value in its text output form; upstream
// builds postgres_changes records with realtime.cast(text, type) = to_jsonb(value::type), so
// this reproduces what to_jsonb gives for that text, without a database round trip.
//
// Assumes the walsender session's output settings PostgreSQL uses by default for replication:
// DateStyle ISO, IntervalStyle postgres, bytea_output hex, standard_conforming_strings on.
// Texts that do not have the expected shape are returned unchanged as JSON strings, never
// rejected: a value must always reach the client in some form.

#include <QByteArrayView>
#include <QJsonValue>

namespace rt::pgoutput {

// The to_jsonb() value of `text` cast to the type named typeName (pg_type.typname):
// - int2, int4, int8, float4, float8, numeric: a JSON number (integers that fit in 64 bits stay
//   exact; other values become doubles, so numeric digits beyond double precision and trailing
//   fraction zeros ("1.50" → 1.5) are lost). NaN, Infinity, -Infinity, and numerics too large
//   for a double, stay strings as to_jsonb writes them. oid is a string, as in to_jsonb.
// - bool: true / false for "t" / "f".
// - json, jsonb: the parsed document (object, array or scalar); invalid JSON → the text.
// - bytea: the hex digits without the leading "\x" (the wal2json form upstream delivers).
// - timestamptz: "2024-05-01 10:00:00.123+00" → "2024-05-01T10:00:00.123+00:00" (offsets
//   with seconds and the " BC" suffix are kept); timestamp: the same without offset;
//   "infinity" / "-infinity" unchanged.
// - arrays (typeName starting with '_'): the array literal as a (nested) JSON array, elements
//   converted with the element type, NULL → null, dimension decoration ("[0:1]={...}") dropped.
//   bytea elements keep their "\x" prefix (to_jsonb of bytea[] does). A malformed literal →
//   the whole text as a string.
// - everything else (text, varchar, bpchar, char, name, uuid, date, time, timetz, interval,
//   enums, domains, ranges, geometric types, money, ...): the text as a JSON string.
QJsonValue jsonValue(QByteArrayView typeName, QByteArrayView text);

} // namespace rt::pgoutput
