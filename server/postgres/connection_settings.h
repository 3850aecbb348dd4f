#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QString>

#include <optional>

namespace rt::postgres {

// Where and how to reach one PostgreSQL database (a tenant database or the control plane).
// A value type; copied freely between threads.
struct ConnectionSettings
{
    QString host;
    int port = 5432;
    QString database;
    QString user;
    QByteArray password;
    // libpq sslmode: "disable", "prefer" (default: upstream's ssl_enforced=false), "require"...
    QString sslMode = QStringLiteral("prefer");
    // The CA file verify-ca and verify-full check the server's certificate against.
    QString sslRootCert;
    QString applicationName = QStringLiteral("qtrealtime");
    int connectTimeoutSeconds = 10;
    // "database": a walsender connection for logical replication that also accepts simple SQL.
    bool replication = false;

    // The libpq conninfo string ("key='value' ..."), values quoted and escaped as libpq requires.
    QByteArray conninfo() const;
    // host:port/database, for logs and error texts (never the password).
    QString describe() const;
    bool operator==(const ConnectionSettings &) const = default;
};

// The settings of a tenant's `postgres_cdc_rls` extension (decrypted), as upstream stores them:
// db_host, db_port (string or number), db_name, db_user, db_password, ssl_enforced. std::nullopt
// when a required key is missing or the port is not a number in 1..65535.
std::optional<ConnectionSettings> settingsFromExtension(const QJsonObject &settings);

} // namespace rt::postgres
