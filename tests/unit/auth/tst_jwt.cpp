// Tests of the public JWT API (server/auth/jwt.h): every algorithm family, signer selection,
// claim rules, error texts, token cleanup and KeySet construction. Keys are generated per run
// by tests/support/jwt; the fixed vectors at the top were produced by the reference server's
// own test suite (Elixir/JOSE) and pin interoperability.
#include "server/auth/jwt.h"
#include "tests/support/jwt/test_key.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

#include <atomic>
#include <limits>
#include <map>
#include <thread>
#include <vector>

using namespace Qt::StringLiterals;
using rt::auth::HmacAlgorithm;
using rt::auth::JwtError;
using rt::auth::JwtErrorCode;
using rt::auth::KeySet;
using rt::auth::VerifiedToken;
using rt::auth::VerifyOptions;
using rt::testsupport::TestKey;

namespace rt::auth {
// Readable QCOMPARE output for error codes (found by ADL).
char *toString(JwtErrorCode code)
{
    const char *names[] = { "Malformed",        "Expired",
                            "MissingClaims",    "InvalidExpiration",
                            "SignatureInvalid", "NoSigner",
                            "NoSignerForKid",   "ClaimValidationFailed" };
    return qstrdup(names[static_cast<int>(code)]);
}
} // namespace rt::auth

Q_DECLARE_METATYPE(rt::auth::JwtErrorCode)
Q_DECLARE_METATYPE(rt::auth::HmacAlgorithm)

