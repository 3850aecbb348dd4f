// TlsSession and TlsContext with real OpenSSL on both ends: a server and a client session are
// joined in memory (what one produces is fed to the other), so every handshake, record and
// alert is real, only the socket is missing.
#include "server/tls/tls_context.h"
#include "server/tls/tls_session.h"
#include "tests/support/tls/test_certificates.h"

#include <QTemporaryDir>
#include <QTest>

#include <openssl/ssl.h>

#include <initializer_list>

using rt::testing::TestCertificateAuthority;
using rt::testing::writeFile;
using rt::tls::ClientSettings;
using rt::tls::ProtocolVersion;
using rt::tls::ServerCredentials;
using rt::tls::TlsContext;
using rt::tls::TlsContextPtr;
using rt::tls::TlsSession;

namespace {

QStringList names(std::initializer_list<const char *> list)
{
    QStringList out;
    for (const char *name : list) {
        out.append(QString::fromLatin1(name));
    }
    return out;
}

// Moves every byte each side produced to the other until neither produces more; collects what
// each side decrypted. Returns false as soon as either side fails.
bool pump(TlsSession &client, TlsSession &server, QByteArray &toClient, QByteArray &toServer)
{
    for (int round = 0; round < 100; ++round) {
        const QByteArray fromClient = client.pendingOutput().toByteArray();
        client.consumeOutput(fromClient.size());
        const QByteArray fromServer = server.pendingOutput().toByteArray();
        server.consumeOutput(fromServer.size());
        if (fromClient.isEmpty() && fromServer.isEmpty()) {
            return true;
        }
        if (!fromClient.isEmpty() && !server.receive(fromClient, toServer)) {
            return false;
        }
        if (!fromServer.isEmpty() && !client.receive(fromServer, toClient)) {
            return false;
        }
    }
    return false;
}

} // namespace

