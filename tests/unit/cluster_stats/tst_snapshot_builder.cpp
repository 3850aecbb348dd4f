// The admin snapshot's assembly: nodes from the membership (the answering node too, before its
// record is listed) with their reported figures and load history, tenants with users or a
// stream, link and tenant flows of members only, configuration as stored; and the result
// survives the shared JSON mapping unchanged.
#include "server/cluster/stats/snapshot_builder.h"

#include <QTest>

using namespace rt::cluster;
using namespace rt::cluster::stats;

namespace {

NodeInfo node(const QString &id, const QString &region, std::optional<double> load = 0.5)
{
    NodeInfo info;
    info.id = id;
    info.region = region;
    info.clientAddress = QStringLiteral("127.0.0.1:") + id;
    info.linkAddress = QStringLiteral("127.0.0.1:9") + id;
    info.startedAtMs = 1000;
    info.load = load;
    return info;
}

SnapshotInputs threeNodes()
{
    SnapshotInputs inputs;
    inputs.takenAtMs = 123456;
    inputs.self = node(QStringLiteral("b"), QStringLiteral("eu"));
    inputs.available = true;
    inputs.members = { node(QStringLiteral("c"), QStringLiteral("us")),
                       node(QStringLiteral("a"), QStringLiteral("eu")), inputs.self };
    NodeStats a;
    a.available = false;
    a.connections = 2;
    a.channels = 1;
    a.messagesInPerSecond = 3;
    a.messagesOutPerSecond = 4;
    a.cpuCores = 1.25;
    a.cpuCount = 2;
    a.residentBytes = 1 << 20;
    a.workers = { WorkerLoad{ 0.5, 2 }, WorkerLoad{ 0.75, 30 } };
    a.links = { LinkRate{ QStringLiteral("b"), 5, 500 }, LinkRate{ QStringLiteral("gone"), 1, 1 },
                LinkRate{ QStringLiteral("a"), 9, 9 } };
    a.tenants = { TenantRate{ QByteArrayLiteral("t1"), 3, 4 } };
    NodeStats b;
    b.connections = 1;
    b.links = { LinkRate{ QStringLiteral("a"), 6, 600 } };
    b.tenants = { TenantRate{ QByteArrayLiteral("t1"), 0, 5 } };
    NodeStats gone;
    gone.connections = 99;
    gone.tenants = { TenantRate{ QByteArrayLiteral("t1"), 7, 7 } };
    inputs.stats = { { QStringLiteral("a"), a },
                     { QStringLiteral("b"), b },
                     { QStringLiteral("gone"), gone } };
    inputs.users = { { QByteArrayLiteral("t1"),
                       { { QStringLiteral("a"), 2 },
                         { QStringLiteral("b"), 1 },
                         { QStringLiteral("gone"), 4 } } },
                     { QByteArrayLiteral("t0"), { { QStringLiteral("a"), 0 } } },
                     { QByteArrayLiteral("t2"), { { QStringLiteral("gone"), 3 } } } };
    inputs.streams = { { QByteArrayLiteral("t3"),
                         StreamPlacement{ QStringLiteral("c"), QStringLiteral("ready") } } };
    inputs.config.revision = 42;
    inputs.config.entries.insert(QStringLiteral("z"),
                                 ConfigEntry{ QStringLiteral("z"), "{\"x\":1}", 40, true });
    inputs.config.entries.insert(QStringLiteral("m"),
                                 ConfigEntry{ QStringLiteral("m"), "2", 41, false });
    // The temporary entry's end as the backend knows it; a stale one for a permanent key.
    inputs.configExpiries.insert(QStringLiteral("z"), 1796058123000);
    inputs.configExpiries.insert(QStringLiteral("m"), 1796058999000);
    return inputs;
}

} // namespace

