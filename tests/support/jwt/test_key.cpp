#include "tests/support/jwt/test_key.h"

#include <QJsonArray>
#include <QJsonDocument>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <utility>

using namespace Qt::StringLiterals;

namespace rt::testsupport {

namespace {

struct PkeyCtxDeleter
{
    void operator()(EVP_PKEY_CTX *ctx) const { EVP_PKEY_CTX_free(ctx); }
};
struct MdCtxDeleter
{
    void operator()(EVP_MD_CTX *ctx) const { EVP_MD_CTX_free(ctx); }
};
struct BignumDeleter
{
    void operator()(BIGNUM *bn) const { BN_free(bn); }
};
struct EcdsaSigDeleter
{
    void operator()(ECDSA_SIG *sig) const { ECDSA_SIG_free(sig); }
};

[[noreturn]] void die(const char *what)
{
    std::fprintf(stderr, "rt_test_jwt: %s failed\n", what);
    ERR_print_errors_fp(stderr);
    std::abort();
}

const unsigned char *bytes(QByteArrayView view)
{
    static const unsigned char empty = 0;
    return view.isEmpty() ? &empty : reinterpret_cast<const unsigned char *>(view.data());
}

std::shared_ptr<EVP_PKEY> generatePkey(const char *type, int rsaBits, const char *group)
{
    const std::unique_ptr<EVP_PKEY_CTX, PkeyCtxDeleter> ctx(
            EVP_PKEY_CTX_new_from_name(nullptr, type, nullptr));
    if (!ctx || EVP_PKEY_keygen_init(ctx.get()) != 1) {
        die("keygen init");
    }
    if (rsaBits > 0 && EVP_PKEY_CTX_set_rsa_keygen_bits(ctx.get(), rsaBits) != 1) {
        die("RSA key size");
    }
    if (group && EVP_PKEY_CTX_set_group_name(ctx.get(), group) != 1) {
        die("EC group");
    }
    EVP_PKEY *key = nullptr;
    if (EVP_PKEY_generate(ctx.get(), &key) != 1) {
        die("key generation");
    }
    return std::shared_ptr<EVP_PKEY>(key, EVP_PKEY_free);
}

QByteArray bignumParam(EVP_PKEY *key, const char *name, int width)
{
    BIGNUM *raw = nullptr;
    if (EVP_PKEY_get_bn_param(key, name, &raw) != 1) {
        die("EVP_PKEY_get_bn_param");
    }
    const std::unique_ptr<BIGNUM, BignumDeleter> bn(raw);
    const int size = width > 0 ? width : BN_num_bytes(bn.get());
    QByteArray out(size, '\0');
    if (BN_bn2binpad(bn.get(), reinterpret_cast<unsigned char *>(out.data()), size) != size) {
        die("BN_bn2binpad");
    }
    return out;
}

int ecFieldBytes(TestKey::Kind kind)
{
    switch (kind) {
    case TestKey::Kind::EcP256:
        return 32;
    case TestKey::Kind::EcP384:
        return 48;
    case TestKey::Kind::EcP521:
        return 66;
    default:
        return 0;
    }
}

const EVP_MD *shaFor(QStringView algorithm)
{
    if (algorithm.endsWith(u"256")) {
        return EVP_sha256();
    }
    if (algorithm.endsWith(u"384")) {
        return EVP_sha384();
    }
    if (algorithm.endsWith(u"512")) {
        return EVP_sha512();
    }
    return nullptr;
}

QByteArray digestSign(EVP_PKEY *key, const EVP_MD *md, QByteArrayView input)
{
    const std::unique_ptr<EVP_MD_CTX, MdCtxDeleter> ctx(EVP_MD_CTX_new());
    if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, md, nullptr, key) != 1) {
        die("EVP_DigestSignInit");
    }
    size_t length = 0;
    if (EVP_DigestSign(ctx.get(), nullptr, &length, bytes(input), static_cast<size_t>(input.size()))
        != 1) {
        die("EVP_DigestSign (size)");
    }
    QByteArray out(static_cast<qsizetype>(length), '\0');
    if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char *>(out.data()), &length,
                       bytes(input), static_cast<size_t>(input.size()))
        != 1) {
        die("EVP_DigestSign");
    }
    out.truncate(static_cast<qsizetype>(length));
    return out;
}

