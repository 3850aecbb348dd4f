// A connection's part in flow control: the frames of a regulated stream are charged to its
// ledger until they are written or discarded, the ledger knows while the connection is above its
// high-water mark, and a connection that stays above it for the grace period (or crosses the
// hard cap) is cut off with a count of what it lost. Real sockets (a socketpair), no mocks.
#include "server/transport/io_loop.h"
#include "server/transport/tcp_connection.h"
#include "shared/core/flow_ledger.h"

#include <QTest>

#include <sys/socket.h>
#include <unistd.h>

#include <memory>

using rt::FlowLedger;
using rt::transport::IoLoop;
using rt::transport::TcpConnection;

namespace {

constexpr qsizetype KiB = 1024;

struct Observed
{
    int slowConsumerCalls = 0;
    qsizetype dropped = -1;
    bool markedSlow = false; // TcpConnection::isSlowConsumer() when it was cut off
    bool closed = false;
};

class RecordingHandler final : public TcpConnection::Handler
{
public:
    RecordingHandler(TcpConnection &connection, Observed &observed)
        : m_connection(connection),
          m_observed(observed)
    { }
    void onReceived(QByteArrayView data) override { Q_UNUSED(data) }
    void onClosed() override { m_observed.closed = true; }
    bool onSlowConsumer(qsizetype dropped) override
    {
        ++m_observed.slowConsumerCalls;
        m_observed.dropped = dropped;
        m_observed.markedSlow = m_connection.isSlowConsumer();
        return false; // the connection closes at once
    }

private:
    TcpConnection &m_connection; // closes (and is deleted later) right after the cut-off
    Observed &m_observed;
};

// One end of a socketpair adopted by an IoLoop; the test holds the other end and reads (or not).
class Pair
{
public:
    explicit Pair(IoLoop::Limits limits)
        : m_loop(
                [this](TcpConnection &connection) {
                    m_connection = &connection;
                    connection.setHandler(std::make_unique<RecordingHandler>(connection, observed));
                },
                limits)
    {
        int ends[2] = { -1, -1 };
        QVERIFY(::socketpair(AF_UNIX, SOCK_STREAM, 0, ends) == 0);
        const int small = 16 * 1024;
        ::setsockopt(ends[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
        ::setsockopt(ends[1], SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
        m_peer = ends[1];
        m_loop.adopt(ends[0]);
    }
    ~Pair()
    {
        if (m_peer >= 0) {
            ::close(m_peer);
        }
    }
    Pair(const Pair &) = delete;
    Pair &operator=(const Pair &) = delete;
    Pair(Pair &&) = delete;
    Pair &operator=(Pair &&) = delete;

    // Valid until the connection closes (it is deleted on the next event-loop pass).
    TcpConnection &connection() { return *m_connection; }
    // Reads what has arrived (non-blocking); returns the byte count.
    qsizetype readAvailable()
    {
        char buffer[64 * 1024];
        qsizetype total = 0;
        for (;;) {
            const ssize_t got = ::recv(m_peer, buffer, sizeof(buffer), MSG_DONTWAIT);
            if (got <= 0) {
                return total;
            }
            total += got;
        }
    }

    Observed observed;

private:
    IoLoop m_loop;
    TcpConnection *m_connection = nullptr;
    int m_peer = -1;
};

IoLoop::Limits limits(qsizetype hardCap, qsizetype highWater, int graceMs)
{
    IoLoop::Limits limits;
    limits.maxQueuedBytesPerConnection = hardCap;
    limits.highWaterBytesPerConnection = highWater;
    limits.slowConsumerGraceMs = graceMs;
    return limits;
}

} // namespace

class FlowControlTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void regulatedFramesAreChargedUntilWritten();
    void closingSettlesEverything();
    void aConnectionAboveTheMarkForTheGraceIsCutOff();
    void crossingTheHardCapCutsOffAtOnce();
    void aNewLedgerTakesOverTheQueue();
};

void FlowControlTest::regulatedFramesAreChargedUntilWritten()
{
    Pair pair(limits(16 * 1024 * KiB, 64 * KiB, 60'000));
    auto ledger = std::make_shared<FlowLedger>();
    const QByteArray frame(32 * KiB, 'c');
    for (int i = 0; i < 10; ++i) {
        QVERIFY(pair.connection().send(frame, ledger));
    }
    QVERIFY(pair.connection().send(QByteArray(8 * KiB, 'b'))); // not regulated: not charged
    QCOMPARE(ledger->socketBytes(), qint64(10 * 32 * KiB));
    QCOMPARE(ledger->slowSockets(), 1);
    QVERIFY(pair.connection().isAboveHighWater());

    // The peer reads: every charge is settled, and the connection is no longer slow.
    qsizetype read = 0;
    QTRY_VERIFY_WITH_TIMEOUT((read += pair.readAvailable()) == 10 * 32 * KiB + 8 * KiB, 10'000);
    QCOMPARE(ledger->socketBytes(), qint64(0));
    QCOMPARE(ledger->slowSockets(), 0);
    QVERIFY(!pair.connection().isAboveHighWater());
    QCOMPARE(pair.observed.slowConsumerCalls, 0);
}

void FlowControlTest::closingSettlesEverything()
{
    Pair pair(limits(16 * 1024 * KiB, 64 * KiB, 60'000));
    auto ledger = std::make_shared<FlowLedger>();
    for (int i = 0; i < 20; ++i) {
        QVERIFY(pair.connection().send(QByteArray(32 * KiB, 'c'), ledger));
    }
    QTest::qWait(0); // one flush pass: part is written, part waits (nobody reads)
    QVERIFY(ledger->socketBytes() > 0);
    QCOMPARE(ledger->slowSockets(), 1);
    pair.connection().close();
    QCOMPARE(ledger->socketBytes(), qint64(0));
    QCOMPARE(ledger->slowSockets(), 0);
    QVERIFY(pair.observed.closed);
}

void FlowControlTest::aConnectionAboveTheMarkForTheGraceIsCutOff()
{
    Pair pair(limits(16 * 1024 * KiB, 64 * KiB, 100));
    auto ledger = std::make_shared<FlowLedger>();
    constexpr int Frames = 64;
    for (int i = 0; i < Frames; ++i) {
        QVERIFY(pair.connection().send(QByteArray(32 * KiB, 'c'), ledger));
    }
    // Nobody reads: after the grace (and the next once-a-second sweep) it is cut off, with the
    // frames that never left counted, and the stream no longer waits for it.
    QTRY_COMPARE_WITH_TIMEOUT(pair.observed.slowConsumerCalls, 1, 5000);
    QVERIFY(pair.observed.dropped > 0 && pair.observed.dropped < Frames);
    QVERIFY(pair.observed.closed);
    QCOMPARE(ledger->slowSockets(), 0);
    QCOMPARE(ledger->socketBytes(), qint64(0));
}

void FlowControlTest::crossingTheHardCapCutsOffAtOnce()
{
    // A grace of an hour: only the hard cap can cut it off within the test.
    Pair pair(limits(256 * KiB, 64 * KiB, 3'600'000));
    auto ledger = std::make_shared<FlowLedger>();
    for (int i = 0; i < 32; ++i) {
        pair.connection().send(QByteArray(32 * KiB, 'c'), ledger);
    }
    QTRY_COMPARE_WITH_TIMEOUT(pair.observed.slowConsumerCalls, 1, 5000);
    QVERIFY(pair.observed.markedSlow); // the connection itself is gone by now
    QVERIFY(pair.observed.dropped > 0);
    QCOMPARE(ledger->socketBytes(), qint64(0));
    QCOMPARE(ledger->slowSockets(), 0);
}

void FlowControlTest::aNewLedgerTakesOverTheQueue()
{
    Pair pair(limits(16 * 1024 * KiB, 64 * KiB, 60'000));
    auto first = std::make_shared<FlowLedger>();
    auto second = std::make_shared<FlowLedger>();
    for (int i = 0; i < 4; ++i) {
        pair.connection().send(QByteArray(32 * KiB, 'c'), first);
    }
    QCOMPARE(first->slowSockets(), 1);
    pair.connection().send(QByteArray(32 * KiB, 'c'), second);
    // The restarted stream owns what is queued; the old one waits for nothing.
    QCOMPARE(first->socketBytes(), qint64(0));
    QCOMPARE(first->slowSockets(), 0);
    QCOMPARE(second->socketBytes(), qint64(5 * 32 * KiB));
    QCOMPARE(second->slowSockets(), 1);
    pair.connection().close();
    QCOMPARE(second->socketBytes(), qint64(0));
    QCOMPARE(second->slowSockets(), 0);
}

QTEST_GUILESS_MAIN(FlowControlTest)
#include "tst_flow_control.moc"