class TestSnapshotBuilder : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void nodesAreMembersSortedWithTheirFigures()
    {
        LoadHistory history;
        history.record(10, { node(QStringLiteral("a"), QStringLiteral("eu"), 0.25) });
        history.record(20, { node(QStringLiteral("a"), QStringLiteral("eu"), 0.75) });
        const rt::api::ClusterSnapshot snapshot = buildSnapshot(threeNodes(), history);
        QCOMPARE(snapshot.takenAtMs, qint64(123456));
        QCOMPARE(snapshot.answeredBy, QStringLiteral("b"));
        QVERIFY(snapshot.available);
        QCOMPARE(snapshot.nodes.size(), qsizetype(3));
        QCOMPARE(snapshot.nodes[0].id, QStringLiteral("a"));
        QCOMPARE(snapshot.nodes[1].id, QStringLiteral("b"));
        QCOMPARE(snapshot.nodes[2].id, QStringLiteral("c"));
        const rt::api::NodeSnapshot &a = snapshot.nodes[0];
        QCOMPARE(a.region, QStringLiteral("eu"));
        QCOMPARE(a.clientAddress, QStringLiteral("127.0.0.1:a"));
        QCOMPARE(a.linkAddress, QStringLiteral("127.0.0.1:9a"));
        QCOMPARE(a.startedAtMs, qint64(1000));
        QCOMPARE(a.load, std::optional<double>(0.5));
        QCOMPARE(a.loadHistory.size(), qsizetype(2));
        QCOMPARE(a.loadHistory[1], (rt::api::LoadSample{ 20, 0.75 }));
        QCOMPARE(a.connections, qint64(2));
        QCOMPARE(a.channels, qint64(1));
        QCOMPARE(a.messagesInPerSecond, 3.0);
        QCOMPARE(a.messagesOutPerSecond, 4.0);
        QVERIFY(!a.available); // as it reported
        QCOMPARE(a.cpu, std::optional<double>(1.25));
        QCOMPARE(a.cpuCount, qint64(2));
        QCOMPARE(a.residentBytes, qint64(1) << 20);
        QCOMPARE(a.workers, (QList<rt::api::WorkerSnapshot>{ { 0.5, 2 }, { 0.75, 30 } }));
        QVERIFY(snapshot.nodes[1].available); // the answering node's own
        // c has not reported: zeros, and available (it holds a lease).
        QCOMPARE(snapshot.nodes[2].connections, qint64(0));
        QVERIFY(!snapshot.nodes[2].cpu.has_value());
        QVERIFY(snapshot.nodes[2].available);
        QVERIFY(snapshot.nodes[2].loadHistory.isEmpty());
    }

    void selfIsListedBeforeItsRecord()
    {
        SnapshotInputs inputs;
        inputs.self = node(QStringLiteral("solo"), QStringLiteral("local"));
        inputs.stats.insert(QStringLiteral("solo"),
                            NodeStats{ true, 4, 2, 1, 1, 0, 0, 0, {}, {}, {} });
        const rt::api::ClusterSnapshot snapshot = buildSnapshot(inputs, LoadHistory());
        QCOMPARE(snapshot.nodes.size(), qsizetype(1));
        QCOMPARE(snapshot.nodes[0].id, QStringLiteral("solo"));
        QCOMPARE(snapshot.nodes[0].connections, qint64(4));
        QVERIFY(snapshot.links.isEmpty());
    }

    void tenantsHaveUsersOnMembersOrAStream()
    {
        const rt::api::ClusterSnapshot snapshot = buildSnapshot(threeNodes(), LoadHistory());
        QCOMPARE(snapshot.tenants.size(), qsizetype(2));
        const rt::api::TenantPlacement &t1 = snapshot.tenants[0];
        QCOMPARE(t1.tenant, QStringLiteral("t1"));
        QVERIFY(t1.streamOwner.isEmpty());
        QVERIFY(t1.streamState.isEmpty());
        QCOMPARE(
                t1.usersByNode,
                (QHash<QString, qint64>{ { QStringLiteral("a"), 2 }, { QStringLiteral("b"), 1 } }));
        const rt::api::TenantPlacement &t3 = snapshot.tenants[1];
        QCOMPARE(t3.tenant, QStringLiteral("t3"));
        QCOMPARE(t3.streamOwner, QStringLiteral("c"));
        QCOMPARE(t3.streamState, QStringLiteral("ready"));
        QVERIFY(t3.usersByNode.isEmpty());
    }

    void flowsOfMembersOnly()
    {
        const rt::api::ClusterSnapshot snapshot = buildSnapshot(threeNodes(), LoadHistory());
        QCOMPARE(
                snapshot.links,
                (QList<rt::api::LinkFlow>{ { QStringLiteral("a"), QStringLiteral("b"), 5, 500 },
                                           { QStringLiteral("b"), QStringLiteral("a"), 6, 600 } }));
        QCOMPARE(snapshot.tenantFlows,
                 (QList<rt::api::TenantFlow>{
                         { QStringLiteral("t1"), QStringLiteral("a"), 3, 4 },
                         { QStringLiteral("t1"), QStringLiteral("b"), 0, 5 } }));
    }

    void configurationAsStored()
    {
        const rt::api::ClusterSnapshot snapshot = buildSnapshot(threeNodes(), LoadHistory());
        QCOMPARE(snapshot.configRevision, qint64(42));
        QCOMPARE(snapshot.config.size(), qsizetype(2));
        QCOMPARE(snapshot.config[0],
                 (rt::api::ConfigValue{ QStringLiteral("m"), "2", 41, false, std::nullopt }));
        QCOMPARE(snapshot.config[1],
                 (rt::api::ConfigValue{ QStringLiteral("z"), "{\"x\":1}", 40, true,
                                        1796058123000 }));
    }

    void survivesTheJsonMapping()
    {
        LoadHistory history;
        history.record(10, threeNodes().members);
        const rt::api::ClusterSnapshot snapshot = buildSnapshot(threeNodes(), history);
        const auto back = rt::api::ClusterSnapshot::fromJson(snapshot.toJson());
        QVERIFY(back.ok());
        QCOMPARE(*back, snapshot);
    }
};

QTEST_GUILESS_MAIN(TestSnapshotBuilder)
#include "tst_snapshot_builder.moc"