namespace {

constexpr qint64 Now = 1'700'000'000;
const QByteArray JwtSecret =
        QByteArrayLiteral("super-secret-jwt-token-with-at-least-32-characters");

// Interop vectors from supabase/realtime test/realtime_web/channels/auth/jwt_verification_test.exs
// (commit 833cf36). The *Bad* tokens differ from the good ones in one signature character.
const char UpstreamRsaN[] =
        "6r1mKwCalvJ0NyThyQkBr5huFILwwhXcxtsdlw-WybNz4avzODQwLFkA-b2fnnfdFgualV2NdcvoJSo1"
        "bzVGCWWqwWKWdTQKFjtcjAIC4FnhOv5ynNF9Ub-11ORDd1aiq_4XKNA4GaS1HqBekVDAAvJYy99Jz0Ck"
        "Lx4NU_VrS0U9sOQzUAhy2MwZCx2kZ3SWKEMjjEIkbvIb22IdRTyuFsAndKGpyzhw-MalnU5P2hOig-QA"
        "pNBc0WJtTHTAa4PLQ6v_5jNc5PzCwP8jGK9SlrSF-GOnx9BVBX9t-AIDp-BviKbtY7y-pku6-f7HSiS2"
        "T3iAJkHXPm9E_NwwhWzMJQ";
const char UpstreamRsaToken[] =
        "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiIsImtpZCI6ImtleS1pZC0xIn0.eyJpYXQiOjE3MTIwNDc1"
        "NjUsInJvbGUiOiJhdXRoZW50aWNhdGVkIiwic3ViIjoidXNlci1pZCIsImV4cCI6MTcxMjA1MTE2NX0."
        "zUeoZrWK1efAc4q9y978_9qkhdXktdjf5H8O9Rw0SHcPaXW8OBcuNR2huRrgORvqFx6_sHn6nCJaWkZG"
        "zO-f8wskMD7Z4INq2JUypr6nASie3Qu2lLyeY3WTInaXNAKH-oqlfTLRskbz8zkIxOj2bBJiN9ceQLkJ"
        "U-c92ndiuiG5D1jyQrGsvRdFem_cemp0yOoEaC0XWdjeV6C_UD-34GIyv3o8H4HZg1GcCiyNnAfDmLAc"
        "TOQPmqkwsRDQb-pm5O3HwpQt9WHOB6i1vzf-nmIGyCRA7STPdALK16-aiAyT4SJRxM5WN3iK8yitH7g4"
        "JETb9WocBbwIM_zfNnUI5w";
const char UpstreamRsaBadToken[] =
        "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiIsImtpZCI6ImtleS1pZC0xIn0.eyJpYXQiOjE3MTIwNDc1"
        "NjUsInJvbGUiOiJhdXRoZW50aWNhdGVkIiwic3ViIjoidXNlci1pZCIsImV4cCI6MTcxMjA1MTE2NX0."
        "zUeoZrWK1efAc4q9y978_9qkhdXktdjf5H8O9Rw0SHcPaXW8OBcuNR2huRrgORvqFx6_sHn6nCJaWkZG"
        "zO-f8wskMD7Z4INq2JUypr6nASie3Qu2lLyeY3WTInaXNAKH-oqlfTLRskbz8zkIxOj2bBJiN9ceQLkJ"
        "U-c92ndiuiG5D1jyQrGsvRdFem_cemp0yOoEaC0XWdjeV6C_UD-34GIyv3o8H4HZg1GcCiyNnAfDmLAc"
        "TOQPmqkwsRDQb-pm5O3HwpQt9WHOB6i1vzf-nmIGyCRA7STPdALK16-aiAyT4SJRxM5WN3iK8yitH7g4"
        "JETb9WocBbwIM_zfnnUI5w";
const char UpstreamEcX[] = "iX_niXPSL2nW-9IyCELzyceAtuE3B98pWML5tQGACD4";
const char UpstreamEcY[] = "kT02DoLhXx6gtpkbrN8XwQ2wtzE6cDBaqlWgVXIeqV0";
const char UpstreamEcToken[] =
        "eyJ0eXAiOiJKV1QiLCJhbGciOiJFUzI1NiIsImtpZCI6ImtleS1pZC0xIn0.eyJpYXQiOjE3MTIwNDk2"
        "NTcsInJvbGUiOiJhdXRoZW50aWNhdGVkIiwic3ViIjoidXNlci1pZCIsImV4cCI6MTcxMjA1MzI1N30."
        "IIQBuEiSnZacGMqiqsrLAeRGOjIaB4F3x1gnLN5zvhFryJ-6tdgu96lFv5HUF13IL2UfHWad0OuvoDt4"
        "DEHRxw";
const char UpstreamEcBadToken[] =
        "eyJ0eXAiOiJKV1QiLCJhbGciOiJFUzI1NiIsImtpZCI6ImtleS1pZC0xIn0.eyJpYXQiOjE3MTIwNDk2"
        "NTcsInJvbGUiOiJhdXRoZW50aWNhdGVkIiwic3ViIjoidXNlci1pZCIsImV4cCI6MTcxMjA1MzI1N30."
        "IIQBuEiSnZacGMqiqsrLAeRGOjIaB4F3x1gnLN5zvhFryJ-6tdgu96lFv5HUF13IL2UfHWad0OuvoDt4"
        "DEHrxw";
const char UpstreamOctK[] =
        "WWpiUEVXK2I4dVM1djkzMS9TWTNmb2RtcUtiZVh3NnBHS0JaS1JDMGpaODdhVHpaZ3N0Ly9yMG0wU1M4"
        "Z1U4OFE0aGdwclBMMzVRRU5ya253TWxhUlE9PQ";
const char UpstreamOctToken[] =
        "eyJhbGciOiJIUzI1NiIsImtpZCI6IjRGY0d3bEJ4a0JWMWJTWnciLCJ0eXAiOiJKV1QifQ.eyJpc3MiO"
        "iJodHRwczovL2hqbmRnYWdpZGlwY3RxdXFxeXloLnN1cGFiYXNlLmNvL2F1dGgvdjEiLCJzdWIiOiJmZ"
        "jA0NjVlMy1lZjk3LTRkYjItOWE1Zi0zZDI4Y2YxODE0MmYiLCJhdWQiOiJhdXRoZW50aWNhdGVkIiwiZ"
        "XhwIjoxNzUyODA4NjE4LCJpYXQiOjE3NTI4MDUwMTgsImVtYWlsIjoiY2hhdEBlZHVhcmRvLmd1cmdlb"
        "C5tZSIsInBob25lIjoiIiwiYXBwX21ldGFkYXRhIjp7InByb3ZpZGVyIjoiZW1haWwiLCJwcm92aWRlc"
        "nMiOlsiZW1haWwiXX0sInVzZXJfbWV0YWRhdGEiOnsiZW1haWwiOiJjaGF0QGVkdWFyZG8uZ3VyZ2VsL"
        "m1lIiwiZW1haWxfdmVyaWZpZWQiOnRydWUsInBob25lX3ZlcmlmaWVkIjpmYWxzZSwic3ViIjoiZmYwN"
        "DY1ZTMtZWY5Ny00ZGIyLTlhNWYtM2QyOGNmMTgxNDJmIn0sInJvbGUiOiJhdXRoZW50aWNhdGVkIiwiY"
        "WFsIjoiYWFsMSIsImFtciI6W3sibWV0aG9kIjoicGFzc3dvcmQiLCJ0aW1lc3RhbXAiOjE3NTI4MDUwM"
        "Th9XSwic2Vzc2lvbl9pZCI6IjA2MDJkYWM0LWMwMjctNGIwNi1hZDM5LTMzN2ViMTZlODdlNSIsImlzX"
        "2Fub255bW91cyI6ZmFsc2V9.SnGzRjLfHPtT64kXYEQVBLKizCl76LqEPILyAPxoDwk";
const char UpstreamOctBadToken[] =
        "eyJhbGciOiJIUzI1NiIsImtpZCI6IjRGY0d3bEJ4a0JWMWJTWnciLCJ0eXAiOiJKV1QifQ.eyJpc3MiO"
        "iJodHRwczovL2hqbmRnYWdpZGlwY3RxdXFxeXloLnN1cGFiYXNlLmNvL2F1dGgvdjEiLCJzdWIiOiJmZ"
        "jA0NjVlMy1lZjk3LTRkYjItOWE1Zi0zZDI4Y2YxODE0MmYiLCJhdWQiOiJhdXRoZW50aWNhdGVkIiwiZ"
        "XhwIjoxNzUyODA4NjE4LCJpYXQiOjE3NTI4MDUwMTgsImVtYWlsIjoiY2hhdEBlZHVhcmRvLmd1cmdlb"
        "C5tZSIsInBob25lIjoiIiwiYXBwX21ldGFkYXRhIjp7InByb3ZpZGVyIjoiZW1haWwiLCJwcm92aWRlc"
        "nMiOlsiZW1haWwiXX0sInVzZXJfbWV0YWRhdGEiOnsiZW1haWwiOiJjaGF0QGVkdWFyZG8uZ3VyZ2VsL"
        "m1lIiwiZW1haWxfdmVyaWZpZWQiOnRydWUsInBob25lX3ZlcmlmaWVkIjpmYWxzZSwic3ViIjoiZmYwN"
        "DY1ZTMtZWY5Ny00ZGIyLTlhNWYtM2QyOGNmMTgxNDJmIn0sInJvbGUiOiJhdXRoZW50aWNhdGVkIiwiY"
        "WFsIjoiYWFsMSIsImFtciI6W3sibWV0aG9kIjoicGFzc3dvcmQiLCJ0aW1lc3RhbXAiOjE3NTI4MDUwM"
        "Th9XSwic2Vzc2lvbl9pZCI6IjA2MDJkYWM0LWMwMjctNGIwNi1hZDM5LTMzN2ViMTZlODdlNSIsImlzX"
        "2Fub255bW91cyI6ZmFsc2V9.SnGzRjLfHPtT64kXYEQVBLKizCl76LqEPILyApxoDwk";
const char UpstreamNoTypRsaN[] =
        "uyc8QVrMjJTZEZoGNIJrugvf6j3iZ2Uz2IEgFuHCeC5AbM4BwZ4V1JshcW2CRs8uAmEdnH_-jiibayGm"
        "oND7OLziZJZsLir_8_kZSc5jjJ-IVFMzB1XXKze44HB3IOpcaPW1IOx0NfSI6-xOFinX7yApTZxXxmLF"
        "MEXtOWVsY_MPMrjThfvCSqesDGLRGKCn_DA4Hhaixf4NG-etGUOiavHNpqfREM7td-9caWpIyo7acWcg"
        "fYyhkxZbuYRINje1V66HWIdzzZ8uhfLXm-85LZdaWn9J83OHh3TEQW2SIAfHSNZkwXu6h5ndd_ciWxTW"
        "uvU3yjWkS-k4C8dXB--bZQ";
const char UpstreamNoTypToken[] =
        "eyJhbGciOiJSUzI1NiIsImtpZCI6InNzb19vaWRjX2tleV9wYWlyXzAxSzIwWDdKNDNaVjMxRUtaTUc3"
        "WDNLVzdLIn0.eyJyb2xlIjoiYXV0aGVudGljYXRlZCIsImlzcyI6Imh0dHBzOi8vYXBpLndvcmtvcy5j"
        "b20vdXNlcl9tYW5hZ2VtZW50L2NsaWVudF8wMUsyMFg3SkNROVg1NDVXUzgwUVpQQTNGUSIsInN1YiI6"
        "InVzZXJfMDFLMjBYR1g3SkU1M1JNVEIzRjE0SEFUNTkiLCJzaWQiOiJzZXNzaW9uXzAxSzIwWEdYQVhI"
        "NjhLMkI0VjcwWko3VzlZIiwianRpIjoiMDFLMjEyUzNLMEpXQ0U3Wk1URVk0RVM4UTYiLCJleHAiOjE3"
        "NTQ1MzA5MTQsImlhdCI6MTc1NDUzMDYxNH0.kt-zlPxaLVDMU9iAWCYvi3dtm9HzYponaX5E4lsS2k5F"
        "469obf4i9FyLDeXsaPyAN9V3DaAjUwys9lDyjiPsE7y1s2tFE1g9LU4goJbwinkoklUYrTmVVZcY4lkV"
        "EQSZZGwmkwgIsqKsdwTlYMzVjejsAk25Foq-FhGdsyoju21sU5S4fZPC-n8Rl8wBwD5rOPFWVHxk3z4z"
        "37585LDHhADyq1S17WxLJobfEgK_TeAlwXa2bK14vutVPpuL-qAn8nX8b6aqBoHtvRbfqsi2s72bA1S3"
        "1rTgT2hgD5hqbn_g0rVmMJXt2u1zl4XDBzUj_c3lxNncUf1MgsVOHrbYRw";
const char UpstreamEdX[] = "hR5rgn8NeZtkO6c5zBqQWFskBWnkBGa8c1Noa1L7FRw";
const char UpstreamEdToken[] =
        "eyJhbGciOiJFZERTQSIsImtpZCI6ImtleS1pZC0xIiwidHlwIjoiSldUIn0.eyJleHAiOjE3MTIwNTMy"
        "NTcsImlhdCI6MTcxMjA0OTY1Nywicm9sZSI6ImF1dGhlbnRpY2F0ZWQiLCJzdWIiOiJ1c2VyLWlkIn0."
        "aPgmoz7qHith4CA-T-hazSA375EHTkGQ2o1cjrKd8AkdB22OXy35fsHwjjnNzdQGpkVIaIq0ydLjCtVC"
        "7BOCDA";
const char UpstreamEdBadToken[] =
        "eyJhbGciOiJFZERTQSIsImtpZCI6ImtleS1pZC0xIiwidHlwIjoiSldUIn0.eyJleHAiOjE3MTIwNTMy"
        "NTcsImlhdCI6MTcxMjA0OTY1Nywicm9sZSI6ImF1dGhlbnRpY2F0ZWQiLCJzdWIiOiJ1c2VyLWlkIn0."
        "aPgmoz7qHith4CA-T-hazSA375EHTkGQ2o1cjrKd8AkdB22OXy35fsHwjjnNzdQGpkVIaIq0ydLjCtVC"
        "7BOCDQ";

QJsonObject claimsWith(const QJsonObject &extra, const QStringList &without = {})
{
    QJsonObject claims{ { u"role"_s, u"authenticated"_s },
                        { u"exp"_s, Now + 3600 },
                        { u"sub"_s, u"user-1"_s } };
    for (auto it = extra.constBegin(); it != extra.constEnd(); ++it) {
        claims.insert(it.key(), it.value());
    }
    for (const QString &key : without) {
        claims.remove(key);
    }
    return claims;
}

QJsonObject defaultClaims()
{
    return claimsWith({});
}

VerifyOptions options(qint64 now = Now)
{
    VerifyOptions result;
    result.nowSeconds = now;
    return result;
}

std::shared_ptr<const KeySet> buildKeys(const QByteArray &secret, const QByteArray &jwks)
{
    auto result = KeySet::build(secret, jwks);
    if (!result.ok()) {
        qFatal("KeySet::build failed: %s", qPrintable(result.error().message));
    }
    return *result;
}

QList<QByteArray> parts(const QByteArray &token)
{
    return token.split('.');
}

QByteArray decodePart(const QByteArray &part)
{
    return QByteArray::fromBase64(part, QByteArray::Base64UrlEncoding);
}

} // namespace

class JwtTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();

    void verifiesEveryAlgorithm_data();
    void verifiesEveryAlgorithm();
    void rejectsWrongKey_data();
    void rejectsWrongKey();
    void rejectsTamperedPayload_data();
    void rejectsTamperedPayload();
    void rejectsTamperedSignature_data();
    void rejectsTamperedSignature();
    void upstreamVectors_data();
    void upstreamVectors();

    void signerSelection_data();
    void signerSelection();

    void errorTexts_data();
    void errorTexts();
    void kidIsQuotedLikeElixirInspect_data();
    void kidIsQuotedLikeElixirInspect();
    void errorsFromVerificationCarryTheirDetails();

    void expiry_data();
    void expiry();
    void issuedAt_data();
    void issuedAt();
    void requiredClaims_data();
    void requiredClaims();
    void claimValidators_data();
    void claimValidators();

    void malformedTokens_data();
    void malformedTokens();

    void cleanToken_data();
    void cleanToken();
    void cleanTokenThenVerify();

    void signHmacRoundTrip_data();
    void signHmacRoundTrip();
    void signHmacKnownAnswer();

    void keySetBuild_data();
    void keySetBuild();
    void keySetSkipsUnusableKeys();
    void concurrentVerification();

