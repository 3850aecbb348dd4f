#pragma once

#include <QList>
#include <QString>
#include <QUrl>
#include <QUrlQuery>

#include <optional>

// Where the dashboard reaches a node: the operator's URL and the nodes' client addresses turned
// into the base URL of each node (scheme, host, port; no path), and from it the admin API's HTTP
// and live-feed URLs. Pure functions; no I/O.
namespace rt::dashboard {

// The URL the operator typed, as a node's base URL: "http(s)://host[:port]". Accepts http, https,
// ws and wss (ws -> http, wss -> https) and a bare "host[:port]" (http). A path, query or
// fragment is dropped; user info is refused (the token goes in a header). nullopt: not a URL a
// node can be reached at (no host, another scheme, unparsable).
std::optional<QUrl> nodeBaseUrl(const QString &operatorUrl);

// A node's client_address from a snapshot ("host:port", "[v6]:port" or a URL) as a base URL.
// Without a scheme it takes the operator URL's (a cluster behind TLS advertises host:port but is
// reached with https). An unspecified host (0.0.0.0, ::) cannot be dialled: nullopt.
std::optional<QUrl> nodeBaseUrlFromAddress(const QString &clientAddress, const QUrl &operatorBase);

// The URL of an admin API path on a node: base + path (decoded text starting with '/'; QUrl
// percent-encodes what must be, e.g. a configuration key's '?') + query.
QUrl adminHttpUrl(const QUrl &base, const QString &path, const QUrlQuery &query = {});

// The live feed's WebSocket URL on a node: ws(s)://host:port/api/admin/live/websocket?vsn=1.0.0.
QUrl liveFeedUrl(const QUrl &base);

// "host:port" of a base URL, as shown to operators and used to tell endpoints apart.
QString endpointLabel(const QUrl &base);

// The operator's node first, then every other address, without duplicates (same host and port),
// in the given order.
QList<QUrl> mergeEndpoints(const QUrl &operatorBase, const QList<QUrl> &others);

} // namespace rt::dashboard
