#include "server/app/unix_signals.h"

#include <QSocketNotifier>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>

namespace rt::app {

namespace {

int signalPipe[2] = { -1, -1 };

void onSignal(int signalNumber)
{
    const char byte = static_cast<char>(signalNumber);
    // Async-signal-safe; if the pipe is full, a termination is already pending.
    [[maybe_unused]] const ssize_t written = ::write(signalPipe[1], &byte, 1);
}

} // namespace

UnixSignals::UnixSignals(QObject *parent) : QObject(parent)
{
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, signalPipe) != 0) {
        return;
    }
    // A flood of signals must never block the handler: extra bytes are dropped instead.
    ::fcntl(signalPipe[1], F_SETFL, ::fcntl(signalPipe[1], F_GETFL, 0) | O_NONBLOCK);
    m_notifier = new QSocketNotifier(signalPipe[0], QSocketNotifier::Read, this);
    connect(m_notifier, &QSocketNotifier::activated, this, &UnixSignals::onReadable);
    struct sigaction action
    { };
    action.sa_handler = onSignal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    ::sigaction(SIGINT, &action, nullptr);
    ::sigaction(SIGTERM, &action, nullptr);
    ::sigaction(SIGHUP, &action, nullptr);
    // Writes to closed sockets return EPIPE instead of killing the process.
    ::signal(SIGPIPE, SIG_IGN);
}

UnixSignals::~UnixSignals()
{
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::signal(SIGHUP, SIG_DFL);
}

void UnixSignals::onReadable()
{
    char byte = 0;
    if (::read(signalPipe[0], &byte, 1) == 1) {
        if (byte == SIGHUP) {
            Q_EMIT reloadRequested();
        } else {
            Q_EMIT terminationRequested(static_cast<int>(byte));
        }
    }
}

} // namespace rt::app
