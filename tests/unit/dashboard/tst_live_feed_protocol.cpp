// The live feed's Phoenix conversation without a socket: the frames the dashboard sends and
// what each server frame means (docs/admin-api.md).
#include "dashboard/api/live_feed_protocol.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using rt::dashboard::LiveFeedProtocol;
using Kind = LiveFeedProtocol::Event::Kind;

Q_DECLARE_METATYPE(Kind)

namespace {

QByteArray recordedSnapshot()
{
    QFile file(QStringLiteral(RT_API_TEST_DATA "/snapshot-3-nodes.json"));
    if (!file.open(QIODevice::ReadOnly)) {
        qFatal("cannot read the recorded snapshot");
    }
    return file.readAll();
}

QJsonObject parse(const QByteArray &frame)
{
    return QJsonDocument::fromJson(frame).object();
}

} // namespace

class LiveFeedProtocolTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void joinAndHeartbeatFrames()
    {
        LiveFeedProtocol protocol;
        const QJsonObject join = parse(protocol.joinFrame());
        QCOMPARE(join.value(QLatin1String("topic")).toString(), QStringLiteral("admin:cluster"));
        QCOMPARE(join.value(QLatin1String("event")).toString(), QStringLiteral("phx_join"));
        QVERIFY(join.value(QLatin1String("payload")).isObject());
        QCOMPARE(join.value(QLatin1String("ref")).toString(), QStringLiteral("1"));
        QCOMPARE(join.value(QLatin1String("join_ref")).toString(), QStringLiteral("1"));

        QVERIFY(!protocol.isHeartbeatPending());
        const QJsonObject heartbeat = parse(protocol.heartbeatFrame());
        QCOMPARE(heartbeat.value(QLatin1String("topic")).toString(), QStringLiteral("phoenix"));
        QCOMPARE(heartbeat.value(QLatin1String("event")).toString(), QStringLiteral("heartbeat"));
        QCOMPARE(heartbeat.value(QLatin1String("ref")).toString(), QStringLiteral("2"));
        QVERIFY(!heartbeat.contains(QLatin1String("join_ref")));
        QVERIFY(protocol.isHeartbeatPending());
    }

    void aConversation()
    {
        LiveFeedProtocol protocol;
        protocol.joinFrame();
        QVERIFY(!protocol.isJoined());
        LiveFeedProtocol::Event event = protocol.handleFrame(
                R"({"topic":"admin:cluster","event":"phx_reply","payload":{"status":"ok","response":{}},"ref":"1","join_ref":"1"})");
        QCOMPARE(event.kind, Kind::Joined);
        QVERIFY(protocol.isJoined());

        const QByteArray push =
                QByteArray(R"({"topic":"admin:cluster","event":"snapshot","payload":)")
                + recordedSnapshot() + QByteArray(R"(,"ref":null,"join_ref":"1"})");
        event = protocol.handleFrame(push);
        QCOMPARE(event.kind, Kind::Snapshot);
        QCOMPARE(event.snapshot.answeredBy, QStringLiteral("node-a"));
        QCOMPARE(event.snapshot.nodes.size(), 3);
        QCOMPARE(event.snapshot.nodes.at(1).clientAddress, QStringLiteral("10.0.0.2:4000"));

        protocol.heartbeatFrame(); // ref "2"
        event = protocol.handleFrame(
                R"({"topic":"phoenix","event":"phx_reply","payload":{"status":"ok","response":{}},"ref":"2"})");
        QCOMPARE(event.kind, Kind::HeartbeatAcknowledged);
        QVERIFY(!protocol.isHeartbeatPending());
    }

    void repliesToOtherRefsAreIgnored()
    {
        LiveFeedProtocol protocol;
        protocol.joinFrame(); // "1"
        protocol.heartbeatFrame(); // "2"
        QCOMPARE(
                protocol.handleFrame(
                                R"({"topic":"phoenix","event":"phx_reply","payload":{"status":"ok","response":{}},"ref":"7"})")
                        .kind,
                Kind::Ignored);
        QVERIFY(protocol.isHeartbeatPending());
        // A numeric ref is not the string ref the dashboard sent.
        QCOMPARE(
                protocol.handleFrame(
                                R"({"topic":"admin:cluster","event":"phx_reply","payload":{"status":"ok","response":{}},"ref":1})")
                        .kind,
                Kind::Ignored);
        QVERIFY(!protocol.isJoined());
        QCOMPARE(
                protocol.handleFrame(
                                R"({"topic":"realtime:other","event":"snapshot","payload":{},"ref":null})")
                        .kind,
                Kind::Ignored);
        QCOMPARE(
                protocol.handleFrame(
                                R"({"topic":"admin:cluster","event":"presence_diff","payload":{},"ref":null})")
                        .kind,
                Kind::Ignored);
    }

    void failures_data()
    {
        QTest::addColumn<QByteArray>("frame");
        QTest::addColumn<Kind>("kind");
        QTest::addColumn<QString>("text");
        QTest::newRow("join refused with a reason") << QByteArray(
                R"({"topic":"admin:cluster","event":"phx_reply","payload":{"status":"error","response":{"reason":"unauthorized"}},"ref":"1"})")
                                                    << Kind::JoinRefused
                                                    << QStringLiteral(
                                                               "The server refused to send the "
                                                               "live feed: unauthorized");
        QTest::newRow("join refused without one") << QByteArray(
                R"({"topic":"admin:cluster","event":"phx_reply","payload":{"status":"error"},"ref":"1"})")
                                                  << Kind::JoinRefused
                                                  << QStringLiteral(
                                                             "The server refused to send the live "
                                                             "feed (status \"error\").");
        QTest::newRow("snapshot with a wrong type") << QByteArray(
                R"({"topic":"admin:cluster","event":"snapshot","payload":{"nodes":[{"id":"a","connections":"many"}]},"ref":null})")
                                                    << Kind::SnapshotRejected
                                                    << QStringLiteral("A snapshot from the live "
                                                                      "feed could not be read: "
                                                                      "nodes[0].connections must "
                                                                      "be an integer");
        QTest::newRow("snapshot that is not an object") << QByteArray(
                R"({"topic":"admin:cluster","event":"snapshot","payload":[1],"ref":null})")
                                                        << Kind::SnapshotRejected
                                                        << QStringLiteral("A snapshot from the "
                                                                          "live feed could not be "
                                                                          "read: the snapshot "
                                                                          "is not a JSON object");
        QTest::newRow("channel closed") << QByteArray(
                R"({"topic":"admin:cluster","event":"phx_close","payload":{},"ref":"1"})")
                                        << Kind::ChannelClosed
                                        << QStringLiteral("The server closed the live feed's "
                                                          "channel (phx_close).");
        QTest::newRow("not JSON")
                << QByteArray("{\"topic\":") << Kind::Malformed
                << QStringLiteral("The live feed sent a frame that is not a Phoenix message: V1 "
                                  "text frame is not valid JSON");
        QTest::newRow("no event")
                << QByteArray(R"({"topic":"admin:cluster","payload":{},"ref":null})")
                << Kind::Malformed
                << QStringLiteral("The live feed sent a frame that is not a Phoenix message: V1 "
                                  "text frame lacks one of topic, event, payload, ref");
    }
    void failures()
    {
        QFETCH(QByteArray, frame);
        QFETCH(Kind, kind);
        QFETCH(QString, text);
        LiveFeedProtocol protocol;
        protocol.joinFrame();
        const LiveFeedProtocol::Event event = protocol.handleFrame(frame);
        QCOMPARE(event.kind, kind);
        QCOMPARE(event.text, text);
        QVERIFY(!protocol.isJoined());
    }

    void resetForgetsTheOldConnection()
    {
        LiveFeedProtocol protocol;
        protocol.joinFrame(); // "1"
        protocol.heartbeatFrame(); // "2"
        protocol.reset();
        QVERIFY(!protocol.isHeartbeatPending());
        // The old join's reply no longer counts; refs keep counting up.
        QCOMPARE(
                protocol.handleFrame(
                                R"({"topic":"admin:cluster","event":"phx_reply","payload":{"status":"ok","response":{}},"ref":"1"})")
                        .kind,
                Kind::Ignored);
        QCOMPARE(parse(protocol.joinFrame()).value(QLatin1String("ref")).toString(),
                 QStringLiteral("3"));
    }
};

QTEST_GUILESS_MAIN(LiveFeedProtocolTest)
#include "tst_live_feed_protocol.moc"
