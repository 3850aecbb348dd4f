// The control plane's conformance suite: one set of behaviours that both backends (the embedded
// SQLite default and PostgreSQL) must show, run once per backend as a global data row
// (initTestCase_data), each test case on a fresh store (tests/support/tenants/control_plane_store).
// Migrations, seed upserts, loading into the TenantDirectory, tenant writes through the API with
// their side effects, refresh seeing other writers, secrets encrypted at rest and a wrong key
// refused at start. What only one backend does (SQLite's data directory and generated key,
// PostgreSQL's schema, jsonb and migration lock) stays in tst_control_plane and
// tst_control_plane_pg.
//
// RT_CONTROL_PLANE_STORES (comma-separated: sqlite, postgres; default both) picks the rows: the
// unit label runs the SQLite row, the integration label (with the PostgreSQL fixture) the other.
#include "server/auth/jwt.h"
#include "server/tenants/control_plane.h"
#include "server/tenants/secret_cipher.h"
#include "server/tenants/tenant_directory.h"
#include "server/tenants/tenant_input.h"
#include "tests/support/tenants/control_plane_start.h"
#include "tests/support/tenants/control_plane_store.h"
#include "tests/support/tenants/tenant_fixtures.h"

#include <QDateTime>
#include <QDir>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTest>
#include <QUuid>

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
using rt::testsupport::ControlPlaneStore;
using rt::testsupport::StartOutcome;

using rt::testsupport::compact;
using rt::testsupport::customDefaults;
using rt::testsupport::hsToken;
using rt::testsupport::json;
using rt::testsupport::nowSeconds;
using rt::testsupport::object;
using rt::testsupport::seed;

namespace {

// DB_ENC_KEY of upstream's test config: its ciphertexts are in
// docs/upstream/tenants-limits-metrics.md §4.5.
const QByteArray TestKey = QByteArrayLiteral("1234567890123456");

// A tenant API body, parsed as the HTTP layer does; the test fails on parse errors elsewhere.
TenantPatch patchOf(const char *text)
{
    const rt::tenants::TenantPatchResult parsed = parseTenantPatch(json(text));
    if (!parsed.errors.isEmpty()) {
        qWarning("patch has errors: %s", compact(parsed.errors).constData());
    }
    return parsed.patch;
}

StartOutcome startWith(const ControlPlaneSettings &settings, const QList<TenantInput> &seeds,
                       TenantDirectory &directory, TenantDefaults defaults = customDefaults())
{
    return rt::testsupport::startControlPlane(settings, seeds, directory, defaults);
}

// A started control plane kept open, for writes through its API, with the signals it emits.
struct LivePlane
{
    explicit LivePlane(const ControlPlaneSettings &settings)
        : plane(settings, customDefaults(), directory),
          tenantChanged(&plane, &ControlPlane::tenantChanged),
          tenantWritten(&plane, &ControlPlane::tenantWritten),
          failed(&plane, &ControlPlane::failed)
    {
        QSignalSpy ready(&plane, &ControlPlane::ready);
        plane.start({});
        started = ready.size() == 1;
        tenantChanged.clear();
        tenantWritten.clear();
    }

    ControlPlane::Written write(const QByteArray &externalId, const TenantPatch &patch)
    {
        auto written = plane.writeTenant(externalId, patch, ControlPlane::WriteMode::Upsert);
        if (!written) {
            qWarning("write of %s failed: %d %s %s", externalId.constData(), written.error().status,
                     qPrintable(written.error().message),
                     compact(written.error().errors).constData());
            return {};
        }
        return *written;
    }

    TenantDirectory directory;
    ControlPlane plane;
    QSignalSpy tenantChanged;
    QSignalSpy tenantWritten;
    QSignalSpy failed;
    bool started = false;
};

} // namespace

class ControlPlaneConformanceTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase_data();
    void initTestCase();
    void init();
    void cleanup();

    // Start: migrations, seeds, loading.
    void migrationsAreAppliedOnceAndIdempotent();
    void seedsAreUpsertedAndReplacedNotDuplicated();
    void replacingASeedReplacesItsExtensions();
    void unsetLimitsTakeTheDefaults();
    void everyFieldRoundTrips();
    void extensionsAreStoredAndLoaded();
    void unusableJwksStillLoads_data();
    void unusableJwksStillLoads();
    void directorySnapshotMatchesTheDatabase();

    // Writes through the tenant API, and refresh.
    void upsertCreatesThenUpdates();
    void updateKeepsUnspecifiedFields();
    void extensionsAreReplacedOnlyWhenGiven();
    void missingCredentialsAre422AndWriteNothing();
    void failedWriteRollsBackEverything();
    void sideEffectsOfAnUpdate_data();
    void sideEffectsOfAnUpdate();
    void deleteRemovesTheTenantAndItsExtensions();
    void refreshSeesAnotherWriter();
    void refreshTenantReadsOneTenantAtOnce();

    // Secrets at rest.
    void secretsAreEncryptedAtRest();
    void gcmWritesAreEncryptedToo();
    void wrongKeyFailsAtStart_data();
    void wrongKeyFailsAtStart();
    void wrongKeyForSecretsWithoutACheckFails();

private:
    ControlPlaneSettings settings(const QByteArray &key = TestKey) const
    {
        return m_store->settings(key);
    }
    StartOutcome startOnce(const QList<TenantInput> &seeds, TenantDirectory &directory)
    {
        return startWith(settings(), seeds, directory);
    }

    std::unique_ptr<ControlPlaneStore> m_store;
};

void ControlPlaneConformanceTest::initTestCase_data()
{
    QTest::addColumn<QString>("store");
    const QString chosen =
            qEnvironmentVariable("RT_CONTROL_PLANE_STORES", QStringLiteral("sqlite,postgres"));
    for (const QString &name : chosen.split(u',', Qt::SkipEmptyParts)) {
        QVERIFY2(ControlPlaneStore::kindNamed(name.trimmed()),
                 qPrintable(QStringLiteral("RT_CONTROL_PLANE_STORES: unknown store ") + name));
        QTest::newRow(qPrintable(name.trimmed())) << name.trimmed();
    }
}

