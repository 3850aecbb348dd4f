#pragma once

#include "shared/core/result.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QStringList>

#include <map>
#include <optional>
#include <vector>

namespace rt::test {

// A parser of the Prometheus text exposition format 0.0.4 (what GET /metrics serves), for tests.
// It is strict where a scraper would be: names and label names must be valid, label values may use
// only the escapes \\ \" \n, values must be numbers (or NaN, +Inf, -Inf), each HELP and TYPE line
// may appear once per family. Comments other than HELP/TYPE (e.g. upstream's "# EOF") are skipped.
// Pure functions, any thread.

using Labels = std::map<QByteArray, QByteArray>; // label name -> unescaped value

struct Sample
{
    QByteArray name; // as written, e.g. "x_bucket"
    Labels labels;
    double value = 0;
    std::optional<qint64> timestampMs;
    int line = 0; // 1-based line of the sample in the text
};

struct Exposition
{
    std::vector<Sample> samples; // in text order
    std::map<QByteArray, QByteArray> help; // family name -> unescaped HELP text
    std::map<QByteArray, QByteArray>
            types; // family name -> counter|gauge|histogram|summary|untyped
    std::map<QByteArray, int> metadataLines; // family name -> line of its last HELP or TYPE

    // The samples called `name` whose labels include every pair of `labels` (others, e.g. the
    // global host/id/region, may be present too).
    std::vector<const Sample *> find(QByteArrayView name, const Labels &labels = {}) const;
    // The value of the one sample that find() returns; nullopt if there are none or several.
    std::optional<double> value(QByteArrayView name, const Labels &labels = {}) const;
    // The family a sample name belongs to: "x" for "x_bucket"/"x_sum"/"x_count" when x is declared
    // a histogram (or summary), otherwise the name itself.
    QByteArray familyOf(QByteArrayView sampleName) const;
};

// The samples and metadata of `text`, or the first error as "line N: what".
Result<Exposition> parseExposition(QByteArrayView text);

// Problems a valid parse can still have, as sentences (empty when none): TYPE or HELP after the
// family's first sample, a family's samples not contiguous, duplicate series, a sample of a
// family without TYPE, and histograms that are not consistent (le labels ascending and parseable,
// cumulative counts non-decreasing, a le="+Inf" bucket equal to _count, _sum and _count present).
QStringList checkConsistency(const Exposition &exposition);

} // namespace rt::test
