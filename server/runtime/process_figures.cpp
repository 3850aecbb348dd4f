#include "server/runtime/process_figures.h"

#include <QFile>

#include <unistd.h>

#include <ctime>
#include <limits>

namespace rt::runtime {

namespace {

qint64 clockNs(clockid_t clock)
{
    timespec now{};
    if (clock_gettime(clock, &now) != 0) {
        return 0;
    }
    return qint64{ now.tv_sec } * 1'000'000'000 + now.tv_nsec;
}

// A run of decimal digits at `at` (advanced past it); nullopt when there is none or it
// overflows.
std::optional<qint64> decimalAt(QByteArrayView text, qsizetype &at)
{
    const qsizetype begin = at;
    qint64 value = 0;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9') {
        if (value > (std::numeric_limits<qint64>::max() - 9) / 10) {
            return std::nullopt;
        }
        value = value * 10 + (text[at] - '0');
        ++at;
    }
    if (at == begin) {
        return std::nullopt;
    }
    return value;
}

// Taken when the library loads, before main(): close enough to the process's start for the
// first CPU figure (CPU time used since then over the time since then).
const qint64 LoadedAtNs = clockNs(CLOCK_MONOTONIC);

} // namespace

qint64 processStartedNs()
{
    return LoadedAtNs;
}

qint64 processCpuNs()
{
    return clockNs(CLOCK_PROCESS_CPUTIME_ID);
}

qint64 threadCpuNs()
{
    return clockNs(CLOCK_THREAD_CPUTIME_ID);
}

qint64 monotonicNs()
{
    return clockNs(CLOCK_MONOTONIC);
}

std::optional<qint64> parseStatmResidentBytes(QByteArrayView statm, qint64 pageBytes)
{
    qsizetype at = 0;
    if (!decimalAt(statm, at) || at >= statm.size() || statm[at] != ' ') {
        return std::nullopt;
    }
    ++at;
    const std::optional<qint64> pages = decimalAt(statm, at);
    if (!pages || pageBytes <= 0 || *pages > std::numeric_limits<qint64>::max() / pageBytes) {
        return std::nullopt;
    }
    return *pages * pageBytes;
}

qint64 residentBytes()
{
    QFile statm(QStringLiteral("/proc/self/statm"));
    if (!statm.open(QIODevice::ReadOnly)) {
        return 0;
    }
    // /proc files report size 0; one small read holds the whole line.
    const QByteArray text = statm.read(256);
    return parseStatmResidentBytes(text, sysconf(_SC_PAGESIZE)).value_or(0);
}

double CpuRate::update(qint64 wallNs, qint64 cpuNs)
{
    if (cpuNs < m_lastCpuNs) {
        m_lastCpuNs = 0; // another clock: measure it from its start
    }
    const qint64 wall = wallNs - m_lastWallNs;
    const qint64 cpu = cpuNs - m_lastCpuNs;
    m_lastWallNs = wallNs;
    m_lastCpuNs = cpuNs;
    if (wall <= 0) {
        return 0;
    }
    return static_cast<double>(cpu) / static_cast<double>(wall);
}

} // namespace rt::runtime
