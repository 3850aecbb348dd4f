#pragma once

#include "server/runtime/mailbox.h"
#include "server/transport/admission.h"

#include <QByteArray>
#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

namespace rt::tls {
class ReloadableServerContext;
} // namespace rt::tls

namespace rt::transport {

class TcpConnection;

// The I/O side of one worker: it adopts accepted sockets, owns their TcpConnections, and
// coalesces output. Everything a connection queues during one pass of the event loop is
// written by a single flush pass at the start of the next pass, one sendmsg() per connection,
// so a burst of broadcasts costs one syscall per subscriber, not one per message.
// Lives on its worker thread; adopt() is called there (post to it from the acceptor).
class IoLoop : public QObject
{
    Q_OBJECT
public:
    struct Limits
    {
        // The hard cap: a connection with more unwritten output is cut off at once.
        qsizetype maxQueuedBytesPerConnection = qsizetype{ 16 } * 1024 * 1024;
        // Above this a connection counts as slow: regulated streams (a tenant's changes) wait
        // for it, and it is cut off if it stays above for slowConsumerGraceMs.
        qsizetype highWaterBytesPerConnection = qsizetype{ 1 } * 1024 * 1024;
        int slowConsumerGraceMs = 10'000;
        // A TLS connection whose handshake has not finished by then is closed.
        int tlsHandshakeTimeoutMs = 10'000;
    };

    // Creates the protocol handler of a freshly adopted connection (HTTP at first).
    using HandlerFactory = std::function<void(TcpConnection &connection)>;

    IoLoop(HandlerFactory factory, Limits limits, QObject *parent = nullptr);
    ~IoLoop() override;

    // Makes every connection adopted from now on speak TLS with the source's current context
    // (null: plaintext). Call on the loop's thread, before the listener hands it sockets.
    void setTls(std::shared_ptr<tls::ReloadableServerContext> source) { m_tls = std::move(source); }
    bool usesTls() const { return m_tls != nullptr; }

    // Takes ownership of a connected, accepted socket descriptor (and its place at the gate).
    void adopt(qintptr descriptor, AdmissionTicket ticket = {});
    // Takes a socket the gate refused: writes `response` (a complete HTTP answer), lingers
    // briefly so that the client reads it, and closes; its request is never parsed.
    void refuse(qintptr descriptor, const QByteArray &response);
    // Closes every connection immediately.
    void closeAll();
    // Lets every connection say goodbye (WebSocket close 1012), writes what is queued as far
    // as the kernel takes it, then closes every connection.
    void shutdown();

    qsizetype connectionCount() const { return static_cast<qsizetype>(m_connections.size()); }
    const Limits &limits() const { return m_limits; }
    // Milliseconds on a monotonic clock shared by this loop's connections.
    qint64 nowMs() const { return m_clock.elapsed(); }

    // Posts work to this loop's thread from any thread, safely even while the worker stops.
    const runtime::MailboxPtr &mailbox() const { return m_mailbox; }

    // Scratch buffer for reads; valid only during a read callback on this thread.
    QByteArray &readBuffer() { return m_readBuffer; }
    // Scratch buffers of TLS connections on this thread: decrypted input (valid during a read
    // callback) and the gathering of small frames into records (during a flush).
    QByteArray &plaintextBuffer() { return m_plaintextBuffer; }
    QByteArray &tlsStaging() { return m_tlsStaging; }

    // Internal, for TcpConnection.
    void scheduleFlush(TcpConnection *connection);
    void cancelFlush(TcpConnection *connection);
    void forget(TcpConnection *connection);

Q_SIGNALS:
    void connectionCountChanged(qsizetype count);

protected:
    void customEvent(QEvent *event) override;

private:
    void flushPass();
    void sweep();
    TcpConnection *attach(int descriptor);

    HandlerFactory m_factory;
    runtime::MailboxPtr m_mailbox;
    Limits m_limits;
    QByteArray m_readBuffer;
    QByteArray m_plaintextBuffer;
    QByteArray m_tlsStaging;
    std::shared_ptr<tls::ReloadableServerContext> m_tls;
    QElapsedTimer m_clock;
    QTimer m_sweepTimer;
    std::vector<TcpConnection *> m_connections; // owned (QObject children); index in connection
    std::vector<TcpConnection *> m_dirty; // connections with queued output
    bool m_flushPosted = false;
};

} // namespace rt::transport
