// Reliable, ordered deliveries between nodes (server/cdc/delivery_sequence): the owner's log
// numbers and keeps frames until acknowledged, within its bound; the receiver takes them once
// each, in order, and knows when the owner forgot some. The last case runs both over a link
// that loses, repeats and breaks, as node links do, and checks that every frame arrives once.
#include "server/cdc/delivery_sequence.h"

#include <QRandomGenerator>
#include <QTest>

#include <vector>

using rt::cdc::DeliveryLog;
using rt::cdc::DeliveryOrder;
using Verdict = rt::cdc::DeliveryOrder::Verdict;

namespace {

QByteArray frameOf(quint64 seq, qsizetype size = 10)
{
    QByteArray bytes = QByteArray::number(seq);
    bytes.resize(std::max(size, bytes.size()), '.');
    return bytes;
}

std::vector<quint64> seqsOf(const DeliveryLog &log)
{
    std::vector<quint64> seqs;
    for (const DeliveryLog::Frame &frame : log.unacknowledged()) {
        seqs.push_back(frame.seq);
    }
    return seqs;
}

} // namespace

class TstDeliverySequence : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void logNumbersFramesAndKeepsThemUntilAcknowledged()
    {
        DeliveryLog log(42, 1000);
        QCOMPARE(log.nextSeq(), 1u);
        QCOMPARE(log.floor(), 1u);
        for (quint64 seq = 1; seq <= 5; ++seq) {
            QCOMPARE(log.append(frameOf(seq)), 0);
        }
        QCOMPARE(seqsOf(log), (std::vector<quint64>{ 1, 2, 3, 4, 5 }));
        QCOMPARE(log.bytes(), 50);
        QVERIFY(log.acknowledge(3));
        QCOMPARE(seqsOf(log), (std::vector<quint64>{ 4, 5 }));
        QCOMPARE(log.floor(), 4u);
        QCOMPARE(log.bytes(), 20);
        QVERIFY(!log.acknowledge(2)); // old news
        QVERIFY(!log.acknowledge(3));
        QVERIFY(!log.acknowledge(6)); // never sent: a confused peer changes nothing
        QCOMPARE(seqsOf(log), (std::vector<quint64>{ 4, 5 }));
        QVERIFY(log.acknowledge(5));
        QVERIFY(log.unacknowledged().empty());
        QCOMPARE(log.floor(), 6u);
        QCOMPARE(log.nextSeq(), 6u);
        QCOMPARE(log.forgotten(), 0u);
    }

    void logForgetsTheOldestBeyondItsBoundButKeepsTheNewest()
    {
        DeliveryLog log(1, 35);
        QCOMPARE(log.append(frameOf(1)), 0);
        QCOMPARE(log.append(frameOf(2)), 0);
        QCOMPARE(log.append(frameOf(3)), 0);
        QCOMPARE(log.append(frameOf(4)), 1);
        QCOMPARE(seqsOf(log), (std::vector<quint64>{ 2, 3, 4 }));
        QCOMPARE(log.floor(), 2u);
        QCOMPARE(log.append(frameOf(5, 100)), 3); // larger than the bound: alone, but kept
        QCOMPARE(seqsOf(log), (std::vector<quint64>{ 5 }));
        QCOMPARE(log.forgotten(), 4u);
        QVERIFY(log.forgetOldest());
        QVERIFY(!log.forgetOldest());
        QCOMPARE(log.bytes(), 0);
        QCOMPARE(log.floor(), 6u);
    }

    void orderTakesFramesOnceInSequence()
    {
        DeliveryOrder order;
        QCOMPARE(order.offer(7, 2, 1).verdict, Verdict::Gap); // a new log starts at its floor
        QCOMPARE(order.offer(7, 1, 1).verdict, Verdict::Take);
        QCOMPARE(order.offer(7, 2, 1).verdict, Verdict::Take);
        QCOMPARE(order.offer(7, 2, 1).verdict, Verdict::Repeat);
        QCOMPARE(order.offer(7, 1, 1).verdict, Verdict::Repeat);
        QCOMPARE(order.offer(7, 4, 3).verdict, Verdict::Gap); // 3 is still kept by the owner
        QCOMPARE(order.offer(7, 3, 3).verdict, Verdict::Take);
        QCOMPARE(order.offer(7, 4, 3).verdict, Verdict::Take);
        QCOMPARE(order.lastSeq(), 4u);
        QCOMPARE(order.logId(), 7u);
    }

    void orderSkipsWhatTheOwnerForgot()
    {
        DeliveryOrder order;
        QCOMPARE(order.offer(7, 1, 1).verdict, Verdict::Take);
        const DeliveryOrder::Outcome skip = order.offer(7, 9, 6); // 2..5 are gone
        QCOMPARE(skip.verdict, Verdict::Gap); // 6 comes first
        const DeliveryOrder::Outcome at = order.offer(7, 6, 6);
        QCOMPARE(at.verdict, Verdict::Take);
        QCOMPARE(at.skipped, 4u);
        QCOMPARE(order.offer(7, 7, 6).verdict, Verdict::Take);
        // A new log of the owner (it restarted, or the stream moved): taken from its floor on.
        const DeliveryOrder::Outcome fresh = order.offer(8, 3, 3);
        QCOMPARE(fresh.verdict, Verdict::Take);
        QCOMPARE(fresh.skipped, 2u);
        QCOMPARE(order.offer(8, 4, 3).verdict, Verdict::Take);
        QCOMPARE(order.offer(7, 8, 6).verdict, Verdict::Gap); // the old log is over
    }

    // The owner sends frames 1..N over a link that loses 10 % of them, repeats 5 %, and breaks
    // now and then (everything in flight lost); on every break it sends all unacknowledged
    // frames again, and the receiver acknowledges after each batch. The receiver must take each
    // frame exactly once, in order, whatever the seed.
    void everyFrameArrivesOnceInOrderOverALossyLink_data()
    {
        QTest::addColumn<quint32>("seed");
        for (quint32 seed = 1; seed <= 20; ++seed) {
            QTest::addRow("seed %u", seed) << seed;
        }
    }

    void everyFrameArrivesOnceInOrderOverALossyLink()
    {
        QFETCH(quint32, seed);
        QRandomGenerator random(seed);
        DeliveryLog log(99, 1 << 20);
        DeliveryOrder order;
        std::vector<quint64> taken;
        constexpr quint64 Total = 2000;
        const auto transmit = [&](quint64 seq) {
            const int dice = random.bounded(100);
            if (dice < 10) {
                return; // lost
            }
            for (int copies = dice < 15 ? 2 : 1; copies > 0; --copies) {
                if (order.offer(log.logId(), seq, log.floor()).verdict == Verdict::Take) {
                    taken.push_back(seq);
                }
            }
        };
        while (log.nextSeq() <= Total || !log.unacknowledged().empty()) {
            const int batch = random.bounded(1, 30);
            for (int i = 0; i < batch && log.nextSeq() <= Total; ++i) {
                const quint64 seq = log.nextSeq();
                log.append(frameOf(seq));
                transmit(seq);
            }
            if (random.bounded(100) < 30) { // the link broke and came back: send the rest again
                const std::vector<quint64> again = seqsOf(log);
                for (const quint64 seq : again) {
                    transmit(seq);
                }
            }
            if (order.logId() == log.logId()) {
                log.acknowledge(order.lastSeq());
            }
        }
        QCOMPARE(taken.size(), size_t(Total));
        for (quint64 i = 0; i < Total; ++i) {
            QCOMPARE(taken[i], i + 1);
        }
        QCOMPARE(log.forgotten(), 0u);
    }
};

QTEST_APPLESS_MAIN(TstDeliverySequence)
#include "tst_delivery_sequence.moc"
