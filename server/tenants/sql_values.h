#pragma once

#include <QJsonObject>
#include <QSqlError>
#include <QString>
#include <QStringList>
#include <QVariant>

#include <optional>

// Values as the control plane's SQL reads and writes them, shared by its source files. Pure;
// any thread.
namespace rt::tenants::sql {

QString newUuid();
// Now, as the tables store timestamps: ISO 8601 in UTC, whole seconds.
QString nowText();
// A stored timestamp (QPSQL gives QDateTime, QSQLITE text), in UTC.
QDateTime parseTimestamp(const QVariant &value);
// A stored JSON object ({} when it is not one).
QJsonObject parseObject(const QVariant &value);
std::optional<int> optionalInt(const QVariant &value);
// One line: PostgreSQL's messages carry newlines and tab-indented hints.
QString describe(const QSqlError &error);
// Splits a migration file into statements: at ';' outside quotes, comments and $$ blocks
// (QtSql executes one statement per query).
QStringList splitStatements(const QString &sql);

} // namespace rt::tenants::sql
