// Tests of the JWS primitives behind verifyToken: algorithm names, JWK import (what counts as
// unusable), and signature checks that must fail closed (DER instead of r||s, wrong lengths,
// algorithm/key mismatches).
#include "server/auth/jws.h"
#include "tests/support/jwt/test_key.h"

#include <QTest>

#include <map>

using namespace Qt::StringLiterals;
using rt::auth::JwsAlgorithm;
using rt::auth::KeyFamily;
using rt::auth::PublicKey;
using rt::testsupport::TestKey;

Q_DECLARE_METATYPE(rt::auth::JwsAlgorithm)
Q_DECLARE_METATYPE(rt::auth::KeyFamily)
Q_DECLARE_METATYPE(rt::auth::PublicKey::Type)

namespace {

QString b64(QByteArrayView bytes)
{
    return QString::fromLatin1(rt::testsupport::base64Url(bytes));
}

QJsonObject with(QJsonObject jwk, const QString &member, const QJsonValue &value)
{
    if (value.isUndefined()) {
        jwk.remove(member);
    } else {
        jwk.insert(member, value);
    }
    return jwk;
}

} // namespace

class JwsTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void algorithmNames_data();
    void algorithmNames();
    void importsGeneratedKeys_data();
    void importsGeneratedKeys();
    void rejectsUnusableJwks_data();
    void rejectsUnusableJwks();
    void ecdsaSignatureMustBeRawAndExact();
    void rsaSignatureMustHaveModulusLength();
    void publicKeysRejectHmacAlgorithms();
    void hmacVerifyIsExact();
    void copiesShareTheKey();

private:
    std::map<TestKey::Kind, TestKey> m_keys;
};

void JwsTest::initTestCase()
{
    using Kind = TestKey::Kind;
    for (Kind kind :
         { Kind::Rsa, Kind::EcP256, Kind::EcP384, Kind::EcP521, Kind::Ed25519, Kind::Ed448 }) {
        m_keys.emplace(kind, TestKey::generate(kind));
    }
}

void JwsTest::algorithmNames_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<bool>("supported");
    QTest::addColumn<JwsAlgorithm>("algorithm");
    QTest::addColumn<KeyFamily>("family");

    QTest::newRow("HS256") << u"HS256"_s << true << JwsAlgorithm::HS256 << KeyFamily::Oct;
    QTest::newRow("HS384") << u"HS384"_s << true << JwsAlgorithm::HS384 << KeyFamily::Oct;
    QTest::newRow("HS512") << u"HS512"_s << true << JwsAlgorithm::HS512 << KeyFamily::Oct;
    QTest::newRow("RS256") << u"RS256"_s << true << JwsAlgorithm::RS256 << KeyFamily::Rsa;
    QTest::newRow("RS384") << u"RS384"_s << true << JwsAlgorithm::RS384 << KeyFamily::Rsa;
    QTest::newRow("RS512") << u"RS512"_s << true << JwsAlgorithm::RS512 << KeyFamily::Rsa;
    QTest::newRow("ES256") << u"ES256"_s << true << JwsAlgorithm::ES256 << KeyFamily::Ec;
    QTest::newRow("ES384") << u"ES384"_s << true << JwsAlgorithm::ES384 << KeyFamily::Ec;
    QTest::newRow("ES512") << u"ES512"_s << true << JwsAlgorithm::ES512 << KeyFamily::Ec;
    QTest::newRow("EdDSA") << u"EdDSA"_s << true << JwsAlgorithm::EdDSA << KeyFamily::Okp;
    QTest::newRow("Ed25519") << u"Ed25519"_s << true << JwsAlgorithm::Ed25519 << KeyFamily::Okp;
    QTest::newRow("Ed448") << u"Ed448"_s << true << JwsAlgorithm::Ed448 << KeyFamily::Okp;
    for (const QString &name : { u"none"_s, u"None"_s, u"hs256"_s, u"PS256"_s, u"ES256K"_s,
                                 u"RSA-OAEP"_s, u""_s, u"HS256 "_s }) {
        QTest::newRow(qPrintable(u"unsupported '"_s + name + u"'"_s))
                << name << false << JwsAlgorithm::HS256 << KeyFamily::Oct;
    }
}

