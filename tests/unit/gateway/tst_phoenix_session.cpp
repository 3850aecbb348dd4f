// Phoenix socket semantics over a real WebSocket against an in-process node: heartbeats,
// routing rules (spec server §2.6), exact reply bytes with echoed refs, rejoin and leave, the
// lenient join_ref rule, malformed frames, and fan-out between V1 and V2 sockets.
#include "server/auth/jwt.h"
#include "tests/support/server/phoenix_client.h"
#include "tests/support/server/test_server.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTest>

using rt::testsupport::PhoenixClient;
using rt::testsupport::TestServer;

namespace {

// `frame` with the topic position every broadcast carries (,"meta":{"epoch":…,"offset":n} at the
// end of the object) taken out; empty when it has none.
QByteArray withoutPosition(const QByteArray &frame, int offset)
{
    static const QRegularExpression Position(
            QStringLiteral(R"(,"meta":\{"epoch":"[0-9a-f]{16}","offset":(\d+)\}\}\]$)"));
    const QRegularExpressionMatch match = Position.match(QString::fromUtf8(frame));
    if (!match.hasMatch() || match.captured(1).toInt() != offset) {
        return {};
    }
    return frame.left(match.capturedStart()) + "}]";
}

// `text` with its one "meta":{"epoch":…,"offset":<offset>}, member taken out; empty without.
QByteArray withoutMetaMember(const QByteArray &text, int offset)
{
    static const QRegularExpression Meta(
            QStringLiteral(R"("meta":\{"epoch":"[0-9a-f]{16}","offset":(\d+)\},)"));
    const QRegularExpressionMatch match = Meta.match(QString::fromUtf8(text));
    if (!match.hasMatch() || match.captured(1).toInt() != offset) {
        return {};
    }
    return text.left(match.capturedStart()) + text.mid(match.capturedEnd());
}

} // namespace

class PhoenixSessionTest : public QObject
{
    Q_OBJECT

private:
    std::unique_ptr<PhoenixClient> connectClient(const char *vsn)
    {
        const QUrl url = m_server.socketUrl(vsn);
        auto client = std::make_unique<PhoenixClient>(url);
        if (!client->open()) {
            return nullptr;
        }
        return client;
    }

    // Joins `topic` on a V2 socket with join_ref = ref = `ref`; returns the reply frame.
    static QByteArray joinV2(PhoenixClient &client, const QByteArray &topic, const QByteArray &ref,
                             const QByteArray &config = "{}")
    {
        client.sendText("[\"" + ref + "\",\"" + ref + "\",\"" + topic
                        + "\",\"phx_join\",{\"config\":" + config + "}]");
        return client.waitForText("\"phx_reply\"");
    }

    TestServer m_server;

private Q_SLOTS:
    void initTestCase() { QVERIFY2(m_server.start(), qPrintable(m_server.failure())); }

    void heartbeatIsAnsweredWithTheSameRef_data()
    {
        QTest::addColumn<QByteArray>("vsn");
        QTest::addColumn<QByteArray>("heartbeat");
        QTest::addColumn<QByteArray>("reply");
        QTest::newRow("v2") << QByteArray("2.0.0")
                            << QByteArray("[null,\"12\",\"phoenix\",\"heartbeat\",{}]")
                            << QByteArray("[null,\"12\",\"phoenix\",\"phx_reply\",{\"status\":"
                                          "\"ok\",\"response\":{}}]");
        QTest::newRow("v1") << QByteArray("1.0.0")
                            << QByteArray("{\"topic\":\"phoenix\",\"event\":\"heartbeat\","
                                          "\"payload\":{},\"ref\":\"12\"}")
                            << QByteArray(
                                       "{\"topic\":\"phoenix\",\"event\":\"phx_reply\",\"payload\":"
                                       "{\"status\":\"ok\",\"response\":{}},\"ref\":\"12\"}");
    }
    void heartbeatIsAnsweredWithTheSameRef()
    {
        QFETCH(QByteArray, vsn);
        QFETCH(QByteArray, heartbeat);
        QFETCH(QByteArray, reply);
        auto client = connectClient(vsn.constData());
        QVERIFY(client);
        client->sendText(heartbeat);
        QCOMPARE(client->waitForText("phx_reply"), reply);
    }

