// TLS connections of the transport, end to end over loopback: the server side is the product's
// Listener, IoLoop and TcpConnection; the client is Qt's QSslSocket, a TLS implementation of its
// own, so that both ends must agree on real records.
#include "server/tls/tls_context.h"
#include "server/transport/io_loop.h"
#include "server/transport/listener.h"
#include "server/transport/tcp_connection.h"
#include "tests/support/tls/test_certificates.h"

#include <QSslCertificate>
#include <QSslConfiguration>
#include <QSslSocket>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

using rt::transport::IoLoop;
using rt::transport::Listener;
using rt::transport::TcpConnection;

namespace {

constexpr int WaitMs = 10'000;

// Answers commands: "burst" sends 1,000 small writes, "large" 8 MiB, "bye" a last word and a
// graceful close; anything else is echoed.
class CommandHandler final : public TcpConnection::Handler
{
public:
    explicit CommandHandler(TcpConnection &connection) : m_connection(connection) { }

    void onReceived(QByteArrayView data) override
    {
        if (data == "burst") {
            for (int i = 0; i < 1000; ++i) {
                m_connection.send(QByteArray::number(i).rightJustified(100, '.'),
                                  QByteArrayView("\x81\x64", 2));
            }
        } else if (data == "large") {
            for (int i = 0; i < 128; ++i) {
                m_connection.send(QByteArray(64 * 1024, static_cast<char>('a' + i % 26)));
            }
        } else if (data == "bye") {
            m_connection.send(QByteArrayLiteral("goodbye"));
            m_connection.closeAfterFlush();
        } else {
            m_connection.send(data.toByteArray());
        }
    }

private:
    TcpConnection &m_connection;
};

} // namespace

