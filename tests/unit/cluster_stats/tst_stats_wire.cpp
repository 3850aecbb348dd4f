// The node-stats frame codec (kind 26) and the node-history frame codec (kind 34): messages
// survive a round trip, the layouts are pinned byte for byte, and bytes from a peer never crash
// or over-allocate: every truncation of a valid payload, forged counts, negative or out-of-range
// figures, unknown flags, long ids, trailing bytes, unknown versions and samples out of time
// order are refused.
#include "server/cluster/stats/stats_wire.h"

#include <QTest>
#include <QtEndian>

#include <limits>

using namespace rt::cluster::stats;

namespace {

NodeStats sample()
{
    NodeStats stats;
    stats.available = true;
    stats.connections = 12;
    stats.channels = 3;
    stats.messagesInPerSecond = 4.5;
    stats.messagesOutPerSecond = 120.25;
    stats.cpuCores = 1.25;
    stats.cpuCount = 2;
    stats.residentBytes = 48 << 20;
    stats.workers = { WorkerLoad{ 0.75, 0.125 }, WorkerLoad{ 0.5, 12.5 } };
    stats.links = { LinkRate{ QStringLiteral("node-b"), 10, 2048.5 },
                    LinkRate{ QStringLiteral("node-c"), 0, 0 } };
    stats.tenants = { TenantRate{ QByteArrayLiteral("alpha"), 1.5, 60 },
                      TenantRate{ QByteArrayLiteral("beta"), 3, 60.25 } };
    return stats;
}

QByteArray be64(quint64 value)
{
    char raw[8];
    qToBigEndian(value, raw);
    return QByteArray(raw, 8);
}

QByteArray be32(quint32 value)
{
    char raw[4];
    qToBigEndian(value, raw);
    return QByteArray(raw, 4);
}

QByteArray be16(quint16 value)
{
    char raw[2];
    qToBigEndian(value, raw);
    return QByteArray(raw, 2);
}

// The parts one after the other (QStringBuilder's `a + b` is no QByteArray until converted).
QByteArray join(std::initializer_list<QByteArray> parts)
{
    QByteArray out;
    for (const QByteArray &part : parts) {
        out += part;
    }
    return out;
}

// The process figures with no worker (CPU 0, cores 0, resident 0).
QByteArray noProcess()
{
    return join({ be64(0), be16(0), be64(0), be16(0) });
}

// Version, flags, the four header figures (connections 1, channels 2, rates 0) and no process
// figures.
QByteArray header(quint8 flags = 1)
{
    QByteArray out;
    out.append(char(Version));
    out.append(char(flags));
    out += be64(1) + be64(2) + be64(0) + be64(0);
    return out + noProcess();
}

QList<rt::api::NodeSample> samples()
{
    return { rt::api::NodeSample{ 1000, 0.5, 1 << 20, 3, 4, 1.5, 2.25, 0.125, std::nullopt },
             rt::api::NodeSample{ 6000, 1.75, 2 << 20, 5, 6, 10, 20, 3.5, 0.75 } };
}

} // namespace

