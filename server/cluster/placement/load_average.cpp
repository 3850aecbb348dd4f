#include "server/cluster/placement/load_average.h"

#include <QByteArray>
#include <QFile>
#include <QList>

#include <cmath>

namespace rt::cluster::placement {

namespace {

// /proc/loadavg is about 30 bytes; anything much longer is not that file.
constexpr qsizetype MaxLoadavgBytes = 256;

std::optional<double> parseLoadField(const QByteArray &field)
{
    // Plain decimals only: toDouble would also accept "nan", "inf" and exponents.
    if (field.isEmpty() || field.size() > 32) {
        return std::nullopt;
    }
    bool seenDot = false;
    for (const char c : field) {
        if (c == '.' && !seenDot) {
            seenDot = true;
        } else if (c < '0' || c > '9') {
            return std::nullopt;
        }
    }
    if (field == QByteArrayLiteral(".")) {
        return std::nullopt;
    }
    bool ok = false;
    const double value = field.toDouble(&ok);
    if (!ok || !std::isfinite(value) || value < 0) {
        return std::nullopt;
    }
    return value;
}

} // namespace

std::optional<double> parseLoadAverage5(QByteArrayView procLoadavg)
{
    if (procLoadavg.size() > MaxLoadavgBytes) {
        return std::nullopt;
    }
    const QList<QByteArray> fields = procLoadavg.toByteArray().simplified().split(' ');
    if (fields.size() < 3) {
        return std::nullopt;
    }
    // All three averages must be numbers, or the text is not a load average line.
    for (int i = 0; i < 3; ++i) {
        if (!parseLoadField(fields.at(i))) {
            return std::nullopt;
        }
    }
    return parseLoadField(fields.at(1));
}

std::optional<double> readLoadAverage5()
{
    return readLoadAverage5(QString());
}

std::optional<double> readLoadAverage5(const QString &path)
{
    QFile file(path.isEmpty() ? QStringLiteral("/proc/loadavg") : path);
    if (!file.open(QIODevice::ReadOnly)) {
        return std::nullopt;
    }
    return parseLoadAverage5(file.read(MaxLoadavgBytes + 1));
}

} // namespace rt::cluster::placement
