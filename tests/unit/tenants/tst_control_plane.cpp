#include "server/auth/jwt.h"
#include "server/tenants/control_plane.h"
#include "server/tenants/secret_cipher.h"
#include "server/tenants/tenant_directory.h"
#include "server/tenants/tenant_input.h"
#include "tests/support/tenants/control_plane_start.h"
#include "tests/support/tenants/tenant_fixtures.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>
#include <QUuid>

#include <sys/stat.h>

#include <memory>

using rt::tenants::ControlPlane;
using rt::tenants::ControlPlaneSettings;
using rt::tenants::Extension;
using rt::tenants::parseTenantPatch;
using rt::tenants::SecretCipher;
using rt::tenants::SecretPlace;
using rt::tenants::TenantDefaults;
using rt::tenants::TenantDirectory;
using rt::tenants::TenantInput;
using rt::tenants::TenantPatch;
using rt::tenants::TenantPtr;

using rt::testsupport::customDefaults;
using rt::testsupport::hsToken;
using rt::testsupport::json;
using rt::testsupport::nowSeconds;
using rt::testsupport::seed;

namespace {

// DB_ENC_KEY of upstream's test config: its ciphertexts are in
// docs/upstream/tenants-limits-metrics.md §4.5.
const QByteArray TestKey = QByteArrayLiteral("1234567890123456");

ControlPlaneSettings sqliteSettings(const QString &path, const QByteArray &key = TestKey)
{
    ControlPlaneSettings settings;
    settings.backend = ControlPlaneSettings::Backend::Sqlite;
    settings.sqlitePath = path;
    settings.encryptionKey = key;
    return settings;
}

// One control-plane start, as the server does it: ready(count) or failed(message).
using rt::testsupport::StartOutcome;

StartOutcome startWith(const ControlPlaneSettings &settings, const QList<TenantInput> &seeds,
                       TenantDirectory &directory, TenantDefaults defaults = customDefaults())
{
    return rt::testsupport::startControlPlane(settings, seeds, directory, defaults);
}

StartOutcome startOnce(const QString &sqlitePath, const QList<TenantInput> &seeds,
                       TenantDirectory &directory, TenantDefaults defaults = customDefaults())
{
    return startWith(sqliteSettings(sqlitePath), seeds, directory, defaults);
}

// Reads the SQLite file behind the control plane's back.
class Inspector
{
public:
    explicit Inspector(const QString &path)
        : m_name(QStringLiteral("inspector-%1").arg(++s_counter))
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), m_name);
        db.setDatabaseName(path);
        m_open = db.open();
    }
    ~Inspector()
    {
        QSqlDatabase::database(m_name, false).close();
        QSqlDatabase::removeDatabase(m_name);
    }
    bool isOpen() const { return m_open; }
    bool exec(const QString &sql) const
    {
        QSqlQuery query(QSqlDatabase::database(m_name, false));
        return query.exec(sql);
    }
    // The rows of a one-column query, as strings.
    QStringList column(const QString &sql) const
    {
        QStringList values;
        QSqlQuery query(QSqlDatabase::database(m_name, false));
        if (!query.exec(sql)) {
            values.append(QStringLiteral("<error>"));
            return values;
        }
        while (query.next()) {
            values.append(query.value(0).toString());
        }
        return values;
    }

private:
    static inline int s_counter = 0;
    QString m_name;
    bool m_open = false;
};

} // namespace

// What only the embedded SQLite backend does: its data directory made on demand, one clear
// failure when the file cannot be used, any bytes accepted as jwt_jwks, a key generated beside
// the database, plaintext of the first version encrypted once. Everything both backends must do
// is the conformance suite (tests/integration/control_plane/tst_control_plane_conformance.cpp).
class ControlPlaneTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();

    void emptyStartIsReadyWithNoTenants();
    void jwksThatIsNotJsonStillLoads();
    void unusableDataDirFails_data();
    void unusableDataDirFails();
    void generatedKeyIsKeptBesideTheDatabase();
    void dataDirDatabaseAndKeyAreOwnerOnly();
    void plaintextOfAnEarlierVersionIsEncryptedOnce();

