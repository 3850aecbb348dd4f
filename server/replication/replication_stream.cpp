#include "server/replication/replication_stream.h"

#include "server/postgres/sql_text.h"
#include "server/replication/logging.h"

#include <QHostAddress>
#include <QHostInfo>
#include <QSocketNotifier>
#include <QTimer>

#include <libpq-fe.h>

#include <algorithm>

namespace rt::replication {

namespace {

constexpr int CoalesceMs = 50;
constexpr int FirstBackoffMs = 1000;
constexpr int MaxBackoffMs = 30000;
// A stream that failed after streaming at least this long starts its backoff afresh; one that
// fails sooner (e.g. a missing publication, reported at the first change) keeps backing off.
constexpr qint64 StableStreamingMs = 30000;
// SQLSTATE duplicate_object: CREATE_REPLICATION_SLOT of a slot that exists (created between our
// check and the command, e.g. by another node that lost the ownership race).
const QByteArray DuplicateObjectState = QByteArrayLiteral("42710");

// PostgreSQL's rule for slot names (ReplicationSlotValidateName): it also makes the name safe to
// place unquoted in replication commands and inside a SQL string literal.
bool validSlotName(const QByteArray &name)
{
    if (name.isEmpty() || name.size() > 63) {
        return false;
    }
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    });
}

// publication_names is a list of identifiers inside a string literal: each name double-quoted
// (inner " doubled) so case and commas survive, then the whole list as '...' (inner ' doubled;
// the replication grammar's literals take no backslash escapes).
QByteArray publicationNamesLiteral(const QList<QByteArray> &publications)
{
    QByteArray list;
    for (const QByteArray &name : publications) {
        if (!list.isEmpty()) {
            list.append(',');
        }
        QByteArray quoted = name;
        quoted.replace('"', QByteArrayLiteral("\"\""));
        list.append('"').append(quoted).append('"');
    }
    list.replace('\'', QByteArrayLiteral("''"));
    return '\'' + list + '\'';
}

QString trimmedMessage(const char *message)
{
    const QString text = QString::fromUtf8(message).trimmed();
    return text.isEmpty() ? QStringLiteral("unknown libpq error") : text;
}

// A host that libpq would look up with a blocking getaddrinfo(): not empty, not a Unix socket
// directory ('/' or '@'), not an IP address literal, not a list of hosts.
bool needsLookup(const QString &host)
{
    if (host.isEmpty() || host.startsWith(QLatin1Char('/')) || host.startsWith(QLatin1Char('@'))
        || host.contains(QLatin1Char(','))) {
        return false;
    }
    return QHostAddress(host).isNull();
}

// The conninfo of a walsender connection. TCP keepalives: a tenant database that vanishes
// without a FIN (network partition) is noticed within about a minute even on an idle stream.
// GSSAPI encryption is off: its negotiation could block in the Kerberos library.
QByteArray conninfoFor(rt::postgres::ConnectionSettings settings)
{
    settings.replication = true;
    return settings.conninfo()
            + " keepalives='1' keepalives_idle='30' keepalives_interval='10' keepalives_count='3'"
              " gssencmode='disable'";
}

} // namespace

ReplicationStream::ReplicationStream(QObject *parent)
    : QObject(parent),
      m_connectTimer(new QTimer(this)),
      m_backoffTimer(new QTimer(this)),
      m_statusTimer(new QTimer(this)),
      m_coalesceTimer(new QTimer(this)),
      m_continueTimer(new QTimer(this)),
      m_failTimer(new QTimer(this))
{
    m_connectTimer->setSingleShot(true);
    // A coarse timer may fire up to 5 % early; a connect timeout the operator configured in
    // seconds must not give up before that many seconds have passed.
    m_connectTimer->setTimerType(Qt::PreciseTimer);
    m_backoffTimer->setSingleShot(true);
    m_coalesceTimer->setSingleShot(true);
    m_continueTimer->setSingleShot(true);
    m_continueTimer->setInterval(0);
    m_failTimer->setSingleShot(true);
    m_failTimer->setInterval(0);
    connect(m_connectTimer, &QTimer::timeout, this, [this] {
        fail(QStringLiteral("could not connect to %1 within %2 s")
                     .arg(m_options.settings.describe())
                     .arg(m_options.settings.connectTimeoutSeconds));
    });
    connect(m_backoffTimer, &QTimer::timeout, this, &ReplicationStream::connectNow);
    connect(m_statusTimer, &QTimer::timeout, this, [this] { sendStatusUpdate(false); });
    connect(m_coalesceTimer, &QTimer::timeout, this, [this] { sendStatusUpdate(false); });
    connect(m_continueTimer, &QTimer::timeout, this, &ReplicationStream::readCopyData);
    connect(m_failTimer, &QTimer::timeout, this,
            [this] { fail(m_deferredFailure, m_deferredRetry); });
}

