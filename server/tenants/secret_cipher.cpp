#include "server/tenants/secret_cipher.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <memory>

namespace rt::tenants {

namespace {

const QByteArray GcmPrefix = QByteArrayLiteral("g1:");
constexpr int GcmIvBytes = 12;
constexpr int GcmTagBytes = 16;

struct CipherContextDeleter
{
    void operator()(EVP_CIPHER_CTX *context) const { EVP_CIPHER_CTX_free(context); }
};
using CipherContext = std::unique_ptr<EVP_CIPHER_CTX, CipherContextDeleter>;

const auto *bytes(const QByteArray &data)
{
    return reinterpret_cast<const unsigned char *>(data.constData());
}

auto *bytes(QByteArray &data)
{
    return reinterpret_cast<unsigned char *>(data.data());
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

QByteArray SecretCipher::encrypt(const QByteArray &plaintext) const
{
    CipherContext context(EVP_CIPHER_CTX_new());
    int written = 0;
    int finalWritten = 0;
    if (m_writeGcm) {
        // "g1:" + base64(IV || TAG || CIPHERTEXT), upstream's layout (tag before ciphertext).
        QByteArray blob(GcmIvBytes + GcmTagBytes + plaintext.size(), '\0');
        unsigned char *iv = bytes(blob);
        unsigned char *tag = iv + GcmIvBytes;
        unsigned char *out = tag + GcmTagBytes;
        RAND_bytes(iv, GcmIvBytes);
        EVP_EncryptInit_ex(context.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr);
        EVP_CIPHER_CTX_ctrl(context.get(), EVP_CTRL_GCM_SET_IVLEN, GcmIvBytes, nullptr);
        EVP_EncryptInit_ex(context.get(), nullptr, nullptr, bytes(m_gcmKey), iv);
        EVP_EncryptUpdate(context.get(), out, &written, bytes(plaintext),
                          static_cast<int>(plaintext.size()));
        EVP_EncryptFinal_ex(context.get(), out + written, &finalWritten);
        EVP_CIPHER_CTX_ctrl(context.get(), EVP_CTRL_GCM_GET_TAG, GcmTagBytes, tag);
        return GcmPrefix + blob.toBase64();
    }
    // AES-128-ECB, PKCS#7 padding (OpenSSL's default), standard base64 with padding.
    QByteArray out(plaintext.size() + 16, '\0');
    EVP_EncryptInit_ex(context.get(), EVP_aes_128_ecb(), nullptr, bytes(m_ecbKey), nullptr);
    EVP_EncryptUpdate(context.get(), bytes(out), &written, bytes(plaintext),
                      static_cast<int>(plaintext.size()));
    EVP_EncryptFinal_ex(context.get(), bytes(out) + written, &finalWritten);
    out.truncate(written + finalWritten);
    return out.toBase64();
}

Result<QByteArray> SecretCipher::decrypt(const QByteArray &stored) const
{
    CipherContext context(EVP_CIPHER_CTX_new());
    int written = 0;
    int finalWritten = 0;
    if (stored.startsWith(GcmPrefix)) {
        if (m_gcmKey.isEmpty()) {
            return Error{ QStringLiteral("a secret is AES-256-GCM encrypted but DB_ENC_KEY_GCM "
                                         "is not set") };
        }
        const auto decoded = QByteArray::fromBase64Encoding(
                stored.mid(GcmPrefix.size()), QByteArray::AbortOnBase64DecodingErrors);
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
        EVP_DecryptInit_ex(context.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr);
        EVP_CIPHER_CTX_ctrl(context.get(), EVP_CTRL_GCM_SET_IVLEN, GcmIvBytes, nullptr);
        EVP_DecryptInit_ex(context.get(), nullptr, nullptr, bytes(m_gcmKey), iv);
        EVP_DecryptUpdate(context.get(), bytes(plain), &written, in, static_cast<int>(cipherBytes));
        EVP_CIPHER_CTX_ctrl(context.get(), EVP_CTRL_GCM_SET_TAG, GcmTagBytes, tag);
        if (EVP_DecryptFinal_ex(context.get(), bytes(plain) + written, &finalWritten) != 1) {
            return Error{ QStringLiteral("GCM decryption failed: ciphertext or authentication "
                                         "tag is invalid") };
        }
        plain.truncate(written + finalWritten);
        return plain;
    }
    if (m_ecbKey.isEmpty()) {
        return Error{ QStringLiteral("a secret is AES-128-ECB encrypted but DB_ENC_KEY is not "
                                     "set") };
    }
    const auto decoded =
            QByteArray::fromBase64Encoding(stored, QByteArray::AbortOnBase64DecodingErrors);
    if (!decoded || decoded.decoded.isEmpty() || decoded.decoded.size() % 16 != 0) {
        return Error{ QStringLiteral("a secret is not AES-128-ECB ciphertext in base64") };
    }
    QByteArray plain(decoded.decoded.size(), '\0');
    EVP_DecryptInit_ex(context.get(), EVP_aes_128_ecb(), nullptr, bytes(m_ecbKey), nullptr);
    EVP_DecryptUpdate(context.get(), bytes(plain), &written, bytes(*decoded),
                      static_cast<int>(decoded.decoded.size()));
    // A wrong key almost always shows up as bad padding here (upstream would return garbage).
    if (EVP_DecryptFinal_ex(context.get(), bytes(plain) + written, &finalWritten) != 1) {
        return Error{ QStringLiteral("a secret does not decrypt with DB_ENC_KEY (wrong key?)") };
    }
    plain.truncate(written + finalWritten);
    return plain;
}

} // namespace rt::tenants
