#pragma once

#include <QList>
#include <QString>
#include <QStringView>

#include <optional>

// PostgreSQL array literals (`{a,b,"c,d",NULL}`) as array_in reads them: the stored form of an
// `in` filter (spec/server-protocol.md §6.2) and the text form of array columns. Pure; any thread.
namespace rt::subscriptions {

struct PgArray
{
    // Every element in storage order (multi-dimensional arrays flattened); nullopt = NULL.
    QList<std::optional<QString>> elements;
    // Elements of the first dimension (what jsonb_array_length of the cast array counts).
    qsizetype topLevelCount = 0;
};

// nullopt when array_in would reject the text ("malformed array literal"): missing braces,
// empty unquoted elements, junk after a quoted element or after the closing brace, ragged
// sub-arrays. An optional dimension decoration (`[1:2]={...}`) is accepted and ignored.
std::optional<PgArray> parsePgArray(QStringView literal, QChar delimiter = u',');

} // namespace rt::subscriptions