private:
    const TestKey &key(const QString &name) const { return m_keys.at(name); }
    const KeySet &keySet(const QString &name) const { return *m_keySets.at(name); }
    void addAlgorithmRows();

    std::map<QString, TestKey> m_keys;
    std::map<QString, std::shared_ptr<const KeySet>> m_keySets;
};

void JwtTest::initTestCase()
{
    using Kind = TestKey::Kind;
    m_keys.emplace(u"hs"_s, TestKey::hmac(JwtSecret));
    m_keys.emplace(u"hs-other"_s, TestKey::generate(Kind::Hmac));
    m_keys.emplace(u"oct"_s, TestKey::generate(Kind::Hmac));
    m_keys.emplace(u"oct-other"_s, TestKey::generate(Kind::Hmac));
    for (const auto &[name, kind] :
         { std::pair{ u"rsa"_s, Kind::Rsa }, std::pair{ u"p256"_s, Kind::EcP256 },
           std::pair{ u"p384"_s, Kind::EcP384 }, std::pair{ u"p521"_s, Kind::EcP521 },
           std::pair{ u"ed25519"_s, Kind::Ed25519 }, std::pair{ u"ed448"_s, Kind::Ed448 } }) {
        m_keys.emplace(name, TestKey::generate(kind));
        m_keys.emplace(name + u"-other"_s, TestKey::generate(kind));
    }

    QJsonObject x25519{ { u"kty"_s, u"OKP"_s },
                        { u"crv"_s, u"X25519"_s },
                        { u"kid"_s, u"x25519-1"_s },
                        { u"x"_s, u"hR5rgn8NeZtkO6c5zBqQWFskBWnkBGa8c1Noa1L7FRw"_s } };
    const QByteArray mainJwks = rt::testsupport::jwks({
            key(u"oct"_s).publicJwk(u"oct-1"_s),
            QJsonObject{ { u"kty"_s, u"oct"_s },
                         { u"kid"_s, u"oct-bad"_s },
                         { u"k"_s, u"not*base64"_s } },
            QJsonObject{ { u"kty"_s, u"oct"_s }, { u"kid"_s, u"oct-empty"_s }, { u"k"_s, u""_s } },
            QJsonObject{ { u"kty"_s, u"oct"_s }, { u"kid"_s, u"oct-nonstring"_s }, { u"k"_s, 5 } },
            key(u"rsa"_s).publicJwk(u"rsa-1"_s),
            key(u"p256"_s).publicJwk(u"ec256-1"_s),
            key(u"p384"_s).publicJwk(u"ec384-1"_s),
            key(u"p521"_s).publicJwk(u"ec521-1"_s),
            key(u"ed25519"_s).publicJwk(u"ed25519-1"_s),
            key(u"ed448"_s).publicJwk(u"ed448-1"_s),
            x25519,
            QJsonObject{
                    { u"kty"_s, u"RSA"_s }, { u"kid"_s, u"rsa-broken"_s }, { u"e"_s, u"AQAB"_s } },
            QJsonObject{ { u"kty"_s, u"foo"_s }, { u"kid"_s, u"foo-1"_s } },
    });
    m_keySets.emplace(u"main"_s, buildKeys(JwtSecret, mainJwks));
    m_keySets.emplace(u"secret-only"_s, buildKeys(JwtSecret, {}));
    m_keySets.emplace(u"no-secret"_s, buildKeys({}, {}));
    m_keySets.emplace(u"empty-jwks"_s, buildKeys(JwtSecret, QByteArrayLiteral(R"({"keys":[]})")));
}

// alg, key name, kid: one row per algorithm family member and per way of finding its key.
void JwtTest::addAlgorithmRows()
{
    QTest::addColumn<QString>("algorithm");
    QTest::addColumn<QString>("keyName");
    QTest::addColumn<QString>("kid");
    QTest::newRow("HS256 jwt_secret") << u"HS256"_s << u"hs"_s << QString();
    QTest::newRow("HS384 jwt_secret") << u"HS384"_s << u"hs"_s << QString();
    QTest::newRow("HS512 jwt_secret") << u"HS512"_s << u"hs"_s << QString();
    QTest::newRow("HS256 oct JWK") << u"HS256"_s << u"oct"_s << u"oct-1"_s;
    QTest::newRow("HS384 oct JWK") << u"HS384"_s << u"oct"_s << u"oct-1"_s;
    QTest::newRow("HS512 oct JWK") << u"HS512"_s << u"oct"_s << u"oct-1"_s;
    QTest::newRow("RS256") << u"RS256"_s << u"rsa"_s << u"rsa-1"_s;
    QTest::newRow("RS384") << u"RS384"_s << u"rsa"_s << u"rsa-1"_s;
    QTest::newRow("RS512") << u"RS512"_s << u"rsa"_s << u"rsa-1"_s;
    QTest::newRow("ES256 P-256") << u"ES256"_s << u"p256"_s << u"ec256-1"_s;
    QTest::newRow("ES384 P-384") << u"ES384"_s << u"p384"_s << u"ec384-1"_s;
    QTest::newRow("ES512 P-521") << u"ES512"_s << u"p521"_s << u"ec521-1"_s;
    QTest::newRow("EdDSA Ed25519") << u"EdDSA"_s << u"ed25519"_s << u"ed25519-1"_s;
    QTest::newRow("Ed25519") << u"Ed25519"_s << u"ed25519"_s << u"ed25519-1"_s;
    QTest::newRow("EdDSA Ed448") << u"EdDSA"_s << u"ed448"_s << u"ed448-1"_s;
    QTest::newRow("Ed448") << u"Ed448"_s << u"ed448"_s << u"ed448-1"_s;
}

void JwtTest::verifiesEveryAlgorithm_data()
{
    addAlgorithmRows();
}

void JwtTest::verifiesEveryAlgorithm()
{
    QFETCH(QString, algorithm);
    QFETCH(QString, keyName);
    QFETCH(QString, kid);

    const QByteArray token =
            rt::testsupport::signToken(key(keyName), defaultClaims(), kid, algorithm);
    const auto result = rt::auth::verifyToken(token, keySet(u"main"_s), options());
    QVERIFY2(result.ok(), qPrintable(result.ok() ? QString() : result.error().joinReason()));
    QCOMPARE(result->role, u"authenticated"_s);
    QCOMPARE(result->exp, std::optional<qint64>(Now + 3600));
    QCOMPARE(result->claims.value(u"sub"_s).toString(), u"user-1"_s);
}

void JwtTest::rejectsWrongKey_data()
{
    addAlgorithmRows();
}

void JwtTest::rejectsWrongKey()
{
    QFETCH(QString, algorithm);
    QFETCH(QString, keyName);
    QFETCH(QString, kid);

    // Same kind of key and same kid, but not the configured key material.
    const QByteArray token =
            rt::testsupport::signToken(key(keyName + u"-other"_s), defaultClaims(), kid, algorithm);
    const auto result = rt::auth::verifyToken(token, keySet(u"main"_s), options());
    QVERIFY(!result.ok());
    QCOMPARE(result.error().code, JwtErrorCode::SignatureInvalid);
}

void JwtTest::rejectsTamperedPayload_data()
{
    addAlgorithmRows();
}

void JwtTest::rejectsTamperedPayload()
{
    QFETCH(QString, algorithm);
    QFETCH(QString, keyName);
    QFETCH(QString, kid);

    const QByteArray token =
            rt::testsupport::signToken(key(keyName), defaultClaims(), kid, algorithm);
    QList<QByteArray> pieces = parts(token);
    pieces[1] = rt::testsupport::base64Url(claimsWith({ { u"role"_s, u"service_role"_s } }));
    const auto result = rt::auth::verifyToken(pieces.join('.'), keySet(u"main"_s), options());
    QVERIFY(!result.ok());
    QCOMPARE(result.error().code, JwtErrorCode::SignatureInvalid);
}

void JwtTest::rejectsTamperedSignature_data()
{
    addAlgorithmRows();
}

void JwtTest::rejectsTamperedSignature()
{
    QFETCH(QString, algorithm);
    QFETCH(QString, keyName);
    QFETCH(QString, kid);

    const QByteArray token =
            rt::testsupport::signToken(key(keyName), defaultClaims(), kid, algorithm);
    const QList<QByteArray> pieces = parts(token);
    const QByteArray signature = decodePart(pieces[2]);

    QByteArray flipped = signature;
    flipped[flipped.size() / 2] = static_cast<char>(flipped.at(flipped.size() / 2) ^ 0x01);
    QByteArray truncated = signature.chopped(1);

    for (const QByteArray &bad : { flipped, truncated, QByteArray() }) {
        const QByteArray tampered =
                pieces[0] + '.' + pieces[1] + '.' + rt::testsupport::base64Url(bad);
        const auto result = rt::auth::verifyToken(tampered, keySet(u"main"_s), options());
        QVERIFY(!result.ok());
        QCOMPARE(result.error().code, JwtErrorCode::SignatureInvalid);
    }
}