private:
    std::unique_ptr<QTemporaryDir> m_dir;
    QString m_path;
};

void ControlPlaneTest::initTestCase()
{
    // The control plane logs every migration and seed at info level; keep the test log readable.
    QLoggingCategory::setFilterRules(QStringLiteral("rt.tenants*.info=false"));
}

void ControlPlaneTest::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    m_path = m_dir->filePath(QStringLiteral("data/control-plane.sqlite3"));
}

void ControlPlaneTest::emptyStartIsReadyWithNoTenants()
{
    TenantDirectory directory;
    const StartOutcome outcome = startOnce(m_path, {}, directory);
    QCOMPARE(outcome.failure, QString());
    QCOMPARE(outcome.readySignals, 1);
    QCOMPARE(outcome.failedSignals, 0);
    QCOMPARE(outcome.readyCount, 0);
    QCOMPARE(directory.size(), 0);
    // The data directory was created on demand.
    QVERIFY(QFile::exists(m_path));
}

void ControlPlaneTest::jwksThatIsNotJsonStillLoads()
{
    // The tenant API only accepts {"keys":[...]}, but a TenantInput built in code can carry any
    // bytes; SQLite stores them (PostgreSQL's jsonb refuses them: tst_control_plane_pg). The
    // operator is told, naming the tenant, when the seed is written and read back and when every
    // tenant is loaded; the tenant's HS256 secret keeps working. (JSON that is no usable JWKS:
    // the conformance suite.)
    for (int i = 0; i < 2; ++i) {
        QTest::ignoreMessage(
                QtWarningMsg,
                QRegularExpression(QStringLiteral("tenant \"t1\" has an unusable jwt_jwks")));
    }
    TenantInput input = seed("t1", "hs-secret");
    input.jwtJwks = "{not json";
    TenantDirectory directory;
    const StartOutcome outcome = startOnce(m_path, { input, seed("t2", "other") }, directory);
    QCOMPARE(outcome.failure, QString());
    QCOMPARE(outcome.readyCount, 2);
    const TenantPtr tenant = directory.find("t1");
    QVERIFY(tenant);
    QVERIFY(tenant->keys);
    rt::auth::VerifyOptions options;
    options.nowSeconds = nowSeconds();
    const auto good = rt::auth::verifyToken(hsToken("hs-secret"), *tenant->keys, options);
    QVERIFY(good.ok());
    QCOMPARE(good->role, QStringLiteral("anon"));
    QVERIFY(!rt::auth::verifyToken(hsToken("wrong"), *tenant->keys, options).ok());
}

void ControlPlaneTest::unusableDataDirFails_data()
{
    QTest::addColumn<QString>("setup");
    QTest::addColumn<QString>("expectedStart");

    QTest::newRow("data dir below a file") << QStringLiteral("file-in-path")
                                           << QStringLiteral("cannot create the data directory ");
    QTest::newRow("database path is a directory")
            << QStringLiteral("path-is-dir")
            << QStringLiteral("cannot open the control-plane database ");
    QTest::newRow("database file is not SQLite")
            << QStringLiteral("garbage-file") << QStringLiteral("cannot use ");
}

void ControlPlaneTest::unusableDataDirFails()
{
    QFETCH(QString, setup);
    QFETCH(QString, expectedStart);

    QString path;
    if (setup == QLatin1String("file-in-path")) {
        // A regular file where a directory must be (also unwritable for root).
        QFile blocker(m_dir->filePath(QStringLiteral("blocker")));
        QVERIFY(blocker.open(QIODevice::WriteOnly));
        blocker.close();
        path = m_dir->filePath(QStringLiteral("blocker/data/control-plane.sqlite3"));
    } else if (setup == QLatin1String("path-is-dir")) {
        path = m_dir->filePath(QStringLiteral("a-directory"));
        QVERIFY(QDir().mkpath(path));
    } else {
        path = m_dir->filePath(QStringLiteral("garbage.sqlite3"));
        QFile garbage(path);
        QVERIFY(garbage.open(QIODevice::WriteOnly));
        garbage.write(QByteArray(4096, 'x'));
        garbage.close();
    }

    TenantDirectory directory;
    directory.upsert(std::make_shared<rt::tenants::Tenant>());
    const StartOutcome outcome = startOnce(path, { seed("t1", "s") }, directory);
    QCOMPARE(outcome.readySignals, 0);
    QCOMPARE(outcome.failedSignals, 1);
    QVERIFY2(outcome.failure.startsWith(expectedStart), qPrintable(outcome.failure));
    // One line that names the place.
    QVERIFY(!outcome.failure.contains(u'\n'));
    if (setup == QLatin1String("file-in-path")) {
        QVERIFY2(outcome.failure.contains(m_dir->filePath(QStringLiteral("blocker/data"))),
                 qPrintable(outcome.failure));
    } else {
        QVERIFY2(outcome.failure.contains(path), qPrintable(outcome.failure));
    }
    // The directory is left alone.
    QCOMPARE(directory.size(), 1);
}

