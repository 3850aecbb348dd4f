#pragma once

#include <QByteArray>
#include <QList>

#include <memory>
#include <optional>

namespace rt::cdc {

// A column of a published table as the change stream describes it, completed from the catalog.
struct ColumnInfo
{
    QByteArray name;
    QByteArray typeName; // pg_type.typname ("int4", "_text", an enum's name...)
    quint32 typeOid = 0;
    bool isPrimaryKey = false; // from pg_index, not from the replica identity flags
    QByteArray sqlType; // format_type(): what a text value is cast to in SQL ("integer", ...)
};

// A table of the change stream: the pgoutput Relation message plus what only the catalog knows
// (primary key, row level security). Immutable once built; a new Relation message or a schema
// change makes a new one.
struct RelationInfo
{
    quint32 oid = 0;
    QByteArray schema;
    QByteArray table;
    char replicaIdentity = 'd'; // 'd' default, 'f' full, 'i' index, 'n' nothing
    QList<ColumnInfo> columns; // in attnum order, as pgoutput sends tuples
    bool rlsEnabled = false;
    bool catalogKnown = false; // primary key and rlsEnabled were read from the catalog

    bool hasPrimaryKey() const
    {
        for (const ColumnInfo &column : columns) {
            if (column.isPrimaryKey) {
                return true;
            }
        }
        return false;
    }
    QByteArray qualifiedName() const; // "schema"."table", quoted
};

using RelationPtr = std::shared_ptr<const RelationInfo>;

enum class ChangeType { Insert, Update, Delete };
const char *changeTypeName(ChangeType type); // "INSERT", "UPDATE", "DELETE"

// One column value of a tuple in PostgreSQL's text output form.
struct TupleValue
{
    enum class Kind : quint8 { Null, UnchangedToast, Text };
    Kind kind = Kind::Null;
    QByteArray text;
};

// One row change of a committed transaction, decoded from the WAL.
struct Change
{
    RelationPtr relation;
    ChangeType type = ChangeType::Insert;
    QByteArray commitTimestamp; // "YYYY-MM-DDTHH:MM:SS.mmmZ"
    QList<TupleValue> newTuple; // INSERT, UPDATE; one per relation column
    QList<TupleValue> oldTuple; // UPDATE/DELETE: the key ('K') or the full old row ('O')
    bool oldIsFullRow = false; // oldTuple came from REPLICA IDENTITY FULL ('O')
};

// A row inserted into realtime.messages: a broadcast from the database (spec §4.6).
struct DatabaseBroadcast
{
    QByteArray id;
    QByteArray topic;
    QByteArray event;
    bool isPrivate = false;
    QByteArray payload; // JSON text, or raw bytes when isBinary
    bool isBinary = false;
    // How many of its batch's changes came before it in the WAL: where it is published among
    // them (one topic's sequence numbers both in commit order).
    qsizetype changesBefore = 0;
};

} // namespace rt::cdc
