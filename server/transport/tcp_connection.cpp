#include "server/transport/tcp_connection.h"

#include "server/transport/io_loop.h"
#include "server/transport/logging.h"

#include <QLoggingCategory>
#include <QSocketNotifier>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rt::transport {

namespace {

constexpr int MaxIovecs = 128; // per sendmsg(); more chunks go in the next call
constexpr int MaxReadsPerWakeup = 4; // fairness between connections of one worker
constexpr std::size_t IdleQueueCapacity = 16; // queue entries an idle connection keeps

} // namespace

TcpConnection::TcpConnection(IoLoop &loop, int descriptor)
    : QObject(&loop),
      m_loop(loop),
      m_descriptor(descriptor)
{
    m_lastReceivedMs = loop.nowMs();
    m_readNotifier = new QSocketNotifier(descriptor, QSocketNotifier::Read, this); // child
    connect(m_readNotifier, &QSocketNotifier::activated, this, &TcpConnection::onReadable);
}

TcpConnection::~TcpConnection()
{
    if (m_state != State::Closed) {
        // Destroyed with the loop: release the descriptor without calling back into handlers.
        m_state = State::Closed;
        ::close(m_descriptor);
        m_loop.forget(this);
    }
    m_admission = AdmissionTicket();
}

void TcpConnection::setHandler(std::unique_ptr<Handler> handler)
{
    m_handler = std::move(handler);
}

void TcpConnection::switchHandler(std::unique_ptr<Handler> handler)
{
    m_retiredHandler = std::move(m_handler);
    m_handler = std::move(handler);
}

QByteArray TcpConnection::peerAddress() const
{
    return peerAddressOf(m_descriptor);
}

QByteArray peerAddressOf(int descriptor)
{
    sockaddr_storage address{};
    socklen_t length = sizeof(address);
    if (::getpeername(descriptor, reinterpret_cast<sockaddr *>(&address), &length) != 0) {
        return {};
    }
    char text[INET6_ADDRSTRLEN] = {};
    if (address.ss_family == AF_INET) {
        const auto *v4 = reinterpret_cast<const sockaddr_in *>(&address);
        ::inet_ntop(AF_INET, &v4->sin_addr, text, sizeof(text));
    } else if (address.ss_family == AF_INET6) {
        const auto *v6 = reinterpret_cast<const sockaddr_in6 *>(&address);
        ::inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof(text));
    }
    return { text };
}

bool TcpConnection::send(const QByteArray &data, QByteArrayView header)
{
    if (m_state != State::Open || m_closeAfterFlush) {
        return false;
    }
    Q_ASSERT(header.size() <= 14);
    Chunk chunk{ data, {}, static_cast<quint8>(header.size()) };
    if (!header.isEmpty()) {
        std::memcpy(chunk.header.data(), header.data(), static_cast<std::size_t>(header.size()));
    }
    m_queuedBytes += data.size() + header.size();
    m_queue.push_back(std::move(chunk));
    if (m_queuedBytes > m_loop.limits().maxQueuedBytesPerConnection) {
        // Closing here could re-enter a fan-out loop; the flush pass does it.
        m_slowConsumer = true;
    }
    if (!m_flushScheduled) {
        m_flushScheduled = true;
        m_loop.scheduleFlush(this);
    }
    return true;
}

void TcpConnection::flush()
{
    m_flushScheduled = false;
    if (m_state == State::Closed) {
        return;
    }
    if (m_slowConsumer) {
        closeSlowConsumer();
        return;
    }
    while (m_queueHead < static_cast<qsizetype>(m_queue.size())) {
        iovec vectors[MaxIovecs];
        msghdr message{};
        message.msg_iov = vectors;
        message.msg_iovlen = static_cast<std::size_t>(gatherQueued(vectors));
        const ssize_t written = ::sendmsg(m_descriptor, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (written < 0) {
            if (errno == EINTR) {
                continue;
            }
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                setWriteNotification(true);
                return;
            }
            close();
            return;
        }
        consumeWritten(written);
        if (m_queueHead < static_cast<qsizetype>(m_queue.size()) && m_headOffset > 0) {
            // A short write: the kernel buffer is full. Wait until it drains.
            setWriteNotification(true);
            return;
        }
    }
    finishFlush();
}

void TcpConnection::closeSlowConsumer()
{
    qCWarning(lcTransport) << "closing slow consumer" << peerAddress() << "with" << m_queuedBytes
                           << "bytes queued";
    m_droppedFrames = static_cast<qsizetype>(m_queue.size()) - m_queueHead;
    close();
}

