#include "server/tenants/tenant_change_wire.h"

#include <QString>

namespace rt::tenants::change_wire {

QByteArray encode(QByteArrayView externalId)
{
    Q_ASSERT(!externalId.isEmpty() && externalId.size() <= MaxIdBytes);
    QByteArray out;
    out.reserve(1 + externalId.size());
    out.append(char(Version));
    out.append(externalId);
    return out;
}

Result<QByteArray> decode(QByteArrayView payload)
{
    if (payload.isEmpty()) {
        return Error{ QStringLiteral("tenant change: empty payload") };
    }
    if (quint8(payload.front()) != Version) {
        return Error{
            QStringLiteral("tenant change: unknown version %1").arg(quint8(payload.front()))
        };
    }
    const QByteArrayView id = payload.sliced(1);
    if (id.isEmpty() || id.size() > MaxIdBytes) {
        return Error{ QStringLiteral("tenant change: external id of %1 bytes").arg(id.size()) };
    }
    // Round trip through QString: invalid sequences become U+FFFD and no longer compare equal.
    if (QString::fromUtf8(id).toUtf8() != id) {
        return Error{ QStringLiteral("tenant change: external id is not UTF-8") };
    }
    return id.toByteArray();
}

} // namespace rt::tenants::change_wire
