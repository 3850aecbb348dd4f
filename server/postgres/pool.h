#pragma once

#include "server/postgres/connection.h"

#include <QObject>

#include <functional>
#include <vector>

namespace rt::postgres {

// Several Connections to one database. Each run()/runScript() goes to the Ready connection with
// the fewest pending items, so one slow statement holds up only its own connection. Work given
// before the first connection is ready waits in the pool.
//
// Lifecycle: open() starts `size` connections; ready() once the first is ready; failed() when
// none is ready or connecting any more (all failed to connect, or the last ready one was lost).
// A connection that fails while others are still up is reopened after reconnectDelayMs. After
// failed() the pool is closed: work fails with connectionLost until open() is called again.
// Lives on the thread that created it; use it only there.
class Pool : public QObject
{
    Q_OBJECT
public:
    explicit Pool(QObject *parent = nullptr);
    ~Pool() override;

    void open(const ConnectionSettings &settings, int size);
    void run(QList<Statement> segment, SegmentCallback done);
    void run(Statement statement, StatementCallback done);
    void runScript(QByteArray sql, StatementCallback done);
    // Closes every connection; their pending work fails with connectionLost (queued).
    void close();

    bool isReady() const { return m_ready; }
    int size() const { return int(m_connections.size()); }
    int readyCount() const;
    // Delay before reopening a connection that was lost while others are still up.
    void setReconnectDelay(int milliseconds) { m_reconnectDelayMs = milliseconds; }

Q_SIGNALS:
    void ready();
    void failed(rt::postgres::PgError error);

private:
    using Job = std::function<void(Connection *)>;
    void dispatch(Job job, const std::function<void(const PgError &)> &reject);
    Connection *leastLoaded() const;
    void onConnectionReady();
    void onConnectionFailed(Connection *connection, const PgError &error);
    void failAll(const PgError &error);

    ConnectionSettings m_settings;
    std::vector<Connection *> m_connections; // children of this
    // Work given before any connection was ready: a job and what to do if the pool fails.
    std::vector<std::pair<Job, std::function<void(const PgError &)>>> m_backlog;
    bool m_open = false;
    bool m_ready = false;
    int m_reconnectDelayMs = 1000;
};

} // namespace rt::postgres
