#pragma once

#include "shared/core/result.h"

#include <QSslCertificate>
#include <QSslConfiguration>
#include <QSslKey>
#include <QString>
#include <QStringList>

namespace rt::cluster::links {

// The files of mutual TLS between nodes (CLUSTER_TLS_*): the cluster's own CA, and this node's
// certificate (naming its node id) with its key.
struct LinkTlsFiles
{
    QString caFile;
    QString certificateFile;
    QString keyFile;
};

// A TLS configuration for node links: TLS 1.2 or later, the peer's certificate required and
// verified against the cluster CA only (not the system's), this node's certificate and key
// presented both when dialling and when accepting. Fails naming the file that cannot be used.
Result<QSslConfiguration> loadLinkTls(const LinkTlsFiles &files);

// PEM files read with errors that name them ("cannot read the CA file /x: ...", "... holds no
// PEM certificate"); also used for the etcd client's files. `what` names the file's role.
Result<QList<QSslCertificate>> readPemCertificates(const char *what, const QString &path);
// An unencrypted EC, RSA or DSA private key.
Result<QSslKey> readPemPrivateKey(const QString &path);

// The names a certificate gives its subject, each once: subjectAltName DNS entries, then the
// common names.
QStringList certificateNames(const QSslCertificate &certificate);

// Whether a peer's certificate names the node id it claims (case-insensitively, as DNS names
// compare): a node's certificate is its identity on the links.
bool certificateNamesNode(const QSslCertificate &certificate, const QString &nodeId);

} // namespace rt::cluster::links