ReplicationStream::~ReplicationStream()
{
    stop();
}

void ReplicationStream::start(StreamOptions options)
{
    const bool sameSlot = options.slotName == m_options.slotName
            && options.settings.host == m_options.settings.host
            && options.settings.port == m_options.settings.port
            && options.settings.database == m_options.settings.database;
    stop();
    if (!sameSlot) {
        m_confirmedLsn = 0;
    }
    m_options = std::move(options);
    m_attempt = 0;

    QString invalid;
    if (!validSlotName(m_options.slotName)) {
        invalid = QStringLiteral("invalid replication slot name \"%1\" (use 1..63 of a-z, 0-9, _)")
                          .arg(QString::fromUtf8(m_options.slotName));
    } else if (m_options.publications.isEmpty()) {
        invalid = QStringLiteral("no publication to stream");
    } else if (std::any_of(m_options.publications.cbegin(), m_options.publications.cend(),
                           [](const QByteArray &name) {
                               return name.isEmpty() || name.contains('\0');
                           })) {
        invalid = QStringLiteral("invalid publication name (empty or containing NUL)");
    }
    if (!invalid.isEmpty()) {
        // From the event loop, as promised: the caller may connect to failed() after start().
        failLater(invalid, false);
        return;
    }
    m_options.statusIntervalMs = std::max(m_options.statusIntervalMs, 100);
    m_options.maxBatchMessages = std::max(m_options.maxBatchMessages, 1);
    connectNow();
}

void ReplicationStream::confirm(quint64 flushedLsn)
{
    if (flushedLsn <= m_confirmedLsn) {
        return;
    }
    m_confirmedLsn = flushedLsn;
    if (m_phase == Phase::Copy) {
        scheduleStatusUpdate();
    }
}

void ReplicationStream::stop()
{
    if (m_phase == Phase::Copy && m_confirmedLsn > m_sentLsn) {
        // Best effort: a confirmation still waiting for its 50 ms slot. The walsender reads it
        // before the Terminate message that PQfinish sends.
        sendStatusUpdate(false);
    }
    teardown();
    m_backoffTimer->stop();
    m_state = State::Stopped;
}

void ReplicationStream::connectNow()
{
    teardown();
    m_state = State::Connecting;
    m_phase = Phase::Connecting;
    qCDebug(lcReplication) << "connecting to" << m_options.settings.describe() << "slot"
                           << m_options.slotName << "from" << formatLsn(m_confirmedLsn);
    if (m_options.settings.connectTimeoutSeconds > 0) {
        m_connectTimer->start(m_options.settings.connectTimeoutSeconds * 1000);
    }
    QByteArray conninfo = conninfoFor(m_options.settings);
    if (!needsLookup(m_options.settings.host)) {
        startConnect(conninfo);
        return;
    }
    // libpq would resolve the name with a blocking getaddrinfo() inside PQconnectPoll.
    const quint64 generation = m_generation;
    m_lookupId = QHostInfo::lookupHost(
            m_options.settings.host, this,
            [this, generation, conninfo](const QHostInfo &info) mutable {
                if (generation != m_generation) {
                    return; // stopped or restarted meanwhile
                }
                m_lookupId = -1;
                if (info.error() != QHostInfo::NoError || info.addresses().isEmpty()) {
                    fail(QStringLiteral("could not resolve host %1: %2")
                                 .arg(m_options.settings.host, info.errorString()));
                    return;
                }
                // libpq tries the addresses in order, as after its own lookup; host stays the
                // name (once per address) for TLS verification and messages. Later keywords
                // override earlier ones in a conninfo string.
                QByteArrayList hosts;
                QByteArrayList addresses;
                const QList<QHostAddress> resolved = info.addresses();
                for (const QHostAddress &address : resolved) {
                    hosts.append(m_options.settings.host.toUtf8());
                    addresses.append(address.toString().toUtf8());
                }
                conninfo += " host=" + rt::postgres::quoteConninfoValue(hosts.join(','))
                        + " hostaddr=" + rt::postgres::quoteConninfoValue(addresses.join(','));
                startConnect(conninfo);
            });
}