void JwtTest::upstreamVectors_data()
{
    QTest::addColumn<QByteArray>("token");
    QTest::addColumn<QByteArray>("secret");
    QTest::addColumn<QJsonObject>("jwk");
    QTest::addColumn<qint64>("now");
    QTest::addColumn<bool>("valid");

    const QJsonObject rsa{ { u"kty"_s, u"RSA"_s },
                           { u"kid"_s, u"key-id-1"_s },
                           { u"e"_s, u"AQAB"_s },
                           { u"n"_s, QString::fromLatin1(UpstreamRsaN) } };
    const QJsonObject ec{ { u"kty"_s, u"EC"_s },
                          { u"kid"_s, u"key-id-1"_s },
                          { u"crv"_s, u"P-256"_s },
                          { u"x"_s, QString::fromLatin1(UpstreamEcX) },
                          { u"y"_s, QString::fromLatin1(UpstreamEcY) } };
    const QJsonObject oct{ { u"kty"_s, u"oct"_s },
                           { u"kid"_s, u"4FcGwlBxkBV1bSZw"_s },
                           { u"alg"_s, u"HS256"_s },
                           { u"k"_s, QString::fromLatin1(UpstreamOctK) } };
    const QJsonObject noTyp{
        { u"kty"_s, u"RSA"_s },   { u"kid"_s, u"sso_oidc_key_pair_01K20X7J43ZV31EKZMG7X3KW7K"_s },
        { u"alg"_s, u"RS256"_s }, { u"use"_s, u"sig"_s },
        { u"e"_s, u"AQAB"_s },    { u"n"_s, QString::fromLatin1(UpstreamNoTypRsaN) }
    };
    const QJsonObject ed{ { u"kty"_s, u"OKP"_s },
                          { u"kid"_s, u"key-id-1"_s },
                          { u"crv"_s, u"Ed25519"_s },
                          { u"x"_s, QString::fromLatin1(UpstreamEdX) } };
    const QByteArray secret("secret");

    QTest::newRow("RS256") << QByteArray(UpstreamRsaToken) << secret << rsa << qint64(1712047600)
                           << true;
    QTest::newRow("RS256 bad signature")
            << QByteArray(UpstreamRsaBadToken) << secret << rsa << qint64(1712047600) << false;
    QTest::newRow("ES256") << QByteArray(UpstreamEcToken) << secret << ec << qint64(1712049700)
                           << true;
    QTest::newRow("ES256 bad signature")
            << QByteArray(UpstreamEcBadToken) << secret << ec << qint64(1712049700) << false;
    QTest::newRow("HS256 oct JWK")
            << QByteArray(UpstreamOctToken) << secret << oct << qint64(1752805100) << true;
    QTest::newRow("HS256 oct JWK bad signature")
            << QByteArray(UpstreamOctBadToken) << secret << oct << qint64(1752805100) << false;
    QTest::newRow("RS256 without typ")
            << QByteArray(UpstreamNoTypToken) << secret << noTyp << qint64(1754530700) << true;
    QTest::newRow("EdDSA Ed25519")
            << QByteArray(UpstreamEdToken) << secret << ed << qint64(1712049700) << true;
    QTest::newRow("EdDSA Ed25519 bad signature")
            << QByteArray(UpstreamEdBadToken) << secret << ed << qint64(1712049700) << false;
}

void JwtTest::upstreamVectors()
{
    QFETCH(QByteArray, token);
    QFETCH(QByteArray, secret);
    QFETCH(QJsonObject, jwk);
    QFETCH(qint64, now);
    QFETCH(bool, valid);

    const auto keys = buildKeys(secret, rt::testsupport::jwks({ jwk }));
    const auto result = rt::auth::verifyToken(token, *keys, options(now));
    QCOMPARE(result.ok(), valid);
    if (valid) {
        QCOMPARE(result->role, u"authenticated"_s);
    } else {
        QCOMPARE(result.error().code, JwtErrorCode::SignatureInvalid);
    }
}

void JwtTest::signerSelection_data()
{
    using rt::testsupport::signRawToken;
    using rt::testsupport::signToken;
    QTest::addColumn<QByteArray>("token");
    QTest::addColumn<QString>("keySetName");
    QTest::addColumn<bool>("valid");
    QTest::addColumn<JwtErrorCode>("code");
    QTest::addColumn<QString>("kid");

    const QJsonObject claims = defaultClaims();
    const QByteArray payload = QJsonDocument(claims).toJson(QJsonDocument::Compact);
    const auto ok = JwtErrorCode::Malformed; // unused when valid
    const TestKey &hs = key(u"hs"_s);

    QTest::newRow("HS256 kid of oct JWK uses the JWK")
            << signToken(key(u"oct"_s), claims, u"oct-1"_s) << u"main"_s << true << ok << QString();
    QTest::newRow("HS256 kid of oct JWK does not use jwt_secret")
            << signToken(hs, claims, u"oct-1"_s) << u"main"_s << false
            << JwtErrorCode::SignatureInvalid << QString();
    QTest::newRow("HS256 unknown kid falls back to jwt_secret")
            << signToken(hs, claims, u"unknown"_s) << u"main"_s << true << ok << QString();
    QTest::newRow("HS256 kid of RSA JWK falls back to jwt_secret")
            << signToken(hs, claims, u"rsa-1"_s) << u"main"_s << true << ok << QString();
    QTest::newRow("HS256 kid without JWKS uses jwt_secret")
            << signToken(hs, claims, u"oct-1"_s) << u"secret-only"_s << true << ok << QString();
    QTest::newRow("HS256 kid with empty JWKS uses jwt_secret")
            << signToken(hs, claims, u"oct-1"_s) << u"empty-jwks"_s << true << ok << QString();
    QTest::newRow("HS256 kid of oct JWK with invalid k")
            << signToken(hs, claims, u"oct-bad"_s) << u"main"_s << false
            << JwtErrorCode::NoSignerForKid << u"oct-bad"_s;
    QTest::newRow("HS256 kid of oct JWK with empty k")
            << signToken(hs, claims, u"oct-empty"_s) << u"main"_s << false
            << JwtErrorCode::NoSignerForKid << u"oct-empty"_s;
    QTest::newRow("HS256 kid of oct JWK with non-string k falls back")
            << signToken(hs, claims, u"oct-nonstring"_s) << u"main"_s << true << ok << QString();
    QTest::newRow("HS256 non-string kid uses jwt_secret")
            << signToken(QJsonObject{ { u"alg"_s, u"HS256"_s }, { u"kid"_s, 7 } }, claims, hs)
            << u"main"_s << true << ok << QString();
    QTest::newRow("HS256 without jwt_secret") << signToken(hs, claims) << u"no-secret"_s << false
                                              << JwtErrorCode::NoSigner << QString();

    QTest::newRow("RS256 unknown kid") << signToken(key(u"rsa"_s), claims, u"nope"_s) << u"main"_s
                                       << false << JwtErrorCode::NoSignerForKid << u"nope"_s;
    QTest::newRow("RS256 without kid") << signToken(key(u"rsa"_s), claims) << u"main"_s << false
                                       << JwtErrorCode::NoSigner << QString();
    QTest::newRow("RS256 non-string kid")
            << signToken(QJsonObject{ { u"alg"_s, u"RS256"_s }, { u"kid"_s, 1 } }, claims,
                         key(u"rsa"_s))
            << u"main"_s << false << JwtErrorCode::NoSigner << QString();
    QTest::newRow("RS256 without JWKS")
            << signToken(key(u"rsa"_s), claims, u"rsa-1"_s) << u"secret-only"_s << false
            << JwtErrorCode::NoSigner << QString();
    QTest::newRow("RS256 with empty JWKS")
            << signToken(key(u"rsa"_s), claims, u"rsa-1"_s) << u"empty-jwks"_s << false
            << JwtErrorCode::NoSignerForKid << u"rsa-1"_s;
    QTest::newRow("RS256 kid of an EC JWK")
            << signToken(key(u"rsa"_s), claims, u"ec256-1"_s) << u"main"_s << false
            << JwtErrorCode::NoSignerForKid << u"ec256-1"_s;
    QTest::newRow("RS256 kid of an RSA JWK without n")
            << signToken(key(u"rsa"_s), claims, u"rsa-broken"_s) << u"main"_s << false
            << JwtErrorCode::NoSignerForKid << u"rsa-broken"_s;
    QTest::newRow("ES256 kid of an RSA JWK")
            << signToken(key(u"p256"_s), claims, u"rsa-1"_s) << u"main"_s << false
            << JwtErrorCode::NoSignerForKid << u"rsa-1"_s;
    QTest::newRow("ES256 without kid") << signToken(key(u"p256"_s), claims) << u"main"_s << false
                                       << JwtErrorCode::NoSigner << QString();
    QTest::newRow("EdDSA kid of an X25519 JWK")
            << signToken(key(u"ed25519"_s), claims, u"x25519-1"_s) << u"main"_s << false
            << JwtErrorCode::NoSignerForKid << u"x25519-1"_s;
    QTest::newRow("EdDSA kid of an unknown kty")
            << signToken(key(u"ed25519"_s), claims, u"foo-1"_s) << u"main"_s << false
            << JwtErrorCode::NoSignerForKid << u"foo-1"_s;
    QTest::newRow("EdDSA without JWKS")
            << signToken(key(u"ed25519"_s), claims, u"ed25519-1"_s) << u"secret-only"_s << false
            << JwtErrorCode::NoSigner << QString();

    // The algorithm must fit the selected key, not just its kty.
    QTest::newRow("ES384 header, P-256 key")
            << signToken(key(u"p256"_s), claims, u"ec256-1"_s, u"ES384"_s) << u"main"_s << false
            << JwtErrorCode::SignatureInvalid << QString();
    QTest::newRow("ES256 header, P-384 key")
            << signToken(key(u"p384"_s), claims, u"ec384-1"_s, u"ES256"_s) << u"main"_s << false
            << JwtErrorCode::SignatureInvalid << QString();
    QTest::newRow("Ed448 header, Ed25519 key")
            << signToken(key(u"ed25519"_s), claims, u"ed25519-1"_s, u"Ed448"_s) << u"main"_s
            << false << JwtErrorCode::SignatureInvalid << QString();
    QTest::newRow("Ed25519 header, Ed448 key")
            << signToken(key(u"ed448"_s), claims, u"ed448-1"_s, u"Ed25519"_s) << u"main"_s << false
            << JwtErrorCode::SignatureInvalid << QString();
    // Algorithm confusion: an HMAC made with public key bytes must not pass as RS256.
    QTest::newRow("RS256 header, HMAC signature") << signRawToken(
            R"({"alg":"RS256","kid":"rsa-1"})", payload,
            TestKey::hmac(QJsonDocument(key(u"rsa"_s).publicJwk()).toJson(QJsonDocument::Compact)),
            u"HS256") << u"main"_s << false << JwtErrorCode::SignatureInvalid
                                                  << QString();

    QTest::newRow("alg none") << signRawToken(R"({"alg":"none"})", payload, hs, u"none")
                              << u"main"_s << false << JwtErrorCode::NoSigner << QString();
    QTest::newRow("alg none with kid")
            << signRawToken(R"({"alg":"none","kid":"rsa-1"})", payload, hs, u"none") << u"main"_s
            << false << JwtErrorCode::NoSigner << QString();
    QTest::newRow("alg PS256") << signRawToken(R"({"alg":"PS256","kid":"rsa-1"})", payload,
                                               key(u"rsa"_s), u"RS256")
                               << u"main"_s << false << JwtErrorCode::NoSigner << QString();
    QTest::newRow("alg in lower case") << signRawToken(R"({"alg":"hs256"})", payload, hs, u"HS256")
                                       << u"main"_s << false << JwtErrorCode::NoSigner << QString();
    QTest::newRow("alg missing") << signRawToken(R"({"typ":"JWT"})", payload, hs, u"HS256")
                                 << u"main"_s << false << JwtErrorCode::NoSigner << QString();
    QTest::newRow("alg not a string") << signRawToken(R"({"alg":256})", payload, hs, u"HS256")
                                      << u"main"_s << false << JwtErrorCode::NoSigner << QString();
}

