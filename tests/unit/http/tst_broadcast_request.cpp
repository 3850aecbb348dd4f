#include "server/http/broadcast_request.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace rt;

namespace {

constexpr qsizetype Limit = 100 * 1000 + 500; // max_payload_size_in_kb 100

QJsonObject bodyOf(const wire::HttpResponse &response)
{
    return QJsonDocument::fromJson(response.body).object();
}

QByteArray header(const wire::HttpResponse &response, const QByteArray &name)
{
    for (const auto &[key, value] : response.headers) {
        if (key == name) {
            return value;
        }
    }
    return {};
}

} // namespace

// The broadcast API's body reading (spec §4.4, §4.5): statuses and upstream's error shapes.
class BroadcastRequestTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void validBatch();
    void batchThatIsNotAnObject_data();
    void batchThatIsNotAnObject();
    void batchWithoutMessages_data();
    void batchWithoutMessages();
    void perMessageErrors();
    void batchPayloadOverTheLimit();
    void batchPayloadCarriesTheId();
    void singleJsonIsWrappedUnlessAnObject();
    void singleInvalidJson();
    void singleRawBytesAreKept();
    void singleFieldErrors();
};

void BroadcastRequestTest::validBatch()
{
    const http::BroadcastBatch batch = http::readBroadcastBatch(
            R"({"messages":[{"topic":"room1","event":"new-msg","payload":{"text":"hi"}},)"
            R"({"topic":"room2","event":"e","payload":{},"private":true,"id":"m-1"}]})",
            Limit);
    QVERIFY(!batch.refusal);
    QCOMPARE(batch.messages.size(), 2);
    QCOMPARE(batch.messages[1].toObject().value(QLatin1String("id")).toString(),
             QStringLiteral("m-1"));
}

void BroadcastRequestTest::batchThatIsNotAnObject_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::newRow("not JSON") << QByteArray("{\"messages\":");
    QTest::newRow("array") << QByteArray("[{\"messages\":[]}]");
    QTest::newRow("empty") << QByteArray();
}

void BroadcastRequestTest::batchThatIsNotAnObject()
{
    QFETCH(QByteArray, body);
    const http::BroadcastBatch batch = http::readBroadcastBatch(body, Limit);
    QVERIFY(batch.refusal);
    QCOMPARE(batch.refusal->status, 400);
    QCOMPARE(bodyOf(*batch.refusal).value(QLatin1String("message")).toString(),
             QStringLiteral("The request body must be a JSON object with a messages list"));
    QCOMPARE(header(*batch.refusal, "access-control-allow-origin"), QByteArray("*"));
}

