// The admin API's cluster snapshot (shared/api): a recorded snapshot reads into the right
// values, what is written reads back equal, absent fields keep their defaults (an older
// dashboard reads a newer server), and a field of the wrong type is an error naming its path.
#include "shared/api/cluster_snapshot.h"
#include "tests/unit/api/recorded.h"

#include <QJsonDocument>
#include <QTest>

using rt::api::ClusterSnapshot;

class TstClusterSnapshot : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void readsARecordedSnapshot()
    {
        const auto snapshot = ClusterSnapshot::fromJson(recorded("snapshot-3-nodes.json"));
        QVERIFY2(snapshot.ok(), qPrintable(snapshot ? QString() : snapshot.error().message));
        QCOMPARE(snapshot->answeredBy, QStringLiteral("node-a"));
        QCOMPARE(snapshot->takenAtMs, 1796058000000);
        QCOMPARE(snapshot->nodes.size(), 3);
        const rt::api::NodeSnapshot &a = snapshot->nodes[0];
        QCOMPARE(a.region, QStringLiteral("us-east-1"));
        QCOMPARE(a.load, std::optional<double>(0.42));
        QCOMPARE(a.loadHistory.size(), 2);
        QCOMPARE(a.loadHistory[0].atMs, 1796057940000);
        QCOMPARE(a.connections, 1200);
        QCOMPARE(a.messagesOutPerSecond, 9800.0);
        QCOMPARE(a.cpu, std::optional<double>(1.35));
        QCOMPARE(a.cpuCount, 2);
        QCOMPARE(a.residentBytes, 52428800);
        QCOMPARE(a.workers.size(), 2);
        QCOMPARE(a.workers[1], (rt::api::WorkerSnapshot{ 0.6, 12.5 }));
        QVERIFY(!snapshot->nodes[1].cpu.has_value()); // not reported yet
        QVERIFY(!snapshot->nodes[1].load.has_value()); // "not enough data"
        QVERIFY(!snapshot->nodes[2].available);
        QCOMPARE(snapshot->tenants.size(), 2);
        QCOMPARE(snapshot->tenants[0].streamOwner, QStringLiteral("node-a"));
        QCOMPARE(snapshot->tenants[0].streamState, QStringLiteral("ready"));
        QCOMPARE(snapshot->tenants[0].usersByNode.value(QStringLiteral("node-b")), 3);
        QVERIFY(snapshot->tenants[1].streamOwner.isEmpty()); // null: no stream runs
        QCOMPARE(snapshot->links.size(), 2);
        QCOMPARE(snapshot->links[0].bytesPerSecond, 23600.0);
        QCOMPARE(snapshot->tenantFlows[0].node, QStringLiteral("node-a"));
        QCOMPARE(snapshot->configRevision, 57);
        QCOMPARE(snapshot->config[1].key, QStringLiteral("tenant_limits.acme"));
        QCOMPARE(snapshot->config[1].value, QByteArray(R"({"max_concurrent_users":5000})"));
        QVERIFY(snapshot->config[1].temporary);
    }

    void writesWhatItReads()
    {
        const auto snapshot = ClusterSnapshot::fromJson(recorded("snapshot-3-nodes.json"));
        QVERIFY(snapshot.ok());
        const QByteArray written = QJsonDocument(snapshot->toJson()).toJson();
        const auto again = ClusterSnapshot::fromJson(written);
        QVERIFY(again.ok());
        QCOMPARE(*again, *snapshot);
    }

    void absentFieldsKeepTheirDefaults()
    {
        const auto snapshot = ClusterSnapshot::fromJson(
                QByteArray(R"({"nodes":[{"id":"n1"}],"tenants":[{"tenant":"t"}],"future":1})"));
        QVERIFY(snapshot.ok());
        QCOMPARE(snapshot->nodes[0].id, QStringLiteral("n1"));
        QVERIFY(snapshot->nodes[0].available);
        QVERIFY(!snapshot->nodes[0].load.has_value());
        QVERIFY(snapshot->tenants[0].usersByNode.isEmpty());
        QCOMPARE(snapshot->configRevision, 0);
    }

    void wrongTypesAreErrorsThatNameTheField_data()
    {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QString>("message");
        QTest::newRow("not json") << QByteArray("{") << QStringLiteral("the snapshot is not JSON");
        QTest::newRow("array") << QByteArray("[]")
                               << QStringLiteral("the snapshot is not a JSON object");
        QTest::newRow("nodes not an array")
                << QByteArray(R"({"nodes":{}})") << QStringLiteral("nodes must be an array");
        QTest::newRow("node not an object")
                << QByteArray(R"({"nodes":[1]})") << QStringLiteral("nodes[0] must be an object");
        QTest::newRow("load a string") << QByteArray(R"({"nodes":[{"id":"a","load":"high"}]})")
                                       << QStringLiteral("nodes[0].load must be a number or null");
        QTest::newRow("history sample")
                << QByteArray(R"({"nodes":[{"id":"a","load_history":[{"at":"x"}]}]})")
                << QStringLiteral("nodes[0].load_history[0].at must be an integer");
        QTest::newRow("cpu a string") << QByteArray(R"({"nodes":[{"id":"a","cpu":"x"}]})")
                                      << QStringLiteral("nodes[0].cpu must be a number or null");
        QTest::newRow("worker lag")
                << QByteArray(R"({"nodes":[{"id":"a","workers":[{"loop_lag_ms":true}]}]})")
                << QStringLiteral("nodes[0].workers[0].loop_lag_ms must be a number");
        QTest::newRow("node without id")
                << QByteArray(R"({"nodes":[{"region":"r"}]})")
                << QStringLiteral("nodes[0].id must be a non-empty string");
        QTest::newRow("users not numbers")
                << QByteArray(R"({"tenants":[{"tenant":"t","users":{"n":"many"}}]})")
                << QStringLiteral("tenants[0].users.n must be an integer");
        // Found by fuzz_dashboard_replies: casting 1e300 to qint64 was undefined behaviour.
        QTest::newRow("users beyond any integer")
                << QByteArray(R"({"tenants":[{"tenant":"t","users":{"n":1e300}}]})")
                << QStringLiteral("tenants[0].users.n must be an integer");
        QTest::newRow("fractional users")
                << QByteArray(R"({"tenants":[{"tenant":"t","users":{"n":2.5}}]})")
                << QStringLiteral("tenants[0].users.n must be an integer");
        QTest::newRow("config revision") << QByteArray(R"({"config":{"revision":true}})")
                                         << QStringLiteral("config.revision must be an integer");
        QTest::newRow("huge integer") << QByteArray(R"({"taken_at":1e300})")
                                      << QStringLiteral("taken_at must be an integer");
        // The one reader of shared/api: integers are exact, null is not a number.
        QTest::newRow("fraction for an integer")
                << QByteArray(R"({"nodes":[{"id":"a","connections":2.5}]})")
                << QStringLiteral("nodes[0].connections must be an integer");
        QTest::newRow("null rate")
                << QByteArray(R"({"links":[{"from":"a","messages_per_s":null}]})")
                << QStringLiteral("links[0].messages_per_s must be a number");
    }

    void wrongTypesAreErrorsThatNameTheField()
    {
        QFETCH(QByteArray, json);
        QFETCH(QString, message);
        const auto snapshot = ClusterSnapshot::fromJson(json);
        QVERIFY(!snapshot.ok());
        QVERIFY2(snapshot.error().message.startsWith(message),
                 qPrintable(snapshot.error().message));
    }
};

QTEST_APPLESS_MAIN(TstClusterSnapshot)
#include "tst_cluster_snapshot.moc"
