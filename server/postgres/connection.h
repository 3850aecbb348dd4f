#pragma once

#include "server/postgres/connection_settings.h"
#include "server/postgres/query_result.h"

#include <QHash>
#include <QObject>
#include <QTimer>

#include <deque>
#include <memory>
#include <optional>

struct pg_conn; // libpq's PGconn
class QSocketNotifier;

namespace rt::postgres {

// One asynchronous libpq connection to one database. Nothing here blocks the event loop: the
// connection is set up with PQconnectStart/PQconnectPoll, host names are resolved with QHostInfo
// beforehand (libpq would call getaddrinfo() synchronously), and statements are sent in
// non-blocking pipeline mode, driven by QSocketNotifiers on libpq's socket.
//
// Work is queued and runs strictly one item after another:
// - a segment (run()): its statements are sent together (one round trip) and run in ONE implicit
//   transaction ending at a Sync; an error skips the rest of the segment and rolls the implicit
//   transaction back (results: PgError::skipped() for the skipped statements);
// - a script (runScript()): several statements as one simple-query message (migrations,
//   function bodies in $$ quotes); pipeline mode is left while it runs.
// After each item, if the session is still inside a transaction (an explicit BEGIN that was not
// ended, or a failure inside one), the connection sends ROLLBACK itself before the next item, so
// every item starts outside a transaction. Settings made with set_config(..., true) / SET LOCAL
// end with their transaction; plain SET persists on the session (avoid it).
//
// Callbacks are always invoked from the event loop (queued on this object), never from inside
// run()/close(), so callers are never re-entered. Destroying the Connection drops every callback
// that has not run yet (none is called from the destructor); close() first fails them.
//
// Not for walsender connections (replication=database): those accept only the simple query
// protocol. Lives on the thread that created it; use it only there.
class Connection : public QObject
{
    Q_OBJECT
public:
    enum class State {
        Idle, // not opened yet
        Connecting,
        Ready,
        Closed, // after close(), a failed connect or a lost connection; open() may be called again
    };
    Q_ENUM(State)

    explicit Connection(QObject *parent = nullptr);
    ~Connection() override;

    // Starts connecting; emits ready() or failed(). Work queued before that waits for ready().
    // connectTimeoutSeconds is enforced here (libpq ignores it for asynchronous connects).
    void open(const ConnectionSettings &settings);
    State state() const { return m_state; }
    // The server process id of the session (pg_backend_pid()), 0 when not Ready.
    int backendPid() const;

    // Queues a segment (see the class comment). The callback gets one result per statement.
    void run(QList<Statement> segment, SegmentCallback done);
    // A segment of one statement.
    void run(Statement statement, StatementCallback done);
    // Queues a script of several statements (simple query protocol, no parameters; one implicit
    // transaction unless the script controls transactions itself). The callback gets the last
    // statement's result, or the first error.
    void runScript(QByteArray sql, StatementCallback done);

    // Work queued or in flight (segments and scripts; the automatic ROLLBACKs do not count).
    int pendingSegments() const;

    // Closes the connection now (PQfinish). Queued and in-flight work fails with
    // PgError{connectionLost = true}; failed() is not emitted.
    void close();

Q_SIGNALS:
    void ready();
    // The connection could not be set up, or was lost later. Callbacks of pending work are
    // called (with connectionLost errors) before this signal.
    void failed(rt::postgres::PgError error);

private:
    struct Work
    {
        enum class Kind { Segment, Script, Rollback };
        Kind kind = Kind::Segment;
        QList<Statement> statements;
        QByteArray script;
        SegmentCallback segmentDone;
        StatementCallback scriptDone;
    };
    // What one command of the pipeline sent for the current segment answers: a statement of the
    // segment, or the preparation of a kept-plan statement (not reported to the caller).
    struct Command
    {
        bool isPrepare = false;
        QByteArray sql; // of a prepared statement (to forget the name if preparing fails)
    };

    void startConnect(const QByteArray &conninfo);
    void pollConnect();
    void connectSucceeded();
    void watchSocket(bool read, bool write);
    void dropNotifiers();
    void onReadable();
    void onWritable();
    void enqueue(Work work);
    void sendNext();
    bool sendSegment(const Work &work);
    bool sendScript(const Work &work);
    void flush();
    void drainResults();
    void handleSegmentResult(pg_result *result);
    void endCommand();
    void handleScriptResult(pg_result *result);
    void failUnsupported(pg_result *result);
    void noteFarewell(const pg_result *result);
    void finishCurrent();
    void fail(Work &work, const PgError &error);
    void teardown(const PgError &cause, bool emitFailed);
    PgError connectionError() const;
    void deliver(std::function<void()> call);

    pg_conn *m_conn = nullptr;
    State m_state = State::Idle;
    std::unique_ptr<QSocketNotifier> m_readNotifier;
    std::unique_ptr<QSocketNotifier> m_writeNotifier;
    qintptr m_socket = -1;
    QTimer m_connectTimer;
    int m_lookupId = -1;
    quint64 m_generation = 0; // bumped by every open()/close(): stale lookups are ignored
    ConnectionSettings m_settings;

    std::deque<Work> m_queue;
    std::optional<Work> m_current;
    bool m_flushPending = false;
    // Results of m_current as they arrive.
    QList<StatementResult> m_results;
    std::optional<StatementResult> m_statementResult; // the statement being received
    std::optional<StatementResult> m_scriptResult;
    QList<Command> m_commands; // of m_current, in the order they were sent
    qsizetype m_commandIndex = 0; // the command whose results are arriving
    // The error of a failed preparation: the statement it prepared reports it (its own result
    // is only "skipped", since the pipeline aborted).
    std::optional<PgError> m_prepareError;
    // Kept-plan statements prepared on this session: SQL text -> statement name. Cleared with
    // the session; bounded (beyond the bound, statements run unprepared).
    QHash<QByteArray, QByteArray> m_preparedNames;
    quint64 m_nextPreparedId = 0;
    // An error the server sent outside any query (its reason for closing the session).
    std::optional<PgError> m_serverFarewell;
};

} // namespace rt::postgres
