#include "server/auth/jwt.h"
#include "server/tenants/control_plane.h"
#include "server/tenants/tenant_directory.h"
#include "server/tenants/tenant_input.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

using rt::tenants::ControlPlane;
using rt::tenants::ControlPlaneSettings;
using rt::tenants::Extension;
using rt::tenants::TenantDefaults;
using rt::tenants::TenantDirectory;
using rt::tenants::TenantInput;
using rt::tenants::TenantPtr;

namespace {

QJsonObject object(QByteArrayView json)
{
    return QJsonDocument::fromJson(json.toByteArray()).object();
}

TenantInput seed(const QByteArray &externalId, const QByteArray &secret)
{
    TenantInput input;
    input.externalId = externalId;
    input.jwtSecret = secret;
    return input;
}

// Defaults that differ from the built-in ones, to see that the control plane applies ours.
TenantDefaults customDefaults()
{
    TenantDefaults defaults;
    defaults.maxConcurrentUsers = 11;
    defaults.maxEventsPerSecond = 12;
    defaults.maxBytesPerSecond = 13;
    defaults.maxChannelsPerClient = 14;
    defaults.maxJoinsPerSecond = 15;
    defaults.maxPresenceEventsPerSecond = 16;
    defaults.maxPayloadSizeInKb = 17;
    return defaults;
}

// One control-plane start, as the server does it: ready(count) or failed(message).
struct StartOutcome
{
    int readyCount = -1; // -1: ready() was not emitted
    QString failure; // empty: failed() was not emitted
    int readySignals = 0;
    int failedSignals = 0;
};

StartOutcome startOnce(const QString &sqlitePath, const QList<TenantInput> &seeds,
                       TenantDirectory &directory, TenantDefaults defaults = customDefaults())
{
    ControlPlaneSettings settings;
    settings.backend = ControlPlaneSettings::Backend::Sqlite;
    settings.sqlitePath = sqlitePath;
    ControlPlane plane(settings, defaults, directory);
    QSignalSpy ready(&plane, &ControlPlane::ready);
    QSignalSpy failed(&plane, &ControlPlane::failed);
    plane.start(seeds);
    StartOutcome outcome;
    outcome.readySignals = static_cast<int>(ready.size());
    outcome.failedSignals = static_cast<int>(failed.size());
    if (!ready.isEmpty()) {
        outcome.readyCount = ready.constFirst().constFirst().toInt();
    }
    if (!failed.isEmpty()) {
        outcome.failure = failed.constFirst().constFirst().toString();
    }
    return outcome;
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

qint64 nowSeconds()
{
    return QDateTime::currentSecsSinceEpoch();
}

QByteArray hsToken(const QByteArray &secret)
{
    QJsonObject claims;
    claims.insert(QStringLiteral("role"), QStringLiteral("anon"));
    claims.insert(QStringLiteral("exp"), nowSeconds() + 3600);
    return rt::auth::signHmac(claims, secret);
}

} // namespace

// Tests the control plane on its embedded SQLite backend in a temporary directory: migrations,
// seed upserts, loading into the TenantDirectory, and one clear failure message when the
// database cannot be used (spec/server-protocol.md §9.1 for the tenant fields).
class ControlPlaneTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();

