#include "server/transport/tcp_connection.h"

#include "server/tls/tls_session.h"
#include "server/transport/io_loop.h"
#include "server/transport/logging.h"

#include <QLoggingCategory>
#include <QSocketNotifier>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

namespace rt::transport {

namespace {

constexpr int MaxIovecs = 128; // per sendmsg(); more chunks go in the next call
constexpr int MaxReadsPerWakeup = 4; // fairness between connections of one worker
constexpr std::size_t IdleQueueCapacity = 16; // queue entries an idle connection keeps
// TLS: queued frames are gathered into records of up to 16 KiB, and at most this much plaintext
// is encrypted ahead of what the kernel took (the ciphertext waiting in user space stays small).
constexpr qsizetype TlsRecordBytes = qsizetype{ 16 } * 1024;
constexpr qsizetype TlsBatchBytes = qsizetype{ 64 } * 1024;
constexpr int PlaintextRefusalLingerMs = 500;

// The answer to a plaintext HTTP request on a TLS port (before it closes).
const QByteArray &plaintextRefusal()
{
    static const QByteArray Response = [] {
        const QByteArrayView body = "This port speaks TLS only: connect with https:// or wss://\n";
        QByteArray out("HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain; charset=utf-8\r\n"
                       "content-length: ");
        out.append(QByteArray::number(body.size()));
        out.append("\r\nconnection: close\r\n\r\n");
        out.append(body);
        return out;
    }();
    return Response;
}

} // namespace

TcpConnection::TcpConnection(IoLoop &loop, int descriptor)
    : QObject(&loop),
      m_loop(loop),
      m_descriptor(descriptor)
{
    m_lastReceivedMs = loop.nowMs();
    m_openedMs = m_lastReceivedMs;
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
        releaseQueue();
    }
    m_admission = AdmissionTicket();
}

void TcpConnection::setHandler(std::unique_ptr<Handler> handler)
{
    m_handler = std::move(handler);
}

void TcpConnection::enableTls(std::unique_ptr<tls::TlsSession> session)
{
    m_tls = std::move(session);
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
    return enqueue(data, header, false);
}

bool TcpConnection::send(const QByteArray &data, const FlowLedgerPtr &ledger)
{
    if (!ledger) {
        return enqueue(data, {}, false);
    }
    if (m_state != State::Open || m_closeAfterFlush) {
        return false;
    }
    adoptLedger(ledger);
    return enqueue(data, {}, true);
}

bool TcpConnection::enqueue(const QByteArray &data, QByteArrayView header, bool regulated)
{
    if (m_state != State::Open || m_closeAfterFlush) {
        return false;
    }
    Q_ASSERT(header.size() <= 14);
    Chunk chunk{ data, {}, static_cast<quint8>(header.size()), regulated };
    if (!header.isEmpty()) {
        std::memcpy(chunk.header.data(), header.data(), static_cast<std::size_t>(header.size()));
    }
    const qsizetype bytes = data.size() + header.size();
    m_queuedBytes += bytes;
    if (regulated) {
        m_ledgerBytes += bytes;
        m_ledger->chargeSocket(bytes);
    }
    m_queue.push_back(std::move(chunk));
    if (m_queuedBytes > m_loop.limits().maxQueuedBytesPerConnection && !m_slowConsumer) {
        // Cutting off here could re-enter a fan-out loop; the flush pass does it.
        m_cutOffPending = true;
    }
    updateHighWater();
    requestFlush();
    return true;
}

void TcpConnection::requestFlush()
{
    if (!m_flushScheduled) {
        m_flushScheduled = true;
        m_loop.scheduleFlush(this);
    }
}

void TcpConnection::adoptLedger(const FlowLedgerPtr &ledger)
{
    if (ledger == m_ledger) {
        return;
    }
    // The stream was restarted (a new ledger): what is queued now counts for the new one.
    if (m_ledger) {
        m_ledger->settleSocket(m_ledgerBytes);
        if (m_aboveHighWater) {
            m_ledger->noteSlowSocket(false);
        }
    }
    m_ledger = ledger;
    m_ledger->chargeSocket(m_ledgerBytes);
    if (m_aboveHighWater) {
        m_ledger->noteSlowSocket(true);
    }
}

void TcpConnection::updateHighWater()
{
    const bool above =
            m_state != State::Closed && m_queuedBytes > m_loop.limits().highWaterBytesPerConnection;
    if (above == m_aboveHighWater) {
        return;
    }
    m_aboveHighWater = above;
    if (above) {
        m_aboveHighWaterSinceMs = m_loop.nowMs();
    }
    if (m_ledger) {
        m_ledger->noteSlowSocket(above);
    }
}

