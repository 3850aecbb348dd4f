#pragma once

#include "server/postgres/connection_settings.h"
#include "server/replication/copy_data.h"

#include <QByteArray>
#include <QElapsedTimer>
#include <QList>
#include <QObject>
#include <QString>

class QSocketNotifier;
class QTimer;

using PGconn = struct pg_conn; // as libpq-fe.h declares it, kept out of our headers

namespace rt::replication {

// One pgoutput message as the walsender sent it (XLogData): walStart/walEnd are the LSN the
// server attributed to it (for a commit 'C': the end of the commit record, the value to
// confirm once the transaction was handed on), payload the pgoutput bytes, first byte the tag.
struct WalMessage
{
    quint64 walStart = 0;
    quint64 walEnd = 0;
    QByteArray payload;
};

struct StreamOptions
{
    rt::postgres::ConnectionSettings settings; // replication is forced on
    // [a-z0-9_], 1..63 characters (PostgreSQL's rule for slot names).
    QByteArray slotName;
    // pgoutput publication_names; at least one, sent quoted (exact, case-sensitive names).
    QList<QByteArray> publications;
    // A temporary slot disappears with the connection: after a reconnect the changes made while
    // disconnected are lost. Persistent slots (the default) keep them for us.
    bool temporarySlot = false;
    // The caller holds the cluster's claim on this stream, so whoever else reads the slot is a
    // former owner that lost its claim: if the slot is active, its walsender is terminated
    // (pg_terminate_backend) before START_REPLICATION. Without this a former owner that was cut
    // off holds the slot until the database's wal_sender_timeout. Off where no claim exists:
    // two deployments sharing a slot by mistake must not take it from each other in turn.
    bool takeOverActiveSlot = false;
    int statusIntervalMs = 10000; // a standby status update at least this often
    int maxBatchMessages = 5000; // XLogData per messages() signal and per event-loop turn
};

// The logical replication stream of one database: a libpq walsender connection
// (replication=database) running START_REPLICATION with pgoutput, delivering the XLogData
// messages in batches and confirming positions back to the server.
//
// Lives on the thread that creates it and must be used only there; every libpq call is
// non-blocking (PQconnectPoll, PQsendQuery, PQgetCopyData async, PQflush) and driven by socket
// notifiers and timers of that thread's event loop, which therefore never waits on the database.
//
// Delivery guarantee: the server keeps the slot's confirmed position, which advances only
// through confirm() (and, when everything delivered has been confirmed, through the server's
// keepalives, so that an idle publication does not pin WAL). After a failure the stream
// reconnects (backoff 1 s, 2 s, 4 s ... 30 s) and resumes at the confirmed position: messages that
// were delivered but not confirmed arrive again, so consumers must tolerate repeats; nothing
// committed after the confirmed position is lost, also across a restart of our process when the
// slot is persistent.
//
// Slots connected to the signals may call stop(), confirm() or start() (also re-entrantly from
// within a signal); the object must not be deleted from within its own signal (use deleteLater).
class ReplicationStream : public QObject
{
    Q_OBJECT
public:
    enum class State {
        Stopped, // not started, stopped, or given up (failed with willRetry=false)
        Connecting, // connecting, or running the commands before START_REPLICATION
        Streaming, // in COPY BOTH
        Backoff, // waiting to reconnect after a failure
    };
    Q_ENUM(State)

    explicit ReplicationStream(QObject *parent = nullptr);
    ~ReplicationStream() override; // closes the connection, without signals

    // Connects and starts streaming (stopping first if running): IDENTIFY_SYSTEM, creates the slot
    // if it does not exist, START_REPLICATION from confirmedLsn() (0/0: the slot's own
    // confirmed_flush_lsn). The confirmed position is kept when the slot name stays the same.
    // Invalid options (slot name, publications) fail with willRetry=false, reported through
    // failed() from the event loop, never from inside start().
    void start(StreamOptions options);
    // Everything up to flushedLsn was handed on: tell the server promptly (at most one status
    // update per 50 ms) and resume from here after a reconnect. Lower values are ignored.
    void confirm(quint64 flushedLsn);
    // Closes the connection (a pending confirmation is sent first); no further signals.
    void stop();
    // Stops reading while the consumer is behind: no messages() until resume(). The server
    // then waits (its socket buffer fills) and the slot keeps the WAL; status updates go on,
    // so the walsender does not time out. Kept across a reconnect.
    void pause();
    void resume();
    bool isPaused() const { return m_paused; }

