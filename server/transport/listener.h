#pragma once

#include "server/transport/admission.h"

#include <QElapsedTimer>
#include <QHostAddress>
#include <QTcpServer>
#include <QTimer>

#include <vector>

namespace rt::transport {

class IoLoop;

// Accepts connections on the public port and hands each descriptor to a worker's IoLoop
// (round robin); the socket object is created on, and never leaves, that worker. Each socket
// passes the node's ConnectionAdmission first (when one is given): a refused one gets its short
// answer from a worker, or, beyond RefusalsPerSecond, is closed at once. Lives on the main
// thread. When the process runs out of descriptors, accepting pauses briefly instead of
// spinning on the error.
class Listener : public QTcpServer
{
    Q_OBJECT
public:
    // Refused sockets answered per second; more are closed without an answer (each answer
    // holds a descriptor for a moment).
    static constexpr int RefusalsPerSecond = 1000;

    explicit Listener(std::vector<IoLoop *> loops, ConnectionAdmission *admission = nullptr,
                      QObject *parent = nullptr);
    quint64 refusedConnections() const { return m_refused; }

protected:
    void incomingConnection(qintptr descriptor) override;

private:
    void onAcceptError(QAbstractSocket::SocketError error);

    IoLoop *nextLoop();
    void refuse(qintptr descriptor, ConnectionAdmission::Verdict verdict);

    std::vector<IoLoop *> m_loops;
    ConnectionAdmission *m_admission = nullptr;
    std::size_t m_next = 0;
    QTimer m_resumeTimer;
    QElapsedTimer m_refusalWindow;
    int m_refusalsInWindow = 0;
    quint64 m_refused = 0;
};

} // namespace rt::transport
