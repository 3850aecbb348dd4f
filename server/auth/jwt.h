#pragma once

#include "shared/core/result.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QJsonObject>
#include <QString>

#include <memory>
#include <optional>

// JWT verification for sockets, joins, access_token refreshes and the HTTP APIs
// (spec/server-protocol.md §1.4, §1.5, §3.4, §3.5). Pure functions over OpenSSL; callable from
// any thread. Token bytes are untrusted: every failure is a JwtError, never a crash.
namespace rt::auth {

enum class JwtErrorCode {
    Malformed, // not decodable as a JWT (also an empty token)
    Expired, // exp <= now
    MissingClaims, // `role` or `exp` missing (when required)
    InvalidExpiration, // exp present but not a usable positive number
    SignatureInvalid, // signature does not verify
    NoSigner, // unsupported alg, or no usable key
    NoSignerForKid, // kid not found in the tenant's JWKS
    ClaimValidationFailed, // JWT_CLAIM_VALIDATORS mismatch, non-numeric iat, bad header fields
};

struct JwtError
{
    JwtErrorCode code = JwtErrorCode::Malformed;
    QString kid; // NoSignerForKid
    qint64 expiredSecondsAgo = 0; // Expired

    // Answer to a WebSocket upgrade or HTTP request (§1.4): 401 for token problems, 500 for
    // ClaimValidationFailed ("Error connecting to Realtime").
    int httpStatus() const;
    QString connectMessage() const;
    // phx_join error reason (§3.4), e.g. "InvalidJWTToken: Token has expired 5 seconds ago".
    QString joinReason() const;
    // Channel shutdown text (system message on access_token refresh, §3.5), e.g.
    // "Token has expired 5 seconds ago".
    QString shutdownMessage() const;
};

// The verification keys of one tenant: its HMAC secret and its JWKS. Immutable once built and
// safe to share between threads (EVP_PKEY is only read).
class KeySet
{
public:
    // jwksJson is the tenant's `jwt_jwks` ({"keys":[...]}) or empty. Keys the server cannot use
    // (unknown kty, bad parameters) are skipped. Fails only if jwksJson is present but not a JSON
    // object with a `keys` array.
    static Result<std::shared_ptr<const KeySet>> build(const QByteArray &jwtSecret,
                                                       const QByteArray &jwksJson);
    ~KeySet();

    KeySet(const KeySet &) = delete;
    KeySet &operator=(const KeySet &) = delete;

    struct Data; // OpenSSL-typed internals, defined in jwt.cpp
    const Data &data() const { return *m_data; }

private:
    KeySet();
    std::unique_ptr<Data> m_data;
};

struct VerifyOptions
{
    qint64 nowSeconds = 0; // wall clock, seconds since the epoch
    bool requireRoleAndExp = true; // sockets/joins/broadcast API: yes; tenant management API: no
    // JWT_CLAIM_VALIDATORS: each claim listed must equal the given value if present in the token.
    QJsonObject claimValidators;
};

struct VerifiedToken
{
    QJsonObject claims;
    QString role; // empty when absent (only possible with requireRoleAndExp = false)
    std::optional<qint64> exp; // seconds since the epoch (decimals rounded)
};

// Token cleanup before verification (§1.5): URL-decode, then remove all whitespace.
QByteArray cleanToken(QByteArrayView raw);

// Verifies signature and claims of `token` (already cleaned) with the tenant's keys.
Result<VerifiedToken, JwtError> verifyToken(QByteArrayView token, const KeySet &keys,
                                            const VerifyOptions &options);

// Signs `claims` with an HMAC secret (HS256/HS384/HS512). Used by operators' tooling and tests.
enum class HmacAlgorithm { HS256, HS384, HS512 };
QByteArray signHmac(const QJsonObject &claims, QByteArrayView secret,
                    HmacAlgorithm algorithm = HmacAlgorithm::HS256, const QString &kid = {});

} // namespace rt::auth
