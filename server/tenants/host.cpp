#include "server/tenants/host.h"

#include <QList>
#include <QString>

namespace rt::tenants {

namespace {

// A dotted-quad IPv4 address. (QHostAddress also takes inet_aton forms such as "1234", which
// are valid DNS labels and must stay tenant names.)
bool isIpv4Literal(const QByteArray &name)
{
    const QList<QByteArray> parts = name.split('.');
    if (parts.size() != 4) {
        return false;
    }
    for (const QByteArray &part : parts) {
        bool ok = false;
        const int value = part.toInt(&ok);
        if (part.isEmpty() || part.size() > 3 || !ok || value > 255 || part.startsWith('+')) {
            return false;
        }
    }
    return true;
}

} // namespace

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
    if (name == "localhost" || isIpv4Literal(name)) {
        return selfHostTenant;
    }
    const qsizetype dot = name.indexOf('.');
    return dot < 0 ? name : name.left(dot);
}

} // namespace rt::tenants
