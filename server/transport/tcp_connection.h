#pragma once

#include "server/transport/admission.h"
#include "shared/core/flow_ledger.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QObject>

#include <array>
#include <memory>
#include <vector>

class QSocketNotifier;
struct iovec;

namespace rt::tls {
class TlsSession;
} // namespace rt::tls

namespace rt::transport {

class IoLoop;

// One accepted TCP socket, driven by its descriptor and QSocketNotifiers on the worker thread
// that owns it (a child of that worker's IoLoop). It reads into the loop's scratch buffer and
// hands the bytes to its protocol Handler; output is queued as shared QByteArrays (plus a small
// inline header, e.g. a WebSocket frame header) and written by the loop's flush pass with
// sendmsg() over an iovec: no copies of broadcast payloads, one syscall per pass. With TLS
// enabled the handler still sees plaintext: reads are decrypted first, and the flush pass
// encrypts the queued frames (small ones gathered into full records) and sends the ciphertext.
class TcpConnection : public QObject
{
    Q_OBJECT
public:
    // The protocol spoken on the connection (HTTP, then perhaps WebSocket). Owned by the
    // connection; replaceable with switchHandler().
    class Handler
    {
    public:
        virtual ~Handler() = default;
        // Bytes arrived. The view is only valid during the call.
        virtual void onReceived(QByteArrayView data) = 0;
        // The peer closed its side (EOF). The connection closes right after this returns.
        virtual void onPeerClosed() { }
        // The connection is closed (by either side, an error, or close()). Called once; no more
        // output is accepted after it.
        virtual void onClosed() { }
        // Called about once a second with the loop's clock, for timeouts.
        virtual void onTick(qint64 nowMs) { Q_UNUSED(nowMs) }
        // The server is stopping: say goodbye in the protocol's terms (the loop then writes
        // what is queued and closes the connection).
        virtual void onServerShutdown() { }
        // The connection is being cut off as a slow consumer: `dropped` queued writes were
        // discarded (a partly written one is kept so that the byte stream stays well-formed).
        // The handler may queue a last word and close gracefully (returns true), else the
        // connection closes at once.
        virtual bool onSlowConsumer(qsizetype dropped)
        {
            Q_UNUSED(dropped)
            return false;
        }
    };

    TcpConnection(IoLoop &loop, int descriptor);
    ~TcpConnection() override;

    IoLoop &loop() const { return m_loop; }
    // Whether the connection was (or is being) cut off as a slow consumer (its send queue
    // outgrew the hard cap, or stayed above the high-water mark for the grace period), and how
    // many queued writes were discarded then (for the slow-consumer metrics).
    bool isSlowConsumer() const { return m_slowConsumer; }
    qsizetype droppedFrames() const { return m_droppedFrames; }
    bool isOpen() const { return m_state == State::Open; }

    void setHandler(std::unique_ptr<Handler> handler);
    // Speaks TLS from the first byte on (call before any is read). A first byte that is text
    // rather than a TLS record (a plaintext HTTP request) is answered with a plaintext 400 and
    // the connection closes; a handshake that has not finished within the loop's
    // tlsHandshakeTimeoutMs, or fails, closes it too.
    void enableTls(std::unique_ptr<tls::TlsSession> session);
    bool isTls() const { return m_tls != nullptr; }
    // Replaces the handler from inside one of its own callbacks; the old handler is destroyed
    // after that callback returns.
    void switchHandler(std::unique_ptr<Handler> handler);

    // Queues bytes: `header` (up to 14 bytes, copied) followed by `data` (shared, not copied).
    // Returns false when the connection is closed. If the queue grows past the loop's hard cap
    // the connection is cut off by the next flush pass (Handler::onSlowConsumer).
    bool send(const QByteArray &data, QByteArrayView header = {});
    // The same for a frame of a regulated stream: its bytes are charged to `ledger` until they
    // are written or discarded, and the ledger learns while this connection is above its
    // high-water mark. A connection is regulated by one ledger at a time (the latest).
    bool send(const QByteArray &data, const FlowLedgerPtr &ledger);
    qsizetype queuedBytes() const { return m_queuedBytes; }
    bool isAboveHighWater() const { return m_aboveHighWater; }

