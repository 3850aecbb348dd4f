#include "tests/support/metrics/prometheus_text.h"

#include <QSet>
#include <QString>
#include <QStringDecoder>

#include <charconv>
#include <cmath>
#include <limits>
#include <set>
#include <tuple>

namespace rt::test {

namespace {

bool isBlank(char c)
{
    return c == ' ' || c == '\t';
}

bool isLabelStart(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

bool isLabelChar(char c)
{
    return isLabelStart(c) || (c >= '0' && c <= '9');
}

bool isNameStart(char c)
{
    return isLabelStart(c) || c == ':';
}

bool isNameChar(char c)
{
    return isLabelChar(c) || c == ':';
}

bool isValidUtf8(QByteArrayView bytes)
{
    QStringDecoder decoder(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
    const QString decoded = decoder(bytes);
    Q_UNUSED(decoded);
    return !decoder.hasError();
}

// Go's strconv.ParseFloat as Prometheus uses it: decimal or exponent notation, an optional sign,
// and case-insensitive "inf", "infinity", "nan".
std::optional<double> parseNumber(QByteArrayView token)
{
    if (token.isEmpty())
        return std::nullopt;
    QByteArrayView digits = token;
    bool negative = false;
    if (digits.front() == '+' || digits.front() == '-') {
        negative = digits.front() == '-';
        digits = digits.sliced(1);
    }
    const QByteArray lower = digits.toByteArray().toLower();
    if (lower == "inf" || lower == "infinity")
        return negative ? -std::numeric_limits<double>::infinity()
                        : std::numeric_limits<double>::infinity();
    if (lower == "nan")
        return token.size() == digits.size() ? std::optional<double>(std::nan("")) : std::nullopt;
    if (digits.isEmpty() || digits.front() == '+' || digits.front() == '-')
        return std::nullopt;
    double value = 0;
    const char *end = digits.data() + digits.size();
    const auto result = std::from_chars(digits.data(), end, value);
    if (result.ec != std::errc() || result.ptr != end)
        return std::nullopt;
    return negative ? -value : value;
}

std::optional<qint64> parseTimestamp(QByteArrayView token)
{
    qint64 value = 0;
    const char *end = token.data() + token.size();
    const auto result = std::from_chars(token.data(), end, value);
    if (token.isEmpty() || result.ec != std::errc() || result.ptr != end)
        return std::nullopt;
    return value;
}

// A cursor over one line.
class LineReader
{
public:
    explicit LineReader(QByteArrayView line) : m_line(line) { }

    bool atEnd() const { return m_pos >= m_line.size(); }
    char peek() const { return m_line[m_pos]; }
    void advance() { ++m_pos; }
    void skipBlanks()
    {
        while (!atEnd() && isBlank(peek()))
            ++m_pos;
    }
    QByteArrayView readWhile(bool (*accept)(char))
    {
        const qsizetype start = m_pos;
        while (!atEnd() && accept(m_line[m_pos]))
            ++m_pos;
        return m_line.sliced(start, m_pos - start);
    }
    QByteArrayView readToken()
    {
        return readWhile([](char c) { return !isBlank(c); });
    }
    QByteArrayView rest() const { return m_line.sliced(m_pos); }

private:
    QByteArrayView m_line;
    qsizetype m_pos = 0;
};

QByteArrayView readName(LineReader &reader)
{
    if (reader.atEnd() || !isNameStart(reader.peek()))
        return {};
    return reader.readWhile(isNameChar);
}

// HELP text: \\ and \n are escapes; any other backslash stays as written (format 0.0.4).
QByteArray unescapeHelp(QByteArrayView text)
{
    QByteArray out;
    for (qsizetype i = 0; i < text.size(); ++i) {
        if (text[i] == '\\' && i + 1 < text.size() && (text[i + 1] == '\\' || text[i + 1] == 'n')) {
            out.append(text[i + 1] == 'n' ? '\n' : '\\');
            ++i;
        } else {
            out.append(text[i]);
        }
    }
    return out;
}

struct LineError
{
    QString message;
};

std::optional<LineError> parseComment(QByteArrayView line, int lineNumber, Exposition &out)
{
    LineReader reader(line);
    reader.advance(); // '#'
    reader.skipBlanks();
    const QByteArrayView keyword = reader.readToken();
    if (keyword != "HELP" && keyword != "TYPE")
        return std::nullopt; // a plain comment
    reader.skipBlanks();
    const QByteArrayView name = readName(reader);
    if (name.isEmpty() || (!reader.atEnd() && !isBlank(reader.peek())))
        return LineError{
            QStringLiteral("invalid metric name in # %1").arg(QString::fromLatin1(keyword))
        };
    const QByteArray family = name.toByteArray();
    if (keyword == "HELP") {
        if (!reader.atEnd())
            reader.advance(); // the one blank before the text
        if (out.help.count(family) != 0)
            return LineError{
                QStringLiteral("second # HELP for %1").arg(QString::fromUtf8(family))
            };
        if (!isValidUtf8(reader.rest()))
            return LineError{ QStringLiteral("HELP text is not valid UTF-8") };
        out.help.emplace(family, unescapeHelp(reader.rest()));
    } else {
        reader.skipBlanks();
        const QByteArrayView type = reader.readToken();
        reader.skipBlanks();
        static const QSet<QByteArray> types = { "counter", "gauge", "histogram", "summary",
                                                "untyped" };
        if (!types.contains(type.toByteArray()) || !reader.atEnd())
            return LineError{ QStringLiteral("invalid # TYPE line") };
        if (out.types.count(family) != 0)
            return LineError{
                QStringLiteral("second # TYPE for %1").arg(QString::fromUtf8(family))
            };
        out.types.emplace(family, type.toByteArray());
    }
    out.metadataLines[family] = lineNumber;
    return std::nullopt;
}

std::optional<LineError> parseLabels(LineReader &reader, Labels &labels)
{
    reader.advance(); // '{'
    for (;;) {
        reader.skipBlanks();
        if (reader.atEnd())
            return LineError{ QStringLiteral("unterminated label set") };
        if (reader.peek() == '}') {
            reader.advance();
            return std::nullopt;
        }
        if (!isLabelStart(reader.peek()))
            return LineError{ QStringLiteral("invalid label name") };
        const QByteArray name = reader.readWhile(isLabelChar).toByteArray();
        reader.skipBlanks();
        if (reader.atEnd() || reader.peek() != '=')
            return LineError{
                QStringLiteral("expected = after label %1").arg(QString::fromUtf8(name))
            };
        reader.advance();
        reader.skipBlanks();
        if (reader.atEnd() || reader.peek() != '"')
            return LineError{ QStringLiteral("expected \" to start the value of label %1")
                                      .arg(QString::fromUtf8(name)) };
        reader.advance();
        QByteArray value;
        bool closed = false;
        while (!reader.atEnd()) {
            const char c = reader.peek();
            reader.advance();
            if (c == '"') {
                closed = true;
                break;
            }
            if (c != '\\') {
                value.append(c);
                continue;
            }
            if (reader.atEnd())
                break;
            const char escaped = reader.peek();
            reader.advance();
            if (escaped == '\\')
                value.append('\\');
            else if (escaped == '"')
                value.append('"');
            else if (escaped == 'n')
                value.append('\n');
            else
                return LineError{ QStringLiteral("invalid escape \\%1 in label %2")
                                          .arg(QString(QLatin1Char(escaped)),
                                               QString::fromUtf8(name)) };
        }
        if (!closed)
            return LineError{
                QStringLiteral("unterminated value of label %1").arg(QString::fromUtf8(name))
            };
        if (!isValidUtf8(value))
            return LineError{
                QStringLiteral("value of label %1 is not valid UTF-8").arg(QString::fromUtf8(name))
            };
        if (!labels.emplace(name, value).second)
            return LineError{
                QStringLiteral("label %1 appears twice").arg(QString::fromUtf8(name))
            };
        reader.skipBlanks();
        if (!reader.atEnd() && reader.peek() == ',')
            reader.advance();
        else if (reader.atEnd() || reader.peek() != '}')
            return LineError{
                QStringLiteral("expected , or } after label %1").arg(QString::fromUtf8(name))
            };
    }
}

std::optional<LineError> parseSample(QByteArrayView line, int lineNumber, Exposition &out)
{
    LineReader reader(line);
    Sample sample;
    sample.line = lineNumber;
    sample.name = readName(reader).toByteArray();
    if (sample.name.isEmpty())
        return LineError{ QStringLiteral("invalid metric name") };
    bool separated = !reader.atEnd() && isBlank(reader.peek());
    reader.skipBlanks();
    if (!reader.atEnd() && reader.peek() == '{') {
        if (auto error = parseLabels(reader, sample.labels))
            return error;
        separated = !reader.atEnd() && isBlank(reader.peek());
    }
    if (reader.atEnd())
        return LineError{ QStringLiteral("missing value") };
    if (!separated)
        return LineError{ QStringLiteral("expected a blank before the value") };
    reader.skipBlanks();
    const QByteArrayView valueToken = reader.readToken();
    if (valueToken.isEmpty())
        return LineError{ QStringLiteral("missing value") };
    const std::optional<double> value = parseNumber(valueToken);
    if (!value)
        return LineError{
            QStringLiteral("invalid value \"%1\"").arg(QString::fromUtf8(valueToken))
        };
    sample.value = *value;
    reader.skipBlanks();
    if (!reader.atEnd()) {
        const QByteArrayView timestampToken = reader.readToken();
        sample.timestampMs = parseTimestamp(timestampToken);
        if (!sample.timestampMs)
            return LineError{
                QStringLiteral("invalid timestamp \"%1\"").arg(QString::fromUtf8(timestampToken))
            };
        reader.skipBlanks();
        if (!reader.atEnd())
            return LineError{ QStringLiteral("unexpected text after the timestamp") };
    }
    out.samples.push_back(std::move(sample));
    return std::nullopt;
}

QByteArray withSuffix(const QByteArray &name, QByteArrayView suffix)
{
    QByteArray text = name;
    text.append(suffix);
    return text;
}

QString describe(const QByteArray &name, const Labels &labels)
{
    QString text = QString::fromUtf8(name) + QLatin1Char('{');
    bool first = true;
    for (const auto &[label, value] : labels) {
        if (!first)
            text += QLatin1Char(',');
        first = false;
        text += QString::fromUtf8(label) + QStringLiteral("=\"") + QString::fromUtf8(value)
                + QLatin1Char('"');
    }
    return text + QLatin1Char('}');
}

} // namespace

std::vector<const Sample *> Exposition::find(QByteArrayView name, const Labels &labels) const
{
    std::vector<const Sample *> found;
    for (const Sample &sample : samples) {
        if (QByteArrayView(sample.name) != name)
            continue;
        bool matches = true;
        for (const auto &[label, value] : labels) {
            const auto it = sample.labels.find(label);
            if (it == sample.labels.end() || it->second != value) {
                matches = false;
                break;
            }
        }
        if (matches)
            found.push_back(&sample);
    }
    return found;
}

std::optional<double> Exposition::value(QByteArrayView name, const Labels &labels) const
{
    const std::vector<const Sample *> found = find(name, labels);
    if (found.size() != 1)
        return std::nullopt;
    return found.front()->value;
}

QByteArray Exposition::familyOf(QByteArrayView sampleName) const
{
    for (const QByteArrayView suffix :
         { QByteArrayView("_bucket"), QByteArrayView("_sum"), QByteArrayView("_count") }) {
        if (!sampleName.endsWith(suffix))
            continue;
        const QByteArray base = sampleName.chopped(suffix.size()).toByteArray();
        const auto it = types.find(base);
        if (it != types.end() && (it->second == "histogram" || it->second == "summary")
            && (suffix != "_bucket" || it->second == "histogram"))
            return base;
    }
    return sampleName.toByteArray();
}

Result<Exposition> parseExposition(QByteArrayView text)
{
    Exposition out;
    if (!text.isEmpty() && !text.endsWith('\n'))
        return Error{ QStringLiteral("the last line does not end with a newline") };
    qsizetype start = 0;
    int lineNumber = 0;
    while (start < text.size()) {
        const qsizetype end = text.indexOf('\n', start);
        const QByteArrayView line = text.sliced(start, end - start);
        start = end + 1;
        ++lineNumber;
        LineReader reader(line);
        reader.skipBlanks();
        if (reader.atEnd())
            continue;
        const QByteArrayView content = reader.rest();
        const std::optional<LineError> error = content.front() == '#'
                ? parseComment(content, lineNumber, out)
                : parseSample(content, lineNumber, out);
        if (error)
            return Error{ QStringLiteral("line %1: %2 (%3)")
                                  .arg(QString::number(lineNumber), error->message,
                                       QString::fromUtf8(line)) };
    }
    return out;
}

QStringList checkConsistency(const Exposition &exposition)
{
    QStringList problems;
    std::set<QByteArray> finishedFamilies;
    QByteArray currentFamily;
    std::set<std::pair<QByteArray, Labels>> seriesSeen;
    std::set<QByteArray> reportedUntyped;
    std::map<QByteArray, int> firstLines; // family -> line of its first sample

    struct HistogramSeries
    {
        std::vector<std::pair<double, double>> buckets; // (le, cumulative count), text order
        std::optional<double> sum;
        std::optional<double> count;
        bool bucketWithoutLe = false;
        bool badLe = false;
    };
    std::map<std::pair<QByteArray, Labels>, HistogramSeries> histograms;

    for (const Sample &sample : exposition.samples) {
        const QByteArray family = exposition.familyOf(sample.name);
        if (family != currentFamily) {
            if (finishedFamilies.count(family) != 0)
                problems << QStringLiteral("line %1: samples of %2 are not contiguous")
                                    .arg(sample.line)
                                    .arg(QString::fromUtf8(family));
            if (!currentFamily.isEmpty())
                finishedFamilies.insert(currentFamily);
            currentFamily = family;
        }
        const auto typeIt = exposition.types.find(family);
        if (typeIt == exposition.types.end()) {
            if (reportedUntyped.insert(family).second)
                problems << QStringLiteral("line %1: %2 has no # TYPE line")
                                    .arg(sample.line)
                                    .arg(QString::fromUtf8(family));
        }
        if (firstLines.emplace(family, sample.line).second) {
            const auto metadataIt = exposition.metadataLines.find(family);
            if (metadataIt != exposition.metadataLines.end() && metadataIt->second > sample.line)
                problems << QStringLiteral("line %1: # HELP/# TYPE of %2 come after its samples")
                                    .arg(metadataIt->second)
                                    .arg(QString::fromUtf8(family));
        }
        if (!seriesSeen.emplace(sample.name, sample.labels).second)
            problems << QStringLiteral("line %1: duplicate series %2")
                                .arg(sample.line)
                                .arg(describe(sample.name, sample.labels));

        if (typeIt == exposition.types.end() || typeIt->second != "histogram")
            continue;
        Labels seriesLabels = sample.labels;
        const auto leIt = seriesLabels.find("le");
        QByteArray le;
        if (leIt != seriesLabels.end()) {
            le = leIt->second;
            seriesLabels.erase(leIt);
        }
        HistogramSeries &series = histograms[{ family, seriesLabels }];
        if (sample.name == withSuffix(family, "_bucket")) {
            if (le.isEmpty()) {
                series.bucketWithoutLe = true;
                continue;
            }
            QByteArrayView leView(le);
            const std::optional<double> bound = parseNumber(leView);
            if (!bound || std::isnan(*bound))
                series.badLe = true;
            else
                series.buckets.emplace_back(*bound, sample.value);
        } else if (sample.name == withSuffix(family, "_sum")) {
            series.sum = sample.value;
        } else if (sample.name == withSuffix(family, "_count")) {
            series.count = sample.value;
        } else {
            problems << QStringLiteral("line %1: %2 is not a histogram series name")
                                .arg(sample.line)
                                .arg(QString::fromUtf8(sample.name));
        }
    }

    for (const auto &[key, series] : histograms) {
        const QString what = describe(key.first, key.second);
        if (series.bucketWithoutLe)
            problems << QStringLiteral("%1: a bucket without le").arg(what);
        if (series.badLe)
            problems << QStringLiteral("%1: a bucket with an unparseable le").arg(what);
        for (std::size_t i = 1; i < series.buckets.size(); ++i) {
            if (!(series.buckets[i - 1].first < series.buckets[i].first))
                problems << QStringLiteral("%1: le bounds not ascending").arg(what);
            if (series.buckets[i].second < series.buckets[i - 1].second)
                problems << QStringLiteral("%1: bucket counts decrease").arg(what);
        }
        if (series.buckets.empty() || !std::isinf(series.buckets.back().first))
            problems << QStringLiteral("%1: no le=\"+Inf\" bucket").arg(what);
        if (!series.sum)
            problems << QStringLiteral("%1: no _sum").arg(what);
        if (!series.count)
            problems << QStringLiteral("%1: no _count").arg(what);
        if (series.count && !series.buckets.empty() && std::isinf(series.buckets.back().first)
            && series.buckets.back().second != *series.count)
            problems << QStringLiteral("%1: +Inf bucket differs from _count").arg(what);
    }
    return problems;
}

} // namespace rt::test
