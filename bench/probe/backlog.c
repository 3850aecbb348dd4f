// LD_PRELOAD shim for experiments: raise every listen() backlog to at least BACKLOG_MIN
// (environment, default 4096; the kernel caps it at net.core.somaxconn).
//
// Why: Qt's QTcpServer listens with a backlog of 50 unless setListenBacklogSize() is called.
// In the connect storm (run.sh scenario f, 500 handshakes in flight) the accept queue of such a
// listener overflows, the kernel drops the client's SYN/ACK and the client retries after ~1 s
// (TcpExt ListenOverflows / TCPSynRetrans in the loadgen's stormTcpExt). This shim measures
// what a larger backlog would give without changing the server:
//
//   gcc -O2 -shared -fPIC -o /tmp/backlog.so bench/probe/backlog.c -ldl
//   OURS_EXTRA_ENV="LD_PRELOAD=/tmp/backlog.so" bench/run.sh --scenarios f --targets ours,ws-phx
//
// Not used by default runs.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/socket.h>

int listen(int fd, int backlog)
{
    static int (*real_listen)(int, int);
    if (!real_listen)
        real_listen = (int (*)(int, int))dlsym(RTLD_NEXT, "listen");
    const char *env = getenv("BACKLOG_MIN");
    int min = env ? atoi(env) : 4096;
    return real_listen(fd, backlog < min ? min : backlog);
}
