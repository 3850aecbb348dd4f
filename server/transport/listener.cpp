#include "server/transport/listener.h"

#include "server/runtime/post.h"
#include "server/transport/io_loop.h"
#include "server/transport/logging.h"
#include "server/transport/tcp_connection.h"

#include <QLoggingCategory>

#include <unistd.h>

#include <memory>

namespace rt::transport {

Listener::Listener(std::vector<IoLoop *> loops, ConnectionAdmission *admission, QObject *parent)
    : QTcpServer(parent),
      m_loops(std::move(loops)),
      m_admission(admission)
{
    setMaxPendingConnections(1024);
    // Qt's default accept backlog is 50: a connect storm overflows it and clients wait ~1 s for
    // SYN retransmits. The kernel caps this at net.core.somaxconn (4096 on Debian 12).
    setListenBacklogSize(4096);
    m_resumeTimer.setSingleShot(true);
    m_resumeTimer.setInterval(100);
    connect(&m_resumeTimer, &QTimer::timeout, this, &QTcpServer::resumeAccepting);
    connect(this, &QTcpServer::acceptError, this, &Listener::onAcceptError);
}

IoLoop *Listener::nextLoop()
{
    IoLoop *loop = m_loops[m_next];
    m_next = (m_next + 1) % m_loops.size();
    return loop;
}

void Listener::incomingConnection(qintptr descriptor)
{
    AdmissionTicket ticket;
    if (m_admission != nullptr) {
        const QByteArray address = peerAddressOf(static_cast<int>(descriptor));
        const ConnectionAdmission::Verdict verdict = m_admission->admit(address);
        if (verdict != ConnectionAdmission::Verdict::Admitted) {
            refuse(descriptor, verdict);
            return;
        }
        ticket = AdmissionTicket(m_admission, address);
    }
    IoLoop *loop = nextLoop();
    runtime::post(loop,
                  [loop, descriptor,
                   ticket = std::make_shared<AdmissionTicket>(std::move(ticket))]() mutable {
                      loop->adopt(descriptor, std::move(*ticket));
                  });
}

void Listener::refuse(qintptr descriptor, ConnectionAdmission::Verdict verdict)
{
    ++m_refused;
    if (!m_refusalWindow.isValid() || m_refusalWindow.elapsed() >= 1000) {
        m_refusalWindow.start();
        m_refusalsInWindow = 0;
    }
    if (++m_refusalsInWindow > RefusalsPerSecond) {
        ::close(static_cast<int>(descriptor));
        return;
    }
    if (m_refusalsInWindow == 1) {
        qCWarning(lcTransport) << "refusing connections:"
                               << (verdict == ConnectionAdmission::Verdict::NodeFull
                                           ? "MAX_CONNECTIONS reached"
                                           : "too many pending connections from one address");
    }
    IoLoop *loop = nextLoop();
    const QByteArray response = ConnectionAdmission::refusalResponse(verdict);
    runtime::post(loop, [loop, descriptor, response] { loop->refuse(descriptor, response); });
}

void Listener::onAcceptError(QAbstractSocket::SocketError error)
{
    qCWarning(lcTransport) << "accept failed:" << error << errorString() << "- pausing 100 ms";
    pauseAccepting();
    m_resumeTimer.start();
}

} // namespace rt::transport
