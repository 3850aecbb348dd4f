#include "server/tenants/sql_values.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QUuid>

namespace rt::tenants::sql {

QString newUuid()
{
    return QUuid::createUuid().toString(QUuid::WithoutBraces);
}

QString nowText()
{
    return QDateTime::currentDateTimeUtc().toString(Qt::ISODate);
}

QDateTime parseTimestamp(const QVariant &value)
{
    if (value.metaType().id() == QMetaType::QDateTime) {
        QDateTime stamp = value.toDateTime();
        stamp.setTimeSpec(Qt::UTC);
        return stamp;
    }
    QDateTime stamp = QDateTime::fromString(value.toString(), Qt::ISODate);
    stamp.setTimeSpec(Qt::UTC);
    return stamp;
}

QJsonObject parseObject(const QVariant &value)
{
    return QJsonDocument::fromJson(value.toString().toUtf8()).object();
}

std::optional<int> optionalInt(const QVariant &value)
{
    if (value.isNull()) {
        return std::nullopt;
    }
    return value.toInt();
}

QString describe(const QSqlError &error)
{
    const QString text = error.text().simplified();
    return text.isEmpty() ? QStringLiteral("unknown database error") : text;
}

QStringList splitStatements(const QString &sql)
{
    QStringList statements;
    QString current;
    bool inSingle = false;
    bool inDollar = false;
    for (qsizetype i = 0; i < sql.size(); ++i) {
        const QChar c = sql.at(i);
        if (!inSingle && !inDollar && c == u'-' && i + 1 < sql.size() && sql.at(i + 1) == u'-') {
            while (i < sql.size() && sql.at(i) != u'\n') {
                ++i;
            }
            current.append(u'\n');
            continue;
        }
        if (!inDollar && c == u'\'') {
            inSingle = !inSingle;
        } else if (!inSingle && c == u'$' && i + 1 < sql.size() && sql.at(i + 1) == u'$') {
            inDollar = !inDollar;
            current.append(c);
            ++i;
            current.append(sql.at(i));
            continue;
        } else if (!inSingle && !inDollar && c == u';') {
            if (!current.trimmed().isEmpty()) {
                statements.append(current.trimmed());
            }
            current.clear();
            continue;
        }
        current.append(c);
    }
    if (!current.trimmed().isEmpty()) {
        statements.append(current.trimmed());
    }
    return statements;
}

} // namespace rt::tenants::sql
