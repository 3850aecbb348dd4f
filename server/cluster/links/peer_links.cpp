#include "server/cluster/links/peer_links.h"

#include "server/cluster/links/logging.h"

#include <QRandomGenerator>
#include <QTimer>

#include <algorithm>
#include <utility>

namespace rt::cluster::links {

namespace {

// FNV-1a over the key's UTF-16 code units: only this process maps keys to links, so the hash
// needs to be stable within the process (qHash would do) but a fixed one keeps tests exact.
quint64 keyHash(QStringView key)
{
    quint64 hash = 0xcbf29ce484222325ULL;
    for (const QChar c : key) {
        for (const unsigned byte : { c.unicode() & 0xffU, unsigned(c.unicode()) >> 8 }) {
            hash ^= byte;
            hash *= 0x100000001b3ULL;
        }
    }
    return hash;
}

} // namespace

PeerLinks::PeerLinks(const LinkSettings &settings, PeerAddress address, QObject *parent)
    : QObject(parent),
      m_settings(settings),
      m_address(std::move(address)),
      m_links(static_cast<size_t>(std::max(1, settings.linksPerPeer)))
{
    for (size_t i = 0; i < m_links.size(); ++i) {
        auto *timer = new QTimer(this);
        timer->setSingleShot(true);
        connect(timer, &QTimer::timeout, this, [this, i] { dial(static_cast<int>(i)); });
        m_links[i].reconnectTimer = timer;
    }
}

PeerLinks::~PeerLinks()
{
    // The connections are children and die with us; they must not call back while we are
    // half destroyed.
    for (Link &link : m_links) {
        if (link.connection) {
            link.connection->disconnect(this);
        }
    }
}

void PeerLinks::start()
{
    if (m_started) {
        return;
    }
    m_started = true;
    for (size_t i = 0; i < m_links.size(); ++i) {
        dial(static_cast<int>(i));
    }
}

void PeerLinks::setAddress(const PeerAddress &address)
{
    if (address == m_address) {
        return;
    }
    m_address = address;
    if (!m_started) {
        return;
    }
    for (size_t i = 0; i < m_links.size(); ++i) {
        Link &link = m_links[i];
        if (link.connection) {
            // closed() runs onLinkClosed synchronously, which schedules a reconnect; dial now.
            link.connection->close(QStringLiteral("peer address changed"));
        }
        link.reconnectTimer->stop();
        link.failedAttempts = 0;
        dial(static_cast<int>(i));
    }
}

void PeerLinks::dial(int index)
{
    Link &link = m_links[static_cast<size_t>(index)];
    if (link.connection) {
        return;
    }
    auto *connection = new LinkConnection(m_settings, HandshakeRole::Dialer, this);
    link.connection = connection;
    link.ready = false;
    connect(connection, &LinkConnection::ready, this,
            [this, index, connection] { onLinkReady(index, connection); });
    connect(connection, &LinkConnection::closed, this,
            [this, index, connection](const QString &, CloseCause cause) {
                onLinkClosed(index, connection, cause);
            });
    connect(connection, &LinkConnection::bytesWritten, this, [this, index] { pump(index); });
    connection->dial(m_address.host, m_address.port, m_address.nodeId);
}

void PeerLinks::onLinkReady(int index, LinkConnection *connection)
{
    Link &link = m_links[static_cast<size_t>(index)];
    if (link.connection != connection) {
        return;
    }
    link.ready = true;
    link.failedAttempts = 0;
    ++m_connectsSucceeded;
    if (++m_linksUp == 1) {
        qCInfo(lcLinks) << "node" << m_address.nodeId << "reachable at" << m_address.host
                        << m_address.port;
        Q_EMIT connected(m_address.nodeId);
    }
    pump(index);
}

void PeerLinks::onLinkClosed(int index, LinkConnection *connection, CloseCause cause)
{
    Link &link = m_links[static_cast<size_t>(index)];
    if (link.connection != connection) {
        return;
    }
    link.connection = nullptr;
    connection->disconnect(this);
    connection->deleteLater();
    if (cause == CloseCause::AuthFailure) {
        ++m_authFailures;
    } else if (cause == CloseCause::ProtocolError) {
        ++m_protocolErrors;
    }
    if (!link.ready) {
        ++link.failedAttempts;
        ++m_connectsFailed;
    }
    const bool wasReady = link.ready;
    link.ready = false;
    scheduleReconnect(index);
    if (wasReady && --m_linksUp == 0) {
        qCInfo(lcLinks) << "node" << m_address.nodeId << "unreachable; reconnecting";
        Q_EMIT disconnected(m_address.nodeId);
    }
}

void PeerLinks::scheduleReconnect(int index)
{
    Link &link = m_links[static_cast<size_t>(index)];
    const qint64 initial = m_settings.reconnectInitialDelay.count();
    const qint64 maximum = m_settings.reconnectMaxDelay.count();
    qint64 delay = initial;
    for (int i = 0; i < link.failedAttempts && delay < maximum; ++i) {
        delay *= 2;
    }
    delay = std::min(delay, maximum);
    // Jitter in [delay/2, delay].
    const qint64 half = delay / 2;
    delay = half + QRandomGenerator::global()->bounded(half + 1);
    link.reconnectTimer->start(std::chrono::milliseconds(std::max<qint64>(1, delay)));
}

int PeerLinks::linkIndexFor(QStringView orderingKey) const
{
    return static_cast<int>(keyHash(orderingKey) % m_links.size());
}

bool PeerLinks::enqueue(quint8 kind, const QByteArray &payload, QStringView orderingKey)
{
    const qsizetype wireBytes = FrameHeaderBytes + payload.size();
    if (payload.size() > static_cast<qsizetype>(m_settings.maxFramePayloadBytes)) {
        qCWarning(lcLinks) << "frame of" << payload.size() << "bytes for node" << m_address.nodeId
                           << "exceeds the link limit of" << m_settings.maxFramePayloadBytes
                           << "bytes; dropped";
        drop(wireBytes);
        return false;
    }
    if (m_queuedFrames + 1 > m_settings.maxQueuedFramesPerPeer
        || m_queuedBytes + wireBytes > m_settings.maxQueuedBytesPerPeer) {
        drop(wireBytes);
        return false;
    }
    const int index = orderingKey.isEmpty()
            ? static_cast<int>(m_roundRobin++ % static_cast<quint32>(m_links.size()))
            : linkIndexFor(orderingKey);
    Link &link = m_links[static_cast<size_t>(index)];
    link.queue.push_back(Pending{ kind, payload });
    ++m_queuedFrames;
    m_queuedBytes += wireBytes;
    pump(index);
    return true;
}

void PeerLinks::pump(int index)
{
    Link &link = m_links[static_cast<size_t>(index)];
    while (link.ready && link.connection && !link.queue.empty()
           && link.connection->bytesToWrite() < m_settings.socketHighWaterBytes) {
        Pending frame = std::move(link.queue.front());
        link.queue.pop_front();
        const qsizetype wireBytes = FrameHeaderBytes + frame.payload.size();
        --m_queuedFrames;
        m_queuedBytes -= wireBytes;
        link.connection->sendFrame(frame.kind, frame.payload);
        ++link.framesOut;
        ++m_framesOut;
        m_bytesOut += static_cast<quint64>(wireBytes);
    }
}

void PeerLinks::drop(qsizetype wireBytes)
{
    ++m_framesDropped;
    m_bytesDropped += static_cast<quint64>(wireBytes);
    Q_EMIT frameDropped(m_address.nodeId, m_framesDropped);
}

PeerCounters PeerLinks::counters() const
{
    PeerCounters counters;
    counters.connected = m_linksUp > 0;
    counters.linksUp = m_linksUp;
    counters.framesOut = m_framesOut;
    counters.bytesOut = m_bytesOut;
    counters.framesDropped = m_framesDropped;
    counters.bytesDropped = m_bytesDropped;
    counters.connectsSucceeded = m_connectsSucceeded;
    counters.connectsFailed = m_connectsFailed;
    counters.queuedFrames = m_queuedFrames;
    counters.queuedBytes = m_queuedBytes;
    for (const Link &link : m_links) {
        counters.framesOutPerLink.append(link.framesOut);
    }
    return counters;
}

} // namespace rt::cluster::links