void JwtTest::signerSelection()
{
    QFETCH(QByteArray, token);
    QFETCH(QString, keySetName);
    QFETCH(bool, valid);
    QFETCH(JwtErrorCode, code);
    QFETCH(QString, kid);

    const auto result = rt::auth::verifyToken(token, keySet(keySetName), options());
    QVERIFY2(result.ok() == valid,
             qPrintable(result.ok() ? u"verified"_s : result.error().joinReason()));
    if (!valid) {
        QCOMPARE(result.error().code, code);
        QCOMPARE(result.error().kid, kid);
    }
}

void JwtTest::errorTexts_data()
{
    QTest::addColumn<JwtErrorCode>("code");
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("connect");
    QTest::addColumn<QString>("join");
    QTest::addColumn<QString>("shutdown");

    const QString signer =
            u"Failed to generate JWT signer, check your JWT secret or JWKS configuration"_s;
    const QString kidSigner = u"Failed to generate JWT signer for key ID (kid) \"19de8c2c\", "
                              u"check your JWT secret or JWKS configuration"_s;
    const QString claims = u"Fields `role` and `exp` are required in JWT"_s;

    QTest::newRow("Malformed") << JwtErrorCode::Malformed << 401
                               << u"The token provided is not a valid JWT"_s
                               << u"MalformedJWT: The token provided is not a valid JWT"_s
                               << u"The token provided is not a valid JWT"_s;
    QTest::newRow("Expired") << JwtErrorCode::Expired << 401 << u"Token has expired"_s
                             << u"InvalidJWTToken: Token has expired 5 seconds ago"_s
                             << u"Token has expired 5 seconds ago"_s;
    QTest::newRow("MissingClaims") << JwtErrorCode::MissingClaims << 401 << claims
                                   << u"InvalidJWTToken: "_s + claims << claims;
    QTest::newRow("InvalidExpiration")
            << JwtErrorCode::InvalidExpiration << 401 << u"Token has expired"_s
            << u"InvalidJWTToken: Token expiration time is invalid"_s
            << u"Token expiration time is invalid"_s;
    QTest::newRow("SignatureInvalid")
            << JwtErrorCode::SignatureInvalid << 401 << u"Failed to validate JWT signature"_s
            << u"JwtSignatureError: Failed to validate JWT signature"_s
            << u"Failed to validate JWT signature"_s;
    QTest::newRow("NoSigner") << JwtErrorCode::NoSigner << 401 << signer
                              << u"JwtSignerError: "_s + signer << signer;
    QTest::newRow("NoSignerForKid") << JwtErrorCode::NoSignerForKid << 401 << kidSigner
                                    << u"JwtSignerError: "_s + kidSigner << kidSigner;
    QTest::newRow("ClaimValidationFailed")
            << JwtErrorCode::ClaimValidationFailed << 500 << u"Error connecting to Realtime"_s
            << u"Unknown Error on Channel"_s << u"Invalid token"_s;
}

void JwtTest::errorTexts()
{
    QFETCH(JwtErrorCode, code);
    QFETCH(int, status);
    QFETCH(QString, connect);
    QFETCH(QString, join);
    QFETCH(QString, shutdown);

    JwtError error;
    error.code = code;
    error.kid = u"19de8c2c"_s;
    error.expiredSecondsAgo = 5;
    QCOMPARE(error.httpStatus(), status);
    QCOMPARE(error.connectMessage(), connect);
    QCOMPARE(error.joinReason(), join);
    QCOMPARE(error.shutdownMessage(), shutdown);
}

void JwtTest::kidIsQuotedLikeElixirInspect_data()
{
    QTest::addColumn<QString>("kid");
    QTest::addColumn<QString>("rendered");

    QTest::newRow("plain") << u"key-1"_s << u"\"key-1\""_s;
    QTest::newRow("empty") << QString() << u"\"\""_s;
    QTest::newRow("double quote") << u"a\"b"_s << u"\"a\\\"b\""_s;
    QTest::newRow("backslash") << u"a\\b"_s << u"\"a\\\\b\""_s;
    QTest::newRow("newline and tab") << u"a\nb\tc"_s << u"\"a\\nb\\tc\""_s;
    QTest::newRow("escape and delete") << u"a\x1b"
                                          "b\x7f"_s
                                       << u"\"a\\eb\\d\""_s;
    QTest::newRow("interpolation") << u"#{x}#y"_s << u"\"\\#{x}#y\""_s;
    QTest::newRow("unicode") << u"clé-€-😀"_s << u"\"clé-€-😀\""_s;
    QTest::newRow("byte order mark") << u"a\uFEFFb"_s << u"\"a\\uFEFFb\""_s;
    QTest::newRow("control character") << u"a\x01z"_s << u"<<97, 1, 122>>"_s;
    QTest::newRow("long") << QString(5000, u'k') << u"\""_s + QString(4096, u'k') + u"\" <> ..."_s;
    QString longBinary(60, u'b');
    longBinary[0] = QChar(0x01);
    QString renderedBinary = u"<<1"_s;
    for (int i = 1; i < 50; ++i) {
        renderedBinary += u", 98"_s;
    }
    QTest::newRow("long binary") << longBinary << renderedBinary + u", ...>>"_s;
}

void JwtTest::kidIsQuotedLikeElixirInspect()
{
    QFETCH(QString, kid);
    QFETCH(QString, rendered);

    JwtError error;
    error.code = JwtErrorCode::NoSignerForKid;
    error.kid = kid;
    const QString expected = u"Failed to generate JWT signer for key ID (kid) "_s + rendered
            + u", check your JWT secret or JWKS configuration"_s;
    QCOMPARE(error.connectMessage(), expected);
    QCOMPARE(error.joinReason(), u"JwtSignerError: "_s + expected);
    QCOMPARE(error.shutdownMessage(), expected);
}

void JwtTest::errorsFromVerificationCarryTheirDetails()
{
    const QByteArray expired =
            rt::testsupport::signToken(key(u"hs"_s), claimsWith({ { u"exp"_s, Now - 42 } }));
    const auto expiredResult = rt::auth::verifyToken(expired, keySet(u"main"_s), options());
    QVERIFY(!expiredResult.ok());
    QCOMPARE(expiredResult.error().joinReason(),
             u"InvalidJWTToken: Token has expired 42 seconds ago"_s);
    QCOMPARE(expiredResult.error().connectMessage(), u"Token has expired"_s);

    const QByteArray unknownKid =
            rt::testsupport::signToken(key(u"rsa"_s), defaultClaims(), u"19de8c2c"_s);
    const auto kidResult = rt::auth::verifyToken(unknownKid, keySet(u"main"_s), options());
    QVERIFY(!kidResult.ok());
    QCOMPARE(kidResult.error().connectMessage(),
             u"Failed to generate JWT signer for key ID (kid) \"19de8c2c\", check your JWT "
             u"secret or JWKS configuration"_s);
}