    void numericRefsAreEchoedAsNumbers()
    {
        auto client = connectClient("2.0.0");
        QVERIFY(client);
        client->sendText("[null,7,\"phoenix\",\"heartbeat\",{}]");
        QCOMPARE(client->waitForText("phx_reply"),
                 QByteArray(
                         "[null,7,\"phoenix\",\"phx_reply\",{\"status\":\"ok\",\"response\":{}}]"));
    }

    void joinRepliesWithEmptyPostgresChanges()
    {
        auto client = connectClient("2.0.0");
        QVERIFY(client);
        QCOMPARE(joinV2(*client, "realtime:room", "3"),
                 QByteArray("[\"3\",\"3\",\"realtime:room\",\"phx_reply\",{\"status\":\"ok\","
                            "\"response\":{\"postgres_changes\":[]}}]"));
    }

    void v1JoinReplyHasNoJoinRef()
    {
        auto client = connectClient("1.0.0");
        QVERIFY(client);
        client->sendText("{\"topic\":\"realtime:v1room\",\"event\":\"phx_join\",\"payload\":{"
                         "\"config\":{}},\"ref\":\"5\",\"join_ref\":\"5\"}");
        QCOMPARE(client->waitForText("phx_reply"),
                 QByteArray("{\"topic\":\"realtime:v1room\",\"event\":\"phx_reply\",\"payload\":{"
                            "\"status\":\"ok\",\"response\":{\"postgres_changes\":[]}},\"ref\":"
                            "\"5\"}"));
    }

    void eventsOnUnjoinedTopicsAreUnmatched()
    {
        auto client = connectClient("2.0.0");
        QVERIFY(client);
        client->sendText("[\"1\",\"2\",\"realtime:nowhere\",\"broadcast\",{\"type\":\"broadcast\","
                         "\"event\":\"x\",\"payload\":{}}]");
        QCOMPARE(client->waitForText("phx_reply"),
                 QByteArray("[\"1\",\"2\",\"realtime:nowhere\",\"phx_reply\",{\"status\":\"error\","
                            "\"response\":{\"reason\":\"unmatched topic\"}}]"));
        client->sendText("[\"4\",\"4\",\"lobby\",\"phx_join\",{}]");
        QCOMPARE(client->waitForText("phx_reply"),
                 QByteArray("[\"4\",\"4\",\"lobby\",\"phx_reply\",{\"status\":\"error\","
                            "\"response\":{\"reason\":\"unmatched topic\"}}]"));
    }

    void leaveRepliesOkThenCloses()
    {
        auto client = connectClient("2.0.0");
        QVERIFY(client);
        QVERIFY(joinV2(*client, "realtime:leave", "1").contains("\"ok\""));
        client->sendText("[\"1\",\"2\",\"realtime:leave\",\"phx_leave\",{}]");
        QCOMPARE(client->waitForText("phx_reply"),
                 QByteArray("[\"1\",\"2\",\"realtime:leave\",\"phx_reply\",{\"status\":\"ok\","
                            "\"response\":{}}]"));
        QCOMPARE(client->waitForText("phx_close"),
                 QByteArray("[\"1\",\"1\",\"realtime:leave\",\"phx_close\",{}]"));
        // The topic is gone: events on it are unmatched now.
        client->sendText("[\"1\",\"3\",\"realtime:leave\",\"presence\",{\"type\":\"presence\","
                         "\"event\":\"untrack\"}]");
        QVERIFY(client->waitForText("phx_reply").contains("unmatched topic"));
    }

    void leaveOfUnknownTopicIsOk()
    {
        auto client = connectClient("2.0.0");
        QVERIFY(client);
        client->sendText("[\"9\",\"10\",\"realtime:never\",\"phx_leave\",{}]");
        QCOMPARE(client->waitForText("phx_reply"),
                 QByteArray("[\"9\",\"10\",\"realtime:never\",\"phx_reply\",{\"status\":\"ok\","
                            "\"response\":{}}]"));
        QVERIFY(client->staysSilent("phx_close"));
    }

