#pragma once

#include "server/cluster/links/link_connection.h"
#include "server/cluster/links/link_settings.h"

#include <QObject>
#include <QStringView>

#include <deque>
#include <vector>

QT_BEGIN_NAMESPACE
class QTimer;
QT_END_NAMESPACE

namespace rt::cluster::links {

// This node's outgoing links to one peer: linksPerPeer connections, each with its own FIFO
// queue. A frame's ordering key picks the link (hash mod count), so frames with one key leave
// in the order they were sent. A link that breaks reconnects with exponential backoff and
// jitter; its queued frames wait for it (they are not moved to another link, which would
// reorder their key). Frames already handed to a socket that breaks are lost: delivery is at
// most once. Queued frames are bounded per peer in count and bytes; past the bounds new frames
// are dropped and counted.
// Lives on the cluster thread; owned by NodeLinks.
class PeerLinks : public QObject
{
    Q_OBJECT

public:
    PeerLinks(const LinkSettings &settings, PeerAddress address, QObject *parent = nullptr);
    ~PeerLinks() override;

    const PeerAddress &address() const { return m_address; }
    // A new host or port closes the links and dials the new address at once.
    void setAddress(const PeerAddress &address);
    // Dials all links (once; later reconnects are automatic).
    void start();

    // Queues one application frame (kind >= FirstApplicationKind). False when it was dropped:
    // the peer's queue is full, or the payload exceeds maxFramePayloadBytes. An empty ordering
    // key means "no ordering needed": such frames are spread round-robin over the links.
    bool enqueue(quint8 kind, const QByteArray &payload, QStringView orderingKey);

    bool isConnected() const { return m_linksUp > 0; }
    PeerCounters counters() const;
    quint64 authFailures() const { return m_authFailures; }
    quint64 protocolErrors() const { return m_protocolErrors; }
    // The link a key maps to (exposed for tests and diagnostics).
    int linkIndexFor(QStringView orderingKey) const;

Q_SIGNALS:
    void connected(const QString &nodeId); // the first link became ready
    void disconnected(const QString &nodeId); // the last ready link closed
    void frameDropped(const QString &nodeId, quint64 droppedTotal);

private:
    struct Pending
    {
        quint8 kind = 0;
        QByteArray payload;
    };
    struct Link
    {
        LinkConnection *connection = nullptr; // child; null while waiting to reconnect
        bool ready = false;
        QTimer *reconnectTimer = nullptr; // child
        int failedAttempts = 0;
        std::deque<Pending> queue;
        quint64 framesOut = 0;
    };

    void dial(int index);
    void onLinkReady(int index, LinkConnection *connection);
    void onLinkClosed(int index, LinkConnection *connection, CloseCause cause);
    void scheduleReconnect(int index);
    void pump(int index);
    void drop(qsizetype wireBytes);

    LinkSettings m_settings;
    PeerAddress m_address;
    std::vector<Link> m_links;
    bool m_started = false;
    int m_linksUp = 0;
    quint32 m_roundRobin = 0;
    qint64 m_queuedFrames = 0;
    qint64 m_queuedBytes = 0;
    quint64 m_framesOut = 0;
    quint64 m_bytesOut = 0;
    quint64 m_framesDropped = 0;
    quint64 m_bytesDropped = 0;
    quint64 m_connectsSucceeded = 0;
    quint64 m_connectsFailed = 0;
    quint64 m_authFailures = 0;
    quint64 m_protocolErrors = 0;
};

} // namespace rt::cluster::links