void JwtTest::expiry_data()
{
    QTest::addColumn<QJsonValue>("exp"); // Undefined: no exp claim
    QTest::addColumn<bool>("valid");
    QTest::addColumn<JwtErrorCode>("code");
    QTest::addColumn<qint64>("expectedExp"); // valid: VerifiedToken::exp; Expired: seconds ago

    const auto ok = JwtErrorCode::Malformed; // unused when valid
    QTest::newRow("future") << QJsonValue(Now + 60) << true << ok << Now + 60;
    QTest::newRow("one second left") << QJsonValue(Now + 1) << true << ok << Now + 1;
    QTest::newRow("future decimal rounds down")
            << QJsonValue(double(Now) + 60.4) << true << ok << Now + 60;
    QTest::newRow("future decimal rounds half up")
            << QJsonValue(double(Now) + 60.5) << true << ok << Now + 61;
    QTest::newRow("far future beyond qint64")
            << QJsonValue(1e30) << true << ok << std::numeric_limits<qint64>::max();
    QTest::newRow("exactly now") << QJsonValue(Now) << false << JwtErrorCode::Expired << qint64(0);
    QTest::newRow("past") << QJsonValue(Now - 5) << false << JwtErrorCode::Expired << qint64(5);
    QTest::newRow("epoch") << QJsonValue(0) << false << JwtErrorCode::Expired << Now;
    QTest::newRow("negative") << QJsonValue(-10) << false << JwtErrorCode::Expired << Now + 10;
    // The reference server only words "expired N seconds ago" for integer exp values.
    QTest::newRow("past decimal") << QJsonValue(double(Now) - 5.5) << false
                                  << JwtErrorCode::ClaimValidationFailed << qint64(0);
    QTest::newRow("decimal rounding to now") << QJsonValue(double(Now) + 0.25) << false
                                             << JwtErrorCode::InvalidExpiration << qint64(0);
    QTest::newRow("future as string") << QJsonValue(QString::number(Now + 60)) << false
                                      << JwtErrorCode::ClaimValidationFailed << qint64(0);
    QTest::newRow("past as string") << QJsonValue(QString::number(Now - 60)) << false
                                    << JwtErrorCode::ClaimValidationFailed << qint64(0);
    QTest::newRow("null") << QJsonValue(QJsonValue::Null) << false
                          << JwtErrorCode::ClaimValidationFailed << qint64(0);
    QTest::newRow("boolean") << QJsonValue(true) << false << JwtErrorCode::ClaimValidationFailed
                             << qint64(0);
    QTest::newRow("missing") << QJsonValue(QJsonValue::Undefined) << false
                             << JwtErrorCode::MissingClaims << qint64(0);
}

void JwtTest::expiry()
{
    QFETCH(QJsonValue, exp);
    QFETCH(bool, valid);
    QFETCH(JwtErrorCode, code);
    QFETCH(qint64, expectedExp);

    QJsonObject claims = claimsWith({}, { u"exp"_s });
    if (!exp.isUndefined()) {
        claims.insert(u"exp"_s, exp);
    }
    const auto result = rt::auth::verifyToken(rt::testsupport::signToken(key(u"hs"_s), claims),
                                              keySet(u"main"_s), options());
    QVERIFY2(result.ok() == valid,
             qPrintable(result.ok() ? u"verified"_s : result.error().joinReason()));
    if (valid) {
        QCOMPARE(result->exp, std::optional<qint64>(expectedExp));
        // The claims handed on (to RLS settings) carry the rounded integer too.
        QCOMPARE(result->claims.value(u"exp"_s).toInteger(), expectedExp);
        QCOMPARE(result->claims.value(u"exp"_s).toDouble(), double(expectedExp));
    } else {
        QCOMPARE(result.error().code, code);
        if (code == JwtErrorCode::Expired) {
            QCOMPARE(result.error().expiredSecondsAgo, expectedExp);
        }
    }
}

void JwtTest::issuedAt_data()
{
    QTest::addColumn<QJsonValue>("iat");
    QTest::addColumn<bool>("valid");
    QTest::addColumn<qint64>("roundedIat");

    QTest::newRow("integer") << QJsonValue(Now - 10) << true << Now - 10;
    QTest::newRow("decimal") << QJsonValue(double(Now) - 10.6) << true << Now - 11;
    QTest::newRow("in the future is not checked") << QJsonValue(Now + 999) << true << Now + 999;
    QTest::newRow("string") << QJsonValue(QString::number(Now)) << false << qint64(0);
    QTest::newRow("null") << QJsonValue(QJsonValue::Null) << false << qint64(0);
    QTest::newRow("object") << QJsonValue(QJsonObject()) << false << qint64(0);
}

void JwtTest::issuedAt()
{
    QFETCH(QJsonValue, iat);
    QFETCH(bool, valid);
    QFETCH(qint64, roundedIat);

    const auto result = rt::auth::verifyToken(
            rt::testsupport::signToken(key(u"hs"_s), claimsWith({ { u"iat"_s, iat } })),
            keySet(u"main"_s), options());
    QCOMPARE(result.ok(), valid);
    if (valid) {
        QCOMPARE(result->claims.value(u"iat"_s).toInteger(), roundedIat);
        QCOMPARE(result->claims.value(u"iat"_s).toDouble(), double(roundedIat));
    } else {
        QCOMPARE(result.error().code, JwtErrorCode::ClaimValidationFailed);
    }
}

void JwtTest::requiredClaims_data()
{
    QTest::addColumn<QJsonObject>("claims");
    QTest::addColumn<bool>("requireRoleAndExp");
    QTest::addColumn<bool>("valid");
    QTest::addColumn<JwtErrorCode>("code");
    QTest::addColumn<QString>("role");

    const auto ok = JwtErrorCode::Malformed; // unused when valid
    QTest::newRow("role and exp") << defaultClaims() << true << true << ok << u"authenticated"_s;
    QTest::newRow("role missing") << claimsWith({}, { u"role"_s }) << true << false
                                  << JwtErrorCode::MissingClaims << QString();
    QTest::newRow("exp missing") << claimsWith({}, { u"exp"_s }) << true << false
                                 << JwtErrorCode::MissingClaims << QString();
    QTest::newRow("empty claims") << QJsonObject() << true << false << JwtErrorCode::MissingClaims
                                  << QString();
    QTest::newRow("role missing, not required")
            << claimsWith({}, { u"role"_s }) << false << true << ok << QString();
    QTest::newRow("both missing, not required")
            << claimsWith({}, { u"role"_s, u"exp"_s }) << false << true << ok << QString();
    // Like the reference server, the requirement is about keys being present.
    QTest::newRow("role null") << claimsWith({ { u"role"_s, QJsonValue::Null } }) << true << true
                               << ok << QString();
    // Claim validation runs before the role/exp requirement.
    QTest::newRow("iat string and role missing")
            << claimsWith({ { u"iat"_s, u"1"_s } }, { u"role"_s }) << true << false
            << JwtErrorCode::ClaimValidationFailed << QString();
}

void JwtTest::requiredClaims()
{
    QFETCH(QJsonObject, claims);
    QFETCH(bool, requireRoleAndExp);
    QFETCH(bool, valid);
    QFETCH(JwtErrorCode, code);
    QFETCH(QString, role);

    VerifyOptions verifyOptions = options();
    verifyOptions.requireRoleAndExp = requireRoleAndExp;
    const auto result = rt::auth::verifyToken(rt::testsupport::signToken(key(u"hs"_s), claims),
                                              keySet(u"main"_s), verifyOptions);
    QCOMPARE(result.ok(), valid);
    if (valid) {
        QCOMPARE(result->role, role);
        QCOMPARE(result->exp.has_value(), claims.contains(u"exp"_s));
    } else {
        QCOMPARE(result.error().code, code);
    }
}

