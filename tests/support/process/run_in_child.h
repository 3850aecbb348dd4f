#pragma once

#include <QtGlobal>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

namespace rt::testsupport {

// Runs `scenario` in a forked child process and returns the child's wait status; the child exits
// with what `scenario` returns. For tests of behaviour that may abort (Q_ASSERT, sanitizer
// reports): the child gets default signal and message handling and no output, so an expected
// abort stays quiet and contained. Set RT_TEST_CHILD_OUTPUT to see the child's report.
template <typename Fn>
int runInChild(Fn scenario)
{
    const pid_t child = ::fork();
    if (child == 0) {
        qInstallMessageHandler(nullptr);
        for (const int signal : { SIGABRT, SIGSEGV, SIGBUS, SIGILL, SIGFPE }) {
            std::signal(signal, SIG_DFL);
        }
        if (!qEnvironmentVariableIsSet("RT_TEST_CHILD_OUTPUT")) {
            const int devNull = ::open("/dev/null", O_WRONLY);
            ::dup2(devNull, STDOUT_FILENO);
            ::dup2(devNull, STDERR_FILENO);
        }
        ::_exit(scenario());
    }
    int status = -1;
    if (child > 0) {
        ::waitpid(child, &status, 0);
    }
    return status;
}

} // namespace rt::testsupport
