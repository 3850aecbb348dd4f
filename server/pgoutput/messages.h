#pragma once

// Value types of the pgoutput logical replication messages (protocol version 1, non-streaming:
// no xid prefixes, no stream/2PC messages). Layouts: PostgreSQL 15 docs, "Logical Replication
// Message Formats". Every field holds exactly what the server sent; names stay raw bytes because
// PostgreSQL identifiers are in the database encoding, not necessarily UTF-8.

#include <QByteArray>
#include <QList>
#include <QtGlobal>

#include <optional>
#include <variant>

namespace rt::pgoutput {

// 'B': a transaction starts. commitTime is microseconds since 2000-01-01 00:00:00 UTC.
struct Begin
{
    quint64 finalLsn = 0;
    qint64 commitTime = 0;
    quint32 xid = 0;

    bool operator==(const Begin &) const = default;
};

// 'C': the transaction of the preceding Begin committed. flags is unused by PostgreSQL 15 (0).
struct Commit
{
    quint8 flags = 0;
    quint64 commitLsn = 0;
    quint64 endLsn = 0;
    qint64 commitTime = 0;

    bool operator==(const Commit &) const = default;
};

// 'O': the transaction was replicated from another origin (may appear several times).
struct Origin
{
    quint64 commitLsn = 0;
    QByteArray name;

    bool operator==(const Origin &) const = default;
};

struct Column
{
    bool isKey = false; // flags & 1: part of the replica identity key
    QByteArray name;
    quint32 typeOid = 0;
    qint32 typmod = -1;

    bool operator==(const Column &) const = default;
};

// 'R': describes a relation before the first change of it in a session (and again whenever its
// definition changed). nspname is empty for pg_catalog, as the server sends it.
struct Relation
{
    quint32 oid = 0;
    QByteArray nspname;
    QByteArray relname;
    char replicaIdentity = 'd'; // relreplident: 'd' default, 'n' nothing, 'f' full, 'i' index
    QList<Column> columns;

    bool operator==(const Relation &) const = default;
};

// 'Y': describes a non-built-in type (enum, domain, composite, extension type) used by a column
// before the first change that carries it. nspname is empty for pg_catalog.
struct Type
{
    quint32 oid = 0;
    QByteArray nspname;
    QByteArray name;

    bool operator==(const Type &) const = default;
};

struct Value
{
    enum class Kind : char {
        Null = 'n',
        UnchangedToast = 'u', // a TOASTed value the UPDATE did not touch: not sent
        Text = 't',
        Binary = 'b', // only with the 'binary' publication option, which we never request
    };
    Kind kind = Kind::Null;
    QByteArray bytes; // empty for Null and UnchangedToast

    bool operator==(const Value &) const = default;
};

// One value per column of the relation, in attribute order (dropped columns excluded).
struct TupleData
{
    QList<Value> values;

    bool operator==(const TupleData &) const = default;
};

struct Insert
{
    quint32 relOid = 0;
    TupleData newTuple;

    bool operator==(const Insert &) const = default;
};

// 'U': key is set ('K') when the replica identity key changed (identity default/index), old is
// set ('O') with REPLICA IDENTITY FULL; neither when the key did not change. Never both.
struct Update
{
    quint32 relOid = 0;
    std::optional<TupleData> key;
    std::optional<TupleData> old;
    TupleData newTuple;

    bool operator==(const Update &) const = default;
};

// 'D': exactly one of key ('K', identity columns only, others null) and old ('O', identity full).
struct Delete
{
    quint32 relOid = 0;
    std::optional<TupleData> key;
    std::optional<TupleData> old;

    bool operator==(const Delete &) const = default;
};

// 'T': the listed relations were truncated together.
struct Truncate
{
    enum Option : quint8 { Cascade = 1, RestartIdentity = 2 };
    quint8 options = 0;
    QList<quint32> relOids;

    bool operator==(const Truncate &) const = default;
};

// 'M': pg_logical_emit_message(transactional, prefix, content), with 'messages' 'true'.
struct LogicalMessage
{
    bool transactional = false;
    quint64 lsn = 0;
    QByteArray prefix;
    QByteArray content;

    bool operator==(const LogicalMessage &) const = default;
};

using Message = std::variant<Begin, Commit, Origin, Relation, Type, Insert, Update, Delete,
                             Truncate, LogicalMessage>;

} // namespace rt::pgoutput