void JwtTest::claimValidators_data()
{
    QTest::addColumn<QJsonObject>("validators");
    QTest::addColumn<QJsonObject>("claims");
    QTest::addColumn<bool>("valid");
    QTest::addColumn<JwtErrorCode>("code");

    const auto ok = JwtErrorCode::Malformed; // unused when valid
    const auto failed = JwtErrorCode::ClaimValidationFailed;
    const QJsonObject iss{ { u"iss"_s, u"Issuer"_s } };
    const QJsonObject issAndAud{ { u"iss"_s, u"Issuer"_s }, { u"aud"_s, u"www.test.com"_s } };

    QTest::newRow("match") << iss << claimsWith({ { u"iss"_s, u"Issuer"_s } }) << true << ok;
    QTest::newRow("mismatch") << iss << claimsWith({ { u"iss"_s, u"Tester"_s } }) << false
                              << failed;
    QTest::newRow("absent claim is not validated") << iss << defaultClaims() << true << ok;
    QTest::newRow("two, both match")
            << issAndAud
            << claimsWith({ { u"iss"_s, u"Issuer"_s }, { u"aud"_s, u"www.test.com"_s } }) << true
            << ok;
    QTest::newRow("two, one mismatch")
            << issAndAud << claimsWith({ { u"iss"_s, u"Issuer"_s }, { u"aud"_s, u"other"_s } })
            << false << failed;
    QTest::newRow("type mismatch") << QJsonObject{ { u"level"_s, 1 } }
                                   << claimsWith({ { u"level"_s, u"1"_s } }) << false << failed;
    QTest::newRow("number mismatch") << QJsonObject{ { u"level"_s, 1 } }
                                     << claimsWith({ { u"level"_s, 1.5 } }) << false << failed;
    QTest::newRow("number match") << QJsonObject{ { u"level"_s, 2 } }
                                  << claimsWith({ { u"level"_s, 2.0 } }) << true << ok;
    const QJsonObject metadata{ { u"provider"_s, u"email"_s } };
    QTest::newRow("object match") << QJsonObject{ { u"app"_s, metadata } }
                                  << claimsWith({ { u"app"_s, metadata } }) << true << ok;
    QTest::newRow("object mismatch")
            << QJsonObject{ { u"app"_s, metadata } }
            << claimsWith({ { u"app"_s, QJsonObject{ { u"provider"_s, u"phone"_s } } } }) << false
            << failed;
    QTest::newRow("array mismatch")
            << QJsonObject{ { u"amr"_s, QJsonArray{ u"pwd"_s } } }
            << claimsWith({ { u"amr"_s, QJsonArray{ u"pwd"_s, u"otp"_s } } }) << false << failed;
    QTest::newRow("null match") << QJsonObject{ { u"org"_s, QJsonValue::Null } }
                                << claimsWith({ { u"org"_s, QJsonValue::Null } }) << true << ok;
    // The built-in exp/iat validators shadow configured ones (reference server's token_config).
    QTest::newRow("validator on exp is ignored")
            << QJsonObject{ { u"exp"_s, 5 } } << defaultClaims() << true << ok;
    QTest::newRow("validator on iat is ignored") << QJsonObject{ { u"iat"_s, u"x"_s } }
                                                 << claimsWith({ { u"iat"_s, Now } }) << true << ok;
    // Claims are checked in key order and the first failure wins: "aud" < "exp" < "iss".
    QTest::newRow("aud mismatch before expired exp")
            << QJsonObject{ { u"aud"_s, u"a"_s } }
            << claimsWith({ { u"aud"_s, u"b"_s }, { u"exp"_s, Now - 1 } }) << false << failed;
    QTest::newRow("expired exp before iss mismatch")
            << iss << claimsWith({ { u"iss"_s, u"b"_s }, { u"exp"_s, Now - 1 } }) << false
            << JwtErrorCode::Expired;
}

void JwtTest::claimValidators()
{
    QFETCH(QJsonObject, validators);
    QFETCH(QJsonObject, claims);
    QFETCH(bool, valid);
    QFETCH(JwtErrorCode, code);

    VerifyOptions verifyOptions = options();
    verifyOptions.claimValidators = validators;
    const auto result = rt::auth::verifyToken(rt::testsupport::signToken(key(u"hs"_s), claims),
                                              keySet(u"main"_s), verifyOptions);
    QCOMPARE(result.ok(), valid);
    if (!valid) {
        QCOMPARE(result.error().code, code);
    }
}

void JwtTest::malformedTokens_data()
{
    using rt::testsupport::base64Url;
    QTest::addColumn<QByteArray>("token");
    QTest::addColumn<JwtErrorCode>("code");

    const TestKey &hs = key(u"hs"_s);
    const QByteArray valid = rt::testsupport::signToken(hs, defaultClaims());
    const QList<QByteArray> p = parts(valid);
    const QByteArray header = p[0];
    const QByteArray payload = p[1];
    const QByteArray rawHeader(R"({"alg":"HS256","typ":"JWT"})");
    auto signedWith = [&hs](const QByteArray &h, const QByteArray &c) {
        return rt::testsupport::signRawToken(h, c, hs, u"HS256");
    };
    const auto malformed = JwtErrorCode::Malformed;
    const auto generic = JwtErrorCode::ClaimValidationFailed;

    QTest::newRow("empty") << QByteArray() << malformed;
    QTest::newRow("publishable key") << QByteArray("sb_publishable_x") << malformed;
    QTest::newRow("secret key with dots") << QByteArray("sb_secret_" + valid) << malformed;
    QTest::newRow("one part") << QByteArray("not-a-jwt") << malformed;
    QTest::newRow("two parts") << QByteArray(header + '.' + payload) << malformed;
    QTest::newRow("four parts") << QByteArray(valid + ".e30") << malformed;
    QTest::newRow("only dots") << QByteArray("..") << malformed;
    QTest::newRow("payload with invalid character")
            << QByteArray(header + ".e30*." + p[2]) << malformed;
    QTest::newRow("payload in standard base64")
            << QByteArray(header + '.' + QByteArray(R"({"a":"???>>>"})").toBase64() + '.' + p[2])
            << malformed;
    QTest::newRow("payload of impossible length")
            << QByteArray(header + ".e30xx." + p[2]) << malformed;
    QTest::newRow("payload not JSON") << signedWith(rawHeader, "not json") << malformed;
    QTest::newRow("payload truncated JSON") << signedWith(rawHeader, R"({"role":)") << malformed;
    QTest::newRow("payload two JSON values") << signedWith(rawHeader, "{},{}") << malformed;
    // Valid JSON that is not an object, and any header problem, are the reference server's
    // generic errors (500 / "Unknown Error on Channel"), not "malformed".
    QTest::newRow("payload array") << signedWith(rawHeader, "[]") << generic;
    QTest::newRow("payload number") << signedWith(rawHeader, "123") << generic;
    QTest::newRow("payload string") << signedWith(rawHeader, "\"x\"") << generic;
    QTest::newRow("payload null") << signedWith(rawHeader, "null") << generic;
    QTest::newRow("header with invalid character")
            << QByteArray("e30*." + payload + '.' + p[2]) << generic;
    QTest::newRow("header not JSON") << signedWith("alg", "{}") << generic;
    QTest::newRow("header array") << signedWith("[]", "{}") << generic;
    QTest::newRow("signature with invalid character")
            << QByteArray(header + '.' + payload + ".abc*") << JwtErrorCode::SignatureInvalid;
    QTest::newRow("signature empty")
            << QByteArray(header + '.' + payload + '.') << JwtErrorCode::SignatureInvalid;
}

void JwtTest::malformedTokens()
{
    QFETCH(QByteArray, token);
    QFETCH(JwtErrorCode, code);

    const auto result = rt::auth::verifyToken(token, keySet(u"main"_s), options());
    QVERIFY(!result.ok());
    QCOMPARE(result.error().code, code);
}

void JwtTest::cleanToken_data()
{
    QTest::addColumn<QByteArray>("raw");
    QTest::addColumn<QByteArray>("cleaned");

    QTest::newRow("unchanged") << QByteArray("abc.def.ghi") << QByteArray("abc.def.ghi");
    QTest::newRow("empty") << QByteArray() << QByteArray();
    QTest::newRow("percent-encoded dot") << QByteArray("a%2Eb%2ec") << QByteArray("a.b.c");
    QTest::newRow("percent-encoded underscore and dash")
            << QByteArray("a%5Fb%2Dc") << QByteArray("a_b-c");
    QTest::newRow("spaces") << QByteArray(" a b ") << QByteArray("ab");
    QTest::newRow("newlines and tabs") << QByteArray("a\nb\r\nc\td") << QByteArray("abcd");
    QTest::newRow("vertical tab and form feed") << QByteArray("a\vb\fc") << QByteArray("abc");
    QTest::newRow("encoded whitespace") << QByteArray("a%20b%0Ac%0D%0Ad%09") << QByteArray("abcd");
    QTest::newRow("decoded only once") << QByteArray("a%252Eb") << QByteArray("a%2Eb");
    QTest::newRow("plus is not a space") << QByteArray("a+b") << QByteArray("a+b");
    QTest::newRow("lone percent") << QByteArray("a%") << QByteArray("a%");
    QTest::newRow("short escape") << QByteArray("a%2") << QByteArray("a%2");
    QTest::newRow("non-hex escape") << QByteArray("a%zzb") << QByteArray("a%zzb");
    QTest::newRow("non-ASCII space is kept") << QByteArray("a\xc2\xa0"
                                                           "b")
                                             << QByteArray("a\xc2\xa0"
                                                           "b");
}

void JwtTest::cleanToken()
{
    QFETCH(QByteArray, raw);
    QFETCH(QByteArray, cleaned);
    QCOMPARE(rt::auth::cleanToken(raw), cleaned);
}

void JwtTest::cleanTokenThenVerify()
{
    const QByteArray token = rt::testsupport::signToken(key(u"hs"_s), defaultClaims());
    QByteArray mangled = token;
    mangled.replace('.', "%2E");
    mangled.insert(10, "\n  ");
    mangled.append("\r\n");
    QVERIFY(!rt::auth::verifyToken(mangled, keySet(u"main"_s), options()).ok());
    const QByteArray cleaned = rt::auth::cleanToken(mangled);
    QCOMPARE(cleaned, token);
    QVERIFY(rt::auth::verifyToken(cleaned, keySet(u"main"_s), options()).ok());
}

