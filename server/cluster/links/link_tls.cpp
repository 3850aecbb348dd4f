#include "server/cluster/links/link_tls.h"

#include <QFile>
#include <QSslKey>

#include <algorithm>

namespace rt::cluster::links {

namespace {

Result<QByteArray> readFile(const char *what, const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        return Error{ QStringLiteral("cannot read the %1 %2: %3")
                              .arg(QLatin1String(what), path, file.errorString()) };
    }
    return file.readAll();
}

} // namespace

Result<QList<QSslCertificate>> readPemCertificates(const char *what, const QString &path)
{
    Result<QByteArray> pem = readFile(what, path);
    if (!pem) {
        return pem.error();
    }
    QList<QSslCertificate> certificates = QSslCertificate::fromData(pem.value(), QSsl::Pem);
    if (certificates.isEmpty() || certificates.first().isNull()) {
        return Error{
            QStringLiteral("the %1 %2 holds no PEM certificate").arg(QLatin1String(what), path)
        };
    }
    return certificates;
}

Result<QSslKey> readPemPrivateKey(const QString &path)
{
    Result<QByteArray> pem = readFile("key file", path);
    if (!pem) {
        return pem.error();
    }
    for (const QSsl::KeyAlgorithm algorithm : { QSsl::Ec, QSsl::Rsa, QSsl::Dsa }) {
        QSslKey key(pem.value(), algorithm, QSsl::Pem, QSsl::PrivateKey);
        if (!key.isNull()) {
            return key;
        }
    }
    return Error{
        QStringLiteral("the key file %1 holds no unencrypted PEM private key").arg(path)
    };
}

// Whether the key belongs to the certificate is left to the config check (server/app), which
// loads the same pair with OpenSSL.
Result<QSslConfiguration> loadLinkTls(const LinkTlsFiles &files)
{
    Result<QList<QSslCertificate>> authorities = readPemCertificates("CA file", files.caFile);
    if (!authorities) {
        return authorities.error();
    }
    Result<QList<QSslCertificate>> chain =
            readPemCertificates("certificate file", files.certificateFile);
    if (!chain) {
        return chain.error();
    }
    Result<QSslKey> key = readPemPrivateKey(files.keyFile);
    if (!key) {
        return key.error();
    }
    QSslConfiguration configuration = QSslConfiguration::defaultConfiguration();
    configuration.setProtocol(QSsl::TlsV1_2OrLater);
    configuration.setCaCertificates(authorities.value());
    configuration.setLocalCertificateChain(chain.value());
    configuration.setPrivateKey(key.value());
    configuration.setPeerVerifyMode(QSslSocket::VerifyPeer);
    return configuration;
}

QStringList certificateNames(const QSslCertificate &certificate)
{
    QStringList names = certificate.subjectAlternativeNames().values(QSsl::DnsEntry);
    names += certificate.subjectInfo(QSslCertificate::CommonName);
    names.removeDuplicates();
    return names;
}

bool certificateNamesNode(const QSslCertificate &certificate, const QString &nodeId)
{
    const QStringList names = certificateNames(certificate);
    return std::any_of(names.cbegin(), names.cend(), [&nodeId](const QString &name) {
        return name.compare(nodeId, Qt::CaseInsensitive) == 0;
    });
}

} // namespace rt::cluster::links