void JwsTest::algorithmNames()
{
    QFETCH(QString, name);
    QFETCH(bool, supported);
    QFETCH(JwsAlgorithm, algorithm);
    QFETCH(KeyFamily, family);

    const std::optional<JwsAlgorithm> parsed = rt::auth::parseJwsAlgorithm(name);
    QCOMPARE(parsed.has_value(), supported);
    if (supported) {
        QCOMPARE(*parsed, algorithm);
        QCOMPARE(rt::auth::keyFamily(*parsed), family);
    }
}

void JwsTest::importsGeneratedKeys_data()
{
    QTest::addColumn<int>("kind");
    QTest::addColumn<PublicKey::Type>("type");
    QTest::addColumn<KeyFamily>("family");
    QTest::addColumn<QString>("algorithm");

    using Kind = TestKey::Kind;
    QTest::newRow("RSA") << int(Kind::Rsa) << PublicKey::Type::Rsa << KeyFamily::Rsa << u"RS512"_s;
    QTest::newRow("P-256") << int(Kind::EcP256) << PublicKey::Type::EcP256 << KeyFamily::Ec
                           << u"ES256"_s;
    QTest::newRow("P-384") << int(Kind::EcP384) << PublicKey::Type::EcP384 << KeyFamily::Ec
                           << u"ES384"_s;
    QTest::newRow("P-521") << int(Kind::EcP521) << PublicKey::Type::EcP521 << KeyFamily::Ec
                           << u"ES512"_s;
    QTest::newRow("Ed25519") << int(Kind::Ed25519) << PublicKey::Type::Ed25519 << KeyFamily::Okp
                             << u"EdDSA"_s;
    QTest::newRow("Ed448") << int(Kind::Ed448) << PublicKey::Type::Ed448 << KeyFamily::Okp
                           << u"Ed448"_s;
}

void JwsTest::importsGeneratedKeys()
{
    QFETCH(int, kind);
    QFETCH(PublicKey::Type, type);
    QFETCH(KeyFamily, family);
    QFETCH(QString, algorithm);

    const TestKey &testKey = m_keys.at(static_cast<TestKey::Kind>(kind));
    // Private members in a JWK are ignored rather than rejected.
    const std::optional<PublicKey> key =
            PublicKey::fromJwk(with(testKey.publicJwk(u"k"_s), u"d"_s, u"AAAA"_s));
    QVERIFY(key.has_value());
    QCOMPARE(key->type(), type);
    QCOMPARE(key->family(), family);

    const QByteArray input("header.payload");
    const QByteArray signature = testKey.sign(algorithm, input);
    const auto alg = *rt::auth::parseJwsAlgorithm(algorithm);
    QVERIFY(key->verify(alg, input, signature));
    QVERIFY(!key->verify(alg, QByteArray("header.payloaD"), signature));
}