void ControlPlaneConformanceTest::initTestCase()
{
    // The control plane logs every migration and seed at info level; keep the test log readable.
    QLoggingCategory::setFilterRules(QStringLiteral("rt.tenants*.info=false"));
}

void ControlPlaneConformanceTest::init()
{
    QFETCH_GLOBAL(QString, store);
    QString error;
    m_store = ControlPlaneStore::create(*ControlPlaneStore::kindNamed(store), &error);
    QVERIFY2(m_store, qPrintable(store + QStringLiteral(": ") + error));
}

void ControlPlaneConformanceTest::cleanup()
{
    m_store.reset();
}

void ControlPlaneConformanceTest::migrationsAreAppliedOnceAndIdempotent()
{
    const QStringList embedded =
            QDir(m_store->kind() == ControlPlaneStore::Kind::Sqlite
                         ? QStringLiteral(":/sql/control_plane/sqlite")
                         : QStringLiteral(":/sql/control_plane/postgres"))
                    .entryList({ QStringLiteral("*.sql") }, QDir::Files, QDir::Name);
    QVERIFY(!embedded.isEmpty());

    TenantDirectory directory;
    QCOMPARE(startOnce({ seed("t1", "s") }, directory).readyCount, 1);
    QCOMPARE(m_store->column(QStringLiteral("SELECT name FROM {migrations} ORDER BY version")),
             embedded);
    const QStringList firstRun = m_store->column(
            QStringLiteral("SELECT inserted_at FROM {migrations} ORDER BY version"));

    // A second start on the same store applies nothing again and keeps the data.
    TenantDirectory again;
    const StartOutcome second = startOnce({}, again);
    QCOMPARE(second.failure, QString());
    QCOMPARE(second.readyCount, 1);
    QVERIFY(again.find("t1"));
    QCOMPARE(m_store->column(QStringLiteral("SELECT name FROM {migrations} ORDER BY version")),
             embedded);
    QCOMPARE(m_store->column(
                     QStringLiteral("SELECT inserted_at FROM {migrations} ORDER BY version")),
             firstRun);
}

void ControlPlaneConformanceTest::seedsAreUpsertedAndReplacedNotDuplicated()
{
    TenantDirectory directory;
    TenantInput first = seed("t1", "old-secret");
    first.maxConcurrentUsers = 5;
    first.suspend = true;
    QCOMPARE(startOnce({ first }, directory).readyCount, 1);
    QCOMPARE(directory.find("t1")->maxConcurrentUsers, 5);

    // Restart with the same external id (and a new one): replaced, not duplicated.
    TenantDirectory after;
    const StartOutcome outcome = startOnce({ seed("t1", "new-secret"), seed("t2", "x") }, after);
    QCOMPARE(outcome.failure, QString());
    QCOMPARE(outcome.readyCount, 2);
    QCOMPARE(after.size(), 2);
    const TenantPtr t1 = after.find("t1");
    QVERIFY(t1);
    QCOMPARE(t1->jwtSecret, QByteArray("new-secret"));
    // Replaced as a whole: fields the new seed leaves unset are back to their defaults.
    QCOMPARE(t1->maxConcurrentUsers, customDefaults().maxConcurrentUsers);
    QCOMPARE(t1->suspend, false);

    QCOMPARE(m_store->column(
                     QStringLiteral("SELECT external_id FROM {tenants} ORDER BY external_id")),
             (QStringList{ QStringLiteral("t1"), QStringLiteral("t2") }));

    // The same seed twice in one start is one tenant as well.
    TenantDirectory twice;
    QCOMPARE(startOnce({ seed("t3", "a"), seed("t3", "b") }, twice).readyCount, 3);
    QCOMPARE(twice.find("t3")->jwtSecret, QByteArray("b"));
    QCOMPARE(m_store->column(QStringLiteral("SELECT count(*) FROM {tenants}")),
             QStringList{ QStringLiteral("3") });
}

void ControlPlaneConformanceTest::replacingASeedReplacesItsExtensions()
{
    TenantInput withDatabase = seed("t1", "s");
    withDatabase.extensions.append(Extension{
            QStringLiteral("postgres_cdc_rls"), object(R"({"db_host":"a"})"), {}, {}, {} });
    TenantDirectory directory;
    QCOMPARE(startOnce({ withDatabase }, directory).readyCount, 1);
    QVERIFY(directory.find("t1")->hasDatabase());

    TenantDirectory after;
    QCOMPARE(startOnce({ seed("t1", "s") }, after).readyCount, 1);
    QVERIFY(after.find("t1")->extensions.isEmpty());
    QVERIFY(!after.find("t1")->hasDatabase());
    QCOMPARE(m_store->column(QStringLiteral("SELECT count(*) FROM {extensions}")),
             QStringList{ QStringLiteral("0") });
}

void ControlPlaneConformanceTest::unsetLimitsTakeTheDefaults()
{
    TenantDirectory directory;
    QCOMPARE(startOnce({ seed("t1", "s") }, directory).readyCount, 1);
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

void ControlPlaneConformanceTest::everyFieldRoundTrips()
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
    QCOMPARE(startOnce({ input }, directory).readyCount, 1);
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
    const QDateTime after = QDateTime::currentDateTimeUtc().addSecs(1);
    QVERIFY2(tenant->insertedAt >= before && tenant->insertedAt <= after,
             qPrintable(tenant->insertedAt.toString(Qt::ISODate)));
    QVERIFY(tenant->updatedAt.isValid());
    QVERIFY(tenant->keys);
    QCOMPARE(tenant->maxPayloadBytes(), qsizetype(7 * 1000 + 500));

    // A tenant without a name is named after its external id.
    TenantDirectory unnamed;
    QCOMPARE(startOnce({ seed("plain", "s") }, unnamed).readyCount, 2);
    QCOMPARE(unnamed.find("plain")->name, QStringLiteral("plain"));
}

