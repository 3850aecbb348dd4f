#include "server/tenants/secret_cipher.h"

#include <QtEndian>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <memory>

namespace rt::tenants {

namespace {

const QByteArray LegacyGcmPrefix = QByteArrayLiteral("g1:"); // upstream's: no associated data
const QByteArray GcmPrefix = QByteArrayLiteral("g2:"); // ours: the place as associated data
constexpr int GcmIvBytes = 12;
constexpr int GcmTagBytes = 16;
constexpr int AesBlockBytes = 16;

struct CipherContextDeleter
{
    void operator()(EVP_CIPHER_CTX *context) const { EVP_CIPHER_CTX_free(context); }
};
using CipherContext = std::unique_ptr<EVP_CIPHER_CTX, CipherContextDeleter>;

const auto *bytes(QByteArrayView data)
{
    return reinterpret_cast<const unsigned char *>(data.constData());
}

auto *bytes(QByteArray &data)
{
    return reinterpret_cast<unsigned char *>(data.data());
}

int length(QByteArrayView data)
{
    return static_cast<int>(data.size());
}

// Length-prefixed, so that no two places give the same bytes.
QByteArray associatedData(SecretPlace place)
{
    QByteArray aad = QByteArrayLiteral("qtrealtime secret v2");
    const auto tenantLength = qToBigEndian(static_cast<quint32>(place.tenant.size()));
    aad.append(reinterpret_cast<const char *>(&tenantLength), sizeof(tenantLength));
    aad.append(place.tenant);
    aad.append(place.field);
    return aad;
}

const Error CipherFailed{ QStringLiteral("encrypting a secret failed in OpenSSL") };
const Error GcmFailed{ QStringLiteral(
        "GCM decryption failed: ciphertext or authentication tag is invalid") };

// IV || TAG || CIPHERTEXT, `aad` authenticated with it.
Result<QByteArray> sealGcm(QByteArrayView key, QByteArrayView plaintext, QByteArrayView aad)
{
    QByteArray blob(GcmIvBytes + GcmTagBytes + plaintext.size(), '\0');
    unsigned char *iv = bytes(blob);
    unsigned char *tag = iv + GcmIvBytes;
    unsigned char *out = tag + GcmTagBytes;
    CipherContext context(EVP_CIPHER_CTX_new());
    int written = 0;
    int finalWritten = 0;
    int ignored = 0;
    const bool ok = context && RAND_bytes(iv, GcmIvBytes) == 1
            && EVP_EncryptInit_ex(context.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) == 1
            && EVP_CIPHER_CTX_ctrl(context.get(), EVP_CTRL_GCM_SET_IVLEN, GcmIvBytes, nullptr) == 1
            && EVP_EncryptInit_ex(context.get(), nullptr, nullptr, bytes(key), iv) == 1
            && (aad.isEmpty()
                || EVP_EncryptUpdate(context.get(), nullptr, &ignored, bytes(aad), length(aad))
                        == 1)
            && EVP_EncryptUpdate(context.get(), out, &written, bytes(plaintext), length(plaintext))
                    == 1
            && EVP_EncryptFinal_ex(context.get(), out + written, &finalWritten) == 1
            && written + finalWritten == plaintext.size()
            && EVP_CIPHER_CTX_ctrl(context.get(), EVP_CTRL_GCM_GET_TAG, GcmTagBytes, tag) == 1;
    if (!ok) {
        return CipherFailed;
    }
    return blob;
}

Result<QByteArray> openGcm(QByteArrayView key, QByteArrayView encoded, QByteArrayView aad)
{
    const auto decoded = QByteArray::fromBase64Encoding(encoded.toByteArray(),
                                                        QByteArray::AbortOnBase64DecodingErrors);
    if (!decoded || decoded.decoded.size() < GcmIvBytes + GcmTagBytes) {
        return Error{ QStringLiteral("a GCM secret is not valid base64 of IV, tag and "
                                     "ciphertext") };
    }
    QByteArray blob = *decoded;
    const qsizetype cipherBytes = blob.size() - GcmIvBytes - GcmTagBytes;
    QByteArray plain(cipherBytes, '\0');
    unsigned char *iv = bytes(blob);
    unsigned char *tag = iv + GcmIvBytes;
    const unsigned char *in = tag + GcmTagBytes;
    CipherContext context(EVP_CIPHER_CTX_new());
    int written = 0;
    int finalWritten = 0;
    int ignored = 0;
    const bool ok = context
            && EVP_DecryptInit_ex(context.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) == 1
            && EVP_CIPHER_CTX_ctrl(context.get(), EVP_CTRL_GCM_SET_IVLEN, GcmIvBytes, nullptr) == 1
            && EVP_DecryptInit_ex(context.get(), nullptr, nullptr, bytes(key), iv) == 1
            && (aad.isEmpty()
                || EVP_DecryptUpdate(context.get(), nullptr, &ignored, bytes(aad), length(aad))
                        == 1)
            && EVP_DecryptUpdate(context.get(), bytes(plain), &written, in,
                                 static_cast<int>(cipherBytes))
                    == 1
            && EVP_CIPHER_CTX_ctrl(context.get(), EVP_CTRL_GCM_SET_TAG, GcmTagBytes, tag) == 1
            && EVP_DecryptFinal_ex(context.get(), bytes(plain) + written, &finalWritten) == 1;
    if (!ok) {
        return GcmFailed;
    }
    plain.truncate(written + finalWritten);
    return plain;
}

// AES-128-ECB, PKCS#7 padding (OpenSSL's default).
Result<QByteArray> sealEcb(QByteArrayView key, QByteArrayView plaintext)
{
    QByteArray out(plaintext.size() + AesBlockBytes, '\0');
    CipherContext context(EVP_CIPHER_CTX_new());
    int written = 0;
    int finalWritten = 0;
    const bool ok = context
            && EVP_EncryptInit_ex(context.get(), EVP_aes_128_ecb(), nullptr, bytes(key), nullptr)
                    == 1
            && EVP_EncryptUpdate(context.get(), bytes(out), &written, bytes(plaintext),
                                 length(plaintext))
                    == 1
            && EVP_EncryptFinal_ex(context.get(), bytes(out) + written, &finalWritten) == 1;
    if (!ok) {
        return CipherFailed;
    }
    out.truncate(written + finalWritten);
    return out;
}

Result<QByteArray> openEcb(QByteArrayView key, const QByteArray &stored)
{
    const auto decoded =
            QByteArray::fromBase64Encoding(stored, QByteArray::AbortOnBase64DecodingErrors);
    if (!decoded || decoded.decoded.isEmpty() || decoded.decoded.size() % AesBlockBytes != 0) {
        return Error{ QStringLiteral("a secret is not AES-128-ECB ciphertext in base64") };
    }
    QByteArray plain(decoded.decoded.size(), '\0');
    CipherContext context(EVP_CIPHER_CTX_new());
    int written = 0;
    int finalWritten = 0;
    const bool ok = context
            && EVP_DecryptInit_ex(context.get(), EVP_aes_128_ecb(), nullptr, bytes(key), nullptr)
                    == 1
            && EVP_DecryptUpdate(context.get(), bytes(plain), &written, bytes(*decoded),
                                 length(*decoded))
                    == 1
            // A wrong key almost always shows up as bad padding here (upstream returns garbage).
            && EVP_DecryptFinal_ex(context.get(), bytes(plain) + written, &finalWritten) == 1;
    if (!ok) {
        return Error{ QStringLiteral("a secret does not decrypt with DB_ENC_KEY (wrong key?)") };
    }
    plain.truncate(written + finalWritten);
    return plain;
}

} // namespace

Result<SecretCipher> SecretCipher::create(const QByteArray &ecbKey, const QByteArray &gcmKey,
                                          bool writeGcm)
{
    if (!ecbKey.isEmpty() && ecbKey.size() != 16) {
        return Error{ QStringLiteral("DB_ENC_KEY must be exactly 16 bytes (AES-128), got %1")
                              .arg(ecbKey.size()) };
    }
    if (!gcmKey.isEmpty() && gcmKey.size() != 32) {
        return Error{ QStringLiteral("DB_ENC_KEY_GCM must be exactly 32 bytes for AES-256-GCM, "
                                     "got %1 bytes")
                              .arg(gcmKey.size()) };
    }
    if (writeGcm && gcmKey.isEmpty()) {
        return Error{ QStringLiteral("DB_ENC_WRITE_GCM needs DB_ENC_KEY_GCM") };
    }
    if (!writeGcm && ecbKey.isEmpty()) {
        return Error{ QStringLiteral("DB_ENC_KEY is required to encrypt tenant secrets") };
    }
    SecretCipher cipher;
    cipher.m_ecbKey = ecbKey;
    cipher.m_gcmKey = gcmKey;
    cipher.m_writeGcm = writeGcm;
    return cipher;
}

Result<QByteArray> SecretCipher::encrypt(const QByteArray &plaintext, SecretPlace place) const
{
    if (m_writeGcm) {
        Result<QByteArray> blob = sealGcm(m_gcmKey, plaintext, associatedData(place));
        if (!blob) {
            return blob;
        }
        return QByteArray(GcmPrefix + blob->toBase64());
    }
    Result<QByteArray> ciphertext = sealEcb(m_ecbKey, plaintext);
    if (!ciphertext) {
        return ciphertext;
    }
    return ciphertext->toBase64();
}

Result<QByteArray> SecretCipher::decrypt(const QByteArray &stored, SecretPlace place) const
{
    const bool bound = stored.startsWith(GcmPrefix);
    if (bound || stored.startsWith(LegacyGcmPrefix)) {
        if (m_gcmKey.isEmpty()) {
            return Error{ QStringLiteral("a secret is AES-256-GCM encrypted but DB_ENC_KEY_GCM "
                                         "is not set") };
        }
        return openGcm(m_gcmKey, QByteArrayView(stored).sliced(GcmPrefix.size()),
                       bound ? associatedData(place) : QByteArray());
    }
    if (m_ecbKey.isEmpty()) {
        return Error{ QStringLiteral("a secret is AES-128-ECB encrypted but DB_ENC_KEY is not "
                                     "set") };
    }
    return openEcb(m_ecbKey, stored);
}

} // namespace rt::tenants
