#pragma once

#include "shared/core/result.h"

#include <QSslConfiguration>
#include <QString>

namespace rt::dashboard {

// The TLS settings of every connection the dashboard makes to a node (admin API and live feed):
// TLS 1.2 or later, the peer's certificate verified against the host name it was dialled by,
// and with a CA file its certificates as the only trusted roots (as curl's --cacert: a private
// cluster CA, not the public web's). An unreadable file, or one without a PEM certificate, is
// an error naming the file. Reads the file; call it once per connectTo().
Result<QSslConfiguration> nodeSslConfiguration(const QString &caFile);

} // namespace rt::dashboard
