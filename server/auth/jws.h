#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QJsonObject>
#include <QStringView>

#include <openssl/types.h>

#include <memory>
#include <optional>

// JSON Web Signature primitives over OpenSSL 3: the algorithms a token header may name, public
// keys built from JWKs, and signature checks. Internal to server/auth (jwt.cpp is the only user
// in production; tests use it directly). Everything here is callable from any thread; a built
// PublicKey is never modified, so one instance may verify on several threads at once.
namespace rt::auth {

enum class JwsAlgorithm {
    HS256,
    HS384,
    HS512,
    RS256,
    RS384,
    RS512,
    ES256,
    ES384,
    ES512,
    EdDSA, // RFC 8037 spelling: the curve comes from the key
    Ed25519, // JOSE/Joken spellings that pin the curve
    Ed448,
};

// Which JWK `kty` an algorithm needs.
enum class KeyFamily { Oct, Rsa, Ec, Okp };

// Exact, case-sensitive names as in the `alg` header; anything else (including "none") is
// unsupported.
std::optional<JwsAlgorithm> parseJwsAlgorithm(QStringView name);
KeyFamily keyFamily(JwsAlgorithm algorithm);

// HMAC of `data` for an HS algorithm; empty if the algorithm is not HS or OpenSSL fails.
QByteArray hmacSign(JwsAlgorithm algorithm, QByteArrayView key, QByteArrayView data);
// Constant-time comparison of `signature` with the HMAC of `signingInput`.
bool hmacVerify(JwsAlgorithm algorithm, QByteArrayView key, QByteArrayView signingInput,
                QByteArrayView signature);

struct EvpPkeyDeleter
{
    void operator()(EVP_PKEY *key) const;
};
using EvpPkeyPtr = std::unique_ptr<EVP_PKEY, EvpPkeyDeleter>;

// An RSA, EC (P-256/P-384/P-521) or OKP (Ed25519/Ed448) public key taken from a JWK.
class PublicKey
{
public:
    enum class Type { Rsa, EcP256, EcP384, EcP521, Ed25519, Ed448 };

    // Builds the key from the public members of a JWK (`n`/`e`; `crv`/`x`/`y`; `crv`/`x`).
    // Returns nullopt for anything unusable: unknown kty or curve (X25519, secp256k1, ...),
    // missing or malformed members, points not on the curve, RSA moduli outside 1024..16384
    // bits. Private members (`d`, ...) are ignored.
    static std::optional<PublicKey> fromJwk(const QJsonObject &jwk);

    Type type() const { return m_type; }
    KeyFamily family() const;

    // Verifies a JWS signature (raw r||s for ECDSA, as JWS encodes it). False when the algorithm
    // does not fit the key (ES384 with a P-256 key, Ed448 with an Ed25519 key, HS*, ...).
    bool verify(JwsAlgorithm algorithm, QByteArrayView signingInput,
                QByteArrayView signature) const;

private:
    PublicKey(Type type, EvpPkeyPtr key);

    Type m_type;
    std::shared_ptr<EVP_PKEY> m_key; // shared so PublicKey stays copyable; never mutated
};

} // namespace rt::auth