    void leaveWithStaleJoinRefIsIgnored()
    {
        auto client = connectClient("2.0.0");
        QVERIFY(client);
        QVERIFY(joinV2(*client, "realtime:stale", "20").contains("\"ok\""));
        client->sendText("[\"19\",\"21\",\"realtime:stale\",\"phx_leave\",{}]");
        QVERIFY(client->staysSilent("realtime:stale"));
        // Still joined: an acked broadcast is answered.
        client->sendText("[\"20\",\"22\",\"realtime:stale\",\"broadcast\",{\"type\":\"broadcast\","
                         "\"event\":\"e\",\"payload\":{}}]");
        QVERIFY(client->staysSilent("unmatched"));
    }

    void rejoinClosesTheOldJoinFirst()
    {
        auto client = connectClient("2.0.0");
        QVERIFY(client);
        QVERIFY(joinV2(*client, "realtime:again", "1").contains("\"ok\""));
        client->sendText("[\"6\",\"6\",\"realtime:again\",\"phx_join\",{\"config\":{}}]");
        QCOMPARE(client->waitForText("phx_close"),
                 QByteArray("[\"1\",\"1\",\"realtime:again\",\"phx_close\",{}]"));
        QCOMPARE(client->waitForText("phx_reply"),
                 QByteArray("[\"6\",\"6\",\"realtime:again\",\"phx_reply\",{\"status\":\"ok\","
                            "\"response\":{\"postgres_changes\":[]}}]"));
        // Frames arrive in order: the close of the old join before the new reply.
    }

    void eventsWithStaleOrMissingJoinRefAreProcessed()
    {
        auto client = connectClient("2.0.0");
        QVERIFY(client);
        QVERIFY(joinV2(*client, "realtime:lenient", "1", "{\"broadcast\":{\"ack\":true}}")
                        .contains("\"ok\""));
        client->sendText("[\"999\",\"2\",\"realtime:lenient\",\"broadcast\",{\"type\":"
                         "\"broadcast\",\"event\":\"e\",\"payload\":{}}]");
        QCOMPARE(client->waitForText("phx_reply"),
                 QByteArray("[\"1\",\"2\",\"realtime:lenient\",\"phx_reply\",{\"status\":\"ok\","
                            "\"response\":{}}]"));
        client->sendText("[null,\"3\",\"realtime:lenient\",\"broadcast\",{\"type\":\"broadcast\","
                         "\"event\":\"e\",\"payload\":{}}]");
        QCOMPARE(client->waitForText("phx_reply"),
                 QByteArray("[\"1\",\"3\",\"realtime:lenient\",\"phx_reply\",{\"status\":\"ok\","
                            "\"response\":{}}]"));
    }

    void malformedFramesAreDroppedAndTheSocketStays()
    {
        auto client = connectClient("2.0.0");
        QVERIFY(client);
        client->sendText("not json");
        client->sendText("{\"topic\":\"phoenix\"}");
        client->sendText("[\"1\",\"2\"]");
        client->sendBinary(QByteArray("\x03\x10\x10", 3)); // truncated kind 3
        client->sendText("[null,\"50\",\"phoenix\",\"heartbeat\",{}]");
        QVERIFY(client->waitForText("\"50\"").contains("phx_reply"));
        QVERIFY(client->isConnected());
    }

