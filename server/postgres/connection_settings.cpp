#include "server/postgres/connection_settings.h"

#include "server/postgres/sql_text.h"

#include <QFile>
#include <QJsonValue>

namespace rt::postgres {

namespace {

// libpq conninfo values are single-quoted; backslash and quote are escaped with a backslash.
void appendPair(QByteArray &out, const char *key, const QByteArray &value)
{
    if (!out.isEmpty()) {
        out.append(' ');
    }
    out.append(key).append('=').append(quoteConninfoValue(value));
}

} // namespace

QByteArray ConnectionSettings::conninfo() const
{
    QByteArray out;
    appendPair(out, "host", host.toUtf8());
    appendPair(out, "port", QByteArray::number(port));
    appendPair(out, "dbname", database.toUtf8());
    appendPair(out, "user", user.toUtf8());
    if (!password.isEmpty()) {
        appendPair(out, "password", password);
    }
    appendPair(out, "sslmode", sslMode.toUtf8());
    if (!sslRootCert.isEmpty()) {
        appendPair(out, "sslrootcert", QFile::encodeName(sslRootCert));
    }
    appendPair(out, "application_name", applicationName.toUtf8());
    appendPair(out, "connect_timeout", QByteArray::number(connectTimeoutSeconds));
    if (replication) {
        appendPair(out, "replication", "database");
    }
    return out;
}

QString ConnectionSettings::describe() const
{
    return host + QLatin1Char(':') + QString::number(port) + QLatin1Char('/') + database;
}

std::optional<ConnectionSettings> settingsFromExtension(const QJsonObject &settings)
{
    const auto text = [&settings](const char *key) -> std::optional<QString> {
        const QJsonValue value = settings.value(QLatin1String(key));
        if (value.isString() && !value.toString().isEmpty()) {
            return value.toString();
        }
        if (value.isDouble()) {
            return QString::number(value.toDouble(), 'f', 0);
        }
        return std::nullopt;
    };
    const auto host = text("db_host");
    const auto port = text("db_port");
    const auto name = text("db_name");
    const auto user = text("db_user");
    if (!host || !port || !name || !user) {
        return std::nullopt;
    }
    bool numeric = false;
    const int portNumber = port->toInt(&numeric);
    if (!numeric || portNumber < 1 || portNumber > 65535) {
        return std::nullopt;
    }
    ConnectionSettings result;
    result.host = *host;
    result.port = portNumber;
    result.database = *name;
    result.user = *user;
    result.password = settings.value(QLatin1String("db_password")).toString().toUtf8();
    const QJsonValue ssl = settings.value(QLatin1String("ssl_enforced"));
    const bool sslEnforced = ssl.isBool()
            ? ssl.toBool()
            : ssl.toString().compare(QLatin1String("true"), Qt::CaseInsensitive) == 0;
    // Enforced TLS means a verified server: its certificate must chain to a trusted CA and name
    // db_host (libpq's verify-full), else anyone on the path could pose as the database.
    result.sslMode = sslEnforced ? QStringLiteral("verify-full") : QStringLiteral("prefer");
    return result;
}

} // namespace rt::postgres
