#include "server/metrics/registry.h"

#include "server/metrics/logging.h"
#include "server/metrics/text_format.h"

#include <QString>

#include <algorithm>
#include <cmath>
#include <set>

namespace rt::metrics {

namespace {

constexpr QByteArrayView HistogramSuffixes[] = { "_bucket", "_sum", "_count" };

QString text(QByteArrayView bytes)
{
    return QString::fromUtf8(bytes);
}

// A trailing +Inf bound is implicit in the format; accept it in a spec and drop it.
std::vector<double> normalizedBuckets(std::vector<double> buckets)
{
    if (!buckets.empty() && std::isinf(buckets.back()) && buckets.back() > 0) {
        buckets.pop_back();
    }
    return buckets;
}

std::optional<QString> checkLabelNames(const std::vector<QByteArray> &names,
                                       const LabelPairs &globalLabels, bool isHistogram)
{
    std::set<QByteArray> seen;
    for (const auto &global : globalLabels) {
        seen.insert(global.first);
    }
    for (const QByteArray &name : names) {
        if (!isValidLabelName(name)) {
            return QStringLiteral("invalid label name \"%1\"").arg(text(name));
        }
        if (isHistogram && name == "le") {
            return QStringLiteral("label name \"le\" is reserved for histogram buckets");
        }
        if (!seen.insert(name).second) {
            return QStringLiteral("label \"%1\" is declared twice (or is a global label)")
                    .arg(text(name));
        }
    }
    return std::nullopt;
}

} // namespace

Registry::Registry(LabelPairs globalLabels) : m_globalLabels(std::move(globalLabels))
{
    std::vector<QByteArray> names;
    for (const auto &label : m_globalLabels) {
        names.push_back(label.first);
    }
    if (const auto error = checkLabelNames(names, {}, false)) {
        qFatal("metrics: invalid global labels: %s", qUtf8Printable(*error));
    }
}

Registry::~Registry() = default;

std::optional<Error> Registry::checkDeclaration(MetricType type, const FamilySpec &spec) const
{
    const auto fail = [&](const QString &reason) {
        return Error{
            QStringLiteral("cannot declare metric \"%1\": %2").arg(text(spec.name), reason)
        };
    };
    if (!isValidMetricName(spec.name)) {
        return fail(QStringLiteral("invalid metric name"));
    }
    const bool isHistogram = type == MetricType::Histogram;
    if (const auto error = checkLabelNames(spec.labelNames, m_globalLabels, isHistogram)) {
        return fail(*error);
    }
    if (!isHistogram && !spec.buckets.empty()) {
        return fail(QStringLiteral("only histograms have buckets"));
    }
    const std::vector<double> buckets = normalizedBuckets(spec.buckets);
    for (std::size_t i = 0; i < buckets.size(); ++i) {
        if (!std::isfinite(buckets[i])) {
            return fail(QStringLiteral("bucket bounds must be finite"));
        }
        if (i > 0 && !(buckets[i - 1] < buckets[i])) {
            return fail(QStringLiteral("bucket bounds must be strictly ascending"));
        }
    }

    std::lock_guard lock(m_mutex);
    if (m_families.count(spec.name) != 0) {
        return fail(QStringLiteral("already declared"));
    }
    for (const QByteArrayView suffix : HistogramSuffixes) {
        // This histogram's series would collide with an existing family...
        QByteArray seriesName = spec.name;
        seriesName.append(suffix);
        if (isHistogram && m_families.count(seriesName) != 0) {
            return fail(QStringLiteral("family \"%1\" exists").arg(text(seriesName)));
        }
        // ... or this family with an existing histogram's series.
        if (spec.name.endsWith(suffix)) {
            const auto it = m_families.find(spec.name.chopped(suffix.size()));
            if (it != m_families.end() && it->second->info().type == MetricType::Histogram) {
                return fail(QStringLiteral("clashes with histogram \"%1\"").arg(text(it->first)));
            }
        }
    }
    return std::nullopt;
}

template <typename F, typename... Extra>
F &Registry::declare(MetricType type, const FamilySpec &spec, bool isCallback, Extra &&...extra)
{
    // Declarations are start-up code; checking and inserting under separate locks only races
    // with a concurrent declaration of the same name, which the insert below still catches.
    if (const auto error = checkDeclaration(type, spec)) {
        qFatal("metrics: %s", qUtf8Printable(error->message));
    }
    FamilyInfo info{ spec.name, spec.help, type, spec.labelNames, normalizedBuckets(spec.buckets),
                     isCallback };
    auto family =
            std::make_shared<F>(std::move(info), m_globalLabels, std::forward<Extra>(extra)...);
    F &reference = *family;
    std::lock_guard lock(m_mutex);
    if (!m_families.emplace(spec.name, std::move(family)).second) {
        qFatal("metrics: metric \"%s\" declared twice concurrently", spec.name.constData());
    }
    qCDebug(lcMetrics, "declared %s %s", typeName(type).data(), spec.name.constData());
    return reference;
}

CounterFamily &Registry::counterFamily(const FamilySpec &spec)
{
    return declare<CounterFamily>(MetricType::Counter, spec, false);
}

GaugeFamily &Registry::gaugeFamily(const FamilySpec &spec)
{
    return declare<GaugeFamily>(MetricType::Gauge, spec, false);
}

HistogramFamily &Registry::histogramFamily(const FamilySpec &spec)
{
    return declare<HistogramFamily>(MetricType::Histogram, spec, false);
}

Counter &Registry::counter(const QByteArray &name, const QByteArray &help)
{
    return counterFamily({ name, help, {}, {} }).unlabelled();
}

Gauge &Registry::gauge(const QByteArray &name, const QByteArray &help)
{
    return gaugeFamily({ name, help, {}, {} }).unlabelled();
}

Histogram &Registry::histogram(const QByteArray &name, const QByteArray &help,
                               std::vector<double> buckets)
{
    return histogramFamily({ name, help, {}, std::move(buckets) }).unlabelled();
}

void Registry::callbackGauge(const QByteArray &name, const QByteArray &help,
                             std::function<double()> callback)
{
    callbackGaugeFamily({ name, help, {}, {} },
                        [callback = std::move(callback)](CallbackSamples &samples) {
                            samples.add({}, callback());
                        });
}

void Registry::callbackGaugeFamily(const FamilySpec &spec,
                                   std::function<void(CallbackSamples &)> callback)
{
    declare<CallbackFamily>(MetricType::Gauge, spec, true, std::move(callback));
}

bool Registry::removeFamily(QByteArrayView name)
{
    std::shared_ptr<FamilyBase> family;
    {
        std::lock_guard lock(m_mutex);
        const auto it = m_families.find(name.toByteArray());
        if (it == m_families.end()) {
            return false;
        }
        family = it->second;
        m_families.erase(it);
        m_removed.push_back(family);
    }
    // Outside the registry mutex: waits for a render that is inside this family's callback.
    family->disarm();
    return true;
}

qsizetype Registry::removeSeries(QByteArrayView labelName, QByteArrayView value)
{
    std::vector<std::shared_ptr<FamilyBase>> families;
    {
        std::lock_guard lock(m_mutex);
        for (const auto &entry : m_families) {
            families.push_back(entry.second);
        }
    }
    qsizetype removed = 0;
    for (const auto &family : families) {
        const std::vector<QByteArray> &names = family->info().labelNames;
        const auto it = std::find_if(names.begin(), names.end(), [&](const QByteArray &name) {
            return QByteArrayView(name) == labelName;
        });
        if (it != names.end()) {
            removed += family->removeSeriesWith(it - names.begin(), value);
        }
    }
    return removed;
}

std::optional<FamilyInfo> Registry::info(QByteArrayView name) const
{
    std::lock_guard lock(m_mutex);
    const auto it = m_families.find(name.toByteArray());
    if (it == m_families.end()) {
        return std::nullopt;
    }
    return it->second->info();
}

std::vector<FamilyInfo> Registry::families() const
{
    std::lock_guard lock(m_mutex);
    std::vector<FamilyInfo> result;
    result.reserve(m_families.size());
    for (const auto &entry : m_families) {
        result.push_back(entry.second->info());
    }
    return result;
}

QByteArray Registry::render() const
{
    std::vector<std::shared_ptr<FamilyBase>> families;
    {
        std::lock_guard lock(m_mutex);
        families.reserve(m_families.size());
        for (const auto &entry : m_families) {
            families.push_back(entry.second);
        }
    }
    QByteArray out;
    out.reserve(m_renderSizeHint.load(std::memory_order_relaxed));
    for (const auto &family : families) {
        family->render(out);
    }
    // Next time, reserve a little more than this body needed, to avoid regrowing.
    m_renderSizeHint.store(out.size() + out.size() / 8, std::memory_order_relaxed);
    return out;
}

} // namespace rt::metrics
