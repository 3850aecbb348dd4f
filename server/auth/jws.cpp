#include "server/auth/jws.h"

#include "server/auth/base64url.h"

#include <QJsonValue>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>

#include <array>
#include <utility>

namespace rt::auth {

namespace {

// RFC 7518 allows any RSA size >= 2048; 1024 is kept for old deployments. Above 16384 bits
// OpenSSL refuses to verify anyway, and huge moduli would let a tenant's JWKS slow every check.
constexpr int MinRsaBits = 1024;
constexpr int MaxRsaBits = 16384;
constexpr qsizetype MaxRsaExponentBytes = 8;

struct BignumDeleter
{
    void operator()(BIGNUM *bn) const { BN_free(bn); }
};
using BignumPtr = std::unique_ptr<BIGNUM, BignumDeleter>;

struct ParamBuildDeleter
{
    void operator()(OSSL_PARAM_BLD *bld) const { OSSL_PARAM_BLD_free(bld); }
};
struct ParamDeleter
{
    void operator()(OSSL_PARAM *params) const { OSSL_PARAM_free(params); }
};
struct PkeyCtxDeleter
{
    void operator()(EVP_PKEY_CTX *ctx) const { EVP_PKEY_CTX_free(ctx); }
};
struct MdCtxDeleter
{
    void operator()(EVP_MD_CTX *ctx) const { EVP_MD_CTX_free(ctx); }
};
struct EcdsaSigDeleter
{
    void operator()(ECDSA_SIG *sig) const { ECDSA_SIG_free(sig); }
};

const unsigned char *bytes(QByteArrayView view)
{
    // OpenSSL wants unsigned bytes; a non-null pointer even for empty input keeps it from
    // treating "empty" as "absent".
    static const unsigned char NoBytes = 0;
    return view.isEmpty() ? &NoBytes : reinterpret_cast<const unsigned char *>(view.data());
}

// The OpenSSL error queue is per thread; clear it after expected failures so unrelated code
// (Qt's TLS backend runs on the same threads) never sees our leftovers.
template <typename T>
T failed(T value)
{
    ERR_clear_error();
    return value;
}

std::optional<QByteArray> decodeMember(const QJsonObject &jwk, QLatin1StringView name)
{
    const QJsonValue value = jwk.value(name);
    if (!value.isString()) {
        return std::nullopt;
    }
    // Characters outside Latin-1 become '?', which the decoder rejects like any non-alphabet byte.
    return decodeBase64Url(value.toString().toLatin1());
}

EvpPkeyPtr keyFromParams(const char *keyType, OSSL_PARAM_BLD *bld)
{
    const std::unique_ptr<OSSL_PARAM, ParamDeleter> params(OSSL_PARAM_BLD_to_param(bld));
    const std::unique_ptr<EVP_PKEY_CTX, PkeyCtxDeleter> ctx(
            EVP_PKEY_CTX_new_from_name(nullptr, keyType, nullptr));
    if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) != 1) {
        return failed(EvpPkeyPtr());
    }
    EVP_PKEY *raw = nullptr;
    if (EVP_PKEY_fromdata(ctx.get(), &raw, EVP_PKEY_PUBLIC_KEY, params.get()) != 1) {
        return failed(EvpPkeyPtr());
    }
    return EvpPkeyPtr(raw);
}

EvpPkeyPtr rsaKeyFromJwk(const QJsonObject &jwk)
{
    const std::optional<QByteArray> n = decodeMember(jwk, QLatin1StringView("n"));
    const std::optional<QByteArray> e = decodeMember(jwk, QLatin1StringView("e"));
    if (!n || !e || n->isEmpty() || e->isEmpty() || e->size() > MaxRsaExponentBytes) {
        return {};
    }
    const BignumPtr modulus(BN_bin2bn(bytes(*n), static_cast<int>(n->size()), nullptr));
    const BignumPtr exponent(BN_bin2bn(bytes(*e), static_cast<int>(e->size()), nullptr));
    if (!modulus || !exponent) {
        return failed(EvpPkeyPtr());
    }
    const int modulusBits = BN_num_bits(modulus.get());
    // An even modulus or exponent, or e < 3, cannot be a real RSA key.
    if (modulusBits < MinRsaBits || modulusBits > MaxRsaBits || !BN_is_odd(modulus.get())
        || !BN_is_odd(exponent.get()) || BN_is_one(exponent.get())) {
        return {};
    }
    const std::unique_ptr<OSSL_PARAM_BLD, ParamBuildDeleter> bld(OSSL_PARAM_BLD_new());
    if (!bld || OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_N, modulus.get()) != 1
        || OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_E, exponent.get()) != 1) {
        return failed(EvpPkeyPtr());
    }
    return keyFromParams("RSA", bld.get());
}

