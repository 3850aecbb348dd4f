#pragma once

#include "server/cluster/links/link_connection.h"
#include "server/cluster/links/link_settings.h"
#include "shared/core/result.h"

#include <QHash>
#include <QHostAddress>
#include <QObject>
#include <QSet>

QT_BEGIN_NAMESPACE
class QTcpServer;
QT_END_NAMESPACE

namespace rt::cluster::links {

// Listens on CLUSTER_PORT and accepts links from peer nodes: each accepted socket must pass
// the handshake (cluster secret) within handshakeTimeout, or it is closed with a logged reason;
// handshakes in progress are capped in all and per peer address, and an unauthenticated peer's
// frames are limited to a few KiB (PreAuthMaxFramePayloadBytes).
// Frames of authenticated links come out of frameReceived with the peer's node id. Incoming
// links from any authenticated node are accepted, even one not (yet) in this node's member
// list, since membership views converge at different times.
// Lives on the cluster thread; owned by NodeLinks.
class LinkServer : public QObject
{
    Q_OBJECT

public:
    explicit LinkServer(LinkSettings settings, QObject *parent = nullptr);
    ~LinkServer() override;

    // Starts listening; returns the bound port (useful with port 0).
    Result<quint16> listen(const QHostAddress &address, quint16 port);
    bool isListening() const;
    quint16 port() const;
    // Stops listening and closes every incoming link.
    void close();

    struct IncomingCounters
    {
        quint64 frames = 0;
        quint64 bytes = 0; // wire bytes: header + payload
        int links = 0; // authenticated links open now
    };
    QHash<QString, IncomingCounters> incomingCounters() const { return m_incoming; }
    quint64 authFailures() const { return m_authFailures; }
    quint64 protocolErrors() const { return m_protocolErrors; }
    quint64 refusedConnections() const { return m_refused; }

Q_SIGNALS:
    void frameReceived(const QString &fromNodeId, quint8 kind, const QByteArray &payload);

private:
    void onNewConnection();
    void onClosed(LinkConnection *connection, CloseCause cause);
    void forgetHandshake(LinkConnection *connection);

    LinkSettings m_settings;
    QTcpServer *m_server = nullptr; // child
    QHash<LinkConnection *, QHostAddress> m_handshaking; // children, not yet authenticated
    QHash<QHostAddress, int> m_handshakingFrom; // handshakes in progress per peer address
    QHash<LinkConnection *, QString> m_ready; // children, authenticated -> peer node id
    QHash<QString, IncomingCounters> m_incoming;
    quint64 m_authFailures = 0;
    quint64 m_protocolErrors = 0;
    quint64 m_refused = 0;
};

} // namespace rt::cluster::links