void ControlPlaneConformanceTest::extensionsAreStoredAndLoaded()
{
    const QJsonObject settings = object(
            R"({"db_host":"db.internal","db_port":"5432","db_name":"postgres","db_user":"u",)"
            R"("db_password":"p","region":"eu-west-1","poll_interval_ms":100,"ssl_enforced":false})");
    TenantInput input = seed("t1", "s");
    input.extensions.append(Extension{ QStringLiteral("postgres_cdc_rls"), settings, {}, {}, {} });
    TenantInput alias = seed("t2", "s");
    alias.extensions.append(
            Extension{ QStringLiteral("postgres"), object(R"({"a":1})"), {}, {}, {} });

    TenantDirectory directory;
    QCOMPARE(startOnce({ input, alias }, directory).readyCount, 2);
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
    QCOMPARE(directory.find("t2")->extensions.constFirst().type,
             QStringLiteral("postgres_cdc_rls"));
    QCOMPARE(directory.find("t2")->extensions.constFirst().settings, object(R"({"a":1})"));
}

void ControlPlaneConformanceTest::unusableJwksStillLoads_data()
{
    QTest::addColumn<QByteArray>("jwks");
    QTest::addColumn<bool>("warns");

    QTest::newRow("JSON string") << QByteArray(R"("a string")") << true;
    QTest::newRow("no keys array") << QByteArray(R"({"keys":"nope"})") << true;
    QTest::newRow("JSON array") << QByteArray("[1,2]") << true;
    // A well-formed JWKS whose keys cannot be used: the keys are skipped, silently.
    QTest::newRow("unusable keys")
            << QByteArray(R"({"keys":[{"kty":"RSA","kid":"r1","n":"!"}]})") << false;
}

