#include "server/transport/listener.h"

#include "server/runtime/post.h"
#include "server/transport/io_loop.h"
#include "server/transport/logging.h"

#include <QLoggingCategory>

namespace rt::transport {

Listener::Listener(std::vector<IoLoop *> loops, QObject *parent)
    : QTcpServer(parent),
      m_loops(std::move(loops))
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

void Listener::incomingConnection(qintptr descriptor)
{
    IoLoop *loop = m_loops[m_next];
    m_next = (m_next + 1) % m_loops.size();
    runtime::post(loop, [loop, descriptor] { loop->adopt(descriptor); });
}

void Listener::onAcceptError(QAbstractSocket::SocketError error)
{
    qCWarning(lcTransport) << "accept failed:" << error << errorString() << "- pausing 100 ms";
    pauseAccepting();
    m_resumeTimer.start();
}

} // namespace rt::transport