class TstTlsConnection : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    rt::testing::TestCertificateAuthority m_ca;
    rt::tls::ServerCredentials m_credentials;
    std::shared_ptr<rt::tls::ReloadableServerContext> m_source;
    std::unique_ptr<IoLoop> m_loop;
    std::unique_ptr<Listener> m_listener;

    void writeLeaf(const QString &name)
    {
        const rt::testing::IssuedCertificate issued =
                m_ca.issue({ name }, { QStringLiteral("127.0.0.1") });
        QVERIFY(rt::testing::writeFile(m_credentials.certificateFile, issued.certificatePem));
        QVERIFY(rt::testing::writeFile(m_credentials.keyFile, issued.keyPem));
    }

    std::unique_ptr<QSslSocket>
    connectClient(const QString &verifyName = QStringLiteral("localhost"))
    {
        auto socket = std::make_unique<QSslSocket>();
        QSslConfiguration configuration = QSslConfiguration::defaultConfiguration();
        configuration.setCaCertificates(QSslCertificate::fromData(m_ca.certificatePem()));
        socket->setSslConfiguration(configuration);
        socket->connectToHostEncrypted(QStringLiteral("127.0.0.1"), m_listener->serverPort(),
                                       verifyName);
        if (!QTest::qWaitFor([&] { return socket->isEncrypted(); }, WaitMs)) {
            qWarning() << "no TLS session:" << socket->errorString()
                       << socket->sslHandshakeErrors();
            return nullptr;
        }
        return socket;
    }

    static QByteArray readExactly(QAbstractSocket &socket, qsizetype size)
    {
        QByteArray received;
        // The caller compares what arrived; a timeout shows there as a short read.
        [[maybe_unused]] const bool done = QTest::qWaitFor(
                [&] {
                    received += socket.readAll();
                    return received.size() >= size
                            || socket.state() == QAbstractSocket::UnconnectedState;
                },
                WaitMs);
        received += socket.readAll();
        return received;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(QSslSocket::supportsSsl());
        QVERIFY(m_dir.isValid());
        m_credentials.certificateFile = m_dir.filePath(QStringLiteral("server.crt"));
        m_credentials.keyFile = m_dir.filePath(QStringLiteral("server.key"));
        writeLeaf(QStringLiteral("localhost"));
        auto source = rt::tls::ReloadableServerContext::load(m_credentials);
        QVERIFY2(source, qPrintable(source ? QString() : source.error().message));
        m_source = source.value();
        IoLoop::Limits limits;
        limits.tlsHandshakeTimeoutMs = 500;
        m_loop = std::make_unique<IoLoop>(
                [](TcpConnection &connection) {
                    connection.setHandler(std::make_unique<CommandHandler>(connection));
                },
                limits);
        m_loop->setTls(m_source);
        m_listener = std::make_unique<Listener>(std::vector<IoLoop *>{ m_loop.get() });
        QVERIFY(m_listener->listen(QHostAddress::LocalHost, 0));
    }

    void cleanupTestCase()
    {
        m_listener.reset();
        m_loop.reset();
    }

    void echoesOverTls()
    {
        const auto socket = connectClient();
        QVERIFY(socket);
        QCOMPARE(socket->sessionProtocol(), QSsl::TlsV1_3);
        socket->write("ping");
        QCOMPARE(readExactly(*socket, 4), QByteArray("ping"));
    }

    void smallFramesArriveWholeAndInOrder()
    {
        const auto socket = connectClient();
        QVERIFY(socket);
        socket->write("burst");
        const QByteArray received = readExactly(*socket, 1000 * 102);
        QCOMPARE(received.size(), 1000 * 102);
        for (int i = 0; i < 1000; ++i) {
            const QByteArray frame = received.mid(i * 102, 102);
            QCOMPARE(frame.left(2), QByteArray("\x81\x64", 2));
            QCOMPARE(frame.mid(2), QByteArray::number(i).rightJustified(100, '.'));
        }
    }

    void largeOutputReachesAReader()
    {
        const auto socket = connectClient();
        QVERIFY(socket);
        socket->write("large");
        const QByteArray received = readExactly(*socket, 128 * 64 * 1024);
        QCOMPARE(received.size(), 128 * 64 * 1024);
        for (int i = 0; i < 128; ++i) {
            QCOMPARE(received.at(i * 64 * 1024), static_cast<char>('a' + i % 26));
            QCOMPARE(received.at(i * 64 * 1024 + 65535), static_cast<char>('a' + i % 26));
        }
    }

    void aGracefulCloseSendsCloseNotify()
    {
        const auto socket = connectClient();
        QVERIFY(socket);
        socket->write("bye");
        QCOMPARE(readExactly(*socket, 7), QByteArray("goodbye"));
        QVERIFY(QTest::qWaitFor(
                [&] { return socket->state() == QAbstractSocket::UnconnectedState; }, WaitMs));
        // close_notify, not a truncation: Qt reports a remote close, no SSL error.
        QCOMPARE(socket->error(), QAbstractSocket::RemoteHostClosedError);
    }

    void aPlaintextRequestIsRefused()
    {
        QTcpSocket socket;
        socket.connectToHost(QHostAddress::LocalHost, m_listener->serverPort());
        QVERIFY(socket.waitForConnected(WaitMs));
        socket.write("GET /api/health HTTP/1.1\r\nHost: a.localhost\r\n\r\n");
        const QByteArray answer = readExactly(socket, 1 << 20);
        QVERIFY2(answer.startsWith("HTTP/1.1 400 Bad Request\r\n"), answer.constData());
        QVERIFY(answer.endsWith("This port speaks TLS only: connect with https:// or wss://\n"));
        QCOMPARE(socket.state(), QAbstractSocket::UnconnectedState);
    }

    void aSilentClientIsClosedAfterTheHandshakeTimeout()
    {
        QTcpSocket socket;
        socket.connectToHost(QHostAddress::LocalHost, m_listener->serverPort());
        QVERIFY(socket.waitForConnected(WaitMs));
        QVERIFY(QTest::qWaitFor([&] { return socket.state() == QAbstractSocket::UnconnectedState; },
                                WaitMs));
        QVERIFY(socket.readAll().isEmpty());
    }

    void garbageIsDroppedWithoutAnAnswerInPlaintext()
    {
        QTcpSocket socket;
        socket.connectToHost(QHostAddress::LocalHost, m_listener->serverPort());
        QVERIFY(socket.waitForConnected(WaitMs));
        socket.write(QByteArray::fromHex("16030100ff") + QByteArray(255, '\x01'));
        const QByteArray answer = readExactly(socket, 1 << 20);
        QCOMPARE(socket.state(), QAbstractSocket::UnconnectedState);
        QVERIFY(!answer.contains("HTTP/1.1")); // at most a TLS alert
    }

    void aReloadServesNewConnectionsOnly()
    {
        const auto before = connectClient();
        QVERIFY(before);
        QCOMPARE(before->peerCertificate().subjectInfo(QSslCertificate::CommonName),
                 QStringList({ QStringLiteral("localhost") }));

        const rt::testing::IssuedCertificate renewed =
                m_ca.issue({ QStringLiteral("renewed.test") }, { QStringLiteral("127.0.0.1") });
        QVERIFY(rt::testing::writeFile(m_credentials.certificateFile, renewed.certificatePem));
        QVERIFY(rt::testing::writeFile(m_credentials.keyFile, renewed.keyPem));
        QVERIFY(m_source->reload());

        const auto after = connectClient(QStringLiteral("renewed.test"));
        QVERIFY(after);
        QCOMPARE(after->peerCertificate().subjectInfo(QSslCertificate::CommonName),
                 QStringList({ QStringLiteral("renewed.test") }));
        // The connection made before the reload goes on with its session.
        before->write("still here");
        QCOMPARE(readExactly(*before, 10), QByteArray("still here"));
    }
};

QTEST_GUILESS_MAIN(TstTlsConnection)
#include "tst_tls_connection.moc"
