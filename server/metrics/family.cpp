#include "server/metrics/family.h"

#include "server/metrics/logging.h"
#include "server/metrics/text_format.h"

#include <QString>
#include <QVarLengthArray>

#include <algorithm>
#include <cstring>

namespace rt::metrics {

namespace {

using ViewArray = QVarLengthArray<QByteArrayView, 4>;

ViewArray viewsOf(const QList<QByteArray> &values)
{
    ViewArray views;
    for (const QByteArray &value : values) {
        views.append(value);
    }
    return views;
}

std::span<const QByteArrayView> spanOf(LabelValues values)
{
    return { values.begin(), values.size() };
}

std::span<const QByteArrayView> spanOf(const ViewArray &views)
{
    return { views.constData(), std::size_t(views.size()) };
}

int compareBytes(QByteArrayView a, QByteArrayView b)
{
    const qsizetype common = std::min(a.size(), b.size());
    const int byBytes = common == 0 ? 0 : std::memcmp(a.data(), b.data(), std::size_t(common));
    if (byBytes != 0) {
        return byBytes;
    }
    return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
}

template <typename A, typename B>
bool lessKeys(const A &a, const B &b)
{
    const std::size_t common = std::min(std::size_t(a.size()), std::size_t(b.size()));
    for (std::size_t i = 0; i < common; ++i) {
        const int order = compareBytes(a[i], b[i]);
        if (order != 0) {
            return order < 0;
        }
    }
    return a.size() < b.size();
}

// Prometheus requires UTF-8 label values; tenant ids and error codes normally are, but a bad
// byte must not make the whole scrape unparseable. Invalid sequences become U+FFFD.
QByteArray validUtf8(QByteArrayView value)
{
    return QString::fromUtf8(value).toUtf8();
}

void appendSampleLine(QByteArray &out, QByteArrayView name, QByteArrayView suffix,
                      const QByteArray &fragment)
{
    out.append(name);
    out.append(suffix);
    if (!fragment.isEmpty()) {
        out.append('{');
        out.append(fragment);
        out.append('}');
    }
    out.append(' ');
}

} // namespace

QByteArrayView typeName(MetricType type)
{
    switch (type) {
    case MetricType::Counter:
        return "counter";
    case MetricType::Gauge:
        return "gauge";
    case MetricType::Histogram:
        return "histogram";
    }
    return "untyped";
}

namespace detail {

bool KeyLess::operator()(const std::vector<QByteArray> &a, const std::vector<QByteArray> &b) const
{
    return lessKeys(a, b);
}

bool KeyLess::operator()(const std::vector<QByteArray> &a, std::span<const QByteArrayView> b) const
{
    return lessKeys(a, b);
}

bool KeyLess::operator()(std::span<const QByteArrayView> a, const std::vector<QByteArray> &b) const
{
    return lessKeys(a, b);
}

} // namespace detail

// FamilyBase ------------------------------------------------------------------------------------

FamilyBase::FamilyBase(FamilyInfo info, const LabelPairs &globalLabels) : m_info(std::move(info))
{
    for (qsizetype i = 0; i < qsizetype(m_info.labelNames.size()); ++i) {
        m_renderLabels.push_back({ m_info.labelNames[std::size_t(i)], i, {} });
    }
    for (const auto &[name, value] : globalLabels) {
        QByteArray escaped;
        appendEscapedLabelValue(escaped, validUtf8(value));
        m_renderLabels.push_back({ name, -1, escaped });
    }
    std::sort(m_renderLabels.begin(), m_renderLabels.end(),
              [](const RenderLabel &a, const RenderLabel &b) { return a.name < b.name; });
}

FamilyBase::~FamilyBase() = default;

qsizetype FamilyBase::removeSeriesWith(qsizetype, QByteArrayView)
{
    return 0;
}

QByteArray FamilyBase::labelFragment(std::span<const QByteArrayView> values) const
{
    QByteArray fragment;
    for (const RenderLabel &label : m_renderLabels) {
        if (!fragment.isEmpty()) {
            fragment.append(',');
        }
        fragment.append(label.name);
        fragment.append("=\"");
        if (label.valueIndex < 0) {
            fragment.append(label.escapedGlobalValue);
        } else {
            appendEscapedLabelValue(fragment, validUtf8(values[std::size_t(label.valueIndex)]));
        }
        fragment.append('"');
    }
    return fragment;
}

void FamilyBase::appendHeader(QByteArray &out) const
{
    out.append("# HELP ");
    out.append(m_info.name);
    out.append(' ');
    appendEscapedHelp(out, m_info.help);
    out.append("\n# TYPE ");
    out.append(m_info.name);
    out.append(' ');
    out.append(typeName(m_info.type));
    out.append('\n');
}

// Family<Child> ---------------------------------------------------------------------------------

template <typename Child>
Family<Child>::Family(FamilyInfo info, const LabelPairs &globalLabels)
    : FamilyBase(std::move(info), globalLabels)
{
    if constexpr (std::is_same_v<Child, Histogram>) {
        m_bounds = std::make_shared<const std::vector<double>>(this->info().buckets);
        for (const double bound : *m_bounds) {
            m_boundTexts.push_back(formatBucketBound(bound));
        }
    }
    if (this->info().labelNames.empty()) {
        m_pinned = lookup({});
    }
}

template <typename Child>
std::shared_ptr<Child> Family<Child>::makeChild() const
{
    if constexpr (std::is_same_v<Child, Histogram>) {
        return std::make_shared<Histogram>(m_bounds);
    } else {
        return std::make_shared<Child>();
    }
}

template <typename Child>
std::shared_ptr<Child> Family<Child>::lookup(std::span<const QByteArrayView> values)
{
    if (values.size() != info().labelNames.size()) {
        if (!m_arityReported.exchange(true)) {
            qCWarning(lcMetrics,
                      "%s: labels() with %d values for %d label names; the series "
                      "is detached and not rendered",
                      info().name.constData(), int(values.size()), int(info().labelNames.size()));
        }
        return makeChild();
    }
    {
        std::shared_lock lock(m_mutex);
        const auto it = m_series.find(values);
        if (it != m_series.end()) {
            return it->second.child;
        }
    }
    std::unique_lock lock(m_mutex);
    const auto it = m_series.find(values);
    if (it != m_series.end()) {
        return it->second.child; // another thread created it in between
    }
    std::vector<QByteArray> key;
    key.reserve(values.size());
    for (const QByteArrayView value : values) {
        key.push_back(value.toByteArray());
    }
    Series series{ labelFragment(values), makeChild() };
    std::shared_ptr<Child> child = series.child;
    m_series.emplace(std::move(key), std::move(series));
    return child;
}

template <typename Child>
std::shared_ptr<Child> Family<Child>::labels(LabelValues values)
{
    return lookup(spanOf(values));
}

template <typename Child>
std::shared_ptr<Child> Family<Child>::labels(const QList<QByteArray> &values)
{
    const ViewArray views = viewsOf(values);
    return lookup(spanOf(views));
}

template <typename Child>
Child &Family<Child>::unlabelled() const
{
    // Belief: Registry hands out unlabelled() only for families declared without labels.
    Q_ASSERT(m_pinned);
    return *m_pinned;
}

template <typename Child>
bool Family<Child>::erase(std::span<const QByteArrayView> values)
{
    if (m_pinned) {
        return false;
    }
    std::unique_lock lock(m_mutex);
    const auto it = m_series.find(values);
    if (it == m_series.end()) {
        return false;
    }
    m_series.erase(it);
    return true;
}

template <typename Child>
bool Family<Child>::remove(LabelValues values)
{
    return erase(spanOf(values));
}

template <typename Child>
bool Family<Child>::remove(const QList<QByteArray> &values)
{
    const ViewArray views = viewsOf(values);
    return erase(spanOf(views));
}

template <typename Child>
void Family<Child>::clear()
{
    if (m_pinned) {
        return;
    }
    std::unique_lock lock(m_mutex);
    m_series.clear();
}

template <typename Child>
qsizetype Family<Child>::size() const
{
    std::shared_lock lock(m_mutex);
    return qsizetype(m_series.size());
}

template <typename Child>
std::vector<std::pair<std::vector<QByteArray>, std::shared_ptr<Child>>>
Family<Child>::series() const
{
    std::vector<std::pair<std::vector<QByteArray>, std::shared_ptr<Child>>> all;
    std::shared_lock lock(m_mutex);
    all.reserve(m_series.size());
    for (const auto &entry : m_series) {
        all.emplace_back(entry.first, entry.second.child);
    }
    return all;
}

template <typename Child>
qsizetype Family<Child>::removeSeriesWith(qsizetype labelIndex, QByteArrayView value)
{
    if (m_pinned || labelIndex < 0 || labelIndex >= qsizetype(info().labelNames.size())) {
        return 0;
    }
    std::unique_lock lock(m_mutex);
    return qsizetype(std::erase_if(m_series, [&](const auto &entry) {
        return compareBytes(entry.first[std::size_t(labelIndex)], value) == 0;
    }));
}

template <typename Child>
void Family<Child>::appendSeries(QByteArray &out, const Series &series) const
{
    const QByteArray &name = info().name;
    if constexpr (std::is_same_v<Child, Counter> || std::is_same_v<Child, Gauge>) {
        appendSampleLine(out, name, {}, series.fragment);
        appendValue(out, series.child->value());
        out.append('\n');
    } else {
        const std::vector<quint64> counts = series.child->cumulativeCounts();
        const QByteArrayView separator = series.fragment.isEmpty() ? "" : ",";
        for (std::size_t i = 0; i < counts.size(); ++i) {
            out.append(name);
            out.append("_bucket{");
            out.append(series.fragment);
            out.append(separator);
            out.append("le=\"");
            if (i < m_boundTexts.size()) {
                out.append(m_boundTexts[i]);
            } else {
                out.append("+Inf");
            }
            out.append("\"} ");
            appendValue(out, counts[i]);
            out.append('\n');
        }
        appendSampleLine(out, name, "_sum", series.fragment);
        appendValue(out, series.child->sum());
        out.append('\n');
        appendSampleLine(out, name, "_count", series.fragment);
        appendValue(out, counts.back());
        out.append('\n');
    }
}

template <typename Child>
void Family<Child>::render(QByteArray &out) const
{
    std::vector<Series> snapshot;
    {
        std::shared_lock lock(m_mutex);
        snapshot.reserve(m_series.size());
        for (const auto &entry : m_series) {
            snapshot.push_back(entry.second);
        }
    }
    if (snapshot.empty()) {
        return;
    }
    appendHeader(out);
    for (const Series &series : snapshot) {
        appendSeries(out, series);
    }
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

// CallbackSamples -------------------------------------------------------------------------------

void CallbackSamples::add(LabelValues values, double value)
{
    addSample(spanOf(values), value);
}

void CallbackSamples::add(const QList<QByteArray> &values, double value)
{
    const ViewArray views = viewsOf(values);
    addSample(spanOf(views), value);
}

void CallbackSamples::addSample(std::span<const QByteArrayView> values, double value)
{
    if (qsizetype(values.size()) != m_labelCount) {
        m_dropped = true;
        return;
    }
    std::vector<QByteArray> key;
    key.reserve(values.size());
    for (const QByteArrayView labelValue : values) {
        key.push_back(labelValue.toByteArray());
    }
    m_samples.emplace_back(std::move(key), value);
}

std::vector<std::pair<std::vector<QByteArray>, double>> CallbackSamples::takeSorted()
{
    // Stable, so that among equal label values the one added last ends up last and survives.
    std::stable_sort(m_samples.begin(), m_samples.end(),
                     [](const auto &a, const auto &b) { return lessKeys(a.first, b.first); });
    std::vector<std::pair<std::vector<QByteArray>, double>> unique;
    unique.reserve(m_samples.size());
    for (auto &sample : m_samples) {
        if (!unique.empty() && !lessKeys(unique.back().first, sample.first)) {
            unique.back() = std::move(sample);
        } else {
            unique.push_back(std::move(sample));
        }
    }
    m_samples.clear();
    return unique;
}

// CallbackFamily --------------------------------------------------------------------------------

CallbackFamily::CallbackFamily(FamilyInfo info, const LabelPairs &globalLabels, Callback callback)
    : FamilyBase(std::move(info), globalLabels),
      m_callback(std::move(callback))
{ }

void CallbackFamily::render(QByteArray &out) const
{
    CallbackSamples samples(qsizetype(info().labelNames.size()));
    {
        std::lock_guard lock(m_mutex);
        if (!m_callback) {
            return;
        }
        m_callback(samples);
    }
    if (samples.hasDroppedSamples()) {
        qCWarning(lcMetrics, "%s: the callback added samples with the wrong number of label values",
                  info().name.constData());
    }
    const auto sorted = samples.takeSorted();
    if (sorted.empty()) {
        return;
    }
    appendHeader(out);
    ViewArray views;
    for (const auto &[values, value] : sorted) {
        views.clear();
        for (const QByteArray &labelValue : values) {
            views.append(labelValue);
        }
        appendSampleLine(out, info().name, {}, labelFragment(spanOf(views)));
        appendValue(out, value);
        out.append('\n');
    }
}

void CallbackFamily::disarm()
{
    std::lock_guard lock(m_mutex);
    m_callback = nullptr;
}

} // namespace rt::metrics
