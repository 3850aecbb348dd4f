#pragma once

#include "dashboard/api/live_feed_protocol.h"
#include "shared/api/cluster_snapshot.h"

#include <QByteArray>
#include <QObject>
#include <QTimer>
#include <QUrl>

#include <chrono>
#include <memory>

class QWebSocket;

namespace rt::dashboard {

// The admin live feed of one node (docs/admin-api.md): a WebSocket to
// /api/admin/live/websocket?vsn=1.0.0 with the operator token in the Authorization header, the
// topic admin:cluster joined, one ClusterSnapshot per push (at least one a second).
//
// The feed is lost — lost() is emitted once per open() and the socket is dropped — when the
// socket closes or fails, the join is refused, the channel is closed, a heartbeat (every
// heartbeatInterval) is still unanswered when the next is due, or nothing at all arrived for
// silenceTimeout (a node that hangs or a network that drops packets closes nothing). Reopening
// is ConnectionManager's decision. Lives on the GUI thread; never blocks it.
class LiveFeed : public QObject
{
    Q_OBJECT
public:
    struct Timing
    {
        std::chrono::milliseconds heartbeatInterval{ 25000 }; // Phoenix clients' default
        std::chrono::milliseconds silenceTimeout{ 10000 }; // pushes come every second
    };

    explicit LiveFeed(QObject *parent = nullptr);
    ~LiveFeed() override;

    void setTiming(Timing timing) { m_timing = timing; }
    Timing timing() const { return m_timing; }

    // Connects to `url` (liveFeedUrl()) with `token`; a feed already open is dropped first
    // (without lost()).
    void open(const QUrl &url, const QByteArray &token);
    // Drops the feed (without lost()).
    void close();

    bool isOpen() const { return m_socket != nullptr; }
    bool isJoined() const { return m_protocol.isJoined(); }
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
    void onConnected();
    void onTextMessage(const QString &message);
    void onDisconnected();
    void onSocketError();
    void onHeartbeatDue();
    void onSilence();
    void sendFrame(const QByteArray &frame);
    void fail(const QString &reason);
    void dropSocket();

    Timing m_timing;
    QUrl m_url;
    LiveFeedProtocol m_protocol;
    QWebSocket *m_socket = nullptr; // child while open; deleteLater when dropped
    QTimer m_heartbeatTimer;
    QTimer m_silenceTimer; // restarted by every frame
};

} // namespace rt::dashboard
