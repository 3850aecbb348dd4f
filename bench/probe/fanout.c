/*
 * Physical-limit probe for fan-out over loopback (shared/design/performance.md §5).
 *
 * The sender (pinned to CPU 0) writes K frames of B bytes per write() to each of N accepted
 * TCP sockets in turn (TCP_NODELAY, blocking); a forked receiver pinned to CPU 1 drains all of
 * them with epoll and 64 KiB reads. It tells what one server core of THIS machine can do today,
 * so results can be stated as a fraction of it (VM hosts differ: the figure moves between
 * sessions, and so does everything else).
 *
 * Usage:  fanout <N> <B> <K> <seconds>
 * Output: one JSON line, e.g.
 *   {"probe":"fanout","conns":1000,"frameBytes":200,"framesPerWrite":1,"seconds":3.0,
 *    "writesPerSec":...,"framesPerSec":...,"senderUsPerWrite":...,"senderCpuPct":...,
 *    "receiverCpuPct":...,"receiverFramesPerRead":...}
 * Sender/receiver CPU come from getrusage (process time; softirq work done outside a process
 * context is not included).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_sec(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double cpu_sec(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static void pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof set, &set);
}

static void die(const char *what) {
    perror(what);
    exit(1);
}

/* Receiver: connect N sockets, signal readiness, drain until every socket reaches EOF, then
 * report its CPU and read count through the pipe. */
static void receiver(int n, struct sockaddr_in addr, int ready_fd, int report_fd) {
    pin(1);
    int ep = epoll_create1(0);
    for (int i = 0; i < n; i++) {
        int c = socket(AF_INET, SOCK_STREAM, 0);
        if (c < 0 || connect(c, (struct sockaddr *)&addr, sizeof addr) != 0) die("connect");
        struct epoll_event e = {.events = EPOLLIN, .data.fd = c};
        epoll_ctl(ep, EPOLL_CTL_ADD, c, &e);
    }
    char ok = 1;
    if (write(ready_fd, &ok, 1) != 1) die("pipe");
    static char buf[65536];
    struct epoll_event ev[256];
    long long bytes = 0, reads = 0;
    double c0 = cpu_sec();
    int open_socks = n;
    while (open_socks > 0) {
        int k = epoll_wait(ep, ev, 256, 10000);
        if (k <= 0) break; /* 10 s without data: give up */
        for (int i = 0; i < k; i++) {
            ssize_t r = read(ev[i].data.fd, buf, sizeof buf);
            if (r <= 0) {
                epoll_ctl(ep, EPOLL_CTL_DEL, ev[i].data.fd, NULL);
                close(ev[i].data.fd);
                open_socks--;
            } else {
                bytes += r;
                reads++;
            }
        }
    }
    double report[3] = {cpu_sec() - c0, (double)reads, (double)bytes};
    if (write(report_fd, report, sizeof report) != sizeof report) die("pipe");
    _exit(0);
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s <conns> <frame_bytes> <frames_per_write> <seconds>\n", argv[0]);
        return 64;
    }
    const int n = atoi(argv[1]), b = atoi(argv[2]), k = atoi(argv[3]);
    const double secs = atof(argv[4]);
    if (n < 1 || b < 1 || k < 1 || secs <= 0 || secs > 30) {
        fprintf(stderr, "bad arguments (seconds must be in (0, 30])\n");
        return 64;
    }

    int ls = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = {0};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0; /* any free port */
    socklen_t alen = sizeof addr;
    if (bind(ls, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(ls, 4096) != 0) die("listen");
    getsockname(ls, (struct sockaddr *)&addr, &alen);

    int ready[2], report[2];
    if (pipe(ready) != 0 || pipe(report) != 0) die("pipe");
    pid_t pid = fork();
    if (pid < 0) die("fork");
    if (pid == 0) receiver(n, addr, ready[1], report[1]);

    pin(0);
    int *s = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++) {
        s[i] = accept(ls, NULL, NULL);
        if (s[i] < 0) die("accept");
        setsockopt(s[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    char ok;
    if (read(ready[0], &ok, 1) != 1) die("receiver failed");

    const size_t len = (size_t)b * (size_t)k;
    char *msg = malloc(len);
    memset(msg, 'x', len);
    double c0 = cpu_sec(), t0 = now_sec(), t1;
    long long writes = 0;
    do {
        for (int i = 0; i < n; i++) {
            if (write(s[i], msg, len) != (ssize_t)len) die("write");
            writes++;
        }
        t1 = now_sec();
    } while (t1 - t0 < secs);
    double cpu = cpu_sec() - c0, wall = t1 - t0;
    for (int i = 0; i < n; i++) shutdown(s[i], SHUT_WR);

    double r[3] = {0, 0, 0};
    if (read(report[0], r, sizeof r) != sizeof r) r[0] = -1;
    waitpid(pid, NULL, 0);
    printf("{\"probe\":\"fanout\",\"conns\":%d,\"frameBytes\":%d,\"framesPerWrite\":%d,\"seconds\":%.2f,"
           "\"writesPerSec\":%.0f,\"framesPerSec\":%.0f,\"senderUsPerWrite\":%.2f,\"senderCpuPct\":%.0f,"
           "\"receiverCpuPct\":%.0f,\"receiverFramesPerRead\":%.1f}\n",
           n, b, k, wall, (double)writes / wall, (double)writes * k / wall, cpu * 1e6 / (double)writes,
           100 * cpu / wall, r[0] < 0 ? -1 : 100 * r[0] / wall, r[1] > 0 ? r[2] / b / r[1] : 0);
    return 0;
}