void ControlPlaneTest::generatedKeyIsKeptBesideTheDatabase()
{
    // Without DB_ENC_KEY the embedded default generates one (0600) beside its database.
    ControlPlaneSettings settings = sqliteSettings(m_path, {});
    settings.keyFile = m_dir->filePath(QStringLiteral("data/db_enc_key"));
    TenantDirectory directory;
    QCOMPARE(startWith(settings, { seed("t1", "s") }, directory).readyCount, 1);
    QFile keyFile(settings.keyFile);
    QVERIFY(keyFile.open(QIODevice::ReadOnly));
    const QByteArray key = keyFile.readAll();
    QCOMPARE(key.size(), 16);
    QCOMPARE(keyFile.permissions()
                     & (QFileDevice::ReadGroup | QFileDevice::ReadOther | QFileDevice::WriteGroup
                        | QFileDevice::WriteOther),
             QFileDevice::Permissions());
    Inspector db(m_path);
    const QString stored = db.column(QStringLiteral("SELECT jwt_secret FROM tenants")).value(0);
    QVERIFY(stored != QLatin1String("s"));
    QCOMPARE(*SecretCipher::create(key, {}, false)
                      ->decrypt(stored.toLatin1(), SecretPlace{ "t1", "jwt_secret" }),
             QByteArray("s"));

    // Reused by the next start; the same key given explicitly works as well.
    TenantDirectory again;
    QCOMPARE(startWith(settings, {}, again).readyCount, 1);
    QCOMPARE(again.find("t1")->jwtSecret, QByteArray("s"));
    TenantDirectory explicitKey;
    QCOMPARE(startWith(sqliteSettings(m_path, key), {}, explicitKey).readyCount, 1);

    // The PostgreSQL backend never generates one.
    ControlPlaneSettings postgres;
    postgres.backend = ControlPlaneSettings::Backend::Postgres;
    postgres.keyFile = settings.keyFile;
    postgres.host = QStringLiteral("127.0.0.1");
    postgres.port = 1;
    TenantDirectory none;
    const StartOutcome refused = startWith(postgres, {}, none);
    // (When the QPSQL driver is missing, that is reported first.)
    QCOMPARE(refused.failedSignals, 1);
    QVERIFY2(refused.failure.contains(QLatin1String("DB_ENC_KEY is required"))
                     || refused.failure.contains(QLatin1String("QPSQL")),
             qPrintable(refused.failure));
}

