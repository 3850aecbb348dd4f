// The cluster configuration's meaning (server/node/cluster_config.h): a snapshot becomes region
// mapping and per-tenant overrides, bad entries are reported and skipped while the rest applies,
// the admin API's validation agrees with it, and the last-known-good file round-trips and never
// crashes on a corrupt file.
#include "server/node/cluster_config.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using rt::cluster::ConfigEntry;
using rt::cluster::ConfigSnapshot;
using rt::node::ClusterSettings;
using rt::node::ConfigProblem;
using rt::node::loadSnapshot;
using rt::node::parseClusterSettings;
using rt::node::parseRegionMapping;
using rt::node::saveSnapshot;
using rt::node::SnapshotFileError;
using rt::node::validateConfigEntry;
using rt::node::validateConfigKeyName;
using rt::tenants::LimitOverrides;

namespace {

ConfigEntry entry(const QString &key, const QByteArray &value, qint64 modRevision = 1,
                  bool temporary = false)
{
    return ConfigEntry{ key, value, modRevision, temporary };
}

ConfigSnapshot snapshotOf(const QList<ConfigEntry> &entries, qint64 revision = 10)
{
    ConfigSnapshot snapshot;
    snapshot.revision = revision;
    for (const ConfigEntry &e : entries) {
        snapshot.entries.insert(e.key, e);
    }
    return snapshot;
}

const QByteArray GoodMapping = R"({"ap-northeast-2": "ap-northeast-1", "eu-west-3": "eu-west-1"})";

} // namespace

class ClusterConfigTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void emptySnapshot();
    void parsesEveryKind();
    void badEntriesAreSkippedOthersApply();
    void limitsAndFlagsOfOneTenantMerge();
    void regionMappingRules_data();
    void regionMappingRules();
    void validationAgreesWithParsing_data();
    void validationAgreesWithParsing();
    void keyNames();
    void snapshotFileRoundTrips();
    void snapshotFileKeepsNonUtf8Bytes();
    void missingFileIsDistinguished();
    void corruptFilesAreErrors_data();
    void corruptFilesAreErrors();
    void saveReplacesAtomically();
};

void ClusterConfigTest::emptySnapshot()
{
    const ClusterSettings settings = parseClusterSettings(ConfigSnapshot{});
    QVERIFY(settings.regionMapping.isEmpty());
    QVERIFY(settings.tenantOverrides.isEmpty());
    QVERIFY(settings.problems.isEmpty());
    QCOMPARE(settings.revision, 0);
}

void ClusterConfigTest::parsesEveryKind()
{
    const ClusterSettings settings = parseClusterSettings(snapshotOf(
            {
                    entry(QStringLiteral("region_mapping"), GoodMapping),
                    entry(QStringLiteral("tenant_limits.acme"),
                          R"({"max_concurrent_users": 1000, "max_events_per_second": 50})", 4,
                          true),
                    entry(QStringLiteral("tenant_flags.spam"), R"({"suspend": true})"),
            },
            42));
    QVERIFY2(settings.problems.isEmpty(), qPrintable(settings.problems.value(0).message));
    QCOMPARE(settings.revision, 42);
    QCOMPARE(settings.regionMapping,
             (QHash<QString, QString>{
                     { QStringLiteral("ap-northeast-2"), QStringLiteral("ap-northeast-1") },
                     { QStringLiteral("eu-west-3"), QStringLiteral("eu-west-1") } }));
    QCOMPARE(settings.tenantOverrides.size(), 2);
    LimitOverrides acme;
    acme.maxConcurrentUsers = 1000;
    acme.maxEventsPerSecond = 50;
    QCOMPARE(settings.tenantOverrides.value("acme"), acme);
    LimitOverrides spam;
    spam.suspend = true;
    QCOMPARE(settings.tenantOverrides.value("spam"), spam);
}

