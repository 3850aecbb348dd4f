#pragma once

#include <QByteArrayView>
#include <QtGlobal>

#include <optional>

// What this process costs the machine, as the admin view shows it per node (issue 20): CPU time
// (utime + stime of every thread) and the resident set, read from the kernel. The readers never
// block and never fail loudly: an unreadable figure is 0 (or nullopt from the parser).
namespace rt::runtime {

// CPU time of the whole process, all threads, in nanoseconds (CLOCK_PROCESS_CPUTIME_ID).
qint64 processCpuNs();
// The monotonic time (monotonicNs()) at which this process started, near enough.
qint64 processStartedNs();
// CPU time of the calling thread in nanoseconds (CLOCK_THREAD_CPUTIME_ID).
qint64 threadCpuNs();
// Monotonic wall time in nanoseconds (CLOCK_MONOTONIC): what CPU time is divided by.
qint64 monotonicNs();
// The resident set in bytes (/proc/self/statm); 0 when it cannot be read.
qint64 residentBytes();
// The resident set from the text of /proc/<pid>/statm ("size resident shared ..." in pages):
// resident pages times `pageBytes`; nullopt unless it starts with two decimal fields.
std::optional<qint64> parseStatmResidentBytes(QByteArrayView statm, qint64 pageBytes);

// The CPU a thread or process used between two readings, in cores (1.0: one core busy all the
// time). The first reading measures from the start of the clocks (the process's or thread's
// start), so a figure exists from the first report. Readings that go backwards (a clock of
// another thread reused) count as a fresh start.
class CpuRate
{
public:
    // `startNs`: the monotonic time the CPU clock started from (process or thread start).
    explicit CpuRate(qint64 startNs = 0) : m_lastWallNs(startNs) { }
    double update(qint64 wallNs, qint64 cpuNs);

private:
    qint64 m_lastWallNs;
    qint64 m_lastCpuNs = 0;
};

} // namespace rt::runtime