struct EcCurve
{
    QLatin1StringView jwkName;
    const char *groupName = nullptr;
    qsizetype fieldBytes = 0;
    PublicKey::Type type = PublicKey::Type::EcP256;
};

constexpr std::array<EcCurve, 3> EcCurves{ {
        { QLatin1StringView("P-256"), "prime256v1", 32, PublicKey::Type::EcP256 },
        { QLatin1StringView("P-384"), "secp384r1", 48, PublicKey::Type::EcP384 },
        { QLatin1StringView("P-521"), "secp521r1", 66, PublicKey::Type::EcP521 },
} };

const EcCurve *curveForType(PublicKey::Type type)
{
    for (const EcCurve &curve : EcCurves) {
        if (curve.type == type) {
            return &curve;
        }
    }
    return nullptr;
}

std::optional<PublicKey::Type> ecTypeFromJwk(const QJsonObject &jwk, EvpPkeyPtr *key)
{
    const QString crv = jwk.value(QLatin1StringView("crv")).toString();
    const EcCurve *curve = nullptr;
    for (const EcCurve &candidate : EcCurves) {
        if (crv == candidate.jwkName) {
            curve = &candidate;
        }
    }
    if (!curve) {
        return std::nullopt;
    }
    const std::optional<QByteArray> x = decodeMember(jwk, QLatin1StringView("x"));
    const std::optional<QByteArray> y = decodeMember(jwk, QLatin1StringView("y"));
    // RFC 7518 §6.2.1.2 wants full-length coordinates; shorter ones are left-padded because
    // some producers strip leading zeros.
    if (!x || !y || x->isEmpty() || y->isEmpty() || x->size() > curve->fieldBytes
        || y->size() > curve->fieldBytes) {
        return std::nullopt;
    }
    QByteArray point(1, '\x04');
    point.append(QByteArray(curve->fieldBytes - x->size(), '\0')).append(*x);
    point.append(QByteArray(curve->fieldBytes - y->size(), '\0')).append(*y);

    const std::unique_ptr<OSSL_PARAM_BLD, ParamBuildDeleter> bld(OSSL_PARAM_BLD_new());
    if (!bld
        || OSSL_PARAM_BLD_push_utf8_string(bld.get(), OSSL_PKEY_PARAM_GROUP_NAME, curve->groupName,
                                           0)
                != 1
        || OSSL_PARAM_BLD_push_octet_string(bld.get(), OSSL_PKEY_PARAM_PUB_KEY, point.constData(),
                                            static_cast<size_t>(point.size()))
                != 1) {
        return failed(std::optional<PublicKey::Type>());
    }
    EvpPkeyPtr built = keyFromParams("EC", bld.get());
    if (!built) {
        return std::nullopt;
    }
    // Belt and braces: import already rejects points off the curve, and the NIST curves have
    // cofactor 1, so this cannot fail today. It keeps invalid points out should a future
    // OpenSSL import become lazier; it runs once per key, at KeySet build time.
    const std::unique_ptr<EVP_PKEY_CTX, PkeyCtxDeleter> check(
            EVP_PKEY_CTX_new_from_pkey(nullptr, built.get(), nullptr));
    if (!check || EVP_PKEY_public_check(check.get()) != 1) {
        return failed(std::optional<PublicKey::Type>());
    }
    *key = std::move(built);
    return curve->type;
}

std::optional<PublicKey::Type> okpTypeFromJwk(const QJsonObject &jwk, EvpPkeyPtr *key)
{
    const QString crv = jwk.value(QLatin1StringView("crv")).toString();
    int nid = 0;
    qsizetype keyBytes = 0;
    PublicKey::Type type = PublicKey::Type::Ed25519;
    if (crv == QLatin1StringView("Ed25519")) {
        nid = EVP_PKEY_ED25519;
        keyBytes = 32;
    } else if (crv == QLatin1StringView("Ed448")) {
        nid = EVP_PKEY_ED448;
        keyBytes = 57;
        type = PublicKey::Type::Ed448;
    } else {
        return std::nullopt; // X25519/X448 are key-agreement curves, not signers
    }
    const std::optional<QByteArray> x = decodeMember(jwk, QLatin1StringView("x"));
    if (!x || x->size() != keyBytes) {
        return std::nullopt;
    }
    EvpPkeyPtr built(
            EVP_PKEY_new_raw_public_key(nid, nullptr, bytes(*x), static_cast<size_t>(x->size())));
    if (!built) {
        return failed(std::optional<PublicKey::Type>());
    }
    *key = std::move(built);
    return type;
}

