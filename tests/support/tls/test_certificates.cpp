#include "tests/support/tls/test_certificates.h"

#include <QFile>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <algorithm>

namespace rt::testing {

namespace {

constexpr long SecondsPerDay = 86'400;

QByteArray drain(BIO *bio)
{
    char *data = nullptr;
    const long length = BIO_get_mem_data(bio, &data);
    QByteArray out(data, static_cast<qsizetype>(length));
    BIO_free(bio);
    return out;
}

QByteArray certificateToPem(X509 *certificate)
{
    BIO *bio = BIO_new(BIO_s_mem());
    PEM_write_bio_X509(bio, certificate);
    return drain(bio);
}

QByteArray keyToPem(EVP_PKEY *key, const QByteArray &passphrase = QByteArray())
{
    BIO *bio = BIO_new(BIO_s_mem());
    if (passphrase.isEmpty()) {
        PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
    } else {
        QByteArray secret = passphrase;
        PEM_write_bio_PrivateKey(bio, key, EVP_aes_256_cbc(),
                                 reinterpret_cast<unsigned char *>(secret.data()),
                                 static_cast<int>(secret.size()), nullptr, nullptr);
    }
    return drain(bio);
}

void addExtension(X509 *certificate, X509 *issuer, int nid, const QByteArray &value)
{
    X509V3_CTX context;
    X509V3_set_ctx_nodb(&context);
    X509V3_set_ctx(&context, issuer, certificate, nullptr, nullptr, 0);
    X509_EXTENSION *extension = X509V3_EXT_conf_nid(nullptr, &context, nid, value.constData());
    X509_add_ext(certificate, extension, -1);
    X509_EXTENSION_free(extension);
}

X509 *newCertificate(EVP_PKEY *key, const QString &commonName, long serial, int validDays)
{
    X509 *certificate = X509_new();
    X509_set_version(certificate, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(certificate), serial);
    const long validSeconds = static_cast<long>(validDays) * SecondsPerDay;
    X509_gmtime_adj(X509_getm_notBefore(certificate), std::min(-3600L, validSeconds - 3600));
    X509_gmtime_adj(X509_getm_notAfter(certificate), validSeconds);
    X509_set_pubkey(certificate, key);
    if (!commonName.isEmpty()) {
        X509_NAME_add_entry_by_txt(
                X509_get_subject_name(certificate), "CN", MBSTRING_UTF8,
                reinterpret_cast<const unsigned char *>(commonName.toUtf8().constData()), -1, -1,
                0);
    }
    return certificate;
}

} // namespace

struct TestCertificateAuthority::Native
{
    EVP_PKEY *key = nullptr;
    X509 *certificate = nullptr;
    mutable long nextSerial = 2;

    ~Native()
    {
        X509_free(certificate);
        EVP_PKEY_free(key);
    }
};

TestCertificateAuthority::TestCertificateAuthority(const QString &commonName)
    : m_native(std::make_unique<Native>())
{
    m_native->key = EVP_EC_gen("P-256");
    X509 *certificate = newCertificate(m_native->key, commonName, 1, 365);
    X509_set_issuer_name(certificate, X509_get_subject_name(certificate));
    addExtension(certificate, certificate, NID_basic_constraints, "critical,CA:TRUE");
    addExtension(certificate, certificate, NID_key_usage, "critical,keyCertSign,cRLSign");
    addExtension(certificate, certificate, NID_subject_key_identifier, "hash");
    X509_sign(certificate, m_native->key, EVP_sha256());
    m_native->certificate = certificate;
}

TestCertificateAuthority::~TestCertificateAuthority() = default;

QByteArray TestCertificateAuthority::certificatePem() const
{
    return certificateToPem(m_native->certificate);
}

IssuedCertificate TestCertificateAuthority::issue(const QStringList &dnsNames,
                                                  const QStringList &addresses, int validDays) const
{
    EVP_PKEY *key = EVP_EC_gen("P-256");
    X509 *certificate = newCertificate(key, dnsNames.value(0), m_native->nextSerial++, validDays);
    X509_set_issuer_name(certificate, X509_get_subject_name(m_native->certificate));
    QStringList alternatives;
    for (const QString &name : dnsNames) {
        alternatives.append(QStringLiteral("DNS:") + name);
    }
    for (const QString &address : addresses) {
        alternatives.append(QStringLiteral("IP:") + address);
    }
    if (!alternatives.isEmpty()) {
        addExtension(certificate, m_native->certificate, NID_subject_alt_name,
                     alternatives.join(QLatin1Char(',')).toUtf8());
    }
    addExtension(certificate, m_native->certificate, NID_basic_constraints, "CA:FALSE");
    addExtension(certificate, m_native->certificate, NID_ext_key_usage, "serverAuth,clientAuth");
    addExtension(certificate, m_native->certificate, NID_authority_key_identifier, "keyid");
    X509_sign(certificate, m_native->key, EVP_sha256());
    IssuedCertificate issued{ certificateToPem(certificate), keyToPem(key) };
    X509_free(certificate);
    EVP_PKEY_free(key);
    return issued;
}

QByteArray newKeyPem(const QByteArray &passphrase)
{
    EVP_PKEY *key = EVP_EC_gen("P-256");
    QByteArray pem = keyToPem(key, passphrase);
    EVP_PKEY_free(key);
    return pem;
}

bool writeFile(const QString &path, const QByteArray &data)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly | QIODevice::Truncate) && file.write(data) == data.size();
}

} // namespace rt::testing