class TstTlsSession : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    TestCertificateAuthority m_ca;

    QString path(const QString &name) const { return m_dir.filePath(name); }

    // Writes a leaf for `names` (and 127.0.0.1) as <stem>.crt/.key; returns the server's files.
    ServerCredentials serverFiles(const QString &stem, const QStringList &names, int validDays = 30)
    {
        const rt::testing::IssuedCertificate issued =
                m_ca.issue(names, { QStringLiteral("127.0.0.1") }, validDays);
        ServerCredentials credentials;
        credentials.certificateFile = path(stem + QStringLiteral(".crt"));
        credentials.keyFile = path(stem + QStringLiteral(".key"));
        writeFile(credentials.certificateFile, issued.certificatePem);
        writeFile(credentials.keyFile, issued.keyPem);
        return credentials;
    }

    TlsContextPtr serverContext(const ServerCredentials &credentials)
    {
        auto context = TlsContext::forServer(credentials);
        if (!context) {
            qWarning() << context.error().message;
            return nullptr;
        }
        return context.value();
    }

    TlsContextPtr clientContext(ClientSettings settings = {})
    {
        if (settings.caFile.isEmpty()) {
            settings.caFile = path(QStringLiteral("ca.crt"));
        }
        auto context = TlsContext::forClient(settings);
        if (!context) {
            qWarning() << context.error().message;
            return nullptr;
        }
        return context.value();
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        QVERIFY(writeFile(path(QStringLiteral("ca.crt")), m_ca.certificatePem()));
    }

    void handshakeAndDataBothWays_data()
    {
        QTest::addColumn<ProtocolVersion>("minimum");
        QTest::addColumn<QString>("peerName");
        QTest::newRow("tls 1.2 floor, host name")
                << ProtocolVersion::Tls12 << QStringLiteral("localhost");
        QTest::newRow("tls 1.3 floor, address")
                << ProtocolVersion::Tls13 << QStringLiteral("127.0.0.1");
    }

    void handshakeAndDataBothWays()
    {
        QFETCH(ProtocolVersion, minimum);
        QFETCH(QString, peerName);
        ServerCredentials credentials = serverFiles(QStringLiteral("both"), names({ "localhost" }));
        credentials.minimumVersion = minimum;
        const TlsContextPtr serverSide = serverContext(credentials);
        QVERIFY(serverSide);
        TlsSession server(serverSide);
        TlsSession client(clientContext(), peerName);
        client.startHandshake();
        QByteArray toClient;
        QByteArray toServer;
        QVERIFY(pump(client, server, toClient, toServer));
        QVERIFY(client.isEstablished());
        QVERIFY(server.isEstablished());
        QCOMPARE(server.protocolName(), QStringLiteral("TLSv1.3"));

        QVERIFY(client.encrypt("GET / HTTP/1.1\r\n\r\n"));
        // A megabyte spans many records; it arrives whole and in order.
        QByteArray large(1024 * 1024, '\0');
        for (qsizetype i = 0; i < large.size(); ++i) {
            large[i] = static_cast<char>(i * 7);
        }
        QVERIFY(pump(client, server, toClient, toServer));
        QVERIFY(server.encrypt(large));
        QVERIFY(pump(client, server, toClient, toServer));
        QCOMPARE(toServer, QByteArray("GET / HTTP/1.1\r\n\r\n"));
        QCOMPARE(toClient.size(), large.size());
        QVERIFY(toClient == large);
    }

    void tls12IsNegotiatedWhenTheClientStopsThere()
    {
        const TlsContextPtr serverSide =
                serverContext(serverFiles(QStringLiteral("v12"), names({ "localhost" })));
        TlsContextPtr clientSide = clientContext();
        SSL_CTX_set_max_proto_version(clientSide->native(), TLS1_2_VERSION);
        TlsSession server(serverSide);
        TlsSession client(clientSide, QStringLiteral("localhost"));
        client.startHandshake();
        QByteArray toClient;
        QByteArray toServer;
        QVERIFY(pump(client, server, toClient, toServer));
        QCOMPARE(server.protocolName(), QStringLiteral("TLSv1.2"));
    }

    void aTls13FloorRefusesATls12Client()
    {
        ServerCredentials credentials =
                serverFiles(QStringLiteral("floor"), names({ "localhost" }));
        credentials.minimumVersion = ProtocolVersion::Tls13;
        TlsSession server(serverContext(credentials));
        TlsContextPtr clientSide = clientContext();
        SSL_CTX_set_max_proto_version(clientSide->native(), TLS1_2_VERSION);
        TlsSession client(clientSide, QStringLiteral("localhost"));
        client.startHandshake();
        QByteArray toClient;
        QByteArray toServer;
        QVERIFY(!pump(client, server, toClient, toServer));
        QCOMPARE(server.state(), TlsSession::State::Failed);
        QVERIFY2(server.errorString().contains(QStringLiteral("protocol")),
                 qPrintable(server.errorString()));
    }

    void theClientRefusesAWrongHostName()
    {
        TlsSession server(
                serverContext(serverFiles(QStringLiteral("host"), names({ "node-a.test" }))));
        TlsSession client(clientContext(), QStringLiteral("node-b.test"));
        client.startHandshake();
        QByteArray toClient;
        QByteArray toServer;
        QVERIFY(!pump(client, server, toClient, toServer));
        QCOMPARE(client.state(), TlsSession::State::Failed);
        QVERIFY2(client.errorString().contains(QStringLiteral("certificate verify failed")),
                 qPrintable(client.errorString()));
        QVERIFY(toServer.isEmpty());
    }

    void theClientRefusesAnUntrustedIssuer()
    {
        const TestCertificateAuthority other(QStringLiteral("someone else"));
        QVERIFY(writeFile(path(QStringLiteral("other-ca.crt")), other.certificatePem()));
        TlsSession server(
                serverContext(serverFiles(QStringLiteral("untrusted"), names({ "localhost" }))));
        ClientSettings settings;
        settings.caFile = path(QStringLiteral("other-ca.crt"));
        TlsSession client(clientContext(settings), QStringLiteral("localhost"));
        client.startHandshake();
        QByteArray toClient;
        QByteArray toServer;
        QVERIFY(!pump(client, server, toClient, toServer));
        QCOMPARE(client.state(), TlsSession::State::Failed);
    }

    void anExpiredCertificateIsRefused()
    {
        TlsSession server(
                serverContext(serverFiles(QStringLiteral("expired"), names({ "localhost" }), -1)));
        TlsSession client(clientContext(), QStringLiteral("localhost"));
        client.startHandshake();
        QByteArray toClient;
        QByteArray toServer;
        QVERIFY(!pump(client, server, toClient, toServer));
        QVERIFY2(client.errorString().contains(QStringLiteral("certificate verify failed")),
                 qPrintable(client.errorString()));
    }

    void mutualTlsNamesThePeer()
    {
        ServerCredentials credentials = serverFiles(QStringLiteral("mutual"), names({ "node-a" }));
        credentials.clientCaFile = path(QStringLiteral("ca.crt"));
        const TlsContextPtr serverSide = serverContext(credentials);
        QVERIFY(serverSide);
        const ServerCredentials clientFiles =
                serverFiles(QStringLiteral("node-b"), names({ "node-b", "alias-b" }));
        ClientSettings settings;
        settings.certificateFile = clientFiles.certificateFile;
        settings.keyFile = clientFiles.keyFile;
        TlsSession server(serverSide);
        TlsSession client(clientContext(settings), QStringLiteral("node-a"));
        client.startHandshake();
        QByteArray toClient;
        QByteArray toServer;
        QVERIFY(pump(client, server, toClient, toServer));
        QVERIFY(server.isEstablished());
        QCOMPARE(server.peerCertificateNames(), names({ "node-b", "alias-b" }));
        QCOMPARE(client.peerCertificateNames(), names({ "node-a" }));

        // Without a client certificate the server refuses.
        TlsSession server2(serverSide);
        TlsSession anonymous(clientContext(), QStringLiteral("node-a"));
        anonymous.startHandshake();
        QByteArray ignored;
        QVERIFY(!pump(anonymous, server2, ignored, ignored));
        QCOMPARE(server2.state(), TlsSession::State::Failed);
    }

    void garbageFailsCleanly_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::newRow("http request") << QByteArray("GET / HTTP/1.1\r\nHost: a\r\n\r\n");
        QTest::newRow("handshake header, junk body")
                << QByteArray::fromHex("160301002a") + QByteArray(42, 'x');
        QTest::newRow("application data before a handshake")
                << QByteArray::fromHex("1703030010") + QByteArray(16, '\0');
        QTest::newRow("oversized record")
                << QByteArray::fromHex("16030348ff") + QByteArray(64, 'a');
    }

    void garbageFailsCleanly()
    {
        QFETCH(QByteArray, bytes);
        TlsSession server(
                serverContext(serverFiles(QStringLiteral("garbage"), names({ "localhost" }))));
        QByteArray plaintext;
        QVERIFY(!server.receive(bytes, plaintext));
        QCOMPARE(server.state(), TlsSession::State::Failed);
        QVERIFY(!server.errorString().isEmpty());
        QVERIFY(plaintext.isEmpty());
        QVERIFY(!server.receive("more", plaintext)); // stays failed
        QVERIFY(!server.encrypt("nothing"));
    }

    void byteByByteInputStillHandshakes()
    {
        TlsSession server(
                serverContext(serverFiles(QStringLiteral("drip"), names({ "localhost" }))));
        TlsSession client(clientContext(), QStringLiteral("localhost"));
        client.startHandshake();
        QByteArray toClient;
        QByteArray toServer;
        for (int round = 0; round < 10 && !client.isEstablished(); ++round) {
            const QByteArray hello = client.pendingOutput().toByteArray();
            client.consumeOutput(hello.size());
            for (const char byte : hello) {
                QVERIFY(server.receive(QByteArrayView(&byte, 1), toServer));
            }
            const QByteArray answer = server.pendingOutput().toByteArray();
            server.consumeOutput(answer.size());
            QVERIFY(client.receive(answer, toClient));
        }
        QVERIFY(client.isEstablished());
        QVERIFY(pump(client, server, toClient, toServer));
        QVERIFY(server.isEstablished());
    }

    void closeNotifyReachesThePeer()
    {
        TlsSession server(
                serverContext(serverFiles(QStringLiteral("close"), names({ "localhost" }))));
        TlsSession client(clientContext(), QStringLiteral("localhost"));
        client.startHandshake();
        QByteArray toClient;
        QByteArray toServer;
        QVERIFY(pump(client, server, toClient, toServer));
        QVERIFY(server.encrypt("bye"));
        server.close();
        QVERIFY(!server.encrypt("after close"));
        QVERIFY(pump(client, server, toClient, toServer));
        QCOMPARE(toClient, QByteArray("bye"));
        QVERIFY(client.peerClosed());
    }

    void badFilesAreNamed()
    {
        ServerCredentials missing;
        missing.certificateFile = path(QStringLiteral("nope.crt"));
        missing.keyFile = path(QStringLiteral("nope.key"));
        auto result = TlsContext::forServer(missing);
        QVERIFY(!result);
        QVERIFY2(result.error().message.startsWith(
                         QStringLiteral("cannot read the certificate file ")
                         + missing.certificateFile),
                 qPrintable(result.error().message));

        ServerCredentials garbage =
                serverFiles(QStringLiteral("garbage-pem"), names({ "localhost" }));
        writeFile(garbage.certificateFile, "-----BEGIN CERTIFICATE-----\nnot base64\n");
        result = TlsContext::forServer(garbage);
        QVERIFY(!result);
        QVERIFY2(result.error().message.contains(QStringLiteral("cannot be used")),
                 qPrintable(result.error().message));

        ServerCredentials mismatched =
                serverFiles(QStringLiteral("mismatch"), names({ "localhost" }));
        writeFile(mismatched.keyFile, rt::testing::newKeyPem());
        result = TlsContext::forServer(mismatched);
        QVERIFY(!result);
        QVERIFY2(result.error().message.contains(QStringLiteral("does not belong"))
                         || result.error().message.contains(QStringLiteral("cannot be used")),
                 qPrintable(result.error().message));

        // A passphrase-protected key fails at once instead of prompting on the terminal.
        ServerCredentials encrypted =
                serverFiles(QStringLiteral("encrypted"), names({ "localhost" }));
        writeFile(encrypted.keyFile, rt::testing::newKeyPem("secret"));
        result = TlsContext::forServer(encrypted);
        QVERIFY(!result);
        QVERIFY2(result.error().message.contains(encrypted.keyFile),
                 qPrintable(result.error().message));
    }

    void reloadSwapsOnlyAWorkingPair()
    {
        const ServerCredentials credentials =
                serverFiles(QStringLiteral("reload"), names({ "first.test" }));
        auto source = rt::tls::ReloadableServerContext::load(credentials);
        QVERIFY(source);
        const TlsContextPtr first = source.value()->current();
        QVERIFY(first->certificateSummary().contains(QStringLiteral("CN=first.test")));

        // A renewal half-written (the key missing) is refused; the old pair keeps serving.
        const rt::testing::IssuedCertificate next = m_ca.issue(names({ "second.test" }));
        writeFile(credentials.certificateFile, next.certificatePem);
        auto reloaded = source.value()->reload();
        QVERIFY(!reloaded);
        QCOMPARE(source.value()->current(), first);

        writeFile(credentials.keyFile, next.keyPem);
        reloaded = source.value()->reload();
        QVERIFY2(reloaded, qPrintable(reloaded ? QString() : reloaded.error().message));
        QVERIFY(reloaded.value().contains(QStringLiteral("CN=second.test")));
        QVERIFY(source.value()->current() != first);

        // A session made from the old context still works after the swap.
        TlsSession server(first);
        TlsSession client(clientContext(), QStringLiteral("first.test"));
        client.startHandshake();
        QByteArray toClient;
        QByteArray toServer;
        QVERIFY(pump(client, server, toClient, toServer));
        QVERIFY(client.isEstablished());
    }

    void versionsParse()
    {
        QCOMPARE(rt::tls::parseProtocolVersion(u"1.2"), ProtocolVersion::Tls12);
        QCOMPARE(rt::tls::parseProtocolVersion(u" TLSv1.3 "), ProtocolVersion::Tls13);
        QVERIFY(!rt::tls::parseProtocolVersion(u"1.1"));
        QVERIFY(!rt::tls::parseProtocolVersion(u""));
        QVERIFY(!rt::tls::parseProtocolVersion(u"1.2x"));
    }
};

QTEST_GUILESS_MAIN(TstTlsSession)
#include "tst_tls_session.moc"