// OpenSSL produces DER; JWS wants r||s, each left-padded to the curve's field size.
QByteArray derToRaw(const QByteArray &der, int fieldBytes)
{
    const unsigned char *cursor = bytes(der);
    const std::unique_ptr<ECDSA_SIG, EcdsaSigDeleter> sig(
            d2i_ECDSA_SIG(nullptr, &cursor, static_cast<long>(der.size())));
    if (!sig) {
        die("d2i_ECDSA_SIG");
    }
    QByteArray raw(2 * fieldBytes, '\0');
    auto *out = reinterpret_cast<unsigned char *>(raw.data());
    if (BN_bn2binpad(ECDSA_SIG_get0_r(sig.get()), out, fieldBytes) != fieldBytes
        || BN_bn2binpad(ECDSA_SIG_get0_s(sig.get()), out + fieldBytes, fieldBytes) != fieldBytes) {
        die("BN_bn2binpad (ECDSA)");
    }
    return raw;
}

QByteArray computeHmac(QStringView algorithm, QByteArrayView key, QByteArrayView data)
{
    const char *digest = algorithm == u"HS256" ? "SHA256"
            : algorithm == u"HS384"            ? "SHA384"
            : algorithm == u"HS512"            ? "SHA512"
                                               : nullptr;
    if (!digest) {
        return {};
    }
    std::array<unsigned char, EVP_MAX_MD_SIZE> out{};
    size_t length = 0;
    if (!EVP_Q_mac(nullptr, "HMAC", nullptr, digest, nullptr, bytes(key),
                   static_cast<size_t>(key.size()), bytes(data), static_cast<size_t>(data.size()),
                   out.data(), out.size(), &length)) {
        die("EVP_Q_mac");
    }
    return QByteArray(reinterpret_cast<const char *>(out.data()), static_cast<qsizetype>(length));
}

} // namespace

TestKey::TestKey(Kind kind, QByteArray secret, std::shared_ptr<EVP_PKEY> key)
    : m_kind(kind),
      m_secret(std::move(secret)),
      m_key(std::move(key))
{ }

TestKey TestKey::generate(Kind kind)
{
    switch (kind) {
    case Kind::Hmac: {
        QByteArray secret(32, '\0');
        if (RAND_bytes(reinterpret_cast<unsigned char *>(secret.data()), 32) != 1) {
            die("RAND_bytes");
        }
        return hmac(secret);
    }
    case Kind::Rsa:
        return TestKey(kind, {}, generatePkey("RSA", 2048, nullptr));
    case Kind::EcP256:
        return TestKey(kind, {}, generatePkey("EC", 0, "P-256"));
    case Kind::EcP384:
        return TestKey(kind, {}, generatePkey("EC", 0, "P-384"));
    case Kind::EcP521:
        return TestKey(kind, {}, generatePkey("EC", 0, "P-521"));
    case Kind::Ed25519:
        return TestKey(kind, {}, generatePkey("ED25519", 0, nullptr));
    case Kind::Ed448:
        return TestKey(kind, {}, generatePkey("ED448", 0, nullptr));
    }
    die("unknown key kind");
}

TestKey TestKey::hmac(QByteArray secret)
{
    return TestKey(Kind::Hmac, std::move(secret), nullptr);
}

QString TestKey::defaultAlgorithm() const
{
    switch (m_kind) {
    case Kind::Hmac:
        return u"HS256"_s;
    case Kind::Rsa:
        return u"RS256"_s;
    case Kind::EcP256:
        return u"ES256"_s;
    case Kind::EcP384:
        return u"ES384"_s;
    case Kind::EcP521:
        return u"ES512"_s;
    case Kind::Ed25519:
    case Kind::Ed448:
        break;
    }
    return u"EdDSA"_s;
}