void JwsTest::rejectsUnusableJwks_data()
{
    QTest::addColumn<QJsonObject>("jwk");

    using Kind = TestKey::Kind;
    const QJsonObject rsa = m_keys.at(Kind::Rsa).publicJwk();
    const QJsonObject p256 = m_keys.at(Kind::EcP256).publicJwk();
    const QJsonObject ed25519 = m_keys.at(Kind::Ed25519).publicJwk();
    const QJsonObject ed448 = m_keys.at(Kind::Ed448).publicJwk();

    QByteArray smallModulus(64, '\xff'); // 512 bits: below the 1024-bit floor
    QByteArray evenModulus(256, '\xff');
    evenModulus[255] = '\xfe';
    QByteArray hugeModulus(2049, '\xff'); // 16392 bits: above OpenSSL's verify limit

    QTest::newRow("unknown kty") << with(rsa, u"kty"_s, u"rsa"_s);
    QTest::newRow("oct is not a public key")
            << QJsonObject{ { u"kty"_s, u"oct"_s }, { u"k"_s, u"c2VjcmV0"_s } };
    QTest::newRow("kty missing") << with(rsa, u"kty"_s, QJsonValue::Undefined);
    QTest::newRow("RSA without n") << with(rsa, u"n"_s, QJsonValue::Undefined);
    QTest::newRow("RSA without e") << with(rsa, u"e"_s, QJsonValue::Undefined);
    QTest::newRow("RSA n not a string") << with(rsa, u"n"_s, 12345);
    QTest::newRow("RSA n not base64url") << with(rsa, u"n"_s, u"abc+def/"_s);
    QTest::newRow("RSA modulus too small") << with(rsa, u"n"_s, b64(smallModulus));
    QTest::newRow("RSA modulus too large") << with(rsa, u"n"_s, b64(hugeModulus));
    QTest::newRow("RSA modulus even") << with(rsa, u"n"_s, b64(evenModulus));
    QTest::newRow("RSA exponent one") << with(rsa, u"e"_s, u"AQ"_s);
    QTest::newRow("RSA exponent even") << with(rsa, u"e"_s, u"AQAA"_s);
    QTest::newRow("RSA exponent too long") << with(rsa, u"e"_s, b64(QByteArray(9, '\x01')));
    QTest::newRow("EC unknown curve") << with(p256, u"crv"_s, u"secp256k1"_s);
    QTest::newRow("EC curve missing") << with(p256, u"crv"_s, QJsonValue::Undefined);
    QTest::newRow("EC without y") << with(p256, u"y"_s, QJsonValue::Undefined);
    QTest::newRow("EC point not on curve") << with(with(p256, u"x"_s, b64(QByteArray(32, '\x01'))),
                                                   u"y"_s, b64(QByteArray(32, '\x01')));
    QTest::newRow("EC point at zero") << with(with(p256, u"x"_s, b64(QByteArray(32, '\0'))), u"y"_s,
                                              b64(QByteArray(32, '\0')));
    QTest::newRow("EC coordinate too long")
            << with(p256, u"x"_s, b64(QByteArray(QByteArray(1, '\0') + QByteArray(32, '\x01'))));
    QTest::newRow("EC P-256 point labelled P-384") << with(p256, u"crv"_s, u"P-384"_s);
    QTest::newRow("OKP X25519") << with(ed25519, u"crv"_s, u"X25519"_s);
    QTest::newRow("OKP X448") << with(ed448, u"crv"_s, u"X448"_s);
    QTest::newRow("Ed25519 key too short") << with(ed25519, u"x"_s, b64(QByteArray(31, 'a')));
    QTest::newRow("Ed25519 key with Ed448 length")
            << with(ed25519, u"x"_s, b64(QByteArray(57, 'a')));
    QTest::newRow("Ed448 key with Ed25519 length") << with(ed448, u"x"_s, b64(QByteArray(32, 'a')));
    QTest::newRow("OKP x missing") << with(ed25519, u"x"_s, QJsonValue::Undefined);
}

void JwsTest::rejectsUnusableJwks()
{
    QFETCH(QJsonObject, jwk);
    QVERIFY(!PublicKey::fromJwk(jwk).has_value());
}

void JwsTest::ecdsaSignatureMustBeRawAndExact()
{
    const TestKey &testKey = m_keys.at(TestKey::Kind::EcP256);
    const std::optional<PublicKey> key = PublicKey::fromJwk(testKey.publicJwk());
    QVERIFY(key);
    const QByteArray input("a.b");
    const QByteArray raw = testKey.sign(u"ES256", input);
    QCOMPARE(raw.size(), 64);
    QVERIFY(key->verify(JwsAlgorithm::ES256, input, raw));

    // The same signature in DER (what OpenSSL itself produces) is not a JWS signature.
    const auto integer = [](QByteArray value) -> QByteArray {
        while (value.size() > 1 && value.at(0) == '\0' && !(value.at(1) & 0x80)) {
            value.remove(0, 1);
        }
        if (value.at(0) & 0x80) {
            value.prepend('\0');
        }
        return QByteArray(1, '\x02') + QByteArray(1, char(value.size())) + value;
    };
    const QByteArray body = integer(raw.first(32)) + integer(raw.sliced(32));
    const QByteArray der = QByteArray(1, '\x30') + QByteArray(1, char(body.size())) + body;
    QVERIFY(!key->verify(JwsAlgorithm::ES256, input, der));

    QVERIFY(!key->verify(JwsAlgorithm::ES256, input, QByteArray(raw + '\0')));
    QVERIFY(!key->verify(JwsAlgorithm::ES256, input,
                         QByteArray(QByteArray(1, '\0') + raw.chopped(1))));
    QVERIFY(!key->verify(JwsAlgorithm::ES256, input, QByteArray(64, '\0')));
    QVERIFY(!key->verify(JwsAlgorithm::ES256, input, QByteArray()));
    // r||s is bound to the curve of the algorithm.
    QVERIFY(!key->verify(JwsAlgorithm::ES384, input, testKey.sign(u"ES384", input)));
}

