// Handshake pieces: hello encoding is strict, proofs depend on the secret, the role and every
// byte of both hellos, and comparison is exact.
#include "server/cluster/links/handshake.h"
#include "server/cluster/links/link_settings.h"

#include <QTest>

using namespace rt::cluster::links;

class HandshakeTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void helloRoundTrip();
    void helloRejectsMalformed_data();
    void helloRejectsMalformed();
    void noncesAreFresh();
    void proofBindsEverything();
    void proofMatchesIsExact();
    void rejectReasonIsBounded();
    void settingsValidation();
};

void HandshakeTest::helloRoundTrip()
{
    const Hello hello = makeHello(QStringLiteral("nöde-1"));
    QCOMPARE(hello.nonce.size(), HelloNonceBytes);
    const QByteArray encoded = encodeHello(hello);
    QVERIFY(encoded.startsWith("RTLINK"));
    const auto decoded = decodeHello(encoded);
    QVERIFY2(decoded.ok(), qPrintable(decoded.ok() ? QString() : decoded.error().message));
    QCOMPARE(decoded->nodeId, QStringLiteral("nöde-1"));
    QCOMPARE(decoded->nonce, hello.nonce);
    QCOMPARE(decoded->version, LinkProtocolVersion);
}

void HandshakeTest::helloRejectsMalformed_data()
{
    QTest::addColumn<QByteArray>("payload");
    const QByteArray good = encodeHello(makeHello(QStringLiteral("node")));
    QTest::newRow("empty") << QByteArray();
    QTest::newRow("bad magic") << QByteArray("XTLINK") + good.mid(6);
    QTest::newRow("version 2") << good.left(6) + QByteArray(1, '\x02') + good.mid(7);
    QTest::newRow("truncated nonce") << good.left(20);
    QTest::newRow("missing id") << good.left(6 + 1 + 32) + QByteArray(1, '\0');
    QTest::newRow("id shorter than said") << good.chopped(1);
    QTest::newRow("trailing byte") << good + "x";
    QByteArray badUtf8 = good.left(6 + 1 + 32);
    badUtf8 += QByteArray("\x02\xc3\x28", 3);
    QTest::newRow("invalid UTF-8 id") << badUtf8;
    QByteArray nul = good.left(6 + 1 + 32);
    nul += QByteArray("\x02"
                      "a\0",
                      3);
    QTest::newRow("NUL in id") << nul;
}

void HandshakeTest::helloRejectsMalformed()
{
    QFETCH(QByteArray, payload);
    const auto decoded = decodeHello(payload);
    QVERIFY(!decoded.ok());
    QVERIFY(!decoded.error().message.isEmpty());
}

void HandshakeTest::noncesAreFresh()
{
    QCOMPARE_NE(makeHello(QStringLiteral("a")).nonce, makeHello(QStringLiteral("a")).nonce);
}

void HandshakeTest::proofBindsEverything()
{
    const QByteArray secret("cluster-secret");
    const QByteArray dialer = encodeHello(makeHello(QStringLiteral("a")));
    const QByteArray acceptor = encodeHello(makeHello(QStringLiteral("b")));
    const QByteArray proof = computeProof(secret, HandshakeRole::Dialer, dialer, acceptor);
    QCOMPARE(proof.size(), ProofBytes);
    // Deterministic for the same inputs.
    QCOMPARE(computeProof(secret, HandshakeRole::Dialer, dialer, acceptor), proof);
    // Any change gives another proof.
    QCOMPARE_NE(computeProof("other-secret", HandshakeRole::Dialer, dialer, acceptor), proof);
    QCOMPARE_NE(computeProof(secret, HandshakeRole::Acceptor, dialer, acceptor), proof);
    QCOMPARE_NE(computeProof(secret, HandshakeRole::Dialer, acceptor, dialer), proof);
    QByteArray flipped = acceptor;
    flipped[10] = static_cast<char>(flipped[10] ^ 1);
    QCOMPARE_NE(computeProof(secret, HandshakeRole::Dialer, dialer, flipped), proof);
    // The proof does not contain the secret.
    QVERIFY(!proof.contains(secret));
    // Length prefixes keep ("ab", "c") and ("a", "bc") apart.
    QCOMPARE_NE(computeProof(secret, HandshakeRole::Dialer, "ab", "c"),
                computeProof(secret, HandshakeRole::Dialer, "a", "bc"));
    // Known answer (computed with Python's hmac module over the documented layout), so a
    // change of the proof format cannot go unnoticed.
    QCOMPARE(computeProof("k", HandshakeRole::Dialer, "d", "a").toHex(),
             QByteArray("5858618a0eb885518243c1bd676dcefe1cd5404b15b8ca222c1db19ecedb3b51"));
}

void HandshakeTest::proofMatchesIsExact()
{
    const QByteArray a(32, 'x');
    QVERIFY(proofMatches(a, a));
    QByteArray b = a;
    b[31] = 'y';
    QVERIFY(!proofMatches(a, b));
    QVERIFY(!proofMatches(a, a.left(31)));
    QVERIFY(!proofMatches(a, QByteArray()));
}

void HandshakeTest::rejectReasonIsBounded()
{
    const QByteArray long_ = encodeRejectReason(QString(1000, u'x'));
    QCOMPARE(long_.size(), MaxRejectReasonBytes);
    QCOMPARE(decodeRejectReason(QByteArray(5000, 'y')).size(), MaxRejectReasonBytes);
    QCOMPARE(decodeRejectReason(encodeRejectReason(QStringLiteral("bad secret"))),
             QStringLiteral("bad secret"));
}

void HandshakeTest::settingsValidation()
{
    LinkSettings settings;
    settings.nodeId = QStringLiteral("a");
    settings.secret = QByteArray(MinPlaintextSecretBytes, 's');
    QVERIFY(!validateLinkSettings(settings));
    LinkSettings noSecret = settings;
    noSecret.secret.clear();
    QVERIFY(validateLinkSettings(noSecret));
    // Plaintext links rest on the secret alone: a short one is refused, with TLS none is needed.
    LinkSettings shortSecret = settings;
    shortSecret.secret.chop(1);
    QVERIFY(validateLinkSettings(shortSecret)->contains(QStringLiteral("at least 32 bytes")));
    LinkSettings tlsWithoutSecret = noSecret;
    tlsWithoutSecret.tls = QSslConfiguration::defaultConfiguration();
    QVERIFY(!validateLinkSettings(tlsWithoutSecret));
    LinkSettings noName = settings;
    noName.nodeId.clear();
    QVERIFY(validateLinkSettings(noName));
    LinkSettings longName = settings;
    longName.nodeId = QString(256, u'n');
    QVERIFY(validateLinkSettings(longName));
    LinkSettings zeroLinks = settings;
    zeroLinks.linksPerPeer = 0;
    QVERIFY(validateLinkSettings(zeroLinks)->contains(u"CLUSTER_LINKS_PER_PEER"));
    LinkSettings badDelays = settings;
    badDelays.reconnectMaxDelay = std::chrono::milliseconds(10);
    QVERIFY(validateLinkSettings(badDelays));
}

QTEST_GUILESS_MAIN(HandshakeTest)
#include "tst_handshake.moc"
