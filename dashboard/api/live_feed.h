#pragma once

#include "dashboard/api/live_feed_connection.h"
#include "shared/api/cluster_snapshot.h"

#include <QByteArray>
#include <QObject>
#include <QSslConfiguration>
#include <QThread>
#include <QUrl>

namespace rt::dashboard {

// The admin live feed of one node (docs/admin-api.md): a WebSocket to
// /api/admin/live/websocket?vsn=1.0.0 with the operator token in the Authorization header, the
// topic admin:cluster joined, one ClusterSnapshot per push (at least one a second).
//
// The feed is lost — lost() is emitted once per open() and the socket is dropped — when the
// socket closes or fails, the join is refused, the channel is closed, a heartbeat (every
// heartbeatInterval) is still unanswered when the next is due, or nothing at all arrived for
// silenceTimeout (a node that hangs or a network that drops packets closes nothing). Reopening
// is ConnectionManager's decision.
//
// Lives on the GUI thread; the socket, the frames and the parsing of snapshots (3.7 MB of JSON
// and ~60 ms for 100 nodes and 10,000 tenants) live on the feed's own thread (a
// LiveFeedConnection), so the GUI only ever handles finished snapshots. Nothing that belongs to
// a connection already closed or replaced reaches this object's signals.
class LiveFeed : public QObject
{
    Q_OBJECT
public:
    using Timing = LiveFeedTiming;

    explicit LiveFeed(QObject *parent = nullptr);
    // Stops the feed's thread (the socket is aborted there first).
    ~LiveFeed() override;

    // Applies from the next open().
    void setTiming(Timing timing) { m_timing = timing; }
    Timing timing() const { return m_timing; }
    // TLS settings of wss feeds (nodeSslConfiguration()); applies from the next open().
    void setSslConfiguration(const QSslConfiguration &configuration) { m_ssl = configuration; }

    // Connects to `url` (liveFeedUrl()) with `token`; a feed already open is dropped first
    // (without lost()).
    void open(const QUrl &url, const QByteArray &token);
    // Drops the feed (without lost()).
    void close();

    bool isOpen() const { return m_open; }
    bool isJoined() const { return m_joined; }
    QUrl url() const { return m_url; }

Q_SIGNALS:
    // The server accepted the join; snapshots follow.
    void joined();
    void snapshotReceived(const rt::api::ClusterSnapshot &snapshot);
    // Something arrived that could not be read; the feed goes on (text in words).
    void problemOccurred(const QString &text);
    // The feed is gone (reason in words); nothing more comes until the next open().
    void lost(const QString &reason);

private:
    void onJoined(quint64 generation);
    void onSnapshot(quint64 generation, const api::ClusterSnapshot &snapshot);
    void onProblem(quint64 generation, const QString &text);
    void onLost(quint64 generation, const QString &reason);

    Timing m_timing;
    QSslConfiguration m_ssl;
    QUrl m_url;
    bool m_open = false;
    bool m_joined = false;
    quint64 m_generation = 0; // of the last open() or close(); older signals are dropped
    QThread m_thread; // "live-feed"
    LiveFeedConnection *m_connection; // lives on m_thread; deleted there when it finishes
};

} // namespace rt::dashboard
