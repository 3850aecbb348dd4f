#include "server/transport/admission.h"
#include "server/transport/io_loop.h"
#include "server/transport/listener.h"
#include "server/transport/tcp_connection.h"

#include <QSignalSpy>
#include <QTcpSocket>
#include <QTest>

using rt::transport::AdmissionTicket;
using rt::transport::ConnectionAdmission;
using Verdict = ConnectionAdmission::Verdict;

namespace {

// Keeps every adopted connection open without speaking any protocol (a socket that never
// finishes its request head, as far as the gate can tell).
class SilentHandler final : public rt::transport::TcpConnection::Handler
{
public:
    void onReceived(QByteArrayView) override { }
};

} // namespace

// Tests the node's gate: node-wide and per-address counts, places given back by tickets, the
// refusal answers, and the listener refusing real sockets before any protocol work.
class ConnectionAdmissionTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void countsPerNodeAndPerPendingAddress();
    void ticketsGiveTheirPlaceBack();
    void refusalsAreCompleteJsonAnswers();
    void listenerRefusesBeforeAnyProtocolWork();
};

void ConnectionAdmissionTest::countsPerNodeAndPerPendingAddress()
{
    ConnectionAdmission gate({ 4, 2 });
    QCOMPARE(gate.admit("10.0.0.1"), Verdict::Admitted);
    QCOMPARE(gate.admit("10.0.0.1"), Verdict::Admitted);
    // The third pending socket of one address is refused; another address is not affected.
    QCOMPARE(gate.admit("10.0.0.1"), Verdict::AddressBusy);
    QCOMPARE(gate.admit("10.0.0.2"), Verdict::Admitted);
    QCOMPARE(gate.pendingFrom("10.0.0.1"), qsizetype(2));
    // A WebSocket no longer counts against its address, but still against the node.
    gate.established("10.0.0.1");
    QCOMPARE(gate.pendingFrom("10.0.0.1"), qsizetype(1));
    QCOMPARE(gate.admit("10.0.0.1"), Verdict::Admitted);
    QCOMPARE(gate.openConnections(), qsizetype(4));
    QCOMPARE(gate.admit("10.0.0.3"), Verdict::NodeFull);
    gate.release("10.0.0.2", true);
    QCOMPARE(gate.admit("10.0.0.3"), Verdict::Admitted);
    // Zero means no limit.
    ConnectionAdmission open({ 0, 0 });
    for (int i = 0; i < 10'000; ++i) {
        QCOMPARE(open.admit("10.0.0.9"), Verdict::Admitted);
    }
}

void ConnectionAdmissionTest::ticketsGiveTheirPlaceBack()
{
    ConnectionAdmission gate({ 2, 1 });
    QCOMPARE(gate.admit("a"), Verdict::Admitted);
    {
        AdmissionTicket ticket(&gate, "a");
        QVERIFY(ticket.isPending());
        AdmissionTicket moved = std::move(ticket);
        QVERIFY(!ticket.isPending()); // NOLINT(bugprone-use-after-move): the point of the test
        moved.establish();
        QVERIFY(!moved.isPending());
        QCOMPARE(gate.pendingFrom("a"), qsizetype(0));
        QCOMPARE(gate.openConnections(), qsizetype(1));
        moved.establish(); // twice: no effect
        QCOMPARE(gate.pendingFrom("a"), qsizetype(0));
    }
    QCOMPARE(gate.openConnections(), qsizetype(0));
    // A pending ticket gives back both counts.
    QCOMPARE(gate.admit("a"), Verdict::Admitted);
    {
        const AdmissionTicket ticket(&gate, "a");
    }
    QCOMPARE(gate.pendingFrom("a"), qsizetype(0));
    QCOMPARE(gate.openConnections(), qsizetype(0));
}

void ConnectionAdmissionTest::refusalsAreCompleteJsonAnswers()
{
    for (const Verdict verdict : { Verdict::NodeFull, Verdict::AddressBusy }) {
        const QByteArray response = ConnectionAdmission::refusalResponse(verdict);
        QVERIFY(response.startsWith(verdict == Verdict::NodeFull
                                            ? "HTTP/1.1 503 Service Unavailable\r\n"
                                            : "HTTP/1.1 429 Too Many Requests\r\n"));
        QVERIFY(response.contains("\r\nconnection: close\r\n"));
        const qsizetype bodyAt = response.indexOf("\r\n\r\n") + 4;
        const QByteArray body = response.sliced(bodyAt);
        QVERIFY(body.startsWith("{\"message\":\""));
        QVERIFY(response.contains(
                QByteArray("content-length: " + QByteArray::number(body.size()) + "\r\n")));
    }
}

void ConnectionAdmissionTest::listenerRefusesBeforeAnyProtocolWork()
{
    ConnectionAdmission gate({ 2, 0 });
    int adopted = 0;
    rt::transport::IoLoop loop(
            [&adopted](rt::transport::TcpConnection &connection) {
                ++adopted;
                connection.setHandler(std::make_unique<SilentHandler>());
            },
            {});
    rt::transport::Listener listener({ &loop }, &gate);
    QVERIFY(listener.listen(QHostAddress::LocalHost, 0));
    const auto connectOne = [&listener]() {
        auto socket = std::make_unique<QTcpSocket>();
        socket->connectToHost(QHostAddress::LocalHost, listener.serverPort());
        return socket;
    };
    auto first = connectOne();
    auto second = connectOne();
    QTRY_COMPARE(adopted, 2);
    QCOMPARE(gate.openConnections(), qsizetype(2));
    // The third gets the 503 answer and is closed; it never reaches the protocol factory.
    auto third = connectOne();
    QByteArray answer;
    QTRY_VERIFY((answer += third->readAll()).contains("\r\n\r\n{\"message\":"));
    QVERIFY2(answer.startsWith("HTTP/1.1 503 "), answer.constData());
    QTRY_COMPARE(third->state(), QAbstractSocket::UnconnectedState);
    QCOMPARE(adopted, 2);
    QCOMPARE(listener.refusedConnections(), quint64(1));
    // Closing an admitted socket frees its place once the server saw the close.
    first->disconnectFromHost();
    QTRY_COMPARE(gate.openConnections(), qsizetype(1));
    auto fourth = connectOne();
    QTRY_COMPARE(adopted, 3);
    QCOMPARE(gate.openConnections(), qsizetype(2));
}

QTEST_GUILESS_MAIN(ConnectionAdmissionTest)
#include "tst_connection_admission.moc"
