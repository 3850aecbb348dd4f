// server/postgres text helpers: quoteIdentifier/quoteLiteral/quoteConninfoValue, the conninfo
// of ConnectionSettings (quotes, backslashes), settingsFromExtension, QueryResult/PgError value
// behaviour, and the migration file list (migrationsFromDirectory, tenantMigrations()).
#include "server/postgres/connection_settings.h"
#include "server/postgres/migrations.h"
#include "server/postgres/query_result.h"
#include "server/postgres/sql_text.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

using rt::postgres::ConnectionSettings;
using rt::postgres::Migration;
using rt::postgres::PgError;
using rt::postgres::QueryResult;
using rt::postgres::SegmentResult;

namespace {

QJsonObject object(QByteArrayView json)
{
    return QJsonDocument::fromJson(json.toByteArray()).object();
}

bool writeFile(const QString &path, const QByteArray &content)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly) && file.write(content) == content.size();
}

} // namespace

class TestPostgresText : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void quoteIdentifier_data();
    void quoteIdentifier();
    void quoteLiteral_data();
    void quoteLiteral();
    void quoteConninfoValue();
    void textArrayLiteral();
    void conninfoEscapesQuotesAndBackslashes();
    void conninfoOmitsEmptyPasswordAndAddsReplication();
    void settingsFromExtension();
    void settingsFromExtensionRejects_data();
    void settingsFromExtensionRejects();
    void pgErrorText();
    void emptyQueryResultIsBoundsChecked();
    void segmentResultFirstError();
    void migrationsFromDirectorySortsByVersion();
    void tenantMigrationsMatchSourceDirectory();
};

void TestPostgresText::quoteIdentifier_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QByteArray>("expected");
    QTest::newRow("plain") << QByteArray("users") << QByteArray("\"users\"");
    QTest::newRow("case kept") << QByteArray("MyTable") << QByteArray("\"MyTable\"");
    QTest::newRow("empty") << QByteArray() << QByteArray("\"\"");
    QTest::newRow("double quote") << QByteArray("a\"b") << QByteArray("\"a\"\"b\"");
    QTest::newRow("injection") << QByteArray("x\"; DROP TABLE t; --")
                               << QByteArray("\"x\"\"; DROP TABLE t; --\"");
    QTest::newRow("single quote and backslash") << QByteArray("it's\\") << QByteArray("\"it's\\\"");
    QTest::newRow("unicode") << QByteArray("t\xc3\xa4"
                                           "ble")
                             << QByteArray("\"t\xc3\xa4"
                                           "ble\"");
}

void TestPostgresText::quoteIdentifier()
{
    QFETCH(QByteArray, input);
    QFETCH(QByteArray, expected);
    QCOMPARE(rt::postgres::quoteIdentifier(input), expected);
}

void TestPostgresText::quoteLiteral_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QByteArray>("expected");
    QTest::newRow("plain") << QByteArray("abc") << QByteArray("'abc'");
    QTest::newRow("empty") << QByteArray() << QByteArray("''");
    QTest::newRow("quote") << QByteArray("it's") << QByteArray("'it''s'");
    QTest::newRow("injection") << QByteArray("'; DROP TABLE t; --")
                               << QByteArray("'''; DROP TABLE t; --'");
    QTest::newRow("backslash") << QByteArray("a\\b") << QByteArray("E'a\\\\b'");
    QTest::newRow("backslash before quote") << QByteArray("\\'") << QByteArray("E'\\\\'''");
    QTest::newRow("double quote") << QByteArray("\"x\"") << QByteArray("'\"x\"'");
    QTest::newRow("unicode") << QByteArray("\xe2\x82\xac") << QByteArray("'\xe2\x82\xac'");
}

void TestPostgresText::quoteLiteral()
{
    QFETCH(QByteArray, input);
    QFETCH(QByteArray, expected);
    QCOMPARE(rt::postgres::quoteLiteral(input), expected);
}