void ControlPlaneConformanceTest::unusableJwksStillLoads()
{
    QFETCH(QByteArray, jwks);
    QFETCH(bool, warns);

    if (warns) {
        // The operator is told, naming the tenant: when the seed is written and read back, and
        // when every tenant is loaded.
        for (int i = 0; i < 2; ++i) {
            QTest::ignoreMessage(
                    QtWarningMsg,
                    QRegularExpression(QStringLiteral("tenant \"t1\" has an unusable jwt_jwks")));
        }
    }
    TenantInput input = seed("t1", "hs-secret");
    input.jwtJwks = jwks;
    TenantDirectory directory;
    const StartOutcome outcome = startOnce({ input, seed("t2", "other") }, directory);
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

void ControlPlaneConformanceTest::directorySnapshotMatchesTheDatabase()
{
    TenantDirectory directory;
    QCOMPARE(startOnce({ seed("b", "1"), seed("a", "2"), seed("c", "3") }, directory).readyCount,
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
    QCOMPARE(startOnce({ seed("a", "changed") }, directory).readyCount, 3);
    QCOMPARE(directory.find("a")->jwtSecret, QByteArray("changed"));
    QCOMPARE(oldA->jwtSecret, QByteArray("2"));
    QVERIFY(directory.find("a") != oldA);
}

void ControlPlaneConformanceTest::upsertCreatesThenUpdates()
{
    LivePlane live(settings());
    QVERIFY(live.started);

    // Missing: created (201), named after its external id whatever the body says, with the
    // defaults for what the body leaves out. Creation disconnects nothing.
    const ControlPlane::Written created = live.write(
            "acme", patchOf("{`name`:`Other`,`jwt_secret`:`s`,`max_joins_per_second`:3}"));
    QVERIFY(created.created);
    QVERIFY(created.tenant);
    QCOMPARE(created.tenant->externalId, QByteArray("acme"));
    QCOMPARE(created.tenant->name, QStringLiteral("acme"));
    QCOMPARE(created.tenant->jwtSecret, QByteArray("s"));
    QCOMPARE(created.tenant->maxJoinsPerSecond, 3);
    QCOMPARE(created.tenant->maxConcurrentUsers, customDefaults().maxConcurrentUsers);
    QVERIFY(!QUuid::fromString(created.tenant->id).isNull());
    QVERIFY(!created.disconnectSockets);
    QCOMPARE(live.tenantChanged.size(), 1);
    QCOMPARE(live.tenantChanged.at(0).at(0).toByteArray(), QByteArray("acme"));
    QCOMPARE(live.tenantChanged.at(0).at(1).toBool(), false);
    // Published in the directory.
    QCOMPARE(live.directory.find("acme"), created.tenant);

    // Present: updated (200), same id and insertion time; now the name can change.
    const ControlPlane::Written updated = live.write("acme", patchOf("{`name`:`Acme`}"));
    QVERIFY(!updated.created);
    QCOMPARE(updated.tenant->id, created.tenant->id);
    QCOMPARE(updated.tenant->insertedAt, created.tenant->insertedAt);
    QCOMPARE(updated.tenant->name, QStringLiteral("Acme"));
    QCOMPARE(live.directory.find("acme")->name, QStringLiteral("Acme"));

    // One row, read back the same by a fresh start.
    QCOMPARE(m_store->column(QStringLiteral("SELECT external_id || ':' || name FROM {tenants}")),
             QStringList{ QStringLiteral("acme:Acme") });
    const auto fetched = live.plane.fetchTenant("acme");
    QVERIFY(fetched.ok() && *fetched);
    QCOMPARE((*fetched)->name, QStringLiteral("Acme"));
    const auto missing = live.plane.fetchTenant("nobody");
    QVERIFY(missing.ok());
    QVERIFY(!*missing);
}

void ControlPlaneConformanceTest::updateKeepsUnspecifiedFields()
{
    LivePlane live(settings());
    QVERIFY(live.started);
    const ControlPlane::Written created = live.write(
            "t1",
            patchOf("{`jwt_secret`:`s`,`jwt_jwks`:{`keys`:[]},`max_concurrent_users`:5,"
                    "`private_only`:true,`max_client_presence_events_per_window`:4,"
                    "`feature_flags`:{`f`:true},`migrations_ran`:81,`broadcast_adapter`:`phoenix`,"
                    "`extensions`:[{`type`:`postgres_cdc_rls`,`settings`:{`region`:`eu`,"
                    "`db_host`:`h`,`db_port`:`5432`,`db_name`:`n`,`db_user`:`u`,"
                    "`db_password`:`p`}}]}"));
    QVERIFY(created.created);

    const ControlPlane::Written updated = live.write("t1", patchOf("{`max_events_per_second`:7}"));
    QVERIFY(!updated.created);
    const TenantPtr tenant = updated.tenant;
    QCOMPARE(tenant->maxEventsPerSecond, 7);
    QCOMPARE(tenant->jwtSecret, QByteArray("s"));
    QCOMPARE(QJsonDocument::fromJson(tenant->jwtJwks).object(), json("{`keys`:[]}"));
    QCOMPARE(tenant->maxConcurrentUsers, 5);
    QVERIFY(tenant->privateOnly);
    QCOMPARE(tenant->maxClientPresenceEventsPerWindow, std::optional<int>(4));
    QCOMPARE(tenant->featureFlags, json("{`f`:true}"));
    QCOMPARE(tenant->migrationsRan, 81);
    QCOMPARE(tenant->broadcastAdapter, QStringLiteral("phoenix"));
    QCOMPARE(tenant->maxJoinsPerSecond, customDefaults().maxJoinsPerSecond);
    QCOMPARE(tenant->extensions.size(), 1);
    QCOMPARE(tenant->extensions.constFirst().settings,
             created.tenant->extensions.constFirst().settings);
    QCOMPARE(tenant->extensions.constFirst().settings.value(QLatin1String("db_password")),
             QJsonValue(QStringLiteral("p")));
    QVERIFY(!updated.disconnectSockets);
    QVERIFY(!updated.databaseSettingsChanged);

    // A nullable field set to null is cleared; NOT NULL fields ignore null.
    const ControlPlane::Written cleared = live.write(
            "t1", patchOf("{`max_client_presence_events_per_window`:null,`private_only`:null}"));
    QVERIFY(!cleared.tenant->maxClientPresenceEventsPerWindow);
    QVERIFY(cleared.tenant->privateOnly);
}

void ControlPlaneConformanceTest::extensionsAreReplacedOnlyWhenGiven()
{
    LivePlane live(settings());
    QVERIFY(live.started);
    live.write("t1",
               patchOf("{`jwt_secret`:`s`,`extensions`:[{`type`:`custom`,`settings`:{`a`:1}},"
                       "{`type`:`other`,`settings`:{`b`:2}}]}"));
    const QString rows = QStringLiteral("SELECT type FROM {extensions} ORDER BY type");
    QCOMPARE(m_store->column(rows).size(), 2);

    // Absent: kept as they are.
    QCOMPARE(live.write("t1", patchOf("{`name`:`x`}")).tenant->extensions.size(), 2);
    QCOMPARE(m_store->column(rows).size(), 2);

    // Present: the whole list is replaced, new rows.
    const ControlPlane::Written replaced =
            live.write("t1", patchOf("{`extensions`:[{`type`:`third`,`settings`:{`c`:3}}]}"));
    QVERIFY(replaced.databaseSettingsChanged);
    QCOMPARE(replaced.tenant->extensions.size(), 1);
    QCOMPARE(replaced.tenant->extensions.constFirst().type, QStringLiteral("third"));
    QCOMPARE(m_store->column(rows), QStringList{ QStringLiteral("third") });
    QCOMPARE(object(m_store->column(QStringLiteral("SELECT settings FROM {extensions}"))
                            .value(0)
                            .toUtf8()),
             json("{`c`:3}"));

    // Present and empty: none left.
    QVERIFY(live.write("t1", patchOf("{`extensions`:[]}")).tenant->extensions.isEmpty());
    QCOMPARE(m_store->column(QStringLiteral("SELECT count(*) FROM {extensions}")),
             QStringList{ QStringLiteral("0") });
}

void ControlPlaneConformanceTest::missingCredentialsAre422AndWriteNothing()
{
    LivePlane live(settings());
    QVERIFY(live.started);
    const QByteArray expected =
            compact(json("{`jwt_secret`:[`either jwt_secret or jwt_jwks must be provided`]}"));

    // Create without a secret or JWKS.
    auto refused = live.plane.writeTenant("t1", patchOf("{`max_concurrent_users`:3}"),
                                          ControlPlane::WriteMode::Upsert);
    QVERIFY(!refused.ok());
    QCOMPARE(refused.error().status, 422);
    QCOMPARE(compact(refused.error().errors), expected);
    QCOMPARE(m_store->column(QStringLiteral("SELECT count(*) FROM {tenants}")),
             QStringList{ QStringLiteral("0") });
    QVERIFY(!live.directory.find("t1"));
    QCOMPARE(live.tenantChanged.size(), 0);

    // Clearing the secret of a tenant without JWKS: refused as a whole, the other fields of the
    // request are not written either.
    live.write("t1", patchOf("{`jwt_secret`:`s`,`max_concurrent_users`:3}"));
    live.tenantChanged.clear();
    refused = live.plane.writeTenant("t1", patchOf("{`jwt_secret`:``,`max_concurrent_users`:9}"),
                                     ControlPlane::WriteMode::Upsert);
    QVERIFY(!refused.ok());
    QCOMPARE(refused.error().status, 422);
    QCOMPARE(compact(refused.error().errors), expected);
    QCOMPARE(live.tenantChanged.size(), 0);
    QCOMPARE(live.directory.find("t1")->jwtSecret, QByteArray("s"));
    const auto stored = live.plane.fetchTenant("t1");
    QVERIFY(stored.ok() && *stored);
    QCOMPARE((*stored)->jwtSecret, QByteArray("s"));
    QCOMPARE((*stored)->maxConcurrentUsers, 3);

    // With a JWKS in place the secret can go.
    live.write("t1", patchOf("{`jwt_jwks`:{`keys`:[]}}"));
    const ControlPlane::Written jwksOnly = live.write("t1", patchOf("{`jwt_secret`:null}"));
    QVERIFY(jwksOnly.tenant);
    QVERIFY(jwksOnly.tenant->jwtSecret.isEmpty());
    QCOMPARE(m_store->column(QStringLiteral("SELECT CASE WHEN jwt_secret IS NULL THEN 'null' ELSE "
                                            "'set' END FROM {tenants}")),
             QStringList{ QStringLiteral("null") });
}

void ControlPlaneConformanceTest::failedWriteRollsBackEverything()
{
    LivePlane live(settings());
    QVERIFY(live.started);
    live.write("t1",
               patchOf("{`jwt_secret`:`s`,`max_concurrent_users`:3,"
                       "`extensions`:[{`type`:`custom`,`settings`:{`a`:1}}]}"));
    live.tenantChanged.clear();

    // Two extensions of one type (the parser refuses this; a patch built in code can carry it):
    // the tenant row is updated before the extensions fail, and the transaction undoes it.
    TenantPatch patch = patchOf("{`jwt_secret`:`new`,`max_concurrent_users`:9}");
    patch.extensions = QList<Extension>{ Extension{ QStringLiteral("x"), {}, {}, {}, {} },
                                         Extension{ QStringLiteral("x"), {}, {}, {}, {} } };
    const auto failed = live.plane.writeTenant("t1", patch, ControlPlane::WriteMode::Upsert);
    QVERIFY(!failed.ok());
    QCOMPARE(failed.error().status, 500);
    QVERIFY2(failed.error().message.contains(QLatin1String("extension x")),
             qPrintable(failed.error().message));
    QCOMPARE(live.tenantChanged.size(), 0);

    const auto stored = live.plane.fetchTenant("t1");
    QVERIFY(stored.ok() && *stored);
    QCOMPARE((*stored)->jwtSecret, QByteArray("s"));
    QCOMPARE((*stored)->maxConcurrentUsers, 3);
    QCOMPARE((*stored)->extensions.size(), 1);
    QCOMPARE((*stored)->extensions.constFirst().type, QStringLiteral("custom"));
    QCOMPARE(live.directory.find("t1")->maxConcurrentUsers, 3);

    // The connection is usable afterwards (no transaction left open).
    QCOMPARE(live.write("t1", patchOf("{`max_concurrent_users`:4}")).tenant->maxConcurrentUsers, 4);
}

void ControlPlaneConformanceTest::sideEffectsOfAnUpdate_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<bool>("disconnect");
    QTest::addColumn<bool>("database");
    QTest::addColumn<bool>("events");
    QTest::addColumn<bool>("joins");
    QTest::addColumn<bool>("presence");

    // Sockets go when what authorises them changes: jwt_secret, jwt_jwks, suspend,
    // private_only (§8). Values equal to the stored ones are no change.
    QTest::newRow("new secret") << QByteArray("{`jwt_secret`:`other`}") << true << false << false
                                << false << false;
    // Upstream: any request carrying a non-empty jwt_secret is a change (docs §8).
    QTest::newRow("same secret") << QByteArray("{`jwt_secret`:`s`}") << true << false << false
                                 << false << false;
    QTest::newRow("new jwks") << QByteArray("{`jwt_jwks`:{`keys`:[{`kty`:`oct`,`k`:`eHh4`}]}}")
                              << true << false << false << false << false;
    QTest::newRow("same jwks") << QByteArray("{`jwt_jwks`:{`keys`:[]}}") << false << false << false
                               << false << false;
    QTest::newRow("suspend") << QByteArray("{`suspend`:true}") << true << false << false << false
                             << false;
    QTest::newRow("suspend unchanged")
            << QByteArray("{`suspend`:false}") << false << false << false << false << false;
    QTest::newRow("private_only") << QByteArray("{`private_only`:true}") << true << false << false
                                  << false << false;
    QTest::newRow("presence_enabled")
            << QByteArray("{`presence_enabled`:true}") << false << false << false << false << false;
    QTest::newRow("name") << QByteArray("{`name`:`n`}") << false << false << false << false
                          << false;
    QTest::newRow("max_concurrent_users") << QByteArray("{`max_concurrent_users`:1}") << false
                                          << false << false << false << false;
    QTest::newRow("extensions") << QByteArray("{`extensions`:[]}") << false << true << false
                                << false << false;
    QTest::newRow("max_events_per_second") << QByteArray("{`max_events_per_second`:1}") << false
                                           << false << true << false << false;
    QTest::newRow("max_joins_per_second")
            << QByteArray("{`max_joins_per_second`:1}") << false << false << false << true << false;
    QTest::newRow("max_presence_events_per_second")
            << QByteArray("{`max_presence_events_per_second`:1}") << false << false << false
            << false << true;
    QTest::newRow("secret and limit") << QByteArray("{`jwt_secret`:`x`,`max_joins_per_second`:1}")
                                      << true << false << false << true << false;
}

void ControlPlaneConformanceTest::sideEffectsOfAnUpdate()
{
    QFETCH(QByteArray, body);
    QFETCH(bool, disconnect);
    QFETCH(bool, database);
    QFETCH(bool, events);
    QFETCH(bool, joins);
    QFETCH(bool, presence);

    LivePlane live(settings());
    QVERIFY(live.started);
    live.write("t1", patchOf("{`jwt_secret`:`s`,`jwt_jwks`:{`keys`:[]}}"));
    live.tenantChanged.clear();

    const auto written = live.plane.writeTenant("t1", patchOf(body.constData()),
                                                ControlPlane::WriteMode::Upsert);
    QVERIFY(written.ok());
    QVERIFY(!written->created);
    QCOMPARE(written->disconnectSockets, disconnect);
    QCOMPARE(written->databaseSettingsChanged, database);
    QCOMPARE(written->eventLimitChanged, events);
    QCOMPARE(written->joinLimitChanged, joins);
    QCOMPARE(written->presenceLimitChanged, presence);
    // Announced once, with the same verdict.
    QCOMPARE(live.tenantChanged.size(), 1);
    QCOMPARE(live.tenantChanged.at(0).at(0).toByteArray(), QByteArray("t1"));
    QCOMPARE(live.tenantChanged.at(0).at(1).toBool(), disconnect);
}

void ControlPlaneConformanceTest::deleteRemovesTheTenantAndItsExtensions()
{
    LivePlane live(settings());
    QVERIFY(live.started);
    live.write("t1", patchOf("{`jwt_secret`:`s`,`extensions`:[{`type`:`x`,`settings`:{}}]}"));
    live.write("t2", patchOf("{`jwt_secret`:`s`,`extensions`:[{`type`:`x`,`settings`:{}}]}"));
    live.tenantChanged.clear();

    const auto deleted = live.plane.deleteTenant("t1");
    QVERIFY(deleted.ok());
    QVERIFY(*deleted);
    QVERIFY(!live.directory.find("t1"));
    QVERIFY(live.directory.find("t2"));
    // Its sockets must go.
    QCOMPARE(live.tenantChanged.size(), 1);
    QCOMPARE(live.tenantChanged.at(0).at(0).toByteArray(), QByteArray("t1"));
    QCOMPARE(live.tenantChanged.at(0).at(1).toBool(), true);
    QCOMPARE(m_store->column(QStringLiteral("SELECT tenant_external_id FROM {extensions}")),
             QStringList{ QStringLiteral("t2") });
    QCOMPARE(m_store->column(QStringLiteral("SELECT external_id FROM {tenants}")),
             QStringList{ QStringLiteral("t2") });

    // Deleting what is not there: false, nothing announced.
    const auto again = live.plane.deleteTenant("t1");
    QVERIFY(again.ok());
    QVERIFY(!*again);
    QCOMPARE(live.tenantChanged.size(), 1);
}

void ControlPlaneConformanceTest::refreshSeesAnotherWriter()
{
    LivePlane reader(settings());
    QVERIFY(reader.started);
    reader.write("a", patchOf("{`jwt_secret`:`s`}"));
    reader.write("b", patchOf("{`jwt_secret`:`s`}"));
    reader.write("c", patchOf("{`jwt_secret`:`s`}"));
    reader.tenantChanged.clear();
    const TenantPtr untouched = reader.directory.find("c");

    // Nothing changed: nothing announced, the published snapshots stay.
    reader.plane.refresh();
    QCOMPARE(reader.tenantChanged.size(), 0);
    QCOMPARE(reader.directory.find("c"), untouched);

    // Another node (here: another control plane on the same database) changes a limit of a, the
    // secret of b, adds d, and an operator edits c's row by hand without touching updated_at.
    {
        LivePlane writer(settings());
        QVERIFY(writer.started);
        writer.write("a", patchOf("{`max_concurrent_users`:1}"));
        writer.write("b", patchOf("{`jwt_secret`:`rotated`}"));
        writer.write("d", patchOf("{`jwt_secret`:`s`}"));
    }
    QVERIFY2(m_store->exec(QStringLiteral(
                     "UPDATE {tenants} SET max_joins_per_second = 1 WHERE external_id = 'c'")),
             qPrintable(m_store->lastError()));
    reader.plane.refresh();
    QHash<QByteArray, bool> announced;
    for (const QList<QVariant> &signal : std::as_const(reader.tenantChanged)) {
        announced.insert(signal.at(0).toByteArray(), signal.at(1).toBool());
    }
    QCOMPARE(reader.tenantChanged.size(), 4);
    QCOMPARE(announced.value("a", true), false);
    QCOMPARE(announced.value("b", false), true); // credentials changed: sockets go
    QCOMPARE(announced.value("c", true), false);
    QCOMPARE(announced.value("d", true), false);
    QCOMPARE(reader.directory.find("a")->maxConcurrentUsers, 1);
    QCOMPARE(reader.directory.find("b")->jwtSecret, QByteArray("rotated"));
    QCOMPARE(reader.directory.find("c")->maxJoinsPerSecond, 1);
    QVERIFY(reader.directory.find("d"));

    // Deleted elsewhere: gone, sockets go.
    {
        LivePlane writer(settings());
        QVERIFY(writer.plane.deleteTenant("a").ok());
    }
    reader.tenantChanged.clear();
    reader.plane.refresh();
    QCOMPARE(reader.tenantChanged.size(), 1);
    QCOMPARE(reader.tenantChanged.at(0).at(0).toByteArray(), QByteArray("a"));
    QCOMPARE(reader.tenantChanged.at(0).at(1).toBool(), true);
    QVERIFY(!reader.directory.find("a"));
}

void ControlPlaneConformanceTest::refreshTenantReadsOneTenantAtOnce()
{
    LivePlane reader(settings());
    QVERIFY(reader.started);
    reader.write("a", patchOf("{`jwt_secret`:`s`}"));
    reader.write("b", patchOf("{`jwt_secret`:`s`}"));
    reader.write("c", patchOf("{`jwt_secret`:`s`}"));
    QCOMPARE(reader.tenantWritten.size(), 3); // written here: the peers are told
    reader.tenantChanged.clear();
    reader.tenantWritten.clear();
    const TenantPtr untouched = reader.directory.findStored("c");
    {
        LivePlane writer(settings());
        QVERIFY(writer.started);
        writer.write("b", patchOf("{`jwt_secret`:`rotated`}"));
        writer.write("d", patchOf("{`jwt_secret`:`s`,`max_concurrent_users`:7}"));
        QVERIFY(writer.plane.deleteTenant("a").ok());
        QVERIFY(writer.plane.deleteTenant("a").ok()); // nothing left to delete
        QCOMPARE(writer.tenantWritten.size(), 3); // a delete of nothing is not announced
        QCOMPARE(writer.tenantWritten.at(2).at(0).toByteArray(), QByteArray("a"));
    }

    // Created elsewhere: known at once, announced without a disconnect; nothing else is read.
    const auto created = reader.plane.refreshTenant("d");
    QVERIFY(created.ok());
    QVERIFY(*created);
    QCOMPARE((*created)->maxConcurrentUsers, 7);
    QCOMPARE(reader.directory.find("d")->maxConcurrentUsers, 7);
    QCOMPARE(reader.tenantChanged.size(), 1);
    QCOMPARE(reader.tenantChanged.at(0).at(0).toByteArray(), QByteArray("d"));
    QCOMPARE(reader.tenantChanged.at(0).at(1).toBool(), false);
    QCOMPARE(reader.directory.find("b")->jwtSecret, QByteArray("s")); // not re-read yet
    QVERIFY(reader.directory.find("a")); // not re-read yet

    // Credentials changed elsewhere: its sockets must go.
    reader.tenantChanged.clear();
    QVERIFY(reader.plane.refreshTenant("b").ok());
    QCOMPARE(reader.directory.find("b")->jwtSecret, QByteArray("rotated"));
    QCOMPARE(reader.tenantChanged.size(), 1);
    QCOMPARE(reader.tenantChanged.at(0).at(1).toBool(), true);

    // Unchanged: the same snapshot, nothing announced.
    reader.tenantChanged.clear();
    const auto same = reader.plane.refreshTenant("c");
    QVERIFY(same.ok());
    QCOMPARE(*same, untouched);
    QCOMPARE(reader.directory.findStored("c"), untouched);
    QCOMPARE(reader.tenantChanged.size(), 0);

    // Deleted elsewhere: gone, sockets go. Never there: null, nothing announced.
    const auto deleted = reader.plane.refreshTenant("a");
    QVERIFY(deleted.ok());
    QVERIFY(!*deleted);
    QVERIFY(!reader.directory.find("a"));
    QCOMPARE(reader.tenantChanged.size(), 1);
    QCOMPARE(reader.tenantChanged.at(0).at(0).toByteArray(), QByteArray("a"));
    QCOMPARE(reader.tenantChanged.at(0).at(1).toBool(), true);
    const auto unknown = reader.plane.refreshTenant("never");
    QVERIFY(unknown.ok());
    QVERIFY(!*unknown);
    QCOMPARE(reader.tenantChanged.size(), 1);
    // Re-reads are not writes: announcing them would echo every change back and forth.
    QCOMPARE(reader.tenantWritten.size(), 0);
}

void ControlPlaneConformanceTest::secretsAreEncryptedAtRest()
{
    LivePlane live(settings());
    QVERIFY(live.started);
    const ControlPlane::Written written = live.write(
            "t1",
            patchOf("{`jwt_secret`:`secret`,`jwt_jwks`:{`keys`:[]},`extensions`:[{`type`:`postgres`"
                    ","
                    "`settings`:{`region`:`us-east-1`,`db_host`:`127.0.0.1`,`db_port`:`5432`,"
                    "`db_name`:`postgres`,`db_user`:`supabase_admin`,`db_password`:`postgres`,"
                    "`ssl_enforced`:false}}]}"));
    QVERIFY(written.tenant);

    // jwt_secret: upstream's ECB ciphertext, byte for byte (§4.5); the JWKS stays readable.
    QCOMPARE(m_store->column(QStringLiteral("SELECT jwt_secret FROM {tenants}")),
             QStringList{ QStringLiteral("RyCVJG3NbUw4ejaukvfjuQ==") });
    QCOMPARE(object(m_store->column(QStringLiteral("SELECT jwt_jwks FROM {tenants}"))
                            .value(0)
                            .toUtf8()),
             json("{`keys`:[]}"));
    const SecretCipher cipher = *SecretCipher::create(TestKey, {}, false);
    QCOMPARE(*cipher.decrypt("RyCVJG3NbUw4ejaukvfjuQ==", SecretPlace{ "t1", "jwt_secret" }),
             QByteArray("secret"));

    // Settings: db_host, db_port, db_name, db_user, db_password encrypted (§4.1), the rest as
    // given, under the real type name.
    QCOMPARE(m_store->column(QStringLiteral("SELECT type FROM {extensions}")),
             QStringList{ QStringLiteral("postgres_cdc_rls") });
    const QStringList rows = m_store->column(QStringLiteral("SELECT settings FROM {extensions}"));
    QCOMPARE(rows.size(), 1);
    const QJsonObject raw = object(rows.constFirst().toUtf8());
    QCOMPARE(raw.value(QLatin1String("db_host")).toString(),
             QStringLiteral("7Wwy/7hIGy35MCo8jeVy+w=="));
    QCOMPARE(raw.value(QLatin1String("db_port")).toString(),
             QStringLiteral("m3KM2cjJ+t7C3443QcjOgA=="));
    QCOMPARE(raw.value(QLatin1String("db_name")).toString(),
             QStringLiteral("v1QVng3N+pZd/0AEObABwg=="));
    QCOMPARE(raw.value(QLatin1String("db_user")).toString(),
             QStringLiteral("fUUNRi3V/4miyO1Yci7Gcg=="));
    QCOMPARE(raw.value(QLatin1String("db_password")).toString(),
             QStringLiteral("v1QVng3N+pZd/0AEObABwg=="));
    QCOMPARE(raw.value(QLatin1String("region")).toString(), QStringLiteral("us-east-1"));
    QCOMPARE(raw.value(QLatin1String("slot_name")).toString(),
             QStringLiteral("supabase_realtime_replication_slot"));
    QCOMPARE(raw.value(QLatin1String("ssl_enforced")), QJsonValue(false));

    // The tenant carries both views: storedSettings as stored (what the API shows, minus
    // db_password), settings decrypted (what the server uses).
    const Extension &extension = written.tenant->extensions.constFirst();
    QCOMPARE(extension.storedSettings, raw);
    QCOMPARE(extension.settings.value(QLatin1String("db_host")).toString(),
             QStringLiteral("127.0.0.1"));
    QCOMPARE(extension.settings.value(QLatin1String("db_user")).toString(),
             QStringLiteral("supabase_admin"));
    QCOMPARE(extension.settings.value(QLatin1String("db_password")).toString(),
             QStringLiteral("postgres"));
    QCOMPARE(written.tenant->jwtSecret, QByteArray("secret"));

    // Another start with the same key reads them back.
    TenantDirectory again;
    QCOMPARE(startOnce({}, again).readyCount, 1);
    QCOMPARE(again.find("t1")->jwtSecret, QByteArray("secret"));
    QCOMPARE(again.find("t1")->databaseExtension()->settings, extension.settings);
}

void ControlPlaneConformanceTest::gcmWritesAreEncryptedToo()
{
    ControlPlaneSettings gcm = settings();
    gcm.encryptionKeyGcm = QByteArrayLiteral("12345678901234567890123456789012");
    gcm.writeGcm = true;
    TenantInput input = seed("t1", "secret");
    input.extensions.append(Extension{ QStringLiteral("postgres_cdc_rls"),
                                       json("{`db_password`:`pw`,`region`:`r`}"),
                                       {},
                                       {},
                                       {} });
    TenantDirectory directory;
    QCOMPARE(startWith(gcm, { input }, directory).readyCount, 1);
    QCOMPARE(directory.find("t1")->jwtSecret, QByteArray("secret"));
    QCOMPARE(
            directory.find("t1")->databaseExtension()->settings.value(QLatin1String("db_password")),
            QJsonValue(QStringLiteral("pw")));

    const QString stored =
            m_store->column(QStringLiteral("SELECT jwt_secret FROM {tenants}")).value(0);
    QVERIFY2(stored.startsWith(QLatin1String("g2:")), qPrintable(stored));
    const SecretCipher reader = *SecretCipher::create({}, gcm.encryptionKeyGcm, true);
    QCOMPARE(*reader.decrypt(stored.toLatin1(), SecretPlace{ "t1", "jwt_secret" }),
             QByteArray("secret"));
    // Bound to its place: the same value read as another tenant's or another field's fails.
    QVERIFY(!reader.decrypt(stored.toLatin1(), SecretPlace{ "t2", "jwt_secret" }));
    QVERIFY(!reader.decrypt(stored.toLatin1(), SecretPlace{ "t1", "db_password" }));
    const QJsonObject raw = object(
            m_store->column(QStringLiteral("SELECT settings FROM {extensions}")).value(0).toUtf8());
    const QString password = raw.value(QLatin1String("db_password")).toString();
    QVERIFY(password.startsWith(QLatin1String("g2:")));
    QCOMPARE(raw.value(QLatin1String("region")).toString(), QStringLiteral("r"));

    // A ciphertext moved into another tenant's row does not decrypt there: that tenant's
    // secret is unreadable (its tokens fail), not silently someone else's.
    TenantDirectory moved;
    const StartOutcome second = startWith(gcm, { seed("t2", "other") }, moved);
    QVERIFY2(second.readySignals == 1, qPrintable(second.failure));
    QVERIFY(m_store->exec(QStringLiteral("UPDATE {tenants} SET jwt_secret = '%1' "
                                         "WHERE external_id = 't2'")
                                  .arg(stored)));
    TenantDirectory afterMove;
    QCOMPARE(startWith(gcm, {}, afterMove).readySignals, 1);
    QCOMPARE(afterMove.find("t1")->jwtSecret, QByteArray("secret"));
    QVERIFY(afterMove.find("t2")->jwtSecret.isEmpty());

    // Turning GCM writes off later still reads them (reading dispatches on the value).
    gcm.writeGcm = false;
    TenantDirectory ecbWriter;
    QCOMPARE(startWith(gcm, {}, ecbWriter).readyCount, 2);
    QCOMPARE(ecbWriter.find("t1")->jwtSecret, QByteArray("secret"));
}

void ControlPlaneConformanceTest::wrongKeyFailsAtStart_data()
{
    QTest::addColumn<QByteArray>("secondKey");
    QTest::addColumn<QString>("expected");
    QTest::newRow("another key") << QByteArray("6543210987654321")
                                 << QStringLiteral("DB_ENC_KEY (or DB_ENC_KEY_GCM) is not the key "
                                                   "this control plane's secrets were encrypted "
                                                   "with");
    QTest::newRow("key of the wrong length")
            << QByteArray("short") << QStringLiteral("DB_ENC_KEY must be exactly 16 bytes");
}

void ControlPlaneConformanceTest::wrongKeyFailsAtStart()
{
    QFETCH(QByteArray, secondKey);
    QFETCH(QString, expected);

    TenantDirectory directory;
    QCOMPARE(startOnce({ seed("t1", "s") }, directory).readyCount, 1);

    // A different key would make every stored secret unreadable (ECB: garbage): the start fails
    // with one clear line instead, and leaves the directory and the database alone.
    TenantDirectory other;
    other.upsert(std::make_shared<rt::tenants::Tenant>());
    const StartOutcome outcome = startWith(settings(secondKey), { seed("t2", "s") }, other);
    QCOMPARE(outcome.readySignals, 0);
    QCOMPARE(outcome.failedSignals, 1);
    QVERIFY2(outcome.failure.startsWith(expected), qPrintable(outcome.failure));
    QVERIFY(!outcome.failure.contains(u'\n'));
    QVERIFY(!outcome.failure.contains(QLatin1String(secondKey)));
    QCOMPARE(other.size(), 1);
    QCOMPARE(m_store->column(QStringLiteral("SELECT external_id FROM {tenants}")),
             QStringList{ QStringLiteral("t1") });

    // The right key still works.
    TenantDirectory right;
    QCOMPARE(startOnce({}, right).readyCount, 1);
    QCOMPARE(right.find("t1")->jwtSecret, QByteArray("s"));
}

void ControlPlaneConformanceTest::wrongKeyForSecretsWithoutACheckFails()
{
    // Tables whose secrets another server wrote (no check value of ours yet): the first start
    // must not adopt a key under which those secrets do not decrypt.
    TenantDirectory directory;
    QCOMPARE(startOnce({ seed("t1", "s") }, directory).readyCount, 1);
    {
        QVERIFY(m_store->exec(QStringLiteral("DELETE FROM {settings}")));
    }
    TenantDirectory other;
    const StartOutcome outcome =
            startWith(settings(QByteArrayLiteral("6543210987654321")), {}, other);
    QCOMPARE(outcome.failedSignals, 1);
    QVERIFY2(outcome.failure.contains(QLatin1String("the jwt_secret of tenant t1 does not "
                                                    "decrypt")),
             qPrintable(outcome.failure));
    QCOMPARE(m_store->column(QStringLiteral("SELECT count(*) FROM {settings}")),
             QStringList{ QStringLiteral("0") });
    // The right key adopts them.
    TenantDirectory right;
    QCOMPARE(startOnce({}, right).readyCount, 1);
    QCOMPARE(right.find("t1")->jwtSecret, QByteArray("s"));
}

QTEST_GUILESS_MAIN(ControlPlaneConformanceTest)
#include "tst_control_plane_conformance.moc"
