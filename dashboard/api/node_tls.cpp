#include "dashboard/api/node_tls.h"

#include <QCoreApplication>
#include <QFile>
#include <QSslCertificate>

namespace rt::dashboard {

namespace {

// A CA bundle is a few kilobytes; anything much larger is not one.
constexpr qint64 MaxCaFileBytes = qint64{ 4 } * 1024 * 1024;

} // namespace

Result<QSslConfiguration> nodeSslConfiguration(const QString &caFile)
{
    QSslConfiguration configuration = QSslConfiguration::defaultConfiguration();
    configuration.setProtocol(QSsl::TlsV1_2OrLater);
    configuration.setPeerVerifyMode(QSslSocket::VerifyPeer);
    if (caFile.isEmpty()) {
        return configuration;
    }
    QFile file(caFile);
    if (!file.open(QIODevice::ReadOnly)) {
        return Error{ QCoreApplication::translate("NodeTls", "Cannot read the CA file %1: %2")
                              .arg(caFile, file.errorString()) };
    }
    if (file.size() > MaxCaFileBytes) {
        return Error{ QCoreApplication::translate("NodeTls", "The CA file %1 is larger than 4 MiB.")
                              .arg(caFile) };
    }
    const QList<QSslCertificate> certificates =
            QSslCertificate::fromData(file.readAll(), QSsl::Pem);
    if (certificates.isEmpty()) {
        return Error{ QCoreApplication::translate("NodeTls",
                                                  "The CA file %1 holds no PEM certificate.")
                              .arg(caFile) };
    }
    // Replaces the system's roots (and turns off their loading on demand).
    configuration.setCaCertificates(certificates);
    return configuration;
}

} // namespace rt::dashboard
