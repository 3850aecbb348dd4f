#include "dashboard/api/live_feed.h"

namespace rt::dashboard {

LiveFeed::LiveFeed(QObject *parent) : QObject(parent), m_connection(new LiveFeedConnection)
{
    m_thread.setObjectName(QStringLiteral("live-feed"));
    m_connection->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, m_connection, &QObject::deleteLater);
    // Queued: the connection emits on the feed's thread.
    connect(m_connection, &LiveFeedConnection::joined, this, &LiveFeed::onJoined);
    connect(m_connection, &LiveFeedConnection::snapshotReceived, this, &LiveFeed::onSnapshot);
    connect(m_connection, &LiveFeedConnection::problemOccurred, this, &LiveFeed::onProblem);
    connect(m_connection, &LiveFeedConnection::lost, this, &LiveFeed::onLost);
    m_thread.start();
}

LiveFeed::~LiveFeed()
{
    ++m_generation;
    m_connection->disconnect(this);
    QMetaObject::invokeMethod(m_connection, &LiveFeedConnection::close);
    m_thread.quit();
    // Bounded: the feed's thread never blocks, so it ends as soon as it sees the quit.
    m_thread.wait();
}

void LiveFeed::open(const QUrl &url, const QByteArray &token)
{
    const quint64 generation = ++m_generation;
    m_url = url;
    m_open = true;
    m_joined = false;
    QMetaObject::invokeMethod(
            m_connection,
            [connection = m_connection, generation, url, token, timing = m_timing, ssl = m_ssl] {
                connection->open(generation, url, token, timing, ssl);
            });
}

void LiveFeed::close()
{
    ++m_generation;
    m_open = false;
    m_joined = false;
    QMetaObject::invokeMethod(m_connection, &LiveFeedConnection::close);
}

void LiveFeed::onJoined(quint64 generation)
{
    if (generation != m_generation) {
        return;
    }
    m_joined = true;
    Q_EMIT joined();
}

void LiveFeed::onSnapshot(quint64 generation, const api::ClusterSnapshot &snapshot)
{
    if (generation == m_generation) {
        Q_EMIT snapshotReceived(snapshot);
    }
}

void LiveFeed::onProblem(quint64 generation, const QString &text)
{
    if (generation == m_generation) {
        Q_EMIT problemOccurred(text);
    }
}

void LiveFeed::onLost(quint64 generation, const QString &reason)
{
    if (generation != m_generation) {
        return;
    }
    m_open = false;
    m_joined = false;
    Q_EMIT lost(reason);
}

} // namespace rt::dashboard
