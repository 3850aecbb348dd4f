// NodeLinks with mutual TLS over loopback, several "nodes" in one process, certificates from a
// throwaway test CA (real OpenSSL keys and X.509). A node's certificate is its identity: a link
// is ready only when each side's certificate, issued by the cluster CA, names the node id its
// Hello claims.
#include "server/cluster/links/link_tls.h"
#include "server/cluster/links/node_links.h"
#include "tests/support/tls/test_certificates.h"

#include <QSignalSpy>
#include <QSslSocket>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

using namespace rt::cluster::links;
using namespace std::chrono_literals;

namespace {

constexpr quint8 KindData = 16;
constexpr int WaitMs = 10'000;

struct Node
{
    explicit Node(const LinkSettings &settings) : links(std::make_unique<NodeLinks>(settings))
    {
        QObject::connect(links.get(), &NodeLinks::frameReceived, links.get(),
                         [this](const QString &, quint8, const QByteArray &payload) {
                             received.append(payload);
                         });
    }
    PeerAddress address() const
    {
        return PeerAddress{ links->settings().nodeId, QStringLiteral("127.0.0.1"),
                            links->listeningPort() };
    }

    std::unique_ptr<NodeLinks> links;
    QList<QByteArray> received;
};

} // namespace

class LinkTlsTest : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    rt::testing::TestCertificateAuthority m_ca;
    rt::testing::TestCertificateAuthority m_otherCa{ QStringLiteral("another cluster's CA") };

    // Files for a node whose certificate (issued by `ca`) names `certificateName`.
    LinkTlsFiles files(const QString &stem, const QString &certificateName,
                       const rt::testing::TestCertificateAuthority &ca)
    {
        const rt::testing::IssuedCertificate issued = ca.issue({ certificateName });
        LinkTlsFiles out;
        out.caFile = m_dir.filePath(QStringLiteral("ca.crt"));
        out.certificateFile = m_dir.filePath(stem + QStringLiteral(".crt"));
        out.keyFile = m_dir.filePath(stem + QStringLiteral(".key"));
        rt::testing::writeFile(out.certificateFile, issued.certificatePem);
        rt::testing::writeFile(out.keyFile, issued.keyPem);
        return out;
    }

    LinkSettings settings(const QString &nodeId, std::optional<QSslConfiguration> tls)
    {
        LinkSettings out;
        out.nodeId = nodeId;
        out.tls = std::move(tls);
        out.secret = out.tls ? QByteArray() : QByteArray(40, 'p');
        out.reconnectInitialDelay = 20ms;
        out.reconnectMaxDelay = 200ms;
        out.handshakeTimeout = 2000ms;
        out.heartbeatInterval = 500ms;
        return out;
    }

    LinkSettings tlsNode(const QString &nodeId, const QString &certificateName,
                         const rt::testing::TestCertificateAuthority &ca)
    {
        auto tls = loadLinkTls(files(nodeId, certificateName, ca));
        if (!tls) {
            qWarning() << tls.error().message;
            return {};
        }
        return settings(nodeId, tls.value());
    }

    // Both dial each other and no link becomes ready: `a` refuses both directions (an auth
    // failure each), and x sees at least `xFailures` of its own (a certificate x cannot verify,
    // or that names another node, is its failure too; one x could verify is only closed on it).
    static void expectRefusedBothWays(Node &a, Node &x, quint64 xFailures = 2)
    {
        QSignalSpy aConnected(a.links.get(), &NodeLinks::peerConnected);
        QSignalSpy xConnected(x.links.get(), &NodeLinks::peerConnected);
        QVERIFY(a.links->listen(QHostAddress::LocalHost, 0));
        QVERIFY(x.links->listen(QHostAddress::LocalHost, 0));
        a.links->setPeers({ x.address() });
        x.links->setPeers({ a.address() });
        QVERIFY(x.links->send(QStringLiteral("node-a"), KindData, QByteArray("intruder")));
        QTRY_VERIFY_WITH_TIMEOUT(a.links->totals().authFailures >= 2, WaitMs);
        QTRY_VERIFY_WITH_TIMEOUT(x.links->totals().authFailures >= xFailures, WaitMs);
        QCOMPARE(aConnected.size(), 0);
        QCOMPARE(xConnected.size(), 0);
        QVERIFY(a.received.isEmpty());
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(QSslSocket::supportsSsl());
        QVERIFY(m_dir.isValid());
        QVERIFY(rt::testing::writeFile(m_dir.filePath(QStringLiteral("ca.crt")),
                                       m_ca.certificatePem()));
    }

    void nodesWithTheirCertificatesExchangeFrames()
    {
        Node a(tlsNode(QStringLiteral("node-a"), QStringLiteral("node-a"), m_ca));
        Node b(tlsNode(QStringLiteral("node-b"), QStringLiteral("node-b"), m_ca));
        QVERIFY(a.links->listen(QHostAddress::LocalHost, 0));
        QVERIFY(b.links->listen(QHostAddress::LocalHost, 0));
        a.links->setPeers({ b.address() });
        b.links->setPeers({ a.address() });
        QTRY_COMPARE_WITH_TIMEOUT(a.links->connectedPeers().size(), 1, WaitMs);
        QTRY_COMPARE_WITH_TIMEOUT(b.links->connectedPeers().size(), 1, WaitMs);
        const QByteArray large(3 * 1024 * 1024, 'L');
        for (int i = 0; i < 100; ++i) {
            QVERIFY(a.links->send(QStringLiteral("node-b"), KindData, QByteArray::number(i),
                                  u"tenant:topic")); // one ordering key: one link, in order
        }
        QVERIFY(a.links->send(QStringLiteral("node-b"), KindData, large, u"tenant:topic"));
        QTRY_COMPARE_WITH_TIMEOUT(b.received.size(), 101, WaitMs);
        for (int i = 0; i < 100; ++i) {
            QCOMPARE(b.received.at(i), QByteArray::number(i));
        }
        QVERIFY(b.received.last() == large);
        QCOMPARE(a.links->totals().authFailures, 0U);
        QCOMPARE(b.links->totals().authFailures, 0U);
    }

    void aCertificateForAnotherNodeIsRefused()
    {
        Node a(tlsNode(QStringLiteral("node-a"), QStringLiteral("node-a"), m_ca));
        // node-x holds a valid certificate of the cluster CA, but one that names node-y.
        Node x(tlsNode(QStringLiteral("node-x"), QStringLiteral("node-y"), m_ca));
        expectRefusedBothWays(a, x);
    }

    void aCertificateOfAnotherCaIsRefused()
    {
        Node a(tlsNode(QStringLiteral("node-a"), QStringLiteral("node-a"), m_ca));
        Node x(tlsNode(QStringLiteral("node-x"), QStringLiteral("node-x"), m_otherCa));
        // x trusts the cluster CA and so a; a cannot verify x: only a sees the failures.
        expectRefusedBothWays(a, x, 0);
    }

    void aPeerWithoutACertificateIsRefused()
    {
        Node a(tlsNode(QStringLiteral("node-a"), QStringLiteral("node-a"), m_ca));
        QSslConfiguration anonymous = QSslConfiguration::defaultConfiguration();
        anonymous.setCaCertificates(QSslCertificate::fromData(m_ca.certificatePem()));
        anonymous.setPeerVerifyMode(QSslSocket::VerifyPeer);
        Node x(settings(QStringLiteral("node-x"), anonymous));
        expectRefusedBothWays(a, x);
    }

    void aPlaintextPeerIsRefused()
    {
        Node a(tlsNode(QStringLiteral("node-a"), QStringLiteral("node-a"), m_ca));
        Node x(settings(QStringLiteral("node-x"), std::nullopt));
        QSignalSpy aConnected(a.links.get(), &NodeLinks::peerConnected);
        QVERIFY(a.links->listen(QHostAddress::LocalHost, 0));
        QVERIFY(x.links->listen(QHostAddress::LocalHost, 0));
        a.links->setPeers({ x.address() });
        x.links->setPeers({ a.address() });
        QVERIFY(x.links->send(QStringLiteral("node-a"), KindData, QByteArray("cleartext")));
        // x's plaintext Hello is no TLS handshake for a; a's ClientHello no Hello for x.
        QTRY_VERIFY_WITH_TIMEOUT(a.links->totals().authFailures >= 2, WaitMs);
        QTRY_VERIFY_WITH_TIMEOUT(x.links->totals().authFailures >= 1, WaitMs);
        QCOMPARE(aConnected.size(), 0);
        QVERIFY(a.received.isEmpty());
    }

    void theLoaderNamesFilesItCannotUse()
    {
        LinkTlsFiles good = files(QStringLiteral("loader"), QStringLiteral("node-l"), m_ca);
        LinkTlsFiles missing = good;
        missing.caFile = m_dir.filePath(QStringLiteral("missing-ca.crt"));
        auto result = loadLinkTls(missing);
        QVERIFY(!result);
        QVERIFY(result.error().message.startsWith(QStringLiteral("cannot read the CA file ")));
        LinkTlsFiles notPem = good;
        notPem.certificateFile = good.keyFile;
        result = loadLinkTls(notPem);
        QVERIFY(!result);
        QVERIFY2(result.error().message.contains(QStringLiteral("holds no PEM certificate")),
                 qPrintable(result.error().message));
        LinkTlsFiles encrypted = good;
        rt::testing::writeFile(encrypted.keyFile, rt::testing::newKeyPem("passphrase"));
        result = loadLinkTls(encrypted);
        QVERIFY(!result);
        QVERIFY2(result.error().message.contains(QStringLiteral("no unencrypted PEM private key")),
                 qPrintable(result.error().message));
        result = loadLinkTls(files(QStringLiteral("loader"), QStringLiteral("node-l"), m_ca));
        QVERIFY(result);
        QVERIFY(certificateNamesNode(result.value().localCertificate(), QStringLiteral("NODE-L")));
        QVERIFY(!certificateNamesNode(result.value().localCertificate(), QStringLiteral("node")));
    }
};

QTEST_GUILESS_MAIN(LinkTlsTest)
#include "tst_link_tls.moc"