    void v1AndV2SocketsSeeEachOther()
    {
        auto v1 = connectClient("1.0.0");
        auto v2 = connectClient("2.0.0");
        QVERIFY(v1 && v2);
        v1->sendText("{\"topic\":\"realtime:mixed\",\"event\":\"phx_join\",\"payload\":{\"config\":"
                     "{}},\"ref\":\"1\",\"join_ref\":\"1\"}");
        QVERIFY(v1->waitForText("phx_reply").contains("\"ok\""));
        QVERIFY(joinV2(*v2, "realtime:mixed", "1").contains("\"ok\""));

        // V1 text broadcast -> V2 text frame carrying the same object.
        v1->sendText("{\"topic\":\"realtime:mixed\",\"event\":\"broadcast\",\"payload\":{\"type\":"
                     "\"broadcast\",\"event\":\"hi\",\"payload\":{\"from\":\"v1\"}},\"ref\":\"2\","
                     "\"join_ref\":\"1\"}");
        QCOMPARE(withoutPosition(v2->waitForText("\"broadcast\""), 1),
                 QByteArray("[null,null,\"realtime:mixed\",\"broadcast\",{\"type\":\"broadcast\","
                            "\"event\":\"hi\",\"payload\":{\"from\":\"v1\"}}]"));

        // V2 kind-3 JSON broadcast -> kind 4 to V2 (not self here), converted JSON to V1.
        QByteArray kind3("\x03\x01\x01\x0e\x02\x00\x01", 7);
        kind3 += "1"
                 "3"
                 "realtime:mixed"
                 "hi"
                 "{\"from\":\"v2\"}";
        v2->sendBinary(kind3);
        QCOMPARE(withoutMetaMember(v1->waitForText("\"broadcast\""), 2),
                 QByteArray("{\"topic\":\"realtime:mixed\",\"event\":\"broadcast\",\"payload\":{"
                            "\"event\":\"hi\",\"payload\":{\"from\":\"v2\"},\"type\":\"broadcast\"}"
                            ",\"ref\":null}"));

        // Raw binary (encoding 0) reaches V2 sockets only.
        auto other = connectClient("2.0.0");
        QVERIFY(other);
        QVERIFY(joinV2(*other, "realtime:mixed", "1").contains("\"ok\""));
        QByteArray raw("\x03\x01\x01\x0e\x03\x00\x00", 7);
        raw += QByteArray("1"
                          "4"
                          "realtime:mixed"
                          "bin")
                + QByteArray("\x01\x02\x03", 3);
        v2->sendBinary(raw);
        const QByteArray kind4 = other->waitForBinary();
        QVERIFY(kind4.size() > 5);
        // The metadata (header byte 3 its length, after topic and event) is the position only.
        const auto metadataLength = static_cast<quint8>(kind4.at(3));
        const QByteArray metadata = kind4.mid(5 + 14 + 3, metadataLength);
        QVERIFY2(QRegularExpression(QStringLiteral(R"(^\{"epoch":"[0-9a-f]{16}","offset":3\}$)"))
                         .match(QString::fromUtf8(metadata))
                         .hasMatch(),
                 metadata.constData());
        QByteArray expected("\x04\x0e\x03\x00\x00", 5);
        expected += QByteArray("realtime:mixed"
                               "bin")
                + QByteArray("\x01\x02\x03", 3);
        QByteArray withoutMetadata = kind4;
        withoutMetadata.remove(5 + 14 + 3, metadataLength);
        withoutMetadata[3] = '\0';
        QCOMPARE(withoutMetadata, expected);
        QVERIFY(v1->staysSilent("bin"));
    }

    void selfAndAckFollowTheJoinConfig()
    {
        auto client = connectClient("2.0.0");
        QVERIFY(client);
        QVERIFY(joinV2(*client, "realtime:self", "1",
                       "{\"broadcast\":{\"self\":true,\"ack\":true}}")
                        .contains("\"ok\""));
        client->sendText("[\"1\",\"2\",\"realtime:self\",\"broadcast\",{\"type\":\"broadcast\","
                         "\"event\":\"me\",\"payload\":{\"n\":1}}]");
        QVERIFY(client->waitForText("phx_reply").contains("\"ok\""));
        QCOMPARE(withoutPosition(client->waitForText("\"broadcast\""), 1),
                 QByteArray("[null,null,\"realtime:self\",\"broadcast\",{\"type\":\"broadcast\","
                            "\"event\":\"me\",\"payload\":{\"n\":1}}]"));

        auto quiet = connectClient("2.0.0");
        QVERIFY(quiet);
        QVERIFY(joinV2(*quiet, "realtime:noself", "1").contains("\"ok\""));
        quiet->sendText("[\"1\",\"2\",\"realtime:noself\",\"broadcast\",{\"type\":\"broadcast\","
                        "\"event\":\"me\",\"payload\":{}}]");
        // Neither an ack (ack off) nor an echo (self off).
        QVERIFY(quiet->staysSilent("realtime:noself"));
    }