void TestPostgresText::textArrayLiteral()
{
    QCOMPARE(rt::postgres::textArrayLiteral({}), QByteArray("{}"));
    QCOMPARE(rt::postgres::textArrayLiteral({ "a", "" }), QByteArray(R"({"a",""})"));
    QCOMPARE(rt::postgres::textArrayLiteral({ R"(b"c)", R"(d\e)", "f,g" }),
             QByteArray(R"({"b\"c","d\\e","f,g"})"));
}

void TestPostgresText::quoteConninfoValue()
{
    QCOMPARE(rt::postgres::quoteConninfoValue("abc"), QByteArray("'abc'"));
    QCOMPARE(rt::postgres::quoteConninfoValue(""), QByteArray("''"));
    QCOMPARE(rt::postgres::quoteConninfoValue("a'b\\c d"), QByteArray("'a\\'b\\\\c d'"));
}

void TestPostgresText::conninfoEscapesQuotesAndBackslashes()
{
    ConnectionSettings settings;
    settings.host = QStringLiteral("db.example");
    settings.port = 6543;
    settings.database = QStringLiteral("my db's");
    settings.user = QStringLiteral("u\\ser");
    settings.password = QByteArray("p'w\\ x=1");
    settings.sslMode = QStringLiteral("require");
    settings.applicationName = QStringLiteral("rt");
    settings.connectTimeoutSeconds = 7;
    QCOMPARE(settings.conninfo(),
             QByteArray("host='db.example' port='6543' dbname='my db\\'s' user='u\\\\ser' "
                        "password='p\\'w\\\\ x=1' sslmode='require' application_name='rt' "
                        "connect_timeout='7'"));
    QCOMPARE(settings.describe(), QStringLiteral("db.example:6543/my db's"));
}

void TestPostgresText::conninfoOmitsEmptyPasswordAndAddsReplication()
{
    ConnectionSettings settings;
    settings.host = QStringLiteral("h");
    settings.database = QStringLiteral("d");
    settings.user = QStringLiteral("u");
    settings.replication = true;
    const QByteArray conninfo = settings.conninfo();
    QVERIFY2(!conninfo.contains("password="), conninfo.constData());
    QVERIFY2(conninfo.endsWith(" replication='database'"), conninfo.constData());
    QVERIFY2(conninfo.contains("sslmode='prefer'"), conninfo.constData());
}

void TestPostgresText::settingsFromExtension()
{
    const auto settings = rt::postgres::settingsFromExtension(
            object(R"({"db_host":"10.0.0.1","db_port":"6543","db_name":"postgres",
                       "db_user":"supabase_admin","db_password":"s3'cr\\et",
                       "ssl_enforced":true,"region":"us-east-1"})"));
    QVERIFY(settings.has_value());
    QCOMPARE(settings->host, QStringLiteral("10.0.0.1"));
    QCOMPARE(settings->port, 6543);
    QCOMPARE(settings->database, QStringLiteral("postgres"));
    QCOMPARE(settings->user, QStringLiteral("supabase_admin"));
    QCOMPARE(settings->password, QByteArray("s3'cr\\et"));
    // Enforced TLS is verified TLS: the certificate must chain to a trusted CA and name db_host.
    QCOMPARE(settings->sslMode, QStringLiteral("verify-full"));
    QVERIFY(settings->conninfo().contains("password='s3\\'cr\\\\et'"));
    QVERIFY(!settings->conninfo().contains("sslrootcert"));
    rt::postgres::ConnectionSettings verified = *settings;
    verified.sslRootCert = QStringLiteral("/etc/rt/ca's.pem");
    QVERIFY2(verified.conninfo().contains("sslmode='verify-full' sslrootcert='/etc/rt/ca\\'s.pem'"),
             verified.conninfo().constData());

    // Numeric port, ssl_enforced as a string "false", no password.
    const auto other = rt::postgres::settingsFromExtension(object(
            R"({"db_host":"h","db_port":5432,"db_name":"d","db_user":"u","ssl_enforced":"false"})"));
    QVERIFY(other.has_value());
    QCOMPARE(other->port, 5432);
    QCOMPARE(other->sslMode, QStringLiteral("prefer"));
    QVERIFY(other->password.isEmpty());
}

void TestPostgresText::settingsFromExtensionRejects_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::newRow("no host") << QByteArray(R"({"db_port":"1","db_name":"d","db_user":"u"})");
    QTest::newRow("empty host") << QByteArray(
            R"({"db_host":"","db_port":"1","db_name":"d","db_user":"u"})");
    QTest::newRow("no user") << QByteArray(R"({"db_host":"h","db_port":"1","db_name":"d"})");
    QTest::newRow("port text") << QByteArray(
            R"({"db_host":"h","db_port":"abc","db_name":"d","db_user":"u"})");
    QTest::newRow("port zero") << QByteArray(
            R"({"db_host":"h","db_port":"0","db_name":"d","db_user":"u"})");
    QTest::newRow("port too big") << QByteArray(
            R"({"db_host":"h","db_port":70000,"db_name":"d","db_user":"u"})");
    QTest::newRow("host not a string")
            << QByteArray(R"({"db_host":["h"],"db_port":"1","db_name":"d","db_user":"u"})");
    QTest::newRow("empty object") << QByteArray("{}");
}

void TestPostgresText::settingsFromExtensionRejects()
{
    QFETCH(QByteArray, json);
    QVERIFY(!rt::postgres::settingsFromExtension(object(json)).has_value());
}

