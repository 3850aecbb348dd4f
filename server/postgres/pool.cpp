#include "server/postgres/pool.h"

#include "server/postgres/logging.h"

#include <QTimer>

namespace rt::postgres {

namespace {

PgError closedError(const QString &what)
{
    PgError error;
    error.message = what;
    error.connectionLost = true;
    return error;
}

} // namespace

Pool::Pool(QObject *parent) : QObject(parent) { }

Pool::~Pool() = default; // connections are children; their callbacks are dropped with them

void Pool::open(const ConnectionSettings &settings, int size)
{
    close();
    m_settings = settings;
    m_open = true;
    m_ready = false;
    for (int index = 0; index < qMax(1, size); ++index) {
        auto *connection = new Connection(this);
        m_connections.push_back(connection);
        connect(connection, &Connection::ready, this, &Pool::onConnectionReady);
        connect(connection, &Connection::failed, this, [this, connection](const PgError &error) {
            onConnectionFailed(connection, error);
        });
        connection->open(settings);
    }
}

void Pool::close()
{
    m_open = false;
    m_ready = false;
    for (Connection *connection : m_connections) {
        connection->close();
        // Deleted later: close() queued its callbacks on the connection itself.
        connection->disconnect(this);
        connection->deleteLater();
    }
    m_connections.clear();
    failAll(closedError(QStringLiteral("pool closed")));
}

int Pool::readyCount() const
{
    int count = 0;
    for (const Connection *connection : m_connections) {
        count += connection->state() == Connection::State::Ready ? 1 : 0;
    }
    return count;
}

void Pool::run(QList<Statement> segment, SegmentCallback done)
{
    auto statements = std::make_shared<QList<Statement>>(std::move(segment));
    auto callback = std::make_shared<SegmentCallback>(std::move(done));
    dispatch(
            [statements, callback](Connection *connection) {
                connection->run(std::move(*statements), std::move(*callback));
            },
            [this, statements, callback](const PgError &error) {
                SegmentResult result;
                for (qsizetype index = 0; index < statements->size(); ++index) {
                    result.results.append(error);
                }
                QMetaObject::invokeMethod(
                        this, [callback, result] { (*callback)(result); }, Qt::QueuedConnection);
            });
}

void Pool::run(Statement statement, StatementCallback done)
{
    run(QList<Statement>{ std::move(statement) }, [done = std::move(done)](SegmentResult result) {
        if (result.results.isEmpty()) {
            PgError error;
            error.message = QStringLiteral("no result");
            done(error);
            return;
        }
        done(std::move(result.results.first()));
    });
}

void Pool::runScript(QByteArray sql, StatementCallback done)
{
    auto callback = std::make_shared<StatementCallback>(std::move(done));
    dispatch(
            [sql = std::move(sql), callback](Connection *connection) mutable {
                connection->runScript(std::move(sql), std::move(*callback));
            },
            [this, callback](const PgError &error) {
                QMetaObject::invokeMethod(
                        this, [callback, error] { (*callback)(error); }, Qt::QueuedConnection);
            });
}

void Pool::dispatch(Job job, const std::function<void(const PgError &)> &reject)
{
    if (!m_open) {
        reject(closedError(QStringLiteral("pool is not open")));
        return;
    }
    if (Connection *connection = leastLoaded()) {
        job(connection);
        return;
    }
    m_backlog.emplace_back(std::move(job), reject);
}

Connection *Pool::leastLoaded() const
{
    Connection *best = nullptr;
    for (Connection *connection : m_connections) {
        if (connection->state() != Connection::State::Ready) {
            continue;
        }
        if (!best || connection->pendingSegments() < best->pendingSegments()) {
            best = connection;
        }
    }
    return best;
}

void Pool::onConnectionReady()
{
    // Spread the backlog over whatever is ready now, one job at a time by load.
    auto backlog = std::move(m_backlog);
    m_backlog.clear();
    for (auto &[job, reject] : backlog) {
        Connection *connection = leastLoaded();
        if (!connection) {
            m_backlog.emplace_back(std::move(job), std::move(reject));
            continue;
        }
        job(connection);
    }
    if (!m_ready) {
        m_ready = true;
        Q_EMIT ready();
    }
}

void Pool::onConnectionFailed(Connection *connection, const PgError &error)
{
    if (!m_open) {
        return;
    }
    bool othersUp = false;
    for (const Connection *other : m_connections) {
        othersUp = othersUp
                || (other != connection
                    && (other->state() == Connection::State::Ready
                        || other->state() == Connection::State::Connecting));
    }
    if (othersUp) {
        qCInfo(lcPostgres, "pool connection to %s failed (%s); reopening in %d ms",
               qPrintable(m_settings.describe()), qPrintable(error.text()), m_reconnectDelayMs);
        QTimer::singleShot(m_reconnectDelayMs, connection, [this, connection] {
            if (m_open && connection->state() == Connection::State::Closed) {
                connection->open(m_settings);
            }
        });
        return;
    }
    close();
    Q_EMIT failed(error);
}

void Pool::failAll(const PgError &error)
{
    auto backlog = std::move(m_backlog);
    m_backlog.clear();
    for (auto &entry : backlog) {
        entry.second(error);
    }
}

} // namespace rt::postgres