class TestStatsWire : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void kindIsFree()
    {
        // 16-19 broadcasts, 20-23 presence, 24-25 streams, 28-29 counters, 30 interest acks.
        QCOMPARE(KindNodeStats, quint8(26));
    }

    void roundTrip()
    {
        const NodeStats stats = sample();
        const auto decoded = decode(encode(stats));
        QVERIFY(decoded.ok());
        QCOMPARE(*decoded, stats);
        const auto empty = decode(encode(NodeStats{}));
        QVERIFY(empty.ok());
        QCOMPARE(*empty, NodeStats{});
    }

    void layoutIsPinned()
    {
        NodeStats stats;
        stats.available = true;
        stats.connections = 1;
        stats.channels = 2;
        stats.messagesInPerSecond = 0.5;
        stats.messagesOutPerSecond = 3;
        stats.cpuCores = 1.5;
        stats.cpuCount = 4;
        stats.residentBytes = 4096;
        stats.workers = { WorkerLoad{ 0.25, 2.5 } };
        stats.links = { LinkRate{ QStringLiteral("b"), 1, 2 } };
        stats.tenants = { TenantRate{ QByteArrayLiteral("t"), 0.001, 4 } };
        QByteArray expected;
        expected.append(char(2)).append(char(1));
        expected += be64(1) + be64(2) + be64(500) + be64(3000);
        expected += be64(1500) + be16(4) + be64(4096) + be16(1) + be64(250) + be64(2500);
        expected += be32(1) + be16(1) + QByteArray("b") + be64(1000) + be64(2000);
        expected += be32(1) + be16(1) + QByteArray("t") + be64(1) + be64(4000);
        QCOMPARE(encode(stats), expected);
    }

    void encodingClampsWhatDecodeWouldRefuse()
    {
        NodeStats stats;
        stats.connections = -5;
        stats.channels = std::numeric_limits<qint64>::max();
        stats.messagesInPerSecond = -1;
        stats.messagesOutPerSecond = std::numeric_limits<double>::quiet_NaN();
        stats.links = { LinkRate{ QString(2000, QLatin1Char('x')), 1e300, 0.0004 } };
        const auto decoded = decode(encode(stats));
        QVERIFY(decoded.ok());
        QCOMPARE(decoded->connections, qint64(0));
        QCOMPARE(decoded->channels, MaxCount);
        QCOMPARE(decoded->messagesInPerSecond, 0.0);
        QCOMPARE(decoded->messagesOutPerSecond, 0.0);
        QCOMPARE(decoded->links.size(), qsizetype(1));
        QCOMPARE(decoded->links[0].peer.size(), MaxIdBytes);
        QCOMPARE(decoded->links[0].messagesPerSecond, double(MaxMilliRate) / 1000.0);
        QCOMPARE(decoded->links[0].bytesPerSecond, 0.0);
    }

    void longPeerIdsAreCutAtACharacterBoundary()
    {
        NodeStats stats;
        // 1023 ASCII bytes, then a two-byte character across the limit.
        stats.links = { LinkRate{ QString(1023, QLatin1Char('x')) + QChar(0xE9), 1, 1 } };
        const auto decoded = decode(encode(stats));
        QVERIFY(decoded.ok());
        QCOMPARE(decoded->links[0].peer, QString(1023, QLatin1Char('x')));
    }

    void everyTruncationIsRefused()
    {
        const QByteArray bytes = encode(sample());
        for (qsizetype size = 0; size < bytes.size(); ++size) {
            const auto decoded = decode(QByteArrayView(bytes).first(size));
            QVERIFY2(!decoded.ok(), qPrintable(QStringLiteral("prefix of %1 bytes").arg(size)));
            QVERIFY(!decoded.error().message.isEmpty());
        }
    }

    void trailingBytesAreRefused()
    {
        QVERIFY(!decode(join({ encode(sample()), QByteArray(1, '\0') })).ok());
    }

    void unknownVersionAndFlagsAreRefused()
    {
        QByteArray bytes = encode(sample());
        bytes[0] = char(1); // the first round's layout, without the process figures
        QVERIFY(!decode(bytes).ok());
        bytes[0] = char(3);
        QVERIFY(!decode(bytes).ok());
        bytes = encode(sample());
        bytes[1] = char(0x02);
        QVERIFY(!decode(bytes).ok());
        QVERIFY(decode(join({ header(0), be32(0), be32(0) })).ok());
        QVERIFY(!decode(join({ header(0x80), be32(0), be32(0) })).ok());
    }

    void hostileCountsAreRefused_data()
    {
        QTest::addColumn<QByteArray>("payload");
        QTest::newRow("link count past the end") << join({ header(), be32(1), be32(0) });
        QTest::newRow("huge link count")
                << join({ header(), be32(0xFFFFFFFF), QByteArray(64, '\0') });
        QTest::newRow("huge tenant count")
                << join({ header(), be32(0), be32(0xFFFFFFFF), QByteArray(64, '\0') });
        QTest::newRow("tenant count past the end")
                << join({ header(), be32(0), be32(2), be16(0), be64(0), be64(0) });
        QTest::newRow("id longer than allowed")
                << join({ header(), be32(1), be16(MaxIdBytes + 1),
                          QByteArray(MaxIdBytes + 1 + 16, 'x'), be32(0) });
        QTest::newRow("id past the end")
                << join({ header(), be32(1), be16(40), QByteArray(16, 'x'), be32(0) });
        QByteArray negative;
        negative.append(char(Version)).append(char(1));
        negative += join(
                { be64(quint64(-1)), be64(0), be64(0), be64(0), noProcess(), be32(0), be32(0) });
        QTest::newRow("negative connections") << negative;
        QByteArray hugeChannels;
        hugeChannels.append(char(Version)).append(char(1));
        hugeChannels += join({ be64(0), be64(quint64(MaxCount) + 1), be64(0), be64(0), noProcess(),
                               be32(0), be32(0) });
        QTest::newRow("channels out of range") << hugeChannels;
        QByteArray hugeRate;
        hugeRate.append(char(Version)).append(char(1));
        hugeRate += join({ be64(0), be64(0), be64(MaxMilliRate + 1), be64(0), noProcess(), be32(0),
                           be32(0) });
        QTest::newRow("rate out of range") << hugeRate;
        QTest::newRow("link rate out of range")
                << join({ header(), be32(1), be16(1), QByteArray("b"), be64(0), be64(quint64(-1)),
                          be32(0) });
        QTest::newRow("peer id not UTF-8") << join(
                { header(), be32(1), be16(2), QByteArray("\xC3\x28"), be64(0), be64(0), be32(0) });
        QByteArray process;
        process.append(char(Version)).append(char(1));
        process += join({ be64(0), be64(0), be64(0), be64(0) });
        QTest::newRow("CPU out of range") << join(
                { process, be64(MaxMilliRate + 1), be16(1), be64(0), be16(0), be32(0), be32(0) });
        QTest::newRow("negative resident bytes") << join(
                { process, be64(0), be16(1), be64(quint64(-1)), be16(0), be32(0), be32(0) });
        QTest::newRow("worker count past the end")
                << join({ process, be64(0), be16(1), be64(0), be16(2), be64(0), be64(0), be32(0),
                          be32(0) });
        QTest::newRow("huge worker count")
                << join({ process, be64(0), be16(1), be64(0), be16(0xFFFF), QByteArray(64, '\0') });
        QTest::newRow("worker lag out of range")
                << join({ process, be64(0), be16(1), be64(0), be16(1), be64(0),
                          be64(MaxMilliRate + 1), be32(0), be32(0) });
        QTest::newRow("tenant rate out of range")
                << join({ header(), be32(0), be32(1), be16(1), QByteArray("t"), be64(quint64(-1)),
                          be64(0) });
    }

    void hostileCountsAreRefused()
    {
        QFETCH(QByteArray, payload);
        const auto decoded = decode(payload);
        QVERIFY(!decoded.ok());
        QVERIFY(!decoded.error().message.isEmpty());
    }

    void historyRoundTrip()
    {
        QCOMPARE(KindNodeHistory, quint8(34));
        const auto decoded = decodeHistory(encodeHistory(samples()));
        QVERIFY(decoded.ok());
        QCOMPARE(*decoded, samples());
        const auto empty = decodeHistory(encodeHistory({}));
        QVERIFY(empty.ok());
        QVERIFY(empty->isEmpty());
    }

    void historyLayoutIsPinned()
    {
        const QList<rt::api::NodeSample> one{ rt::api::NodeSample{ 7, 0.5, 8, 1, 2, 0.25, 3, 1.5,
                                                                   0.75 } };
        QByteArray expected;
        expected.append(char(1));
        expected += be32(1) + be64(7) + be64(500) + be64(8) + be64(1) + be64(2) + be64(250)
                + be64(3000) + be64(1500);
        expected.append(char(1));
        expected += be64(750);
        QCOMPARE(encodeHistory(one), expected);
    }

    void historyKeepsTheNewestWithinItsBound()
    {
        QList<rt::api::NodeSample> many;
        for (qint64 i = 0; i < MaxHistorySamples + 5; ++i) {
            many.append(rt::api::NodeSample{ i, 0, 0, 0, 0, 0, 0, 0, std::nullopt });
        }
        const auto decoded = decodeHistory(encodeHistory(many));
        QVERIFY(decoded.ok());
        QCOMPARE(decoded->size(), MaxHistorySamples);
        QCOMPARE(decoded->first().atMs, qint64(5));
    }

    void hostileHistoriesAreRefused()
    {
        const QByteArray bytes = encodeHistory(samples());
        for (qsizetype size = 0; size < bytes.size(); ++size) {
            QVERIFY2(!decodeHistory(QByteArrayView(bytes).first(size)).ok(),
                     qPrintable(QStringLiteral("prefix of %1 bytes").arg(size)));
        }
        QVERIFY(!decodeHistory(join({ bytes, QByteArray(1, '\0') })).ok());
        QByteArray version = bytes;
        version[0] = char(2);
        QVERIFY(!decodeHistory(version).ok());
        QVERIFY(!decodeHistory(join({ QByteArray(1, char(1)), be32(0xFFFFFFFF) })).ok());
        QList<rt::api::NodeSample> backwards = samples();
        std::swap(backwards[0], backwards[1]);
        const auto unordered = decodeHistory(encodeHistory(backwards));
        QVERIFY(!unordered.ok());
        QVERIFY(unordered.error().message.contains(QStringLiteral("time order")));
        // A load flag other than 0 or 1, and a load given without its flag.
        QByteArray flag = encodeHistory(samples());
        flag[5 + 64] = char(2);
        QVERIFY(!decodeHistory(flag).ok());
        QByteArray loadWithoutFlag = encodeHistory(samples());
        loadWithoutFlag[5 + 72] = char(1);
        QVERIFY(!decodeHistory(loadWithoutFlag).ok());
    }
};

QTEST_GUILESS_MAIN(TestStatsWire)
#include "tst_stats_wire.moc"
