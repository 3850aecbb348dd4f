#include "server/tenants/host.h"

#include <QHostAddress>
#include <QString>

namespace rt::tenants {

QByteArray tenantIdFromHost(QByteArrayView host, const QByteArray &selfHostTenant)
{
    QByteArray name = host.trimmed().toByteArray().toLower();
    if (name.startsWith('[')) {
        // [v6]:port
        return selfHostTenant;
    }
    const qsizetype colon = name.lastIndexOf(':');
    if (colon >= 0 && name.indexOf(':') == colon) {
        name.truncate(colon);
    } else if (colon >= 0) {
        // More than one colon without brackets: a bare IPv6 literal.
        return selfHostTenant;
    }
    if (name.endsWith('.')) {
        name.chop(1); // fully qualified form "host.example."
    }
    if (name.isEmpty()) {
        return {};
    }
    if (name == "localhost" || !QHostAddress(QString::fromLatin1(name)).isNull()) {
        return selfHostTenant;
    }
    const qsizetype dot = name.indexOf('.');
    return dot < 0 ? name : name.left(dot);
}

} // namespace rt::tenants
