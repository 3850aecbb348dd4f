#include "tests/support/postgres/pg_env.h"

#include <QFile>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QSqlRecord>
#include <QUuid>

#include <atomic>

namespace rt::testsupport {

namespace {

std::atomic<int> sessionCounter{ 0 };

// Undoes the quoting of bash's printf %q and of plain '...' / "..." values.
QString unquote(const QString &raw)
{
    const QString value = raw.trimmed();
    if (value.size() >= 2 && value.startsWith(u'\'') && value.endsWith(u'\'')) {
        return value.mid(1, value.size() - 2);
    }
    if (value.size() >= 2 && value.startsWith(u'"') && value.endsWith(u'"')) {
        return value.mid(1, value.size() - 2);
    }
    QString out;
    out.reserve(value.size());
    for (qsizetype i = 0; i < value.size(); ++i) {
        if (value.at(i) == u'\\' && i + 1 < value.size()) {
            ++i;
        }
        out.append(value.at(i));
    }
    return out;
}

QString oneLine(const QSqlError &error)
{
    QString text = error.text().simplified();
    return text.isEmpty() ? QStringLiteral("unknown database error") : text;
}

} // namespace

QHash<QString, QString> PgEnv::parseEnvFile(const QString &path, bool *ok)
{
    QHash<QString, QString> values;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly | QIODevice::Text)) {
        if (ok) {
            *ok = false;
        }
        return values;
    }
    const QStringList lines = QString::fromUtf8(file.readAll()).split(u'\n');
    for (QString line : lines) {
        line = line.trimmed();
        if (line.isEmpty() || line.startsWith(u'#')) {
            continue;
        }
        if (line.startsWith(QLatin1String("export "))) {
            line = line.mid(7).trimmed();
        }
        const qsizetype equals = line.indexOf(u'=');
        if (equals <= 0) {
            continue;
        }
        values.insert(line.left(equals).trimmed(), unquote(line.mid(equals + 1)));
    }
    if (ok) {
        *ok = true;
    }
    return values;
}

std::optional<PgEnv> PgEnv::fromEnvironment(QString *error)
{
    const QString path = qEnvironmentVariable(kPgEnvVariable);
    if (path.isEmpty()) {
        if (error) {
            *error = QStringLiteral("%1 is not set: run this suite through ctest (fixture "
                                    "\"postgres\"), or start a cluster with "
                                    "tests/support/postgres/pg-cluster.sh start <dir> and set "
                                    "%1=<dir>/pg.env")
                             .arg(QLatin1String(kPgEnvVariable));
        }
        return std::nullopt;
    }
    return fromFile(path, error);
}

std::optional<PgEnv> PgEnv::fromFile(const QString &path, QString *error)
{
    bool ok = false;
    const QHash<QString, QString> values = parseEnvFile(path, &ok);
    if (!ok) {
        if (error) {
            *error = QStringLiteral("cannot read the PostgreSQL env file %1 (%2): did the "
                                    "fixture test pg-start pass?")
                             .arg(path, QLatin1String(kPgEnvVariable));
        }
        return std::nullopt;
    }
    const QStringList required{ QStringLiteral("RT_PG_HOST"),
                                QStringLiteral("RT_PG_PORT"),
                                QStringLiteral("RT_PG_USER"),
                                QStringLiteral("RT_PG_PASSWORD"),
                                QStringLiteral("RT_PG_CONTROL_DB"),
                                QStringLiteral("RT_PG_TENANT_DB"),
                                QStringLiteral("PGUSER") };
    QStringList missing;
    for (const QString &key : required) {
        if (values.value(key).isEmpty()) {
            missing.append(key);
        }
    }
    bool portOk = false;
    const int port = values.value(QStringLiteral("RT_PG_PORT")).toInt(&portOk);
    if (!missing.isEmpty() || !portOk || port <= 0 || port > 65535) {
        if (error) {
            *error = QStringLiteral("the PostgreSQL env file %1 is incomplete (missing or bad: %2)")
                             .arg(path,
                                  missing.isEmpty() ? QStringLiteral("RT_PG_PORT")
                                                    : missing.join(QStringLiteral(", ")));
        }
        return std::nullopt;
    }
    PgEnv env;
    env.host = values.value(QStringLiteral("RT_PG_HOST"));
    env.port = port;
    env.superUser = values.value(QStringLiteral("PGUSER"));
    env.superPassword = values.value(QStringLiteral("PGPASSWORD"));
    env.user = values.value(QStringLiteral("RT_PG_USER"));
    env.password = values.value(QStringLiteral("RT_PG_PASSWORD"));
    env.controlDatabase = values.value(QStringLiteral("RT_PG_CONTROL_DB"));
    env.tenantDatabase = values.value(QStringLiteral("RT_PG_TENANT_DB"));
    env.envFile = path;
    return env;
}

