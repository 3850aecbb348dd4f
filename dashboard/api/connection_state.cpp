#include "dashboard/api/connection_state.h"

#include "dashboard/api/endpoint.h"

namespace rt::dashboard {

QString ConnectionState::text() const
{
    const QString where = endpointLabel(endpoint);
    switch (kind) {
    case Kind::Disconnected:
        return tr("Not connected");
    case Kind::Connecting:
        return tr("Connecting to %1…").arg(where);
    case Kind::Connected:
        return nodeId.isEmpty() ? tr("Connected to %1").arg(where)
                                : tr("Connected to %1 (%2)").arg(nodeId, where);
    case Kind::Reconnecting: {
        const QString seconds = QString::number(double(delay.count()) / 1000.0, 'f', 1);
        return reason.isEmpty() ? tr("Reconnecting: trying %1 in %2 s (attempt %3)…")
                                          .arg(where, seconds, QString::number(attempt))
                                : tr("Connection lost (%4) — trying %1 in %2 s (attempt %3)…")
                                          .arg(where, seconds, QString::number(attempt), reason);
    }
    case Kind::Failed:
        return tr("Not connected: %1").arg(reason);
    }
    return {};
}

} // namespace rt::dashboard