void ClusterConfigTest::badEntriesAreSkippedOthersApply()
{
    const ClusterSettings settings = parseClusterSettings(snapshotOf({
            entry(QStringLiteral("region_mapping"), GoodMapping),
            entry(QStringLiteral("tenant_limits.good"), R"({"max_joins_per_second": 5})"),
            entry(QStringLiteral("tenant_limits.typo"), R"({"max_join_per_second": 5})"),
            entry(QStringLiteral("tenant_limits.zero"), R"({"max_joins_per_second": 0})"),
            entry(QStringLiteral("tenant_flags.broken"), "{not json"),
            entry(QStringLiteral("feature_x"), "{}"),
            entry(QStringLiteral("tenant_limits."), R"({"max_joins_per_second": 5})"),
    }));
    // Every good entry applies...
    QCOMPARE(settings.regionMapping.size(), 2);
    QCOMPARE(settings.tenantOverrides.keys(), QList<QByteArray>{ "good" });
    QCOMPARE(settings.tenantOverrides.value("good").maxJoinsPerSecond, 5);
    // ...and each bad one is named, in key order, with why.
    QCOMPARE(settings.problems.size(), 5);
    QCOMPARE(settings.problems.at(0).key, QStringLiteral("feature_x"));
    QVERIFY(settings.problems.at(0).message.startsWith(QLatin1String("unknown key")));
    QCOMPARE(settings.problems.at(1).key, QStringLiteral("tenant_flags.broken"));
    QVERIFY(settings.problems.at(1).message.contains(QLatin1String("not valid JSON")));
    QCOMPARE(settings.problems.at(2).key, QStringLiteral("tenant_limits."));
    QVERIFY(settings.problems.at(2).message.contains(QLatin1String("must name a tenant")));
    QCOMPARE(settings.problems.at(3).key, QStringLiteral("tenant_limits.typo"));
    QVERIFY(settings.problems.at(3).message.contains(
            QLatin1String("unknown field \"max_join_per_second\"")));
    QCOMPARE(settings.problems.at(4).key, QStringLiteral("tenant_limits.zero"));
    QVERIFY(settings.problems.at(4).message.contains(QLatin1String("positive integer")));

    // A broken region mapping leaves placement without a mapping, and nothing else suffers.
    const ClusterSettings badMapping = parseClusterSettings(snapshotOf({
            entry(QStringLiteral("region_mapping"), R"({"a": 1})"),
            entry(QStringLiteral("tenant_flags.x"), R"({"suspend": false})"),
    }));
    QVERIFY(badMapping.regionMapping.isEmpty());
    QCOMPARE(badMapping.problems,
             (QList<ConfigProblem>{ { QStringLiteral("region_mapping"),
                                      QStringLiteral("the platform region of \"a\" must be a "
                                                     "string") } }));
    QCOMPARE(badMapping.tenantOverrides.value("x").suspend, false);
}

void ClusterConfigTest::limitsAndFlagsOfOneTenantMerge()
{
    const ClusterSettings settings = parseClusterSettings(snapshotOf({
            entry(QStringLiteral("tenant_limits.acme"), R"({"max_events_per_second": 9})"),
            entry(QStringLiteral("tenant_flags.acme"), R"({"suspend": true})"),
            entry(QStringLiteral("tenant_limits.empty"), "{}"),
    }));
    QVERIFY(settings.problems.isEmpty());
    LimitOverrides expected;
    expected.maxEventsPerSecond = 9;
    expected.suspend = true;
    QCOMPARE(settings.tenantOverrides.value("acme"), expected);
    // An empty object is valid and overrides nothing.
    QVERIFY(!settings.tenantOverrides.contains("empty"));
}

void ClusterConfigTest::regionMappingRules_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("error"); // empty: valid
    QTest::newRow("empty object") << QByteArray("{}") << QString();
    QTest::newRow("good") << GoodMapping << QString();
    QTest::newRow("array") << QByteArray(R"(["a"])") << QStringLiteral("must be a JSON object");
    QTest::newRow("number target")
            << QByteArray(R"({"a": 3})") << QStringLiteral("must be a string");
    QTest::newRow("empty target") << QByteArray(R"({"a": ""})")
                                  << QStringLiteral("cannot be empty");
    QTest::newRow("empty source") << QByteArray(R"({"": "b"})")
                                  << QStringLiteral("cannot be empty");
    QTest::newRow("space") << QByteArray(R"({"a": "eu west"})")
                           << QStringLiteral("space or a control character");
    QTest::newRow("too long") << QByteArray(R"({"a": ")" + QByteArray(65, 'x') + "\"}")
                              << QStringLiteral("longer than 64");
    QTest::newRow("garbage") << QByteArray("\x01\xff") << QStringLiteral("not valid JSON");
}

void ClusterConfigTest::regionMappingRules()
{
    QFETCH(QByteArray, json);
    QFETCH(QString, error);
    const auto parsed = parseRegionMapping(json);
    if (error.isEmpty()) {
        QVERIFY2(parsed.ok(), qPrintable(parsed ? QString() : parsed.error().message));
    } else {
        QVERIFY(!parsed.ok());
        QVERIFY2(parsed.error().message.contains(error), qPrintable(parsed.error().message));
    }
}

