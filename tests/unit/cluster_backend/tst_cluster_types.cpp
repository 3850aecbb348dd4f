// The cluster's value types: node records and claim values come from other nodes (through
// etcd), so every malformation must be an error value.
#include "server/cluster/types.h"

#include <QTest>

using namespace rt::cluster;

namespace {

const char FullRecord[] =
        R"({"id":"n1","region":"eu","client_address":"127.0.0.1:4000",)"
        R"("link_address":"127.0.0.1:4100","started_at":1700000000123,"load":0.75})";

} // namespace

class TstClusterTypes : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void nodeRoundTrip();
    void nodeWithoutLoad();
    void nodeFromRecord();
    void badNodeRecords_data();
    void badNodeRecords();
    void claimValueRoundTrip();
    void badClaimValues_data();
    void badClaimValues();
    void claimOrder();
    void snapshotFind();
};

void TstClusterTypes::nodeRoundTrip()
{
    NodeInfo node{ QStringLiteral("node-a"), QStringLiteral("eu"), QStringLiteral("h:1"),
                   QStringLiteral("h:2"),    1'700'000'000'123,    1.5 };
    const auto back = NodeInfo::fromJson(node.toJsonBytes());
    QVERIFY(back.ok());
    QCOMPARE(*back, node);
}

void TstClusterTypes::nodeWithoutLoad()
{
    NodeInfo node{ QStringLiteral("node-a"), QStringLiteral("local"), {}, {}, 5, std::nullopt };
    const QByteArray json = node.toJsonBytes();
    QVERIFY(json.contains("\"load\":null"));
    const auto back = NodeInfo::fromJson(json);
    QVERIFY(back.ok());
    QVERIFY(!back->load.has_value());
    QCOMPARE(*back, node);
}

void TstClusterTypes::nodeFromRecord()
{
    const auto node = NodeInfo::fromJson(QByteArrayView(FullRecord));
    QVERIFY(node.ok());
    QCOMPARE(node->id, QStringLiteral("n1"));
    QCOMPARE(node->region, QStringLiteral("eu"));
    QCOMPARE(node->clientAddress, QStringLiteral("127.0.0.1:4000"));
    QCOMPARE(node->linkAddress, QStringLiteral("127.0.0.1:4100"));
    QCOMPARE(node->startedAtMs, 1'700'000'000'123);
    QCOMPARE(node->load, std::optional<double>(0.75));
    // Only the id is required.
    const auto minimal = NodeInfo::fromJson(QByteArrayView(R"({"id":"x"})"));
    QVERIFY(minimal.ok());
    QCOMPARE(minimal->startedAtMs, 0);
    QVERIFY(!minimal->load);
}

void TstClusterTypes::badNodeRecords_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::newRow("empty") << QByteArray();
    QTest::newRow("not json") << QByteArray("node");
    QTest::newRow("array") << QByteArray(R"(["id"])");
    QTest::newRow("no id") << QByteArray(R"({"region":"eu"})");
    QTest::newRow("empty id") << QByteArray(R"({"id":""})");
    QTest::newRow("numeric id") << QByteArray(R"({"id":7})");
    QTest::newRow("region object") << QByteArray(R"({"id":"a","region":{}})");
    QTest::newRow("address number") << QByteArray(R"({"id":"a","link_address":5})");
    QTest::newRow("started string") << QByteArray(R"({"id":"a","started_at":"5"})");
    QTest::newRow("started fraction") << QByteArray(R"({"id":"a","started_at":1.5})");
    QTest::newRow("started negative") << QByteArray(R"({"id":"a","started_at":-1})");
    QTest::newRow("started huge") << QByteArray(R"({"id":"a","started_at":1e300})");
    QTest::newRow("load string") << QByteArray(R"({"id":"a","load":"0.5"})");
    QTest::newRow("load negative") << QByteArray(R"({"id":"a","load":-0.5})");
    QTest::newRow("truncated") << QByteArray(FullRecord).left(40);
}

void TstClusterTypes::badNodeRecords()
{
    QFETCH(QByteArray, json);
    const auto node = NodeInfo::fromJson(json);
    QVERIFY(!node.ok());
    QVERIFY(!node.error().message.isEmpty());
}

void TstClusterTypes::claimValueRoundTrip()
{
    const QByteArray metadata = R"({"state":"ready","link":"10.0.0.1:4100","ü":1})";
    const QByteArray encoded = encodeClaimValue(QStringLiteral("node-b"), metadata);
    const auto decoded = decodeClaimValue(encoded);
    QVERIFY(decoded.ok());
    QCOMPARE(decoded->owner, QStringLiteral("node-b"));
    QCOMPARE(decoded->metadata, metadata); // byte for byte, not re-serialised
    const auto empty = decodeClaimValue(encodeClaimValue(QStringLiteral("n"), {}));
    QVERIFY(empty.ok());
    QVERIFY(empty->metadata.isEmpty());
}

void TstClusterTypes::badClaimValues_data()
{
    QTest::addColumn<QByteArray>("value");
    QTest::newRow("empty") << QByteArray();
    QTest::newRow("garbage") << QByteArray("\xff\xfe");
    QTest::newRow("no owner") << QByteArray(R"({"metadata":"{}"})");
    QTest::newRow("owner number") << QByteArray(R"({"owner":1})");
    QTest::newRow("metadata object") << QByteArray(R"({"owner":"a","metadata":{}})");
}

void TstClusterTypes::badClaimValues()
{
    QFETCH(QByteArray, value);
    QVERIFY(!decodeClaimValue(value).ok());
}

void TstClusterTypes::claimOrder()
{
    const Claim older{ QStringLiteral("r"), QStringLiteral("zeta"), {}, 10, 10 };
    const Claim newer{ QStringLiteral("r"), QStringLiteral("alpha"), {}, 11, 11 };
    QVERIFY(claimWins(older, newer));
    QVERIFY(!claimWins(newer, older));
    const Claim tieA{ QStringLiteral("r"), QStringLiteral("a"), {}, 7, 7 };
    const Claim tieB{ QStringLiteral("r"), QStringLiteral("b"), {}, 7, 9 };
    QVERIFY(claimWins(tieA, tieB));
    QVERIFY(!claimWins(tieB, tieA));
}

void TstClusterTypes::snapshotFind()
{
    ConfigSnapshot snapshot;
    snapshot.entries.insert(QStringLiteral("k"), ConfigEntry{ QStringLiteral("k"), "v", 3, true });
    QVERIFY(!snapshot.find(QStringLiteral("missing")));
    QCOMPARE(snapshot.find(QStringLiteral("k"))->value, QByteArray("v"));
}

QTEST_GUILESS_MAIN(TstClusterTypes)
#include "tst_cluster_types.moc"