void TcpConnection::releaseQueue()
{
    discardFrom(m_queueHead);
    m_queue.clear();
    m_queueHead = 0;
    m_headOffset = 0;
    m_queuedBytes = 0;
    updateHighWater(); // the state is Closed: leaves the slow state
}

void TcpConnection::discardFrom(qsizetype from)
{
    Q_ASSERT(from >= m_queueHead);
    qsizetype settled = 0;
    for (auto i = static_cast<std::size_t>(from); i < m_queue.size(); ++i) {
        const Chunk &chunk = m_queue[i];
        const qsizetype bytes = chunk.headerSize + chunk.data.size();
        // Charges are settled whole (when a chunk is done); the queue counts what is unwritten.
        m_queuedBytes -= static_cast<qsizetype>(i) == m_queueHead ? bytes - m_headOffset : bytes;
        if (chunk.regulated) {
            settled += bytes;
        }
    }
    m_queue.resize(static_cast<std::size_t>(from));
    if (settled > 0) {
        m_ledgerBytes -= settled;
        m_ledger->settleSocket(settled);
    }
}

void TcpConnection::flush()
{
    m_flushScheduled = false;
    if (m_state == State::Closed) {
        return;
    }
    if (m_cutOffPending) {
        closeSlowConsumer();
        if (m_state == State::Closed) {
            return;
        }
    }
    if (m_tls) {
        flushTls();
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
    m_cutOffPending = false;
    m_slowConsumer = true;
    qCWarning(lcTransport) << "cutting off slow consumer" << peerAddress() << "with"
                           << m_queuedBytes << "bytes queued";
    // A partly written chunk stays: the peer must not see half a frame followed by another.
    const qsizetype kept = m_headOffset > 0 ? m_queueHead + 1 : m_queueHead;
    m_droppedFrames = static_cast<qsizetype>(m_queue.size()) - kept;
    discardFrom(kept);
    updateHighWater(); // the regulated stream no longer waits for this connection
    const bool handled = m_handler && m_handler->onSlowConsumer(m_droppedFrames);
    m_retiredHandler.reset();
    if (!handled) {
        close();
    }
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
    qsizetype settled = 0;
    m_queuedBytes -= written;
    while (remaining > 0) {
        Chunk &chunk = m_queue[static_cast<std::size_t>(m_queueHead)];
        const qsizetype chunkLeft = chunk.headerSize + chunk.data.size() - m_headOffset;
        if (remaining >= chunkLeft) {
            remaining -= chunkLeft;
            if (chunk.regulated) {
                settled += chunk.headerSize + chunk.data.size();
            }
            chunk.data = QByteArray();
            ++m_queueHead;
            m_headOffset = 0;
        } else {
            m_headOffset += remaining;
            remaining = 0;
        }
    }
    if (settled > 0) {
        m_ledgerBytes -= settled;
        m_ledger->settleSocket(settled);
    }
    updateHighWater();
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
    updateHighWater();
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
            const QByteArrayView data(buffer.constData(), received);
            if (m_tls) {
                receiveTls(data);
            } else {
                deliver(data);
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

void TcpConnection::deliver(QByteArrayView plaintext)
{
    if (m_state == State::Open && m_handler && !m_discardInput) {
        m_handler->onReceived(plaintext);
        m_retiredHandler.reset();
    }
}

void TcpConnection::closeAfterFlush(int lingerMs)
{
    if (m_state != State::Open || m_closeAfterFlush) {
        return;
    }
    m_closeAfterFlush = true;
    m_lingerMs = lingerMs;
    requestFlush();
}

void TcpConnection::tick(qint64 nowMs)
{
    if (m_state == State::Draining) {
        if (nowMs >= m_drainDeadlineMs) {
            close();
        }
        return;
    }
    if (m_tls && m_state == State::Open && m_tls->state() == tls::TlsSession::State::Handshaking
        && nowMs - m_openedMs >= m_loop.limits().tlsHandshakeTimeoutMs) {
        qCDebug(lcTransport) << "TLS handshake with" << peerAddress() << "timed out";
        close();
        return;
    }
    const IoLoop::Limits &limits = m_loop.limits();
    if (m_aboveHighWater && !m_slowConsumer && !m_cutOffPending
        && nowMs - m_aboveHighWaterSinceMs >= limits.slowConsumerGraceMs) {
        // It did not drain below the high-water mark for the whole grace period.
        m_cutOffPending = true;
        requestFlush();
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
    releaseQueue();
    m_loop.forget(this);
    if (m_handler) {
        m_handler->onClosed();
    }
    deleteLater();
}

// --- TLS ---

void TcpConnection::receiveTls(QByteArrayView ciphertext)
{
    if (m_state != State::Open || m_discardInput) {
        return;
    }
    if (!m_tlsSniffed) {
        m_tlsSniffed = true;
        // A TLS connection starts with a handshake record (0x16); an HTTP request with a method.
        if (std::isalpha(static_cast<unsigned char>(ciphertext.front())) != 0) {
            refusePlaintext();
            return;
        }
    }
    const bool wasEstablished = m_tls->isEstablished();
    QByteArray &plaintext = m_loop.plaintextBuffer();
    plaintext.resize(0);
    if (!m_tls->receive(ciphertext, plaintext)) {
        qCDebug(lcTransport).noquote() << "TLS with" << peerAddress() << m_tls->errorString();
        if (m_tls->hasPendingOutput()) {
            sendCiphertext(); // the alert, as far as the kernel takes it
        }
        close();
        return;
    }
    if (!plaintext.isEmpty()) {
        deliver(plaintext);
    }
    if (m_state != State::Open) {
        return;
    }
    if (m_tls->peerClosed()) {
        if (m_handler) {
            m_handler->onPeerClosed();
            m_retiredHandler.reset();
        }
        close();
        return;
    }
    if (m_tls->hasPendingOutput() || (!wasEstablished && m_tls->isEstablished())) {
        requestFlush(); // handshake messages, or frames queued while it ran
    }
}

void TcpConnection::refusePlaintext()
{
    qCDebug(lcTransport) << "plaintext request on the TLS port from" << peerAddress();
    m_tls.reset();
    m_discardInput = true;
    enqueue(plaintextRefusal(), {}, false);
    closeAfterFlush(PlaintextRefusalLingerMs);
}

void TcpConnection::flushTls()
{
    for (;;) {
        if (m_tls->hasPendingOutput() && !sendCiphertext()) {
            return; // waits for the socket to drain (or the connection closed)
        }
        const bool queued = m_queueHead < static_cast<qsizetype>(m_queue.size());
        if (queued && m_tls->isEstablished()) {
            if (!encryptQueued()) {
                close();
                return;
            }
            continue;
        }
        if (queued) {
            setWriteNotification(false); // the end of the handshake schedules the next pass
            return;
        }
        if (m_closeAfterFlush && m_tls->isEstablished()) {
            m_tls->close(); // close_notify goes out before the half-close
            continue;
        }
        break;
    }
    finishFlush();
}

// Encrypts up to TlsBatchBytes from the head of the queue, gathering small pieces (a frame
// header, a short payload) into full records, and marks them written.
bool TcpConnection::encryptQueued()
{
    iovec vectors[MaxIovecs];
    const int count = gatherQueued(vectors);
    QByteArray &staging = m_loop.tlsStaging();
    staging.resize(0);
    qsizetype taken = 0;
    for (int i = 0; i < count && taken < TlsBatchBytes; ++i) {
        QByteArrayView piece(static_cast<const char *>(vectors[i].iov_base),
                             static_cast<qsizetype>(vectors[i].iov_len));
        piece = piece.first(std::min(piece.size(), TlsBatchBytes - taken));
        taken += piece.size();
        if (staging.size() + piece.size() <= TlsRecordBytes) {
            staging.append(piece);
            continue;
        }
        if (!m_tls->encrypt(staging)) {
            return false;
        }
        staging.resize(0);
        if (piece.size() >= TlsRecordBytes) {
            if (!m_tls->encrypt(piece)) {
                return false;
            }
        } else {
            staging.append(piece);
        }
    }
    if (!m_tls->encrypt(staging)) {
        return false;
    }
    consumeWritten(taken);
    return true;
}

// Writes the session's ciphertext; true when all of it went, else it waits for the socket.
bool TcpConnection::sendCiphertext()
{
    for (;;) {
        const QByteArrayView output = m_tls->pendingOutput();
        const ssize_t written =
                ::send(m_descriptor, output.data(), static_cast<std::size_t>(output.size()),
                       MSG_NOSIGNAL | MSG_DONTWAIT);
        if (written >= 0) {
            m_tls->consumeOutput(written);
            if (!m_tls->hasPendingOutput()) {
                return true;
            }
            setWriteNotification(true); // a short write: the kernel buffer is full
            return false;
        }
        if (errno == EINTR) {
            continue;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            setWriteNotification(true);
            return false;
        }
        close();
        return false;
    }
}

} // namespace rt::transport
