#pragma once

#include <QByteArray>
#include <QByteArrayView>

namespace rt::tenants {

// The tenant external id addressed by an HTTP Host header (spec §1.3): the first DNS label of
// the host without its port ("realtime-dev.localhost:4000" -> "realtime-dev"). A host that is an
// IP literal (v4 or [v6]) or exactly "localhost" addresses the self-hosted tenant, so that
// ws://localhost:4000/socket/websocket and ws://127.0.0.1:4000/... work without DNS set-up.
// Matching is case-insensitive; the result is lower-cased. An empty host gives an empty id.
QByteArray tenantIdFromHost(QByteArrayView host, const QByteArray &selfHostTenant);

} // namespace rt::tenants