QJsonObject TestKey::publicJwk(const QString &kid) const
{
    QJsonObject jwk;
    switch (m_kind) {
    case Kind::Hmac:
        jwk.insert(u"kty"_s, u"oct"_s);
        jwk.insert(u"k"_s, QString::fromLatin1(base64Url(m_secret)));
        break;
    case Kind::Rsa:
        jwk.insert(u"kty"_s, u"RSA"_s);
        jwk.insert(
                u"n"_s,
                QString::fromLatin1(base64Url(bignumParam(m_key.get(), OSSL_PKEY_PARAM_RSA_N, 0))));
        jwk.insert(
                u"e"_s,
                QString::fromLatin1(base64Url(bignumParam(m_key.get(), OSSL_PKEY_PARAM_RSA_E, 0))));
        break;
    case Kind::EcP256:
    case Kind::EcP384:
    case Kind::EcP521: {
        const int width = ecFieldBytes(m_kind);
        jwk.insert(u"kty"_s, u"EC"_s);
        jwk.insert(u"crv"_s,
                   m_kind == Kind::EcP256           ? u"P-256"_s
                           : m_kind == Kind::EcP384 ? u"P-384"_s
                                                    : u"P-521"_s);
        jwk.insert(u"x"_s,
                   QString::fromLatin1(
                           base64Url(bignumParam(m_key.get(), OSSL_PKEY_PARAM_EC_PUB_X, width))));
        jwk.insert(u"y"_s,
                   QString::fromLatin1(
                           base64Url(bignumParam(m_key.get(), OSSL_PKEY_PARAM_EC_PUB_Y, width))));
        break;
    }
    case Kind::Ed25519:
    case Kind::Ed448: {
        std::array<unsigned char, 64> raw{};
        size_t length = raw.size();
        if (EVP_PKEY_get_raw_public_key(m_key.get(), raw.data(), &length) != 1) {
            die("EVP_PKEY_get_raw_public_key");
        }
        jwk.insert(u"kty"_s, u"OKP"_s);
        jwk.insert(u"crv"_s, m_kind == Kind::Ed25519 ? u"Ed25519"_s : u"Ed448"_s);
        jwk.insert(u"x"_s,
                   QString::fromLatin1(
                           base64Url(QByteArrayView(reinterpret_cast<const char *>(raw.data()),
                                                    static_cast<qsizetype>(length)))));
        break;
    }
    }
    if (!kid.isEmpty()) {
        jwk.insert(u"kid"_s, kid);
    }
    return jwk;
}

QByteArray TestKey::sign(QStringView algorithm, QByteArrayView signingInput) const
{
    switch (m_kind) {
    case Kind::Hmac:
        return computeHmac(algorithm, m_secret, signingInput);
    case Kind::Rsa:
        if (!algorithm.startsWith(u"RS") || !shaFor(algorithm)) {
            return {};
        }
        return digestSign(m_key.get(), shaFor(algorithm), signingInput);
    case Kind::EcP256:
    case Kind::EcP384:
    case Kind::EcP521:
        if (!algorithm.startsWith(u"ES") || !shaFor(algorithm)) {
            return {};
        }
        return derToRaw(digestSign(m_key.get(), shaFor(algorithm), signingInput),
                        ecFieldBytes(m_kind));
    case Kind::Ed25519:
    case Kind::Ed448:
        if (algorithm != u"EdDSA" && algorithm != u"Ed25519" && algorithm != u"Ed448") {
            return {};
        }
        return digestSign(m_key.get(), nullptr, signingInput);
    }
    return {};
}

QByteArray base64Url(QByteArrayView bytes)
{
    return bytes.toByteArray().toBase64(QByteArray::Base64UrlEncoding
                                        | QByteArray::OmitTrailingEquals);
}

QByteArray base64Url(const QJsonObject &object)
{
    return base64Url(QJsonDocument(object).toJson(QJsonDocument::Compact));
}

QByteArray signToken(const QJsonObject &header, const QJsonObject &claims, const TestKey &key)
{
    const QByteArray signingInput = base64Url(header) + '.' + base64Url(claims);
    const QString algorithm = header.value(u"alg"_s).toString();
    return signingInput + '.' + base64Url(key.sign(algorithm, signingInput));
}

QByteArray signToken(const TestKey &key, const QJsonObject &claims, const QString &kid,
                     const QString &algorithm)
{
    QJsonObject header{ { u"alg"_s, algorithm.isEmpty() ? key.defaultAlgorithm() : algorithm },
                        { u"typ"_s, u"JWT"_s } };
    if (!kid.isEmpty()) {
        header.insert(u"kid"_s, kid);
    }
    return signToken(header, claims, key);
}

QByteArray signRawToken(QByteArrayView headerJson, QByteArrayView payloadJson, const TestKey &key,
                        QStringView algorithm)
{
    const QByteArray signingInput = base64Url(headerJson) + '.' + base64Url(payloadJson);
    return signingInput + '.' + base64Url(key.sign(algorithm, signingInput));
}

QByteArray jwks(const QList<QJsonObject> &keys)
{
    QJsonArray array;
    for (const QJsonObject &key : keys) {
        array.append(key);
    }
    return QJsonDocument(QJsonObject{ { u"keys"_s, array } }).toJson(QJsonDocument::Compact);
}

} // namespace rt::testsupport
