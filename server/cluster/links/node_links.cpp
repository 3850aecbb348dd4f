#include "server/cluster/links/node_links.h"

#include "server/cluster/links/link_server.h"
#include "server/cluster/links/logging.h"
#include "server/cluster/links/peer_links.h"

namespace rt::cluster::links {

NodeLinks::NodeLinks(const LinkSettings &settings, QObject *parent)
    : QObject(parent),
      m_settings(settings),
      m_server(new LinkServer(settings, this))
{
    Q_ASSERT_X(!validateLinkSettings(settings), "NodeLinks", "invalid link settings");
    connect(m_server, &LinkServer::frameReceived, this, &NodeLinks::frameReceived);
}

NodeLinks::~NodeLinks()
{
    for (PeerLinks *pool : std::as_const(m_pools)) {
        pool->disconnect(this);
    }
}

Result<quint16> NodeLinks::listen(const QHostAddress &address, quint16 port)
{
    return m_server->listen(address, port);
}

quint16 NodeLinks::listeningPort() const
{
    return m_server->port();
}

PeerLinks *NodeLinks::createPool(const PeerAddress &address)
{
    auto *pool = new PeerLinks(m_settings, address, this);
    connect(pool, &PeerLinks::connected, this, &NodeLinks::peerConnected);
    connect(pool, &PeerLinks::disconnected, this, &NodeLinks::peerDisconnected);
    connect(pool, &PeerLinks::frameDropped, this, &NodeLinks::framesDropped);
    return pool;
}

void NodeLinks::setPeers(const QList<PeerAddress> &peers)
{
    QHash<QString, PeerAddress> wanted;
    for (const PeerAddress &peer : peers) {
        if (!peer.nodeId.isEmpty() && peer.nodeId != m_settings.nodeId) {
            wanted.insert(peer.nodeId, peer);
        }
    }
    // Departed peers first, so that their signals are out before new ones start.
    const QStringList current = m_pools.keys();
    for (const QString &nodeId : current) {
        if (wanted.contains(nodeId)) {
            continue;
        }
        PeerLinks *pool = m_pools.take(nodeId);
        const bool wasConnected = pool->isConnected();
        m_retiredAuthFailures += pool->authFailures();
        m_retiredProtocolErrors += pool->protocolErrors();
        pool->disconnect(this);
        // deleteLater: we may be inside one of this pool's signals.
        pool->deleteLater();
        qCInfo(lcLinks) << "closing links to departed node" << nodeId;
        if (wasConnected) {
            Q_EMIT peerDisconnected(nodeId);
        }
    }
    for (auto it = wanted.cbegin(); it != wanted.cend(); ++it) {
        if (PeerLinks *pool = m_pools.value(it.key())) {
            pool->setAddress(it.value());
            continue;
        }
        PeerLinks *pool = createPool(it.value());
        m_pools.insert(it.key(), pool);
        pool->start();
    }
}

QStringList NodeLinks::peers() const
{
    QStringList ids = m_pools.keys();
    ids.sort();
    return ids;
}

QStringList NodeLinks::connectedPeers() const
{
    QStringList ids;
    for (auto it = m_pools.cbegin(); it != m_pools.cend(); ++it) {
        if (it.value()->isConnected()) {
            ids.append(it.key());
        }
    }
    ids.sort();
    return ids;
}

bool NodeLinks::isConnected(const QString &nodeId) const
{
    const PeerLinks *pool = m_pools.value(nodeId);
    return pool && pool->isConnected();
}

bool NodeLinks::send(const QString &nodeId, quint8 kind, const QByteArray &payload,
                     QStringView orderingKey)
{
    if (kind < FirstApplicationKind) {
        qCWarning(lcLinks) << "refusing to send reserved frame kind" << kind << "to" << nodeId;
        return false;
    }
    PeerLinks *pool = m_pools.value(nodeId);
    if (!pool) {
        ++m_unroutable;
        qCDebug(lcLinks) << "no links to node" << nodeId << "; frame of kind" << kind << "dropped";
        return false;
    }
    return pool->enqueue(kind, payload, orderingKey);
}

PeerCounters NodeLinks::counters(const QString &nodeId) const
{
    PeerCounters counters;
    if (const PeerLinks *pool = m_pools.value(nodeId)) {
        counters = pool->counters();
    }
    const auto incoming = m_server->incomingCounters();
    const auto in = incoming.constFind(nodeId);
    if (in != incoming.constEnd()) {
        counters.framesIn = in->frames;
        counters.bytesIn = in->bytes;
        counters.linksIn = in->links;
    }
    return counters;
}

QHash<QString, PeerCounters> NodeLinks::allCounters() const
{
    QHash<QString, PeerCounters> all;
    for (auto it = m_pools.cbegin(); it != m_pools.cend(); ++it) {
        all.insert(it.key(), counters(it.key()));
    }
    const auto incoming = m_server->incomingCounters();
    for (auto it = incoming.cbegin(); it != incoming.cend(); ++it) {
        if (!all.contains(it.key())) {
            all.insert(it.key(), counters(it.key()));
        }
    }
    return all;
}

LinkTotals NodeLinks::totals() const
{
    LinkTotals totals;
    totals.authFailures = m_server->authFailures() + m_retiredAuthFailures;
    totals.protocolErrors = m_server->protocolErrors() + m_retiredProtocolErrors;
    for (const PeerLinks *pool : std::as_const(m_pools)) {
        totals.authFailures += pool->authFailures();
        totals.protocolErrors += pool->protocolErrors();
    }
    totals.unroutableFrames = m_unroutable;
    totals.refusedConnections = m_server->refusedConnections();
    return totals;
}

} // namespace rt::cluster::links
