#include "server/postgres/connection.h"

#include "server/postgres/logging.h"
#include "server/postgres/sql_text.h"

#include <QHostAddress>
#include <QHostInfo>
#include <QPointer>
#include <QSocketNotifier>
#include <QVarLengthArray>

#include <libpq-fe.h>

#include <utility>

namespace rt::postgres {

namespace {

// libpq prints notices to stderr unless told otherwise; they belong in our log. An ErrorResponse
// that arrives while no query runs also comes here: it is the server saying why it is about to
// close the session (e.g. 57P01 after pg_terminate_backend), kept for the lost-connection error.
void receiveNotice(void *context, const PGresult *notice)
{
    const char *severity = PQresultErrorField(notice, PG_DIAG_SEVERITY_NONLOCALIZED);
    const char *primary = PQresultErrorField(notice, PG_DIAG_MESSAGE_PRIMARY);
    const QByteArray level = severity ? QByteArray(severity) : QByteArray("NOTICE");
    qCDebug(lcPostgres, "server %s: %s", level.constData(), primary ? primary : "");
    if (level == "FATAL" || level == "PANIC") {
        *static_cast<std::optional<PgError> *>(context) = PgError::fromResult(notice);
    }
}

// A host that libpq would look up with a blocking getaddrinfo(): not empty, not a Unix socket
// directory (starting with '/' or '@'), not an IP address literal, not a list of hosts.
bool needsLookup(const QString &host)
{
    if (host.isEmpty() || host.startsWith(QLatin1Char('/')) || host.startsWith(QLatin1Char('@'))
        || host.contains(QLatin1Char(','))) {
        return false;
    }
    return QHostAddress(host).isNull();
}

PgError clientError(QString message)
{
    PgError error;
    error.message = std::move(message);
    return error;
}

// A statement PostgreSQL cannot receive intact: libpq sends C strings, so a NUL byte would cut
// the text short; the protocol caps parameters at 65535.
std::optional<QString> invalidStatement(const Statement &statement, int index)
{
    if (statement.sql.contains('\0')) {
        return QStringLiteral("statement %1 contains a NUL byte").arg(index + 1);
    }
    if (statement.params.size() > 65535) {
        return QStringLiteral("statement %1 has more than 65535 parameters").arg(index + 1);
    }
    for (const std::optional<QByteArray> &param : statement.params) {
        if (param && param->contains('\0')) {
            return QStringLiteral("a parameter of statement %1 contains a NUL byte").arg(index + 1);
        }
    }
    return std::nullopt;
}

} // namespace

Connection::Connection(QObject *parent) : QObject(parent)
{
    m_connectTimer.setSingleShot(true);
    // A coarse timer may fire up to 5 % early; connect_timeout must not give up sooner.
    m_connectTimer.setTimerType(Qt::PreciseTimer);
    connect(&m_connectTimer, &QTimer::timeout, this, [this] {
        teardown(clientError(QStringLiteral("timeout expired after %1 s connecting to %2")
                                     .arg(m_settings.connectTimeoutSeconds)
                                     .arg(m_settings.describe())),
                 true);
    });
}

Connection::~Connection()
{
    // No callback runs from here: queued deliveries die with this object (see the class comment).
    if (m_lookupId >= 0) {
        QHostInfo::abortHostLookup(m_lookupId);
    }
    m_readNotifier.reset();
    m_writeNotifier.reset();
    if (m_conn) {
        PQfinish(m_conn);
    }
}

void Connection::open(const ConnectionSettings &settings)
{
    if (m_state == State::Connecting || m_state == State::Ready) {
        qCWarning(lcPostgres, "open() on a connection that is already open (%s), ignored",
                  qPrintable(m_settings.describe()));
        return;
    }
    m_settings = settings;
    m_state = State::Connecting;
    const quint64 generation = ++m_generation;
    if (settings.connectTimeoutSeconds > 0) {
        m_connectTimer.start(settings.connectTimeoutSeconds * 1000);
    }
    qCDebug(lcPostgres, "connecting to %s", qPrintable(settings.describe()));
    if (!needsLookup(settings.host)) {
        startConnect(settings.conninfo());
        return;
    }
    m_lookupId =
            QHostInfo::lookupHost(settings.host, this, [this, generation](const QHostInfo &info) {
                if (generation != m_generation) {
                    return; // closed or reopened meanwhile
                }
                m_lookupId = -1;
                if (info.error() != QHostInfo::NoError || info.addresses().isEmpty()) {
                    teardown(clientError(QStringLiteral("could not resolve host %1: %2")
                                                 .arg(m_settings.host, info.errorString())),
                             true);
                    return;
                }
                // libpq tries the addresses in order, like it would after its own lookup; host= stays the
                // name (one per address) for TLS verification and messages.
                QByteArrayList hosts;
                QByteArrayList addresses;
                for (const QHostAddress &address : info.addresses()) {
                    hosts.append(m_settings.host.toUtf8());
                    addresses.append(address.toString().toUtf8());
                }
                QByteArray conninfo = m_settings.conninfo();
                conninfo.append(" host=").append(quoteConninfoValue(hosts.join(',')));
                conninfo.append(" hostaddr=").append(quoteConninfoValue(addresses.join(',')));
                startConnect(conninfo);
            });
}

void Connection::startConnect(const QByteArray &conninfoIn)
{
    // GSSAPI negotiation could block in the Kerberos library; realtime never uses it.
    QByteArray conninfo = conninfoIn;
    conninfo.append(" gssencmode='disable'");
    m_conn = PQconnectStart(conninfo.constData());
    if (!m_conn) {
        teardown(clientError(QStringLiteral("out of memory starting a connection")), true);
        return;
    }
    m_serverFarewell.reset();
    PQsetNoticeReceiver(m_conn, receiveNotice, &m_serverFarewell);
    if (PQstatus(m_conn) == CONNECTION_BAD) {
        teardown(connectionError(), true);
        return;
    }
    // libpq: after PQconnectStart, act as if PQconnectPoll had returned PGRES_POLLING_WRITING.
    watchSocket(false, true);
}

void Connection::pollConnect()
{
    switch (PQconnectPoll(m_conn)) {
    case PGRES_POLLING_READING:
        watchSocket(true, false);
        return;
    case PGRES_POLLING_WRITING:
        watchSocket(false, true);
        return;
    case PGRES_POLLING_OK:
        connectSucceeded();
        return;
    default:
        teardown(connectionError(), true);
        return;
    }
}

void Connection::connectSucceeded()
{
    m_connectTimer.stop();
    if (PQsetnonblocking(m_conn, 1) != 0 || PQenterPipelineMode(m_conn) != 1) {
        teardown(connectionError(), true);
        return;
    }
    m_state = State::Ready;
    qCDebug(lcPostgres, "connected to %s (backend %d)", qPrintable(m_settings.describe()),
            PQbackendPID(m_conn));
    watchSocket(true, false);
    sendNext();
    if (m_state == State::Ready) {
        Q_EMIT ready();
    }
}

void Connection::watchSocket(bool read, bool write)
{
    const int socket = PQsocket(m_conn);
    if (socket < 0) {
        teardown(connectionError(), true);
        return;
    }
    // libpq may open a new socket between connect polls (next address, SSL refused, ...); a
    // notifier on the old descriptor would never fire again (or fire for the wrong socket).
    if (socket != m_socket || !m_readNotifier) {
        dropNotifiers();
        m_socket = socket;
        m_readNotifier = std::make_unique<QSocketNotifier>(socket, QSocketNotifier::Read);
        m_writeNotifier = std::make_unique<QSocketNotifier>(socket, QSocketNotifier::Write);
        connect(m_readNotifier.get(), &QSocketNotifier::activated, this, &Connection::onReadable);
        connect(m_writeNotifier.get(), &QSocketNotifier::activated, this, &Connection::onWritable);
    }
    m_readNotifier->setEnabled(read);
    m_writeNotifier->setEnabled(write);
}

void Connection::dropNotifiers()
{
    // Possibly called from one of these notifiers' own activated() signal: delete later.
    for (std::unique_ptr<QSocketNotifier> *notifier : { &m_readNotifier, &m_writeNotifier }) {
        if (*notifier) {
            (*notifier)->setEnabled(false);
            (*notifier)->disconnect(this);
            notifier->release()->deleteLater();
        }
    }
    m_socket = -1;
}

void Connection::onReadable()
{
    if (!m_conn) {
        return;
    }
    if (m_state == State::Connecting) {
        pollConnect();
        return;
    }
    // Also when idle: this is how a server-side close (pg_terminate_backend, shutdown) is seen.
    if (PQconsumeInput(m_conn) == 0) {
        teardown(connectionError(), true);
        return;
    }
    if (m_flushPending) {
        flush(); // libpq: after read-readiness during a pending flush, consume and flush again
        if (!m_conn) {
            return;
        }
    }
    if (!m_current) {
        // PQconsumeInput() only reads; PQisBusy() parses. Idle, that hands the server's
        // unsolicited messages (its reason before closing the session) to receiveNotice().
        PQisBusy(m_conn);
    }
    drainResults();
    if (m_conn && PQstatus(m_conn) == CONNECTION_BAD) {
        teardown(connectionError(), true);
    }
}

void Connection::onWritable()
{
    if (!m_conn) {
        return;
    }
    if (m_state == State::Connecting) {
        pollConnect();
        return;
    }
    flush();
}

void Connection::run(QList<Statement> segment, SegmentCallback done)
{
    Work work;
    work.kind = Work::Kind::Segment;
    work.statements = std::move(segment);
    work.segmentDone = std::move(done);
    for (int index = 0; index < work.statements.size(); ++index) {
        if (const auto problem = invalidStatement(work.statements.at(index), index)) {
            fail(work, clientError(*problem));
            return;
        }
    }
    if (work.statements.isEmpty()) {
        deliver([done = std::move(work.segmentDone)] { done(SegmentResult{}); });
        return;
    }
    enqueue(std::move(work));
}

void Connection::run(Statement statement, StatementCallback done)
{
    run(QList<Statement>{ std::move(statement) }, [done = std::move(done)](SegmentResult result) {
        if (result.results.isEmpty()) {
            done(clientError(QStringLiteral("no result")));
            return;
        }
        done(std::move(result.results.first()));
    });
}

void Connection::runScript(QByteArray sql, StatementCallback done)
{
    Work work;
    work.kind = Work::Kind::Script;
    work.script = std::move(sql);
    work.scriptDone = std::move(done);
    if (work.script.contains('\0')) {
        fail(work, clientError(QStringLiteral("script contains a NUL byte")));
        return;
    }
    enqueue(std::move(work));
}

int Connection::pendingSegments() const
{
    // Constant time: the pool asks for every job it places. An automatic ROLLBACK is only ever
    // queued at the front, one at a time, so it is the only item that may need discounting.
    int count = static_cast<int>(m_queue.size());
    if (!m_queue.empty() && m_queue.front().kind == Work::Kind::Rollback) {
        --count;
    }
    if (m_current && m_current->kind != Work::Kind::Rollback) {
        ++count;
    }
    return count;
}

int Connection::backendPid() const
{
    return m_conn && m_state == State::Ready ? PQbackendPID(m_conn) : 0;
}

void Connection::close()
{
    if (m_state == State::Closed && m_queue.empty() && !m_current) {
        return;
    }
    PgError error = clientError(QStringLiteral("connection closed"));
    teardown(error, false);
}

void Connection::enqueue(Work work)
{
    if (m_state == State::Closed) {
        PgError error = clientError(
                QStringLiteral("connection to %1 is closed").arg(m_settings.describe()));
        error.connectionLost = true;
        fail(work, error);
        return;
    }
    m_queue.push_back(std::move(work));
    sendNext();
}

void Connection::sendNext()
{
    if (m_state != State::Ready || m_current || m_queue.empty()) {
        return;
    }
    m_current = std::move(m_queue.front());
    m_queue.pop_front();
    m_results.clear();
    m_statementResult.reset();
    m_scriptResult.reset();
    const bool sent = m_current->kind == Work::Kind::Script ? sendScript(*m_current)
                                                            : sendSegment(*m_current);
    if (!sent) {
        teardown(connectionError(), true);
        return;
    }
    flush();
}

bool Connection::sendSegment(const Work &work)
{
    // Enough for the few statement texts a tenant's hot paths use; past it, plan every run.
    constexpr qsizetype MaxPreparedStatements = 256;
    m_commands.clear();
    m_commandIndex = 0;
    m_prepareError.reset();
    for (const Statement &statement : work.statements) {
        QVarLengthArray<const char *, 16> values;
        for (const std::optional<QByteArray> &param : statement.params) {
            values.append(param ? param->constData() : nullptr);
        }
        QByteArray name;
        if (statement.keepPlan) {
            name = m_preparedNames.value(statement.sql);
            if (name.isEmpty() && m_preparedNames.size() < MaxPreparedStatements) {
                // Known as prepared from now on (a second use in this segment must not prepare
                // again); forgotten in endCommand() if the preparation fails.
                name = "rt_plan_" + QByteArray::number(++m_nextPreparedId);
                m_preparedNames.insert(statement.sql, name);
                if (PQsendPrepare(m_conn, name.constData(), statement.sql.constData(),
                                  int(values.size()), nullptr)
                    != 1) {
                    return false;
                }
                m_commands.append(Command{ true, statement.sql });
            }
        }
        // Text-format parameters (lengths and formats are not needed) and text-format results.
        const int sent = name.isEmpty()
                ? PQsendQueryParams(m_conn, statement.sql.constData(), int(values.size()), nullptr,
                                    values.constData(), nullptr, nullptr, 0)
                : PQsendQueryPrepared(m_conn, name.constData(), int(values.size()),
                                      values.constData(), nullptr, nullptr, 0);
        if (sent != 1) {
            return false;
        }
        m_commands.append(Command{ false, statement.keepPlan ? statement.sql : QByteArray() });
    }
    return PQpipelineSync(m_conn) == 1;
}

bool Connection::sendScript(const Work &work)
{
    // The simple query protocol is not available in pipeline mode; we are between items, so the
    // pipeline is empty and leaving it cannot fail for a healthy connection.
    if (PQexitPipelineMode(m_conn) != 1) {
        return false;
    }
    return PQsendQuery(m_conn, work.script.constData()) == 1;
}

void Connection::flush()
{
    const int result = PQflush(m_conn);
    if (result < 0) {
        teardown(connectionError(), true);
        return;
    }
    if (result == 1 && !m_flushPending) {
        qCDebug(lcPostgres, "send buffer full, flushing when the socket is writable");
    }
    m_flushPending = result == 1;
    watchSocket(true, m_flushPending);
}

void Connection::drainResults()
{
    // Only PQgetResult() calls that cannot wait: PQisBusy() false means the next result (or the
    // NULL that ends a statement's results) is already parsed.
    int nulls = 0;
    while (m_conn && m_current && !PQisBusy(m_conn) && PQstatus(m_conn) != CONNECTION_BAD) {
        PGresult *result = PQgetResult(m_conn);
        if (result) {
            nulls = 0;
        } else if (++nulls > 1) {
            break; // nothing more parsed yet (pipeline idle between statements)
        }
        if (m_current->kind == Work::Kind::Script) {
            handleScriptResult(result);
        } else {
            handleSegmentResult(result);
        }
        PQclear(result);
    }
}

void Connection::endCommand()
{
    const Command command =
            m_commandIndex < m_commands.size() ? m_commands[m_commandIndex] : Command{};
    ++m_commandIndex;
    if (command.isPrepare) {
        if (m_statementResult && !m_statementResult->ok()) {
            m_preparedNames.remove(command.sql);
            // Skipped after an earlier statement's error: that error is the segment's story.
            if (m_statementResult->error().message != PgError::skipped().message) {
                m_prepareError = m_statementResult->error();
            }
        }
        m_statementResult.reset();
        return;
    }
    if (!m_statementResult) {
        return;
    }
    if (m_prepareError && !m_statementResult->ok()) {
        m_statementResult = *std::exchange(m_prepareError, std::nullopt);
    } else if (!command.sql.isEmpty() && !m_statementResult->ok()) {
        // The prepared statement vanished (DEALLOCATE) or its plan cannot be reused (the result
        // type changed): prepare it afresh next time.
        const QByteArray state = m_statementResult->error().sqlState;
        if (state == "26000" || state == "0A000") {
            m_preparedNames.remove(command.sql);
        }
    }
    m_results.append(std::move(*m_statementResult));
    m_statementResult.reset();
}

void Connection::handleSegmentResult(pg_result *result)
{
    if (!result) {
        endCommand(); // the end of one command's results
        return;
    }
    const bool haveError = m_statementResult && !m_statementResult->ok();
    switch (PQresultStatus(result)) {
    case PGRES_PIPELINE_SYNC:
        if (m_statementResult) {
            endCommand();
        }
        // One more PQgetResult() moves libpq from "pipeline idle" to idle when nothing else is
        // queued (nothing is: items are sent one at a time), so PQtransactionStatus() tells the
        // session's real state instead of "active".
        if (!PQisBusy(m_conn)) {
            PQclear(PQgetResult(m_conn));
        }
        finishCurrent();
        return;
    case PGRES_TUPLES_OK:
    case PGRES_COMMAND_OK:
    case PGRES_EMPTY_QUERY:
        if (!haveError) {
            m_statementResult = QueryResult::fromResult(result);
        }
        return;
    case PGRES_PIPELINE_ABORTED:
        if (!haveError) {
            m_statementResult = PgError::skipped();
        }
        return;
    case PGRES_NONFATAL_ERROR:
        return; // a notice
    case PGRES_FATAL_ERROR:
        noteFarewell(result);
        if (!haveError) {
            m_statementResult = PgError::fromResult(result);
        }
        return;
    default:
        failUnsupported(result);
        return;
    }
}

void Connection::failUnsupported(pg_result *result)
{
    // COPY and the like: the protocol would wait for data we never send; no way back.
    teardown(clientError(QStringLiteral("unsupported result status %1 (COPY is not supported)")
                                 .arg(QString::fromUtf8(PQresStatus(PQresultStatus(result))))),
             true);
}

void Connection::handleScriptResult(pg_result *result)
{
    if (!result) {
        finishCurrent();
        return;
    }
    const bool haveError = m_scriptResult && !m_scriptResult->ok();
    switch (PQresultStatus(result)) {
    case PGRES_TUPLES_OK:
    case PGRES_COMMAND_OK:
    case PGRES_EMPTY_QUERY:
        if (!haveError) {
            m_scriptResult = QueryResult::fromResult(result);
        }
        return;
    case PGRES_NONFATAL_ERROR:
        return;
    case PGRES_FATAL_ERROR:
        noteFarewell(result);
        if (!haveError) {
            m_scriptResult = PgError::fromResult(result);
        }
        return;
    default:
        failUnsupported(result);
        return;
    }
}

void Connection::noteFarewell(const pg_result *result)
{
    // Severity FATAL/PANIC: the server ends the session after this error (admin shutdown,
    // pg_terminate_backend, idle timeouts); it explains the connection loss that follows.
    const char *severity = PQresultErrorField(result, PG_DIAG_SEVERITY_NONLOCALIZED);
    if (severity && (qstrcmp(severity, "FATAL") == 0 || qstrcmp(severity, "PANIC") == 0)) {
        m_serverFarewell = PgError::fromResult(result);
    }
}

void Connection::finishCurrent()
{
    Work work = std::move(*m_current);
    m_current.reset();
    if (work.kind == Work::Kind::Script && PQenterPipelineMode(m_conn) != 1) {
        // Cannot happen on a healthy idle connection; the session is unusable, so the script's
        // outcome is reported as unknown like any in-flight work.
        m_queue.push_front(std::move(work));
        teardown(connectionError(), true);
        return;
    }
    // Every item starts outside a transaction: end one the item left open (or failed inside).
    const PGTransactionStatusType status = PQtransactionStatus(m_conn);
    if (status == PQTRANS_INTRANS || status == PQTRANS_INERROR) {
        qCDebug(lcPostgres, "rolling back a transaction left open by the previous item");
        Work rollback;
        rollback.kind = Work::Kind::Rollback;
        rollback.statements.append(Statement{ QByteArrayLiteral("ROLLBACK"), {} });
        m_queue.push_front(std::move(rollback));
    } else if (status != PQTRANS_IDLE) {
        qCWarning(lcPostgres, "unexpected transaction status %d after an item", int(status));
    }
    switch (work.kind) {
    case Work::Kind::Segment: {
        SegmentResult segment;
        segment.results = std::move(m_results);
        // Bounds: exactly one result per statement, whatever the server sent.
        while (segment.results.size() > work.statements.size()) {
            segment.results.removeLast();
        }
        while (segment.results.size() < work.statements.size()) {
            segment.results.append(PgError::skipped());
        }
        deliver([done = std::move(work.segmentDone), segment = std::move(segment)]() mutable {
            done(std::move(segment));
        });
        break;
    }
    case Work::Kind::Script: {
        StatementResult result =
                m_scriptResult ? std::move(*m_scriptResult) : StatementResult(QueryResult());
        deliver([done = std::move(work.scriptDone), result = std::move(result)]() mutable {
            done(std::move(result));
        });
        break;
    }
    case Work::Kind::Rollback:
        break;
    }
    m_results.clear();
    m_statementResult.reset();
    m_scriptResult.reset();
    sendNext();
}

void Connection::fail(Work &work, const PgError &error)
{
    switch (work.kind) {
    case Work::Kind::Segment: {
        SegmentResult segment;
        for (qsizetype index = 0; index < work.statements.size(); ++index) {
            segment.results.append(error);
        }
        deliver([done = std::move(work.segmentDone), segment = std::move(segment)]() mutable {
            done(std::move(segment));
        });
        return;
    }
    case Work::Kind::Script:
        deliver([done = std::move(work.scriptDone), error]() { done(error); });
        return;
    case Work::Kind::Rollback:
        return;
    }
}

void Connection::teardown(const PgError &cause, bool emitFailed)
{
    PgError error = cause;
    error.connectionLost = true;
    if (emitFailed && (m_state == State::Ready || m_current)) {
        qCWarning(lcPostgres, "connection to %s lost: %s", qPrintable(m_settings.describe()),
                  qPrintable(error.text()));
    } else {
        qCDebug(lcPostgres, "connection to %s ended: %s", qPrintable(m_settings.describe()),
                qPrintable(error.text()));
    }
    ++m_generation;
    m_connectTimer.stop();
    if (m_lookupId >= 0) {
        QHostInfo::abortHostLookup(m_lookupId);
        m_lookupId = -1;
    }
    dropNotifiers();
    if (m_conn) {
        PQfinish(m_conn);
        m_conn = nullptr;
    }
    m_state = State::Closed;
    m_flushPending = false;
    m_preparedNames.clear(); // they belonged to the session
    m_commands.clear();
    m_prepareError.reset();
    m_results.clear();
    m_statementResult.reset();
    m_scriptResult.reset();
    std::deque<Work> pending = std::move(m_queue);
    m_queue.clear();
    if (m_current) {
        pending.push_front(std::move(*m_current));
        m_current.reset();
    }
    for (Work &work : pending) {
        fail(work, error);
    }
    if (emitFailed) {
        deliver([this, error] { Q_EMIT failed(error); });
    }
}

PgError Connection::connectionError() const
{
    // libpq's messages span lines ("...\n\tThis probably means..."); logs want one line.
    QString message = m_conn ? QString::fromUtf8(PQerrorMessage(m_conn)).simplified() : QString();
    if (message.isEmpty()) {
        message = QStringLiteral("connection to %1 failed").arg(m_settings.describe());
    }
    PgError error = clientError(message);
    if (m_serverFarewell) {
        // The server's own reason is the better message; libpq's goes to the detail.
        error = *m_serverFarewell;
        error.detail = message;
    }
    error.connectionLost = true;
    return error;
}

void Connection::deliver(std::function<void()> call)
{
    QMetaObject::invokeMethod(this, std::move(call), Qt::QueuedConnection);
}

} // namespace rt::postgres