void ControlPlaneTest::dataDirDatabaseAndKeyAreOwnerOnly()
{
    // Whatever the umask: the modes are set when the paths are created, not afterwards.
    const mode_t previous = ::umask(0);
    const QString dataDir = m_dir->filePath(QStringLiteral("private/data"));
    ControlPlaneSettings settings =
            sqliteSettings(dataDir + QStringLiteral("/control-plane.sqlite3"), {});
    settings.keyFile = dataDir + QStringLiteral("/db_enc_key");
    TenantDirectory directory;
    const int ready = startWith(settings, { seed("t1", "s") }, directory).readyCount;
    ::umask(previous);
    QCOMPARE(ready, 1);
    const auto modeOf = [](const QString &path) {
        struct stat info = {};
        return ::stat(QFile::encodeName(path).constData(), &info) == 0 ? info.st_mode & 07777
                                                                       : mode_t(07777);
    };
    QCOMPARE(modeOf(dataDir), mode_t(0700));
    QCOMPARE(modeOf(settings.sqlitePath), mode_t(0600));
    QCOMPARE(modeOf(settings.keyFile), mode_t(0600));

    // Paths an earlier version (or an operator) left open to others are tightened at start.
    QVERIFY(::chmod(QFile::encodeName(dataDir).constData(), 0755) == 0);
    QVERIFY(::chmod(QFile::encodeName(settings.sqlitePath).constData(), 0644) == 0);
    QVERIFY(::chmod(QFile::encodeName(settings.keyFile).constData(), 0644) == 0);
    TenantDirectory again;
    QCOMPARE(startWith(settings, {}, again).readyCount, 1);
    QCOMPARE(again.find("t1")->jwtSecret, QByteArray("s"));
    QCOMPARE(modeOf(dataDir), mode_t(0700));
    QCOMPARE(modeOf(settings.sqlitePath), mode_t(0600));
    QCOMPARE(modeOf(settings.keyFile), mode_t(0600));
}

void ControlPlaneTest::plaintextOfAnEarlierVersionIsEncryptedOnce()
{
    // A database of the first version: migration 1 only, secrets in plain text.
    TenantDirectory directory;
    QCOMPARE(startOnce(m_path, {}, directory).readyCount, 0);
    {
        Inspector db(m_path);
        QVERIFY(db.exec(QStringLiteral("DELETE FROM qtrealtime_migrations WHERE version > 1")));
        QVERIFY(db.exec(QStringLiteral("DROP TABLE qtrealtime_settings")));
        QVERIFY(db.exec(QStringLiteral("ALTER TABLE tenants DROP COLUMN history_size")));
        QVERIFY(db.exec(QStringLiteral("ALTER TABLE tenants DROP COLUMN history_ttl_seconds")));
        QVERIFY(db.exec(QStringLiteral(
                "INSERT INTO tenants (id, external_id, name, jwt_secret, inserted_at, updated_at) "
                "VALUES ('00000000-0000-4000-8000-000000000001', 'old', 'old', 'secret', "
                "'2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')")));
        QVERIFY(db.exec(QStringLiteral(
                "INSERT INTO extensions (id, type, settings, tenant_external_id, inserted_at, "
                "updated_at) VALUES ('00000000-0000-4000-8000-000000000002', 'postgres_cdc_rls', "
                "'{\"db_host\":\"127.0.0.1\",\"region\":\"r\"}', 'old', '2026-01-01T00:00:00Z', "
                "'2026-01-01T00:00:00Z')")));
    }

    TenantDirectory upgraded;
    const StartOutcome outcome = startOnce(m_path, {}, upgraded);
    QCOMPARE(outcome.failure, QString());
    QCOMPARE(outcome.readyCount, 1);
    QCOMPARE(upgraded.find("old")->jwtSecret, QByteArray("secret"));
    QCOMPARE(upgraded.find("old")->databaseExtension()->settings,
             json("{`db_host`:`127.0.0.1`,`region`:`r`}"));
    Inspector db(m_path);
    QCOMPARE(db.column(QStringLiteral("SELECT jwt_secret FROM tenants")),
             QStringList{ QStringLiteral("RyCVJG3NbUw4ejaukvfjuQ==") });
    QCOMPARE(db.column(QStringLiteral("SELECT settings FROM extensions")),
             QStringList{ QStringLiteral(
                     "{\"db_host\":\"7Wwy/7hIGy35MCo8jeVy+w==\",\"region\":\"r\"}") });

    // Once: later starts leave the ciphertexts alone.
    TenantDirectory later;
    QCOMPARE(startOnce(m_path, {}, later).readyCount, 1);
    QCOMPARE(later.find("old")->jwtSecret, QByteArray("secret"));
    QCOMPARE(db.column(QStringLiteral("SELECT jwt_secret FROM tenants")),
             QStringList{ QStringLiteral("RyCVJG3NbUw4ejaukvfjuQ==") });
}

QTEST_GUILESS_MAIN(ControlPlaneTest)
#include "tst_control_plane.moc"