const EVP_MD *digestFor(JwsAlgorithm algorithm)
{
    switch (algorithm) {
    case JwsAlgorithm::HS256:
    case JwsAlgorithm::RS256:
    case JwsAlgorithm::ES256:
        return EVP_sha256();
    case JwsAlgorithm::HS384:
    case JwsAlgorithm::RS384:
    case JwsAlgorithm::ES384:
        return EVP_sha384();
    case JwsAlgorithm::HS512:
    case JwsAlgorithm::RS512:
    case JwsAlgorithm::ES512:
        return EVP_sha512();
    case JwsAlgorithm::EdDSA:
    case JwsAlgorithm::Ed25519:
    case JwsAlgorithm::Ed448:
        break;
    }
    return nullptr; // EdDSA hashes internally
}

const char *hmacDigestName(JwsAlgorithm algorithm)
{
    switch (algorithm) {
    case JwsAlgorithm::HS256:
        return "SHA256";
    case JwsAlgorithm::HS384:
        return "SHA384";
    case JwsAlgorithm::HS512:
        return "SHA512";
    default:
        return nullptr;
    }
}

// ECDSA in JWS is the fixed-width concatenation r||s (RFC 7518 §3.4); OpenSSL verifies DER.
std::optional<QByteArray> ecdsaRawToDer(QByteArrayView raw, qsizetype fieldBytes)
{
    if (raw.size() != 2 * fieldBytes) {
        return std::nullopt;
    }
    BignumPtr r(BN_bin2bn(bytes(raw), static_cast<int>(fieldBytes), nullptr));
    BignumPtr s(BN_bin2bn(bytes(raw.sliced(fieldBytes)), static_cast<int>(fieldBytes), nullptr));
    const std::unique_ptr<ECDSA_SIG, EcdsaSigDeleter> sig(ECDSA_SIG_new());
    if (!r || !s || !sig || ECDSA_SIG_set0(sig.get(), r.get(), s.get()) != 1) {
        return failed(std::optional<QByteArray>());
    }
    // ECDSA_SIG_set0 took ownership of r and s.
    (void)r.release();
    (void)s.release();
    unsigned char *der = nullptr;
    const int derLength = i2d_ECDSA_SIG(sig.get(), &der);
    if (derLength <= 0) {
        return failed(std::optional<QByteArray>());
    }
    QByteArray result(reinterpret_cast<const char *>(der), derLength);
    OPENSSL_free(der);
    return result;
}

bool digestVerify(EVP_PKEY *key, const EVP_MD *md, QByteArrayView signingInput,
                  QByteArrayView signature)
{
    const std::unique_ptr<EVP_MD_CTX, MdCtxDeleter> ctx(EVP_MD_CTX_new());
    if (!ctx || EVP_DigestVerifyInit(ctx.get(), nullptr, md, nullptr, key) != 1) {
        return failed(false);
    }
    const int result =
            EVP_DigestVerify(ctx.get(), bytes(signature), static_cast<size_t>(signature.size()),
                             bytes(signingInput), static_cast<size_t>(signingInput.size()));
    return result == 1 ? true : failed(false);
}

} // namespace

void EvpPkeyDeleter::operator()(EVP_PKEY *key) const
{
    EVP_PKEY_free(key);
}

std::optional<JwsAlgorithm> parseJwsAlgorithm(QStringView name)
{
    static constexpr std::array<std::pair<QLatin1StringView, JwsAlgorithm>, 12> Names{ {
            { QLatin1StringView("HS256"), JwsAlgorithm::HS256 },
            { QLatin1StringView("HS384"), JwsAlgorithm::HS384 },
            { QLatin1StringView("HS512"), JwsAlgorithm::HS512 },
            { QLatin1StringView("RS256"), JwsAlgorithm::RS256 },
            { QLatin1StringView("RS384"), JwsAlgorithm::RS384 },
            { QLatin1StringView("RS512"), JwsAlgorithm::RS512 },
            { QLatin1StringView("ES256"), JwsAlgorithm::ES256 },
            { QLatin1StringView("ES384"), JwsAlgorithm::ES384 },
            { QLatin1StringView("ES512"), JwsAlgorithm::ES512 },
            { QLatin1StringView("EdDSA"), JwsAlgorithm::EdDSA },
            { QLatin1StringView("Ed25519"), JwsAlgorithm::Ed25519 },
            { QLatin1StringView("Ed448"), JwsAlgorithm::Ed448 },
    } };
    for (const auto &[text, algorithm] : Names) {
        if (name == text) {
            return algorithm;
        }
    }
    return std::nullopt;
}

KeyFamily keyFamily(JwsAlgorithm algorithm)
{
    switch (algorithm) {
    case JwsAlgorithm::HS256:
    case JwsAlgorithm::HS384:
    case JwsAlgorithm::HS512:
        return KeyFamily::Oct;
    case JwsAlgorithm::RS256:
    case JwsAlgorithm::RS384:
    case JwsAlgorithm::RS512:
        return KeyFamily::Rsa;
    case JwsAlgorithm::ES256:
    case JwsAlgorithm::ES384:
    case JwsAlgorithm::ES512:
        return KeyFamily::Ec;
    case JwsAlgorithm::EdDSA:
    case JwsAlgorithm::Ed25519:
    case JwsAlgorithm::Ed448:
        break;
    }
    return KeyFamily::Okp;
}

