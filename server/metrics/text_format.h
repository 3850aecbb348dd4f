#pragma once

#include <QByteArray>
#include <QByteArrayView>

namespace rt::metrics {

// The pieces of the Prometheus text exposition format 0.0.4 that Registry::render() writes:
// value and bucket-bound formatting, escaping, and name validation. Pure functions, any thread.

// The Content-Type of a rendered body.
inline constexpr char ContentType[] = "text/plain; version=0.0.4; charset=utf-8";

// A sample value: "NaN", "+Inf", "-Inf"; integral values below 2^63 in magnitude as plain
// decimal integers ("3", "-12", "1000000"); everything else in the shortest form that reads back
// to the same double ("0.5", "1e-05", "1.5e+300").
void appendValue(QByteArray &out, double value);
void appendValue(QByteArray &out, quint64 value);
QByteArray formatValue(double value);

// A histogram bucket bound as upstream prints it (Elixir Float.to_string/1, i.e. Erlang's
// shortest round-trip form with io_lib_format's choice between fixed and exponent notation):
// 250 -> "250.0", 1000 -> "1.0e3", 15000 -> "1.5e4", 0.5 -> "0.5", 0.00025 -> "2.5e-4".
// +Inf -> "+Inf", -Inf -> "-Inf", NaN -> "NaN" (never valid bounds; see Registry).
QByteArray formatBucketBound(double bound);

// HELP text: backslash -> \\, newline -> \n.
void appendEscapedHelp(QByteArray &out, QByteArrayView help);
// Label value: backslash -> \\, double quote -> \", newline -> \n.
void appendEscapedLabelValue(QByteArray &out, QByteArrayView value);

// [a-zA-Z_:][a-zA-Z0-9_:]*
bool isValidMetricName(QByteArrayView name);
// [a-zA-Z_][a-zA-Z0-9_]*; names starting with "__" are reserved and rejected.
bool isValidLabelName(QByteArrayView name);

} // namespace rt::metrics