// Fills `vectors` (MaxIovecs entries) with the unwritten bytes of the queue, from the head on;
// returns how many entries it used.
int TcpConnection::gatherQueued(iovec *vectors)
{
    int count = 0;
    qsizetype offset = m_headOffset;
    for (qsizetype i = m_queueHead;
         i < static_cast<qsizetype>(m_queue.size()) && count < MaxIovecs - 1; ++i) {
        Chunk &chunk = m_queue[static_cast<std::size_t>(i)];
        if (offset < chunk.headerSize) {
            vectors[count++] = { chunk.header.data() + offset,
                                 static_cast<std::size_t>(chunk.headerSize - offset) };
            offset = 0;
        } else {
            offset -= chunk.headerSize;
        }
        if (offset < chunk.data.size()) {
            vectors[count++] = { const_cast<char *>(chunk.data.constData()) + offset,
                                 static_cast<std::size_t>(chunk.data.size() - offset) };
        }
        offset = 0;
    }
    return count;
}

// Consumes `written` bytes from the front of the queue.
void TcpConnection::consumeWritten(qsizetype written)
{
    qsizetype remaining = written;
    m_queuedBytes -= written;
    while (remaining > 0) {
        Chunk &chunk = m_queue[static_cast<std::size_t>(m_queueHead)];
        const qsizetype chunkLeft = chunk.headerSize + chunk.data.size() - m_headOffset;
        if (remaining >= chunkLeft) {
            remaining -= chunkLeft;
            chunk.data = QByteArray();
            ++m_queueHead;
            m_headOffset = 0;
        } else {
            m_headOffset += remaining;
            remaining = 0;
        }
    }
}

// Everything queued was written: empty the queue, and half-close if closeAfterFlush() asked so.
void TcpConnection::finishFlush()
{
    // The capacity stays for the next pass (a busy connection would otherwise reallocate on
    // every pass); tick() gives it back once the connection is idle.
    m_queue.clear();
    m_queueHead = 0;
    m_headOffset = 0;
    m_queuedBytes = 0;
    setWriteNotification(false);
    if (m_closeAfterFlush && m_state == State::Open) {
        m_state = State::Draining;
        ::shutdown(m_descriptor, SHUT_WR);
        m_drainDeadlineMs = m_loop.nowMs() + m_lingerMs;
    }
}

void TcpConnection::setWriteNotification(bool enabled)
{
    if (!enabled) {
        if (m_writeNotifier != nullptr && m_writeNotifier->isEnabled()) {
            m_writeNotifier->setEnabled(false);
        }
        return;
    }
    if (m_writeNotifier == nullptr) {
        m_writeNotifier = new QSocketNotifier(m_descriptor, QSocketNotifier::Write, this);
        connect(m_writeNotifier, &QSocketNotifier::activated, this, &TcpConnection::onWritable);
    }
    m_writeNotifier->setEnabled(true);
}

void TcpConnection::onWritable()
{
    flush();
}

void TcpConnection::onReadable()
{
    QByteArray &buffer = m_loop.readBuffer();
    for (int round = 0; round < MaxReadsPerWakeup && m_state != State::Closed; ++round) {
        const ssize_t received =
                ::recv(m_descriptor, buffer.data(), static_cast<std::size_t>(buffer.size()), 0);
        if (received > 0) {
            m_lastReceivedMs = m_loop.nowMs();
            if (m_state == State::Open && m_handler) {
                m_handler->onReceived(QByteArrayView(buffer.constData(), received));
                m_retiredHandler.reset();
            }
            if (received < buffer.size()) {
                return;
            }
            continue;
        }
        if (received == 0) {
            if (m_state == State::Open && m_handler) {
                m_handler->onPeerClosed();
                m_retiredHandler.reset();
            }
            close();
            return;
        }
        if (errno == EINTR) {
            continue;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            close();
        }
        return;
    }
}

void TcpConnection::closeAfterFlush(int lingerMs)
{
    if (m_state != State::Open || m_closeAfterFlush) {
        return;
    }
    m_closeAfterFlush = true;
    m_lingerMs = lingerMs;
    if (!m_flushScheduled) {
        m_flushScheduled = true;
        m_loop.scheduleFlush(this);
    }
}

void TcpConnection::tick(qint64 nowMs)
{
    if (m_state == State::Draining) {
        if (nowMs >= m_drainDeadlineMs) {
            close();
        }
        return;
    }
    if (m_queue.empty() && m_queue.capacity() > IdleQueueCapacity) {
        // An idle connection should not keep a burst's queue (10,000 of them would hold MBs).
        std::vector<Chunk>().swap(m_queue);
    }
    if (m_state == State::Open && m_handler) {
        m_handler->onTick(nowMs);
        m_retiredHandler.reset();
    }
}

void TcpConnection::serverShutdown()
{
    if (m_state == State::Open && m_handler) {
        m_handler->onServerShutdown();
        m_retiredHandler.reset();
    }
}

void TcpConnection::close()
{
    if (m_state == State::Closed) {
        return;
    }
    m_state = State::Closed;
    m_readNotifier->setEnabled(false);
    if (m_writeNotifier != nullptr) {
        m_writeNotifier->setEnabled(false);
    }
    ::close(m_descriptor);
    m_admission = AdmissionTicket(); // the place is free as soon as the descriptor is
    m_queue.clear();
    m_queuedBytes = 0;
    m_loop.forget(this);
    if (m_handler) {
        m_handler->onClosed();
    }
    deleteLater();
}

} // namespace rt::transport
