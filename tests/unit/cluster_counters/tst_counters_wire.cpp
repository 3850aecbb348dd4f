// The counters frame codec: messages survive a round trip, the layout is pinned byte for byte,
// and bytes from a peer never crash or over-allocate: every truncation of a valid payload,
// forged counts, negative figures, long tenant ids, trailing bytes and unknown versions are
// refused, while rates of unknown kinds are skipped.
#include "server/cluster/counters/counters_wire.h"

#include <QSet>
#include <QTest>

#include <random>

using namespace rt::cluster::counters;
using rt::limits::RateCounterKind;

namespace {

Message sample()
{
    Message message;
    message.tenants.append(TenantFigures{ QByteArrayLiteral("alpha"),
                                          3,
                                          { RateFigure{ RateCounterKind::Events, 120 },
                                            RateFigure{ RateCounterKind::Joins, 2 } } });
    message.tenants.append(TenantFigures{ QByteArrayLiteral("beta"), 0, {} });
    message.tenants.append(TenantFigures{ QByteArrayLiteral("gamma"),
                                          std::nullopt,
                                          { RateFigure{ RateCounterKind::PresenceEvents, 7 } } });
    return message;
}

} // namespace

class TestCountersWire : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void kindsAreDistinctFromTheOthers()
    {
        // 16-19 broadcasts, 20-23 presence, 24-27 postgres_changes: ours are 28 and 29.
        QCOMPARE(KindUpdate, quint8(28));
        QCOMPARE(KindSync, quint8(29));
        QVERIFY(isCountersKind(28));
        QVERIFY(isCountersKind(29));
        for (int kind = 0; kind < 256; ++kind) {
            if (kind != 28 && kind != 29) {
                QVERIFY(!isCountersKind(static_cast<quint8>(kind)));
            }
        }
    }

    void kindCodesRoundTrip()
    {
        const RateCounterKind all[] = { RateCounterKind::Events,
                                        RateCounterKind::DbEvents,
                                        RateCounterKind::PresenceEvents,
                                        RateCounterKind::Joins,
                                        RateCounterKind::Requests,
                                        RateCounterKind::DatabaseConnect,
                                        RateCounterKind::AuthorizationErrors,
                                        RateCounterKind::SubscriptionErrors };
        QSet<quint8> codes;
        for (RateCounterKind kind : all) {
            const quint8 code = kindCode(kind);
            QVERIFY(code != 0);
            codes.insert(code);
            QCOMPARE(kindFromCode(code), std::optional(kind));
        }
        QCOMPARE(codes.size(), 8);
        QVERIFY(!kindFromCode(0));
        QVERIFY(!kindFromCode(9));
        QVERIFY(!kindFromCode(255));
        QVERIFY(isClusterWide(RateCounterKind::Events));
        QVERIFY(isClusterWide(RateCounterKind::PresenceEvents));
        QVERIFY(isClusterWide(RateCounterKind::Joins));
        QVERIFY(!isClusterWide(RateCounterKind::Requests));
        QVERIFY(!isClusterWide(RateCounterKind::DatabaseConnect));
        QVERIFY(!isClusterWide(RateCounterKind::DbEvents));
    }

    void roundTrip()
    {
        const Message message = sample();
        const auto decoded = decode(encode(message));
        QVERIFY2(decoded.ok(), qPrintable(decoded ? QString() : decoded.error().message));
        QCOMPARE(*decoded, message);

        const auto empty = decode(encode(Message{}));
        QVERIFY(empty.ok());
        QVERIFY(empty->tenants.isEmpty());
    }

    void layoutIsPinned()
    {
        Message message;
        message.tenants.append(TenantFigures{
                QByteArrayLiteral("t1"), 5, { RateFigure{ RateCounterKind::Joins, 258 } } });
        message.tenants.append(TenantFigures{ QByteArrayLiteral("u"), std::nullopt, {} });
        const QByteArray expected = QByteArray::fromHex("01" // version
                                                        "00000002" // tenants
                                                        "00000002"
                                                        "7431" // "t1"
                                                        "00000005" // users
                                                        "01" // one rate
                                                        "04"
                                                        "0000000000000102" // joins, 258
                                                        "00000001"
                                                        "75" // "u"
                                                        "ffffffff" // users not reported
                                                        "00"); // no rates
        QCOMPARE(encode(message).toHex(), expected.toHex());
    }

    void everyTruncationIsRefused()
    {
        const QByteArray bytes = encode(sample());
        for (qsizetype size = 0; size < bytes.size(); ++size) {
            const auto decoded = decode(QByteArrayView(bytes).first(size));
            QVERIFY2(!decoded.ok(), qPrintable(QStringLiteral("prefix of %1 bytes").arg(size)));
        }
    }

    void malformedPayloadsAreRefused_data()
    {
        QTest::addColumn<QByteArray>("hex");
        QTest::newRow("unknown version") << QByteArray("02"
                                                       "00000000");
        QTest::newRow("trailing bytes") << QByteArray("01"
                                                      "00000000"
                                                      "00");
        QTest::newRow("forged tenant count") << QByteArray("01"
                                                           "7fffffff"
                                                           "000000007fffffff00");
        QTest::newRow("tenant id past the end") << QByteArray("01"
                                                              "00000001"
                                                              "00000100"
                                                              "ffffffff00");
        QTest::newRow("tenant id too long") << (QByteArray("01"
                                                           "00000001"
                                                           "00000401")
                                                + QByteArray(2 * 1025, 'a')
                                                + QByteArray("00000000"
                                                             "00"));
        QTest::newRow("negative users") << QByteArray("01"
                                                      "00000001"
                                                      "00000000"
                                                      "fffffffe"
                                                      "00");
        QTest::newRow("forged rate count") << QByteArray("01"
                                                         "00000001"
                                                         "00000000"
                                                         "00000001"
                                                         "ff"
                                                         "010000000000000001");
        QTest::newRow("negative rate") << QByteArray("01"
                                                     "00000001"
                                                     "00000000"
                                                     "00000001"
                                                     "01"
                                                     "01ffffffffffffffff");
    }

    void malformedPayloadsAreRefused()
    {
        QFETCH(QByteArray, hex);
        const QByteArray bytes = QByteArray::fromHex(hex);
        QVERIFY(!bytes.isEmpty());
        QVERIFY(!decode(bytes).ok());
    }

    void unknownRateKindsAreSkipped()
    {
        // A newer peer reports a kind this node does not know (code 42) beside a known one.
        const QByteArray bytes = QByteArray::fromHex("01"
                                                     "00000001"
                                                     "00000001"
                                                     "61"
                                                     "00000001"
                                                     "02"
                                                     "2a0000000000000009"
                                                     "010000000000000004");
        const auto decoded = decode(bytes);
        QVERIFY(decoded.ok());
        QCOMPARE(decoded->tenants.size(), 1);
        QCOMPARE(decoded->tenants[0].tenantId, QByteArrayLiteral("a"));
        QCOMPARE(decoded->tenants[0].users, std::optional(1));
        QCOMPARE(decoded->tenants[0].rates,
                 (QList<RateFigure>{ RateFigure{ RateCounterKind::Events, 4 } }));
    }

    void arbitraryBytesNeverCrash()
    {
        // A cheap in-test fuzz: random bytes and random mutations of a valid payload.
        std::mt19937 rng(12345);
        const QByteArray valid = encode(sample());
        for (int round = 0; round < 20000; ++round) {
            QByteArray bytes = valid;
            if (round % 2 == 0) {
                bytes.resize(static_cast<qsizetype>(rng() % 64));
                for (char &c : bytes) {
                    c = static_cast<char>(rng());
                }
                if (!bytes.isEmpty()) {
                    bytes[0] = Version;
                }
            } else {
                const int flips = 1 + static_cast<int>(rng() % 4);
                for (int i = 0; i < flips; ++i) {
                    bytes[static_cast<qsizetype>(rng() % static_cast<quint32>(bytes.size()))] =
                            static_cast<char>(rng());
                }
            }
            const auto decoded = decode(bytes);
            if (decoded.ok()) {
                // Whatever decodes re-encodes to a payload that decodes to the same message.
                const auto again = decode(encode(*decoded));
                QVERIFY(again.ok());
                QCOMPARE(*again, *decoded);
            }
        }
    }
};

QTEST_APPLESS_MAIN(TestCountersWire)
#include "tst_counters_wire.moc"
