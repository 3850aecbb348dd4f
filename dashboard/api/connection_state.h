#pragma once

#include <QCoreApplication>
#include <QString>
#include <QUrl>

#include <chrono>

namespace rt::dashboard {

// Where the dashboard's connection to the cluster stands, as the status bar shows it.
struct ConnectionState
{
    enum class Kind {
        Disconnected, // nothing asked, or the operator disconnected
        Connecting, // dialling `endpoint` (the first node tried)
        Connected, // the live feed of `endpoint` (node `nodeId`) is running
        Reconnecting, // the last node was lost (`reason`); `endpoint` is dialled next, after
        // `delay`, as attempt number `attempt`
        Failed, // given up (`reason`): a URL that is no URL, a token the cluster refuses
    };
    Kind kind = Kind::Disconnected;
    QUrl endpoint;
    QString nodeId; // Connected: the node's id once its first snapshot arrived
    int attempt = 0;
    std::chrono::milliseconds delay{ 0 };
    QString reason; // in words

    // One line for the operator, translated ("Connected to node-a (10.0.0.1:4000)").
    QString text() const;

    friend bool operator==(const ConnectionState &, const ConnectionState &) = default;

    Q_DECLARE_TR_FUNCTIONS(ConnectionState) // last: it ends with "private:"
};

} // namespace rt::dashboard
