#pragma once

#include <QHostAddress>
#include <QTcpServer>
#include <QTimer>

#include <vector>

namespace rt::transport {

class IoLoop;

// Accepts connections on the public port and hands each descriptor to a worker's IoLoop
// (round robin); the socket object is created on, and never leaves, that worker. Lives on the
// main thread. When the process runs out of descriptors, accepting pauses briefly instead of
// spinning on the error.
class Listener : public QTcpServer
{
    Q_OBJECT
public:
    explicit Listener(std::vector<IoLoop *> loops, QObject *parent = nullptr);

protected:
    void incomingConnection(qintptr descriptor) override;

private:
    void onAcceptError(QAbstractSocket::SocketError error);

    std::vector<IoLoop *> m_loops;
    std::size_t m_next = 0;
    QTimer m_resumeTimer;
};

} // namespace rt::transport