    // Writes what is queued, then half-closes and waits up to lingerMs for the peer's EOF before
    // closing, so that the peer reads the last bytes instead of a reset.
    void closeAfterFlush(int lingerMs = 2000);
    // Closes now; queued output is dropped.
    void close();

    qint64 lastReceivedMs() const { return m_lastReceivedMs; }
    QByteArray peerAddress() const;

    // The connection's place at the node's gate (given back when it closes).
    void setAdmission(AdmissionTicket ticket) { m_admission = std::move(ticket); }
    AdmissionTicket &admission() { return m_admission; }

    // Internal, for IoLoop.
    void serverShutdown();
    void flush();
    void tick(qint64 nowMs);
    qsizetype m_loopIndex = -1; // position in the IoLoop's connection list

private:
    enum class State { Open, Draining, Closed };
    struct Chunk
    {
        QByteArray data;
        std::array<char, 14> header{};
        quint8 headerSize = 0;
        bool regulated = false; // charged to m_ledger
    };

    void onReadable();
    void onWritable();
    void setWriteNotification(bool enabled);
    void requestFlush();
    // Steps of flush().
    void closeSlowConsumer();
    bool enqueue(const QByteArray &data, QByteArrayView header, bool regulated);
    void adoptLedger(const FlowLedgerPtr &ledger);
    // Drops the unwritten chunks [from, end) (from >= m_queueHead) and settles their charges.
    void discardFrom(qsizetype from);
    // Closing: drops the whole queue and leaves the slow state.
    void releaseQueue();
    // After the queue grew or shrank: enters or leaves the slow state.
    void updateHighWater();
    int gatherQueued(iovec *vectors);
    void consumeWritten(qsizetype written);
    void finishFlush();
    void deliver(QByteArrayView plaintext);
    // TLS steps: decrypting what was read, encrypting the queue, writing the ciphertext.
    void receiveTls(QByteArrayView ciphertext);
    void refusePlaintext();
    void flushTls();
    bool encryptQueued();
    bool sendCiphertext();

    IoLoop &m_loop;
    int m_descriptor;
    State m_state = State::Open;
    QSocketNotifier *m_readNotifier = nullptr; // child
    QSocketNotifier *m_writeNotifier = nullptr; // child, created on the first EAGAIN
    std::unique_ptr<Handler> m_handler;
    std::unique_ptr<Handler> m_retiredHandler; // replaced during a callback; destroyed after it
    std::vector<Chunk> m_queue;
    qsizetype m_queueHead = 0; // first chunk not yet fully written
    qsizetype m_headOffset = 0; // bytes of the head chunk already written (header first)
    qsizetype m_queuedBytes = 0;
    qint64 m_lastReceivedMs = 0;
    qint64 m_drainDeadlineMs = 0;
    int m_lingerMs = 0;
    bool m_flushScheduled = false;
    bool m_slowConsumer = false;
    qsizetype m_droppedFrames = 0; // chunks discarded when closed as a slow consumer
    bool m_closeAfterFlush = false;
    bool m_cutOffPending = false; // marked slow; the next flush pass cuts it off
    bool m_aboveHighWater = false;
    qint64 m_aboveHighWaterSinceMs = 0;
    FlowLedgerPtr m_ledger; // the regulated stream whose frames are queued here
    qsizetype m_ledgerBytes = 0; // of the queue, charged to m_ledger
    AdmissionTicket m_admission;
    std::unique_ptr<tls::TlsSession> m_tls; // null: plaintext
    qint64 m_openedMs = 0;
    bool m_tlsSniffed = false; // the first bytes were checked for a TLS record
    bool m_discardInput = false; // refused: whatever arrives is read and dropped
};

// The remote address of a connected socket as text ("127.0.0.1", "::1"); empty if unknown.
QByteArray peerAddressOf(int descriptor);

} // namespace rt::transport
