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
//  - DB_ENC_KEY_GCM (exactly 32 bytes): AES-256-GCM with a random 12-byte IV and a 16-byte tag,
//    stored as "g1:" + base64(IV || TAG || CIPHERTEXT), empty AAD. Written when
//    DB_ENC_WRITE_GCM is set; always readable when the key is configured.
//
// Reading dispatches on the stored value ("g1:" prefix or not), never on configuration.
// Immutable after construction; safe to use from any thread.
class SecretCipher
{
public:
    // Fails with one clear message when a key has the wrong length or GCM writing is asked
    // for without a GCM key.
    static Result<SecretCipher> create(const QByteArray &ecbKey, const QByteArray &gcmKey,
                                       bool writeGcm);

    QByteArray encrypt(const QByteArray &plaintext) const;
    // Fails for values that are not valid ciphertexts under the configured keys (bad base64,
    // wrong length, bad padding, GCM tag mismatch, missing key).
    Result<QByteArray> decrypt(const QByteArray &stored) const;

    bool writesGcm() const { return m_writeGcm; }

private:
    SecretCipher() = default;
    QByteArray m_ecbKey;
    QByteArray m_gcmKey;
    bool m_writeGcm = false;
};

} // namespace rt::tenants
