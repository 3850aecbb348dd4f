// The node-link messages of tenant change streams (server/cdc/stream_wire): what a subscribing
// node and a stream owner tell each other. Round trips keep every field; malformed frames from
// another node are errors, never crashes or partial values.
#include "server/cdc/stream_wire.h"

#include <QJsonObject>
#include <QTest>

using namespace rt::cdc;
using namespace rt::cdc::wire;

namespace {
const DeliveryStamp Stamp{ 1'700'000'000'123ULL, 0xfeedface12345679ULL, 7, 3 };
}

class TstStreamWire : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void subscribeRoundTripKeepsEveryField()
    {
        SubscribeRequest request;
        request.memberId = quint64(1) << 60; // beyond a JSON number's exact range
        request.topic = rt::pubsub::TopicKey("tenant-a", true, "room:1");
        request.legacy = true;
        request.claims = QJsonObject{ { QStringLiteral("role"), QStringLiteral("authenticated") },
                                      { QStringLiteral("sub"), QStringLiteral("u-1") } };
        request.elements.append(SubscribeRequest::Element{
                42,
                QJsonObject{ { QStringLiteral("event"), QStringLiteral("INSERT") },
                             { QStringLiteral("table"), QStringLiteral("items") } } });
        request.elements.append(SubscribeRequest::Element{ -7, QJsonObject{} });
        const QByteArray bytes =
                encodeControl(Subscribe{ 9'007'199'254'740'993ULL, request, 1'700'000'000'123ULL });
        const auto decoded = decodeControl(bytes);
        QVERIFY2(decoded.ok(), qPrintable(decoded ? QString() : decoded.error().message));
        const auto *subscribe = std::get_if<Subscribe>(&decoded.value());
        QVERIFY(subscribe != nullptr);
        QCOMPARE(subscribe->token, 9'007'199'254'740'993ULL);
        QCOMPARE(subscribe->incarnation, 1'700'000'000'123ULL);
        QCOMPARE(subscribe->request.memberId, request.memberId);
        QCOMPARE(subscribe->request.topic, request.topic);
        QCOMPARE(subscribe->request.legacy, true);
        QCOMPARE(subscribe->request.claims, request.claims);
        QCOMPARE(subscribe->request.elements.size(), 2);
        QCOMPARE(subscribe->request.elements[0].id, 42);
        QCOMPARE(subscribe->request.elements[0].params, request.elements[0].params);
        QCOMPARE(subscribe->request.elements[1].id, -7);
    }

    void otherControlMessagesRoundTrip()
    {
        const auto start = decodeControl(encodeControl(StartStream{ "t1" }));
        QVERIFY(start.ok());
        QCOMPARE(std::get<StartStream>(start.value()).tenantId, QByteArray("t1"));

        const auto refused =
                decodeControl(encodeControl(StartRefused{ "t1", QStringLiteral("no") }));
        QVERIFY(refused.ok());
        QCOMPARE(std::get<StartRefused>(refused.value()).reason, QStringLiteral("no"));

        const auto answer = decodeControl(encodeControl(SubscribeAnswer{
                5, SubscribeOutcome{ true, QStringLiteral("Subscribed to PostgreSQL") }, false }));
        QVERIFY(answer.ok());
        const auto &a = std::get<SubscribeAnswer>(answer.value());
        QCOMPARE(a.token, 5u);
        QVERIFY(a.outcome.ok);
        QCOMPARE(a.outcome.message, QStringLiteral("Subscribed to PostgreSQL"));
        QVERIFY(!a.retry);

        const auto unsubscribe = decodeControl(encodeControl(Unsubscribe{ "t1", 77 }));
        QVERIFY(unsubscribe.ok());
        QCOMPARE(std::get<Unsubscribe>(unsubscribe.value()).memberId, 77u);

        const auto ack =
                decodeControl(encodeControl(DeliveryAck{ "t1", quint64(1) << 62, 12345, true }));
        QVERIFY(ack.ok());
        const auto &k = std::get<DeliveryAck>(ack.value());
        QCOMPARE(k.tenantId, QByteArray("t1"));
        QCOMPARE(k.logId, quint64(1) << 62);
        QCOMPARE(k.seq, 12345u);
        QVERIFY(k.gap);
    }

    void malformedControlFramesAreErrors_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::newRow("empty") << QByteArray();
        QTest::newRow("not json") << QByteArray("\xff\x00{", 3);
        QTest::newRow("array") << QByteArray("[1]");
        QTest::newRow("unknown type") << QByteArray(R"({"type":"explode","tenant":"t"})");
        QTest::newRow("start without tenant") << QByteArray(R"({"type":"start"})");
        QTest::newRow("start empty tenant") << QByteArray(R"({"type":"start","tenant":""})");
        QTest::newRow("subscribe numeric member") << QByteArray(
                R"({"type":"subscribe","token":"1","tenant":"t","topic":"x",)"
                R"("private":false,"member":5,"legacy":false,"claims":{},"elements":[]})");
        QTest::newRow("subscribe bad element")
                << QByteArray(R"({"type":"subscribe","token":"1","tenant":"t","topic":"x",)"
                              R"("private":false,"member":"5","legacy":false,"claims":{},)"
                              R"("elements":[{"id":"x","params":{}}]})");
        QTest::newRow("answer without ok") << QByteArray(R"({"type":"answer","token":"1"})");
        QTest::newRow("token not a number") << QByteArray(
                R"({"type":"answer","token":"abc","ok":true,"message":"","retry":false})");
        QTest::newRow("unsubscribe member missing")
                << QByteArray(R"({"type":"unsubscribe","tenant":"t"})");
        QTest::newRow("subscribe without incarnation")
                << QByteArray(R"({"type":"subscribe","token":"1","tenant":"t","topic":"x",)"
                              R"("private":false,"member":"5","legacy":false,"claims":{},)"
                              R"("elements":[]})");
        QTest::newRow("ack log 0")
                << QByteArray(R"({"type":"ack","tenant":"t","log":"0","seq":"1","gap":false})");
        QTest::newRow("ack without gap")
                << QByteArray(R"({"type":"ack","tenant":"t","log":"9","seq":"1"})");
        QTest::newRow("ack numeric seq")
                << QByteArray(R"({"type":"ack","tenant":"t","log":"9","seq":1,"gap":false})");
    }

    void malformedControlFramesAreErrors()
    {
        QFETCH(QByteArray, bytes);
        const auto decoded = decodeControl(bytes);
        QVERIFY(!decoded.ok());
        QVERIFY(!decoded.error().message.isEmpty());
    }

    void deliveryRoundTrip()
    {
        const rt::pubsub::TopicKey topic("tenant-b", false, "changes");
        const std::vector<quint64> members{ 1, 5, quint64(1) << 40 };
        const QByteArray payload(R"({"ids":[3],"data":{"table":"items"}})");
        const auto decoded =
                decodeDelivery(encodeDelivery(Stamp, topic, "postgres_changes", payload, members));
        QVERIFY(decoded.ok());
        QCOMPARE(decoded->stamp, Stamp);
        QCOMPARE(decoded->topic, topic);
        QCOMPARE(decoded->event, QByteArray("postgres_changes"));
        QCOMPARE(decoded->payload, payload);
        QCOMPARE(decoded->members, members);
    }

    void restampedFloorIsTheOnlyChange()
    {
        const rt::pubsub::TopicKey topic("t", true, "x");
        QByteArray frame = encodeDelivery(Stamp, topic, "e", "{}", { 4 });
        restampFloor(frame, 6);
        const auto decoded = decodeDelivery(frame);
        QVERIFY(decoded.ok());
        DeliveryStamp expected = Stamp;
        expected.floor = 6;
        QCOMPARE(decoded->stamp, expected);
        QCOMPARE(frame, encodeDelivery(expected, topic, "e", "{}", { 4 }));
    }

    void badStampsAreErrors_data()
    {
        QTest::addColumn<quint64>("logId");
        QTest::addColumn<quint64>("seq");
        QTest::addColumn<quint64>("floor");
        QTest::newRow("log 0") << quint64(0) << quint64(1) << quint64(1);
        QTest::newRow("seq 0") << quint64(9) << quint64(0) << quint64(0);
        QTest::newRow("floor 0") << quint64(9) << quint64(3) << quint64(0);
        QTest::newRow("floor above seq") << quint64(9) << quint64(3) << quint64(4);
    }

    void badStampsAreErrors()
    {
        QFETCH(quint64, logId);
        QFETCH(quint64, seq);
        QFETCH(quint64, floor);
        const QByteArray frame =
                encodeDelivery(DeliveryStamp{ 5, logId, seq, floor },
                               rt::pubsub::TopicKey("t", false, "x"), "e", "{}", { 1 });
        QVERIFY(!decodeDelivery(frame).ok());
    }

    void malformedDeliveriesAreErrors()
    {
        const rt::pubsub::TopicKey topic("t", true, "x");
        const QByteArray good = encodeDelivery(Stamp, topic, "e", "{}", { 1, 2 });
        QVERIFY(decodeDelivery(good).ok());
        // Every truncation fails.
        for (qsizetype size = 0; size < good.size(); ++size) {
            QVERIFY2(!decodeDelivery(QByteArrayView(good).first(size)).ok(),
                     qPrintable(QString::number(size)));
        }
        QVERIFY(!decodeDelivery(QByteArray(good + 'x')).ok()); // trailing byte
        QByteArray version = good;
        version[0] = 1; // the format before sequence stamps
        QVERIFY(!decodeDelivery(version).ok());
        QByteArray flags = good;
        flags[33] = char(0x80);
        QVERIFY(!decodeDelivery(flags).ok());
        QVERIFY(!decodeDelivery(encodeDelivery(Stamp, topic, "e", "{}", { 2, 1 }))
                         .ok()); // unsorted
        QVERIFY(!decodeDelivery(encodeDelivery(Stamp, topic, "e", "{}", { 3, 3 }))
                         .ok()); // repeated
        QVERIFY(!decodeDelivery(
                         encodeDelivery(Stamp, rt::pubsub::TopicKey("", false, "x"), "e", "{}", {}))
                         .ok()); // no tenant
        // A hostile member count is refused before anything is allocated for it.
        QByteArray hostile = encodeDelivery(Stamp, topic, "e", "{}", {});
        hostile.chop(4);
        hostile.append("\xff\xff\xff\xff", 4);
        QVERIFY(!decodeDelivery(hostile).ok());
    }
};

QTEST_APPLESS_MAIN(TstStreamWire)
#include "tst_stream_wire.moc"