    void presenceStateFollowsJoinAndTrackProducesDiffs()
    {
        auto first = connectClient("2.0.0");
        QVERIFY(first);
        QVERIFY(joinV2(*first, "realtime:lobby", "1",
                       "{\"presence\":{\"key\":\"ann\",\"enabled\":true}}")
                        .contains("\"ok\""));
        QCOMPARE(first->waitForText("presence_state"),
                 QByteArray("[\"1\",null,\"realtime:lobby\",\"presence_state\",{}]"));
        first->sendText("[\"1\",\"2\",\"realtime:lobby\",\"presence\",{\"type\":\"presence\","
                        "\"event\":\"track\",\"payload\":{\"name\":\"Ann\"}}]");
        QCOMPARE(first->waitForText("phx_reply"),
                 QByteArray("[\"1\",\"2\",\"realtime:lobby\",\"phx_reply\",{\"status\":\"ok\","
                            "\"response\":{}}]"));
        const QByteArray diff = first->waitForText("presence_diff");
        QVERIFY(diff.startsWith("[null,null,\"realtime:lobby\",\"presence_diff\",{\"joins\":{"
                                "\"ann\":{\"metas\":[{\"name\":\"Ann\",\"phx_ref\":\""));
        QVERIFY(diff.endsWith("\"}]}},\"leaves\":{}}]"));

        // A second member gets the state with Ann in it.
        auto second = connectClient("1.0.0");
        QVERIFY(second);
        second->sendText("{\"topic\":\"realtime:lobby\",\"event\":\"phx_join\",\"payload\":{"
                         "\"config\":{\"presence\":{\"enabled\":true,\"key\":\"bob\"}}},\"ref\":"
                         "\"1\",\"join_ref\":\"1\"}");
        QVERIFY(second->waitForText("phx_reply").contains("\"ok\""));
        const QByteArray state = second->waitForText("presence_state");
        QVERIFY2(
                state.contains("\"payload\":{\"ann\":{\"metas\":[{\"name\":\"Ann\",\"phx_ref\":\""),
                state.constData());

        // Leaving removes Ann for Bob.
        first->close();
        const QByteArray leave = second->waitForText("presence_diff");
        QVERIFY2(leave.contains("\"joins\":{},\"leaves\":{\"ann\":{\"metas\":[{\"name\":\"Ann\""),
                 leave.constData());
    }

    void trackWithoutPresenceEnabledSendsState()
    {
        auto client = connectClient("2.0.0");
        QVERIFY(client);
        QVERIFY(joinV2(*client, "realtime:late", "1", "{\"presence\":{\"key\":\"k\"}}")
                        .contains("\"ok\""));
        QVERIFY(client->staysSilent("presence_state"));
        client->sendText("[\"1\",\"2\",\"realtime:late\",\"presence\",{\"type\":\"presence\","
                         "\"event\":\"track\",\"payload\":{\"a\":1}}]");
        QVERIFY(client->waitForText("phx_reply").contains("\"ok\""));
        const QByteArray state = client->waitForText("presence_state");
        QVERIFY2(state.contains("{\"k\":{\"metas\":[{\"a\":1,\"phx_ref\":\""), state.constData());
    }

    void presencePushesPastTheClientLimitCloseTheChannel()
    {
        // Default limit: 5 presence pushes per channel per 30 s; the 6th shuts the channel down.
        auto client = connectClient("2.0.0");
        QVERIFY(client);
        QVERIFY(joinV2(*client, "realtime:limit", "1").contains("\"ok\""));
        for (int i = 1; i <= 5; ++i) {
            client->sendText("[\"1\",\"" + QByteArray::number(i + 1)
                             + "\",\"realtime:limit\",\"presence\",{\"type\":\"presence\","
                               "\"event\":\"track\",\"payload\":{\"i\":"
                             + QByteArray::number(i) + "}}]");
            QVERIFY(client->waitForText("phx_reply").contains("\"ok\""));
        }
        client->sendText("[\"1\",\"9\",\"realtime:limit\",\"presence\",{\"type\":\"presence\","
                         "\"event\":\"untrack\"}]");
        QCOMPARE(client->waitForText("\"system\""),
                 QByteArray("[\"1\",null,\"realtime:limit\",\"system\",{\"channel\":\"limit\","
                            "\"extension\":\"system\",\"message\":\"Client presence rate limit "
                            "exceeded\",\"status\":\"error\"}]"));
        QCOMPARE(client->waitForText("phx_close"),
                 QByteArray("[\"1\",\"1\",\"realtime:limit\",\"phx_close\",{}]"));
        QVERIFY(client->staysSilent("\"9\""));
    }