void ReplicationStream::startConnect(const QByteArray &conninfo)
{
    m_conn = PQconnectStart(conninfo.constData());
    if (m_conn == nullptr) {
        fail(QStringLiteral("out of memory creating a libpq connection"));
        return;
    }
    if (PQstatus(m_conn) == CONNECTION_BAD) {
        fail(trimmedMessage(PQerrorMessage(m_conn)));
        return;
    }
    // libpq: after PQconnectStart, act as if PQconnectPoll had returned PGRES_POLLING_WRITING.
    watchSocket(false, true);
}

void ReplicationStream::continueConnect()
{
    switch (PQconnectPoll(m_conn)) {
    case PGRES_POLLING_FAILED:
        fail(trimmedMessage(PQerrorMessage(m_conn)));
        return;
    case PGRES_POLLING_READING:
        watchSocket(true, false);
        return;
    case PGRES_POLLING_WRITING:
        watchSocket(false, true);
        return;
    case PGRES_POLLING_OK:
        break;
    case PGRES_POLLING_ACTIVE: // unused by libpq since 7.x; poll again from the loop
        watchSocket(false, true);
        return;
    }
    m_connectTimer->stop();
    if (PQsetnonblocking(m_conn, 1) != 0) {
        fail(trimmedMessage(PQerrorMessage(m_conn)));
        return;
    }
    watchSocket(true, false);
    sendCommand(Phase::IdentifySystem, QByteArrayLiteral("IDENTIFY_SYSTEM"));
}

// While connecting, libpq may close its socket and open another (next host or address, SSL
// retry), possibly under the same number, so the notifiers are made anew for every poll. Later
// the socket stays, and only what is watched changes.
void ReplicationStream::watchSocket(bool read, bool write)
{
    const int socket = PQsocket(m_conn);
    if (socket < 0) {
        fail(QStringLiteral("libpq connection has no socket: %1")
                     .arg(trimmedMessage(PQerrorMessage(m_conn))));
        return;
    }
    if (m_phase == Phase::Connecting || socket != m_socket || m_readNotifier == nullptr) {
        dropNotifiers();
        m_socket = socket;
        m_readNotifier = new QSocketNotifier(socket, QSocketNotifier::Read, this);
        m_writeNotifier = new QSocketNotifier(socket, QSocketNotifier::Write, this);
        connect(m_readNotifier, &QSocketNotifier::activated, this, &ReplicationStream::onReadable);
        connect(m_writeNotifier, &QSocketNotifier::activated, this, &ReplicationStream::onWritable);
    }
    m_readNotifier->setEnabled(read);
    m_writeNotifier->setEnabled(write);
}

void ReplicationStream::dropNotifiers()
{
    // Disabled at once (before libpq closes the descriptor), deleted later: this may run inside
    // one of their own activated() signals.
    for (QSocketNotifier *notifier : { m_readNotifier, m_writeNotifier }) {
        if (notifier != nullptr) {
            notifier->setEnabled(false);
            notifier->disconnect(this);
            notifier->deleteLater();
        }
    }
    m_readNotifier = nullptr;
    m_writeNotifier = nullptr;
    m_socket = -1;
}

void ReplicationStream::onReadable()
{
    if (m_conn == nullptr) {
        return;
    }
    if (m_phase == Phase::Connecting) {
        continueConnect();
        return;
    }
    if (m_paused && m_phase == Phase::Copy && !m_flushPending) {
        // Not even into libpq's buffer: what the server sends waits in the socket, then in the
        // server. resume() enables the notifier again.
        m_readNotifier->setEnabled(false);
        return;
    }
    if (PQconsumeInput(m_conn) == 0) {
        fail(trimmedMessage(PQerrorMessage(m_conn)));
        return;
    }
    // libpq: output that PQflush could not send may wait for the server to read ours first.
    if (m_flushPending && !flushOutput()) {
        return;
    }
    if (m_phase == Phase::Copy) {
        readCopyData();
    } else {
        processResults();
    }
}

void ReplicationStream::onWritable()
{
    if (m_conn == nullptr) {
        return;
    }
    if (m_phase == Phase::Connecting) {
        continueConnect();
        return;
    }
    flushOutput();
}

// False after a failure (the connection is gone then).
bool ReplicationStream::flushOutput()
{
    const int result = PQflush(m_conn);
    if (result < 0) {
        fail(trimmedMessage(PQerrorMessage(m_conn)));
        return false;
    }
    m_flushPending = result == 1;
    if (m_writeNotifier != nullptr) {
        m_writeNotifier->setEnabled(m_flushPending);
    }
    return true;
}