void JwsTest::rsaSignatureMustHaveModulusLength()
{
    const TestKey &testKey = m_keys.at(TestKey::Kind::Rsa);
    const std::optional<PublicKey> key = PublicKey::fromJwk(testKey.publicJwk());
    QVERIFY(key);
    const QByteArray input("a.b");
    const QByteArray signature = testKey.sign(u"RS256", input);
    QCOMPARE(signature.size(), 256);
    QVERIFY(key->verify(JwsAlgorithm::RS256, input, signature));
    QVERIFY(!key->verify(JwsAlgorithm::RS384, input, signature));
    QVERIFY(!key->verify(JwsAlgorithm::RS256, input, signature.sliced(1)));
    QVERIFY(!key->verify(JwsAlgorithm::RS256, input, QByteArray(QByteArray(1, '\0') + signature)));
    QVERIFY(!key->verify(JwsAlgorithm::ES256, input, signature));
    QVERIFY(!key->verify(JwsAlgorithm::EdDSA, input, signature));
}

void JwsTest::publicKeysRejectHmacAlgorithms()
{
    const TestKey &testKey = m_keys.at(TestKey::Kind::Ed25519);
    const std::optional<PublicKey> key = PublicKey::fromJwk(testKey.publicJwk());
    QVERIFY(key);
    const QByteArray input("a.b");
    // A MAC keyed with the public key bytes (the classic algorithm-confusion forgery).
    const QByteArray publicBytes = QByteArray::fromBase64(
            testKey.publicJwk().value(u"x"_s).toString().toLatin1(), QByteArray::Base64UrlEncoding);
    for (const JwsAlgorithm alg :
         { JwsAlgorithm::HS256, JwsAlgorithm::HS384, JwsAlgorithm::HS512 }) {
        QVERIFY(!key->verify(alg, input, rt::auth::hmacSign(alg, publicBytes, input)));
    }
    QVERIFY(key->verify(JwsAlgorithm::Ed25519, input, testKey.sign(u"EdDSA", input)));
}

void JwsTest::hmacVerifyIsExact()
{
    const QByteArray secret("secret");
    const QByteArray input("a.b");
    const QByteArray mac = rt::auth::hmacSign(JwsAlgorithm::HS384, secret, input);
    QCOMPARE(mac.size(), 48);
    QVERIFY(rt::auth::hmacVerify(JwsAlgorithm::HS384, secret, input, mac));
    QVERIFY(!rt::auth::hmacVerify(JwsAlgorithm::HS256, secret, input, mac));
    QVERIFY(!rt::auth::hmacVerify(JwsAlgorithm::HS384, secret, input, mac.chopped(1)));
    QVERIFY(!rt::auth::hmacVerify(JwsAlgorithm::HS384, secret, input, QByteArray(mac + 'x')));
    QVERIFY(!rt::auth::hmacVerify(JwsAlgorithm::HS384, QByteArray("secreT"), input, mac));
    QVERIFY(!rt::auth::hmacVerify(JwsAlgorithm::HS384, secret, input, QByteArray()));
    QVERIFY(rt::auth::hmacSign(JwsAlgorithm::RS256, secret, input).isEmpty());
    QVERIFY(!rt::auth::hmacVerify(JwsAlgorithm::RS256, secret, input, QByteArray()));
    // RFC 4231 test case 2 (HMAC-SHA-256, key "Jefe").
    QCOMPARE(rt::auth::hmacSign(JwsAlgorithm::HS256, QByteArray("Jefe"),
                                QByteArray("what do ya want for nothing?"))
                     .toHex(),
             QByteArray("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"));
}

void JwsTest::copiesShareTheKey()
{
    const TestKey &testKey = m_keys.at(TestKey::Kind::Ed448);
    std::optional<PublicKey> original = PublicKey::fromJwk(testKey.publicJwk());
    QVERIFY(original);
    const PublicKey copy = *original;
    original.reset();
    const QByteArray input("a.b");
    QVERIFY(copy.verify(JwsAlgorithm::Ed448, input, testKey.sign(u"Ed448", input)));
}

QTEST_GUILESS_MAIN(JwsTest)
#include "tst_jws.moc"