void ClusterConfigTest::validationAgreesWithParsing_data()
{
    QTest::addColumn<QString>("key");
    QTest::addColumn<QByteArray>("value");
    QTest::addColumn<QString>("error"); // empty: valid
    QTest::newRow("mapping") << QStringLiteral("region_mapping") << GoodMapping << QString();
    QTest::newRow("limits") << QStringLiteral("tenant_limits.acme")
                            << QByteArray(R"({"max_payload_size_in_kb": 100})") << QString();
    QTest::newRow("flags") << QStringLiteral("tenant_flags.acme")
                           << QByteArray(R"({"suspend": true})") << QString();
    QTest::newRow("unknown key") << QStringLiteral("tenant_limit.acme") << QByteArray("{}")
                                 << QStringLiteral("unknown key (known: region_mapping, "
                                                   "tenant_limits.<external_id>, "
                                                   "tenant_flags.<external_id>)");
    QTest::newRow("dotted tenant") << QStringLiteral("tenant_limits.a.b") << QByteArray("{}")
                                   << QStringLiteral("cannot contain '.'");
    QTest::newRow("slash") << QStringLiteral("tenant_limits/a") << QByteArray("{}")
                           << QStringLiteral("printable ASCII");
    QTest::newRow("bad limit") << QStringLiteral("tenant_limits.acme")
                               << QByteArray(R"({"max_concurrent_users": -5})")
                               << QStringLiteral("max_concurrent_users must be a positive integer");
    QTest::newRow("scalar mapping") << QStringLiteral("region_mapping") << QByteArray("\"x\"")
                                    << QStringLiteral("JSON"); // refused as JSON or as an object
}

void ClusterConfigTest::validationAgreesWithParsing()
{
    QFETCH(QString, key);
    QFETCH(QByteArray, value);
    QFETCH(QString, error);
    const std::optional<QString> verdict = validateConfigEntry(key, value);
    const ClusterSettings settings = parseClusterSettings(snapshotOf({ entry(key, value) }));
    if (error.isEmpty()) {
        QVERIFY2(!verdict, qPrintable(verdict.value_or(QString())));
        QVERIFY(settings.problems.isEmpty());
    } else {
        QVERIFY(verdict);
        QVERIFY2(verdict->contains(error), qPrintable(*verdict));
        QCOMPARE(settings.problems, (QList<ConfigProblem>{ { key, *verdict } }));
    }
}

void ClusterConfigTest::keyNames()
{
    QVERIFY(!validateConfigKeyName(QStringLiteral("anything_at_all.x-y_z")));
    QVERIFY(validateConfigKeyName(QString()));
    QVERIFY(validateConfigKeyName(QStringLiteral("a b")));
    QVERIFY(validateConfigKeyName(QStringLiteral("a/b")));
    QVERIFY(validateConfigKeyName(QStringLiteral("a%2Fb")));
    QVERIFY(validateConfigKeyName(QStringLiteral("caf\u00e9")));
    QVERIFY(validateConfigKeyName(QString(257, u'k')));
    QVERIFY(!validateConfigKeyName(QString(256, u'k')));
}

void ClusterConfigTest::snapshotFileRoundTrips()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    // In a directory that does not exist yet (DATA_DIR/cluster/...).
    const QString path = dir.filePath(QStringLiteral("nested/node-a.json"));
    const ConfigSnapshot snapshot = snapshotOf(
            {
                    entry(QStringLiteral("region_mapping"), GoodMapping, 7),
                    entry(QStringLiteral("tenant_limits.acme"), R"({"max_events_per_second":5})", 9,
                          true),
                    entry(QStringLiteral("odd"), "not json at all \"quoted\"\n", 3),
            },
            123456789012);
    QCOMPARE(saveSnapshot(path, snapshot), std::nullopt);
    const auto loaded = loadSnapshot(path);
    QVERIFY2(loaded.ok(), qPrintable(loaded ? QString() : loaded.error().message));
    QCOMPARE(*loaded, snapshot);
    // It is readable JSON for an operator.
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray text = file.readAll();
    QVERIFY(text.contains("\"tenant_limits.acme\""));
    QVERIFY(text.contains("\"saved_at\""));

    // An empty snapshot round-trips too.
    QCOMPARE(saveSnapshot(path, ConfigSnapshot{}), std::nullopt);
    const auto empty = loadSnapshot(path);
    QVERIFY(empty.ok());
    QCOMPARE(*empty, ConfigSnapshot{});
}

void ClusterConfigTest::snapshotFileKeepsNonUtf8Bytes()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("s.json"));
    const ConfigSnapshot snapshot =
            snapshotOf({ entry(QStringLiteral("raw"), QByteArray("\xff\xfe\x00z", 4), 2) }, 5);
    QCOMPARE(saveSnapshot(path, snapshot), std::nullopt);
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QVERIFY(file.readAll().contains("value_base64"));
    const auto loaded = loadSnapshot(path);
    QVERIFY(loaded.ok());
    QCOMPARE(*loaded, snapshot);
}

