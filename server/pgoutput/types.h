#pragma once

// Names of PostgreSQL's built-in types by OID, so that columns of built-in types get their
// pg_type.typname (the `type` of postgres_changes `columns`, e.g. "int4", "_text") without a
// catalog query. pgoutput sends a 'Y' Type message only for types that are not built in.

#include <QByteArray>
#include <QtGlobal>

namespace rt::pgoutput {

// pg_type.typname of a type whose OID was hand-assigned in PostgreSQL's pg_type.dat (OIDs below
// 10000: base, array, range, multirange, pseudo and the few bootstrap catalog row types). Those
// OIDs are stable across releases. OIDs 10000..16383 (information_schema types, array types of
// catalog rows) are assigned by initdb and vary, and OIDs from 16384 on belong to user objects:
// both give an empty array, and the caller uses the name from the 'Y' message (or the catalog).
QByteArray builtinTypeName(quint32 oid);

} // namespace rt::pgoutput