    void invalidTrackPayloadIsRefused()
    {
        auto client = connectClient("2.0.0");
        QVERIFY(client);
        QVERIFY(joinV2(*client, "realtime:badtrack", "1").contains("\"ok\""));
        client->sendText("[\"1\",\"2\",\"realtime:badtrack\",\"presence\",{\"type\":\"presence\","
                         "\"event\":\"track\",\"payload\":\"x\"}]");
        QCOMPARE(
                client->waitForText("phx_reply"),
                QByteArray("[\"1\",\"2\",\"realtime:badtrack\",\"phx_reply\",{\"status\":\"error\","
                           "\"response\":{\"reason\":\"Presence track payload must be a map\"}}]"));
    }

    void joinErrorsUseUpstreamReasons()
    {
        auto client = connectClient("2.0.0");
        QVERIFY(client);
        QCOMPARE(joinV2(*client, "realtime:", "1"),
                 QByteArray("[\"1\",\"1\",\"realtime:\",\"phx_reply\",{\"status\":\"error\","
                            "\"response\":{\"reason\":\"TopicNameRequired: You must provide a "
                            "topic name\"}}]"));
        client->sendText("[\"2\",\"2\",\"realtime:tok\",\"phx_join\",{\"config\":{},\"access_"
                         "token\":\"garbage\"}]");
        QCOMPARE(client->waitForText("phx_reply"),
                 QByteArray("[\"2\",\"2\",\"realtime:tok\",\"phx_reply\",{\"status\":\"error\","
                            "\"response\":{\"reason\":\"MalformedJWT: The token provided is not a "
                            "valid JWT\"}}]"));
        QJsonObject expired;
        expired.insert(QStringLiteral("role"), QStringLiteral("anon"));
        expired.insert(QStringLiteral("exp"), QDateTime::currentSecsSinceEpoch() - 10);
        client->sendText(
                "[\"3\",\"3\",\"realtime:tok\",\"phx_join\",{\"config\":{},\"access_token\":\""
                + m_server.token(expired) + "\"}]");
        const QByteArray reply = client->waitForText("phx_reply");
        QVERIFY2(reply.contains("\"reason\":\"InvalidJWTToken: Token has expired "),
                 reply.constData());
        QVERIFY(reply.contains(" seconds ago\""));
    }

    void postgresChangesAreEchoedWithIdsAndAnError()
    {
        auto client = connectClient("2.0.0");
        QVERIFY(client);
        const QByteArray reply = joinV2(
                *client, "realtime:pg", "1",
                "{\"postgres_changes\":[{\"event\":\"INSERT\",\"schema\":\"public\",\"table\":"
                "\"t\"},{\"event\":\"*\",\"schema\":\"public\",\"filter\":\"id=eq.1\"}]}");
        const QJsonObject response =
                QJsonDocument::fromJson(reply.mid(reply.indexOf("{\"status\"")).chopped(1))
                        .object()
                        .value(QStringLiteral("response"))
                        .toObject();
        const QJsonArray changes = response.value(QStringLiteral("postgres_changes")).toArray();
        QCOMPARE(changes.size(), 2);
        QCOMPARE(changes.at(0).toObject().value(QStringLiteral("table")).toString(),
                 QStringLiteral("t"));
        QCOMPARE(changes.at(1).toObject().value(QStringLiteral("filter")).toString(),
                 QStringLiteral("id=eq.1"));
        QVERIFY(changes.at(0).toObject().value(QStringLiteral("id")).isDouble());
        const QByteArray system = client->waitForText("\"system\"");
        QVERIFY2(system.startsWith("[\"1\",null,\"realtime:pg\",\"system\",{"), system.constData());
        QVERIFY(system.contains("\"extension\":\"postgres_changes\""));
        QVERIFY(system.contains("\"status\":\"error\""));
    }
};

QTEST_GUILESS_MAIN(PhoenixSessionTest)
#include "tst_phoenix_session.moc"