    quint64 confirmedLsn() const { return m_confirmedLsn; }
    // The highest WAL end the server has reported on any connection (keepalives included): how
    // far the server has decoded; minus confirmedLsn() it is the stream's lag in bytes.
    quint64 serverWalEnd() const { return m_serverWalEnd; }
    State state() const { return m_state; }

Q_SIGNALS:
    // START_REPLICATION was accepted (COPY BOTH): from now on every committed change is delivered.
    void streaming();
    // The XLogData read in one readiness pass, in server order (at most maxBatchMessages).
    void messages(QList<rt::replication::WalMessage> batch);
    // A connection or protocol failure. willRetry: a reconnect is scheduled (state Backoff);
    // otherwise the stream stopped.
    void failed(QString reason, bool willRetry);

private:
    enum class Phase {
        Idle,
        Connecting, // host name lookup, then PQconnectPoll
        IdentifySystem,
        CheckSlot,
        TakeOverSlot, // takeOverActiveSlot: ending the walsender that holds the slot
        CreateSlot,
        StartReplication,
        Copy,
    };

    void connectNow();
    void startConnect(const QByteArray &conninfo);
    void continueConnect();
    void watchSocket(bool read, bool write);
    void dropNotifiers();
    void onReadable();
    void onWritable();
    bool flushOutput();
    void sendCommand(Phase phase, const QByteArray &command);
    void processResults();
    void commandFinished();
    void enterCopy();
    void readCopyData();
    void handleKeepalive(const PrimaryKeepalive &keepalive);
    void scheduleStatusUpdate();
    bool sendStatusUpdate(bool replyRequested);
    void fail(const QString &reason, bool retry = true);
    void failLater(const QString &reason, bool retry = true);
    void teardown();
    QByteArray startReplicationCommand() const;

    StreamOptions m_options;
    State m_state = State::Stopped;
    Phase m_phase = Phase::Idle;
    PGconn *m_conn = nullptr;
    int m_socket = -1;
    QSocketNotifier *m_readNotifier = nullptr;
    QSocketNotifier *m_writeNotifier = nullptr;
    bool m_flushPending = false; // libpq holds unsent output (PQflush returned 1)
    bool m_paused = false; // pause(): CopyData is not read

    // Bumped by every teardown: code that emitted a signal checks it to see whether a slot
    // stopped or restarted the stream meanwhile (and then touches nothing of the old connection).
    quint64 m_generation = 0;
    int m_attempt = 0; // failures since start() or since the last stable stream
    int m_lookupId = -1; // running QHostInfo lookup
    QElapsedTimer m_streamingSince; // valid while in COPY BOTH

    // Result of the running command.
    QString m_commandError;
    QByteArray m_commandSqlState;
    int m_commandRows = 0;
    QByteArray m_slotHolderPid; // CheckSlot: the walsender that holds the slot, "0" if none

    quint64 m_confirmedLsn = 0; // resume position, reported as write/flush/apply
    quint64 m_sentLsn = 0; // the last position sent in a status update on this connection
    quint64 m_receivedLsn = 0; // highest XLogData position delivered on this connection
    quint64 m_serverWalEnd = 0; // highest walEnd of any keepalive or XLogData
    QElapsedTimer m_sinceStatus; // since the last status update (coalescing)

    QTimer *m_connectTimer = nullptr; // connect_timeout: PQconnectPoll does not enforce it
    QTimer *m_backoffTimer = nullptr;
    QTimer *m_statusTimer = nullptr; // periodic status update (statusIntervalMs)
    QTimer *m_coalesceTimer = nullptr; // a confirm() within 50 ms of the last update
    QTimer *m_continueTimer = nullptr; // zero timer: more buffered CopyData after a full batch
    QTimer *m_failTimer = nullptr; // zero timer: a failure reported from the event loop
    QString m_deferredFailure;
    bool m_deferredRetry = true;
};

} // namespace rt::replication
