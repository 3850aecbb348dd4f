#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QList>

// Pure helpers for building SQL and libpq conninfo text from untrusted values. They never touch
// a connection, so they can be used on any thread.
namespace rt::postgres {

// An SQL identifier in double quotes, embedded double quotes doubled: `a"b` -> `"a""b"`. The
// result is always one identifier, whatever the input holds (case is preserved, keywords are
// harmless).
QByteArray quoteIdentifier(QByteArrayView name);

// An SQL string literal. Quotes are doubled; when the value holds a backslash the literal is
// written in the escape-string form E'...' with backslashes doubled, so it means the same text
// whatever standard_conforming_strings is set to. Embedded NUL bytes are kept: a statement holding
// one is refused by Connection (PostgreSQL text cannot carry NUL), never truncated.
QByteArray quoteLiteral(QByteArrayView value);

// A PostgreSQL array literal of text elements, for a text[] parameter: {"a","b\"c"} (every
// element quoted, quotes and backslashes escaped).
QByteArray textArrayLiteral(const QList<QByteArray> &elements);

// A libpq conninfo value: single-quoted, with backslash and single quote escaped by a backslash.
QByteArray quoteConninfoValue(QByteArrayView value);

} // namespace rt::postgres