QByteArray hmacSign(JwsAlgorithm algorithm, QByteArrayView key, QByteArrayView data)
{
    const char *digest = hmacDigestName(algorithm);
    if (!digest) {
        return {};
    }
    std::array<unsigned char, EVP_MAX_MD_SIZE> out{};
    size_t outLength = 0;
    if (!EVP_Q_mac(nullptr, "HMAC", nullptr, digest, nullptr, bytes(key),
                   static_cast<size_t>(key.size()), bytes(data), static_cast<size_t>(data.size()),
                   out.data(), out.size(), &outLength)) {
        return failed(QByteArray());
    }
    return { reinterpret_cast<const char *>(out.data()), static_cast<qsizetype>(outLength) };
}

bool hmacVerify(JwsAlgorithm algorithm, QByteArrayView key, QByteArrayView signingInput,
                QByteArrayView signature)
{
    const QByteArray expected = hmacSign(algorithm, key, signingInput);
    // The length of an HMAC is public (it follows from the algorithm), so an early return on a
    // length mismatch leaks nothing; the bytes are compared in constant time.
    if (expected.isEmpty() || expected.size() != signature.size()) {
        return false;
    }
    return CRYPTO_memcmp(expected.constData(), signature.data(),
                         static_cast<size_t>(expected.size()))
            == 0;
}

PublicKey::PublicKey(Type type, EvpPkeyPtr key) : m_type(type), m_key(std::move(key)) { }

std::optional<PublicKey> PublicKey::fromJwk(const QJsonObject &jwk)
{
    const QString kty = jwk.value(QLatin1StringView("kty")).toString();
    EvpPkeyPtr key;
    std::optional<Type> type;
    if (kty == QLatin1StringView("RSA")) {
        key = rsaKeyFromJwk(jwk);
        if (key) {
            type = Type::Rsa;
        }
    } else if (kty == QLatin1StringView("EC")) {
        type = ecTypeFromJwk(jwk, &key);
    } else if (kty == QLatin1StringView("OKP")) {
        type = okpTypeFromJwk(jwk, &key);
    }
    if (!type || !key) {
        return std::nullopt;
    }
    return PublicKey(*type, std::move(key));
}

KeyFamily PublicKey::family() const
{
    switch (m_type) {
    case Type::Rsa:
        return KeyFamily::Rsa;
    case Type::EcP256:
    case Type::EcP384:
    case Type::EcP521:
        return KeyFamily::Ec;
    case Type::Ed25519:
    case Type::Ed448:
        break;
    }
    return KeyFamily::Okp;
}

bool PublicKey::verify(JwsAlgorithm algorithm, QByteArrayView signingInput,
                       QByteArrayView signature) const
{
    switch (algorithm) {
    case JwsAlgorithm::HS256:
    case JwsAlgorithm::HS384:
    case JwsAlgorithm::HS512:
        return false;
    case JwsAlgorithm::RS256:
    case JwsAlgorithm::RS384:
    case JwsAlgorithm::RS512:
        if (m_type != Type::Rsa || signature.size() != EVP_PKEY_get_size(m_key.get())) {
            return false;
        }
        return digestVerify(m_key.get(), digestFor(algorithm), signingInput, signature);
    case JwsAlgorithm::ES256:
    case JwsAlgorithm::ES384:
    case JwsAlgorithm::ES512: {
        // RFC 7518 ties each ES algorithm to one curve.
        const Type wanted = algorithm == JwsAlgorithm::ES256 ? Type::EcP256
                : algorithm == JwsAlgorithm::ES384           ? Type::EcP384
                                                             : Type::EcP521;
        const EcCurve *curve = curveForType(m_type);
        if (m_type != wanted || !curve) {
            return false;
        }
        const std::optional<QByteArray> der = ecdsaRawToDer(signature, curve->fieldBytes);
        return der && digestVerify(m_key.get(), digestFor(algorithm), signingInput, *der);
    }
    case JwsAlgorithm::EdDSA:
    case JwsAlgorithm::Ed25519:
    case JwsAlgorithm::Ed448:
        if (family() != KeyFamily::Okp
            || (algorithm == JwsAlgorithm::Ed25519 && m_type != Type::Ed25519)
            || (algorithm == JwsAlgorithm::Ed448 && m_type != Type::Ed448)) {
            return false;
        }
        return digestVerify(m_key.get(), nullptr, signingInput, signature);
    }
    return false;
}

} // namespace rt::auth
