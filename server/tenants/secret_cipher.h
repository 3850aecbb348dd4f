#pragma once

#include "shared/core/result.h"

#include <QByteArray>

namespace rt::tenants {

// Encryption at rest of tenant secrets (jwt_secret, and db_host/db_port/db_name/db_user/
// db_password of database extensions), byte-compatible with Supabase Realtime's control plane
// (docs/upstream/tenants-limits-metrics.md §4), so either server can read the other's rows:
//
//  - DB_ENC_KEY (exactly 16 bytes, used as is): AES-128-ECB with PKCS#7 padding, stored as
//    standard base64. Deterministic and unauthenticated: upstream's legacy format.
//  - DB_ENC_KEY_GCM (exactly 32 bytes): AES-256-GCM with a random 12-byte IV and a 16-byte tag.
//    Written (when DB_ENC_WRITE_GCM is set) as "g2:" + base64(IV || TAG || CIPHERTEXT) with the
//    secret's place (tenant and field) as associated data, so a value copied into another
//    tenant's row or another field fails to decrypt. Upstream's "g1:" values (same layout,
//    empty associated data) stay readable; upstream cannot read "g2:".
//
// Reading dispatches on the stored value's prefix, never on configuration. Every OpenSSL call's
// result is checked: a failure is an error, never a half-written value. Immutable after
// construction; safe to use from any thread.
// Where a secret is stored: the tenant's external id and the field ("jwt_secret", "db_host",
// ...). Bound into "g2:" values; ignored by the ECB and "g1:" formats, which cannot carry it.
struct SecretPlace
{
    QByteArrayView tenant;
    QByteArrayView field;
};

class SecretCipher
{
public:
    // Fails with one clear message when a key has the wrong length or GCM writing is asked
    // for without a GCM key.
    static Result<SecretCipher> create(const QByteArray &ecbKey, const QByteArray &gcmKey,
                                       bool writeGcm);

    // Fails only when OpenSSL does (no randomness for the IV, a cipher error).
    Result<QByteArray> encrypt(const QByteArray &plaintext, SecretPlace place) const;
    // Fails for values that are not valid ciphertexts under the configured keys (bad base64,
    // wrong length, bad padding, GCM tag mismatch, a "g2:" value of another place, missing key).
    Result<QByteArray> decrypt(const QByteArray &stored, SecretPlace place) const;

    bool writesGcm() const { return m_writeGcm; }

private:
    SecretCipher() = default;
    QByteArray m_ecbKey;
    QByteArray m_gcmKey;
    bool m_writeGcm = false;
};

} // namespace rt::tenants
