#pragma once

#include <QByteArray>
#include <QByteArrayView>

#include <cstddef>
#include <vector>

namespace rt::metrics {

// Value types shared by the registry, its families and their callers. Plain data, any thread.

enum class MetricType { Counter, Gauge, Histogram };

// "counter", "gauge", "histogram": the word on the # TYPE line.
QByteArrayView typeName(MetricType type);

// Each series object (Counter, Gauge, Histogram) starts on its own cache line, so increments of
// two series from two cores never contend for one line. 64 bytes on the x86-64 and ARM64 cores
// we run on (std::hardware_destructive_interference_size warns under GCC 12 when used in headers).
inline constexpr std::size_t CacheLineBytes = 64;

// What a family is declared with. Names and label names are validated at declaration (see
// Registry::checkDeclaration).
struct FamilySpec
{
    QByteArray name; // e.g. "realtime_channel_joins"; no unit or _total is appended
    QByteArray help; // the # HELP text, unescaped; may be empty
    std::vector<QByteArray> labelNames; // in the order callers pass values to labels()
    std::vector<double> buckets; // histograms only: finite upper bounds, strictly ascending;
            // +Inf is implicit (a trailing +Inf is accepted and dropped)
};

// A declared family as the registry reports it (for tests and diagnostics).
struct FamilyInfo
{
    QByteArray name;
    QByteArray help;
    MetricType type = MetricType::Counter;
    std::vector<QByteArray> labelNames; // declaration order
    std::vector<double> buckets; // histograms: the bounds, without +Inf
    bool isCallback = false; // values computed at render time
};

} // namespace rt::metrics