void ReplicationStream::sendCommand(Phase phase, const QByteArray &command)
{
    m_phase = phase;
    m_commandError.clear();
    m_commandSqlState.clear();
    m_commandRows = 0;
    qCDebug(lcReplication) << "command" << command;
    // The walsender understands only the simple query protocol.
    if (PQsendQuery(m_conn, command.constData()) == 0) {
        fail(trimmedMessage(PQerrorMessage(m_conn)));
        return;
    }
    flushOutput();
}

void ReplicationStream::processResults()
{
    while (m_conn != nullptr && PQisBusy(m_conn) == 0) {
        PGresult *result = PQgetResult(m_conn);
        if (result == nullptr) {
            commandFinished();
            return;
        }
        const ExecStatusType status = PQresultStatus(result);
        if (status == PGRES_COPY_BOTH) {
            PQclear(result);
            enterCopy();
            return;
        }
        if (status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK) {
            m_commandRows += PQntuples(result);
            if (m_phase == Phase::CheckSlot && PQntuples(result) == 1 && PQnfields(result) == 1) {
                m_slotHolderPid = QByteArray(PQgetvalue(result, 0, 0));
            }
            if (m_phase == Phase::IdentifySystem && PQntuples(result) == 1
                && PQnfields(result) >= 3) {
                qCInfo(lcReplication).noquote()
                        << m_options.settings.describe() << "system"
                        << QString::fromUtf8(PQgetvalue(result, 0, 0)) << "timeline"
                        << QString::fromUtf8(PQgetvalue(result, 0, 1)) << "WAL at"
                        << QString::fromUtf8(PQgetvalue(result, 0, 2));
            }
        } else if (m_commandError.isEmpty()) {
            m_commandError = trimmedMessage(PQresultErrorMessage(result));
            const char *sqlState = PQresultErrorField(result, PG_DIAG_SQLSTATE);
            m_commandSqlState = sqlState != nullptr ? QByteArray(sqlState) : QByteArray();
        }
        PQclear(result);
    }
}

void ReplicationStream::commandFinished()
{
    const Phase finished = m_phase;
    if (!m_commandError.isEmpty()
        && !(finished == Phase::CreateSlot && m_commandSqlState == DuplicateObjectState)) {
        fail(m_commandError);
        return;
    }
    switch (finished) {
    case Phase::IdentifySystem:
        if (m_options.temporarySlot) {
            // A temporary slot belongs to its session: there is never one to reuse.
            sendCommand(Phase::CreateSlot,
                        "CREATE_REPLICATION_SLOT " + m_options.slotName
                                + " TEMPORARY LOGICAL pgoutput (SNAPSHOT 'nothing')");
        } else {
            // A query rather than creating blindly: an "already exists" ERROR on every reconnect
            // would litter the tenant's server log.
            m_slotHolderPid.clear();
            sendCommand(Phase::CheckSlot,
                        "SELECT coalesce(active_pid, 0) FROM pg_catalog.pg_replication_slots "
                        "WHERE slot_name = '"
                                + m_options.slotName + '\'');
        }
        return;
    case Phase::CheckSlot:
        if (m_commandRows > 0 && m_options.takeOverActiveSlot && !m_slotHolderPid.isEmpty()
            && m_slotHolderPid != "0") {
            qCInfo(lcReplication).noquote()
                    << "replication slot" << m_options.slotName << "is held by walsender"
                    << m_slotHolderPid << "of a former owner; ending it";
            // Only digits come back for an int column; the check keeps the command literal.
            const bool digits = std::all_of(m_slotHolderPid.cbegin(), m_slotHolderPid.cend(),
                                            [](char c) { return c >= '0' && c <= '9'; });
            if (digits) {
                sendCommand(Phase::TakeOverSlot,
                            "SELECT pg_catalog.pg_terminate_backend(" + m_slotHolderPid + ')');
                return;
            }
        }
        if (m_commandRows > 0) {
            sendCommand(Phase::StartReplication, startReplicationCommand());
        } else {
            qCInfo(lcReplication).noquote() << "creating replication slot" << m_options.slotName
                                            << "on" << m_options.settings.describe();
            sendCommand(Phase::CreateSlot,
                        "CREATE_REPLICATION_SLOT " + m_options.slotName
                                + " LOGICAL pgoutput (SNAPSHOT 'nothing')");
        }
        return;
    case Phase::CreateSlot:
    case Phase::TakeOverSlot:
        // After a termination the slot is free once that walsender has exited: if it has not
        // yet, START_REPLICATION fails as "active" and the retry a second later finds it free.
        sendCommand(Phase::StartReplication, startReplicationCommand());
        return;
    case Phase::StartReplication:
        fail(QStringLiteral("START_REPLICATION ended without streaming"));
        return;
    case Phase::Idle:
    case Phase::Connecting:
    case Phase::Copy:
        return;
    }
}

