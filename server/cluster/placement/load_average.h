#pragma once

#include <QByteArrayView>

#include <optional>

namespace rt::cluster::placement {

// The 5-minute load average (second field) of /proc/loadavg text such as
// "0.52 0.58 0.59 1/467 12345\n". Anything that does not look like that (fewer than three
// fields, a field that is not a finite non-negative number, absurd length) gives nullopt.
std::optional<double> parseLoadAverage5(QByteArrayView procLoadavg);

// Reads /proc/loadavg (a procfs file: the read does not wait on a disk) and parses it; nullopt
// where the file does not exist or is malformed.
std::optional<double> readLoadAverage5();
// The same from a file in /proc/loadavg's format (an empty path means /proc/loadavg).
std::optional<double> readLoadAverage5(const QString &path);

} // namespace rt::cluster::placement
