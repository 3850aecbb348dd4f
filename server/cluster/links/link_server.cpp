#include "server/cluster/links/link_server.h"

#include "server/cluster/links/logging.h"

#include <QSslSocket>
#include <QTcpServer>
#include <QTcpSocket>

#include <unistd.h>

#include <utility>

namespace rt::cluster::links {

namespace {

// Hands out QSslSockets (not yet encrypting) when the links speak TLS, plain ones otherwise.
class LinkListener final : public QTcpServer
{
public:
    LinkListener(bool tls, QObject *parent) : QTcpServer(parent), m_tls(tls) { }

protected:
    void incomingConnection(qintptr descriptor) override
    {
        if (!m_tls) {
            QTcpServer::incomingConnection(descriptor);
            return;
        }
        auto *socket = new QSslSocket(this);
        if (!socket->setSocketDescriptor(descriptor)) {
            delete socket;
            ::close(static_cast<int>(descriptor));
            return;
        }
        addPendingConnection(socket);
    }

private:
    bool m_tls;
};

} // namespace

LinkServer::LinkServer(LinkSettings settings, QObject *parent)
    : QObject(parent),
      m_settings(std::move(settings)),
      m_server(new LinkListener(m_settings.tls.has_value(), this))
{
    connect(m_server, &QTcpServer::newConnection, this, &LinkServer::onNewConnection);
}

LinkServer::~LinkServer()
{
    for (auto it = m_handshaking.cbegin(); it != m_handshaking.cend(); ++it) {
        it.key()->disconnect(this);
    }
    for (auto it = m_ready.cbegin(); it != m_ready.cend(); ++it) {
        it.key()->disconnect(this);
    }
}

Result<quint16> LinkServer::listen(const QHostAddress &address, quint16 port)
{
    if (!m_server->listen(address, port)) {
        return Error{ QStringLiteral("cannot listen for node links on %1:%2: %3")
                              .arg(address.toString())
                              .arg(port)
                              .arg(m_server->errorString()) };
    }
    qCInfo(lcLinks) << "listening for node links on" << address.toString()
                    << m_server->serverPort();
    return m_server->serverPort();
}

bool LinkServer::isListening() const
{
    return m_server->isListening();
}

quint16 LinkServer::port() const
{
    return m_server->serverPort();
}

void LinkServer::close()
{
    m_server->close();
    QList<LinkConnection *> all = m_handshaking.keys();
    all += m_ready.keys();
    for (LinkConnection *connection : std::as_const(all)) {
        connection->close(QStringLiteral("node is shutting down its links"));
    }
}

void LinkServer::onNewConnection()
{
    while (QTcpSocket *socket = m_server->nextPendingConnection()) {
        const QHostAddress address = socket->peerAddress();
        const bool busy = m_handshaking.size() >= m_settings.maxPendingHandshakes;
        if (busy || m_handshakingFrom.value(address) >= m_settings.maxPendingHandshakesPerAddress) {
            ++m_refused;
            qCWarning(lcLinks) << "refusing a link from" << address.toString() << ":"
                               << (busy ? "too many handshakes in progress"
                                        : "too many handshakes in progress from that address");
            socket->abort();
            socket->deleteLater();
            continue;
        }
        auto *connection = new LinkConnection(m_settings, HandshakeRole::Acceptor, this);
        m_handshaking.insert(connection, address);
        ++m_handshakingFrom[address];
        connect(connection, &LinkConnection::ready, this, [this, connection](const QString &peer) {
            forgetHandshake(connection);
            m_ready.insert(connection, peer);
            ++m_incoming[peer].links;
        });
        connect(connection, &LinkConnection::frameReceived, this,
                [this, connection](quint8 kind, const QByteArray &payload) {
                    const QString peer = connection->peerNodeId();
                    IncomingCounters &counters = m_incoming[peer];
                    ++counters.frames;
                    counters.bytes += static_cast<quint64>(FrameHeaderBytes + payload.size());
                    Q_EMIT frameReceived(peer, kind, payload);
                });
        connect(connection, &LinkConnection::closed, this,
                [this, connection](const QString &, CloseCause cause) {
                    onClosed(connection, cause);
                });
        connection->accept(socket);
    }
}

void LinkServer::onClosed(LinkConnection *connection, CloseCause cause)
{
    const auto ready = m_ready.constFind(connection);
    if (ready != m_ready.constEnd()) {
        --m_incoming[*ready].links;
        m_ready.erase(ready);
    }
    forgetHandshake(connection);
    if (cause == CloseCause::AuthFailure) {
        ++m_authFailures;
    } else if (cause == CloseCause::ProtocolError) {
        ++m_protocolErrors;
    }
    connection->disconnect(this);
    connection->deleteLater();
}

void LinkServer::forgetHandshake(LinkConnection *connection)
{
    const auto it = m_handshaking.constFind(connection);
    if (it == m_handshaking.constEnd()) {
        return;
    }
    const auto from = m_handshakingFrom.find(*it);
    if (from != m_handshakingFrom.end() && --*from <= 0) {
        m_handshakingFrom.erase(from);
    }
    m_handshaking.erase(it);
}

} // namespace rt::cluster::links
