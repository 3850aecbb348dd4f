#pragma once

#include <QByteArray>
#include <QList>
#include <QObject>
#include <QUrl>
#include <QWebSocket>

#include <functional>

namespace rt::testsupport {

// A WebSocket client that records every frame it receives, for protocol tests that check exact
// bytes. Lives on the test thread; waits spin the event loop.
class PhoenixClient : public QObject
{
    Q_OBJECT
public:
    // url like ws://127.0.0.1:<port>/socket/websocket?apikey=...&vsn=2.0.0
    explicit PhoenixClient(const QUrl &url, QObject *parent = nullptr);

    bool open(int timeoutMs = 5000);
    void sendText(const QByteArray &text);
    void sendBinary(const QByteArray &bytes);
    void close();

    // Waits until a text frame satisfying `match` arrives (already received frames count) and
    // returns it, or an empty QByteArray after the timeout. Frames are consumed as matched.
    QByteArray waitForText(const std::function<bool(const QByteArray &)> &match,
                           int timeoutMs = 3000);
    // Convenience: the next text frame containing `needle`.
    QByteArray waitForText(const QByteArray &needle, int timeoutMs = 3000);
    QByteArray waitForBinary(int timeoutMs = 3000);
    // True if no text frame containing `needle` arrived before the reply to a heartbeat sent
    // now. The server answers one socket's messages in order, so whatever the messages sent
    // before would cause is on the wire ahead of that reply: the sentinel, not a quiet period.
    // False also when the reply does not come. (Pushes driven by the server's own timers need
    // a sentinel of their own.)
    bool staysSilent(const QByteArray &needle);

    bool isConnected() const { return m_socket.state() == QAbstractSocket::ConnectedState; }
    bool waitForDisconnect(int timeoutMs = 3000);
    int closeCode() const { return static_cast<int>(m_socket.closeCode()); }

    QList<QByteArray> texts; // unconsumed text frames in arrival order
    QList<QByteArray> binaries;

private:
    QUrl m_url;
    QWebSocket m_socket;
    int m_sentinels = 0;
};

} // namespace rt::testsupport