void TestPostgresText::pgErrorText()
{
    PgError error;
    error.message = QStringLiteral("duplicate key value violates unique constraint \"t_pkey\"");
    QCOMPARE(error.text(), error.message);
    error.detail = QStringLiteral("Key (id)=(1) already exists.");
    QCOMPARE(error.text(),
             QStringLiteral("duplicate key value violates unique constraint \"t_pkey\": "
                            "Key (id)=(1) already exists."));
    const PgError skipped = PgError::skipped();
    QVERIFY(skipped.sqlState.isEmpty());
    QCOMPARE(skipped.message, QStringLiteral("skipped after an earlier error"));
    QVERIFY(!skipped.connectionLost);
    // A null PGresult (libpq out of memory) still gives a message, never a crash.
    QVERIFY(!PgError::fromResult(nullptr).message.isEmpty());
}

void TestPostgresText::emptyQueryResultIsBoundsChecked()
{
    const QueryResult result = QueryResult::fromResult(nullptr);
    QCOMPARE(result.rowCount(), 0);
    QCOMPARE(result.columnCount(), 0);
    QVERIFY(result.isNull(0, 0));
    QVERIFY(result.isNull(-1, 5));
    QCOMPARE(result.value(3, -2), QByteArray());
    QCOMPARE(result.columnName(0), QByteArray());
    QCOMPARE(result.columnType(-1), 0u);
    QCOMPARE(result.columnIndex("x"), -1);
    QCOMPARE(result.affectedRows(), -1);
}

void TestPostgresText::segmentResultFirstError()
{
    SegmentResult segment;
    QVERIFY(segment.ok());
    QCOMPARE(segment.firstError(), nullptr);
    PgError failure;
    failure.sqlState = "42P01";
    failure.message = QStringLiteral("relation \"nope\" does not exist");
    segment.results.append(QueryResult());
    segment.results.append(failure);
    segment.results.append(PgError::skipped());
    QVERIFY(!segment.ok());
    QVERIFY(segment.firstError() != nullptr);
    QCOMPARE(segment.firstError()->sqlState, QByteArray("42P01"));
}

void TestPostgresText::migrationsFromDirectorySortsByVersion()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QVERIFY(writeFile(dir.filePath(QStringLiteral("0010_ten.sql")), "select 10;"));
    QVERIFY(writeFile(dir.filePath(QStringLiteral("0002_two.sql")), "select 2;"));
    QVERIFY(writeFile(dir.filePath(QStringLiteral("1_one.sql")), "select 1;"));
    QVERIFY(writeFile(dir.filePath(QStringLiteral("README.md")), "not sql"));
    QVERIFY(writeFile(dir.filePath(QStringLiteral("x_nover.sql")), "select 0;"));
    QVERIFY(QDir(dir.path()).mkdir(QStringLiteral("0003_dir.sql")));
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("README\\.md")));
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("x_nover\\.sql")));
    const QList<Migration> migrations = rt::postgres::migrationsFromDirectory(dir.path());
    QCOMPARE(migrations.size(), 3);
    QCOMPARE(migrations.at(0).version, 1);
    QCOMPARE(migrations.at(0).name, QStringLiteral("1_one.sql"));
    QCOMPARE(migrations.at(0).sql, QByteArray("select 1;"));
    QCOMPARE(migrations.at(1).version, 2);
    QCOMPARE(migrations.at(1).name, QStringLiteral("0002_two.sql"));
    QCOMPARE(migrations.at(2).version, 10);
    QCOMPARE(migrations.at(2).sql, QByteArray("select 10;"));
    QVERIFY(rt::postgres::migrationsFromDirectory(dir.filePath(QStringLiteral("absent")))
                    .isEmpty());
}

void TestPostgresText::tenantMigrationsMatchSourceDirectory()
{
    // The resources are globbed at configure time (CONFIGURE_DEPENDS re-globs on build), so the
    // built-in list equals what the source directory holds now, whatever files exist yet.
    const QString source = qEnvironmentVariable("RT_TENANT_SQL_DIR");
    QVERIFY2(!source.isEmpty(), "RT_TENANT_SQL_DIR is not set");
    const QList<Migration> fromSource = rt::postgres::migrationsFromDirectory(source);
    const QList<Migration> builtIn = rt::postgres::tenantMigrations();
    QCOMPARE(builtIn.size(), fromSource.size());
    for (qsizetype index = 0; index < builtIn.size(); ++index) {
        const Migration &migration = builtIn.at(index);
        QCOMPARE(migration.name, fromSource.at(index).name);
        QCOMPARE(migration.version, fromSource.at(index).version);
        QCOMPARE(migration.sql, fromSource.at(index).sql);
        QCOMPARE(migration.version, migration.name.section(QLatin1Char('_'), 0, 0).toLongLong());
        QVERIFY(!migration.sql.isEmpty());
        if (index > 0) {
            QVERIFY(builtIn.at(index - 1).version < migration.version);
        }
    }
    // Every *.sql file of the directory is a migration (none silently ignored).
    const QStringList files =
            QDir(source).entryList({ QStringLiteral("*.sql") }, QDir::Files, QDir::Name);
    QCOMPARE(files.size(), builtIn.size());
}

QTEST_GUILESS_MAIN(TestPostgresText)
#include "tst_postgres_text.moc"