void ClusterConfigTest::missingFileIsDistinguished()
{
    QTemporaryDir dir;
    const auto loaded = loadSnapshot(dir.filePath(QStringLiteral("none.json")));
    QVERIFY(!loaded.ok());
    QCOMPARE(loaded.error().kind, SnapshotFileError::Kind::Missing);
    // A directory where the file should be cannot be read.
    QVERIFY(QDir(dir.path()).mkdir(QStringLiteral("adir")));
    const auto directory = loadSnapshot(dir.filePath(QStringLiteral("adir")));
    QVERIFY(!directory.ok());
    QVERIFY(directory.error().kind != SnapshotFileError::Kind::Missing);
}

void ClusterConfigTest::corruptFilesAreErrors_data()
{
    QTest::addColumn<QByteArray>("content");
    QTest::newRow("empty") << QByteArray();
    QTest::newRow("truncated") << QByteArray(R"({"format": 1, "revision": 3, "entries": [)");
    QTest::newRow("binary") << QByteArray("\x00\x01\x02\xff", 4);
    QTest::newRow("array") << QByteArray("[]");
    QTest::newRow("no format") << QByteArray(R"({"revision": 3, "entries": []})");
    QTest::newRow("future format") << QByteArray(R"({"format": 2, "revision": 3, "entries": []})");
    QTest::newRow("negative revision")
            << QByteArray(R"({"format": 1, "revision": -1, "entries": []})");
    QTest::newRow("fractional revision")
            << QByteArray(R"({"format": 1, "revision": 1.5, "entries": []})");
    QTest::newRow("string revision")
            << QByteArray(R"({"format": 1, "revision": "3", "entries": []})");
    QTest::newRow("entries not array")
            << QByteArray(R"({"format": 1, "revision": 3, "entries": {}})");
    QTest::newRow("entry not object")
            << QByteArray(R"({"format": 1, "revision": 3, "entries": [5]})");
    QTest::newRow("no key") << QByteArray(
            R"({"format": 1, "revision": 3, "entries": [{"value": "{}", "mod_revision": 1}]})");
    QTest::newRow("empty key") << QByteArray(
            R"({"format":1,"revision":3,"entries":[{"key":"","value":"{}","mod_revision":1}]})");
    QTest::newRow("no value") << QByteArray(
            R"({"format": 1, "revision": 3, "entries": [{"key": "k", "mod_revision": 1}]})");
    QTest::newRow("both values") << QByteArray(
            R"({"format":1,"revision":3,"entries":[{"key":"k","value":"{}","value_base64":"e30=","mod_revision":1}]})");
    QTest::newRow("bad base64") << QByteArray(
            R"({"format":1,"revision":3,"entries":[{"key":"k","value_base64":"!!","mod_revision":1}]})");
    QTest::newRow("value not string") << QByteArray(
            R"({"format":1,"revision":3,"entries":[{"key":"k","value":{},"mod_revision":1}]})");
    QTest::newRow("no mod revision")
            << QByteArray(R"({"format":1,"revision":3,"entries":[{"key":"k","value":"{}"}]})");
    QTest::newRow("bad temporary") << QByteArray(
            R"({"format":1,"revision":3,"entries":[{"key":"k","value":"{}","mod_revision":1,"temporary":"yes"}]})");
    QTest::newRow("duplicate key") << QByteArray(
            R"({"format":1,"revision":3,"entries":[{"key":"k","value":"{}","mod_revision":1},{"key":"k","value":"{}","mod_revision":2}]})");
}

void ClusterConfigTest::corruptFilesAreErrors()
{
    QFETCH(QByteArray, content);
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("snapshot.json"));
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    QCOMPARE(file.write(content), content.size());
    file.close();
    const auto loaded = loadSnapshot(path);
    QVERIFY(!loaded.ok());
    QCOMPARE(loaded.error().kind, SnapshotFileError::Kind::Corrupt);
    QVERIFY2(loaded.error().message.contains(path), qPrintable(loaded.error().message));
}

void ClusterConfigTest::saveReplacesAtomically()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("snapshot.json"));
    QCOMPARE(saveSnapshot(path, snapshotOf({ entry(QStringLiteral("a"), "{}") }, 1)), std::nullopt);
    QCOMPARE(saveSnapshot(path, snapshotOf({ entry(QStringLiteral("b"), "{}") }, 2)), std::nullopt);
    const auto loaded = loadSnapshot(path);
    QVERIFY(loaded.ok());
    QCOMPARE(loaded->revision, 2);
    QCOMPARE(loaded->entries.keys(), QStringList{ QStringLiteral("b") });
    // No temporary file is left behind next to it.
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files),
             QStringList{ QStringLiteral("snapshot.json") });
    // A path that cannot be written is an error value (its parent is a file).
    const std::optional<QString> failed = saveSnapshot(
            dir.filePath(QStringLiteral("snapshot.json/inside.json")), ConfigSnapshot{});
    QVERIFY(failed);
}

QTEST_GUILESS_MAIN(ClusterConfigTest)
#include "tst_cluster_config.moc"