QByteArray ReplicationStream::startReplicationCommand() const
{
    return "START_REPLICATION SLOT " + m_options.slotName + " LOGICAL " + formatLsn(m_confirmedLsn)
            + " (proto_version '1', publication_names "
            + publicationNamesLiteral(m_options.publications) + ", messages 'true')";
}

void ReplicationStream::enterCopy()
{
    m_phase = Phase::Copy;
    m_state = State::Streaming;
    m_streamingSince.start();
    m_sentLsn = 0;
    m_receivedLsn = m_confirmedLsn;
    m_sinceStatus.invalidate();
    m_statusTimer->start(m_options.statusIntervalMs);
    qCInfo(lcReplication).noquote() << "streaming" << m_options.settings.describe() << "slot"
                                    << m_options.slotName << "from" << formatLsn(m_confirmedLsn);
    // libpq may already hold CopyData that arrived with the response: no readiness will come.
    m_continueTimer->start();
    Q_EMIT streaming();
}

void ReplicationStream::pause()
{
    m_paused = true;
    m_continueTimer->stop();
}

void ReplicationStream::resume()
{
    if (!m_paused) {
        return;
    }
    m_paused = false;
    if (m_phase == Phase::Copy && m_readNotifier != nullptr) {
        m_readNotifier->setEnabled(true);
        m_continueTimer->start(); // libpq may hold complete CopyData already
    }
}

void ReplicationStream::readCopyData()
{
    if (m_phase != Phase::Copy || m_conn == nullptr || m_paused) {
        return;
    }
    const quint64 generation = m_generation;
    QList<WalMessage> batch;
    QString failure;
    while (true) {
        if (batch.size() >= m_options.maxBatchMessages) {
            // More may be buffered in libpq, where no socket readiness will report it.
            m_continueTimer->start();
            break;
        }
        char *buffer = nullptr;
        const int length = PQgetCopyData(m_conn, &buffer, 1);
        if (length == 0) {
            break; // nothing complete buffered: wait for readiness
        }
        if (length == -1) {
            // The server ended COPY BOTH; its reason (ErrorResponse) follows as a result.
            failure = QStringLiteral("the server ended the replication stream");
            while (PQisBusy(m_conn) == 0) {
                PGresult *result = PQgetResult(m_conn);
                if (result == nullptr) {
                    break;
                }
                if (PQresultStatus(result) == PGRES_FATAL_ERROR) {
                    failure = trimmedMessage(PQresultErrorMessage(result));
                }
                PQclear(result);
            }
            break;
        }
        if (length < 0) {
            failure = trimmedMessage(PQerrorMessage(m_conn));
            break;
        }
        const auto parsed = parseCopyData(QByteArrayView(buffer, length));
        if (!parsed) {
            failure = QStringLiteral("protocol error: %1").arg(parsed.error().message);
            PQfreemem(buffer);
            break;
        }
        if (const auto *data = std::get_if<XLogData>(&*parsed)) {
            batch.append(WalMessage{ data->walStart, data->walEnd, data->payload.toByteArray() });
            m_receivedLsn = std::max({ m_receivedLsn, data->walStart, data->walEnd });
            m_serverWalEnd = std::max(m_serverWalEnd, data->walEnd);
        } else if (const auto *keepalive = std::get_if<PrimaryKeepalive>(&*parsed)) {
            handleKeepalive(*keepalive);
        }
        PQfreemem(buffer);
        if (generation != m_generation) {
            return; // a status update failed and tore the connection down
        }
    }
    if (!batch.isEmpty()) {
        Q_EMIT messages(batch);
        if (generation != m_generation) {
            return; // stopped or restarted by a slot
        }
    }
    if (!failure.isEmpty()) {
        fail(failure);
    }
}

