#include "server/transport/io_loop.h"

#include "server/tls/tls_session.h"
#include "server/transport/logging.h"
#include "server/transport/tcp_connection.h"

#include <QCoreApplication>
#include <QEvent>
#include <QLoggingCategory>

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>

namespace rt::transport {

namespace {

constexpr qsizetype ReadBufferBytes = qsizetype{ 64 } * 1024;
const QEvent::Type FlushEventType = static_cast<QEvent::Type>(QEvent::registerEventType());

} // namespace

IoLoop::IoLoop(HandlerFactory factory, Limits limits, QObject *parent)
    : QObject(parent),
      m_factory(std::move(factory)),
      m_mailbox(std::make_shared<runtime::Mailbox>(this)),
      m_limits(limits)
{
    m_readBuffer.resize(ReadBufferBytes);
    m_tlsStaging.reserve(qsizetype{ 16 } * 1024);
    m_clock.start();
    m_sweepTimer.setInterval(1000);
    connect(&m_sweepTimer, &QTimer::timeout, this, &IoLoop::sweep);
    m_sweepTimer.start();
}

IoLoop::~IoLoop()
{
    m_mailbox->close();
    closeAll();
}

void IoLoop::adopt(qintptr descriptor, AdmissionTicket ticket)
{
    const int fd = static_cast<int>(descriptor);
    // Small frames must not wait for Nagle.
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    TcpConnection *connection = attach(fd);
    connection->setAdmission(std::move(ticket));
    m_factory(*connection);
    Q_EMIT connectionCountChanged(connectionCount());
}

// A new non-blocking connection of this loop (speaking TLS if the loop does).
TcpConnection *IoLoop::attach(int descriptor)
{
    // Accepted sockets must not block the loop.
    const int flags = ::fcntl(descriptor, F_GETFL, 0);
    ::fcntl(descriptor, F_SETFL, flags | O_NONBLOCK);
    auto *connection = new TcpConnection(*this, descriptor); // owned by this loop (QObject child)
    connection->m_loopIndex = static_cast<qsizetype>(m_connections.size());
    m_connections.push_back(connection);
    if (m_tls) {
        connection->enableTls(std::make_unique<tls::TlsSession>(m_tls->current()));
    }
    return connection;
}

namespace {

// A refused socket: whatever the client sends is read and dropped (so that closing does not
// reset the connection before it read the answer), never parsed.
class RefusedHandler final : public TcpConnection::Handler
{
public:
    void onReceived(QByteArrayView data) override { Q_UNUSED(data) }
};

constexpr int RefusalLingerMs = 500;

} // namespace

void IoLoop::refuse(qintptr descriptor, const QByteArray &response)
{
    // On a TLS port the answer waits for the handshake (bounded by its timeout).
    TcpConnection *connection = attach(static_cast<int>(descriptor));
    connection->setHandler(std::make_unique<RefusedHandler>());
    connection->send(response);
    connection->closeAfterFlush(RefusalLingerMs);
}

void IoLoop::closeAll()
{
    // close() calls forget(), which edits m_connections: iterate over a copy.
    const std::vector<TcpConnection *> connections = m_connections;
    for (TcpConnection *connection : connections) {
        connection->close();
    }
}

void IoLoop::shutdown()
{
    const std::vector<TcpConnection *> connections = m_connections;
    for (TcpConnection *connection : connections) {
        connection->serverShutdown();
    }
    flushPass();
    closeAll();
}

void IoLoop::forget(TcpConnection *connection)
{
    const qsizetype index = connection->m_loopIndex;
    if (index < 0) {
        return;
    }
    TcpConnection *last = m_connections.back();
    m_connections[static_cast<std::size_t>(index)] = last;
    last->m_loopIndex = index;
    m_connections.pop_back();
    connection->m_loopIndex = -1;
    cancelFlush(connection);
    Q_EMIT connectionCountChanged(connectionCount());
}

void IoLoop::scheduleFlush(TcpConnection *connection)
{
    m_dirty.push_back(connection);
    if (!m_flushPosted) {
        m_flushPosted = true;
        QCoreApplication::postEvent(this, new QEvent(FlushEventType)); // Qt takes it
    }
}

void IoLoop::cancelFlush(TcpConnection *connection)
{
    // Rare (a connection closing with output queued): linear removal is fine.
    std::erase(m_dirty, connection);
}

void IoLoop::customEvent(QEvent *event)
{
    if (event->type() == FlushEventType) {
        flushPass();
        return;
    }
    QObject::customEvent(event);
}

void IoLoop::flushPass()
{
    m_flushPosted = false;
    // Connections may schedule again while being flushed (a close frame after an error):
    // take the current list and let new entries form the next pass.
    std::vector<TcpConnection *> dirty;
    dirty.swap(m_dirty);
    for (TcpConnection *connection : dirty) {
        connection->flush();
    }
    if (dirty.capacity() > 4096 && m_dirty.empty()) {
        dirty.clear();
        dirty.shrink_to_fit();
    }
    if (m_dirty.empty()) {
        m_dirty.swap(dirty);
        m_dirty.clear();
    }
}

void IoLoop::sweep()
{
    const qint64 now = nowMs();
    const std::vector<TcpConnection *> connections = m_connections;
    for (TcpConnection *connection : connections) {
        connection->tick(now);
    }
}

} // namespace rt::transport
