#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <memory>

namespace rt::testing {

// A certificate and its key, as PEM.
struct IssuedCertificate
{
    QByteArray certificatePem;
    QByteArray keyPem;
};

// A throwaway certificate authority (ECDSA P-256, self-signed) that issues server and client
// certificates for tests: real OpenSSL objects, PEM out. Not thread-safe.
class TestCertificateAuthority
{
public:
    explicit TestCertificateAuthority(
            const QString &commonName = QStringLiteral("qtrealtime test CA"));
    ~TestCertificateAuthority();
    TestCertificateAuthority(const TestCertificateAuthority &) = delete;
    TestCertificateAuthority &operator=(const TestCertificateAuthority &) = delete;

    QByteArray certificatePem() const;
    // A leaf: `dnsNames` and `addresses` go into subjectAltName, the first name (if any) is
    // also the common name. Valid from an hour ago for `validDays` (negative: already expired).
    IssuedCertificate issue(const QStringList &dnsNames, const QStringList &addresses = {},
                            int validDays = 30) const;

private:
    struct Native;
    std::unique_ptr<Native> m_native;
};

// An unencrypted PEM key of a fresh P-256 key pair; with a passphrase, an encrypted one.
QByteArray newKeyPem(const QByteArray &passphrase = QByteArray());

// Writes `data` to `path` (creating or truncating); false if it could not.
bool writeFile(const QString &path, const QByteArray &data);

} // namespace rt::testing