    void emptyStartIsReadyWithNoTenants();
    void migrationsAreAppliedOnceAndIdempotent();
    void seedsAreUpsertedAndReplacedNotDuplicated();
    void replacingASeedReplacesItsExtensions();
    void unsetLimitsTakeTheDefaults();
    void everyFieldRoundTrips();
    void extensionsAreStoredAndLoaded();
    void unusableJwksStillLoads_data();
    void unusableJwksStillLoads();
    void directorySnapshotMatchesTheDatabase();
    void unusableDataDirFails_data();
    void unusableDataDirFails();

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

void ControlPlaneTest::migrationsAreAppliedOnceAndIdempotent()
{
    const QStringList embedded =
            QDir(QStringLiteral(":/sql/control_plane/sqlite"))
                    .entryList({ QStringLiteral("*.sql") }, QDir::Files, QDir::Name);
    QVERIFY(!embedded.isEmpty());

    TenantDirectory directory;
    QCOMPARE(startOnce(m_path, { seed("t1", "s") }, directory).readyCount, 1);
    QStringList firstRun;
    {
        Inspector db(m_path);
        QVERIFY(db.isOpen());
        QCOMPARE(db.column(
                         QStringLiteral("SELECT name FROM qtrealtime_migrations ORDER BY version")),
                 embedded);
        firstRun = db.column(
                QStringLiteral("SELECT inserted_at FROM qtrealtime_migrations ORDER BY version"));
    }

    // A second start on the same file applies nothing again and keeps the data.
    TenantDirectory again;
    const StartOutcome second = startOnce(m_path, {}, again);
    QCOMPARE(second.failure, QString());
    QCOMPARE(second.readyCount, 1);
    QVERIFY(again.find("t1"));
    Inspector db(m_path);
    QCOMPARE(db.column(QStringLiteral("SELECT name FROM qtrealtime_migrations ORDER BY version")),
             embedded);
    QCOMPARE(db.column(QStringLiteral(
                     "SELECT inserted_at FROM qtrealtime_migrations ORDER BY version")),
             firstRun);
}

void ControlPlaneTest::seedsAreUpsertedAndReplacedNotDuplicated()
{
    TenantDirectory directory;
    TenantInput first = seed("t1", "old-secret");
    first.maxConcurrentUsers = 5;
    first.suspend = true;
    QCOMPARE(startOnce(m_path, { first }, directory).readyCount, 1);
    QCOMPARE(directory.find("t1")->maxConcurrentUsers, 5);

    // Restart with the same external id (and a new one): replaced, not duplicated.
    TenantDirectory after;
    const StartOutcome outcome =
            startOnce(m_path, { seed("t1", "new-secret"), seed("t2", "x") }, after);
    QCOMPARE(outcome.failure, QString());
    QCOMPARE(outcome.readyCount, 2);
    QCOMPARE(after.size(), 2);
    const TenantPtr t1 = after.find("t1");
    QVERIFY(t1);
    QCOMPARE(t1->jwtSecret, QByteArray("new-secret"));
    // Replaced as a whole: fields the new seed leaves unset are back to their defaults.
    QCOMPARE(t1->maxConcurrentUsers, customDefaults().maxConcurrentUsers);
    QCOMPARE(t1->suspend, false);

    Inspector db(m_path);
    QCOMPARE(db.column(QStringLiteral("SELECT external_id FROM tenants ORDER BY external_id")),
             (QStringList{ QStringLiteral("t1"), QStringLiteral("t2") }));

    // The same seed twice in one start is one tenant as well.
    TenantDirectory twice;
    QCOMPARE(startOnce(m_path, { seed("t3", "a"), seed("t3", "b") }, twice).readyCount, 3);
    QCOMPARE(twice.find("t3")->jwtSecret, QByteArray("b"));
    QCOMPARE(db.column(QStringLiteral("SELECT count(*) FROM tenants")),
             QStringList{ QStringLiteral("3") });
}

void ControlPlaneTest::replacingASeedReplacesItsExtensions()
{
    TenantInput withDatabase = seed("t1", "s");
    withDatabase.extensions.append(
            Extension{ QStringLiteral("postgres_cdc_rls"), object(R"({"db_host":"a"})"), {}, {} });
    TenantDirectory directory;
    QCOMPARE(startOnce(m_path, { withDatabase }, directory).readyCount, 1);
    QVERIFY(directory.find("t1")->hasDatabase());

    TenantDirectory after;
    QCOMPARE(startOnce(m_path, { seed("t1", "s") }, after).readyCount, 1);
    QVERIFY(after.find("t1")->extensions.isEmpty());
    QVERIFY(!after.find("t1")->hasDatabase());
    Inspector db(m_path);
    QCOMPARE(db.column(QStringLiteral("SELECT count(*) FROM extensions")),
             QStringList{ QStringLiteral("0") });
}

void ControlPlaneTest::unsetLimitsTakeTheDefaults()
{
    TenantDirectory directory;
    QCOMPARE(startOnce(m_path, { seed("t1", "s") }, directory).readyCount, 1);
    const TenantPtr tenant = directory.find("t1");
    QVERIFY(tenant);
    const TenantDefaults defaults = customDefaults();
    QCOMPARE(tenant->maxConcurrentUsers, defaults.maxConcurrentUsers);
    QCOMPARE(tenant->maxEventsPerSecond, defaults.maxEventsPerSecond);
    QCOMPARE(tenant->maxBytesPerSecond, defaults.maxBytesPerSecond);
    QCOMPARE(tenant->maxChannelsPerClient, defaults.maxChannelsPerClient);
    QCOMPARE(tenant->maxJoinsPerSecond, defaults.maxJoinsPerSecond);
    QCOMPARE(tenant->maxPresenceEventsPerSecond, defaults.maxPresenceEventsPerSecond);
    QCOMPARE(tenant->maxPayloadSizeInKb, defaults.maxPayloadSizeInKb);
    // The per-window presence limits stay null on the tenant (spec §8: null -> env default).
    QVERIFY(!tenant->maxClientPresenceEventsPerWindow);
    QVERIFY(!tenant->clientPresenceWindowMs);
}

void ControlPlaneTest::everyFieldRoundTrips()
{
    TenantInput input = seed("acme", "secret");
    input.name = QStringLiteral("Acme");
    input.maxConcurrentUsers = 1;
    input.maxEventsPerSecond = 2;
    input.maxBytesPerSecond = 3;
    input.maxChannelsPerClient = 4;
    input.maxJoinsPerSecond = 5;
    input.maxPresenceEventsPerSecond = 6;
    input.maxPayloadSizeInKb = 7;
    input.maxClientPresenceEventsPerWindow = 8;
    input.clientPresenceWindowMs = 9;
    input.suspend = true;
    input.privateOnly = true;
    input.presenceEnabled = true;
    const QDateTime before = QDateTime::currentDateTimeUtc().addSecs(-1);

    TenantDirectory directory;
    QCOMPARE(startOnce(m_path, { input }, directory).readyCount, 1);
    const TenantPtr tenant = directory.find("acme");
    QVERIFY(tenant);
    QCOMPARE(tenant->externalId, QByteArray("acme"));
    QCOMPARE(tenant->name, QStringLiteral("Acme"));
    QCOMPARE(tenant->jwtSecret, QByteArray("secret"));
    QVERIFY(tenant->jwtJwks.isEmpty());
    QVERIFY(!tenant->id.isEmpty());
    QCOMPARE(tenant->maxConcurrentUsers, 1);
    QCOMPARE(tenant->maxEventsPerSecond, 2);
    QCOMPARE(tenant->maxBytesPerSecond, 3);
    QCOMPARE(tenant->maxChannelsPerClient, 4);
    QCOMPARE(tenant->maxJoinsPerSecond, 5);
    QCOMPARE(tenant->maxPresenceEventsPerSecond, 6);
    QCOMPARE(tenant->maxPayloadSizeInKb, 7);
    QCOMPARE(tenant->maxClientPresenceEventsPerWindow, std::optional<int>(8));
    QCOMPARE(tenant->clientPresenceWindowMs, std::optional<int>(9));
    QVERIFY(tenant->suspend);
    QVERIFY(tenant->privateOnly);
    QVERIFY(tenant->presenceEnabled);
    QCOMPARE(tenant->postgresCdcDefault, QStringLiteral("postgres_cdc_rls"));
    QCOMPARE(tenant->featureFlags, QJsonObject());
    QVERIFY(tenant->insertedAt.isValid());
    QCOMPARE(tenant->insertedAt.timeSpec(), Qt::UTC);
    QVERIFY(tenant->insertedAt >= before);
    QVERIFY(tenant->updatedAt.isValid());
    QVERIFY(tenant->keys);
    QCOMPARE(tenant->maxPayloadBytes(), qsizetype(7 * 1000 + 500));

    // A tenant without a name is named after its external id.
    TenantDirectory unnamed;
    QCOMPARE(startOnce(m_path, { seed("plain", "s") }, unnamed).readyCount, 2);
    QCOMPARE(unnamed.find("plain")->name, QStringLiteral("plain"));
}

void ControlPlaneTest::extensionsAreStoredAndLoaded()
{
    const QJsonObject settings = object(
            R"({"db_host":"db.internal","db_port":"5432","db_name":"postgres","db_user":"u",)"
            R"("db_password":"p","region":"eu-west-1","poll_interval_ms":100,"ssl_enforced":false})");
    TenantInput input = seed("t1", "s");
    input.extensions.append(Extension{ QStringLiteral("postgres_cdc_rls"), settings, {}, {} });
    TenantInput alias = seed("t2", "s");
    alias.extensions.append(Extension{ QStringLiteral("postgres"), object(R"({"a":1})"), {}, {} });

    TenantDirectory directory;
    QCOMPARE(startOnce(m_path, { input, alias }, directory).readyCount, 2);
    const TenantPtr tenant = directory.find("t1");
    QVERIFY(tenant);
    QCOMPARE(tenant->extensions.size(), 1);
    const Extension &extension = tenant->extensions.constFirst();
    QCOMPARE(extension.type, QStringLiteral("postgres_cdc_rls"));
    QCOMPARE(extension.settings, settings);
    QVERIFY(extension.insertedAt.isValid());
    QVERIFY(extension.updatedAt.isValid());
    QVERIFY(tenant->hasDatabase());
    QCOMPARE(tenant->databaseExtension()->settings, settings);
    // "postgres" is upstream's alias of postgres_cdc_rls (spec §9.1).
    QVERIFY(directory.find("t2")->hasDatabase());
    QCOMPARE(directory.find("t2")->extensions.constFirst().settings, object(R"({"a":1})"));
}

void ControlPlaneTest::unusableJwksStillLoads_data()
{
    QTest::addColumn<QByteArray>("jwks");
    QTest::addColumn<bool>("warns");

    QTest::newRow("not JSON") << QByteArray("{not json") << true;
    QTest::newRow("no keys array") << QByteArray(R"({"keys":"nope"})") << true;
    QTest::newRow("JSON array") << QByteArray("[1,2]") << true;
    // A well-formed JWKS whose keys cannot be used: the keys are skipped, silently.
    QTest::newRow("unusable keys")
            << QByteArray(R"({"keys":[{"kty":"RSA","kid":"r1","n":"!"}]})") << false;
}

void ControlPlaneTest::unusableJwksStillLoads()
{
    QFETCH(QByteArray, jwks);
    QFETCH(bool, warns);

    if (warns) {
        // The operator is told, naming the tenant.
        QTest::ignoreMessage(
                QtWarningMsg,
                QRegularExpression(QStringLiteral("tenant \"t1\" has an unusable jwt_jwks")));
    }
    TenantInput input = seed("t1", "hs-secret");
    input.jwtJwks = jwks;
    TenantDirectory directory;
    const StartOutcome outcome = startOnce(m_path, { input, seed("t2", "other") }, directory);
    QCOMPARE(outcome.failure, QString());
    QCOMPARE(outcome.readyCount, 2);
    const TenantPtr tenant = directory.find("t1");
    QVERIFY(tenant);
    QVERIFY(tenant->keys);

    // HS tokens keep working with the tenant's secret; a wrong secret still fails.
    rt::auth::VerifyOptions options;
    options.nowSeconds = nowSeconds();
    const auto good = rt::auth::verifyToken(hsToken("hs-secret"), *tenant->keys, options);
    QVERIFY(good.ok());
    QCOMPARE(good->role, QStringLiteral("anon"));
    QVERIFY(!rt::auth::verifyToken(hsToken("wrong"), *tenant->keys, options).ok());
}

void ControlPlaneTest::directorySnapshotMatchesTheDatabase()
{
    TenantDirectory directory;
    QCOMPARE(startOnce(m_path, { seed("b", "1"), seed("a", "2"), seed("c", "3") }, directory)
                     .readyCount,
             3);
    QCOMPARE(directory.size(), 3);
    QStringList ids;
    for (const TenantPtr &tenant : directory.all()) {
        ids.append(QString::fromUtf8(tenant->externalId));
    }
    ids.sort();
    QCOMPARE(ids, (QStringList{ QStringLiteral("a"), QStringLiteral("b"), QStringLiteral("c") }));
    QVERIFY(!directory.find("d"));
    QVERIFY(!directory.find(""));
    QCOMPARE(directory.find("a")->jwtSecret, QByteArray("2"));

    // A second start replaces the directory's contents; tenants handed out before are immutable
    // snapshots and keep their values.
    const TenantPtr oldA = directory.find("a");
    QCOMPARE(startOnce(m_path, { seed("a", "changed") }, directory).readyCount, 3);
    QCOMPARE(directory.find("a")->jwtSecret, QByteArray("changed"));
    QCOMPARE(oldA->jwtSecret, QByteArray("2"));
    QVERIFY(directory.find("a") != oldA);
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

QTEST_GUILESS_MAIN(ControlPlaneTest)
#include "tst_control_plane.moc"
