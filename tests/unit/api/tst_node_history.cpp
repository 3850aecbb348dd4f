// The admin API's history of every node's figures (shared/api/node_history.h): a recorded
// history reads into the right values, what is written reads back equal, absent fields keep
// their defaults, and a sample of the wrong shape is an error naming its path and column.
#include "shared/api/node_history.h"
#include "tests/unit/api/recorded.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using rt::api::ClusterHistory;
using rt::api::NodeSample;

class TstNodeHistory : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void readsARecordedHistory()
    {
        const auto history = ClusterHistory::fromJson(recorded("history-2-nodes.json"));
        QVERIFY2(history.ok(), qPrintable(history ? QString() : history.error().message));
        QCOMPARE(history->answeredBy, QStringLiteral("node-a"));
        QCOMPARE(history->intervalMs, 5000);
        QCOMPARE(history->nodes.size(), 2);
        QCOMPARE(history->nodes[0].samples.size(), 2);
        QCOMPARE(history->nodes[0].samples[0],
                 (NodeSample{ 1796057990000, 0.5, 41943040, 10, 12, 100.5, 2000, 0.25,
                              std::nullopt }));
        QCOMPARE(history->nodes[0].samples[1].load, std::optional<double>(0.42));
        QVERIFY(history->nodes[1].samples.isEmpty());
    }

    void writesWhatItReads()
    {
        const auto history = ClusterHistory::fromJson(recorded("history-2-nodes.json"));
        QVERIFY(history.ok());
        const QJsonObject written = history->toJson();
        QCOMPARE(written.value(QLatin1String("columns")).toArray().size(), 9);
        const auto again = ClusterHistory::fromJson(QJsonDocument(written).toJson());
        QVERIFY(again.ok());
        QCOMPARE(*again, *history);
    }

    void absentFieldsKeepTheirDefaults()
    {
        const auto history = ClusterHistory::fromJson(QByteArray(R"({"nodes":[{"id":"n"}]})"));
        QVERIFY(history.ok());
        QCOMPARE(history->intervalMs, 5000);
        QVERIFY(history->nodes[0].samples.isEmpty());
    }

    void wrongShapesAreErrorsThatNameTheField_data()
    {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QString>("message");
        QTest::newRow("not json") << QByteArray("[") << QStringLiteral("the history is not JSON");
        QTest::newRow("array") << QByteArray("[]")
                               << QStringLiteral("the history is not a JSON object");
        QTest::newRow("samples an object") << QByteArray(R"({"nodes":[{"id":"a","samples":{}}]})")
                                           << QStringLiteral("nodes[0].samples must be an array");
        QTest::newRow("short sample")
                << QByteArray(R"({"nodes":[{"id":"a","samples":[[1,2,3]]}]})")
                << QStringLiteral("nodes[0].samples[0] must be an array of 9 numbers");
        QTest::newRow("sample not an array")
                << QByteArray(R"({"nodes":[{"id":"a","samples":[7]}]})")
                << QStringLiteral("nodes[0].samples[0] must be an array of 9 numbers");
        QTest::newRow("fractional time")
                << QByteArray(R"({"nodes":[{"id":"a","samples":[[1.5,0,0,0,0,0,0,0,null]]}]})")
                << QStringLiteral("nodes[0].samples[0][0] (at) must be an integer");
        QTest::newRow("negative connections")
                << QByteArray(R"({"nodes":[{"id":"a","samples":[[1,0,0,-1,0,0,0,0,null]]}]})")
                << QStringLiteral("nodes[0].samples[0][3] (connections) must be a non-negative");
        QTest::newRow("cpu a string")
                << QByteArray(R"({"nodes":[{"id":"a","samples":[[1,"x",0,0,0,0,0,0,null]]}]})")
                << QStringLiteral("nodes[0].samples[0][1] (cpu) must be a non-negative number");
        QTest::newRow("load a string")
                << QByteArray(R"({"nodes":[{"id":"a","samples":[[1,0,0,0,0,0,0,0,"x"]]}]})")
                << QStringLiteral("nodes[0].samples[0][8] (load) must be a number or null");
        QTest::newRow("huge rss") << QByteArray(
                R"({"nodes":[{"id":"a","samples":[[1,0,1e300,0,0,0,0,0,null]]}]})")
                                  << QStringLiteral("nodes[0].samples[0][2] (rss_bytes)");
        QTest::newRow("node without id") << QByteArray(R"({"nodes":[{"samples":[]}]})")
                                         << QStringLiteral("nodes[0].id must be a non-empty");
    }

    void wrongShapesAreErrorsThatNameTheField()
    {
        QFETCH(QByteArray, json);
        QFETCH(QString, message);
        const auto history = ClusterHistory::fromJson(json);
        QVERIFY(!history.ok());
        QVERIFY2(history.error().message.startsWith(message), qPrintable(history.error().message));
    }
};

QTEST_APPLESS_MAIN(TstNodeHistory)
#include "tst_node_history.moc"
