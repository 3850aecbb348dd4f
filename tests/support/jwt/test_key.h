#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringView>

#include <openssl/types.h>

#include <memory>

// Test keys and tokens for every JWS algorithm the server accepts (HS*, RS*, ES*, EdDSA).
// Generates fresh keys with OpenSSL, exports their public halves as JWKs and signs tokens, so
// unit, integration and end-to-end suites can configure a tenant's JWKS and mint matching
// tokens. Test code only: keys live in memory and are never persisted. Thread-safe for reads.
namespace rt::testsupport {

class TestKey
{
public:
    enum class Kind { Hmac, Rsa, EcP256, EcP384, EcP521, Ed25519, Ed448 };

    // A fresh key: 32 random bytes for Hmac, RSA 2048, EC on the named curve, Ed25519, Ed448.
    // Aborts the test process if OpenSSL cannot generate it (a broken environment, not a test
    // failure to report).
    static TestKey generate(Kind kind);
    static TestKey hmac(QByteArray secret);

    Kind kind() const { return m_kind; }
    // HS256, RS256, ES256/ES384/ES512 (by curve) or EdDSA.
    QString defaultAlgorithm() const;
    const QByteArray &secret() const { return m_secret; } // Hmac keys only

    // The public JWK: kty/n/e, kty/crv/x/y, kty/crv/x, or kty/k for Hmac; `kid` if not empty.
    QJsonObject publicJwk(const QString &kid = {}) const;

    // The JWS signature of `signingInput` for `algorithm`, as the token carries it before
    // base64url (raw r||s for ECDSA). The digest follows the algorithm and the ECDSA width
    // follows the key, so mismatches (ES384 with a P-256 key) can be produced on purpose.
    // Empty if the key's family cannot sign `algorithm` at all.
    QByteArray sign(QStringView algorithm, QByteArrayView signingInput) const;

private:
    TestKey(Kind kind, QByteArray secret, std::shared_ptr<EVP_PKEY> key);

    Kind m_kind;
    QByteArray m_secret;
    std::shared_ptr<EVP_PKEY> m_key;
};

// Unpadded base64url of raw bytes, or of a JSON object in compact form.
QByteArray base64Url(QByteArrayView bytes);
QByteArray base64Url(const QJsonObject &object);

// header.payload.signature with the signature made by `key` for the header's `alg`.
QByteArray signToken(const QJsonObject &header, const QJsonObject &claims, const TestKey &key);
// The same with a header {"alg": algorithm or key.defaultAlgorithm(), "typ": "JWT", "kid": kid}
// (no kid member if `kid` is empty).
QByteArray signToken(const TestKey &key, const QJsonObject &claims, const QString &kid = {},
                     const QString &algorithm = {});
// For malformed-JSON cases: header and payload given as raw bytes (base64url-encoded here),
// signed with `key` for `algorithm`.
QByteArray signRawToken(QByteArrayView headerJson, QByteArrayView payloadJson, const TestKey &key,
                        QStringView algorithm);

// {"keys":[...]} in compact JSON, the form of a tenant's jwt_jwks.
QByteArray jwks(const QList<QJsonObject> &keys);

} // namespace rt::testsupport