PgSession::PgSession(const PgEnv &env, const QString &database, Role role)
    : m_name(QStringLiteral("rt-test-pg-%1").arg(++sessionCounter))
{
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QPSQL"), m_name);
    if (!db.isValid()) {
        m_lastError = QStringLiteral("the Qt SQL driver QPSQL is not available "
                                     "(Debian package libqt6sql6-psql)");
        return;
    }
    db.setHostName(env.host);
    db.setPort(env.port);
    db.setDatabaseName(database);
    db.setUserName(role == Role::Super ? env.superUser : env.user);
    db.setPassword(role == Role::Super ? env.superPassword : env.password);
    db.setConnectOptions(QStringLiteral("connect_timeout=10;application_name=rt-test"));
    m_open = db.open();
    if (!m_open) {
        m_lastError = QStringLiteral("cannot connect to %1@%2:%3/%4: %5")
                              .arg(db.userName(), env.host)
                              .arg(env.port)
                              .arg(database, oneLine(db.lastError()));
    }
}

PgSession::~PgSession()
{
    {
        QSqlDatabase db = QSqlDatabase::database(m_name, false);
        db.close();
    }
    QSqlDatabase::removeDatabase(m_name);
}

bool PgSession::exec(const QString &sql, const QVariantList &binds)
{
    return rows(sql, binds).has_value();
}

std::optional<QList<QVariantList>> PgSession::rows(const QString &sql, const QVariantList &binds)
{
    if (!m_open) {
        return std::nullopt;
    }
    QSqlQuery query(QSqlDatabase::database(m_name, false));
    query.setForwardOnly(true);
    bool ok = false;
    if (binds.isEmpty()) {
        ok = query.exec(sql);
    } else {
        ok = query.prepare(sql);
        for (const QVariant &bind : binds) {
            query.addBindValue(bind);
        }
        ok = ok && query.exec();
    }
    if (!ok) {
        m_lastError = oneLine(query.lastError());
        return std::nullopt;
    }
    m_lastError.clear();
    QList<QVariantList> result;
    while (query.next()) {
        const int columns = query.record().count();
        QVariantList row;
        row.reserve(columns);
        for (int i = 0; i < columns; ++i) {
            row.append(query.value(i));
        }
        result.append(row);
    }
    return result;
}

QStringList PgSession::column(const QString &sql, const QVariantList &binds)
{
    const std::optional<QList<QVariantList>> result = rows(sql, binds);
    if (!result) {
        return { QStringLiteral("<error: %1>")
                         .arg(m_open ? m_lastError
                                     : QStringLiteral("not connected: ") + m_lastError) };
    }
    QStringList values;
    for (const QVariantList &row : *result) {
        const QVariant value = row.value(0);
        values.append(value.isNull() ? QStringLiteral("<null>") : value.toString());
    }
    return values;
}

QVariant PgSession::scalar(const QString &sql, const QVariantList &binds)
{
    const std::optional<QList<QVariantList>> result = rows(sql, binds);
    if (!result || result->isEmpty()) {
        return {};
    }
    return result->constFirst().value(0);
}

ScratchDatabase::ScratchDatabase(const PgEnv &env, const QString &prefix)
    : m_env(env),
      m_name(prefix + u'_' + QUuid::createUuid().toString(QUuid::Id128).left(16).toLower())
{
    PgSession super(m_env, QStringLiteral("postgres"));
    if (!super.isOpen()) {
        m_error = super.lastError();
        return;
    }
    // FILE_COPY: with fsync off it is about twice as fast as PostgreSQL 15's WAL_LOG default.
    m_valid = super.exec(QStringLiteral("CREATE DATABASE %1 OWNER %2 STRATEGY FILE_COPY")
                                 .arg(m_name, m_env.user));
    if (!m_valid) {
        m_error = QStringLiteral("cannot create database %1: %2").arg(m_name, super.lastError());
    }
}

ScratchDatabase::~ScratchDatabase()
{
    if (!m_valid) {
        return;
    }
    PgSession super(m_env, QStringLiteral("postgres"));
    if (!super.exec(QStringLiteral("DROP DATABASE IF EXISTS %1 WITH (FORCE)").arg(m_name))) {
        qWarning("cannot drop scratch database %s: %s", qPrintable(m_name),
                 qPrintable(super.lastError()));
    }
}

} // namespace rt::testsupport
