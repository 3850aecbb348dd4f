#pragma once

#include "dashboard/api/live_feed_protocol.h"
#include "shared/api/cluster_snapshot.h"

#include <QByteArray>
#include <QObject>
#include <QSslConfiguration>
#include <QTimer>
#include <QUrl>

#include <chrono>

class QWebSocket;

namespace rt::dashboard {

// How the live feed notices a node that stopped answering.
struct LiveFeedTiming
{
    std::chrono::milliseconds heartbeatInterval{ 25000 }; // Phoenix clients' default
    std::chrono::milliseconds silenceTimeout{ 10000 }; // pushes come every second
};

// The live feed's socket and Phoenix conversation (LiveFeed's worker). It lives on LiveFeed's
// own thread, so that the multi-megabyte snapshot frames of a large cluster are received,
// decoded and parsed there and the GUI thread only gets the finished ClusterSnapshot.
//
// Every signal carries the generation of the open() it belongs to: LiveFeed drops what a
// connection it has already replaced still had on the way. lost() is emitted at most once per
// open() and the socket is dropped with it; close() and a new open() drop it without lost().
class LiveFeedConnection : public QObject
{
    Q_OBJECT
public:
    explicit LiveFeedConnection(QObject *parent = nullptr);
    ~LiveFeedConnection() override;

    void open(quint64 generation, const QUrl &url, const QByteArray &token, LiveFeedTiming timing,
              const QSslConfiguration &ssl = QSslConfiguration::defaultConfiguration());
    void close();

Q_SIGNALS:
    void joined(quint64 generation);
    void snapshotReceived(quint64 generation, const rt::api::ClusterSnapshot &snapshot);
    void problemOccurred(quint64 generation, const QString &text);
    void lost(quint64 generation, const QString &reason);

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

    quint64 m_generation = 0;
    LiveFeedTiming m_timing;
    QUrl m_url;
    LiveFeedProtocol m_protocol;
    QWebSocket *m_socket = nullptr; // child while open; deleteLater when dropped
    QTimer m_heartbeatTimer;
    QTimer m_silenceTimer; // restarted by every frame
};

} // namespace rt::dashboard
