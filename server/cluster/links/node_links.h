#pragma once

#include "server/cluster/links/link_settings.h"
#include "shared/core/result.h"

#include <QHash>
#include <QHostAddress>
#include <QObject>
#include <QStringList>
#include <QStringView>

namespace rt::cluster::links {

class LinkServer;
class PeerLinks;

// This node's framed, authenticated TCP links to the other nodes of the cluster: the one
// object the rest of the cluster code talks to. It listens for peers (LinkServer) and keeps
// linksPerPeer outgoing links to every peer named by setPeers (PeerLinks), reconnecting with
// backoff. send() never blocks and never grows memory without bound: frames wait in a bounded
// per-peer queue while a peer is unreachable and are dropped (and counted) beyond it. Frames
// with the same ordering key (e.g. tenant + topic) reach the peer in the order sent; delivery
// is at most once (frames in flight on a link that breaks are lost).
// Lives on the cluster thread: create it there and call it only from there.
class NodeLinks : public QObject
{
    Q_OBJECT

public:
    // `settings` must pass validateLinkSettings() (the application checks at start-up).
    explicit NodeLinks(const LinkSettings &settings, QObject *parent = nullptr);
    ~NodeLinks() override;

    // Listens for peers' links (CLUSTER_PORT); returns the bound port (port 0 picks one).
    Result<quint16> listen(const QHostAddress &address, quint16 port);
    quint16 listeningPort() const;

    // The peers to keep links to (typically the live members other than this node; this
    // node's own entry is ignored). Pools open for new peers, close for departed ones (their
    // queued frames are discarded) and redial when a peer's address changes.
    void setPeers(const QList<PeerAddress> &peers);
    QStringList peers() const;
    QStringList connectedPeers() const;
    bool isConnected(const QString &nodeId) const;

    // Queues an application frame (kind >= FirstApplicationKind) for `nodeId`. Returns false
    // when it was dropped: unknown peer, reserved kind, oversized payload or full queue.
    bool send(const QString &nodeId, quint8 kind, const QByteArray &payload,
              QStringView orderingKey = {});

    // Figures for the admin view: every peer with links either way.
    PeerCounters counters(const QString &nodeId) const;
    QHash<QString, PeerCounters> allCounters() const;
    LinkTotals totals() const;
    const LinkSettings &settings() const { return m_settings; }

Q_SIGNALS:
    // An application frame from an authenticated peer.
    void frameReceived(const QString &fromNodeId, quint8 kind, const QByteArray &payload);
    // The first outgoing link to a peer became ready / the last one closed (or the peer was
    // removed while connected).
    void peerConnected(const QString &nodeId);
    void peerDisconnected(const QString &nodeId);
    // A frame for `nodeId` was dropped; `droppedTotal` counts all drops for that peer.
    void framesDropped(const QString &nodeId, quint64 droppedTotal);

private:
    PeerLinks *createPool(const PeerAddress &address);

    LinkSettings m_settings;
    LinkServer *m_server = nullptr; // child
    QHash<QString, PeerLinks *> m_pools; // children
    quint64 m_unroutable = 0;
    quint64 m_retiredAuthFailures = 0; // from pools already removed
    quint64 m_retiredProtocolErrors = 0;
};

} // namespace rt::cluster::links