void JwtTest::signHmacRoundTrip_data()
{
    QTest::addColumn<HmacAlgorithm>("algorithm");
    QTest::addColumn<QString>("algorithmName");
    QTest::addColumn<QString>("kid");
    QTest::addColumn<int>("macBytes");

    QTest::newRow("HS256") << HmacAlgorithm::HS256 << u"HS256"_s << QString() << 32;
    QTest::newRow("HS384") << HmacAlgorithm::HS384 << u"HS384"_s << QString() << 48;
    QTest::newRow("HS512") << HmacAlgorithm::HS512 << u"HS512"_s << QString() << 64;
    QTest::newRow("HS256 with kid") << HmacAlgorithm::HS256 << u"HS256"_s << u"k-256"_s << 32;
    QTest::newRow("HS384 with kid") << HmacAlgorithm::HS384 << u"HS384"_s << u"k-384"_s << 48;
    QTest::newRow("HS512 with kid") << HmacAlgorithm::HS512 << u"HS512"_s << u"k-512"_s << 64;
}

void JwtTest::signHmacRoundTrip()
{
    QFETCH(HmacAlgorithm, algorithm);
    QFETCH(QString, algorithmName);
    QFETCH(QString, kid);
    QFETCH(int, macBytes);

    const QJsonObject claims =
            claimsWith({ { u"app_metadata"_s, QJsonObject{ { u"provider"_s, u"email"_s } } } });
    const QByteArray token = rt::auth::signHmac(claims, JwtSecret, algorithm, kid);

    const QList<QByteArray> pieces = parts(token);
    QCOMPARE(pieces.size(), 3);
    const QJsonObject header = QJsonDocument::fromJson(decodePart(pieces[0])).object();
    QCOMPARE(header.value(u"alg"_s).toString(), algorithmName);
    QCOMPARE(header.value(u"typ"_s).toString(), u"JWT"_s);
    QCOMPARE(header.contains(u"kid"_s), !kid.isEmpty());
    QCOMPARE(header.value(u"kid"_s).toString(), kid);
    QCOMPARE(decodePart(pieces[2]).size(), macBytes);
    QVERIFY(!token.contains('='));

    // Verifies through jwt_secret (a kid without a matching oct JWK falls back to it) ...
    const auto result = rt::auth::verifyToken(token, keySet(u"main"_s), options());
    QVERIFY2(result.ok(), qPrintable(result.ok() ? QString() : result.error().joinReason()));
    QCOMPARE(result->claims, claims);
    // ... and the test-support signer, an independent implementation, agrees on the MAC.
    QCOMPARE(pieces[2],
             rt::testsupport::base64Url(
                     key(u"hs"_s).sign(algorithmName, QByteArray(pieces[0] + '.' + pieces[1]))));
    // A different secret does not verify it.
    const auto wrong = rt::auth::verifyToken(
            rt::auth::signHmac(claims, QByteArray("another secret"), algorithm, kid),
            keySet(u"main"_s), options());
    QVERIFY(!wrong.ok());
    QCOMPARE(wrong.error().code, JwtErrorCode::SignatureInvalid);
}

void JwtTest::signHmacKnownAnswer()
{
    // jwt.io's HS256 example, produced by an unrelated implementation.
    const QByteArray token("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
                           "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MD"
                           "IyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c");
    const auto keys = buildKeys(QByteArray("your-256-bit-secret"), {});
    VerifyOptions verifyOptions = options();
    verifyOptions.requireRoleAndExp = false;
    const auto result = rt::auth::verifyToken(token, *keys, verifyOptions);
    QVERIFY(result.ok());
    QCOMPARE(result->claims.value(u"name"_s).toString(), u"John Doe"_s);
    QVERIFY(!result->exp.has_value());

    // Our own signer reproduces the signature for the same header and payload bytes.
    const QList<QByteArray> pieces = parts(token);
    const QJsonObject claims = QJsonDocument::fromJson(decodePart(pieces[1])).object();
    const QByteArray ours = rt::auth::signHmac(claims, QByteArray("your-256-bit-secret"));
    QCOMPARE(parts(ours)[0], pieces[0]);
    QVERIFY(rt::auth::verifyToken(ours, *keys, verifyOptions).ok());
}

void JwtTest::keySetBuild_data()
{
    QTest::addColumn<QByteArray>("jwks");
    QTest::addColumn<bool>("valid");

    QTest::newRow("absent") << QByteArray() << true;
    QTest::newRow("blank") << QByteArray(" \n") << true;
    QTest::newRow("null") << QByteArray("null") << true;
    QTest::newRow("no keys") << QByteArray(R"({"keys":[]})") << true;
    QTest::newRow("unusable entries")
            << QByteArray(R"({"keys":[42,"x",null,{},{"kty":"RSA"}]})") << true;
    QTest::newRow("not JSON") << QByteArray("{keys:[]}") << false;
    QTest::newRow("truncated") << QByteArray(R"({"keys":[)") << false;
    QTest::newRow("array") << QByteArray("[]") << false;
    QTest::newRow("object without keys") << QByteArray("{}") << false;
    QTest::newRow("keys not an array") << QByteArray(R"({"keys":{}})") << false;
    QTest::newRow("keys null") << QByteArray(R"({"keys":null})") << false;
}

void JwtTest::keySetBuild()
{
    QFETCH(QByteArray, jwks);
    QFETCH(bool, valid);

    const auto result = KeySet::build(JwtSecret, jwks);
    QCOMPARE(result.ok(), valid);
    if (valid) {
        // The jwt_secret still works whatever the JWKS held.
        const auto verified = rt::auth::verifyToken(
                rt::testsupport::signToken(key(u"hs"_s), defaultClaims()), **result, options());
        QVERIFY(verified.ok());
    } else {
        QVERIFY(!result.error().message.isEmpty());
        QVERIFY(!result.error().message.contains(QString::fromLatin1(JwtSecret)));
    }
}

void JwtTest::keySetSkipsUnusableKeys()
{
    const TestKey &rsa = key(u"rsa"_s);
    QJsonObject broken = rsa.publicJwk(u"same"_s);
    broken.insert(u"n"_s, u"AQAB"_s); // far too small to be an RSA modulus
    QJsonObject wrongCurve = key(u"p256"_s).publicJwk(u"ec"_s);
    wrongCurve.insert(u"crv"_s, u"P-384"_s);
    const auto keys =
            buildKeys(JwtSecret,
                      rt::testsupport::jwks({ broken, rsa.publicJwk(u"same"_s), wrongCurve,
                                              QJsonObject{ { u"kty"_s, u"EC"_s },
                                                           { u"kid"_s, u"pt"_s },
                                                           { u"crv"_s, u"P-256"_s },
                                                           { u"x"_s, u"AQ"_s },
                                                           { u"y"_s, u"AQ"_s } } }));

    const auto result = rt::auth::verifyToken(
            rt::testsupport::signToken(rsa, defaultClaims(), u"same"_s), *keys, options());
    QVERIFY(result.ok());

    const auto curve = rt::auth::verifyToken(
            rt::testsupport::signToken(key(u"p256"_s), defaultClaims(), u"ec"_s), *keys, options());
    QVERIFY(!curve.ok());
    QCOMPARE(curve.error().code, JwtErrorCode::NoSignerForKid);
}

void JwtTest::concurrentVerification()
{
    // One KeySet shared by several threads, as tenants' key sets are shared by workers.
    const std::vector<QByteArray> tokens{
        rt::testsupport::signToken(key(u"hs"_s), defaultClaims()),
        rt::testsupport::signToken(key(u"oct"_s), defaultClaims(), u"oct-1"_s),
        rt::testsupport::signToken(key(u"rsa"_s), defaultClaims(), u"rsa-1"_s),
        rt::testsupport::signToken(key(u"p256"_s), defaultClaims(), u"ec256-1"_s),
        rt::testsupport::signToken(key(u"p521"_s), defaultClaims(), u"ec521-1"_s),
        rt::testsupport::signToken(key(u"ed25519"_s), defaultClaims(), u"ed25519-1"_s),
        rt::testsupport::signToken(key(u"ed448"_s), defaultClaims(), u"ed448-1"_s),
    };
    const KeySet &keys = keySet(u"main"_s);
    std::atomic<int> verified{ 0 };
    constexpr int Threads = 4;
    constexpr int Rounds = 30;
    std::vector<std::thread> workers;
    for (int t = 0; t < Threads; ++t) {
        workers.emplace_back([&] {
            for (int round = 0; round < Rounds; ++round) {
                for (const QByteArray &token : tokens) {
                    if (rt::auth::verifyToken(token, keys, options()).ok()) {
                        ++verified;
                    }
                }
            }
        });
    }
    for (std::thread &worker : workers) {
        worker.join();
    }
    QCOMPARE(verified.load(), Threads * Rounds * int(tokens.size()));
}

QTEST_GUILESS_MAIN(JwtTest)
#include "tst_jwt.moc"