void ReplicationStream::handleKeepalive(const PrimaryKeepalive &keepalive)
{
    // Everything delivered is confirmed, and the server has sent all it decoded up to walEnd:
    // any transaction committing before walEnd was sent (or had nothing for our publications),
    // so the slot may advance there. A transaction still open commits later and is resent
    // after a reconnect. Without this, writes to unpublished tables would pin WAL forever.
    m_serverWalEnd = std::max(m_serverWalEnd, keepalive.walEnd);
    bool advanced = false;
    if (m_confirmedLsn >= m_receivedLsn && keepalive.walEnd > m_confirmedLsn) {
        m_confirmedLsn = keepalive.walEnd;
        m_receivedLsn = keepalive.walEnd;
        advanced = true;
    }
    if (keepalive.replyRequested) {
        sendStatusUpdate(false);
    } else if (advanced) {
        scheduleStatusUpdate();
    }
}

void ReplicationStream::scheduleStatusUpdate()
{
    if (!m_sinceStatus.isValid() || m_sinceStatus.elapsed() >= CoalesceMs) {
        sendStatusUpdate(false);
    } else if (!m_coalesceTimer->isActive()) {
        m_coalesceTimer->start(static_cast<int>(CoalesceMs - m_sinceStatus.elapsed()));
    }
}

// Never fails synchronously: callers may be in the middle of reading (or in a consumer's slot).
bool ReplicationStream::sendStatusUpdate(bool replyRequested)
{
    if (m_phase != Phase::Copy || m_conn == nullptr) {
        return false;
    }
    m_coalesceTimer->stop();
    StandbyStatusUpdate update;
    update.writeLsn = m_confirmedLsn;
    update.flushLsn = m_confirmedLsn;
    update.applyLsn = m_confirmedLsn;
    update.clockMicros = postgresEpochMicros();
    update.replyRequested = replyRequested;
    const QByteArray message = buildStandbyStatusUpdate(update);
    const int queued = PQputCopyData(m_conn, message.constData(), static_cast<int>(message.size()));
    if (queued < 0) {
        failLater(trimmedMessage(PQerrorMessage(m_conn)));
        return false;
    }
    if (queued == 0) {
        // libpq's output buffer is full (non-blocking mode); the periodic update retries.
        qCDebug(lcReplication) << "status update deferred: output buffer full";
        return false;
    }
    m_sentLsn = m_confirmedLsn;
    m_sinceStatus.start();
    const int flushed = PQflush(m_conn);
    if (flushed < 0) {
        failLater(trimmedMessage(PQerrorMessage(m_conn)));
        return false;
    }
    m_flushPending = flushed == 1;
    if (m_flushPending && m_writeNotifier != nullptr) {
        m_writeNotifier->setEnabled(true);
    }
    qCDebug(lcReplication) << "confirmed" << formatLsn(m_confirmedLsn);
    return true;
}

// The first reported failure wins; teardown() (stop, restart, another failure) cancels it.
void ReplicationStream::failLater(const QString &reason, bool retry)
{
    if (!m_failTimer->isActive()) {
        m_deferredFailure = reason;
        m_deferredRetry = retry;
        m_failTimer->start();
    }
}

void ReplicationStream::fail(const QString &reason, bool retry)
{
    const bool wasStable =
            m_streamingSince.isValid() && m_streamingSince.elapsed() >= StableStreamingMs;
    teardown();
    if (wasStable) {
        m_attempt = 0;
    }
    if (retry) {
        const int delay = std::min(MaxBackoffMs, FirstBackoffMs << std::min(m_attempt, 5));
        ++m_attempt;
        m_state = State::Backoff;
        m_backoffTimer->start(delay);
        qCWarning(lcReplication).noquote()
                << "replication of" << m_options.settings.describe() << "slot" << m_options.slotName
                << "failed:" << reason << "- reconnecting in" << delay << "ms";
    } else {
        m_state = State::Stopped;
        qCWarning(lcReplication).noquote()
                << "replication of" << m_options.settings.describe() << "failed:" << reason;
    }
    Q_EMIT failed(reason, retry);
}

void ReplicationStream::teardown()
{
    ++m_generation;
    if (m_lookupId >= 0) {
        QHostInfo::abortHostLookup(m_lookupId);
        m_lookupId = -1;
    }
    m_streamingSince.invalidate();
    dropNotifiers();
    m_connectTimer->stop();
    m_statusTimer->stop();
    m_coalesceTimer->stop();
    m_continueTimer->stop();
    m_failTimer->stop();
    if (m_conn != nullptr) {
        PQfinish(m_conn);
        m_conn = nullptr;
    }
    m_phase = Phase::Idle;
    m_flushPending = false;
}

} // namespace rt::replication