void BroadcastRequestTest::batchWithoutMessages_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QByteArray>("errors");
    QTest::newRow("missing") << QByteArray("{}")
                             << QByteArray(R"({"messages":["can't be blank"]})");
    QTest::newRow("null") << QByteArray(R"({"messages":null})")
                          << QByteArray(R"({"messages":["can't be blank"]})");
    QTest::newRow("empty list") << QByteArray(R"({"messages":[]})")
                                << QByteArray(R"({"messages":["can't be blank"]})");
    QTest::newRow("not a list") << QByteArray(R"({"messages":{"topic":"a"}})")
                                << QByteArray(R"({"messages":["is invalid"]})");
}

void BroadcastRequestTest::batchWithoutMessages()
{
    QFETCH(QByteArray, body);
    QFETCH(QByteArray, errors);
    const http::BroadcastBatch batch = http::readBroadcastBatch(body, Limit);
    QVERIFY(batch.refusal);
    QCOMPARE(batch.refusal->status, 422);
    QCOMPARE(bodyOf(*batch.refusal).value(QLatin1String("errors")).toObject(),
             QJsonDocument::fromJson(errors).object());
    QVERIFY(batch.messages.isEmpty());
}

void BroadcastRequestTest::perMessageErrors()
{
    const http::BroadcastBatch batch = http::readBroadcastBatch(
            R"({"messages":[{"topic":" ","event":3,"payload":[1],"private":"yes"},)"
            R"({"topic":"ok","event":"ok","payload":{}},7]})",
            Limit);
    QVERIFY(batch.refusal);
    QCOMPARE(batch.refusal->status, 422);
    QVERIFY(batch.messages.isEmpty()); // nothing is sent unless every message is valid
    const QJsonArray perMessage = bodyOf(*batch.refusal)
                                          .value(QLatin1String("errors"))
                                          .toObject()
                                          .value(QLatin1String("messages"))
                                          .toArray();
    QCOMPARE(perMessage.size(), 3);
    QCOMPARE(perMessage[0].toObject(),
             QJsonDocument::fromJson(R"({"topic":["can't be blank"],"event":["can't be blank"],)"
                                     R"("payload":["is invalid"],"private":["is invalid"]})")
                     .object());
    QCOMPARE(perMessage[1].toObject(), QJsonObject());
    QCOMPARE(perMessage[2].toObject().keys(),
             (QStringList{ QStringLiteral("event"), QStringLiteral("payload"),
                           QStringLiteral("topic") }));
}

void BroadcastRequestTest::batchPayloadOverTheLimit()
{
    const QByteArray body = R"({"messages":[{"topic":"t","event":"e","payload":{"a":"12345"}}]})";
    // {"a":"12345"} is 13 bytes of compact JSON.
    QVERIFY(!http::readBroadcastBatch(body, 13).refusal);
    const http::BroadcastBatch over = http::readBroadcastBatch(body, 12);
    QVERIFY(over.refusal);
    QCOMPARE(over.refusal->status, 422);
    QVERIFY(over.refusal->body.contains("Payload size exceeds tenant limit"));
}

void BroadcastRequestTest::batchPayloadCarriesTheId()
{
    const QJsonObject message =
            QJsonDocument::fromJson(R"({"topic":"t","event":"e","payload":{"x":1},"id":"m"})")
                    .object();
    QCOMPARE(QJsonDocument::fromJson(http::batchBroadcastPayload(message)).object(),
             QJsonDocument::fromJson(
                     R"({"type":"broadcast","event":"e","payload":{"x":1},"meta":{"id":"m"}})")
                     .object());
    QJsonObject withoutId = message;
    withoutId.insert(QLatin1String("id"), QJsonValue::Null);
    QVERIFY(!http::batchBroadcastPayload(withoutId).contains("meta"));
}

void BroadcastRequestTest::singleJsonIsWrappedUnlessAnObject()
{
    QCOMPARE(http::readSingleBroadcast(" {\"a\":1}\n", true, "t", "e", Limit).payload,
             QByteArray("{\"a\":1}"));
    QCOMPARE(http::readSingleBroadcast("[1,2]", true, "t", "e", Limit).payload,
             QByteArray("{\"_json\":[1,2]}"));
    QCOMPARE(http::readSingleBroadcast("\"hi\"", true, "t", "e", Limit).payload,
             QByteArray("{\"_json\":\"hi\"}"));
    QVERIFY(!http::readSingleBroadcast("[1,2]", true, "t", "e", Limit).refusal);
}

void BroadcastRequestTest::singleInvalidJson()
{
    const http::SingleBroadcast single =
            http::readSingleBroadcast("{\"a\":", true, "t", "e", Limit);
    QVERIFY(single.refusal);
    QCOMPARE(single.refusal->status, 400);
    QCOMPARE(bodyOf(*single.refusal).value(QLatin1String("message")).toString(),
             QStringLiteral("The request body is not valid JSON"));
}

void BroadcastRequestTest::singleRawBytesAreKept()
{
    const QByteArray bytes("\x00\x01 {not json", 12);
    const http::SingleBroadcast single = http::readSingleBroadcast(bytes, false, "t", "e", Limit);
    QVERIFY(!single.refusal);
    QCOMPARE(single.payload, bytes);
}

void BroadcastRequestTest::singleFieldErrors()
{
    const http::SingleBroadcast blank = http::readSingleBroadcast("  ", true, " ", "", Limit);
    QVERIFY(blank.refusal);
    QCOMPARE(blank.refusal->status, 422);
    QCOMPARE(bodyOf(*blank.refusal).value(QLatin1String("errors")).toObject(),
             QJsonDocument::fromJson(R"({"topic":["can't be blank"],"event":["can't be blank"],)"
                                     R"("payload":["can't be blank"]})")
                     .object());
    const http::SingleBroadcast tooLong =
            http::readSingleBroadcast("{}", true, QByteArray(http::MaxSubTopicBytes + 1, 't'),
                                      QByteArray(http::MaxEventBytes + 1, 'e'), 1);
    QCOMPARE(bodyOf(*tooLong.refusal).value(QLatin1String("errors")).toObject(),
             QJsonDocument::fromJson(R"({"topic":["is too long"],"event":["is too long"],)"
                                     R"("payload":["Payload size exceeds tenant limit"]})")
                     .object());
    QVERIFY(!http::readSingleBroadcast("{}", true, QByteArray(http::MaxSubTopicBytes, 't'),
                                       QByteArray(http::MaxEventBytes, 'e'), 2)
                     .refusal);
}

QTEST_GUILESS_MAIN(BroadcastRequestTest)
#include "tst_broadcast_request.moc"
